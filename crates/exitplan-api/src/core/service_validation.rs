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

/// `clusterIPs` as Go renders the slice (`null` when unset).
fn cluster_ips_value(spec: &ServiceSpec) -> BadValue {
    spec.cluster_ips
        .as_ref()
        .map_or(BadValue::Null, |v| BadValue::Json(render::strings(v)))
}

/// `ipFamilies` as Go renders the slice (`null` when unset).
fn families_value(spec: &ServiceSpec) -> BadValue {
    spec.ip_families
        .as_ref()
        .map_or(BadValue::Null, |v| BadValue::Json(render::strings(v)))
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
                cluster_ips_value(spec),
                "first value must match `clusterIP`",
            )),
            Some(_) => {}
        }
    } else if !ips.is_empty() {
        errs.push(Error::invalid(
            &ips_path,
            cluster_ips_value(spec),
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
                    cluster_ips_value(spec),
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
            cluster_ips_value(spec),
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
                cluster_ips_value(spec),
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
                errs.push(Error::invalid(&p.index(i), cluster_ips_value(new), changed));
            }
        }
    } else if o.len() > n.len() {
        if n.is_empty() {
            errs.push(Error::invalid(
                &p.index(0),
                cluster_ips_value(new),
                "primary clusterIP can not be unset",
            ));
        }
        if let (Some(a), Some(b)) = (o.first(), n.first())
            && a != b
        {
            errs.push(Error::invalid(&p.index(0), cluster_ips_value(new), changed));
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
        errs.push(Error::invalid(&p.index(0), cluster_ips_value(new), changed));
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
                errs.push(Error::invalid(&p0, families_value(new), changed));
            }
        }
    } else if o.len() > n.len() {
        if cluster_ips(new).is_empty() {
            errs.push(Error::invalid(
                &p0,
                families_value(new),
                "primary ipFamily can not be unset",
            ));
        }
        if let (Some(a), Some(b)) = (o.first(), n.first())
            && a != b
        {
            errs.push(Error::invalid(&p0, cluster_ips_value(new), changed));
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
        errs.push(Error::invalid(&p0, cluster_ips_value(new), changed));
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{
        ClientIPConfig, LoadBalancerIngress, ServiceStatus, SessionAffinityConfig,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    /// Upstream's `makeValidService`.
    fn valid() -> Service {
        Service {
            metadata: ObjectMeta {
                name: Some("valid".into()),
                namespace: Some("valid".into()),
                resource_version: Some("1".into()),
                ..Default::default()
            },
            spec: Some(ServiceSpec {
                selector: Some(BTreeMap::from([("key".to_owned(), "val".to_owned())])),
                session_affinity: Some("None".into()),
                type_: Some("ClusterIP".into()),
                ports: Some(vec![port("p", 8675)]),
                internal_traffic_policy: Some("Cluster".into()),
                ..Default::default()
            }),
            status: None,
        }
    }

    fn port(name: &str, n: i32) -> ServicePort {
        ServicePort {
            name: (!name.is_empty()).then(|| name.to_owned()),
            protocol: Some("TCP".into()),
            port: n,
            target_port: Some(IntOrString::Int(n)),
            ..Default::default()
        }
    }

    type Tweak = fn(&mut Service, &mut ServiceSpec);

    fn lb(s: &mut ServiceSpec) {
        s.type_ = Some("LoadBalancer".into());
        s.allocate_load_balancer_node_ports = Some(true);
        s.external_traffic_policy = Some("Cluster".into());
    }

    fn node_port(s: &mut ServiceSpec) {
        s.type_ = Some("NodePort".into());
        s.external_traffic_policy = Some("Cluster".into());
    }

    fn external_name(s: &mut ServiceSpec) {
        s.type_ = Some("ExternalName".into());
        s.external_name = Some("foo.bar.example.com".into());
        s.internal_traffic_policy = None;
    }

    fn headless(s: &mut ServiceSpec) {
        s.cluster_ip = Some("None".into());
        s.cluster_ips = Some(vec!["None".into()]);
    }

    /// Upstream's `TestValidateServiceCreate` (the cases this server's users
    /// hit), with the message kube-apiserver prints; `""` = valid.
    #[test]
    fn validate_service_create_table() {
        let cases: Vec<(&str, Tweak, &str)> = vec![
            ("valid", |_, _| {}, ""),
            (
                "missing namespace",
                |o, _| o.metadata.namespace = None,
                "metadata.namespace: Required value",
            ),
            (
                "missing name",
                |o, _| o.metadata.name = None,
                "metadata.name: Required value: name or generateName is required",
            ),
            (
                "invalid name",
                |o, _| o.metadata.name = Some("-123".into()),
                r#"metadata.name: Invalid value: "-123": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
            ),
            (
                "name starting with a digit",
                |o, _| o.metadata.name = Some("1abc".into()),
                r#"metadata.name: Invalid value: "1abc": a DNS-1035 label"#,
            ),
            (
                "too long name",
                |o, _| o.metadata.name = Some("a".repeat(64)),
                "must be no more than 63 bytes",
            ),
            ("nil selector", |_, s| s.selector = None, ""),
            (
                "invalid selector",
                |_, s| {
                    s.selector = Some(BTreeMap::from([(
                        "NoSpecialCharsLike=Equals".to_owned(),
                        "bar".to_owned(),
                    )]));
                },
                r#"spec.selector: Invalid value: "NoSpecialCharsLike=Equals""#,
            ),
            (
                "missing session affinity",
                |_, s| s.session_affinity = None,
                "spec.sessionAffinity: Required value",
            ),
            (
                "invalid session affinity",
                |_, s| s.session_affinity = Some("Bogus".into()),
                r#"spec.sessionAffinity: Unsupported value: "Bogus": supported values: "ClientIP", "None""#,
            ),
            (
                "sessionAffinityConfig with affinity None",
                |_, s| {
                    s.session_affinity_config = Some(SessionAffinityConfig {
                        client_ip: Some(ClientIPConfig {
                            timeout_seconds: Some(90),
                        }),
                    });
                },
                "spec.sessionAffinityConfig: Forbidden: must not be set when session affinity is None",
            ),
            (
                "ClientIP affinity with timeout 0",
                |_, s| {
                    s.session_affinity = Some("ClientIP".into());
                    s.session_affinity_config = Some(SessionAffinityConfig {
                        client_ip: Some(ClientIPConfig {
                            timeout_seconds: Some(0),
                        }),
                    });
                },
                "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400",
            ),
            (
                "ClientIP affinity without config",
                |_, s| s.session_affinity = Some("ClientIP".into()),
                "spec.sessionAffinityConfig: Required value: when session affinity type is ClientIP",
            ),
            (
                "missing type",
                |_, s| s.type_ = None,
                "spec.type: Required value",
            ),
            (
                "invalid type",
                |_, s| s.type_ = Some("Bogus".into()),
                r#"spec.type: Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort""#,
            ),
            (
                "missing ports",
                |_, s| s.ports = None,
                "spec.ports: Required value",
            ),
            (
                "missing ports but headless",
                |_, s| {
                    s.ports = None;
                    headless(s);
                },
                "",
            ),
            (
                "empty port[0] name",
                |_, s| s.ports = Some(vec![port("", 80)]),
                "",
            ),
            (
                "empty port[1] name",
                |_, s| s.ports = Some(vec![port("p", 80), port("", 81)]),
                "spec.ports[1].name: Required value",
            ),
            (
                "invalid port name",
                |_, s| s.ports = Some(vec![port("INVALID", 80)]),
                r#"spec.ports[0].name: Invalid value: "INVALID": a lowercase RFC 1123 label"#,
            ),
            (
                "dup port name",
                |_, s| s.ports = Some(vec![port("p", 80), port("p", 81)]),
                r#"spec.ports[1].name: Duplicate value: "p""#,
            ),
            (
                "missing protocol",
                |_, s| {
                    s.ports = Some(vec![ServicePort {
                        protocol: None,
                        ..port("p", 80)
                    }])
                },
                "spec.ports[0].protocol: Required value",
            ),
            (
                "invalid protocol",
                |_, s| {
                    s.ports = Some(vec![ServicePort {
                        protocol: Some("INVALID".into()),
                        ..port("p", 80)
                    }]);
                },
                r#"spec.ports[0].protocol: Unsupported value: "INVALID": supported values: "SCTP", "TCP", "UDP""#,
            ),
            (
                "missing port",
                |_, s| {
                    s.ports = Some(vec![ServicePort {
                        port: 0,
                        ..port("p", 80)
                    }])
                },
                "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
            ),
            (
                "invalid port",
                |_, s| {
                    s.ports = Some(vec![ServicePort {
                        port: 65536,
                        ..port("p", 80)
                    }])
                },
                "spec.ports[0].port: Invalid value: 65536: must be between 1 and 65535, inclusive",
            ),
            (
                "invalid target port",
                |_, s| {
                    s.ports = Some(vec![ServicePort {
                        target_port: Some(IntOrString::Int(0)),
                        ..port("p", 80)
                    }]);
                },
                "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
            ),
            (
                "valid named target port",
                |_, s| {
                    s.ports = Some(vec![ServicePort {
                        target_port: Some(IntOrString::String("http".into())),
                        ..port("p", 80)
                    }]);
                },
                "",
            ),
            (
                "dup ports",
                |_, s| s.ports = Some(vec![port("a", 80), port("b", 80)]),
                r#"spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}"#,
            ),
            (
                "same port, different protocols",
                |_, s| {
                    s.ports = Some(vec![
                        port("a", 53),
                        ServicePort {
                            protocol: Some("UDP".into()),
                            ..port("b", 53)
                        },
                    ]);
                },
                "",
            ),
            (
                "invalid cluster ip",
                |_, s| {
                    s.cluster_ip = Some("invalid".into());
                    s.cluster_ips = Some(vec!["invalid".into()]);
                },
                r#"spec.clusterIPs[0]: Invalid value: "invalid": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"#,
            ),
            (
                "clusterIP without clusterIPs",
                |_, s| s.cluster_ip = Some("10.0.0.1".into()),
                "spec.clusterIPs: Required value",
            ),
            (
                "clusterIPs not matching clusterIP",
                |_, s| {
                    s.cluster_ip = Some("10.0.0.1".into());
                    s.cluster_ips = Some(vec!["10.0.0.2".into()]);
                },
                r#"spec.clusterIPs: Invalid value: ["10.0.0.2"]: first value must match `clusterIP`"#,
            ),
            (
                "clusterIPs without clusterIP",
                |_, s| s.cluster_ips = Some(vec!["10.0.0.2".into()]),
                r#"spec.clusterIPs: Invalid value: ["10.0.0.2"]: must be empty when `clusterIP` is not specified"#,
            ),
            (
                "two IPv4 cluster IPs",
                |_, s| {
                    s.cluster_ip = Some("10.0.0.1".into());
                    s.cluster_ips = Some(vec!["10.0.0.1".into(), "10.0.0.2".into()]);
                },
                r#"spec.clusterIPs: Invalid value: ["10.0.0.1","10.0.0.2"]: may specify no more than one IP for each IP family"#,
            ),
            (
                "None not alone",
                |_, s| {
                    s.cluster_ip = Some("None".into());
                    s.cluster_ips = Some(vec!["None".into(), "10.0.0.1".into()]);
                },
                r#"spec.clusterIPs: Invalid value: ["None","10.0.0.1"]: 'None' must be the first and only value"#,
            ),
            (
                "IPv6 family with an IPv4 cluster IP",
                |_, s| {
                    s.cluster_ip = Some("10.0.0.1".into());
                    s.cluster_ips = Some(vec!["10.0.0.1".into()]);
                    s.ip_families = Some(vec!["IPv6".into()]);
                },
                r#"spec.clusterIPs[0]: Invalid value: "10.0.0.1": expected an IPv6 value as indicated by `ipFamilies[0]`"#,
            ),
            (
                "invalid ip family",
                |_, s| s.ip_families = Some(vec!["IPv5".into()]),
                r#"spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6""#,
            ),
            (
                "duplicate ip family",
                |_, s| s.ip_families = Some(vec!["IPv4".into(), "IPv4".into()]),
                r#"spec.ipFamilies[1]: Duplicate value: "IPv4""#,
            ),
            (
                "invalid ipFamilyPolicy",
                |_, s| s.ip_family_policy = Some("Bogus".into()),
                r#"spec.ipFamilyPolicy: Unsupported value: "Bogus": supported values: "PreferDualStack", "RequireDualStack", "SingleStack""#,
            ),
            (
                "invalid publicIPs localhost",
                |_, s| {
                    s.external_traffic_policy = Some("Cluster".into());
                    s.external_ips = Some(vec!["127.0.0.1".into()]);
                },
                r#"spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)"#,
            ),
            (
                "invalid publicIPs unspecified",
                |_, s| {
                    s.external_traffic_policy = Some("Cluster".into());
                    s.external_ips = Some(vec!["0.0.0.0".into()]);
                },
                r#"spec.externalIPs[0]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)"#,
            ),
            (
                "externalIPs without externalTrafficPolicy",
                |_, s| s.external_ips = Some(vec!["1.2.3.4".into()]),
                "spec.externalTrafficPolicy: Required value",
            ),
            (
                "externalTrafficPolicy on a plain ClusterIP service",
                |_, s| s.external_traffic_policy = Some("Local".into()),
                r#"spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services"#,
            ),
            (
                "nodePort on ClusterIP",
                |_, s| {
                    s.ports = Some(vec![ServicePort {
                        node_port: Some(30001),
                        ..port("p", 80)
                    }])
                },
                "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
            ),
            ("valid NodePort", |_, s| node_port(s), ""),
            (
                "dup nodePorts",
                |_, s| {
                    node_port(s);
                    s.ports = Some(vec![
                        ServicePort {
                            node_port: Some(30001),
                            ..port("a", 80)
                        },
                        ServicePort {
                            node_port: Some(30001),
                            ..port("b", 81)
                        },
                    ]);
                },
                "spec.ports[1].nodePort: Duplicate value: 30001",
            ),
            (
                "NodePort without externalTrafficPolicy",
                |_, s| s.type_ = Some("NodePort".into()),
                "spec.externalTrafficPolicy: Required value",
            ),
            (
                "invalid externalTrafficPolicy",
                |_, s| {
                    node_port(s);
                    s.external_traffic_policy = Some("Global".into());
                },
                r#"spec.externalTrafficPolicy: Unsupported value: "Global": supported values: "Cluster", "Local""#,
            ),
            ("valid LoadBalancer", |_, s| lb(s), ""),
            (
                "LoadBalancer without allocateLoadBalancerNodePorts",
                |_, s| {
                    lb(s);
                    s.allocate_load_balancer_node_ports = None;
                },
                "allocateLoadBalancerNodePorts: Required value",
            ),
            (
                "allocateLoadBalancerNodePorts on ClusterIP",
                |_, s| s.allocate_load_balancer_node_ports = Some(false),
                "spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'",
            ),
            (
                "LoadBalancer cannot be headless",
                |_, s| {
                    lb(s);
                    headless(s);
                },
                r#"spec.clusterIPs[0]: Invalid value: "None": may not be set to 'None' for LoadBalancer services"#,
            ),
            (
                "NodePort cannot be headless",
                |_, s| {
                    node_port(s);
                    headless(s);
                },
                r#"spec.clusterIPs[0]: Invalid value: "None": may not be set to 'None' for NodePort services"#,
            ),
            (
                "LoadBalancer Local without healthCheckNodePort",
                |_, s| {
                    lb(s);
                    s.external_traffic_policy = Some("Local".into());
                },
                "spec.healthCheckNodePort: Required value",
            ),
            (
                "valid LoadBalancer Local with healthCheckNodePort",
                |_, s| {
                    lb(s);
                    s.external_traffic_policy = Some("Local".into());
                    s.health_check_node_port = Some(31100);
                },
                "",
            ),
            (
                "healthCheckNodePort on a Cluster LoadBalancer",
                |_, s| {
                    lb(s);
                    s.health_check_node_port = Some(31100);
                },
                "spec.healthCheckNodePort: Invalid value: 31100: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ),
            (
                "source ranges on ClusterIP",
                |_, s| s.load_balancer_source_ranges = Some(vec!["10.0.0.0/8".into()]),
                "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'",
            ),
            (
                "invalid source range",
                |_, s| {
                    lb(s);
                    s.load_balancer_source_ranges = Some(vec!["10.0.0.1".into()]);
                },
                r#"spec.LoadBalancerSourceRanges[0]: Invalid value: "10.0.0.1": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"#,
            ),
            (
                "valid space-padded source range",
                |_, s| {
                    lb(s);
                    s.load_balancer_source_ranges = Some(vec![" 10.0.0.0/8 ".into()]);
                },
                "",
            ),
            (
                "loadBalancerClass on ClusterIP",
                |_, s| s.load_balancer_class = Some("acme.io/lb".into()),
                "spec.loadBalancerClass: Forbidden: may only be used when `type` is 'LoadBalancer'",
            ),
            (
                "valid loadBalancerClass",
                |_, s| {
                    lb(s);
                    s.load_balancer_class = Some("acme.io/lb".into());
                },
                "",
            ),
            (
                "missing internalTrafficPolicy",
                |_, s| s.internal_traffic_policy = None,
                "spec.internalTrafficPolicy: Required value",
            ),
            (
                "invalid internalTrafficPolicy",
                |_, s| s.internal_traffic_policy = Some("Bogus".into()),
                r#"spec.internalTrafficPolicy: Unsupported value: "Bogus": supported values: "Cluster", "Local""#,
            ),
            (
                "invalid trafficDistribution",
                |_, s| s.traffic_distribution = Some("Bogus".into()),
                r#"spec.trafficDistribution: Unsupported value: "Bogus": supported values: "PreferClose", "PreferSameNode", "PreferSameZone""#,
            ),
            ("valid ExternalName", |_, s| external_name(s), ""),
            (
                "valid ExternalName with trailing dot",
                |_, s| {
                    external_name(s);
                    s.external_name = Some("foo.bar.example.com.".into());
                },
                "",
            ),
            (
                "ExternalName missing externalName",
                |_, s| {
                    external_name(s);
                    s.external_name = None;
                },
                "spec.externalName: Required value",
            ),
            (
                "invalid ExternalName",
                |_, s| {
                    external_name(s);
                    s.external_name = Some("-123.com".into());
                },
                r#"spec.externalName: Invalid value: "-123.com""#,
            ),
            (
                "ExternalName with clusterIPs",
                |_, s| {
                    external_name(s);
                    s.cluster_ip = Some("10.0.0.1".into());
                    s.cluster_ips = Some(vec!["10.0.0.1".into()]);
                },
                "spec.clusterIPs: Forbidden: may not be set for ExternalName services",
            ),
            (
                "ExternalName with ipFamilyPolicy",
                |_, s| {
                    external_name(s);
                    s.ip_family_policy = Some("SingleStack".into());
                },
                "spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services",
            ),
            (
                "topology annotations disagree",
                |o, _| {
                    o.metadata.annotations = Some(BTreeMap::from([
                        (
                            "service.kubernetes.io/topology-mode".to_owned(),
                            "Auto".to_owned(),
                        ),
                        (
                            "service.kubernetes.io/topology-aware-hints".to_owned(),
                            "Disabled".to_owned(),
                        ),
                    ]));
                },
                r#"metadata.annotations[service.kubernetes.io/topology-mode]: Invalid value: "Auto": must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified"#,
            ),
        ];
        for (name, tweak, want) in cases {
            let mut svc = valid();
            let mut spec = svc.spec.take().expect("spec");
            tweak(&mut svc, &mut spec);
            svc.spec = Some(spec);
            let got = validate_service(&svc).to_string();
            if want.is_empty() {
                assert_eq!(got, "", "{name}");
            } else {
                assert!(got.contains(want), "{name}:\n got {got}\nwant {want}");
            }
        }
    }

    fn with_ip(ip: &str) -> Service {
        let mut s = valid();
        if let Some(spec) = s.spec.as_mut() {
            spec.cluster_ip = Some(ip.into());
            spec.cluster_ips = Some(vec![ip.into()]);
            spec.ip_families = Some(vec!["IPv4".into()]);
            spec.ip_family_policy = Some("SingleStack".into());
        }
        s
    }

    /// Upstream's `TestValidateServiceUpdate` cases for the fields fixed after create.
    #[test]
    fn validate_service_update_table() {
        let old = with_ip("10.0.0.1");
        assert_eq!(validate_service_update(&old.clone(), &old).to_string(), "");

        let changed = with_ip("10.0.0.2");
        assert_eq!(
            validate_service_update(&changed, &old).to_string(),
            r#"spec.clusterIPs[0]: Invalid value: ["10.0.0.2"]: may not change once set"#
        );

        let mut lb_old = with_ip("10.0.0.1");
        let mut lb_new = lb_old.clone();
        if let (Some(o), Some(n)) = (lb_old.spec.as_mut(), lb_new.spec.as_mut()) {
            lb(o);
            lb(n);
            o.load_balancer_class = Some("a.io/one".into());
            n.load_balancer_class = Some("a.io/two".into());
        }
        assert_eq!(
            validate_service_update(&lb_new, &lb_old).to_string(),
            r#"spec.loadBalancerClass: Invalid value: "a.io/two": may not change once set"#
        );

        let mut hc_old = with_ip("10.0.0.1");
        if let Some(o) = hc_old.spec.as_mut() {
            lb(o);
            o.external_traffic_policy = Some("Local".into());
            o.health_check_node_port = Some(31000);
        }
        let mut hc_new = hc_old.clone();
        if let Some(n) = hc_new.spec.as_mut() {
            n.health_check_node_port = Some(31001);
        }
        assert_eq!(
            validate_service_update(&hc_new, &hc_old).to_string(),
            "spec.healthCheckNodePort: Forbidden: field is immutable"
        );

        // ExternalName → ClusterIP: the new clusterIP is not a change.
        let mut en = valid();
        if let Some(s) = en.spec.as_mut() {
            external_name(s);
        }
        assert_eq!(validate_service_update(&old, &en).to_string(), "");

        // Releasing the primary cluster IP.
        let mut cleared = old.clone();
        if let Some(s) = cleared.spec.as_mut() {
            s.cluster_ip = None;
            s.cluster_ips = None;
        }
        assert!(
            validate_service_update(&cleared, &old)
                .to_string()
                .contains(
                    "spec.clusterIPs[0]: Invalid value: null: primary clusterIP can not be unset"
                ),
            "{}",
            validate_service_update(&cleared, &old)
        );
    }

    /// `ValidateServiceStatusUpdate` / `ValidateLoadBalancerStatus`.
    #[test]
    fn validate_status() {
        let old = with_ip("10.0.0.1");
        let status = |ip: &str, mode: Option<&str>, host: &str| ServiceStatus {
            load_balancer: Some(LoadBalancerStatus {
                ingress: Some(vec![LoadBalancerIngress {
                    ip: (!ip.is_empty()).then(|| ip.to_owned()),
                    ip_mode: mode.map(str::to_owned),
                    hostname: (!host.is_empty()).then(|| host.to_owned()),
                    ports: None,
                }]),
            }),
            conditions: None,
        };
        let mut new = old.clone();
        new.status = Some(status("1.2.3.4", Some("VIP"), ""));
        assert_eq!(
            validate_service_status_update(&new, &old).to_string(),
            "status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"
        );
        let mut lb_old = old.clone();
        if let Some(s) = lb_old.spec.as_mut() {
            lb(s);
        }
        let mut cases = vec![
            (status("1.2.3.4", Some("VIP"), ""), ""),
            (
                status("1.2.3.4", None, ""),
                "status.loadBalancer.ingress[0].ipMode: Required value: must be specified when `ip` is set",
            ),
            (
                status("", Some("VIP"), "lb.example.com"),
                "status.loadBalancer.ingress[0].ipMode: Forbidden: may not be specified when `ip` is not set",
            ),
            (
                status("1.2.3.4", Some("Bogus"), ""),
                r#"status.loadBalancer.ingress[0].ipMode: Unsupported value: "Bogus": supported values: "Proxy", "VIP""#,
            ),
            (
                status("", None, "1.2.3.4"),
                r#"status.loadBalancer.ingress[0].hostname: Invalid value: "1.2.3.4": must be a DNS name, not an IP address"#,
            ),
        ];
        for (st, want) in cases.drain(..) {
            let mut new = lb_old.clone();
            new.status = Some(st);
            assert_eq!(
                validate_service_status_update(&new, &lb_old).to_string(),
                want
            );
        }
    }
}
