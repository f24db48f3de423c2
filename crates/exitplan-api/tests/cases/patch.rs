//! PATCH semantics (`exitplan_api::patch`): JSON Patch, JSON merge patch,
//! strategic merge patch and server-side apply, each case pinning one
//! upstream behaviour (evanphx/json-patch v4, apimachinery strategicpatch,
//! structured-merge-diff and the apiserver field manager).

use exitplan_api::patch::{
    GoField, GoTypes, PatchError, TypeRef, json_patch, merge_patch, record_update,
    server_side_apply, server_side_apply_subresource, strategic_merge_patch,
    strategic_merge_patch_typed,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::support::now;

const POD: TypeRef<'static> = TypeRef {
    group: "",
    kind: "Pod",
};
const LEASE: TypeRef<'static> = TypeRef {
    group: "coordination.k8s.io",
    kind: "Lease",
};
const EVICTION: TypeRef<'static> = TypeRef {
    group: "lifecycle.k8s.io",
    kind: "Eviction",
};

const GENERIC_422: &str = "the server rejected our request due to an error in our request";

fn pod() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p", "namespace": "default", "uid": "u1",
            "labels": {"app": "web", "tier": "front"},
            "finalizers": ["a.example.com/f", "b.example.com/f"],
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "j1"}
            ]
        },
        "spec": {
            "containers": [
                {"name": "a", "image": "x:1",
                 "env": [{"name": "OLD", "value": "0"}],
                 "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                {"name": "b", "image": "y:1"}
            ],
            "volumes": [{"name": "v", "emptyDir": {}}],
            "tolerations": [{"key": "k1", "operator": "Exists"}],
            "evictionResponders": [
                {"name": "a.example.com/r", "priority": 10000},
                {"name": "b.example.com/r", "priority": 20000}
            ]
        }
    })
}

/// A patched object, or the status code and library text of the failure.
type Outcome = Result<Value, (u16, String)>;

fn err(code: u16, message: &str) -> Outcome {
    Err((code, message.to_owned()))
}

fn simplify(r: Result<Value, PatchError>) -> Outcome {
    r.map_err(|e| (e.code, e.detail.unwrap_or(e.message)))
}

// ------------------------------------------------------------ JSON Patch

/// `(name, what upstream behaviour it pins, patch, expected result or
/// (status, library text))`.
type JsonCase = (&'static str, &'static str, Value, Outcome);

fn doc() -> Value {
    json!({"metadata": {"labels": {"a/b": "1"}}, "spec": {"list": [1, 2, 3], "replicas": 2}})
}

fn with(f: impl FnOnce(&mut Value)) -> Value {
    let mut d = doc();
    f(&mut d);
    d
}

