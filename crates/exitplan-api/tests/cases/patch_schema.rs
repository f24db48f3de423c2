//! The merge behaviour `exitplan_api::patch` derives for each kind: the
//! built-in kinds from the OpenAPI definitions (plus upstream's Go tags the
//! definitions lose), custom resources from a CRD's `openAPIV3Schema`, and
//! a kind without any schema. Each row pins one field's strategic merge
//! patch strategy and server-side apply type.

use exitplan_api::patch::{
    Schema, SmpList, SsaList, Target, TypeRef, TypeSchema, merge_patch, server_side_apply,
    server_side_apply_subresource, strategic_merge_patch, unsupported_media_type_message,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::{Value, json};

use crate::support::now;

/// One field's behaviour, printed: `list smp=<replace|merge|key K>
/// ssa=<atomic|set|map K1,K2=default>[ always]`, `map`, `atomic map`,
/// `atomic struct` or `granular` (a struct or an untyped value).
fn describe(s: &Schema) -> String {
    if let Some(l) = s.list() {
        let smp = match &l.smp {
            SmpList::Replace => "replace".to_owned(),
            SmpList::MergePrimitives => "merge".to_owned(),
            SmpList::MergeKey(k) => format!("key {k}"),
        };
        let ssa = match &l.ssa {
            SsaList::Atomic => "atomic".to_owned(),
            SsaList::Set => "set".to_owned(),
            SsaList::Map(keys) => {
                let keys: Vec<String> = keys
                    .iter()
                    .map(|(k, d)| match d.as_ref().and_then(|d| d.as_str()) {
                        Some(d) => format!("{k}={d}"),
                        None => k.to_string(),
                    })
                    .collect();
                format!("map {}", keys.join(","))
            }
        };
        let always = if l.always_present { " always" } else { "" };
        return format!("list smp={smp} ssa={ssa}{always}");
    }
    match (s.is_map(), s.is_atomic(), s.has_named_fields()) {
        (true, ..) => "map",
        (false, true, true) => "atomic struct",
        (false, true, false) => "atomic map",
        _ => "granular",
    }
    .to_owned()
}

/// The schema at `path` (`spec.containers[].env`: `[]` steps into items).
fn at<'s>(root: &'s Schema, path: &str) -> &'s Schema {
    path.split('.').fold(root, |s, step| {
        let (name, items) = match step.strip_suffix("[]") {
            Some(n) => (n, true),
            None => (step, false),
        };
        let field = s.field(name);
        if items {
            &field
                .list()
                .unwrap_or_else(|| panic!("{path}: {name} is no list"))
                .elem
        } else {
            field
        }
    })
}

fn builtin(group: &'static str, kind: &'static str) -> &'static TypeSchema {
    Target::builtin(TypeRef { group, kind })
        .schema
        .unwrap_or_else(|| panic!("{group}/{kind} has no schema"))
}

/// `(group, kind, path, behaviour)`.
type Row = (&'static str, &'static str, &'static str, &'static str);

