//! `ValidatePodStatusUpdate`: what a `pods/status` write may say — pod
//! conditions, the nominated node, the immutable QoS class, container
//! state transitions, resource claim statuses, pod and host IPs, container
//! users and allocated resource health.

use std::collections::BTreeSet;
use std::net::IpAddr;

use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, HostIP, Pod, PodIP, PodResourceClaim, PodResourceClaimStatus,
    PodStatus,
};

use super::pod::spec_of;
use super::pod_annotations::validate_pod_annotation_updates;
use super::strings::{is_valid_id, validate_dns1123_subdomain, validate_ip};
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::{formats, meta, render};

/// Condition types the system owns; any other must be a qualified name.
const SYSTEM_CONDITIONS: &[&str] = &["PodScheduled", "Ready", "Initialized"];

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
    // Upstream roots the condition path at `metadata` and names `Type`.
    for (i, c) in status.conditions.iter().flatten().enumerate() {
        if SYSTEM_CONDITIONS.contains(&c.type_.as_str()) {
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
    let qos = status.qos_class.as_deref().unwrap_or_default();
    if qos != old_status.qos_class.as_deref().unwrap_or_default() {
        errs.push(Error::invalid(
            &path.child("qosClass"),
            qos,
            "field is immutable",
        ));
    }
    let restart = old_spec.restart_policy.as_deref().unwrap_or_default();
    let statuses = |s: &PodStatus| s.container_statuses.clone().unwrap_or_default();
    let init_statuses = |s: &PodStatus| s.init_container_statuses.clone().unwrap_or_default();
    let ephemeral_statuses =
        |s: &PodStatus| s.ephemeral_container_statuses.clone().unwrap_or_default();
    errs.append(validate_state_transition(
        &statuses(&status),
        &statuses(&old_status),
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
        &init_statuses(&status),
        &init_statuses(&old_status),
        restart,
        &|name| sidecars.contains(&name),
        &path.child("initContainerStatuses"),
    ));
    // The kubelet never restarts ephemeral containers: as if `Never`.
    errs.append(validate_state_transition(
        &ephemeral_statuses(&status),
        &ephemeral_statuses(&old_status),
        "Never",
        &|_| false,
        &path.child("ephemeralContainerStatuses"),
    ));
    errs.append(validate_resource_claim_statuses(
        status
            .resource_claim_statuses
            .as_deref()
            .unwrap_or_default(),
        new_spec.resource_claims.as_deref().unwrap_or_default(),
        &path.child("resourceClaimStatuses"),
    ));
    errs.append(validate_pod_ips(
        status.pod_ips.as_deref().unwrap_or_default(),
        &path.child("podIPs"),
    ));
    errs.append(validate_host_ips(&status, &path.child("hostIPs")));
    let windows = new_spec.os.as_ref().is_some_and(|o| o.name == "windows");
    for (list, name) in [
        (statuses(&status), "containerStatuses"),
        (init_statuses(&status), "initContainerStatuses"),
        (ephemeral_statuses(&status), "ephemeralContainerStatuses"),
    ] {
        errs.append(validate_status_users(&list, windows, &path.child(name)));
    }
    errs.append(validate_allocated_resources_status(
        &statuses(&status),
        &new_spec.containers,
        &path.child("containerStatuses"),
    ));
    errs.append(validate_allocated_resources_status(
        &init_statuses(&status),
        new_spec.init_containers.as_deref().unwrap_or_default(),
        &path.child("initContainerStatuses"),
    ));
    for (i, s) in ephemeral_statuses(&status).iter().enumerate() {
        if s.allocated_resources_status
            .as_ref()
            .is_some_and(|a| !a.is_empty())
        {
            errs.push(Error::forbidden(
                &path
                    .child("ephemeralContainerStatuses")
                    .index(i)
                    .child("allocatedResourcesStatus"),
                "must not be specified in container status",
            ));
        }
    }
    errs
}

/// `ValidateContainerStateTransition` / `ValidateInitContainerStateTransition`:
/// unless the pod restarts always, a terminated container (one that
/// succeeded, under `OnFailure`) stays terminated; `restartable` names
/// containers exempt from the rule (sidecars).
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

/// `validatePodResourceClaimStatuses`: each status names a claim of the
/// spec, once, and a valid ResourceClaim name.
fn validate_resource_claim_statuses(
    statuses: &[PodResourceClaimStatus],
    claims: &[PodResourceClaim],
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen = BTreeSet::new();
    for (i, s) in statuses.iter().enumerate() {
        let name_path = path.index(i).child("name");
        if !claims.iter().any(|c| c.name == s.name) {
            errs.push(Error::invalid(
                &name_path,
                s.name.as_str(),
                "must match the name of an entry in `spec.resourceClaims`",
            ));
        }
        if !seen.insert(s.name.as_str()) {
            errs.push(Error::duplicate(&name_path, s.name.as_str()));
        }
        if let Some(claim) = &s.resource_claim_name {
            errs.append(validate_dns1123_subdomain(&name_path, claim));
        }
    }
    errs
}

/// `netutils.IsDualStackIPStrings`: `Err` names the first unparsable IP.
fn is_dual_stack(ips: &[&str]) -> Result<bool, String> {
    let (mut v4, mut v6) = (false, false);
    for ip in ips {
        match ip.parse::<IpAddr>() {
            Ok(IpAddr::V4(_)) => v4 = true,
            Ok(IpAddr::V6(_)) => v6 = true,
            Err(_) => return Err(format!("ip {ip} is invalid")),
        }
    }
    Ok(v4 && v6)
}

/// The dual-stack rule of pod and host IPs: at most one IP per family.
fn validate_families(ips: &[&str], rendered: String, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let dual = match is_dual_stack(ips) {
        Ok(dual) => dual,
        Err(e) => {
            errs.push(Error::internal(
                path,
                format!("failed to check for dual stack with error:{e}"),
            ));
            false
        }
    };
    if !dual || ips.len() > 2 {
        errs.push(Error::invalid(
            path,
            BadValue::Json(rendered),
            "may specify no more than one IP for each IP family",
        ));
    }
    errs
}

/// `validatePodIPs`: valid IPs; with more than one, one per family and no
/// duplicates.
fn validate_pod_ips(pod_ips: &[PodIP], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, ip) in pod_ips.iter().enumerate() {
        errs.append(validate_ip(&path.index(i), &ip.ip));
    }
    if pod_ips.len() > 1 {
        let ips: Vec<&str> = pod_ips.iter().map(|p| p.ip.as_str()).collect();
        errs.append(validate_families(&ips, render::json(&pod_ips), path));
        let mut seen = BTreeSet::new();
        for (i, ip) in pod_ips.iter().enumerate() {
            if !seen.insert(ip.ip.as_str()) {
                errs.push(Error::duplicate(
                    &path.index(i),
                    BadValue::Json(render::json(ip)),
                ));
            }
        }
    }
    errs
}

