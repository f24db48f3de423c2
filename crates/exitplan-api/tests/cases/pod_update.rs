//! `TestValidatePodUpdate` (upstream's `pkg/apis/core/validation`), through
//! the Pod strategy: the stored pod (defaults and `PrepareForCreate`), then
//! the submitted new pod through defaults, `PrepareForUpdate` and
//! `ValidatePodUpdate`. Every error is listed; a body ending in `…` is the
//! forbidden-change message, whose spec diff follows.

use exitplan_api::core::pod::PodStrategy;
use exitplan_api::field::ErrorType::{Forbidden, Invalid, NotSupported, Required};
use serde_json::{Value, json};

use crate::pod_fixture::{Want, check, stored, submitted, update_errors};

/// The forbidden-change error (`spec: Forbidden: pod updates may not change …`).
const SPEC_CHANGE: Want = (
    Forbidden,
    "spec",
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n  core.PodSpec{…",
);

/// One row: old metadata and spec, new metadata and spec, expected errors.
type Row = (&'static str, Value, Value, Value, Value, Vec<Want>);

fn run(rows: Vec<Row>) {
    for (name, old_meta, old_spec, new_meta, new_spec, want) in rows {
        let old = stored(old_meta, old_spec);
        let mut new = submitted(new_meta, new_spec);
        new.metadata.resource_version = Some("1".into());
        check(name, &update_errors::<PodStrategy>(&mut new, &old), &want);
    }
}

fn none() -> Value {
    json!({})
}

fn ctrs(list: &[(&str, &str)]) -> Value {
    Value::Array(
        list.iter()
            .map(|(n, i)| json!({"name": n, "image": i}))
            .collect(),
    )
}

#[test]
fn metadata_and_containers() {
    let now = "2026-12-05T10:00:00Z";
    run(vec![
        ("nothing", none(), none(), none(), none(), vec![]),
        (
            "ids",
            json!({"name": "bar"}),
            none(),
            json!({"name": "foo"}),
            none(),
            vec![(
                Invalid,
                "metadata.name",
                "Invalid value: \"foo\": field is immutable",
            )],
        ),
        (
            "labels",
            json!({"labels": {"bar": "foo"}}),
            none(),
            json!({"labels": {"foo": "bar"}}),
            none(),
            vec![],
        ),
        (
            "annotations",
            json!({"annotations": {"bar": "foo"}}),
            none(),
            json!({"annotations": {"foo": "bar"}}),
            none(),
            vec![],
        ),
        (
            "less containers",
            none(),
            json!({"containers": ctrs(&[("foo", "foo:V1"), ("bar", "bar:V1")])}),
            none(),
            json!({"containers": ctrs(&[("foo", "foo:V2")])}),
            vec![(
                Forbidden,
                "spec.containers",
                "Forbidden: pod updates may not add or remove containers",
            )],
        ),
        (
            "more containers",
            none(),
            json!({"containers": ctrs(&[("foo", "foo:V1")])}),
            none(),
            json!({"containers": ctrs(&[("foo", "foo:V2"), ("bar", "bar:V2")])}),
            vec![(
                Forbidden,
                "spec.containers",
                "Forbidden: pod updates may not add or remove containers",
            )],
        ),
        (
            "more init containers",
            none(),
            json!({"initContainers": ctrs(&[("foo", "foo:V1"), ("bar", "bar:V1")])}),
            none(),
            json!({"initContainers": ctrs(&[("foo", "foo:V2")])}),
            vec![(
                Forbidden,
                "spec.initContainers",
                "Forbidden: pod updates may not add or remove containers",
            )],
        ),
        (
            "deletion timestamp added",
            none(),
            none(),
            json!({"deletionTimestamp": now}),
            none(),
            vec![(
                Invalid,
                "metadata.deletionTimestamp",
                "Invalid value: \"2026-12-05T10:00:00Z\": field is immutable",
            )],
        ),
        (
            "deletion grace period seconds changed",
            json!({"deletionTimestamp": now, "deletionGracePeriodSeconds": 31}),
            none(),
            json!({"deletionTimestamp": now, "deletionGracePeriodSeconds": 30}),
            none(),
            vec![(
                Invalid,
                "metadata.deletionGracePeriodSeconds",
                "Invalid value: 30: field is immutable",
            )],
        ),
        (
            "image change",
            none(),
            json!({"containers": ctrs(&[("container", "foo:V2")])}),
            none(),
            json!({"containers": ctrs(&[("container", "foo:V1")])}),
            vec![],
        ),
        (
            "init container image change",
            none(),
            json!({"initContainers": ctrs(&[("container", "foo:V2")])}),
            none(),
            json!({"initContainers": ctrs(&[("container", "foo:V1")])}),
            vec![],
        ),
        (
            "image change to empty",
            none(),
            json!({"containers": ctrs(&[("container", "foo:V2")])}),
            none(),
            // The client sends back the pull policy it read.
            json!({"containers": [{"name": "container", "image": "", "imagePullPolicy": "IfNotPresent"}]}),
            vec![
                (Required, "spec.containers[0].image", "Required value"),
                (Required, "spec.containers[0].image", "Required value"),
            ],
        ),
        (
            "init container image change to empty",
            none(),
            json!({"initContainers": ctrs(&[("container", "foo:V2")])}),
            none(),
            json!({"initContainers": [{"name": "container", "image": "", "imagePullPolicy": "IfNotPresent"}]}),
            vec![
                (Required, "spec.initContainers[0].image", "Required value"),
                (Required, "spec.initContainers[0].image", "Required value"),
            ],
        ),
        (
            "ephemeralContainer changes are not allowed via normal pod update",
            none(),
            none(),
            none(),
            json!({"ephemeralContainers": [{"name": "ephemeral", "image": "busybox"}]}),
            vec![SPEC_CHANGE],
        ),
        (
            "added mirror pod annotation",
            none(),
            json!({"nodeName": "foo"}),
            json!({"annotations": {"kubernetes.io/config.mirror": ""}}),
            json!({"nodeName": "foo"}),
            vec![(
                Forbidden,
                "metadata.annotations[kubernetes.io/config.mirror]",
                "Forbidden: may not add mirror pod annotation",
            )],
        ),
        (
            "removed mirror pod annotation",
            json!({"annotations": {"kubernetes.io/config.mirror": ""}}),
            json!({"nodeName": "foo"}),
            none(),
            json!({"nodeName": "foo"}),
            vec![(
                Forbidden,
                "metadata.annotations[kubernetes.io/config.mirror]",
                "Forbidden: may not remove or update mirror pod annotation",
            )],
        ),
        (
            "changed mirror pod annotation",
            json!({"annotations": {"kubernetes.io/config.mirror": "bar"}}),
            json!({"nodeName": "foo"}),
            json!({"annotations": {"kubernetes.io/config.mirror": "foo"}}),
            json!({"nodeName": "foo"}),
            vec![(
                Forbidden,
                "metadata.annotations[kubernetes.io/config.mirror]",
                "Forbidden: may not remove or update mirror pod annotation",
            )],
        ),
    ]);
}

#[test]
fn active_deadline_seconds() {
    let ads = |v: i64| json!({ "activeDeadlineSeconds": v });
    run(vec![
        ("no change, nil", none(), none(), none(), none(), vec![]),
        ("no change, set", none(), ads(30), none(), ads(30), vec![]),
        (
            "to positive from nil",
            none(),
            none(),
            none(),
            ads(30),
            vec![],
        ),
        (
            "to smaller positive",
            none(),
            ads(31),
            none(),
            ads(30),
            vec![],
        ),
        (
            "to larger positive",
            none(),
            ads(30),
            none(),
            ads(31),
            vec![(
                Invalid,
                "spec.activeDeadlineSeconds",
                "Invalid value: 31: must be less than or equal to previous value",
            )],
        ),
        (
            "to negative from nil",
            none(),
            none(),
            none(),
            ads(-30),
            vec![
                (
                    Invalid,
                    "spec.activeDeadlineSeconds",
                    "Invalid value: -30: must be between 1 and 2147483647, inclusive",
                ),
                (
                    Invalid,
                    "spec.activeDeadlineSeconds",
                    "Invalid value: -30: must be between 0 and 2147483647, inclusive",
                ),
            ],
        ),
        (
            "to negative from positive",
            none(),
            ads(30),
            none(),
            ads(-30),
            vec![
                (
                    Invalid,
                    "spec.activeDeadlineSeconds",
                    "Invalid value: -30: must be between 1 and 2147483647, inclusive",
                ),
                (
                    Invalid,
                    "spec.activeDeadlineSeconds",
                    "Invalid value: -30: must be between 0 and 2147483647, inclusive",
                ),
            ],
        ),
        (
            "to zero from positive",
            none(),
            ads(30),
            none(),
            ads(0),
            vec![(
                Invalid,
                "spec.activeDeadlineSeconds",
                "Invalid value: 0: must be between 1 and 2147483647, inclusive",
            )],
        ),
        (
            "to zero from nil",
            none(),
            none(),
            none(),
            ads(0),
            vec![(
                Invalid,
                "spec.activeDeadlineSeconds",
                "Invalid value: 0: must be between 1 and 2147483647, inclusive",
            )],
        ),
        (
            "to nil from positive",
            none(),
            ads(30),
            none(),
            none(),
            vec![(
                Invalid,
                "spec.activeDeadlineSeconds",
                "Invalid value: null: must not update from a positive integer to nil value",
            )],
        ),
    ]);
}

/// `getResources(cpu, memory, ephemeral-storage)` of upstream's table.
fn res(cpu: &str, mem: &str, storage: &str) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in [
        ("cpu", cpu),
        ("memory", mem),
        ("ephemeral-storage", storage),
    ] {
        if !v.is_empty() {
            m.insert(k.into(), v.into());
        }
    }
    Value::Object(m)
}

fn with_resources(limits: Option<Value>, requests: Option<Value>) -> Value {
    let mut r = serde_json::Map::new();
    if let Some(l) = limits {
        r.insert("limits".into(), l);
    }
    if let Some(q) = requests {
        r.insert("requests".into(), q);
    }
    json!({"containers": [{"name": "container", "image": "image", "resources": r}]})
}

#[test]
fn resources_and_other_spec_fields() {
    let lim = |c, m, s| with_resources(Some(res(c, m, s)), None);
    let req = |c, m, s| with_resources(None, Some(res(c, m, s)));
    let both = |l: Value, r: Value| with_resources(Some(l), Some(r));
    run(vec![
        (
            "cpu limit change",
            none(),
            lim("100m", "0", "1Gi"),
            none(),
            lim("200m", "0", "1Gi"),
            vec![SPEC_CHANGE],
        ),
        (
            "memory limit change",
            none(),
            lim("100m", "200Mi", ""),
            none(),
            lim("100m", "100Mi", ""),
            vec![SPEC_CHANGE],
        ),
        (
            "storage limit change",
            none(),
            lim("100m", "100Mi", "2Gi"),
            none(),
            lim("100m", "100Mi", "1Gi"),
            vec![SPEC_CHANGE],
        ),
        (
            "cpu request change",
            none(),
            req("200m", "0", ""),
            none(),
            req("100m", "0", ""),
            vec![SPEC_CHANGE],
        ),
        (
            "memory request change",
            none(),
            req("0", "100Mi", ""),
            none(),
            req("0", "200Mi", ""),
            vec![SPEC_CHANGE],
        ),
        (
            "storage request change",
            none(),
            req("100m", "0", "1Gi"),
            none(),
            req("100m", "0", "2Gi"),
            vec![SPEC_CHANGE],
        ),
        (
            "Pod QoS unchanged, guaranteed -> guaranteed",
            none(),
            both(res("100m", "100Mi", "1Gi"), res("100m", "100Mi", "1Gi")),
            none(),
            both(res("200m", "400Mi", "1Gi"), res("200m", "400Mi", "1Gi")),
            vec![SPEC_CHANGE],
        ),
        (
            "Pod QoS change, burstable -> besteffort",
            none(),
            both(res("200m", "200Mi", ""), res("100m", "100Mi", "")),
            none(),
            none(),
            vec![SPEC_CHANGE],
        ),
        (
            "fsGroupChangePolicy change",
            none(),
            json!({"securityContext": {}}),
            none(),
            json!({"securityContext": {"fsGroupChangePolicy": "OnRootMismatch"}}),
            vec![SPEC_CHANGE],
        ),
        (
            "port change",
            none(),
            json!({"containers": [{"name": "container", "image": "image", "ports": [{"hostPort": 8000, "containerPort": 80}]}]}),
            none(),
            json!({"containers": [{"name": "container", "image": "image", "ports": [{"hostPort": 8080, "containerPort": 80}]}]}),
            vec![SPEC_CHANGE],
        ),
        (
            "removed nodeName from pod spec",
            none(),
            none(),
            none(),
            json!({"nodeName": "foo"}),
            vec![SPEC_CHANGE],
        ),
        (
            "changed priority class name",
            none(),
            json!({"nodeName": "node1", "priorityClassName": "foo-priority"}),
            none(),
            json!({"nodeName": "node1", "priorityClassName": "bar-priority"}),
            vec![SPEC_CHANGE],
        ),
        (
            "removed priority class name",
            none(),
            json!({"nodeName": "node1", "priorityClassName": "foo-priority"}),
            none(),
            json!({"nodeName": "node1", "priorityClassName": ""}),
            vec![SPEC_CHANGE],
        ),
        (
            "update termination grace period seconds",
            none(),
            json!({"terminationGracePeriodSeconds": -1}),
            none(),
            json!({"terminationGracePeriodSeconds": 1}),
            vec![],
        ),
        (
            "update termination grace period seconds not 1",
            none(),
            json!({"terminationGracePeriodSeconds": -1}),
            none(),
            json!({"terminationGracePeriodSeconds": 0}),
            vec![SPEC_CHANGE],
        ),
        (
            "pod OS changing from Linux to Windows",
            none(),
            json!({"os": {"name": "linux"}, "securityContext": {"seLinuxOptions": {"role": "dummy"}}}),
            none(),
            json!({"os": {"name": "windows"}, "securityContext": {"seLinuxOptions": {"role": "dummy"}}}),
            vec![
                (
                    Forbidden,
                    "spec.securityContext.seLinuxOptions",
                    "Forbidden: cannot be set for a windows pod",
                ),
                SPEC_CHANGE,
            ],
        ),
        (
            "invalid PodOS update",
            none(),
            none(),
            none(),
            json!({"os": {"name": "dummy"}}),
            vec![
                (
                    NotSupported,
                    "spec.os",
                    "Unsupported value: \"dummy\": supported values: \"linux\", \"windows\"",
                ),
                SPEC_CHANGE,
            ],
        ),
        (
            "update pod spec OS to a valid value",
            none(),
            json!({"os": {"name": "windows"}}),
            none(),
            json!({"os": {"name": "linux"}}),
            vec![SPEC_CHANGE],
        ),
    ]);
}

#[test]
fn tolerations() {
    let tol = |list: Value| json!({"nodeName": "node1", "tolerations": list});
    let effect_error: Want = (
        Invalid,
        "spec.tolerations[1].effect",
        "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
    );
    let modified: Want = (
        Forbidden,
        "spec.tolerations",
        "Forbidden: existing toleration can not be modified except its tolerationSeconds",
    );
    run(vec![
        (
            "existing toleration value modified",
            none(),
            tol(json!([{"key": "key1", "value": "value1"}])),
            none(),
            tol(json!([{"key": "key1", "value": "value2"}])),
            vec![modified],
        ),
        (
            "existing toleration value modified with modified tolerationSeconds",
            none(),
            tol(
                json!([{"key": "key1", "value": "value1", "operator": "Equal", "effect": "NoExecute", "tolerationSeconds": 10}]),
            ),
            none(),
            tol(
                json!([{"key": "key1", "value": "value2", "operator": "Equal", "effect": "NoExecute"}]),
            ),
            vec![modified],
        ),
        (
            "modified tolerationSeconds in existing toleration",
            none(),
            tol(
                json!([{"key": "key1", "value": "value1", "operator": "Equal", "effect": "NoExecute", "tolerationSeconds": 20}]),
            ),
            none(),
            tol(
                json!([{"key": "key1", "value": "value1", "operator": "Equal", "effect": "NoExecute", "tolerationSeconds": 10}]),
            ),
            vec![],
        ),
        (
            "toleration modified in updates to an unscheduled pod",
            none(),
            json!({"tolerations": [{"key": "key1", "value": "value1"}]}),
            none(),
            json!({"tolerations": [{"key": "key1", "value": "value2"}]}),
            vec![modified],
        ),
        (
            "tolerations unmodified in updates to a scheduled pod",
            none(),
            tol(json!([{"key": "key1", "value": "value1"}])),
            none(),
            tol(json!([{"key": "key1", "value": "value1"}])),
            vec![],
        ),
        (
            "added valid new toleration",
            none(),
            tol(
                json!([{"key": "key1", "value": "value1", "operator": "Equal", "effect": "NoExecute", "tolerationSeconds": 10}]),
            ),
            none(),
            tol(json!([
                {"key": "key1", "value": "value1", "operator": "Equal", "effect": "NoExecute", "tolerationSeconds": 20},
                {"key": "key2", "value": "value2", "operator": "Equal", "effect": "NoExecute", "tolerationSeconds": 30}
            ])),
            vec![],
        ),
        (
            "added invalid new toleration (reported by the spec check and the update check)",
            none(),
            tol(
                json!([{"key": "key1", "value": "value1", "operator": "Equal", "effect": "NoExecute", "tolerationSeconds": 10}]),
            ),
            none(),
            tol(json!([
                {"key": "key1", "value": "value1", "operator": "Equal", "effect": "NoExecute", "tolerationSeconds": 20},
                {"key": "key2", "value": "value2", "operator": "Equal", "effect": "NoSchedule", "tolerationSeconds": 30}
            ])),
            vec![effect_error, effect_error],
        ),
    ]);
}

#[test]
fn scheduling_gates_and_gated_pods() {
    let gates = |names: &[&str]| Value::Array(names.iter().map(|n| json!({ "name": n })).collect());
    let gated = |extra: Value| {
        let mut v = json!({"schedulingGates": [{"name": "baz"}]});
        crate::pod_fixture::merge(&mut v, extra);
        v
    };
    let expr = |key: &str, value: &str| json!({"key": key, "operator": "In", "values": [value]});
    let field = |value: &str| json!({"key": "metadata.name", "operator": "In", "values": [value]});
    let required = |terms: Value| json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}});
    let term0 = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]";
    let terms = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
    run(vec![
        (
            "add new scheduling gate",
            none(),
            none(),
            none(),
            json!({"schedulingGates": gates(&["foo"])}),
            vec![(
                Forbidden,
                "spec.schedulingGates[0].name",
                "Forbidden: only deletion is allowed, but found new scheduling gate 'foo'",
            )],
        ),
        (
            "mutating an existing scheduling gate",
            none(),
            json!({"schedulingGates": gates(&["foo"])}),
            none(),
            json!({"schedulingGates": gates(&["bar"])}),
            vec![(
                Forbidden,
                "spec.schedulingGates[0].name",
                "Forbidden: only deletion is allowed, but found new scheduling gate 'bar'",
            )],
        ),
        (
            "mutating an existing scheduling gate along with deletion",
            none(),
            json!({"schedulingGates": gates(&["foo", "bar"])}),
            none(),
            json!({"schedulingGates": gates(&["baz"])}),
            vec![(
                Forbidden,
                "spec.schedulingGates[0].name",
                "Forbidden: only deletion is allowed, but found new scheduling gate 'baz'",
            )],
        ),
        (
            "legal deletion",
            none(),
            json!({"schedulingGates": gates(&["foo"])}),
            none(),
            none(),
            vec![],
        ),
        (
            "adding node selector is allowed for gated pods",
            none(),
            gated(none()),
            none(),
            gated(json!({"nodeSelector": {"foo": "bar"}})),
            vec![],
        ),
        (
            "adding node selector is not allowed for non-gated pods",
            none(),
            json!({"nodeSelector": {"foo": "bar"}}),
            none(),
            json!({"nodeSelector": {"foo": "bar", "foo2": "bar2"}}),
            vec![SPEC_CHANGE],
        ),
        (
            "removing node selector is not allowed for gated pods",
            none(),
            gated(json!({"nodeSelector": {"foo": "bar"}})),
            none(),
            gated(none()),
            vec![(Invalid, "spec.nodeSelector", "Invalid value: …")],
        ),
        (
            "old pod spec has scheduling gate, new pod spec does not, and node selector is added",
            none(),
            gated(json!({"nodeSelector": {"foo": "bar"}})),
            none(),
            json!({"nodeSelector": {"foo": "bar", "foo2": "bar2"}}),
            vec![],
        ),
        (
            "modifying value of existing node selector is not allowed",
            none(),
            gated(json!({"nodeSelector": {"foo": "bar"}})),
            none(),
            gated(json!({"nodeSelector": {"foo": "new value"}})),
            vec![
                (
                    Invalid,
                    "spec.nodeSelector",
                    "Invalid value: \"new value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                ),
                (
                    Invalid,
                    "spec.nodeSelector",
                    "Invalid value: {\"foo\":\"new value\"}: only additions to spec.nodeSelector are allowed (no mutations or deletions)",
                ),
            ],
        ),
        (
            "addition to nodeAffinity is allowed for gated pods",
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")]}]),
            )),
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo"), expr("expr2", "foo2")], "matchFields": [field("foo")]}]),
            )),
            vec![],
        ),
        (
            "old required node affinity non-nil, new nil, pod gated",
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")]}]),
            )),
            none(),
            gated(json!({"affinity": {"nodeAffinity": {}}})),
            vec![(
                Invalid,
                terms,
                "Invalid value: []: no additions/deletions to non-empty NodeSelectorTerms list are allowed",
            )],
        ),
        (
            "addition to nodeAffinity is not allowed for non-gated pods",
            none(),
            required(json!([{"matchExpressions": [expr("expr", "foo")]}])),
            none(),
            required(json!([{"matchExpressions": [expr("expr", "foo"), expr("expr2", "foo2")]}])),
            vec![SPEC_CHANGE],
        ),
        (
            "old pod spec has scheduling gate, new does not, and node affinity addition occurs",
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")]}]),
            )),
            none(),
            required(
                json!([{"matchExpressions": [expr("expr", "foo"), expr("expr2", "foo2")], "matchFields": [field("foo")]}]),
            ),
            vec![],
        ),
        (
            "nodeAffinity deletion from MatchExpressions not allowed",
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")]}]),
            )),
            none(),
            gated(required(json!([{"matchFields": [field("foo")]}]))),
            vec![(
                Invalid,
                term0,
                "Invalid value: {\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"foo\"]}]}: only additions are allowed (no mutations or deletions)",
            )],
        ),
        (
            "nodeAffinity deletion from MatchFields not allowed",
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")], "matchFields": [field("foo")]}]),
            )),
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")]}]),
            )),
            vec![(Invalid, term0, "Invalid value: …")],
        ),
        (
            "nodeAffinity modification of item in MatchExpressions not allowed",
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")], "matchFields": [field("foo")]}]),
            )),
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "bar")], "matchFields": [field("foo")]}]),
            )),
            vec![(Invalid, term0, "Invalid value: …")],
        ),
        (
            "nodeAffinity modification of item in MatchFields not allowed",
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")], "matchFields": [field("foo")]}]),
            )),
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")], "matchFields": [field("bar")]}]),
            )),
            vec![(Invalid, term0, "Invalid value: …")],
        ),
        (
            "nodeSelectorTerms addition on gated pod should fail",
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")], "matchFields": [field("foo")]}]),
            )),
            none(),
            gated(required(json!([
                {"matchExpressions": [expr("expr", "foo")], "matchFields": [field("bar")]},
                {"matchExpressions": [expr("expr", "foo2")], "matchFields": [field("bar2")]}
            ]))),
            vec![(Invalid, terms, "Invalid value: …")],
        ),
        (
            "preferredDuringSchedulingIgnoredDuringExecution can be modified for gated pods",
            none(),
            gated(
                json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": [expr("expr", "foo")]}}]}}}),
            ),
            none(),
            gated(
                json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": [expr("expr", "foo2")]}}]}}}),
            ),
            vec![],
        ),
        (
            "preferredDuringSchedulingIgnoredDuringExecution can have removals for gated pods",
            none(),
            gated(
                json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": [expr("expr", "foo")]}}]}}}),
            ),
            none(),
            gated(none()),
            vec![],
        ),
        (
            "new node affinity is nil",
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")]}]),
            )),
            none(),
            gated(json!({"affinity": {}})),
            vec![(Invalid, terms, "Invalid value: …")],
        ),
        (
            "empty NodeSelectorTerm (selects nothing) cannot become populated",
            none(),
            gated(required(json!([{}]))),
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")]}]),
            )),
            vec![(Invalid, term0, "Invalid value: …")],
        ),
        (
            "nil affinity can be mutated for gated pods",
            none(),
            gated(none()),
            none(),
            gated(required(
                json!([{"matchExpressions": [expr("expr", "foo")]}]),
            )),
            vec![],
        ),
        (
            "the podAffinity cannot be updated on gated pods",
            none(),
            gated(none()),
            none(),
            gated(json!({"affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [expr("expr", "foo")]}]}},
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "foo", "labelSelector": {"matchLabels": {"foo": "bar"}}}]}
            }})),
            vec![SPEC_CHANGE],
        ),
    ]);
}