fn check(rows: &[Row]) {
    let mut failures = Vec::new();
    for (group, kind, path, want) in rows {
        let got = describe(at(&builtin(group, kind).root, path));
        if got != *want {
            failures.push(format!("{group}/{kind} {path}: got {got:?}, want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

const CONTAINER_PORTS: &str = "list smp=key containerPort ssa=map containerPort,protocol=TCP";

/// Every field the former hand-written table listed keeps its behaviour,
/// except two it had wrong: upstream tags `JobStatus.conditions` and
/// `PodStatus.hostIPs` `+listType=atomic` beside their merge strategy, so
/// apply owns them whole (strategic merge patch still merges by key).
#[test]
fn previously_hand_listed_fields_keep_their_behaviour() {
    let tagged = "list smp=key type ssa=map type";
    check(&[
        // ObjectMeta
        ("", "Pod", "metadata.labels", "map"),
        ("", "Pod", "metadata.annotations", "map"),
        ("", "Pod", "metadata.finalizers", "list smp=merge ssa=set"),
        (
            "",
            "Pod",
            "metadata.ownerReferences",
            "list smp=key uid ssa=map uid",
        ),
        ("", "Pod", "metadata.ownerReferences[]", "atomic struct"),
        // PodSpec
        ("", "Pod", "spec.volumes", "list smp=key name ssa=map name"),
        (
            "",
            "Pod",
            "spec.initContainers",
            "list smp=key name ssa=map name",
        ),
        (
            "",
            "Pod",
            "spec.containers",
            "list smp=key name ssa=map name always",
        ),
        (
            "",
            "Pod",
            "spec.ephemeralContainers",
            "list smp=key name ssa=map name",
        ),
        (
            "",
            "Pod",
            "spec.imagePullSecrets",
            "list smp=key name ssa=map name",
        ),
        ("", "Pod", "spec.imagePullSecrets[]", "atomic struct"),
        ("", "Pod", "spec.hostAliases", "list smp=key ip ssa=map ip"),
        ("", "Pod", "spec.nodeSelector", "atomic map"),
        (
            "",
            "Pod",
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
            "atomic struct",
        ),
        (
            "",
            "Pod",
            "spec.topologySpreadConstraints",
            "list smp=key topologyKey ssa=map topologyKey,whenUnsatisfiable",
        ),
        (
            "",
            "Pod",
            "spec.topologySpreadConstraints[].labelSelector",
            "atomic struct",
        ),
        (
            "",
            "Pod",
            "spec.schedulingGates",
            "list smp=key name ssa=map name",
        ),
        (
            "",
            "Pod",
            "spec.resourceClaims",
            "list smp=key name ssa=map name",
        ),
        (
            "",
            "Pod",
            "spec.evictionResponders",
            "list smp=key name ssa=map name",
        ),
        ("", "Pod", "spec.overhead", "map"),
        ("", "Pod", "spec.resources.limits", "map"),
        (
            "",
            "Pod",
            "spec.resources.claims",
            "list smp=replace ssa=map name",
        ),
        // Container
        ("", "Pod", "spec.containers[].ports", CONTAINER_PORTS),
        ("", "Pod", "spec.initContainers[].ports", CONTAINER_PORTS),
        (
            "",
            "Pod",
            "spec.ephemeralContainers[].ports",
            CONTAINER_PORTS,
        ),
        (
            "",
            "Pod",
            "spec.containers[].env",
            "list smp=key name ssa=map name",
        ),
        (
            "",
            "Pod",
            "spec.containers[].env[].valueFrom.configMapKeyRef",
            "atomic struct",
        ),
        (
            "",
            "Pod",
            "spec.containers[].env[].valueFrom.secretKeyRef",
            "atomic struct",
        ),
        (
            "",
            "Pod",
            "spec.containers[].env[].valueFrom.fieldRef",
            "atomic struct",
        ),
        (
            "",
            "Pod",
            "spec.containers[].env[].valueFrom.resourceFieldRef",
            "atomic struct",
        ),
        (
            "",
            "Pod",
            "spec.containers[].env[].valueFrom.fileKeyRef",
            "atomic struct",
        ),
        (
            "",
            "Pod",
            "spec.containers[].volumeMounts",
            "list smp=key mountPath ssa=map mountPath",
        ),
        (
            "",
            "Pod",
            "spec.containers[].volumeDevices",
            "list smp=key devicePath ssa=map devicePath",
        ),
        ("", "Pod", "spec.containers[].resources.limits", "map"),
        ("", "Pod", "spec.containers[].resources.requests", "map"),
        (
            "",
            "Pod",
            "spec.containers[].resources.claims",
            "list smp=replace ssa=map name",
        ),
        // PodStatus
        ("", "Pod", "status.conditions", tagged),
        ("", "Pod", "status.podIPs", "list smp=key ip ssa=map ip"),
        ("", "Pod", "status.hostIPs", "list smp=key ip ssa=atomic"),
        (
            "",
            "Pod",
            "status.resourceClaimStatuses",
            "list smp=key name ssa=map name",
        ),
        // Node, Namespace
        ("", "Node", "spec.podCIDRs", "list smp=merge ssa=set"),
        ("", "Node", "status.conditions", tagged),
        (
            "",
            "Node",
            "status.addresses",
            "list smp=key type ssa=map type",
        ),
        ("", "Node", "status.capacity", "map"),
        ("", "Node", "status.allocatable", "map"),
        ("", "Namespace", "status.conditions", tagged),
        // Events
        ("", "Event", "involvedObject", "atomic struct"),
        ("", "Event", "related", "atomic struct"),
        ("events.k8s.io", "Event", "regarding", "atomic struct"),
        ("events.k8s.io", "Event", "related", "atomic struct"),
        // PodDisruptionBudget
        (
            "policy",
            "PodDisruptionBudget",
            "spec.selector",
            "atomic struct",
        ),
        ("policy", "PodDisruptionBudget", "status.conditions", tagged),
        (
            "policy",
            "PodDisruptionBudget",
            "status.disruptedPods",
            "map",
        ),
        // Job
        ("batch", "Job", "spec.selector", "atomic struct"),
        ("batch", "Job", "spec.template.metadata.labels", "map"),
        (
            "batch",
            "Job",
            "spec.template.spec.containers",
            "list smp=key name ssa=map name always",
        ),
        (
            "batch",
            "Job",
            "status.conditions",
            "list smp=key type ssa=atomic",
        ),
        (
            "batch",
            "Job",
            "status.uncountedTerminatedPods.succeeded",
            "list smp=replace ssa=set",
        ),
        (
            "batch",
            "Job",
            "status.uncountedTerminatedPods.failed",
            "list smp=replace ssa=set",
        ),
        // lifecycle.k8s.io
        (
            "lifecycle.k8s.io",
            "EvictionRequest",
            "status.conditions",
            tagged,
        ),
        ("lifecycle.k8s.io", "Eviction", "status.conditions", tagged),
        (
            "lifecycle.k8s.io",
            "Eviction",
            "status.requesters",
            "list smp=key name ssa=map name",
        ),
        (
            "lifecycle.k8s.io",
            "Eviction",
            "status.requesters[]",
            "atomic struct",
        ),
        (
            "lifecycle.k8s.io",
            "Eviction",
            "status.targetResponders",
            "list smp=key name ssa=map name",
        ),
        (
            "lifecycle.k8s.io",
            "Eviction",
            "status.targetResponders[]",
            "atomic struct",
        ),
        (
            "lifecycle.k8s.io",
            "Eviction",
            "status.responders",
            "list smp=key name ssa=map name",
        ),
        (
            "lifecycle.k8s.io",
            "Eviction",
            "status.responders[]",
            "granular",
        ),
    ]);
}

/// The kinds the table listed keep their version and reset-field flags.
#[test]
fn previously_hand_listed_kinds_keep_version_and_status_flags() {
    // (group, kind, version, status subresource, /status ignores metadata)
    let kinds: &[(&str, &str, &str, bool, bool)] = &[
        ("", "Pod", "v1", true, false),
        ("", "Node", "v1", true, false),
        ("", "Namespace", "v1", true, false),
        ("", "Event", "v1", false, false),
        ("events.k8s.io", "Event", "v1", false, false),
        ("policy", "PodDisruptionBudget", "v1", true, false),
        ("policy", "Eviction", "v1", false, false),
        ("batch", "Job", "v1", true, false),
        ("coordination.k8s.io", "Lease", "v1", false, false),
        (
            "lifecycle.k8s.io",
            "EvictionRequest",
            "v1alpha1",
            true,
            true,
        ),
        ("lifecycle.k8s.io", "Eviction", "v1alpha1", true, true),
    ];
    for (group, kind, version, status, ignores_meta) in kinds {
        let ts = builtin(group, kind);
        assert_eq!(
            (
                ts.version.as_str(),
                ts.status_subresource,
                ts.status_ignores_metadata,
                ts.strategic
            ),
            (*version, *status, *ignores_meta, true),
            "{group}/{kind}"
        );
    }
}

/// The newly served kinds: upstream's tags for the fields kubectl's
/// `apply`, `set image`, `edit`, `rollout restart`, `scale` and `expose`
/// touch (`staging/src/k8s.io/api/*/v1/types.go`).
#[test]
fn newly_served_kinds_merge_as_upstream_tags_them() {
    let tagged = "list smp=key type ssa=map type";
    let containers = "list smp=key name ssa=map name always";
    check(&[
        ("apps", "Deployment", "spec.selector", "atomic struct"),
        (
            "apps",
            "Deployment",
            "spec.template.metadata.annotations",
            "map",
        ),
        (
            "apps",
            "Deployment",
            "spec.template.spec.containers",
            containers,
        ),
        (
            "apps",
            "Deployment",
            "spec.template.spec.containers[].ports",
            CONTAINER_PORTS,
        ),
        (
            "apps",
            "Deployment",
            "spec.template.spec.containers[].env",
            "list smp=key name ssa=map name",
        ),
        (
            "apps",
            "Deployment",
            "spec.template.spec.volumes",
            "list smp=key name ssa=map name",
        ),
        ("apps", "Deployment", "status.conditions", tagged),
        (
            "apps",
            "ReplicaSet",
            "spec.template.spec.containers",
            containers,
        ),
        ("apps", "ReplicaSet", "status.conditions", tagged),
        (
            "apps",
            "StatefulSet",
            "spec.template.spec.containers",
            containers,
        ),
        (
            "apps",
            "StatefulSet",
            "spec.volumeClaimTemplates",
            "list smp=replace ssa=atomic",
        ),
        ("apps", "StatefulSet", "status.conditions", tagged),
        (
            "apps",
            "DaemonSet",
            "spec.template.spec.containers",
            containers,
        ),
        ("apps", "DaemonSet", "status.conditions", tagged),
        ("", "ReplicationController", "spec.selector", "atomic map"),
        (
            "",
            "ReplicationController",
            "spec.template.spec.containers",
            containers,
        ),
        ("", "ReplicationController", "status.conditions", tagged),
        ("", "PodTemplate", "template.spec.containers", containers),
        (
            "batch",
            "CronJob",
            "spec.jobTemplate.spec.template.spec.containers",
            containers,
        ),
        (
            "batch",
            "CronJob",
            "status.active",
            "list smp=replace ssa=atomic",
        ),
        (
            "",
            "Service",
            "spec.ports",
            "list smp=key port ssa=map port,protocol=TCP",
        ),
        ("", "Service", "spec.selector", "atomic map"),
        (
            "",
            "Service",
            "spec.clusterIPs",
            "list smp=replace ssa=atomic",
        ),
        ("", "Service", "status.conditions", tagged),
        ("", "ConfigMap", "data", "map"),
        ("", "ConfigMap", "binaryData", "map"),
        ("", "Secret", "data", "map"),
        ("", "Secret", "stringData", "map"),
        (
            "",
            "ServiceAccount",
            "secrets",
            "list smp=key name ssa=map name",
        ),
        ("", "ServiceAccount", "secrets[]", "atomic struct"),
        (
            "",
            "ServiceAccount",
            "imagePullSecrets",
            "list smp=replace ssa=atomic",
        ),
        ("", "Endpoints", "subsets", "list smp=replace ssa=atomic"),
        (
            "",
            "PersistentVolumeClaim",
            "spec.accessModes",
            "list smp=replace ssa=atomic",
        ),
        (
            "",
            "PersistentVolumeClaim",
            "spec.dataSource",
            "atomic struct",
        ),
        ("", "PersistentVolumeClaim", "status.conditions", tagged),
        ("", "PersistentVolume", "spec.claimRef", "atomic struct"),
        ("", "PersistentVolume", "spec.capacity", "map"),
        ("", "ResourceQuota", "spec.hard", "map"),
        ("", "ResourceQuota", "spec.scopeSelector", "atomic struct"),
        (
            "",
            "LimitRange",
            "spec.limits",
            "list smp=replace ssa=atomic",
        ),
        (
            "discovery.k8s.io",
            "EndpointSlice",
            "endpoints",
            "list smp=replace ssa=atomic",
        ),
        // `json:"addresses"` (required, no omitempty).
        (
            "discovery.k8s.io",
            "EndpointSlice",
            "endpoints[].addresses",
            "list smp=replace ssa=set always",
        ),
        (
            "discovery.k8s.io",
            "EndpointSlice",
            "ports",
            "list smp=replace ssa=atomic",
        ),
        (
            "networking.k8s.io",
            "Ingress",
            "spec.rules",
            "list smp=replace ssa=atomic",
        ),
        (
            "networking.k8s.io",
            "Ingress",
            "spec.defaultBackend.service.port",
            "atomic struct",
        ),
        (
            "networking.k8s.io",
            "NetworkPolicy",
            "spec.podSelector",
            "atomic struct",
        ),
        (
            "networking.k8s.io",
            "NetworkPolicy",
            "spec.ingress",
            "list smp=replace ssa=atomic",
        ),
        ("storage.k8s.io", "StorageClass", "parameters", "map"),
        (
            "storage.k8s.io",
            "StorageClass",
            "allowedTopologies",
            "list smp=replace ssa=atomic",
        ),
        (
            "coordination.k8s.io",
            "Lease",
            "spec.holderIdentity",
            "granular",
        ),
        (
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "status.conditions",
            "list smp=replace ssa=map type",
        ),
        (
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "spec.versions",
            "list smp=replace ssa=atomic",
        ),
        // JSONSchemaProps is recursive: properties of properties resolve.
        (
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "spec.versions[].schema.openAPIV3Schema.properties",
            "map",
        ),
        (
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "spec.versions[].schema.openAPIV3Schema.items",
            "granular",
        ),
    ]);
}

// ------------------------------------------- merges of the new kinds

fn smp(target: Target<'_>, original: &Value, patch: Value) -> Result<Value, (u16, String)> {
    strategic_merge_patch(target, original, patch.to_string().as_bytes())
        .map_err(|e| (e.code, e.detail.unwrap_or(e.message)))
}

fn kind(group: &'static str, kind: &'static str) -> Target<'static> {
    Target::builtin(TypeRef { group, kind })
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "uid": "d1"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {"name": "nginx", "image": "nginx:1.24",
                     "env": [{"name": "A", "value": "1"}]},
                    {"name": "sidecar", "image": "envoy:1"}
                ]}
            }
        },
        "status": {"conditions": [
            {"type": "Available", "status": "True"},
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}
        ]}
    })
}