#[test]
fn json_patch_cases() {
    let cases: Vec<JsonCase> = vec![
        (
            "add_member",
            "add sets an object member",
            json!([{"op": "add", "path": "/spec/paused", "value": true}]),
            Ok(with(|d| d["spec"]["paused"] = json!(true))),
        ),
        (
            "add_index_and_dash",
            "add inserts before an index; `-` appends",
            json!([{"op": "add", "path": "/spec/list/0", "value": 0},
                   {"op": "add", "path": "/spec/list/-", "value": 4}]),
            Ok(with(|d| d["spec"]["list"] = json!([0, 1, 2, 3, 4]))),
        ),
        (
            "add_negative_index",
            "v4 accepts negative indexes counted from the end",
            json!([{"op": "add", "path": "/spec/list/-1", "value": 9}]),
            Ok(with(|d| d["spec"]["list"] = json!([1, 2, 3, 9]))),
        ),
        (
            "pointer_escapes",
            "~1 is / and ~0 is ~ in a path token",
            json!([{"op": "replace", "path": "/metadata/labels/a~1b", "value": "2"},
                   {"op": "add", "path": "/metadata/labels/t~0x", "value": "3"}]),
            Ok(with(|d| {
                d["metadata"]["labels"] = json!({"a/b": "2", "t~x": "3"});
            })),
        ),
        (
            "remove",
            "remove deletes a member and an array item",
            json!([{"op": "remove", "path": "/spec/replicas"},
                   {"op": "remove", "path": "/spec/list/1"}]),
            Ok(json!({"metadata": {"labels": {"a/b": "1"}}, "spec": {"list": [1, 3]}})),
        ),
        (
            "replace",
            "replace overwrites an existing value",
            json!([{"op": "replace", "path": "/spec/replicas", "value": 5}]),
            Ok(with(|d| d["spec"]["replicas"] = json!(5))),
        ),
        (
            "replace_missing_member_adds",
            "v4 only checks array indexes for replace: a missing object member is added",
            json!([{"op": "replace", "path": "/spec/new", "value": 1}]),
            Ok(with(|d| d["spec"]["new"] = json!(1))),
        ),
        (
            "move",
            "move removes at from and adds at path",
            json!([{"op": "move", "from": "/spec/replicas", "path": "/spec/count"}]),
            Ok(
                json!({"metadata": {"labels": {"a/b": "1"}}, "spec": {"list": [1, 2, 3], "count": 2}}),
            ),
        ),
        (
            "copy",
            "copy duplicates a value",
            json!([{"op": "copy", "from": "/spec/list", "path": "/spec/copy"}]),
            Ok(with(|d| d["spec"]["copy"] = json!([1, 2, 3]))),
        ),
        (
            "test_passes",
            "a passing test changes nothing and lets later operations run",
            json!([{"op": "test", "path": "/spec/replicas", "value": 2},
                   {"op": "replace", "path": "/spec/replicas", "value": 3}]),
            Ok(with(|d| d["spec"]["replicas"] = json!(3))),
        ),
        (
            "test_fails",
            "a failed test is 422 (the whole patch is rejected)",
            json!([{"op": "test", "path": "/spec/replicas", "value": 3}]),
            err(422, "testing value /spec/replicas failed: test failed"),
        ),
        (
            "test_int_vs_float",
            "test compares JSON values: 2 and 2.0 differ",
            json!([{"op": "test", "path": "/spec/replicas", "value": 2.0}]),
            err(422, "testing value /spec/replicas failed: test failed"),
        ),
        (
            "test_missing_parent",
            "a test below a missing parent does not apply",
            json!([{"op": "test", "path": "/spec/nope/x", "value": 1}]),
            err(
                422,
                "test operation does not apply: is missing path: /spec/nope/x: missing value",
            ),
        ),
        (
            "test_missing_member_null",
            "a missing member equals a null value",
            json!([{"op": "test", "path": "/spec/absent", "value": null}]),
            Ok(doc()),
        ),
        (
            "add_missing_parent",
            "add never creates parents",
            json!([{"op": "add", "path": "/spec/nope/x", "value": 1}]),
            err(
                422,
                "add operation does not apply: doc is missing path: \"/spec/nope/x\": missing value",
            ),
        ),
        (
            "add_bad_index",
            "an array token must be an Atoi number",
            json!([{"op": "add", "path": "/spec/list/x", "value": 1}]),
            err(
                422,
                "error in add for path: '/spec/list/x': value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax",
            ),
        ),
        (
            "add_index_out_of_range",
            "add past the end is an invalid index",
            json!([{"op": "add", "path": "/spec/list/5", "value": 1}]),
            err(
                422,
                "error in add for path: '/spec/list/5': Unable to access invalid index: 5: invalid index referenced",
            ),
        ),
        (
            "remove_missing_member",
            "remove of a missing member fails",
            json!([{"op": "remove", "path": "/spec/absent"}]),
            err(
                422,
                "error in remove for path: '/spec/absent': Unable to remove nonexistent key: absent: missing value",
            ),
        ),
        (
            "replace_missing_index",
            "replace of a missing array index fails",
            json!([{"op": "replace", "path": "/spec/list/7", "value": 1}]),
            err(
                422,
                "replace operation does not apply: doc is missing key: /spec/list/7: missing value",
            ),
        ),
        (
            "move_missing_from",
            "move from a missing member fails on the removal",
            json!([{"op": "move", "from": "/spec/absent", "path": "/spec/x"}]),
            err(
                422,
                "error in move for path: 'absent': Unable to remove nonexistent key: absent: missing value",
            ),
        ),
        (
            "copy_missing_from_parent",
            "copy from below a missing parent does not apply",
            json!([{"op": "copy", "from": "/nope/x", "path": "/spec/x"}]),
            err(
                422,
                "copy operation does not apply: doc is missing from path: /nope/x: missing value",
            ),
        ),
        (
            "missing_path_field",
            "an operation without path",
            json!([{"op": "replace", "value": 1}]),
            err(
                422,
                "replace operation failed to decode path: operation missing path field: missing value",
            ),
        ),
        (
            "unknown_op",
            "an unknown op is rejected by name",
            json!([{"op": "frobnicate", "path": "/spec"}]),
            err(422, "Unexpected kind: frobnicate"),
        ),
        (
            "not_a_list",
            "the patch must be a JSON array: 400",
            json!({"op": "add"}),
            err(
                400,
                "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
            ),
        ),
        (
            "atomic",
            "a failing operation rejects the operations before it too",
            json!([{"op": "replace", "path": "/spec/replicas", "value": 9},
                   {"op": "test", "path": "/spec/replicas", "value": 2}]),
            err(422, "testing value /spec/replicas failed: test failed"),
        ),
    ];
    for (name, what, patch, want) in cases {
        let got = simplify(json_patch(&doc(), patch.to_string().as_bytes()));
        assert_eq!(got, want, "{name}: {what}");
    }
}

/// A failing operation answers upstream's generic 422 Status, not the
/// library text (`NewGenericServerResponse(422, …, isUnexpectedResponse=false)`).
#[test]
fn json_patch_failure_status_is_generic() {
    let e = json_patch(
        &doc(),
        br#"[{"op":"test","path":"/spec/replicas","value":3}]"#,
    )
    .expect_err("test fails");
    assert_eq!(
        (e.code, e.reason.as_str(), e.message.as_str()),
        (422, "Invalid", GENERIC_422)
    );
    let status = e.to_status();
    assert_eq!(status.reason.as_deref(), Some("Invalid"));
    // `NewGenericServerResponse` always fills `details` (empty here).
    assert_eq!(
        serde_json::to_value(&status.details).expect("details"),
        json!({})
    );
}

/// Undecodable JSON Patch documents: Go's `encoding/json` syntax errors,
/// 400 (upstream `TestJSONPatch` "invalid-syntax" and `jsonpatch.DecodePatch`).
#[test]
fn json_patch_syntax_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "invalid json patch",
            "invalid character 'i' looking for beginning of value",
        ),
        ("", "unexpected end of JSON input"),
        ("[{\"op\":\"add\"", "unexpected end of JSON input"),
        (
            "[{\"op\":\"add\",}]",
            "invalid character '}' looking for beginning of object key string",
        ),
        ("[] []", "invalid character '[' after top-level value"),
        (
            "[1]",
            "json: cannot unmarshal number into Go value of type jsonpatch.Operation",
        ),
    ];
    for (patch, want) in cases {
        let e = json_patch(&doc(), patch.as_bytes()).expect_err("undecodable");
        assert_eq!(
            (e.code, e.reason.as_str(), e.message.as_str()),
            (400, "BadRequest", *want),
            "patch {patch:?}"
        );
    }
}

/// More than 10000 operations is 413 (`maxJSONPatchOperations`).
#[test]
fn json_patch_too_many_operations() {
    let ops: Vec<Value> = (0..10001)
        .map(|_| json!({"op": "test", "path": "/spec/replicas", "value": 2}))
        .collect();
    let e = json_patch(&doc(), Value::Array(ops).to_string().as_bytes()).expect_err("too many");
    assert_eq!(e.code, 413);
    assert_eq!(
        e.message,
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    );
}

// ------------------------------------------------------------ merge patch

