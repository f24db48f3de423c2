//! Whole-Pod rules: `ValidatePodCreate`, `ValidatePodUpdate` (with its spec
//! diff), `ValidatePodStatusUpdate` and `ValidatePodBinding`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Binding, Container, ContainerStatus, HostIP, Pod, PodIP, PodSpec, PodStatus,
};

use super::PodValidationOptions;
use super::container::validate_container_only_for_pod;
use super::diff::diff;
use super::pod_spec::validate_pod_spec;
use super::scheduling::validate_only_added_tolerations;
use super::strings::{inclusive_range_error, validate_dns1123_subdomain, validate_ip};
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::NameRule;
use crate::{formats, meta, render};

/// Fields of a pod spec an update may change (`updatablePodSpecFields`).
pub const UPDATABLE_POD_SPEC_FIELDS: &[&str] = &[
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

/// The start of the detail of a forbidden pod spec change; the spec diff
/// follows after a newline.
pub fn pod_update_forbidden_prefix() -> String {
    format!(
        "pod updates may not change fields other than {}",
        UPDATABLE_POD_SPEC_FIELDS.join(",")
    )
}

/// The mirror pod annotation (`kubernetes.io/config.mirror`).
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// The pod deletion cost annotation.
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
/// The deprecated per-container AppArmor annotation prefix.
pub const APPARMOR_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

fn spec_of(pod: &Pod) -> PodSpec {
    pod.spec.clone().unwrap_or_default()
}

fn has_container(spec: &PodSpec, name: &str) -> bool {
    spec.containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .any(|c| c.name == name)
        || spec
            .ephemeral_containers
            .iter()
            .flatten()
            .any(|c| c.name == name)
}

/// `ValidatePodSpecificAnnotations`.
fn validate_pod_annotations(
    annotations: &BTreeMap<String, String>,
    spec: &PodSpec,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(v) = annotations.get(MIRROR_POD_ANNOTATION)
        && spec.node_name.as_deref().unwrap_or_default().is_empty()
    {
        errs.push(Error::invalid(
            &path.key(MIRROR_POD_ANNOTATION),
            v.as_str(),
            "must set spec.nodeName if mirror pod annotation is set",
        ));
    }
    if let Some(v) = annotations.get(POD_DELETION_COST)
        && v.parse::<i32>().is_err()
    {
        errs.push(Error::invalid(
            &path.key(POD_DELETION_COST),
            v.as_str(),
            "must be a 32bit integer",
        ));
    }
    for (k, v) in annotations {
        let Some(container) = k.strip_prefix(APPARMOR_PREFIX) else {
            continue;
        };
        if !has_container(spec, container) {
            errs.push(Error::invalid(
                &path.key(k),
                container,
                "container not found",
            ));
        }
        if !(v.is_empty()
            || v == "runtime/default"
            || v == "unconfined"
            || v.starts_with("localhost/"))
        {
            errs.push(Error::invalid(
                &path.key(k),
                v.as_str(),
                format!(
                    "invalid AppArmor profile name: {}",
                    crate::field::go_quote(v)
                ),
            ));
        }
    }
    errs
}

/// `ValidatePodSpecificAnnotationUpdates`: the mirror and AppArmor
/// annotations cannot be added, changed or removed.
fn validate_pod_annotation_updates(new: &Pod, old: &Pod, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let empty = BTreeMap::new();
    let new_a = new.metadata.annotations.as_ref().unwrap_or(&empty);
    let old_a = old.metadata.annotations.as_ref().unwrap_or(&empty);
    for (k, v) in old_a {
        if new_a.get(k) == Some(v) {
            continue;
        }
        if k.starts_with(APPARMOR_PREFIX) {
            errs.push(Error::forbidden(
                &path.key(k),
                "may not remove or update AppArmor annotations",
            ));
        }
        if k == MIRROR_POD_ANNOTATION {
            errs.push(Error::forbidden(
                &path.key(k),
                "may not remove or update mirror pod annotation",
            ));
        }
    }
    for k in new_a.keys() {
        if old_a.contains_key(k) {
            continue;
        }
        if k.starts_with(APPARMOR_PREFIX) {
            errs.push(Error::forbidden(
                &path.key(k),
                "may not add AppArmor annotations",
            ));
        }
        if k == MIRROR_POD_ANNOTATION {
            errs.push(Error::forbidden(
                &path.key(k),
                "may not add mirror pod annotation",
            ));
        }
    }
    errs.append(validate_pod_annotations(new_a, &spec_of(new), path));
    errs
}

/// `validatePodMetadataAndSpec`: metadata, pod annotations, the spec, and
/// the pod-only checks (projected tokens need a service account, no
/// whitespace around images).
fn validate_pod_metadata_and_spec(pod: &Pod, opts: PodValidationOptions) -> ErrorList {
    let meta_path = Path::new("metadata");
    let spec_path = Path::new("spec");
    let spec = spec_of(pod);
    let mut errs = meta::validate_object_meta(&pod.metadata, true, NameRule::Subdomain);
    if let Some(a) = &pod.metadata.annotations {
        errs.append(validate_pod_annotations(
            a,
            &spec,
            &meta_path.child("annotations"),
        ));
    }
    let opts = PodValidationOptions {
        resource_is_pod: true,
        ..opts
    };
    errs.append(validate_pod_spec(
        &spec,
        Some(&pod.metadata),
        &spec_path,
        opts,
    ));
    if spec
        .service_account_name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        for (vi, v) in spec.volumes.iter().flatten().enumerate() {
            let Some(p) = &v.projected else { continue };
            for (si, s) in p.sources.iter().flatten().enumerate() {
                if s.service_account_token.is_some() {
                    errs.push(Error::forbidden(
                        &spec_path
                            .child("volumes")
                            .index(vi)
                            .child("projected")
                            .child("sources")
                            .index(si)
                            .child("serviceAccountToken"),
                        "must not be specified when serviceAccountName is not set",
                    ));
                }
            }
        }
    }
    for (list, name) in [
        (&spec.containers, "containers"),
        (
            spec.init_containers.as_ref().unwrap_or(&Vec::new()),
            "initContainers",
        ),
    ] {
        for (i, c) in list.iter().enumerate() {
            errs.append(validate_container_only_for_pod(
                c,
                &spec_path.child(name).index(i),
            ));
        }
    }
    errs
}

