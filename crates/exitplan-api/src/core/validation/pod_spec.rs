//! `ValidatePodSpec` — the rules every pod spec follows, in a Pod or in a
//! template — and `ValidatePodTemplateSpec`.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{PodDNSConfig, PodResourceClaim, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::PodValidationOptions;
use super::container::{
    SpecContext, validate_containers, validate_ephemeral_containers, validate_init_containers,
};
use super::os::{validate_os, validate_windows_host_process_pod};
use super::pod_resources::validate_pod_resources;
use super::quantity::Quantity;
use super::resources::{validate_container_resource_name, validate_quantity_value};
use super::scheduling::{
    validate_affinity, validate_readiness_gates, validate_scheduling_gates, validate_tolerations,
    validate_topology_spread,
};
use super::security::validate_pod_security_context;
use super::security_annotations::{
    validate_app_armor_annotations_and_fields_match_on_create, validate_pod_specific_annotations,
    validate_seccomp_annotations_and_fields,
};
use super::strings::{
    inclusive_range_error, invalid_each, validate_dns1123_label, validate_dns1123_subdomain,
    validate_ip,
};
use super::volume::validate_volumes;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::{formats, meta, render};

/// `MaxDNSNameservers`.
pub const MAX_DNS_NAMESERVERS: usize = 3;
/// `MaxDNSSearchPaths`.
pub const MAX_DNS_SEARCH_PATHS: usize = 32;
/// `MaxDNSSearchListChars`.
pub const MAX_DNS_SEARCH_LIST_CHARS: usize = 2048;

const RESTART_POLICIES: &[&str] = &["Always", "OnFailure", "Never"];
const DNS_POLICIES: &[&str] = &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];

fn validate_enum(value: &str, allowed: &[&str], path: &Path) -> ErrorList {
    if value.is_empty() {
        ErrorList(vec![Error::required(path, "")])
    } else if allowed.contains(&value) {
        ErrorList::new()
    } else {
        ErrorList(vec![Error::not_supported(path, value, allowed)])
    }
}

/// `validateRestartPolicy` (pod level).
pub fn validate_restart_policy(policy: &str, path: &Path) -> ErrorList {
    validate_enum(policy, RESTART_POLICIES, path)
}

fn validate_dns_config(config: Option<&PodDNSConfig>, policy: &str, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if policy == "None" {
        let Some(c) = config else {
            return ErrorList(vec![Error::required(
                path,
                "must provide `dnsConfig` when `dnsPolicy` is None",
            )]);
        };
        if c.nameservers.as_ref().is_none_or(Vec::is_empty) {
            return ErrorList(vec![Error::required(
                &path.child("nameservers"),
                "must provide at least one DNS nameserver when `dnsPolicy` is None",
            )]);
        }
    }
    let Some(c) = config else {
        return errs;
    };
    let nameservers = c.nameservers.as_deref().unwrap_or_default();
    if nameservers.len() > MAX_DNS_NAMESERVERS {
        errs.push(Error::invalid(
            &path.child("nameservers"),
            BadValue::Json(render::strings(nameservers)),
            format!("must not have more than {MAX_DNS_NAMESERVERS} nameservers"),
        ));
    }
    for (i, ns) in nameservers.iter().enumerate() {
        errs.append(validate_ip(&path.child("nameservers").index(i), ns));
    }
    let searches = c.searches.as_deref().unwrap_or_default();
    if searches.len() > MAX_DNS_SEARCH_PATHS {
        errs.push(Error::invalid(
            &path.child("searches"),
            BadValue::Json(render::strings(searches)),
            format!("must not have more than {MAX_DNS_SEARCH_PATHS} search paths"),
        ));
    }
    if searches.join(" ").len() > MAX_DNS_SEARCH_LIST_CHARS {
        errs.push(Error::invalid(
            &path.child("searches"),
            BadValue::Json(render::strings(searches)),
            format!("must not have more than {MAX_DNS_SEARCH_LIST_CHARS} characters (including spaces) in the search list"),
        ));
    }
    for (i, s) in searches.iter().enumerate() {
        // Relaxed DNS search validation (GA): "." is allowed and
        // underscores may appear.
        if s == "." {
            continue;
        }
        let s = s.strip_suffix('.').unwrap_or(s);
        let probe = s.replace('_', "a");
        for msg in formats::is_dns1123_subdomain(&probe) {
            let msg = msg.replace(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'",
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-', '_' or '.'",
            );
            errs.push(Error::invalid(&path.child("searches").index(i), s, msg));
        }
    }
    for (i, o) in c.options.iter().flatten().enumerate() {
        if o.name.as_deref().unwrap_or_default().is_empty() {
            errs.push(Error::required(
                &path.child("options").index(i),
                "must not be empty",
            ));
        }
    }
    errs
}