#[test]
fn merge_patch_cases() {
    let cases: Vec<(&str, &str, &str, Outcome)> = vec![
        (
            "null_deletes",
            "null removes a member",
            r#"{"metadata":{"labels":{"tier":null}}}"#,
            Ok(with_pod(|p| {
                p["metadata"]["labels"] = json!({"app": "web"});
            })),
        ),
        (
            "arrays_replace",
            "arrays are replaced, never merged",
            r#"{"metadata":{"finalizers":["c"]}}"#,
            Ok(with_pod(|p| p["metadata"]["finalizers"] = json!(["c"]))),
        ),
        (
            "new_object_pruned",
            "nulls inside a value that lands where there was none are dropped",
            r#"{"status":{"phase":"Running","reason":null}}"#,
            Ok(with_pod(|p| p["status"] = json!({"phase": "Running"}))),
        ),
        (
            "object_over_scalar",
            "an object replaces a scalar",
            r#"{"spec":{"tolerations":{"x":1}}}"#,
            Ok(with_pod(|p| p["spec"]["tolerations"] = json!({"x": 1}))),
        ),
        (
            "scalar_patch",
            "a patch that is not an object or array is Invalid JSON Patch (400)",
            "5",
            err(400, "Invalid JSON Patch"),
        ),
        (
            "not_json",
            "an undecodable patch is Invalid JSON Patch (400)",
            "{",
            err(400, "Invalid JSON Patch"),
        ),
    ];
    for (name, what, patch, want) in cases {
        assert_eq!(
            simplify(merge_patch(&pod(), patch.as_bytes())),
            want,
            "{name}: {what}"
        );
    }
}

fn with_pod(f: impl FnOnce(&mut Value)) -> Value {
    let mut p = pod();
    f(&mut p);
    p
}

/// A merge patch that turns `a` into `b` (RFC 7386 §3 inverse).
fn merge_diff(a: &Value, b: &Value) -> Value {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return b.clone();
    };
    let mut out = Map::new();
    for k in a.keys() {
        if !b.contains_key(k) {
            out.insert(k.clone(), Value::Null);
        }
    }
    for (k, bv) in b {
        match a.get(k) {
            Some(av) if av == bv => {}
            Some(av @ Value::Object(_)) if bv.is_object() => {
                out.insert(k.clone(), merge_diff(av, bv));
            }
            _ => {
                out.insert(k.clone(), bv.clone());
            }
        }
    }
    Value::Object(out)
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        (-5i64..5).prop_map(|i| json!(i)),
        "[a-c]{0,2}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-d]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-d]", json_value(), 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

proptest! {
    /// RFC 7386: applying the merge patch `diff(a, b)` to `a` yields `b`
    /// (for documents without nulls, which merge patch cannot express).
    #[test]
    fn merge_patch_of_diff_gives_target(a in json_object(), b in json_object()) {
        let patch = merge_diff(&a, &b).to_string();
        let got = merge_patch(&a, patch.as_bytes()).expect("merge patch applies");
        prop_assert_eq!(got, b);
    }
}

// ------------------------------------------------------- strategic merge

fn smp(ty: TypeRef<'_>, original: &Value, patch: Value) -> Outcome {
    simplify(strategic_merge_patch(
        ty,
        original,
        patch.to_string().as_bytes(),
    ))
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|i| i["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Containers merge by `name`: the patched container changes, the other
/// stays, live order is kept.
#[test]
fn smp_containers_merge_by_name() {
    let got = smp(
        POD,
        &pod(),
        json!({"spec": {"containers": [{"name": "b", "image": "y:2"}]}}),
    )
    .expect("patch applies");
    assert_eq!(names(&got["spec"]["containers"]), ["a", "b"]);
    assert_eq!(got["spec"]["containers"][1]["image"], "y:2");
    assert_eq!(got["spec"]["containers"][0], pod()["spec"]["containers"][0]);
}

/// `env` merges by `name` inside the container; a new item is placed before
/// the server-only ones (upstream's `mergeSortedSlice` takes patch items
/// first when the live list does not order them).
#[test]
fn smp_env_new_items_first() {
    let got = smp(
        POD,
        &pod(),
        json!({"spec": {"containers": [{"name": "a", "env": [{"name": "NEW", "value": "1"}]}]}}),
    )
    .expect("patch applies");
    assert_eq!(names(&got["spec"]["containers"][0]["env"]), ["NEW", "OLD"]);
}

/// Ports merge by `containerPort` (the SMP key; apply also keys on protocol).
#[test]
fn smp_ports_merge_by_container_port() {
    let got = smp(
        POD,
        &pod(),
        json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "http"}]}]}}),
    )
    .expect("patch applies");
    assert_eq!(
        got["spec"]["containers"][0]["ports"],
        json!([{"containerPort": 80, "protocol": "TCP", "name": "http"}])
    );
}

/// `metadata.finalizers` is a merge set: the union, patch items in patch
/// order, the server-only ones inserted by live order.
#[test]
fn smp_finalizers_set_merge_and_delete_from_primitive_list() {
    let got = smp(
        POD,
        &pod(),
        json!({"metadata": {"finalizers": ["c.example.com/f", "a.example.com/f"]}}),
    )
    .expect("patch applies");
    assert_eq!(
        got["metadata"]["finalizers"],
        json!(["c.example.com/f", "a.example.com/f", "b.example.com/f"])
    );
    let got = smp(
        POD,
        &pod(),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example.com/f"]}}),
    )
    .expect("patch applies");
    assert_eq!(got["metadata"]["finalizers"], json!(["b.example.com/f"]));
}