/// `validateHostIPs`: the first equals `hostIP`, all valid; with more than
/// one, no duplicates and one per family.
fn validate_host_ips(status: &PodStatus, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let host_ips: &[HostIP] = status.host_ips.as_deref().unwrap_or_default();
    let Some(first) = host_ips.first() else {
        return errs;
    };
    if status.host_ip.as_deref().unwrap_or_default() != first.ip {
        errs.push(Error::invalid(
            &path.index(0).child("ip"),
            first.ip.as_str(),
            "must be equal to `hostIP`",
        ));
    }
    for (i, ip) in host_ips.iter().enumerate() {
        errs.append(validate_ip(&path.index(i), &ip.ip));
    }
    if host_ips.len() > 1 {
        let mut seen = BTreeSet::new();
        for (i, ip) in host_ips.iter().enumerate() {
            if !seen.insert(ip.ip.as_str()) {
                errs.push(Error::duplicate(
                    &path.index(i),
                    BadValue::Json(render::json(ip)),
                ));
            }
        }
        let ips: Vec<&str> = host_ips.iter().map(|p| p.ip.as_str()).collect();
        errs.append(validate_families(&ips, render::json(&host_ips), path));
    }
    errs
}

/// `validateContainerStatusUsers`: a Linux user has valid IDs; a Windows
/// pod reports none.
fn validate_status_users(statuses: &[ContainerStatus], windows: bool, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, s) in statuses.iter().enumerate() {
        let Some(linux) = s.user.as_ref().and_then(|u| u.linux.as_ref()) else {
            continue;
        };
        let p = path.index(i).child("linux");
        if windows {
            errs.push(Error::forbidden(&p, "cannot be set for a windows pod"));
            continue;
        }
        for msg in is_valid_id(linux.uid) {
            errs.push(Error::invalid(&p.child("uid"), linux.uid, msg));
        }
        for msg in is_valid_id(linux.gid) {
            errs.push(Error::invalid(&p.child("gid"), linux.gid, msg));
        }
        for (g, gid) in linux.supplemental_groups.iter().flatten().enumerate() {
            for msg in is_valid_id(*gid) {
                errs.push(Error::invalid(
                    &p.child("supplementalGroups").index(g),
                    *gid,
                    msg,
                ));
            }
        }
    }
    errs
}