fn service() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default", "uid": "s1"},
        "spec": {
            "selector": {"app": "web"},
            "ports": [
                {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
                {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53}
            ]
        }
    })
}

/// `(name, target, original, patch, check of the result)`.
type SmpCase = (
    &'static str,
    Target<'static>,
    Value,
    Value,
    fn(&Value) -> Result<(), String>,
);

fn expect(got: &Value, pointer: &str, want: Value) -> Result<(), String> {
    match got.pointer(pointer) {
        Some(v) if *v == want => Ok(()),
        other => Err(format!("{pointer}: got {other:?}, want {want}")),
    }
}

/// Strategic merge patches kubectl sends for the new kinds, with the
/// result upstream's `StrategicMergeMapPatch` gives on the Go types.
#[test]
fn smp_new_kinds() {
    let cases: Vec<SmpCase> = vec![
        (
            "kubectl set image: the container merges by name, the other stays",
            kind("apps", "Deployment"),
            deployment(),
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "nginx", "image": "nginx:1.25"}]}}}}),
            |got| {
                expect(
                    got,
                    "/spec/template/spec/containers/0/image",
                    json!("nginx:1.25"),
                )?;
                expect(
                    got,
                    "/spec/template/spec/containers/0/env",
                    json!([{"name": "A", "value": "1"}]),
                )?;
                expect(
                    got,
                    "/spec/template/spec/containers/1",
                    json!({"name": "sidecar", "image": "envoy:1"}),
                )
            },
        ),
        (
            "kubectl rollout restart: a template annotation, labels untouched",
            kind("apps", "Deployment"),
            deployment(),
            json!({"spec": {"template": {"metadata": {"annotations": {
                "kubectl.kubernetes.io/restartedAt": "2026-12-06T00:00:00Z"}}}}}),
            |got| {
                expect(got, "/spec/template/metadata/labels", json!({"app": "web"}))?;
                expect(
                    got,
                    "/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt",
                    json!("2026-12-06T00:00:00Z"),
                )
            },
        ),
        (
            "kubectl scale (patch): a scalar",
            kind("apps", "Deployment"),
            deployment(),
            json!({"spec": {"replicas": 3}}),
            |got| expect(got, "/spec/replicas", json!(3)),
        ),
        (
            "kubectl apply (client side): $setElementOrder and a deleted container",
            kind("apps", "Deployment"),
            deployment(),
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "nginx"}],
                "containers": [{"name": "sidecar", "image": "envoy:2"}]}}}}),
            |got| {
                expect(
                    got,
                    "/spec/template/spec/containers/0/image",
                    json!("envoy:2"),
                )?;
                expect(got, "/spec/template/spec/containers/1/name", json!("nginx"))
            },
        ),
        (
            "status conditions merge by type",
            kind("apps", "Deployment"),
            deployment(),
            json!({"status": {"conditions": [{"type": "Progressing", "status": "False"}]}}),
            |got| {
                expect(
                    got,
                    "/status/conditions/0",
                    json!({"type": "Available", "status": "True"}),
                )?;
                expect(
                    got,
                    "/status/conditions/1",
                    json!({"type": "Progressing", "status": "False", "reason": "NewReplicaSetAvailable"}),
                )
            },
        ),
        (
            "Service ports merge by port (SMP ignores protocol)",
            kind("", "Service"),
            service(),
            json!({"spec": {"ports": [{"port": 443, "name": "https", "targetPort": 8443},
                                      {"port": 80, "targetPort": 9090}]}}),
            |got| {
                let ports = got.pointer("/spec/ports").cloned().unwrap_or_default();
                let keys: Vec<Value> = ports
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| p["port"].clone())
                    .collect();
                if keys != [json!(443), json!(80), json!(53)] {
                    return Err(format!("port order {keys:?}"));
                }
                expect(got, "/spec/ports/1/targetPort", json!(9090))?;
                expect(got, "/spec/ports/1/name", json!("http"))
            },
        ),
        (
            "Service port deleted with $patch: delete",
            kind("", "Service"),
            service(),
            json!({"spec": {"ports": [{"port": 53, "$patch": "delete"}]}}),
            |got| {
                expect(
                    got,
                    "/spec/ports",
                    json!([
                {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]),
                )
            },
        ),
        (
            "Service selector (atomic for apply) still merges key by key",
            kind("", "Service"),
            service(),
            json!({"spec": {"selector": {"tier": "front"}}}),
            |got| {
                expect(
                    got,
                    "/spec/selector",
                    json!({"app": "web", "tier": "front"}),
                )
            },
        ),
        (
            "ConfigMap data merges key by key, null deletes",
            kind("", "ConfigMap"),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                   "data": {"a": "1", "b": "2"}}),
            json!({"data": {"b": null, "c": "3"}}),
            |got| expect(got, "/data", json!({"a": "1", "c": "3"})),
        ),
        (
            "StatefulSet volumeClaimTemplates are replaced (no patch strategy)",
            kind("apps", "StatefulSet"),
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                   "spec": {"volumeClaimTemplates": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]}}),
            json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "c"}}]}}),
            |got| {
                expect(
                    got,
                    "/spec/volumeClaimTemplates",
                    json!([{"metadata": {"name": "c"}}]),
                )
            },
        ),
        (
            "ServiceAccount secrets merge by name",
            kind("", "ServiceAccount"),
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"},
                   "secrets": [{"name": "a"}]}),
            json!({"secrets": [{"name": "b"}]}),
            |got| expect(got, "/secrets", json!([{"name": "b"}, {"name": "a"}])),
        ),
        (
            "Ingress rules are replaced",
            kind("networking.k8s.io", "Ingress"),
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"},
                   "spec": {"rules": [{"host": "a"}, {"host": "b"}]}}),
            json!({"spec": {"rules": [{"host": "c"}]}}),
            |got| expect(got, "/spec/rules", json!([{"host": "c"}])),
        ),
        (
            "CronJob: containers of the job template merge by name",
            kind("batch", "CronJob"),
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
                   "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                       "containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}}}}}),
            json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "b", "image": "z"}]}}}}}}),
            |got| {
                expect(
                    got,
                    "/spec/jobTemplate/spec/template/spec/containers",
                    json!([{"name": "a", "image": "x"}, {"name": "b", "image": "z"}]),
                )
            },
        ),
        (
            "CRD status conditions have no patch strategy: replaced",
            kind("apiextensions.k8s.io", "CustomResourceDefinition"),
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                   "metadata": {"name": "widgets.example.com"},
                   "status": {"conditions": [{"type": "Established", "status": "True"},
                                             {"type": "NamesAccepted", "status": "True"}]}}),
            json!({"status": {"conditions": [{"type": "Established", "status": "False"}]}}),
            |got| {
                expect(
                    got,
                    "/status/conditions",
                    json!([{"type": "Established", "status": "False"}]),
                )
            },
        ),
    ];
    let mut failures = Vec::new();
    for (name, target, original, patch, check) in cases {
        match smp(target, &original, patch) {
            Ok(got) => {
                if let Err(e) = check(&got) {
                    failures.push(format!("{name}: {e}"));
                }
            }
            Err(e) => failures.push(format!("{name}: failed {e:?}")),
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

fn fields_v1(obj: &Value, manager: &str) -> Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == manager)
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or(Value::Null)
}