/// `$patch: delete` on a list item removes the item with that key;
/// `$patch: replace` replaces the list.
#[test]
fn smp_patch_directives_in_lists() {
    let got = smp(
        POD,
        &pod(),
        json!({"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}),
    )
    .expect("patch applies");
    assert_eq!(names(&got["spec"]["containers"]), ["b"]);
    let got = smp(
        POD,
        &pod(),
        json!({"spec": {"containers": [{"$patch": "replace"}, {"name": "c", "image": "z"}]}}),
    )
    .expect("patch applies");
    assert_eq!(
        got["spec"]["containers"],
        json!([{"name": "c", "image": "z"}])
    );
}

/// `$patch: replace` / `delete` on a map, and an unknown directive.
#[test]
fn smp_patch_directives_in_maps() {
    let got = smp(
        POD,
        &pod(),
        json!({"metadata": {"labels": {"$patch": "replace", "x": "1"}}}),
    )
    .expect("patch applies");
    assert_eq!(got["metadata"]["labels"], json!({"x": "1"}));
    let got = smp(
        POD,
        &pod(),
        json!({"metadata": {"labels": {"$patch": "delete"}}}),
    )
    .expect("patch applies");
    assert_eq!(got["metadata"]["labels"], json!({}));
    assert_eq!(
        smp(
            POD,
            &pod(),
            json!({"metadata": {"labels": {"$patch": "merge"}}})
        ),
        err(500, "unknown patch type: merge in map: map[$patch:merge]")
    );
    assert_eq!(
        smp(
            POD,
            &pod(),
            json!({"spec": {"containers": [{"$patch": "merge"}]}})
        ),
        err(500, "merging lists cannot yet be specified in the patch")
    );
}

/// `$setElementOrder/containers` reorders the merged list.
#[test]
fn smp_set_element_order() {
    let got = smp(
        POD,
        &pod(),
        json!({"spec": {
            "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
            "containers": [{"name": "a", "image": "x:2"}]
        }}),
    )
    .expect("patch applies");
    assert_eq!(names(&got["spec"]["containers"]), ["b", "a"]);
    assert_eq!(got["spec"]["containers"][1]["image"], "x:2");
}

/// `$retainKeys` clears the keys it does not list (switching a volume's
/// source), and every patched key must be listed (400 otherwise).
#[test]
fn smp_retain_keys() {
    let got = smp(
        POD,
        &pod(),
        json!({"spec": {"volumes": [{"name": "v", "hostPath": {"path": "/x"}, "$retainKeys": ["name", "hostPath"]}]}}),
    )
    .expect("patch applies");
    assert_eq!(
        got["spec"]["volumes"],
        json!([{"name": "v", "hostPath": {"path": "/x"}}])
    );
    assert_eq!(
        smp(
            POD,
            &pod(),
            json!({"spec": {"volumes": [{"name": "v", "hostPath": {"path": "/x"}, "$retainKeys": ["name"]}]}})
        ),
        err(400, "invalid patch format of retainKeys")
    );
}

/// Lists without merge metadata (`tolerations`) are replaced; `null`
/// deletes; `ownerReferences` merge by `uid`; `evictionResponders` by
/// `name`.
#[test]
fn smp_replace_null_and_keys() {
    let got = smp(
        POD,
        &pod(),
        json!({
            "metadata": {"labels": {"tier": null},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "n1"}]},
            "spec": {"tolerations": [{"key": "k2", "operator": "Exists"}],
                     "evictionResponders": [{"name": "a.example.com/r", "priority": 15000}]}
        }),
    )
    .expect("patch applies");
    assert_eq!(
        got["spec"]["tolerations"],
        json!([{"key": "k2", "operator": "Exists"}])
    );
    assert_eq!(got["metadata"]["labels"], json!({"app": "web"}));
    let uids: Vec<&str> = got["metadata"]["ownerReferences"]
        .as_array()
        .expect("list")
        .iter()
        .map(|o| o["uid"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(uids, ["n1", "j1"]);
    assert_eq!(
        got["spec"]["evictionResponders"],
        json!([{"name": "a.example.com/r", "priority": 15000}, {"name": "b.example.com/r", "priority": 20000}])
    );
}

/// Eviction `status.conditions` merge by `type`.
#[test]
fn smp_eviction_conditions_by_type() {
    let eviction = json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
        "metadata": {"name": "e", "namespace": "default"},
        "status": {"conditions": [
            {"type": "Failed", "status": "False", "reason": "AwaitingEviction"},
            {"type": "TargetEvicted", "status": "False", "reason": "AwaitingEviction"}
        ]}
    });
    let got = smp(
        EVICTION,
        &eviction,
        json!({"status": {"conditions": [{"type": "TargetEvicted", "status": "True", "reason": "PodDeleted"}]}}),
    )
    .expect("patch applies");
    assert_eq!(
        got["status"]["conditions"],
        json!([
            {"type": "Failed", "status": "False", "reason": "AwaitingEviction"},
            {"type": "TargetEvicted", "status": "True", "reason": "PodDeleted"}
        ])
    );
}

/// A merge-keyed item without its key is the library's error (500), an
/// unregistered type is 415 with the media types upstream accepts for it.
#[test]
fn smp_errors() {
    assert_eq!(
        smp(
            POD,
            &pod(),
            json!({"spec": {"containers": [{"image": "q"}]}})
        ),
        err(
            500,
            "map: map[image:q] does not contain declared merge key: name"
        )
    );
    assert_eq!(
        smp(
            TypeRef {
                group: "example.com",
                kind: "Widget"
            },
            &pod(),
            json!({})
        ),
        err(
            415,
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        )
    );
    assert_eq!(
        smp(
            POD,
            &pod(),
            json!({"metadata": {"$deleteFromPrimitiveListfinalizers": ["x"]}})
        ),
        err(400, "invalid patch format of primitive list")
    );
}