/// `validateContainerStatusAllocatedResourcesStatus`: each health entry
/// names a request (or `claim:<name>[/<request>]`) of its container, with a
/// known health and unique resource IDs.
fn validate_allocated_resources_status(
    statuses: &[ContainerStatus],
    containers: &[Container],
    path: &Path,
) -> ErrorList {
    const HEALTH: &[&str] = &["Healthy", "Unhealthy", "Unknown"];
    let mut errs = ErrorList::new();
    for (i, s) in statuses.iter().enumerate() {
        let container = containers.iter().find(|c| c.name == s.name);
        for (j, allocated) in s.allocated_resources_status.iter().flatten().enumerate() {
            let entry = path.index(i).child("allocatedResourcesStatus").index(j);
            if let Some(c) = container {
                let resources = c.resources.as_ref();
                let (found, detail) = if allocated.name.starts_with("claim:") {
                    let found = resources
                        .and_then(|r| r.claims.as_ref())
                        .into_iter()
                        .flatten()
                        .any(|claim| {
                            let request = claim.request.as_deref().unwrap_or_default();
                            let mut name = format!("claim:{}", claim.name);
                            if !request.is_empty() {
                                name.push('/');
                                name.push_str(request);
                            }
                            name == allocated.name
                        });
                    (
                        found,
                        "must match one of the container's resource claims in a format 'claim:<claimName>/<request>' or 'claim:<claimName>' if request is empty",
                    )
                } else {
                    let found = resources
                        .and_then(|r| r.requests.as_ref())
                        .is_some_and(|r| r.contains_key(&allocated.name));
                    (found, "must match one of the container's resource requests")
                };
                if !found {
                    errs.push(Error::invalid(
                        &entry.child("name"),
                        allocated.name.as_str(),
                        detail,
                    ));
                }
            }
            let mut ids = BTreeSet::new();
            for (k, r) in allocated.resources.iter().flatten().enumerate() {
                let health = r.health.as_deref().unwrap_or_default();
                if !HEALTH.contains(&health) {
                    errs.push(Error::not_supported(
                        &entry.child("resources").index(k).child("health"),
                        health,
                        HEALTH,
                    ));
                }
                if !ids.insert(r.resource_id.as_str()) {
                    errs.push(Error::duplicate(
                        &entry.child("resources").index(k).child("resourceID"),
                        r.resource_id.as_str(),
                    ));
                }
            }
        }
    }
    errs
}
