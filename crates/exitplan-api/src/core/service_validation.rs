//! Service validation (`ValidateService`, `ValidateServiceUpdate`,
//! `ValidateServiceStatusUpdate`, `ValidateServiceClusterIPsRelatedFields`
//! in `pkg/apis/core/validation`), with kube-apiserver's paths and texts.

use std::collections::BTreeSet;
use std::net::IpAddr;

use k8s_openapi::api::core::v1::{LoadBalancerStatus, Service, ServicePort, ServiceSpec};

use super::endpoints::{validate_non_special_ip, validate_protocol};
use super::service::{
    AFFINITY_CLIENT_IP, AFFINITY_NONE, CLUSTER_IP_NONE, IPV4, IPV6, MAX_CLIENT_IP_AFFINITY_SECONDS,
    PREFER_DUAL_STACK, REQUIRE_DUAL_STACK, SINGLE_STACK, TRAFFIC_POLICY_CLUSTER,
    TRAFFIC_POLICY_LOCAL, TYPE_CLUSTER_IP, TYPE_EXTERNAL_NAME, TYPE_LOAD_BALANCER, TYPE_NODE_PORT,
    cluster_ips, externally_accessible, is_headless, needs_health_check, service_type, spec,
};
use super::validation::probe::validate_port_num_or_name;
use super::validation::strings::{
    invalid_each_int, is_valid_port_num, validate_dns1123_label, validate_dns1123_subdomain,
    validate_ip,
};
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, NameRule};
use crate::render;

const SESSION_AFFINITIES: &[&str] = &[AFFINITY_CLIENT_IP, AFFINITY_NONE];
const SERVICE_TYPES: &[&str] = &[
    TYPE_CLUSTER_IP,
    TYPE_EXTERNAL_NAME,
    TYPE_LOAD_BALANCER,
    TYPE_NODE_PORT,
];
const TRAFFIC_POLICIES: &[&str] = &[TRAFFIC_POLICY_CLUSTER, TRAFFIC_POLICY_LOCAL];
const IP_FAMILIES: &[&str] = &[IPV4, IPV6];
const IP_FAMILY_POLICIES: &[&str] = &[PREFER_DUAL_STACK, REQUIRE_DUAL_STACK, SINGLE_STACK];
const TRAFFIC_DISTRIBUTIONS: &[&str] = &["PreferClose", "PreferSameNode", "PreferSameZone"];
const IP_MODES: &[&str] = &["Proxy", "VIP"];
const ANNOTATION_TOPOLOGY_MODE: &str = "service.kubernetes.io/topology-mode";
const ANNOTATION_TOPOLOGY_HINTS: &str = "service.kubernetes.io/topology-aware-hints";
const ANNOTATION_LB_SOURCE_RANGES: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";

fn spec_path() -> Path {
    Path::new("spec")
}

fn strings_value(v: &[String]) -> BadValue {
    BadValue::Json(render::strings(v))
}

fn opt_str_value(v: Option<&String>) -> BadValue {
    v.map_or(BadValue::Null, |s| BadValue::Str(s.clone()))
}