/// Strategic merge patch failures case by case, as kube-apiserver answers
/// them: `interpretStrategicMergePatchError` turns the `mergepatch` sentinel
/// errors into 400 `BadRequest` (malformed directives) and every other
/// library error passes through as a plain Go error — 500 with no reason
/// and the library's text (`ErrBadPatchType`, `ErrNoMergeKey`,
/// `ErrBadArgType`, …, formatted with Go's `%s`/`%v`). `(name, patch,
/// status, message)`.
#[test]
fn smp_error_table() {
    let cases: Vec<(&str, Value, u16, &str)> = vec![
        (
            "unknown directive on the object",
            json!({"$patch": "bogus"}),
            500,
            "unknown patch type: bogus in map: map[$patch:bogus]",
        ),
        (
            "unknown directive in a map",
            json!({"metadata": {"labels": {"$patch": "bogus", "x": "1"}}}),
            500,
            "unknown patch type: bogus in map: map[$patch:bogus x:1]",
        ),
        (
            "a null directive prints as Go's %s of nil",
            json!({"metadata": {"labels": {"$patch": null}}}),
            500,
            "unknown patch type: %!s(<nil>) in map: map[$patch:<nil>]",
        ),
        (
            "a number directive",
            json!({"metadata": {"labels": {"$patch": 1}}}),
            500,
            "unknown patch type: %!s(int64=1) in map: map[$patch:1]",
        ),
        (
            "a map directive prints element by element",
            json!({"metadata": {"labels": {"$patch": {"a": 1, "b": "c"}}}}),
            500,
            "unknown patch type: map[a:%!s(int64=1) b:c] in map: map[$patch:map[a:1 b:c]]",
        ),
        (
            "a list directive",
            json!({"metadata": {"labels": {"$patch": ["x", true]}}}),
            500,
            "unknown patch type: [x %!s(bool=true)] in map: map[$patch:[x true]]",
        ),
        (
            "a container without its merge key",
            json!({"spec": {"containers": [{"image": "q"}]}}),
            500,
            "map: map[image:q] does not contain declared merge key: name",
        ),
        (
            "an unknown directive on a list item",
            json!({"spec": {"containers": [{"$patch": "bogus", "name": "a"}]}}),
            500,
            "unknown patch type: bogus in map: map[$patch:bogus name:a]",
        ),
        (
            "a delete item without its merge key",
            json!({"spec": {"containers": [{"$patch": "delete"}]}}),
            500,
            "map: map[$patch:delete] does not contain declared merge key: name",
        ),
        (
            "a merge directive on a list item",
            json!({"spec": {"containers": [{"$patch": "merge", "name": "a"}]}}),
            500,
            "merging lists cannot yet be specified in the patch",
        ),
        (
            "$setElementOrder that is not a list",
            json!({"spec": {"$setElementOrder/containers": "garbage"}}),
            500,
            "expected a []interface {}, but received a string",
        ),
        (
            "$setElementOrder null (reflect.TypeOf(nil) prints %!s(<nil>))",
            json!({"spec": {"$setElementOrder/containers": null}}),
            500,
            "expected a []interface {}, but received a %!s(<nil>)",
        ),
        (
            "$setElementOrder of strings for a list of maps",
            json!({"spec": {"$setElementOrder/containers": ["a"]}}),
            500,
            "value for key 0 is not a map.",
        ),
        (
            "$setElementOrder items without the merge key",
            json!({"spec": {"$setElementOrder/containers": [{"image": "x"}],
                            "containers": [{"name": "a", "image": "x:2"}]}}),
            500,
            "map: map[image:x] does not contain declared merge key: name",
        ),
        (
            "$setElementOrder of a field that is not a list",
            json!({"$setElementOrder/metadata": []}),
            500,
            "expected a []interface {}, but received a map[string]interface {}",
        ),
        (
            "$setElementOrder without the field name (the type is checked first)",
            json!({"spec": {"$setElementOrdercontainers": "x"}}),
            500,
            "expected a []interface {}, but received a string",
        ),
        (
            "$setElementOrder without the field name",
            json!({"spec": {"$setElementOrdercontainers": []}}),
            400,
            "invalid patch format of setElementOrder list",
        ),
        (
            "$retainKeys that is not a list",
            json!({"spec": {"volumes": [{"name": "v", "$retainKeys": "hostPath"}]}}),
            400,
            "invalid patch format of retainKeys",
        ),
        (
            "$retainKeys missing a patched key",
            json!({"spec": {"volumes": [{"name": "v", "hostPath": {"path": "/x"}, "$retainKeys": ["name"]}]}}),
            400,
            "invalid patch format of retainKeys",
        ),
        (
            "$deleteFromPrimitiveList without the field name",
            json!({"metadata": {"$deleteFromPrimitiveListfinalizers": ["x"]}}),
            400,
            "invalid patch format of primitive list",
        ),
        (
            "a merge list of strings patched with maps",
            json!({"metadata": {"finalizers": [{"a": 1}]}}),
            500,
            "list element types are not identical: [[a.example.com/f b.example.com/f] [map[a:1]]]",
        ),
        (
            "a patch that is not an object",
            json!([1]),
            400,
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
        ),
    ];
    for (name, patch, code, message) in cases {
        let e = strategic_merge_patch(POD, &pod(), patch.to_string().as_bytes()).expect_err(name);
        let reason = match code {
            400 => "BadRequest",
            _ => "",
        };
        assert_eq!(
            (e.code, e.reason.as_str(), e.message.as_str()),
            (code, reason, message),
            "{name}"
        );
        // A plain Go error's Status has no reason and no details.
        let status = e.to_status();
        assert_eq!(status.reason.is_none(), reason.is_empty(), "{name}");
        assert!(status.details.is_none(), "{name}");
    }
}

/// Just enough of the Pod's Go types for the lookups a `$setElementOrder`
/// list makes.
struct PodTypes;

impl GoTypes for PodTypes {
    fn field(&self, definition: &str, name: &str) -> GoField<'_> {
        match (definition, name) {
            ("v1.Pod", "metadata") => GoField::Struct("v1.ObjectMeta"),
            ("v1.Pod", "spec") => GoField::Struct("v1.PodSpec"),
            ("v1.ObjectMeta", "labels") => GoField::Map(None),
            ("v1.ObjectMeta", "finalizers") => GoField::List(None),
            ("v1.ObjectMeta", "name") => GoField::Scalar,
            ("v1.PodSpec", "containers") => GoField::List(Some("v1.Container")),
            ("v1.PodSpec", "nodeName") => GoField::Scalar,
            ("v1.Container", "env") => GoField::List(Some("v1.EnvVar")),
            ("v1.Container", "name" | "image") => GoField::Scalar,
            _ => GoField::Unknown,
        }
    }
}

