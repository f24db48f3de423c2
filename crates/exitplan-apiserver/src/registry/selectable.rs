//! Field selectors per kind: the labels upstream's field label conversions
//! accept (`pkg/apis/*/v1/conversion.go`), the JSON paths stored as
//! attributes, and the attributes that are not a plain path
//! (`pkg/registry/*/strategy.go` `*ToSelectableFields`).

use serde_json::Value;

use crate::storage::Attrs;

/// Pod labels (`spec.host` is the old name of `spec.nodeName`).
pub const POD_LABELS: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("spec.nodeName", "spec.nodeName"),
    ("spec.restartPolicy", "spec.restartPolicy"),
    ("spec.schedulerName", "spec.schedulerName"),
    ("spec.serviceAccountName", "spec.serviceAccountName"),
    ("spec.hostNetwork", "spec.hostNetwork"),
    ("status.phase", "status.phase"),
    ("status.podIP", "status.podIP"),
    ("status.podIPs", "status.podIPs"),
    ("status.nominatedNodeName", "status.nominatedNodeName"),
    ("spec.host", "spec.nodeName"),
];

/// Pod attribute paths.
pub const POD_FIELDS: &[&str] = &[
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
];

/// Node labels (no `metadata.namespace`).
pub const NODE_LABELS: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("spec.unschedulable", "spec.unschedulable"),
];

/// Namespace labels (no `metadata.namespace`).
pub const NAMESPACE_LABELS: &[(&str, &str)] = &[
    ("status.phase", "status.phase"),
    ("metadata.name", "metadata.name"),
];

/// core/v1 Event labels.
pub const CORE_EVENT_LABELS: &[(&str, &str)] = &[
    ("involvedObject.kind", "involvedObject.kind"),
    ("involvedObject.namespace", "involvedObject.namespace"),
    ("involvedObject.name", "involvedObject.name"),
    ("involvedObject.uid", "involvedObject.uid"),
    ("involvedObject.apiVersion", "involvedObject.apiVersion"),
    (
        "involvedObject.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("involvedObject.fieldPath", "involvedObject.fieldPath"),
    ("reason", "reason"),
    ("reportingComponent", "reportingComponent"),
    ("source", "source"),
    ("type", "type"),
    ("metadata.namespace", "metadata.namespace"),
    ("metadata.name", "metadata.name"),
];

/// events.k8s.io/v1 Event labels, mapped onto the stored core Event's attributes.
pub const EVENTS_EVENT_LABELS: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("reason", "reason"),
    ("type", "type"),
    ("reportingController", "reportingComponent"),
    ("regarding.kind", "involvedObject.kind"),
    ("regarding.namespace", "involvedObject.namespace"),
    ("regarding.name", "involvedObject.name"),
    ("regarding.uid", "involvedObject.uid"),
    ("regarding.apiVersion", "involvedObject.apiVersion"),
    (
        "regarding.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("regarding.fieldPath", "involvedObject.fieldPath"),
];

/// Stored (core/v1) Event attribute paths; `source` comes from [`event_attrs`].
pub const EVENT_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "type",
];

/// Job labels.
pub const JOB_LABELS: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("status.successful", "status.successful"),
];

/// Secret labels (`SecretToSelectableFields`).
pub const SECRET_LABELS: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("type", "type"),
];

/// Service labels.
pub const SERVICE_LABELS: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("spec.clusterIP", "spec.clusterIP"),
    ("spec.type", "spec.type"),
];

/// ReplicaSet and ReplicationController labels.
pub const REPLICAS_LABELS: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("status.replicas", "status.replicas"),
];

/// `status.replicas` of ReplicaSets and ReplicationControllers (`0` when
/// unset, as the Go int32 prints).
pub fn replicas_attrs(object: &Value, attrs: &mut Attrs) {
    let n = object
        .pointer("/status/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    attrs.fields.insert("status.replicas".into(), n.to_string());
}

fn str_at<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn bool_at(object: &Value, pointer: &str) -> String {
    object
        .pointer(pointer)
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .to_string()
}

/// Pod: `spec.hostNetwork` is `"false"` when unset (`strconv.FormatBool`).
pub fn pod_attrs(object: &Value, attrs: &mut Attrs) {
    attrs.fields.insert(
        "spec.hostNetwork".into(),
        bool_at(object, "/spec/hostNetwork"),
    );
}

/// Node: `spec.unschedulable` is `"false"` when unset.
pub fn node_attrs(object: &Value, attrs: &mut Attrs) {
    attrs.fields.insert(
        "spec.unschedulable".into(),
        bool_at(object, "/spec/unschedulable"),
    );
}

/// Event: `source` is `source.component`, else `reportingComponent`.
pub fn event_attrs(object: &Value, attrs: &mut Attrs) {
    let source = match str_at(object, "/source/component") {
        "" => str_at(object, "/reportingComponent"),
        s => s,
    };
    attrs.fields.insert("source".into(), source.to_owned());
}

/// Job: `status.successful` is the number of succeeded pods (`"0"` when unset).
pub fn job_attrs(object: &Value, attrs: &mut Attrs) {
    let n = object
        .pointer("/status/succeeded")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    attrs
        .fields
        .insert("status.successful".into(), n.to_string());
}

#[cfg(test)]
mod tests {
    use crate::registry::find;

    #[test]
    fn derived_attributes() {
        let job = find("batch", "v1", "jobs").expect("jobs");
        let a = job.attrs(&serde_json::json!({"metadata": {"name": "j", "namespace": "d"}, "status": {"succeeded": 3}}));
        assert_eq!(
            a.fields.get("status.successful").map(String::as_str),
            Some("3")
        );
        let ev = find("", "v1", "events").expect("events");
        let a = ev.attrs(
            &serde_json::json!({"metadata": {"name": "e"}, "reportingComponent": "kubelet"}),
        );
        assert_eq!(a.fields.get("source").map(String::as_str), Some("kubelet"));
        let node = find("", "v1", "nodes").expect("nodes");
        let a = node.attrs(&serde_json::json!({"metadata": {"name": "n"}}));
        assert_eq!(
            a.fields.get("spec.unschedulable").map(String::as_str),
            Some("false")
        );
    }
}
