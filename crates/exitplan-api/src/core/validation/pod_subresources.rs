//! The writable pod subresources besides `status`:
//! `ValidatePodEphemeralContainersUpdate` (`pods/ephemeralcontainers`, how
//! `kubectl debug` adds a container) and `ValidatePodResize` (`pods/resize`,
//! in-place resize of container cpu and memory).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, ContainerResizePolicy, Pod, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;

use super::PodValidationOptions;
use super::diff::diff;
use super::pod::{spec_of, validate_pod_metadata_and_spec};
use super::pod_annotations::validate_pod_annotation_updates;
use super::qos::{compute_pod_qos, get_pod_qos};
use super::quantity::Quantity;
use super::security_annotations::MIRROR_POD_ANNOTATION;
use crate::equality::semantic_eq;
use crate::field::{Error, ErrorList, Path};
use crate::meta;

fn is_mirror(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(MIRROR_POD_ANNOTATION))
}

/// `ValidatePodEphemeralContainersUpdate`: the new pod is valid, and every
/// existing ephemeral container is still there, unchanged (matched by name:
/// a patch may reorder the list). Static (mirror) pods take none.
pub fn validate_pod_ephemeral_containers_update(
    new: &Pod,
    old: &Pod,
    opts: PodValidationOptions,
) -> ErrorList {
    let meta_path = Path::new("metadata");
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_pod_metadata_and_spec(new, opts));
    errs.append(validate_pod_annotation_updates(
        new,
        old,
        &meta_path.child("annotations"),
    ));
    if is_mirror(old) {
        return ErrorList(vec![Error::forbidden(
            &Path::new(""),
            "static pods do not support ephemeral containers",
        )]);
    }
    let path = Path::new("spec").child("ephemeralContainers");
    let new_spec = spec_of(new);
    let old_spec = spec_of(old);
    let new_list = new_spec.ephemeral_containers.unwrap_or_default();
    for o in old_spec.ephemeral_containers.iter().flatten() {
        match new_list.iter().find(|n| n.name == o.name) {
            None => errs.push(Error::forbidden(
                &path,
                format!(
                    "existing ephemeral containers {} may not be removed\n",
                    crate::field::go_quote(&o.name)
                ),
            )),
            Some(n) if !semantic_eq(o, n) => errs.push(Error::forbidden(
                &path,
                format!(
                    "existing ephemeral containers {} may not be changed\n{}",
                    crate::field::go_quote(&o.name),
                    diff("core.EphemeralContainer", o, n)
                ),
            )),
            Some(_) => {}
        }
    }
    errs
}

type List = BTreeMap<String, WireQuantity>;

fn is_sidecar(c: &Container) -> bool {
    c.restart_policy.as_deref() == Some("Always")
}

/// `isPodResizeRequestSupported`: the node reports container resources (the
/// first running container's status carries `resources`); a pod with no
/// running container is assumed to be on a node that can resize.
fn resize_supported(pod: &Pod) -> bool {
    for s in pod
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
    {
        if s.state
            .as_ref()
            .and_then(|st| st.running.as_ref())
            .is_some()
        {
            return s.resources.is_some();
        }
    }
    true
}

/// `resourcesRemoved`: a name of `old` is missing from `new`.
fn removed(new: Option<&List>, old: Option<&List>) -> bool {
    let (new_len, old_len) = (new.map_or(0, List::len), old.map_or(0, List::len));
    old_len > new_len
        || old
            .into_iter()
            .flatten()
            .any(|(k, _)| !new.is_some_and(|n| n.contains_key(k)))
}