/// With the kind's Go types known, a `$setElementOrder/<field>` must name a
/// list field of the struct it is in (`LookupPatchMetadataForSlice`): 500
/// with upstream's texts otherwise; without them nothing is checked.
#[test]
fn smp_set_element_order_field_lookup() {
    let typed = |patch: Value| {
        strategic_merge_patch_typed(
            POD,
            &pod(),
            patch.to_string().as_bytes(),
            &PodTypes,
            "v1.Pod",
        )
        .map_err(|e| (e.code, e.reason, e.message))
    };
    for (patch, message) in [
        (
            json!({"spec": {"$setElementOrder/bogus": []}}),
            "unable to find api field in struct PodSpec for the json field \"bogus\"",
        ),
        (
            json!({"spec": {"$setElementOrder/nodeName": []}}),
            "expected slice or array type, but got: struct",
        ),
        (
            json!({"metadata": {"labels": {"$setElementOrder/x": []}}}),
            "expected slice or array type, but got: map",
        ),
        (
            json!({"spec": {"containers": [{"name": "a", "$setElementOrder/bogus": []}]}}),
            "unable to find api field in struct Container for the json field \"bogus\"",
        ),
    ] {
        assert_eq!(
            typed(patch.clone()),
            Err((500, String::new(), message.to_owned())),
            "{patch}"
        );
        assert!(smp(POD, &pod(), patch.clone()).is_ok(), "untyped: {patch}");
    }
    let got = typed(json!({"spec": {"containers": [{"name": "a",
        "$setElementOrder/env": [{"name": "NEW"}, {"name": "OLD"}],
        "env": [{"name": "NEW", "value": "1"}]}]}}))
    .expect("a list field orders");
    assert_eq!(names(&got["spec"]["containers"][0]["env"]), ["NEW", "OLD"]);
}

/// A strategic merge patch body that is not JSON: Go's syntax error, 400
/// (upstream `TestStrategicMergePatchInvalid`).
#[test]
fn smp_syntax_errors() {
    for (patch, want) in [
        (
            "barbaz",
            "invalid character 'b' looking for beginning of value",
        ),
        ("{\"spec\":", "unexpected end of JSON input"),
        (
            "{\"spec\":{}}}",
            "invalid character '}' after top-level value",
        ),
    ] {
        let e = strategic_merge_patch(POD, &pod(), patch.as_bytes()).expect_err(patch);
        assert_eq!(
            (e.code, e.reason.as_str(), e.message.as_str()),
            (400, "BadRequest", want)
        );
    }
}

/// Directive misuse that upstream accepts: `$deleteFromPrimitiveList/` on
/// a list without `patchStrategy:"merge"` replaces it with the listed items
/// (`mergeSliceHandler` only merges merge-strategy lists); on a value that
/// is not a list, or a field the object lacks, it does nothing; `null`
/// patches nothing.
#[test]
fn smp_directive_misuse_accepted() {
    let got = smp(
        POD,
        &pod(),
        json!({"spec": {"$deleteFromPrimitiveList/tolerations": [{"key": "k9"}]}}),
    )
    .expect("patch applies");
    assert_eq!(got["spec"]["tolerations"], json!([{"key": "k9"}]));
    for patch in [
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": "a.example.com/f"}}),
        json!({"spec": {"$deleteFromPrimitiveList/nodeSelector": ["x"]}}),
        Value::Null,
    ] {
        assert_eq!(smp(POD, &pod(), patch.clone()), Ok(pod()), "{patch}");
    }
}

// ------------------------------------------------------ server-side apply

fn fields_of(obj: &Value, manager: &str) -> Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .find(|e| e["manager"] == manager)
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or(Value::Null)
}

fn managers(obj: &Value) -> Vec<(String, String)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or_default().to_owned(),
                        e["operation"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

const SMALL_POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: default
  labels:
    app: web
spec:
  containers:
  - name: c
    image: nginx
    ports:
    - containerPort: 80
";

/// Apply to a missing object creates it; the entry is `Apply` with the
/// exact `fieldsV1` upstream writes (struct fields are not members, list
/// items are, ports keyed by containerPort and the defaulted protocol).
#[test]
fn ssa_create_small_pod_fields_v1() {
    let got = server_side_apply(POD, None, SMALL_POD.as_bytes(), "kubectl", false, now())
        .expect("apply creates");
    assert_eq!(got["spec"]["containers"][0]["image"], "nginx");
    assert_eq!(
        got["metadata"]["managedFields"],
        json!([{
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": "2026-07-01T12:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {
                    ".": {}, "f:image": {}, "f:name": {},
                    "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                        ".": {}, "f:containerPort": {}
                    }}
                }}}
            }
        }])
    );
}

/// A second apply updates values it owns, and removes fields it applied
/// before but no longer applies.
#[test]
fn ssa_update_and_remove_unapplied_field() {
    let v1 = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, labels: {app: web, tier: front}}\nspec: {containers: [{name: c, image: nginx}]}\n";
    let v2 = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, labels: {app: web}}\nspec: {containers: [{name: c, image: nginx:2}]}\n";
    let live = server_side_apply(POD, None, v1.as_bytes(), "ci", false, now()).expect("create");
    let got =
        server_side_apply(POD, Some(&live), v2.as_bytes(), "ci", false, now()).expect("update");
    assert_eq!(got["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(got["spec"]["containers"][0]["image"], "nginx:2");
    assert_eq!(
        fields_of(&got, "ci")["f:metadata"],
        json!({"f:labels": {"f:app": {}}})
    );
}

/// A field the applier no longer applies stays when another manager owns it.
#[test]
fn ssa_unapplied_field_kept_when_owned_by_another() {
    let v1 = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: web, tier: front}}\n";
    let other = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {tier: front}}\n";
    let v2 = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: web}}\n";
    let live = server_side_apply(POD, None, v1.as_bytes(), "a", false, now()).expect("create");
    let live = server_side_apply(POD, Some(&live), other.as_bytes(), "b", false, now())
        .expect("b applies");
    let got =
        server_side_apply(POD, Some(&live), v2.as_bytes(), "a", false, now()).expect("a again");
    assert_eq!(
        got["metadata"]["labels"],
        json!({"app": "web", "tier": "front"})
    );
    assert_eq!(
        fields_of(&got, "b"),
        json!({"f:metadata": {"f:labels": {"f:tier": {}}}})
    );
}