/// `ValidatePodCreate`.
pub fn validate_pod_create(pod: &Pod, opts: PodValidationOptions) -> ErrorList {
    let mut errs = validate_pod_metadata_and_spec(pod, opts);
    let spec = spec_of(pod);
    let path = Path::new("spec");
    if spec
        .ephemeral_containers
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        errs.push(Error::forbidden(
            &path.child("ephemeralContainers"),
            "cannot be set on create",
        ));
    }
    if !spec.node_name.as_deref().unwrap_or_default().is_empty()
        && spec
            .scheduling_gates
            .as_ref()
            .is_some_and(|g| !g.is_empty())
    {
        errs.push(Error::forbidden(
            &path.child("nodeName"),
            "cannot be set until all schedulingGates have been cleared",
        ));
    }
    errs
}

/// `ValidateContainerUpdates`: same number of containers, each with an image.
fn validate_container_updates(
    new: &[Container],
    old: &[Container],
    path: &Path,
) -> (ErrorList, bool) {
    if new.len() != old.len() {
        return (
            ErrorList(vec![Error::forbidden(
                path,
                "pod updates may not add or remove containers",
            )]),
            true,
        );
    }
    let mut errs = ErrorList::new();
    for (i, c) in new.iter().enumerate() {
        let image = c.image.as_deref().unwrap_or_default();
        if image.is_empty() {
            errs.push(Error::required(&path.index(i).child("image"), ""));
        }
        if image.trim() != image {
            errs.push(Error::invalid(
                &path.index(i).child("image"),
                image,
                "must not have leading or trailing whitespace",
            ));
        }
    }
    (errs, false)
}

