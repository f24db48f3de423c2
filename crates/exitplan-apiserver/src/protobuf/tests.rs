//! Round trips over every message of the table, and the bodies kubectl
//! sends.

use serde_json::{Map, Value, json};

use super::schema::{self, SCHEMA, Type, special};
use super::*;

/// A JSON object of message `name` with every field set to a value that
/// is not its zero (two elements for repeated fields and maps), down to
/// `depth` levels.
fn synth(name: &str, depth: usize, seed: &mut u64) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(m) = schema::message(name) else {
        return out;
    };
    for f in &m.fields {
        *seed += 1;
        let Some(key) = f.json else {
            if let Some(nested) = f.message {
                out.append(&mut synth(nested, depth, seed));
            }
            continue;
        };
        let one = |seed: &mut u64| -> Option<Value> {
            Some(match f.ty {
                Type::String => json!(format!("s{seed}")),
                Type::Int32 => json!(-(*seed as i64) % 1000 - 1),
                Type::Int64 => json!(1_i64 << 40 | *seed as i64),
                Type::Bool => json!(true),
                Type::Double => json!(0.5),
                Type::Bytes => json!("AP9hYg=="),
                Type::Message => special_value(f.message?, depth, seed)?,
                _ => return None,
            })
        };
        let value = match f.ty {
            Type::MapString => json!({"a": format!("v{seed}"), "b": ""}),
            Type::MapBytes => json!({"a": "AP9hYg==", "b": ""}),
            Type::MapMessage => {
                let Some(v) = f.message.and_then(|n| special_value(n, depth, seed)) else {
                    continue;
                };
                json!({"a": v})
            }
            _ if f.repeated => {
                let (Some(a), Some(b)) = (one(seed), one(seed)) else {
                    continue;
                };
                json!([a, b])
            }
            _ => match one(seed) {
                Some(v) => v,
                None => continue,
            },
        };
        out.insert(key.to_owned(), value);
    }
    out
}

fn special_value(name: &str, depth: usize, seed: &mut u64) -> Option<Value> {
    *seed += 1;
    Some(match name {
        special::TIME => json!("2024-01-02T03:04:05Z"),
        special::MICRO_TIME => json!("2024-01-02T03:04:05.123456Z"),
        special::QUANTITY => json!("1500m"),
        special::INT_OR_STRING if seed.is_multiple_of(2) => json!(8080),
        special::INT_OR_STRING => json!("http"),
        special::RAW_EXTENSION | special::FIELDS_V1 => json!({"f:metadata": {"f:labels": {}}}),
        _ if depth == 0 => return None,
        other => Value::Object(synth(other, depth - 1, seed)),
    })
}

#[test]
fn every_message_round_trips_through_protobuf() {
    let mut names: Vec<&&str> = SCHEMA.keys().collect();
    names.sort();
    let mut checked = 0;
    for name in names {
        let m = &SCHEMA[*name];
        let mut seed = 0;
        let object = synth(name, 6, &mut seed);
        let mut w = wire::Writer::default();
        encode::message(&mut w, name, m, &object, "", encode::Mode::Strict)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let back = decode::message(m, &w.buf).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(Value::Object(back), Value::Object(object), "{name}");
        checked += 1;
    }
    assert!(checked > 400, "{checked}");
}

#[test]
fn every_served_built_in_kind_and_its_list_has_a_message() {
    for def in crate::registry::RESOURCES {
        // apiextensions.k8s.io is answered in JSON: its JSONSchemaProps
        // marshals by hand upstream, which the transcoder does not model.
        if def.group == "lifecycle.k8s.io" || def.group == "apiextensions.k8s.io" {
            continue;
        }
        let v = def.api_version();
        assert!(
            schema::message_for(&v, def.kind).is_some(),
            "{v} {}",
            def.kind
        );
        let list = format!("{}List", def.kind);
        assert!(schema::message_for(&v, &list).is_some(), "{v} {list}");
    }
}

#[test]
fn objects_round_trip_through_the_envelope() {
    let objects = [
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default",
            "creationTimestamp": "2026-01-02T03:04:05Z", "labels": {"a": "b"}},
            "data": {"k": "AP9hYg==", "empty": ""}, "type": "Opaque"}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}, "type": "RollingUpdate"},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                        "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 10}}],
                        "volumes": [{"name": "c", "configMap": {"name": "cm", "defaultMode": 420}}]}}}}),
        json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
            "message": "pods \"x\" not found", "reason": "NotFound",
            "details": {"name": "x", "kind": "pods"}, "code": 404}),
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
            "spec": {"holderIdentity": "a", "renewTime": "2026-01-02T03:04:05.123456Z", "leaseDurationSeconds": 15}}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "b", "namespace": "default"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "default"},
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "c"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
                {"verbs": ["*"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]}]}),
        json!({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "7"},
            "items": [{"metadata": {"name": "a", "managedFields": [{"manager": "kubectl",
                "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]}}]}),
    ];
    for object in objects {
        let bytes = encode_object(&object).unwrap_or_else(|e| panic!("{object}: {e}"));
        assert!(bytes.starts_with(MAGIC));
        let (tm, back) = decode_object(&bytes, &TypeMeta::default()).expect("decodes");
        assert_eq!(tm.kind, object["kind"]);
        assert_eq!(back, object);
    }
}

#[test]
fn fields_without_a_number_are_refused_or_left_out() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}],
                 "evictionResponders": [{"name": "x.io/y", "priority": 10}]}});
    assert_eq!(
        encode_object(&pod),
        Err(EncodeError::UnknownField("spec.evictionResponders".into()))
    );
    let frame = encode_watch_event("ADDED", &pod).expect("lenient");
    let len = u32::from_be_bytes(frame[..4].try_into().expect("4 bytes")) as usize;
    assert_eq!(len, frame.len() - 4);
    let eviction =
        json!({"apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction", "metadata": {}});
    assert!(matches!(
        encode_object(&eviction),
        Err(EncodeError::NoMessage { .. })
    ));
}