/// `validateContainerResize`: requests and limits are not removed, and a
/// memory limit is neither lowered nor added unless memory resizes restart
/// the container.
fn validate_container_resize(
    new: Option<&ResourceRequirements>,
    old: Option<&ResourceRequirements>,
    policies: &[ContainerResizePolicy],
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let requests = |r: Option<&ResourceRequirements>| r.and_then(|r| r.requests.clone());
    let limits = |r: Option<&ResourceRequirements>| r.and_then(|r| r.limits.clone());
    let (new_req, old_req) = (requests(new), requests(old));
    let (new_lim, old_lim) = (limits(new), limits(old));
    if removed(new_req.as_ref(), old_req.as_ref()) {
        errs.push(Error::forbidden(
            &path.child("requests"),
            "resource requests cannot be removed",
        ));
    }
    if removed(new_lim.as_ref(), old_lim.as_ref()) {
        errs.push(Error::forbidden(
            &path.child("limits"),
            "resource limits cannot be removed",
        ));
    }
    let memory_policy = policies
        .iter()
        .find(|p| p.resource_name == "memory")
        .map(|p| p.restart_policy.as_str())
        .unwrap_or_default();
    if memory_policy == "NotRequired" || memory_policy.is_empty() {
        let memory = |l: &Option<List>| {
            l.as_ref()
                .and_then(|l| l.get("memory"))
                .map(|q| Quantity::parse(&q.0))
        };
        let key = path.child("limits").key("memory");
        match (memory(&new_lim), memory(&old_lim)) {
            (Some(Ok(n)), Some(Ok(o))) if n < o => errs.push(Error::forbidden(
                &key,
                "memory limits cannot be decreased unless resizePolicy is RestartContainer",
            )),
            (Some(_), None) => errs.push(Error::forbidden(
                &key,
                "memory limits cannot be added unless resizePolicy is RestartContainer",
            )),
            _ => {}
        }
    }
    errs
}

/// `dropCPUMemoryResourcesFromContainer`: the container with its cpu and
/// memory requests and limits put back to `old`'s (other resources as
/// `c` has them; only lists `old` has are kept).
fn without_cpu_memory_changes(c: &Container, old: &Container) -> Container {
    let munge = |new: Option<&List>, old: Option<&List>| -> Option<List> {
        let old = old?;
        let mut list = new.cloned().unwrap_or_default();
        for name in ["cpu", "memory"] {
            list.remove(name);
            if let Some(q) = old.get(name) {
                list.insert(name.to_owned(), q.clone());
            }
        }
        (!list.is_empty()).then_some(list)
    };
    let r = c.resources.as_ref();
    let o = old.resources.as_ref();
    let limits = munge(
        r.and_then(|r| r.limits.as_ref()),
        o.and_then(|o| o.limits.as_ref()),
    );
    let requests = munge(
        r.and_then(|r| r.requests.as_ref()),
        o.and_then(|o| o.requests.as_ref()),
    );
    let mut out = c.clone();
    out.resources = (limits.is_some() || requests.is_some()).then(|| ResourceRequirements {
        limits,
        requests,
        ..ResourceRequirements::default()
    });
    out
}

/// `c` as a comparable value: an empty resource list is no list and empty
/// requirements are none (Go's semantic equality: nil ≡ empty map).
fn normalized(mut c: Container) -> Container {
    if let Some(r) = &mut c.resources {
        if r.limits.as_ref().is_some_and(List::is_empty) {
            r.limits = None;
        }
        if r.requests.as_ref().is_some_and(List::is_empty) {
            r.requests = None;
        }
        if r.limits.is_none() && r.requests.is_none() && r.claims.as_ref().is_none_or(Vec::is_empty)
        {
            c.resources = None;
        }
    }
    c
}