/// Apply keys Service ports on `port` and `protocol` (defaulting to TCP):
/// the same port over TCP and UDP is two items, each owned on its own.
#[test]
fn ssa_service_ports_keyed_by_port_and_protocol() {
    let svc = kind("", "Service");
    let a = "apiVersion: v1\nkind: Service\nmetadata: {name: dns, namespace: default}\nspec:\n  ports:\n  - {port: 53, targetPort: 5353}\n";
    let live = server_side_apply(svc, None, a.as_bytes(), "a", false, now()).expect("a applies");
    assert_eq!(
        fields_v1(&live, "a")["f:spec"]["f:ports"],
        json!({"k:{\"port\":53,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}, "f:targetPort": {}}})
    );
    let b = "apiVersion: v1\nkind: Service\nmetadata: {name: dns, namespace: default}\nspec:\n  ports:\n  - {port: 53, protocol: UDP, targetPort: 5353}\n";
    let live = server_side_apply(svc, Some(&live), b.as_bytes(), "b", false, now())
        .expect("a second protocol does not conflict");
    assert_eq!(
        live["spec"]["ports"],
        json!([{"port": 53, "targetPort": 5353}, {"port": 53, "protocol": "UDP", "targetPort": 5353}])
    );
}

/// Apply keys Deployment containers on `name`: another manager changing an
/// image the first applied conflicts on that container's field.
#[test]
fn ssa_deployment_containers_conflict_by_name() {
    let dep = kind("apps", "Deployment");
    let body = |image: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: default}}\nspec:\n  template:\n    spec:\n      containers:\n      - {{name: nginx, image: \"{image}\"}}\n"
        )
    };
    let live = server_side_apply(dep, None, body("nginx:1.24").as_bytes(), "ci", false, now())
        .expect("ci applies");
    let e = server_side_apply(
        dep,
        Some(&live),
        body("nginx:1.25").as_bytes(),
        "dev",
        false,
        now(),
    )
    .expect_err("dev conflicts");
    assert_eq!(e.code, 409);
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"ci\": .spec.template.spec.containers[name=\"nginx\"].image"
    );
}