/// What `kubectl create namespace scratch` sends (client-go encodes the
/// Namespace with gogo-protobuf: every non-pointer field written).
#[test]
fn decodes_what_kubectl_sends_and_drops_omitempty_zeros() {
    fn f(n: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![(n << 3) | 2, u8::try_from(bytes.len()).expect("short")];
        out.extend_from_slice(bytes);
        out
    }
    let label = [f(1, b"team"), f(2, b"a")].concat();
    // name, generateName "", namespace "", selfLink "", uid "",
    // resourceVersion "", generation 0, creationTimestamp {}, labels.
    let meta = [
        f(1, b"scratch"),
        f(2, b""),
        f(3, b""),
        f(4, b""),
        f(5, b""),
        f(6, b""),
        vec![7 << 3, 0],
        f(8, b""),
        f(11, &label),
    ]
    .concat();
    let status = f(1, b"");
    let ns = [f(1, &meta), f(2, &[]), f(3, &status)].concat();
    let type_meta = [f(1, b"v1"), f(2, b"Namespace")].concat();
    let unknown = [f(1, &type_meta), f(2, &ns), f(3, b""), f(4, b"")].concat();
    let body = [MAGIC, &unknown].concat();
    let (_, json) = decode_object(&body, &TypeMeta::default()).expect("decodes");
    assert_eq!(
        json,
        json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "scratch", "creationTimestamp": null, "labels": {"team": "a"}},
            "spec": {}, "status": {}})
    );
    // The same object encoded back is what gogo would write, field for field.
    let again = encode_object(&json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "scratch", "labels": {"team": "a"}}}))
    .expect("encodes");
    let meta = [f(1, b"scratch"), f(11, &label)].concat();
    let want = [
        MAGIC,
        &[f(1, &type_meta), f(2, &f(1, &meta)), f(3, b""), f(4, b"")].concat(),
    ]
    .concat();
    assert_eq!(again, want);
}

#[test]
fn bad_bodies_fail_with_the_serializers_words() {
    let none = TypeMeta::default();
    let cases: &[(&[u8], &str)] = &[
        (b"", "empty data"),
        (
            b"nope",
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
        ),
        (b"k8s\0", "empty body"),
        (b"k8s\0\x0a\x05", "unexpected EOF"),
        (
            b"k8s\0\x0a\x0a\x0a\x02v1\x12\x04Nope",
            "no kind \"Nope\" is registered for version \"v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
        ),
        (
            b"k8s\0\x0a\x0d\x0a\x02v1\x12\x07Service\x12\x02\x0a\x09",
            "unexpected EOF",
        ),
        (
            b"k8s\0\x0a\x0d\x0a\x02v1\x12\x07Service\x12\x01\x0b",
            "proto: illegal wireType 3",
        ),
        (
            b"k8s\0\x0a\x0d\x0a\x02v1\x12\x07Service\x12\x02\x08\x01",
            "proto: wrong wireType = 0 for field metadata",
        ),
    ];
    for (body, want) in cases {
        let got = decode_object(body, &none)
            .map(|_| ())
            .map_err(|e| e.to_string());
        assert_eq!(got, Err((*want).to_owned()), "{body:?}");
    }
}

/// gogo writes `replicas: 0` when a client sets the pointer to zero, and
/// `minReadySeconds: 0` (a value field) always: the first is kept, the
/// second dropped, as Go's JSON of the same object shows them.
#[test]
fn zero_pointers_are_kept_and_omitempty_zeros_dropped() {
    let (_, m) = schema::message_for("apps/v1", "Deployment").expect("Deployment");
    // spec{replicas: 0, minReadySeconds: 0, paused: false}
    let spec = [0x08, 0x00, 0x28, 0x00, 0x38, 0x00];
    let mut body = vec![0x12, u8::try_from(spec.len()).expect("short")];
    body.extend_from_slice(&spec);
    let json = decode::message(m, &body).expect("decodes");
    assert_eq!(Value::Object(json), json!({"spec": {"replicas": 0}}));
}