fn lease(holder: &str) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "l", "namespace": "default"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15}
    })
}

/// A lease written by an update manager, as the REST layer records it.
fn created_lease(manager: &str, mut obj: Value) -> Value {
    record_update(LEASE, None, &mut obj, manager, None, now());
    obj["metadata"]["uid"] = json!("u1");
    obj
}

const APPLY_HOLDER_B: &str = "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l, namespace: default}\nspec: {holderIdentity: b}\n";

/// Changing a field another manager owns is a 409 with upstream's message
/// and one `FieldManagerConflict` cause per field.
#[test]
fn ssa_conflict() {
    let live = created_lease("kube-controller-manager", lease("a"));
    let e = server_side_apply(
        LEASE,
        Some(&live),
        APPLY_HOLDER_B.as_bytes(),
        "leader",
        false,
        now(),
    )
    .expect_err("conflict");
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"kube-controller-manager\" using coordination.k8s.io/v1: .spec.holderIdentity"
    );
    assert_eq!(e.causes.len(), 1);
    assert_eq!(e.causes[0].reason, "FieldManagerConflict");
    assert_eq!(e.causes[0].field, ".spec.holderIdentity");
    assert_eq!(
        e.causes[0].message,
        "conflict with \"kube-controller-manager\" using coordination.k8s.io/v1"
    );
}

/// Several conflicts are grouped by manager, one path per line.
#[test]
fn ssa_conflicts_message() {
    let live = created_lease("kcm", lease("a"));
    let apply = "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l, namespace: default}\nspec: {holderIdentity: b, leaseDurationSeconds: 30}\n";
    let e = server_side_apply(LEASE, Some(&live), apply.as_bytes(), "leader", false, now())
        .expect_err("conflicts");
    assert_eq!(
        e.message,
        "Apply failed with 2 conflicts: conflicts with \"kcm\" using coordination.k8s.io/v1:\n- .spec.holderIdentity\n- .spec.leaseDurationSeconds"
    );
}

/// `force` takes ownership: the value changes and the other manager loses
/// the field (and its entry when it owned nothing else).
#[test]
fn ssa_force_transfers_ownership() {
    let live = created_lease("kcm", lease("a"));
    let got = server_side_apply(
        LEASE,
        Some(&live),
        APPLY_HOLDER_B.as_bytes(),
        "leader",
        true,
        now(),
    )
    .expect("forced");
    assert_eq!(got["spec"]["holderIdentity"], "b");
    assert_eq!(
        fields_of(&got, "kcm"),
        json!({"f:spec": {"f:leaseDurationSeconds": {}}})
    );
    assert_eq!(
        fields_of(&got, "leader"),
        json!({"f:spec": {"f:holderIdentity": {}}})
    );
}

/// Applying the value another manager set is no conflict: both own it.
#[test]
fn ssa_same_value_shares_ownership() {
    let live = created_lease("kcm", lease("b"));
    let got = server_side_apply(
        LEASE,
        Some(&live),
        APPLY_HOLDER_B.as_bytes(),
        "leader",
        false,
        now(),
    )
    .expect("no conflict");
    assert_eq!(got["spec"], lease("b")["spec"]);
    assert_eq!(
        managers(&got),
        [
            ("leader".to_owned(), "Apply".to_owned()),
            ("kcm".to_owned(), "Update".to_owned())
        ]
    );
    assert!(fields_of(&got, "kcm")["f:spec"]["f:holderIdentity"].is_object());
}

/// `kubectl apply --server-side` over a client-side-applied object: the
/// conflicts with values still matching the last-applied annotation are
/// allowed (upgrade path), and the annotation follows the applied config;
/// another manager name still conflicts.
#[test]
fn ssa_kubectl_upgrades_client_side_apply() {
    let mut obj = lease("a");
    let last = "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"annotations\":{},\"name\":\"l\",\"namespace\":\"default\"},\"spec\":{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":15}}\n";
    obj["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": last});
    let live = created_lease("kubectl-client-side-apply", obj);
    let e = server_side_apply(
        LEASE,
        Some(&live),
        APPLY_HOLDER_B.as_bytes(),
        "other",
        false,
        now(),
    )
    .expect_err("other conflicts");
    assert!(e.message.contains("conflict with \"kubectl-client-side-apply\" using coordination.k8s.io/v1: .spec.holderIdentity"), "{}", e.message);
    let got = server_side_apply(
        LEASE,
        Some(&live),
        APPLY_HOLDER_B.as_bytes(),
        "kubectl",
        false,
        now(),
    )
    .expect("kubectl upgrades");
    assert_eq!(got["spec"]["holderIdentity"], "b");
    assert_eq!(
        got["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
        "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"l\",\"namespace\":\"default\"},\"spec\":{\"holderIdentity\":\"b\"}}\n"
    );
}

/// Apply errors: wrong kind (400 `invalid object type`), managedFields in
/// the body (400), duplicate list keys (500), undecodable YAML (400).
#[test]
fn ssa_errors() {
    let cases: Vec<(&str, &str, (u16, &str))> = vec![
        (
            "wrong_kind",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: l}\n",
            (400, "invalid object type: /v1, Kind=Pod"),
        ),
        (
            "managed_fields",
            "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l, managedFields: []}\n",
            (400, "metadata.managedFields must be nil"),
        ),
    ];
    for (name, body, (code, message)) in cases {
        let e = server_side_apply(LEASE, None, body.as_bytes(), "m", false, now()).expect_err(name);
        assert_eq!((e.code, e.message.as_str()), (code, message), "{name}");
    }
    let dup = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, image: a}, {name: c, image: b}]}\n";
    let e = server_side_apply(POD, None, dup.as_bytes(), "m", false, now()).expect_err("duplicate");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            500,
            "failed to create typed patch object (default/p; /v1, Kind=Pod): .spec.containers: duplicate entries for key [name=\"c\"]"
        )
    );
    let e = server_side_apply(POD, None, b"a: [b", "m", false, now()).expect_err("bad yaml");
    assert_eq!(e.code, 400);
    assert!(
        e.message.starts_with("error decoding YAML: "),
        "{}",
        e.message
    );
}