/// `ValidatePodResize`: only cpu and memory of regular and sidecar
/// containers change, nothing is removed, the QoS class stays, and the pod
/// is resizable (no pod-level resources, not static, not Windows, on a node
/// that reports container resources).
pub fn validate_pod_resize(new: &Pod, old: &Pod, opts: PodValidationOptions) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_pod_metadata_and_spec(new, opts));
    let root = Path::new("");
    let new_spec = spec_of(new);
    let old_spec = spec_of(old);
    let pod_level = |s: &k8s_openapi::api::core::v1::PodSpec| {
        s.resources.as_ref().is_some_and(|r| {
            r.requests.as_ref().map_or(0, List::len) + r.limits.as_ref().map_or(0, List::len) > 0
        })
    };
    if pod_level(&old_spec) || pod_level(&new_spec) {
        return ErrorList(vec![Error::forbidden(
            &root,
            "pods with pod-level resources cannot be resized",
        )]);
    }
    if is_mirror(old) {
        return ErrorList(vec![Error::forbidden(
            &root,
            "static pods cannot be resized",
        )]);
    }
    if old_spec.os.as_ref().is_some_and(|o| o.name == "windows") {
        return ErrorList(vec![Error::forbidden(
            &root,
            "windows pods cannot be resized",
        )]);
    }
    let spec_path = Path::new("spec");
    if get_pod_qos(old) != compute_pod_qos(&new_spec) {
        let stored = new
            .status
            .as_ref()
            .and_then(|s| s.qos_class.as_deref())
            .unwrap_or_default();
        errs.push(Error::invalid(
            &spec_path,
            stored,
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    if !resize_supported(old) {
        errs.push(Error::forbidden(
            &spec_path,
            "Pod running on node without support for resize",
        ));
    }
    let new_init = new_spec.init_containers.clone().unwrap_or_default();
    let old_init = old_spec.init_containers.clone().unwrap_or_default();
    for (ix, (o, n)) in old_init.iter().zip(&new_init).enumerate() {
        if !is_sidecar(o) {
            continue;
        }
        errs.append(validate_container_resize(
            n.resources.as_ref(),
            o.resources.as_ref(),
            n.resize_policy.as_deref().unwrap_or_default(),
            &spec_path
                .child("initContainers")
                .index(ix)
                .child("resources"),
        ));
    }
    for (ix, (o, n)) in old_spec
        .containers
        .iter()
        .zip(&new_spec.containers)
        .enumerate()
    {
        errs.append(validate_container_resize(
            n.resources.as_ref(),
            o.resources.as_ref(),
            n.resize_policy.as_deref().unwrap_or_default(),
            &spec_path.child("containers").index(ix).child("resources"),
        ));
    }
    let mut munged = new_spec.clone();
    let same_count =
        new_spec.containers.len() == old_spec.containers.len() && new_init.len() == old_init.len();
    for (c, o) in munged.containers.iter_mut().zip(&old_spec.containers) {
        *c = without_cpu_memory_changes(c, o);
        if !semantic_eq(&normalized(c.clone()), &normalized(o.clone())) {
            errs.push(Error::forbidden(
                &spec_path,
                "only cpu and memory resources are mutable",
            ));
        }
    }
    for (c, o) in munged.init_containers.iter_mut().flatten().zip(&old_init) {
        if is_sidecar(c) {
            *c = without_cpu_memory_changes(c, o);
            if !semantic_eq(&normalized(c.clone()), &normalized(o.clone())) {
                errs.push(Error::forbidden(
                    &spec_path,
                    "only cpu and memory resources for sidecar containers are mutable",
                ));
            }
        } else if !semantic_eq(&normalized(c.clone()), &normalized(o.clone())) {
            errs.push(Error::forbidden(
                &spec_path,
                "resources for non-sidecar init containers are immutable",
            ));
        }
    }
    if !errs.is_empty() {
        return errs;
    }
    let normalize_all = |mut s: k8s_openapi::api::core::v1::PodSpec| {
        s.containers = s.containers.into_iter().map(normalized).collect();
        s.init_containers = s
            .init_containers
            .map(|l| l.into_iter().map(normalized).collect());
        s
    };
    if !same_count || !semantic_eq(&normalize_all(munged), &normalize_all(old_spec)) {
        errs.push(Error::forbidden(
            &spec_path,
            "only cpu and memory resources are mutable",
        ));
    }
    errs
}