/// `ValidatePodUpdate`: metadata and spec valid, and only the updatable
/// fields changed (else `Forbidden spec` with the diff).
pub fn validate_pod_update(new: &Pod, old: &Pod, opts: PodValidationOptions) -> ErrorList {
    let meta_path = Path::new("metadata");
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_pod_metadata_and_spec(new, opts));
    errs.append(validate_pod_annotation_updates(
        new,
        old,
        &meta_path.child("annotations"),
    ));
    let spec_path = Path::new("spec");
    let new_spec = spec_of(new);
    let old_spec = spec_of(old);
    let (e, stop) = validate_container_updates(
        &new_spec.containers,
        &old_spec.containers,
        &spec_path.child("containers"),
    );
    errs.append(e);
    if stop {
        return errs;
    }
    let empty = Vec::new();
    let (e, stop) = validate_container_updates(
        new_spec.init_containers.as_ref().unwrap_or(&empty),
        old_spec.init_containers.as_ref().unwrap_or(&empty),
        &spec_path.child("initContainers"),
    );
    errs.append(e);
    if stop {
        return errs;
    }
    let ads_path = spec_path.child("activeDeadlineSeconds");
    match (
        new_spec.active_deadline_seconds,
        old_spec.active_deadline_seconds,
    ) {
        (Some(n), _) if !(0..=i64::from(i32::MAX)).contains(&n) => {
            errs.push(Error::invalid(
                &ads_path,
                n,
                inclusive_range_error(0, i64::from(i32::MAX)),
            ));
            return errs;
        }
        (Some(n), Some(o)) if o < n => {
            errs.push(Error::invalid(
                &ads_path,
                n,
                "must be less than or equal to previous value",
            ));
            return errs;
        }
        (None, Some(_)) => errs.push(Error::invalid(
            &ads_path,
            BadValue::Null,
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }
    errs.append(validate_only_added_tolerations(
        new_spec.tolerations.as_deref().unwrap_or_default(),
        old_spec.tolerations.as_deref().unwrap_or_default(),
        &spec_path.child("tolerations"),
    ));
    errs.append(validate_only_deleted_scheduling_gates(
        &new_spec,
        &old_spec,
        &spec_path.child("schedulingGates"),
    ));
    if crate::equality::semantic_eq(&new_spec, &old_spec) {
        return errs;
    }
    let mut munged = new_spec.clone();
    for (c, o) in munged.containers.iter_mut().zip(&old_spec.containers) {
        c.image.clone_from(&o.image);
    }
    for (c, o) in munged
        .init_containers
        .iter_mut()
        .flatten()
        .zip(old_spec.init_containers.iter().flatten())
    {
        c.image.clone_from(&o.image);
    }
    munged.active_deadline_seconds = old_spec.active_deadline_seconds;
    munged
        .scheduling_gates
        .clone_from(&old_spec.scheduling_gates);
    munged.tolerations.clone_from(&old_spec.tolerations);
    if old_spec
        .termination_grace_period_seconds
        .is_some_and(|g| g < 0)
        && munged.termination_grace_period_seconds == Some(1)
    {
        munged.termination_grace_period_seconds = old_spec.termination_grace_period_seconds;
    }
    if old_spec
        .scheduling_gates
        .as_ref()
        .is_some_and(|g| !g.is_empty())
    {
        // Gated pods may add to nodeSelector and node affinity (checked
        // loosely: additions only).
        if munged.node_selector != old_spec.node_selector {
            errs.append(validate_node_selector_mutation(
                munged.node_selector.as_ref(),
                old_spec.node_selector.as_ref(),
                &spec_path.child("nodeSelector"),
            ));
            munged.node_selector.clone_from(&old_spec.node_selector);
        }
    }
    if !crate::equality::semantic_eq(&munged, &old_spec) {
        let detail = format!(
            "{}\n{}",
            pod_update_forbidden_prefix(),
            diff("core.PodSpec", &old_spec, &munged)
        );
        errs.push(Error::forbidden(&spec_path, detail));
    }
    errs
}

fn validate_node_selector_mutation(
    new: Option<&BTreeMap<String, String>>,
    old: Option<&BTreeMap<String, String>>,
    path: &Path,
) -> ErrorList {
    let empty = BTreeMap::new();
    let new = new.unwrap_or(&empty);
    for (k, v) in old.unwrap_or(&empty) {
        if new.get(k) != Some(v) {
            return ErrorList(vec![Error::invalid(
                path,
                BadValue::Json(render::string_map(new)),
                "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
            )]);
        }
    }
    ErrorList::new()
}

fn validate_only_deleted_scheduling_gates(new: &PodSpec, old: &PodSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let old_names: Vec<&str> = old
        .scheduling_gates
        .iter()
        .flatten()
        .map(|g| g.name.as_str())
        .collect();
    let mut added: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, g) in new.scheduling_gates.iter().flatten().enumerate() {
        added.insert(g.name.as_str(), i);
    }
    for n in old_names {
        added.remove(n);
    }
    for (gate, i) in added {
        errs.push(Error::forbidden(
            &path.index(i).child("name"),
            format!("only deletion is allowed, but found new scheduling gate '{gate}'"),
        ));
    }
    errs
}