// ------------------------------------------------- custom resources

fn widget_schema() -> JSONSchemaProps {
    serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name", "protocol"],
                        "items": {"type": "object", "properties": {
                            "name": {"type": "string"}, "protocol": {"type": "string"},
                            "port": {"type": "integer"}}}
                    },
                    "tags": {"type": "array", "x-kubernetes-list-type": "set",
                             "items": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                                 "additionalProperties": {"type": "string"}},
                    "ref": {"type": "object", "x-kubernetes-map-type": "atomic",
                            "properties": {"name": {"type": "string"}}},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }
            },
            "status": {"type": "object", "properties": {"conditions": {
                "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                "items": {"type": "object", "properties": {"type": {"type": "string"}}}}}}
        }
    }))
    .expect("a JSONSchemaProps")
}

/// A CRD version's schema: list, map and struct types from its
/// `x-kubernetes-*` extensions, `metadata` as ObjectMeta, no strategic
/// merge patch.
#[test]
fn custom_resource_schema_from_openapi_v3() {
    let schema = widget_schema();
    let ts = TypeSchema::custom_resource("v1", Some(&schema), true);
    let rows: &[(&str, &str)] = &[
        ("spec.ports", "list smp=replace ssa=map name,protocol"),
        ("spec.tags", "list smp=replace ssa=set"),
        ("spec.args", "list smp=replace ssa=atomic"),
        ("spec.selector", "atomic map"),
        ("spec.ref", "atomic struct"),
        ("spec.extra", "granular"),
        ("spec.extra.anything", "granular"),
        ("status.conditions", "list smp=replace ssa=map type"),
        ("metadata.labels", "map"),
        ("metadata.finalizers", "list smp=merge ssa=set"),
        ("metadata.ownerReferences", "list smp=key uid ssa=map uid"),
    ];
    for (path, want) in rows {
        assert_eq!(describe(at(&ts.root, path)), *want, "{path}");
    }
    assert!(!ts.strategic);
    assert_eq!(
        ts.patch_types(),
        [
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml"
        ]
    );
}

