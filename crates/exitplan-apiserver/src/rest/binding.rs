//! `POST pods/<name>/binding`: assigns a pending pod to a node, as
//! upstream's `BindingREST` (`pkg/registry/core/pod/storage/storage.go`):
//! validates the binding (`ValidatePodBinding`: a Node target with a name;
//! upstream answers its errors 500 with no reason), sets `spec.nodeName`,
//! merges the binding's annotations and sets the `PodScheduled` condition;
//! a pod already bound, being deleted or with scheduling gates is a 409.

use axum::response::Response;
use serde_json::{Value, json};

use super::errors::{ApiError, bad_request, conflict, failure, from_write, not_found};
use super::meta::{meta_mut, meta_str};
use super::respond;
use super::state::Call;
use crate::storage::{Precondition, WriteError};

/// Conflict retries of the guaranteed update.
const ATTEMPTS: usize = 5;

fn binding_conflict(name: &str, why: &str) -> ApiError {
    conflict("", "pods/binding", name, why)
}

/// The admission webhooks of a CREATE on a subresource whose body is
/// its own kind (`pods/binding`, `pods/eviction`,
/// `serviceaccounts/token`): mutating webhooks may patch `body`, then the
/// validating ones see it.
pub async fn admit_subresource_create(
    call: &Call,
    kind: crate::webhook::Gvn,
    subresource: &str,
    body: &mut Value,
    caller: &crate::webhook::Caller,
) -> Result<(), ApiError> {
    let dry_run = call.query.dry_run().unwrap_or(false);
    let manager = super::meta::field_manager(&call.query, &call.headers);
    let attrs = crate::webhook::Attributes {
        kind,
        dry_run,
        options: crate::webhook::write_options(&manager, dry_run),
        ..crate::webhook::Attributes::of(
            call.def,
            crate::webhook::Operation::Create,
            subresource,
            call.name(),
            call.ns().unwrap_or_default(),
            &caller.user,
        )
    };
    crate::webhook::mutate(&call.state, &attrs, Some(body), caller).await?;
    crate::webhook::validate(&call.state, &attrs, Some(body), caller).await
}

/// `POST pods/<name>/binding`.
pub async fn bind(call: &Call) -> Result<Response, ApiError> {
    let dry_run = call.query.dry_run()?;
    // Upstream's create handler validates the `CreateOptions` of every POST.
    call.query.validate_write_options("CreateOptions")?;
    let mut body: Value = serde_json::from_slice(&call.body)
        .map_err(|e| bad_request(format!("couldn't get version/kind; json parse error: {e}")))?;
    let caller = crate::webhook::caller(call);
    admit_subresource_create(
        call,
        crate::webhook::Gvn::new("", "v1", "Binding"),
        "binding",
        &mut body,
        &caller,
    )
    .await?;
    let name = call.name();
    if meta_str(&body, "name").unwrap_or_default() != name {
        return Err(bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let binding: k8s_openapi::api::core::v1::Binding = serde_json::from_value(body.clone())
        .map_err(|e| {
            bad_request(format!(
                "Binding in version \"v1\" cannot be handled as a Binding: {e}"
            ))
        })?;
    // Upstream returns `ValidatePodBinding`'s aggregate as a plain error,
    // which kube-apiserver answers 500 with no reason.
    if let Some(msg) =
        exitplan_api::core::validation::pod::validate_pod_binding(&binding).aggregate()
    {
        return Err(failure(500, "", msg, None));
    }
    let target = binding.target.name.clone().unwrap_or_default();
    let want_uid = meta_str(&body, "uid")
        .filter(|u| !u.is_empty())
        .map(str::to_owned);
    let want_rv = meta_str(&body, "resourceVersion")
        .filter(|u| !u.is_empty())
        .map(str::to_owned);
    let annotations = body
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let key = call.def.key(call.ns(), name);
    for _ in 0..ATTEMPTS {
        let current = call
            .state
            .store
            .current(&key)?
            .ok_or_else(|| not_found("", "pods", name))?;
        let mut pod = current.value()?;
        if pod.pointer("/metadata/deletionTimestamp").is_some() {
            return Err(binding_conflict(
                name,
                &format!("pod {name} is being deleted, cannot be assigned to a host"),
            ));
        }
        let node = pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !node.is_empty() {
            return Err(binding_conflict(
                name,
                &format!(
                    "pod {name} is already assigned to node {}",
                    exitplan_api::field::go_quote(node)
                ),
            ));
        }
        // Reject binding to a scheduling un-ready pod.
        if pod
            .pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_some_and(|g| !g.is_empty())
        {
            return Err(binding_conflict(
                name,
                &format!("pod {name} has non-empty .spec.schedulingGates"),
            ));
        }
        let uid = meta_str(&pod, "uid").unwrap_or_default();
        if let Some(want) = want_uid.as_deref()
            && want != uid
        {
            return Err(binding_conflict(
                name,
                &format!(
                    "Precondition failed: UID in precondition: {want}, UID in object meta: {uid}"
                ),
            ));
        }
        let rv = current.revision.to_string();
        if let Some(want) = want_rv.as_deref()
            && want != rv
        {
            return Err(binding_conflict(
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {rv}"
                ),
            ));
        }
        assign(&mut pod, &target, &annotations, call.state.clock.now());
        if dry_run {
            return Ok(super::fieldvalidation::warn(
                respond::success(201, None),
                &caller.warnings(),
            ));
        }
        let attrs = call.def.attrs(&pod);
        match call
            .state
            .store
            .put(
                key.clone(),
                pod,
                attrs,
                Precondition::Revision(current.revision),
            )
            .await
        {
            Ok(stored) => {
                tracing::info!(namespace = ?call.namespace, pod = name, node = %target, rv = stored.revision, "bound");
                return Ok(super::fieldvalidation::warn(
                    respond::success(201, None),
                    &caller.warnings(),
                ));
            }
            Err(WriteError::Conflict { .. }) => continue,
            Err(e) => return Err(from_write(e)),
        }
    }
    Err(super::errors::conflict_modified("", "pods", name))
}

/// Sets the node, the annotations and `PodScheduled=True`.
fn assign(
    pod: &mut Value,
    node: &str,
    annotations: &serde_json::Map<String, Value>,
    now: jiff::Timestamp,
) {
    if let Some(meta) = meta_mut(pod)
        && !annotations.is_empty()
    {
        let entry = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(map) = entry.as_object_mut() {
            for (k, v) in annotations {
                map.insert(k.clone(), v.clone());
            }
        }
    }
    let Some(obj) = pod.as_object_mut() else {
        return;
    };
    if let Some(spec) = obj
        .entry("spec")
        .or_insert_with(|| Value::Object(Default::default()))
        .as_object_mut()
    {
        spec.insert("nodeName".into(), node.into());
    }
    let Some(status) = obj
        .entry("status")
        .or_insert_with(|| Value::Object(Default::default()))
        .as_object_mut()
    else {
        return;
    };
    let conditions = status
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    let stamp = exitplan_api::time::format_rfc3339(exitplan_api::time::truncate_to_seconds(now));
    match list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("PodScheduled"))
    {
        Some(c) if c.get("status").and_then(Value::as_str) == Some("True") => {}
        Some(c) => {
            if let Some(m) = c.as_object_mut() {
                m.insert("status".into(), "True".into());
                m.insert("lastTransitionTime".into(), stamp.into());
                m.remove("reason");
                m.remove("message");
            }
        }
        None => list.push(json!({
            "type": "PodScheduled",
            "status": "True",
            "lastProbeTime": null,
            "lastTransitionTime": stamp,
        })),
    }
}