/// `ValidateContainerStateTransition`: with `restartPolicy` other than
/// Always, a terminated container (successfully, under OnFailure) stays
/// terminated.
fn validate_state_transition(
    new: &[ContainerStatus],
    old: &[ContainerStatus],
    restart_policy: &str,
    restartable: &dyn Fn(&str) -> bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if restart_policy == "Always" {
        return errs;
    }
    for (i, o) in old.iter().enumerate() {
        let Some(t) = o.state.as_ref().and_then(|s| s.terminated.as_ref()) else {
            continue;
        };
        if t.exit_code != 0 && restart_policy == "OnFailure" {
            continue;
        }
        if restartable(&o.name) {
            continue;
        }
        for n in new {
            if n.name == o.name
                && n.state
                    .as_ref()
                    .and_then(|s| s.terminated.as_ref())
                    .is_none()
            {
                errs.push(Error::forbidden(
                    &path.index(i).child("state"),
                    "may not be transitioned to non-terminated state",
                ));
            }
        }
    }
    errs
}

fn validate_ips<'a>(
    ips: impl Iterator<Item = &'a str> + Clone,
    rendered: String,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let list: Vec<&str> = ips.collect();
    for (i, ip) in list.iter().enumerate() {
        errs.append(validate_ip(&path.index(i), ip));
    }
    if list.len() > 1 {
        let parsed: Vec<Option<std::net::IpAddr>> = list.iter().map(|s| s.parse().ok()).collect();
        let v4 = parsed
            .iter()
            .filter(|p| p.is_some_and(|a| a.is_ipv4()))
            .count();
        let v6 = parsed
            .iter()
            .filter(|p| p.is_some_and(|a| a.is_ipv6()))
            .count();
        let dual = v4 >= 1 && v6 >= 1;
        if parsed.iter().all(Option::is_some) && (!dual || list.len() > 2) {
            errs.push(Error::invalid(
                path,
                BadValue::Json(rendered),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    errs
}

fn render_ips(ips: &[PodIP]) -> String {
    render::json(&ips)
}

fn render_host_ips(ips: &[HostIP]) -> String {
    render::json(&ips)
}

/// `ValidatePodStatusUpdate`.
pub fn validate_pod_status_update(new: &Pod, old: &Pod) -> ErrorList {
    let meta_path = Path::new("metadata");
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_pod_annotation_updates(
        new,
        old,
        &meta_path.child("annotations"),
    ));
    let status = new.status.clone().unwrap_or_default();
    let old_status = old.status.clone().unwrap_or_default();
    const SYSTEM: &[&str] = &["PodScheduled", "Ready", "Initialized"];
    for (i, c) in status.conditions.iter().flatten().enumerate() {
        if SYSTEM.contains(&c.type_.as_str()) {
            continue;
        }
        errs.append(formats::validate_qualified_name(
            &meta_path.child("conditions").index(i).child("Type"),
            &c.type_,
        ));
    }
    let path = Path::new("status");
    let new_spec = spec_of(new);
    let old_spec = spec_of(old);
    if new_spec.node_name != old_spec.node_name {
        errs.push(Error::forbidden(
            &path.child("nodeName"),
            "may not be changed directly",
        ));
    }
    let nominated = status.nominated_node_name.as_deref().unwrap_or_default();
    if nominated
        != old_status
            .nominated_node_name
            .as_deref()
            .unwrap_or_default()
        && !nominated.is_empty()
    {
        errs.append(validate_dns1123_subdomain(
            &path.child("nominatedNodeName"),
            nominated,
        ));
    }
    if status.qos_class != old_status.qos_class {
        errs.push(Error::invalid(
            &path.child("qosClass"),
            status.qos_class.as_deref().unwrap_or_default(),
            "field is immutable",
        ));
    }
    let restart = old_spec.restart_policy.as_deref().unwrap_or_default();
    errs.append(validate_state_transition(
        status.container_statuses.as_deref().unwrap_or_default(),
        old_status.container_statuses.as_deref().unwrap_or_default(),
        restart,
        &|_| false,
        &path.child("containerStatuses"),
    ));
    let sidecars: Vec<&str> = old_spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"))
        .map(|c| c.name.as_str())
        .collect();
    errs.append(validate_state_transition(
        status
            .init_container_statuses
            .as_deref()
            .unwrap_or_default(),
        old_status
            .init_container_statuses
            .as_deref()
            .unwrap_or_default(),
        restart,
        &|name| sidecars.contains(&name),
        &path.child("initContainerStatuses"),
    ));
    errs.append(validate_state_transition(
        status
            .ephemeral_container_statuses
            .as_deref()
            .unwrap_or_default(),
        old_status
            .ephemeral_container_statuses
            .as_deref()
            .unwrap_or_default(),
        "Never",
        &|_| false,
        &path.child("ephemeralContainerStatuses"),
    ));
    errs.append(validate_status_ips(&status, &path));
    errs
}

fn validate_status_ips(status: &PodStatus, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let pod_ips = status.pod_ips.as_deref().unwrap_or_default();
    let pp = path.child("podIPs");
    errs.append(validate_ips(
        pod_ips.iter().map(|p| p.ip.as_str()),
        render_ips(pod_ips),
        &pp,
    ));
    let mut seen = Vec::new();
    for (i, ip) in pod_ips.iter().enumerate() {
        if seen.contains(&ip.ip.as_str()) {
            errs.push(Error::duplicate(
                &pp.index(i),
                BadValue::Json(render::json(ip)),
            ));
        }
        seen.push(ip.ip.as_str());
    }
    let host_ips = status.host_ips.as_deref().unwrap_or_default();
    if let Some(first) = host_ips.first() {
        let hp = path.child("hostIPs");
        if status.host_ip.as_deref().unwrap_or_default() != first.ip {
            errs.push(Error::invalid(
                &hp.index(0).child("ip"),
                first.ip.as_str(),
                "must be equal to `hostIP`",
            ));
        }
        let mut seen = Vec::new();
        for (i, ip) in host_ips.iter().enumerate() {
            if seen.contains(&ip.ip.as_str()) {
                errs.push(Error::duplicate(
                    &hp.index(i),
                    BadValue::Json(render::json(ip)),
                ));
            }
            seen.push(ip.ip.as_str());
        }
        errs.append(validate_ips(
            host_ips.iter().map(|p| p.ip.as_str()),
            render_host_ips(host_ips),
            &hp,
        ));
    }
    errs
}

/// `ValidatePodBinding`: the target is a Node (kind empty or `Node`) with a name.
pub fn validate_pod_binding(binding: &Binding) -> ErrorList {
    let mut errs = ErrorList::new();
    let target = Path::new("target");
    let kind = binding.target.kind.as_deref().unwrap_or_default();
    if !kind.is_empty() && kind != "Node" {
        errs.push(Error::not_supported(
            &target.child("kind"),
            kind,
            &["Node", "<empty>"],
        ));
    }
    if binding
        .target
        .name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        errs.push(Error::required(&target.child("name"), ""));
    }
    errs
}

/// `qos.ComputePodQOS`: Guaranteed when every container limits cpu and
/// memory with requests equal to limits, BestEffort when nothing requests
/// or limits cpu or memory, else Burstable.
pub fn compute_qos(spec: &PodSpec) -> &'static str {
    use super::quantity::Quantity;
    let parse =
        |m: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
         k: &str| {
            m.and_then(|m| m.get(k))
                .and_then(|q| Quantity::parse(&q.0).ok())
                .filter(|q| !q.is_zero())
        };
    let containers: Vec<&Container> = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .collect();
    let mut any = false;
    let mut guaranteed = true;
    for c in containers {
        let r = c.resources.as_ref();
        let req = r.and_then(|r| r.requests.as_ref());
        let lim = r.and_then(|r| r.limits.as_ref());
        for k in ["cpu", "memory"] {
            let (rq, lm) = (parse(req, k), parse(lim, k));
            if rq.is_some() || lm.is_some() {
                any = true;
            }
            match (rq, lm) {
                (Some(a), Some(b)) if a == b => {}
                (None, Some(_)) => {}
                _ => guaranteed = false,
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}