/// apiextensions-apiserver refuses strategic merge patch on custom
/// resources: 415 UnsupportedMediaType listing the accepted types
/// (`negotiation.NewUnsupportedMediaTypeError(supportedTypes)`); merge and
/// JSON patches work without a schema.
#[test]
fn custom_resource_refuses_strategic_merge_patch() {
    let schema = widget_schema();
    let ts = TypeSchema::custom_resource("v1", Some(&schema), true);
    let target = Target::custom("example.com", "Widget", &ts);
    let cr = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                    "spec": {"args": ["a"]}});
    let e = strategic_merge_patch(target, &cr, b"{}").expect_err("refused");
    assert_eq!((e.code, e.reason.as_str()), (415, "UnsupportedMediaType"));
    assert_eq!(
        e.message,
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    );
    assert_eq!(
        e.message,
        unsupported_media_type_message(target.patch_types())
    );
    let got = merge_patch(&cr, br#"{"spec": {"args": ["b"]}}"#).expect("merge patch");
    assert_eq!(got["spec"]["args"], json!(["b"]));
}

/// Apply on a custom resource: a `map` list merges items of two managers
/// by their keys, a `set` unions, the `/status` subresource resets `spec`.
#[test]
fn custom_resource_apply_merges_by_list_map_keys() {
    let schema = widget_schema();
    let ts = TypeSchema::custom_resource("v1", Some(&schema), true);
    let target = Target::custom("example.com", "Widget", &ts);
    let a = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec:\n  ports: [{name: http, protocol: TCP, port: 80}]\n  tags: [a]\n  args: [x]\n";
    let b = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec:\n  ports: [{name: http, protocol: UDP, port: 80}]\n  tags: [b]\n";
    let live = server_side_apply(target, None, a.as_bytes(), "a", false, now()).expect("a");
    let live = server_side_apply(target, Some(&live), b.as_bytes(), "b", false, now()).expect("b");
    assert_eq!(
        live["spec"]["ports"],
        json!([{"name": "http", "protocol": "TCP", "port": 80},
               {"name": "http", "protocol": "UDP", "port": 80}])
    );
    assert_eq!(live["spec"]["tags"], json!(["a", "b"]));
    assert_eq!(
        fields_v1(&live, "b")["f:spec"],
        json!({"f:ports": {"k:{\"name\":\"http\",\"protocol\":\"UDP\"}": {
                  ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}}},
               "f:tags": {"v:\"b\"": {}}})
    );
    // An atomic list another manager applies differently conflicts whole.
    let c = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec:\n  args: [y]\n";
    let e = server_side_apply(target, Some(&live), c.as_bytes(), "c", false, now())
        .expect_err("args conflict");
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"a\": .spec.args"
    );
    // /status owns no spec field (the status strategy restores the spec
    // value itself, as upstream's PrepareForUpdate does).
    let s = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {args: [z]}\nstatus:\n  conditions: [{type: Ready}]\n";
    let got = server_side_apply_subresource(
        target,
        Some(&live),
        s.as_bytes(),
        "ctl",
        Some("status"),
        false,
        now(),
    )
    .expect("status apply");
    assert_eq!(
        fields_v1(&got, "ctl"),
        json!({"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:type": {}}}}})
    );
}

/// A kind without any schema: strategic merge patch is refused like a
/// custom resource's; apply treats the object as untyped (maps merge key by
/// key, lists are atomic, no reset fields) at the version its `apiVersion`
/// names.
#[test]
fn kind_without_schema_is_untyped() {
    let target = Target::builtin(TypeRef {
        group: "example.com",
        kind: "Gadget",
    });
    assert!(target.schema.is_none());
    assert_eq!(
        target.patch_types(),
        exitplan_api::patch::CUSTOM_RESOURCE_PATCH_TYPES
    );
    let e = strategic_merge_patch(target, &json!({}), b"{}").expect_err("refused");
    assert_eq!(e.code, 415);
    let a = "apiVersion: example.com/v2\nkind: Gadget\nmetadata: {name: g}\nspec: {list: [1, 2], map: {a: 1}}\n";
    let live = server_side_apply(target, None, a.as_bytes(), "a", false, now()).expect("apply");
    assert_eq!(
        live["metadata"]["managedFields"][0]["apiVersion"],
        json!("example.com/v2")
    );
    assert_eq!(
        fields_v1(&live, "a")["f:spec"],
        json!({"f:list": {}, "f:map": {"f:a": {}}})
    );
}