/// `IsValidCIDR` (field form).
pub fn validate_cidr(path: &Path, value: &str) -> ErrorList {
    let ok = value.split_once('/').is_some_and(|(addr, bits)| {
        let max = match addr.parse::<IpAddr>() {
            Ok(IpAddr::V4(_)) => 32,
            Ok(IpAddr::V6(_)) => 128,
            Err(_) => return false,
        };
        !bits.is_empty()
            && bits.bytes().all(|b| b.is_ascii_digit())
            && bits.parse::<u32>().is_ok_and(|b| b <= max)
    });
    if ok {
        ErrorList::new()
    } else {
        ErrorList(vec![Error::invalid(
            path,
            value,
            "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        )])
    }
}

/// Go's rendering of an internal `core.ServicePort` used as a duplicate key
/// (no JSON tags, so Go field names; the target port is `0`).
fn service_port_key(protocol: &str, port: i32) -> String {
    format!(
        r#"{{"Name":"","Protocol":{},"AppProtocol":null,"Port":{port},"TargetPort":0,"NodePort":0}}"#,
        render::string(protocol)
    )
}

fn validate_service_port(
    sp: &ServicePort,
    require_name: bool,
    names: &mut BTreeSet<String>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let name = sp.name.as_deref().unwrap_or_default();
    if require_name && name.is_empty() {
        errs.push(Error::required(&path.child("name"), ""));
    } else if !name.is_empty() {
        errs.append(validate_dns1123_label(&path.child("name"), name));
        if !names.insert(name.to_owned()) {
            errs.push(Error::duplicate(&path.child("name"), name));
        }
    }
    let port = i64::from(sp.port);
    errs.append(invalid_each_int(
        &path.child("port"),
        port,
        is_valid_port_num(port),
    ));
    errs.append(validate_protocol(
        sp.protocol.as_deref(),
        &path.child("protocol"),
    ));
    if let Some(target) = &sp.target_port {
        errs.append(validate_port_num_or_name(target, &path.child("targetPort")));
    }
    if let Some(app) = &sp.app_protocol {
        errs.append(formats::validate_qualified_name(
            &path.child("appProtocol"),
            app,
        ));
    }
    errs
}

/// `ValidateServiceClusterIPsRelatedFields`: `clusterIP` and `clusterIPs`
/// agree, IP families and the family policy are known values, cluster IPs
/// are IPs (or a lone `None`), at most one per family, and match `ipFamilies`.
pub fn validate_cluster_ips_related_fields(spec: &ServiceSpec) -> ErrorList {
    let mut errs = ErrorList::new();
    if service_type(spec) == TYPE_EXTERNAL_NAME {
        return errs;
    }
    let ips = cluster_ips(spec);
    let ips_path = spec_path().child("clusterIPs");
    let cluster_ip = spec.cluster_ip.as_deref().unwrap_or_default();
    if !cluster_ip.is_empty() {
        match ips.first() {
            None => errs.push(Error::required(&ips_path, "")),
            Some(first) if first != cluster_ip => errs.push(Error::invalid(
                &ips_path,
                strings_value(ips),
                "first value must match `clusterIP`",
            )),
            Some(_) => {}
        }
    } else if !ips.is_empty() {
        errs.push(Error::invalid(
            &ips_path,
            strings_value(ips),
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let families = spec.ip_families.as_deref().unwrap_or_default();
    let mut seen = BTreeSet::new();
    for (i, family) in families.iter().enumerate() {
        let p = spec_path().child("ipFamilies").index(i);
        if !IP_FAMILIES.contains(&family.as_str()) {
            errs.push(Error::not_supported(&p, family.as_str(), IP_FAMILIES));
        }
        if !seen.insert(family.as_str()) {
            errs.push(Error::duplicate(&p, family.as_str()));
        }
    }
    if let Some(policy) = &spec.ip_family_policy
        && !IP_FAMILY_POLICIES.contains(&policy.as_str())
    {
        errs.push(Error::not_supported(
            &spec_path().child("ipFamilyPolicy"),
            policy.as_str(),
            IP_FAMILY_POLICIES,
        ));
    }
    let mut invalid_ips = false;
    for (i, ip) in ips.iter().enumerate() {
        if i == 0 && ip == CLUSTER_IP_NONE {
            if ips.len() > 1 {
                invalid_ips = true;
                errs.push(Error::invalid(
                    &ips_path,
                    strings_value(ips),
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        let ip_errs = validate_ip(&ips_path.index(i), ip);
        invalid_ips |= !ip_errs.is_empty();
        errs.append(ip_errs);
    }
    if ips.len() > 2 {
        errs.push(Error::invalid(
            &ips_path,
            strings_value(ips),
            "may only hold up to 2 values",
        ));
    }
    if invalid_ips {
        return errs;
    }
    if ips.len() > 1 {
        let v6: Vec<bool> = ips
            .iter()
            .map(|ip| matches!(ip.parse::<IpAddr>(), Ok(IpAddr::V6(_))))
            .collect();
        let dual = ips.len() == 2 && v6[0] != v6[1];
        if !dual {
            errs.push(Error::invalid(
                &ips_path,
                strings_value(ips),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    if !is_headless(spec) && !ips.is_empty() && !families.is_empty() {
        for (i, (ip, family)) in ips.iter().zip(families).enumerate() {
            let is_v6 = matches!(ip.parse::<IpAddr>(), Ok(IpAddr::V6(_)));
            if family == IPV4 && is_v6 {
                errs.push(Error::invalid(
                    &ips_path.index(i),
                    ip,
                    format!("expected an IPv4 value as indicated by `ipFamilies[{i}]`"),
                ));
            }
            if family == IPV6 && !is_v6 {
                errs.push(Error::invalid(
                    &ips_path.index(i),
                    ip,
                    format!("expected an IPv6 value as indicated by `ipFamilies[{i}]`"),
                ));
            }
        }
    }
    errs
}

fn validate_session_affinity(spec: &ServiceSpec) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = spec_path().child("sessionAffinity");
    let affinity = spec.session_affinity.as_deref().unwrap_or_default();
    if affinity.is_empty() {
        errs.push(Error::required(&path, ""));
    } else if !SESSION_AFFINITIES.contains(&affinity) {
        errs.push(Error::not_supported(&path, affinity, SESSION_AFFINITIES));
    }
    let config_path = spec_path().child("sessionAffinityConfig");
    if affinity == AFFINITY_CLIENT_IP {
        let detail = format!("when session affinity type is {AFFINITY_CLIENT_IP}");
        let Some(config) = &spec.session_affinity_config else {
            errs.push(Error::required(&config_path, detail));
            return errs;
        };
        let client_path = config_path.child("clientIP");
        let Some(client) = &config.client_ip else {
            errs.push(Error::required(&client_path, detail));
            return errs;
        };
        let timeout_path = client_path.child("timeoutSeconds");
        match client.timeout_seconds {
            None => errs.push(Error::required(&timeout_path, detail)),
            Some(t) if t <= 0 || t > MAX_CLIENT_IP_AFFINITY_SECONDS => errs.push(Error::invalid(
                &timeout_path,
                t,
                format!("must be greater than 0 and less than {MAX_CLIENT_IP_AFFINITY_SECONDS}"),
            )),
            Some(_) => {}
        }
    } else if affinity == AFFINITY_NONE && spec.session_affinity_config.is_some() {
        errs.push(Error::forbidden(
            &config_path,
            format!("must not be set when session affinity is {AFFINITY_NONE}"),
        ));
    }
    errs
}

fn validate_load_balancer_class(new: &ServiceSpec, old: Option<&ServiceSpec>) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = spec_path().child("loadBalancerClass");
    if let Some(old) = old
        && service_type(old) == TYPE_LOAD_BALANCER
        && service_type(new) == TYPE_LOAD_BALANCER
        && old.load_balancer_class != new.load_balancer_class
    {
        errs.push(Error::invalid(
            &path,
            opt_str_value(new.load_balancer_class.as_ref()),
            "may not change once set",
        ));
    }
    if service_type(new) == TYPE_LOAD_BALANCER {
        if let Some(class) = &new.load_balancer_class {
            errs.append(formats::validate_qualified_name(&path, class));
        }
    } else if new.load_balancer_class.is_some() {
        errs.push(Error::forbidden(
            &path,
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    errs
}

fn validate_external_traffic_policy(spec: &ServiceSpec) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = spec_path().child("externalTrafficPolicy");
    let policy = spec.external_traffic_policy.as_deref().unwrap_or_default();
    if !externally_accessible(spec) {
        if !policy.is_empty() {
            errs.push(Error::invalid(
                &path,
                policy,
                "may only be set for externally-accessible services",
            ));
        }
    } else if policy.is_empty() {
        errs.push(Error::required(&path, ""));
    } else if !TRAFFIC_POLICIES.contains(&policy) {
        errs.push(Error::not_supported(&path, policy, TRAFFIC_POLICIES));
    }
    let hc_path = spec_path().child("healthCheckNodePort");
    let hc = spec.health_check_node_port.unwrap_or(0);
    if !needs_health_check(spec) {
        if hc != 0 {
            errs.push(Error::invalid(
                &hc_path,
                hc,
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if hc == 0 {
        errs.push(Error::required(&hc_path, ""));
    } else {
        errs.append(invalid_each_int(
            &hc_path,
            i64::from(hc),
            is_valid_port_num(i64::from(hc)),
        ));
    }
    errs
}

/// `ValidateService`.
pub fn validate_service(svc: &Service) -> ErrorList {
    let spec = spec(svc);
    let meta_path = Path::new("metadata");
    let mut errs = meta::validate_object_meta(&svc.metadata, true, NameRule::Dns1035Label);
    let annotations = svc.metadata.annotations.as_ref();
    let annotation = |k: &str| annotations.and_then(|a| a.get(k));
    if let (Some(mode), Some(hints)) = (
        annotation(ANNOTATION_TOPOLOGY_MODE),
        annotation(ANNOTATION_TOPOLOGY_HINTS),
    ) && mode != hints
    {
        errs.push(Error::invalid(
            &meta_path.child("annotations").key(ANNOTATION_TOPOLOGY_MODE),
            mode,
            format!("must match annotations[{ANNOTATION_TOPOLOGY_HINTS}] when both are specified"),
        ));
    }
    let sp = spec_path();
    let ty = service_type(&spec);
    let ports = spec.ports.as_deref().unwrap_or_default();
    let headless = is_headless(&spec);
    if ports.is_empty() && !headless && ty != TYPE_EXTERNAL_NAME {
        errs.push(Error::required(&sp.child("ports"), ""));
    }
    match ty {
        TYPE_LOAD_BALANCER | TYPE_NODE_PORT if headless => {
            errs.push(Error::invalid(
                &sp.child("clusterIPs").index(0),
                CLUSTER_IP_NONE,
                format!("may not be set to 'None' for {ty} services"),
            ));
        }
        TYPE_EXTERNAL_NAME => {
            let forbidden = "may not be set for ExternalName services";
            if !cluster_ips(&spec).is_empty() {
                errs.push(Error::forbidden(&sp.child("clusterIPs"), forbidden));
            }
            if !spec.ip_families.as_deref().unwrap_or_default().is_empty() {
                errs.push(Error::forbidden(&sp.child("ipFamilies"), forbidden));
            }
            if spec.ip_family_policy.is_some() {
                errs.push(Error::forbidden(&sp.child("ipFamilyPolicy"), forbidden));
            }
            let name = spec.external_name.as_deref().unwrap_or_default();
            let cname = name.strip_suffix('.').unwrap_or(name);
            if cname.is_empty() {
                errs.push(Error::required(&sp.child("externalName"), ""));
            } else {
                errs.append(validate_dns1123_subdomain(&sp.child("externalName"), cname));
            }
        }
        _ => {}
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        errs.append(validate_service_port(
            port,
            ports.len() > 1,
            &mut names,
            &sp.child("ports").index(i),
        ));
    }
    if let Some(selector) = &spec.selector {
        errs.append(meta::validate_labels(selector, &sp.child("selector")));
    }
    errs.append(validate_session_affinity(&spec));
    errs.append(validate_cluster_ips_related_fields(&spec));
    for (i, ip) in spec.external_ips.iter().flatten().enumerate() {
        let p = sp.child("externalIPs").index(i);
        let ip_errs = validate_ip(&p, ip);
        if ip_errs.is_empty() {
            errs.append(validate_non_special_ip(ip, &p));
        } else {
            errs.append(ip_errs);
        }
    }
    if ty.is_empty() {
        errs.push(Error::required(&sp.child("type"), ""));
    } else if !SERVICE_TYPES.contains(&ty) {
        errs.push(Error::not_supported(&sp.child("type"), ty, SERVICE_TYPES));
    }
    if ty == TYPE_CLUSTER_IP {
        for (i, port) in ports.iter().enumerate() {
            if port.node_port.unwrap_or(0) != 0 {
                errs.push(Error::forbidden(
                    &sp.child("ports").index(i).child("nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let np = port.node_port.unwrap_or(0);
        if np == 0 {
            continue;
        }
        let proto = port.protocol.clone().unwrap_or_default();
        if !node_ports.insert((proto, np)) {
            errs.push(Error::duplicate(
                &sp.child("ports").index(i).child("nodePort"),
                np,
            ));
        }
    }
    let mut seen_ports = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let proto = port.protocol.clone().unwrap_or_default();
        if !seen_ports.insert((proto.clone(), port.port)) {
            errs.push(Error::duplicate(
                &sp.child("ports").index(i),
                BadValue::Json(service_port_key(&proto, port.port)),
            ));
        }
    }
    let lb_only = "may only be used when `type` is 'LoadBalancer'";
    let ranges = spec
        .load_balancer_source_ranges
        .as_deref()
        .unwrap_or_default();
    if !ranges.is_empty() {
        let p = sp.child("LoadBalancerSourceRanges");
        if ty != TYPE_LOAD_BALANCER {
            errs.push(Error::forbidden(&p, lb_only));
        }
        for (i, value) in ranges.iter().enumerate() {
            errs.append(validate_cidr(&p.index(i), value.trim()));
        }
    } else if let Some(val) = annotation(ANNOTATION_LB_SOURCE_RANGES) {
        let p = meta_path
            .child("annotations")
            .key(ANNOTATION_LB_SOURCE_RANGES);
        if ty != TYPE_LOAD_BALANCER {
            errs.push(Error::forbidden(&p, lb_only));
        }
        let val = val.trim();
        if !val.is_empty() {
            for cidr in val.split(',') {
                errs.append(validate_cidr(&p, cidr.trim()));
            }
        }
    }
    if spec.allocate_load_balancer_node_ports.is_some() && ty != TYPE_LOAD_BALANCER {
        errs.push(Error::forbidden(
            &sp.child("allocateLoadBalancerNodePorts"),
            lb_only,
        ));
    }
    if ty == TYPE_LOAD_BALANCER && spec.allocate_load_balancer_node_ports.is_none() {
        // Upstream reports this one without the `spec.` prefix.
        errs.push(Error::required(
            &Path::new("allocateLoadBalancerNodePorts"),
            "",
        ));
    }
    errs.append(validate_load_balancer_class(&spec, None));
    errs.append(validate_external_traffic_policy(&spec));
    let itp_path = sp.child("internalTrafficPolicy");
    match spec.internal_traffic_policy.as_deref() {
        None if matches!(ty, TYPE_NODE_PORT | TYPE_LOAD_BALANCER | TYPE_CLUSTER_IP) => {
            errs.push(Error::required(&itp_path, ""));
        }
        Some(p) if !TRAFFIC_POLICIES.contains(&p) => {
            errs.push(Error::not_supported(&itp_path, p, TRAFFIC_POLICIES));
        }
        _ => {}
    }
    if let Some(td) = spec.traffic_distribution.as_deref()
        && !TRAFFIC_DISTRIBUTIONS.contains(&td)
    {
        errs.push(Error::not_supported(
            &sp.child("trafficDistribution"),
            td,
            TRAFFIC_DISTRIBUTIONS,
        ));
    }
    errs
}

fn validate_upgrade_downgrade_cluster_ips(old: &ServiceSpec, new: &ServiceSpec) -> ErrorList {
    let mut errs = ErrorList::new();
    if service_type(new) == TYPE_EXTERNAL_NAME || service_type(old) == TYPE_EXTERNAL_NAME {
        return errs;
    }
    if is_headless(old) && is_headless(new) {
        return errs;
    }
    let (o, n) = (cluster_ips(old), cluster_ips(new));
    let p = spec_path().child("clusterIPs");
    let changed = "may not change once set";
    if o.len() == n.len() {
        for (i, (a, b)) in o.iter().zip(n).enumerate() {
            if a != b {
                errs.push(Error::invalid(&p.index(i), strings_value(n), changed));
            }
        }
    } else if o.len() > n.len() {
        if n.is_empty() {
            errs.push(Error::invalid(
                &p.index(0),
                strings_value(n),
                "primary clusterIP can not be unset",
            ));
        }
        if let (Some(a), Some(b)) = (o.first(), n.first())
            && a != b
        {
            errs.push(Error::invalid(&p.index(0), strings_value(n), changed));
        }
        if n.len() == 1 && new.ip_family_policy.as_deref() != Some(SINGLE_STACK) {
            errs.push(Error::invalid(
                &spec_path().child("ipFamilyPolicy"),
                opt_str_value(new.ip_family_policy.as_ref()),
                "must be set to 'SingleStack' when releasing the secondary clusterIP",
            ));
        }
    } else if let (Some(a), Some(b)) = (o.first(), n.first())
        && a != b
    {
        errs.push(Error::invalid(&p.index(0), strings_value(n), changed));
    }
    errs
}

fn validate_upgrade_downgrade_ip_families(old: &ServiceSpec, new: &ServiceSpec) -> ErrorList {
    let mut errs = ErrorList::new();
    if service_type(new) == TYPE_EXTERNAL_NAME || service_type(old) == TYPE_EXTERNAL_NAME {
        return errs;
    }
    if is_headless(old) || is_headless(new) {
        return errs;
    }
    let o = old.ip_families.as_deref().unwrap_or_default();
    let n = new.ip_families.as_deref().unwrap_or_default();
    let p0 = spec_path().child("ipFamilies").index(0);
    let changed = "may not change once set";
    if o.len() == n.len() {
        for (a, b) in o.iter().zip(n) {
            if a != b {
                errs.push(Error::invalid(&p0, strings_value(n), changed));
            }
        }
    } else if o.len() > n.len() {
        if cluster_ips(new).is_empty() {
            errs.push(Error::invalid(
                &p0,
                strings_value(n),
                "primary ipFamily can not be unset",
            ));
        }
        if let (Some(a), Some(b)) = (o.first(), n.first())
            && a != b
        {
            errs.push(Error::invalid(
                &p0,
                strings_value(cluster_ips(new)),
                changed,
            ));
        }
        if n.len() == 1 && new.ip_family_policy.as_deref() != Some(SINGLE_STACK) {
            errs.push(Error::invalid(
                &spec_path().child("ipFamilyPolicy"),
                opt_str_value(new.ip_family_policy.as_ref()),
                "must be set to 'SingleStack' when releasing the secondary ipFamily",
            ));
        }
    } else if let (Some(a), Some(b)) = (o.first(), n.first())
        && a != b
    {
        errs.push(Error::invalid(
            &p0,
            strings_value(cluster_ips(new)),
            changed,
        ));
    }
    errs
}

/// `ValidateServiceUpdate`: metadata update rules, cluster IPs and IP
/// families fixed once set (bar dual-stack upgrades and downgrades), the
/// load balancer class and health-check node port fixed, then
/// [`validate_service`].
pub fn validate_service_update(new: &Service, old: &Service) -> ErrorList {
    let (n, o) = (spec(new), spec(old));
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_upgrade_downgrade_cluster_ips(&o, &n));
    errs.append(validate_upgrade_downgrade_ip_families(&o, &n));
    errs.append(validate_load_balancer_class(&n, Some(&o)));
    if needs_health_check(&o)
        && needs_health_check(&n)
        && o.health_check_node_port != n.health_check_node_port
    {
        errs.push(Error::forbidden(
            &spec_path().child("healthCheckNodePort"),
            meta::FIELD_IMMUTABLE,
        ));
    }
    errs.append(validate_service(new));
    errs
}

/// `ValidateLoadBalancerStatus`.
pub fn validate_load_balancer_status(
    status: &LoadBalancerStatus,
    spec: &ServiceSpec,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let ingress_path = path.child("ingress");
    let ingress = status.ingress.as_deref().unwrap_or_default();
    if service_type(spec) != TYPE_LOAD_BALANCER && !ingress.is_empty() {
        errs.push(Error::forbidden(
            &ingress_path,
            "may only be used when `spec.type` is 'LoadBalancer'",
        ));
        return errs;
    }
    for (i, ing) in ingress.iter().enumerate() {
        let p = ingress_path.index(i);
        let ip = ing.ip.as_deref().unwrap_or_default();
        if !ip.is_empty() {
            errs.append(validate_ip(&p.child("ip"), ip));
        }
        match ing.ip_mode.as_deref() {
            None if !ip.is_empty() => errs.push(Error::required(
                &p.child("ipMode"),
                "must be specified when `ip` is set",
            )),
            Some(_) if ip.is_empty() => errs.push(Error::forbidden(
                &p.child("ipMode"),
                "may not be specified when `ip` is not set",
            )),
            Some(mode) if !IP_MODES.contains(&mode) => {
                errs.push(Error::not_supported(&p.child("ipMode"), mode, IP_MODES));
            }
            _ => {}
        }
        let host = ing.hostname.as_deref().unwrap_or_default();
        if !host.is_empty() {
            errs.append(validate_dns1123_subdomain(&p.child("hostname"), host));
            if host.parse::<IpAddr>().is_ok() {
                errs.push(Error::invalid(
                    &p.child("hostname"),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}

/// `ValidateServiceStatusUpdate`.
pub fn validate_service_status_update(new: &Service, old: &Service) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    let lb = new
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.clone())
        .unwrap_or_default();
    errs.append(validate_load_balancer_status(
        &lb,
        &spec(new),
        &Path::new("status").child("loadBalancer"),
    ));
    errs
}