/// Apply to `/status` records the subresource and owns only status fields
/// (the spec it restates is not owned).
#[test]
fn ssa_status_subresource() {
    let live = json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
        "metadata": {"name": "e", "namespace": "default", "uid": "u"},
        "spec": {"target": {"pod": {"name": "p", "uid": "u2"}}}
    });
    let body = "apiVersion: lifecycle.k8s.io/v1alpha1\nkind: Eviction\nmetadata: {name: e, namespace: default}\nspec: {target: {pod: {name: p, uid: u2}}}\nstatus:\n  responders:\n  - name: a.example.com/r\n    heartbeatTime: \"2026-07-01T12:00:00Z\"\n";
    let got = server_side_apply_subresource(
        EVICTION,
        Some(&live),
        body.as_bytes(),
        "responder",
        Some("status"),
        true,
        now(),
    )
    .expect("status apply");
    let entries = got["metadata"]["managedFields"]
        .as_array()
        .expect("entries");
    let mine = entries
        .iter()
        .find(|e| e["manager"] == "responder")
        .expect("responder entry");
    assert_eq!(mine["subresource"], "status");
    assert_eq!(
        mine["fieldsV1"],
        json!({"f:status": {"f:responders": {"k:{\"name\":\"a.example.com/r\"}": {".": {}, "f:heartbeatTime": {}, "f:name": {}}}}})
    );
    // `/status` ignores spec and metadata: the untracked object's other
    // fields give before-first-apply nothing to own.
    assert_eq!(entries.len(), 1);
}

// ---------------------------------------------------------- record_update

/// A create assigns every field to the creating `Update` manager; a later
/// update moves the changed field to its writer, and the next apply sees
/// that ownership.
#[test]
fn record_update_ownership() {
    let mut created = lease("a");
    record_update(LEASE, None, &mut created, "creator", None, now());
    assert_eq!(
        created["metadata"]["managedFields"],
        json!([{
            "manager": "creator", "operation": "Update", "apiVersion": "coordination.k8s.io/v1",
            "time": "2026-07-01T12:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:holderIdentity": {}, "f:leaseDurationSeconds": {}}}
        }])
    );
    created["metadata"]["uid"] = json!("u1");
    let later: jiff::Timestamp = "2026-07-01T12:05:00Z".parse().expect("timestamp");
    let mut updated = created.clone();
    updated["spec"]["holderIdentity"] = json!("z");
    record_update(LEASE, Some(&created), &mut updated, "renewer", None, later);
    assert_eq!(
        fields_of(&updated, "creator"),
        json!({"f:spec": {"f:leaseDurationSeconds": {}}})
    );
    assert_eq!(
        fields_of(&updated, "renewer"),
        json!({"f:spec": {"f:holderIdentity": {}}})
    );
    let renewer = updated["metadata"]["managedFields"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["manager"] == "renewer")
        .expect("renewer")
        .clone();
    assert_eq!(renewer["time"], "2026-07-01T12:05:00Z");
    let e = server_side_apply(
        LEASE,
        Some(&updated),
        APPLY_HOLDER_B.as_bytes(),
        "leader",
        false,
        later,
    )
    .expect_err("renewer owns holderIdentity");
    assert!(
        e.message
            .contains("\"renewer\" using coordination.k8s.io/v1"),
        "{}",
        e.message
    );
}

/// A created pod's `Update` entry: maps and granular lists that appear are
/// members (`.`) like upstream's `f:labels` and `f:ports`; struct fields and
/// `containers` (never omitted in upstream's typed pod) are not.
#[test]
fn record_update_pod_create_fields_v1() {
    let mut created: Value = serde_saphyr::from_str(SMALL_POD).expect("yaml");
    record_update(POD, None, &mut created, "kubectl-create", None, now());
    assert_eq!(
        fields_of(&created, "kubectl-create"),
        json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {
                ".": {}, "f:image": {}, "f:name": {},
                "f:ports": {".": {}, "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                    ".": {}, "f:containerPort": {}
                }}
            }}}
        })
    );
}

/// An existing object nobody tracks stays untracked on update
/// (skip-non-applied), and a no-op update keeps the entry's old time.
#[test]
fn record_update_untracked_and_noop() {
    let mut old = lease("a");
    old["metadata"]["uid"] = json!("u1");
    let mut new = lease("b");
    new["metadata"]["uid"] = json!("u1");
    record_update(LEASE, Some(&old), &mut new, "w", None, now());
    assert!(new["metadata"].get("managedFields").is_none());

    let tracked = created_lease("creator", lease("a"));
    let mut same = tracked.clone();
    let later: jiff::Timestamp = "2026-07-01T13:00:00Z".parse().expect("timestamp");
    record_update(LEASE, Some(&tracked), &mut same, "creator", None, later);
    assert_eq!(
        same["metadata"]["managedFields"],
        tracked["metadata"]["managedFields"]
    );
}

/// kube-rs sends apply bodies as JSON (valid YAML); timestamps stay strings
/// and integers stay integers, quoted or not.
#[test]
fn ssa_json_body_and_yaml_scalars() {
    let json_body = r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l","namespace":"default"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15,"renewTime":"2026-07-01T12:00:00.000000Z"}}"#;
    let got = server_side_apply(LEASE, None, json_body.as_bytes(), "leader", true, now())
        .expect("json apply");
    assert_eq!(got["spec"]["renewTime"], "2026-07-01T12:00:00.000000Z");
    assert_eq!(got["spec"]["leaseDurationSeconds"], 15);
    let yaml_body = "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l, namespace: default}\nspec:\n  renewTime: 2026-07-01T12:00:00.000000Z\n  leaseDurationSeconds: 15\n";
    let got = server_side_apply(
        LEASE,
        Some(&got),
        yaml_body.as_bytes(),
        "leader",
        true,
        now(),
    )
    .expect("yaml apply");
    assert_eq!(got["spec"]["renewTime"], "2026-07-01T12:00:00.000000Z");
    assert!(
        got["spec"].get("holderIdentity").is_none(),
        "no longer applied: pruned"
    );
}