/// The source part of `validatePodResourceClaim`: exactly one of
/// `resourceClaimName` and `resourceClaimTemplateName`, each a subdomain.
fn validate_claim_source(c: &PodResourceClaim, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let (name, template) = (
        c.resource_claim_name.as_deref(),
        c.resource_claim_template_name.as_deref(),
    );
    if name.is_some() && template.is_some() {
        errs.push(Error::invalid(
            path,
            BadValue::Json(render::json(c)),
            "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
        ));
    }
    if name.is_none() && template.is_none() {
        errs.push(Error::invalid(
            path,
            BadValue::Json(render::json(c)),
            "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
        ));
    }
    if let Some(n) = name {
        errs.append(invalid_each(
            &path.child("resourceClaimName"),
            n,
            formats::is_dns1123_subdomain(n),
        ));
    }
    if let Some(t) = template {
        errs.append(invalid_each(
            &path.child("resourceClaimTemplateName"),
            t,
            formats::is_dns1123_subdomain(t),
        ));
    }
    errs
}

fn validate_host_network_deps(
    spec: &PodSpec,
    path: &Path,
    opts: PodValidationOptions,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if !spec.host_network.unwrap_or(false) {
        return errs;
    }
    let cp = path.child("containers");
    for (i, c) in spec.containers.iter().enumerate() {
        for (j, port) in c.ports.iter().flatten().enumerate() {
            let hp = port.host_port.unwrap_or(0);
            if (opts.resource_is_pod || hp != 0) && hp != port.container_port {
                errs.push(Error::invalid(
                    &cp.index(i).child("ports").index(j).child("hostPort"),
                    hp,
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
    errs
}

fn validate_host_users(spec: &PodSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let host_users = spec.host_users;
    if host_users != Some(false) {
        return errs;
    }
    const WHY: &str = "when `pod.Spec.HostUsers` is false";
    if spec.host_network.unwrap_or(false) {
        errs.push(Error::forbidden(&path.child("hostNetwork"), WHY));
    }
    if spec.host_pid.unwrap_or(false) {
        errs.push(Error::forbidden(&path.child("HostPID"), WHY));
    }
    if spec.host_ipc.unwrap_or(false) {
        errs.push(Error::forbidden(&path.child("HostIPC"), WHY));
    }
    errs
}

fn validate_overhead(spec: &PodSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (name, q) in spec.overhead.iter().flatten() {
        let p = path.child("limits").key(name);
        errs.append(validate_container_resource_name(name, &p));
        if let Ok(q) = Quantity::parse(&q.0) {
            errs.append(validate_quantity_value(name, &q, &p));
        }
    }
    errs
}

/// `ValidatePodSpec`: everything but the pod-only and update rules.
/// `pod_meta` is the pod's metadata (for generic ephemeral volume names)
/// or `None` in a template.
pub fn validate_pod_spec(
    spec: &PodSpec,
    pod_meta: Option<&ObjectMeta>,
    path: &Path,
    opts: PodValidationOptions,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let grace = spec.termination_grace_period_seconds;
    if grace.is_none() {
        errs.push(Error::required(
            &path.child("terminationGracePeriodSeconds"),
            "",
        ));
    }
    let host_users = spec.host_users.unwrap_or(true);
    let pod_name = pod_meta.and_then(|m| m.name.as_deref());
    let (volumes, verrs) = validate_volumes(
        spec.volumes.as_deref().unwrap_or_default(),
        pod_name,
        &path.child("volumes"),
    );
    errs.append(verrs);
    let claims = spec.resource_claims.as_deref().unwrap_or_default();
    let claim_names: BTreeSet<String> = claims
        .iter()
        .filter(|c| !c.name.is_empty())
        .map(|c| c.name.clone())
        .collect();
    let mut seen_claims = BTreeSet::new();
    for (i, c) in claims.iter().enumerate() {
        let p = path.child("resourceClaims").index(i);
        if c.name.is_empty() {
            errs.push(Error::required(&p.child("name"), ""));
        } else if !seen_claims.insert(c.name.as_str()) {
            errs.push(Error::duplicate(&p.child("name"), c.name.as_str()));
        } else {
            errs.append(validate_dns1123_label(&p.child("name"), &c.name));
        }
        errs.append(validate_claim_source(c, &p));
    }
    let restart_policy = spec.restart_policy.as_deref().unwrap_or_default();
    let ctx = SpecContext {
        volumes: &volumes,
        claim_names: &claim_names,
        grace_period: grace,
        restart_policy,
        host_users,
    };
    let init = spec.init_containers.as_deref().unwrap_or_default();
    errs.append(validate_containers(
        &spec.containers,
        &ctx,
        &path.child("containers"),
    ));
    errs.append(validate_init_containers(
        init,
        &spec.containers,
        &ctx,
        &path.child("initContainers"),
    ));
    errs.append(validate_ephemeral_containers(
        spec.ephemeral_containers.as_deref().unwrap_or_default(),
        &spec.containers,
        init,
        &ctx,
        &path.child("ephemeralContainers"),
    ));
    errs.append(validate_pod_resources(
        spec,
        &claim_names,
        &path.child("resources"),
    ));
    errs.append(validate_host_network_deps(spec, path, opts));
    errs.append(validate_restart_policy(
        restart_policy,
        &path.child("restartPolicy"),
    ));
    let dns_policy = spec.dns_policy.as_deref().unwrap_or_default();
    errs.append(validate_enum(
        dns_policy,
        DNS_POLICIES,
        &path.child("dnsPolicy"),
    ));
    if let Some(ns) = &spec.node_selector {
        errs.append(meta::validate_labels(ns, &path.child("nodeSelector")));
    }
    errs.append(validate_pod_security_context(
        spec.security_context.as_ref(),
        spec,
        &path.child("securityContext"),
        opts.allow_namespaced_sysctls_for_host_net_and_host_ipc,
    ));
    errs.append(validate_affinity(
        spec.affinity.as_ref(),
        opts.allow_invalid_label_value_in_selector,
        &path.child("affinity"),
    ));
    errs.append(validate_dns_config(
        spec.dns_config.as_ref(),
        dns_policy,
        &path.child("dnsConfig"),
    ));
    errs.append(validate_readiness_gates(
        spec.readiness_gates.as_deref().unwrap_or_default(),
        &path.child("readinessGates"),
    ));
    errs.append(validate_scheduling_gates(
        spec.scheduling_gates.as_deref().unwrap_or_default(),
        &path.child("schedulingGates"),
    ));
    errs.append(validate_topology_spread(
        spec.topology_spread_constraints
            .as_deref()
            .unwrap_or_default(),
        &path.child("topologySpreadConstraints"),
    ));
    errs.append(validate_windows_host_process_pod(spec, path));
    errs.append(validate_host_users(spec, path));
    if let Some(sa) = spec
        .service_account_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        errs.append(invalid_each(
            &path.child("serviceAccountName"),
            sa,
            formats::is_dns1123_subdomain(sa),
        ));
    }
    if let Some(node) = spec.node_name.as_deref().filter(|s| !s.is_empty()) {
        errs.append(validate_dns1123_subdomain(&path.child("nodeName"), node));
    }
    if let Some(ads) = spec.active_deadline_seconds
        && !(1..=i64::from(i32::MAX)).contains(&ads)
    {
        errs.push(Error::invalid(
            &path.child("activeDeadlineSeconds"),
            ads,
            inclusive_range_error(1, i64::from(i32::MAX)),
        ));
    }
    if let Some(h) = spec.hostname.as_deref().filter(|s| !s.is_empty()) {
        errs.append(validate_dns1123_label(&path.child("hostname"), h));
    }
    if let Some(s) = spec.subdomain.as_deref().filter(|s| !s.is_empty()) {
        errs.append(validate_dns1123_label(&path.child("subdomain"), s));
    }
    if let Some(t) = spec.tolerations.as_deref().filter(|t| !t.is_empty()) {
        errs.append(validate_tolerations(t, &path.child("tolerations")));
    }
    for (i, ha) in spec.host_aliases.iter().flatten().enumerate() {
        let p = path.child("hostAliases").index(i);
        errs.append(validate_ip(&p.child("ip"), &ha.ip));
        for (j, h) in ha.hostnames.iter().flatten().enumerate() {
            errs.append(validate_dns1123_subdomain(
                &p.child("hostnames").index(j),
                h,
            ));
        }
    }
    if let Some(pc) = spec
        .priority_class_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        errs.append(validate_dns1123_subdomain(
            &path.child("priorityClassName"),
            pc,
        ));
    }
    if let Some(rc) = spec.runtime_class_name.as_deref() {
        errs.append(validate_dns1123_subdomain(
            &path.child("runtimeClassName"),
            rc,
        ));
    }
    if let Some(pp) = spec.preemption_policy.as_deref() {
        errs.append(validate_enum(
            pp,
            &["PreemptLowerPriority", "Never"],
            &path.child("preemptionPolicy"),
        ));
    }
    if spec.overhead.is_some() {
        errs.append(validate_overhead(spec, &path.child("overhead")));
    }
    errs.append(validate_os(spec, path));
    errs
}

/// `ValidatePodTemplateSpec` at `path` (`spec.template`): template
/// labels and annotations (reported at `<path>.labels`, as upstream does),
/// the pod-specific annotations, the pod spec, seccomp and AppArmor
/// annotations agreeing with their fields, and no ephemeral containers.
pub fn validate_pod_template_spec(
    template: &PodTemplateSpec,
    path: &Path,
    opts: PodValidationOptions,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let spec = template.spec.clone().unwrap_or_default();
    let annotations = template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.as_ref());
    if let Some(m) = &template.metadata {
        if let Some(labels) = &m.labels {
            errs.append(meta::validate_labels(labels, &path.child("labels")));
        }
        if let Some(annotations) = &m.annotations {
            errs.append(meta::validate_annotations(
                annotations,
                &path.child("annotations"),
            ));
            errs.append(validate_pod_specific_annotations(
                annotations,
                &spec,
                &path.child("annotations"),
            ));
        }
    }
    let spec_path = path.child("spec");
    errs.append(validate_pod_spec(&spec, None, &spec_path, opts));
    errs.append(validate_seccomp_annotations_and_fields(
        annotations,
        &spec,
        &spec_path,
    ));
    errs.append(validate_app_armor_annotations_and_fields_match_on_create(
        annotations,
        &spec,
        &spec_path,
    ));
    if spec
        .ephemeral_containers
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        errs.push(Error::forbidden(
            &spec_path.child("ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errs
}
