//! `TestValidatePodStatusUpdate` (upstream's `pkg/apis/core/validation`)
//! and the pod status strategy (`podStatusStrategy.PrepareForUpdate`), plus
//! the pod and host IP rules (`TestPodIPsValidation`, `TestHostIPsValidation`)
//! and the QoS class set on create (`PrepareForCreate`).

use exitplan_api::absent::Absent;
use exitplan_api::core::pod::PodStrategy;
use exitplan_api::field::ErrorType::{Duplicate, Forbidden, Internal, Invalid};
use exitplan_api::strategy::{Context, admit_create};
use serde_json::{Value, json};

use crate::pod_fixture::{Want, check, edited, status_errors, stored, submitted};
use crate::support::now;

/// One row: old spec, old status, new status, expected errors. The new pod
/// is the stored one with `status` replaced (a kubelet writes whole statuses).
type Row = (&'static str, Value, Value, Value, Vec<Want>);

fn run(rows: Vec<Row>) {
    for (name, spec, old_status, new_status, want) in rows {
        let mut old = stored(json!({}), spec);
        let mut v = serde_json::to_value(&old).expect("pod");
        v["status"] = old_status;
        old = serde_json::from_value(v).expect("pod");
        let mut v = serde_json::to_value(&old).expect("pod");
        v["status"] = new_status;
        let mut new = serde_json::from_value(v).expect("pod");
        check(name, &status_errors(&mut new, &old), &want);
    }
}

fn waiting(name: &str) -> Value {
    json!({"name": name, "image": "alpine", "imageID": "", "ready": false, "restartCount": 0,
           "state": {"waiting": {"reason": "PodInitializing"}}})
}
fn running(name: &str) -> Value {
    json!({"name": name, "image": "alpine", "imageID": "", "ready": true, "restartCount": 0,
           "state": {"running": {"startedAt": "2026-12-05T10:00:00Z"}}})
}
fn terminated(name: &str) -> Value {
    json!({"name": name, "image": "alpine", "imageID": "", "ready": false, "restartCount": 0,
           "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}})
}

#[test]
fn validate_pod_status_update() {
    let never =
        json!({"restartPolicy": "Never", "initContainers": [{"name": "init", "image": "image"}]});
    let sidecar = |policy: &str| json!({"restartPolicy": policy, "initContainers": [{"name": "restartable-init", "image": "image", "restartPolicy": "Always"}]});
    let claims = json!({"resourceClaims": [{"name": "my-claim", "resourceClaimName": "c"}, {"name": "my-other-claim", "resourceClaimName": "d"}]});
    run(vec![
        (
            "removed nominatedNodeName",
            json!({"nodeName": "node1"}),
            json!({"nominatedNodeName": "node1"}),
            json!({}),
            vec![],
        ),
        (
            "add valid nominatedNodeName",
            json!({"nodeName": "node1"}),
            json!({}),
            json!({"nominatedNodeName": "node1"}),
            vec![],
        ),
        (
            "add invalid nominatedNodeName",
            json!({"nodeName": "node1"}),
            json!({}),
            json!({"nominatedNodeName": "Node1"}),
            vec![(
                Invalid,
                "status.nominatedNodeName",
                "Invalid value: \"Node1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            )],
        ),
        (
            "update nominatedNodeName",
            json!({"nodeName": "node1"}),
            json!({"nominatedNodeName": "node2"}),
            json!({"nominatedNodeName": "node1"}),
            vec![],
        ),
        (
            "container statuses pending",
            json!({}),
            json!({}),
            json!({"initContainerStatuses": [waiting("init")], "containerStatuses": [waiting("main")]}),
            vec![],
        ),
        (
            "container statuses running",
            json!({}),
            json!({"initContainerStatuses": [waiting("init")], "containerStatuses": [waiting("main")]}),
            json!({"initContainerStatuses": [terminated("init")], "containerStatuses": [running("nginx")]}),
            vec![],
        ),
        (
            "ephemeral container exited",
            json!({}),
            json!({"containerStatuses": [running("nginx")], "ephemeralContainerStatuses": [running("debug")]}),
            json!({"containerStatuses": [running("nginx")], "ephemeralContainerStatuses": [terminated("debug")]}),
            vec![],
        ),
        (
            "ephemeral container cannot run again",
            json!({}),
            json!({"ephemeralContainerStatuses": [terminated("debug")]}),
            json!({"ephemeralContainerStatuses": [running("debug")]}),
            vec![(
                Forbidden,
                "status.ephemeralContainerStatuses[0].state",
                "Forbidden: may not be transitioned to non-terminated state",
            )],
        ),
        (
            "non-existent PodResourceClaim",
            json!({}),
            json!({}),
            json!({"resourceClaimStatuses": [{"name": "no-such-claim", "resourceClaimName": "my-claim"}]}),
            vec![(
                Invalid,
                "status.resourceClaimStatuses[0].name",
                "Invalid value: \"no-such-claim\": must match the name of an entry in `spec.resourceClaims`",
            )],
        ),
        (
            "invalid ResourceClaim name",
            claims.clone(),
            json!({}),
            json!({"resourceClaimStatuses": [{"name": "my-claim", "resourceClaimName": "%$!#"}]}),
            vec![(
                Invalid,
                "status.resourceClaimStatuses[0].name",
                "Invalid value: \"%$!#\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            )],
        ),
        (
            "duplicate ResourceClaimStatuses.Name",
            claims.clone(),
            json!({}),
            json!({"resourceClaimStatuses": [
                {"name": "my-claim", "resourceClaimName": "foo-my-claim-12345"},
                {"name": "my-other-claim"},
                {"name": "my-other-claim"}
            ]}),
            vec![(
                Duplicate,
                "status.resourceClaimStatuses[2].name",
                "Duplicate value: \"my-other-claim\"",
            )],
        ),
        (
            "ResourceClaimStatuses okay",
            claims,
            json!({}),
            json!({"resourceClaimStatuses": [
                {"name": "my-claim", "resourceClaimName": "foo-my-claim-12345"},
                {"name": "my-other-claim"}
            ]}),
            vec![],
        ),
        (
            "init container cannot restart if RestartPolicyNever",
            never,
            json!({"initContainerStatuses": [terminated("init")], "containerStatuses": [running("nginx")]}),
            json!({"initContainerStatuses": [running("init")], "containerStatuses": [running("nginx")]}),
            vec![(
                Forbidden,
                "status.initContainerStatuses[0].state",
                "Forbidden: may not be transitioned to non-terminated state",
            )],
        ),
        (
            "restartable init container can restart if RestartPolicyNever",
            sidecar("Never"),
            json!({"initContainerStatuses": [terminated("restartable-init")]}),
            json!({"initContainerStatuses": [running("restartable-init")]}),
            vec![],
        ),
        (
            "restartable init container can restart if RestartPolicyOnFailure",
            sidecar("OnFailure"),
            json!({"initContainerStatuses": [terminated("restartable-init")]}),
            json!({"initContainerStatuses": [running("restartable-init")]}),
            vec![],
        ),
        (
            "qosClass can not be changed",
            json!({}),
            json!({"qosClass": "Guaranteed"}),
            json!({"qosClass": "Burstable"}),
            vec![(
                Invalid,
                "status.qosClass",
                "Invalid value: \"Burstable\": field is immutable",
            )],
        ),
        (
            "qosClass no change",
            json!({}),
            json!({"qosClass": "Burstable"}),
            json!({"qosClass": "Burstable"}),
            vec![],
        ),
        (
            "an omitted qosClass keeps the stored one",
            json!({}),
            json!({"qosClass": "Burstable"}),
            json!({"phase": "Running"}),
            vec![],
        ),
        (
            "custom condition type must be a qualified name",
            json!({}),
            json!({}),
            json!({"conditions": [{"type": "bad type", "status": "True"}]}),
            vec![(
                Invalid,
                "metadata.conditions[0].Type",
                "Invalid value: \"bad type\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            )],
        ),
        (
            "container user IDs",
            json!({}),
            json!({}),
            json!({"containerStatuses": [{"name": "ctr", "image": "image", "imageID": "", "ready": false, "restartCount": 0,
                   "user": {"linux": {"uid": -1, "gid": 0, "supplementalGroups": [2147483648i64]}}}]}),
            vec![
                (
                    Invalid,
                    "status.containerStatuses[0].linux.uid",
                    "Invalid value: -1: must be between 0 and 2147483647, inclusive",
                ),
                (
                    Invalid,
                    "status.containerStatuses[0].linux.supplementalGroups[0]",
                    "Invalid value: 2147483648: must be between 0 and 2147483647, inclusive",
                ),
            ],
        ),
        (
            "allocated resources status names a request of its container",
            json!({"containers": [{"name": "ctr", "image": "image", "resources": {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}}]}),
            json!({}),
            json!({"containerStatuses": [{"name": "ctr", "image": "image", "imageID": "", "ready": false, "restartCount": 0,
            "allocatedResourcesStatus": [
                {"name": "example.com/gpu", "resources": [{"resourceID": "a", "health": "Healthy"}, {"resourceID": "a", "health": "Sick"}]},
                {"name": "example.com/fpga"}
            ]}]}),
            vec![
                (
                    exitplan_api::field::ErrorType::NotSupported,
                    "status.containerStatuses[0].allocatedResourcesStatus[0].resources[1].health",
                    "Unsupported value: \"Sick\": supported values: \"Healthy\", \"Unhealthy\", \"Unknown\"",
                ),
                (
                    Duplicate,
                    "status.containerStatuses[0].allocatedResourcesStatus[0].resources[1].resourceID",
                    "Duplicate value: \"a\"",
                ),
                (
                    Invalid,
                    "status.containerStatuses[0].allocatedResourcesStatus[1].name",
                    "Invalid value: \"example.com/fpga\": must match one of the container's resource requests",
                ),
            ],
        ),
    ]);
}

#[test]
fn pod_and_host_ips() {
    run(vec![
        (
            "dual-stack pod IPs",
            json!({}),
            json!({}),
            json!({"podIPs": [{"ip": "10.0.0.1"}, {"ip": "::1"}]}),
            vec![],
        ),
        (
            "two IPv4 pod IPs",
            json!({}),
            json!({}),
            json!({"podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}),
            vec![(
                Invalid,
                "status.podIPs",
                "Invalid value: [{\"ip\":\"10.0.0.1\"},{\"ip\":\"10.0.0.2\"}]: may specify no more than one IP for each IP family",
            )],
        ),
        (
            "invalid and duplicate pod IPs",
            json!({}),
            json!({}),
            json!({"podIPs": [{"ip": "bad"}, {"ip": "bad"}]}),
            vec![
                (
                    Invalid,
                    "status.podIPs[0]",
                    "Invalid value: \"bad\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                ),
                (
                    Invalid,
                    "status.podIPs[1]",
                    "Invalid value: \"bad\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                ),
                (
                    Internal,
                    "status.podIPs",
                    "Internal error: failed to check for dual stack with error:ip bad is invalid",
                ),
                (
                    Invalid,
                    "status.podIPs",
                    "Invalid value: [{\"ip\":\"bad\"},{\"ip\":\"bad\"}]: may specify no more than one IP for each IP family",
                ),
                (
                    Duplicate,
                    "status.podIPs[1]",
                    "Duplicate value: {\"ip\":\"bad\"}",
                ),
            ],
        ),
        (
            "host IPs: valid, then duplicates, then families",
            json!({}),
            json!({}),
            json!({"hostIP": "bad", "hostIPs": [{"ip": "bad"}, {"ip": "bad"}]}),
            vec![
                (
                    Invalid,
                    "status.hostIPs[0]",
                    "Invalid value: \"bad\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                ),
                (
                    Invalid,
                    "status.hostIPs[1]",
                    "Invalid value: \"bad\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                ),
                (
                    Duplicate,
                    "status.hostIPs[1]",
                    "Duplicate value: {\"ip\":\"bad\"}",
                ),
                (
                    Internal,
                    "status.hostIPs",
                    "Internal error: failed to check for dual stack with error:ip bad is invalid",
                ),
                (
                    Invalid,
                    "status.hostIPs",
                    "Invalid value: [{\"ip\":\"bad\"},{\"ip\":\"bad\"}]: may specify no more than one IP for each IP family",
                ),
            ],
        ),
        (
            "first host IP must be hostIP",
            json!({}),
            json!({}),
            json!({"hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.2"}]}),
            vec![(
                Invalid,
                "status.hostIPs[0].ip",
                "Invalid value: \"10.0.0.2\": must be equal to `hostIP`",
            )],
        ),
    ]);
}

/// `podStatusStrategy.PrepareForUpdate`: the spec, owner references and
/// deletion timestamp are the stored ones; an unset `observedGeneration`
/// (status or condition) keeps the stored value.
#[test]
fn status_strategy_keeps_spec_and_observed_generation() {
    let mut old = stored(
        json!({"ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u"}]}),
        json!({}),
    );
    let mut v = serde_json::to_value(&old).expect("pod");
    v["status"]["observedGeneration"] = json!(3);
    v["status"]["conditions"] = json!([
        {"type": "Ready", "status": "True", "observedGeneration": 2},
        {"type": "Ready", "status": "True", "observedGeneration": 5}
    ]);
    old = serde_json::from_value(v).expect("pod");
    let mut new = edited(
        &old,
        json!({"ownerReferences": [], "labels": {"a": "b"}}),
        json!({"nodeName": "elsewhere", "containers": [{"name": "ctr", "image": "other"}]}),
    );
    let status = new.status.as_mut().expect("status");
    status.observed_generation = None;
    status.qos_class = None;
    for c in status.conditions.iter_mut().flatten() {
        c.observed_generation = None;
    }
    let errs = status_errors(&mut new, &old);
    assert!(errs.is_empty(), "{errs}");
    assert_eq!(new.spec, old.spec);
    assert_eq!(new.metadata.owner_references, old.metadata.owner_references);
    assert_eq!(
        new.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("a"))
            .map(String::as_str),
        Some("b")
    );
    let status = new.status.expect("status");
    assert_eq!(status.observed_generation, Some(3));
    assert_eq!(status.qos_class.as_deref(), Some("BestEffort"));
    let generations: Vec<Option<i64>> = status
        .conditions
        .iter()
        .flatten()
        .map(|c| c.observed_generation)
        .collect();
    assert_eq!(generations, [Some(2), Some(5)]);
}

/// `PrepareForCreate` stores the QoS class and, for a gated pod, the
/// `PodScheduled=False` (`SchedulingGated`) condition.
#[test]
fn create_sets_qos_class_and_gated_condition() {
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    for (spec, qos) in [
        (json!({}), "BestEffort"),
        (
            json!({"containers": [{"name": "ctr", "image": "image", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}),
            "Guaranteed",
        ),
        (
            json!({"containers": [{"name": "ctr", "image": "image", "resources": {"requests": {"cpu": "1"}}}]}),
            "Burstable",
        ),
    ] {
        let mut p = submitted(json!({}), spec.clone());
        p.status = Some(Default::default());
        p.status.as_mut().expect("status").qos_class = Some("Guaranteed".into());
        admit_create::<PodStrategy>(&mut p, &ctx).expect("valid pod");
        let status = p.status.expect("status");
        assert_eq!(status.qos_class.as_deref(), Some(qos), "{spec}");
        assert_eq!(status.phase.as_deref(), Some("Pending"));
        assert!(status.conditions.is_none());
    }
    let mut gated = submitted(
        json!({"creationTimestamp": "2026-12-05T10:00:00Z"}),
        json!({"schedulingGates": [{"name": "wait"}]}),
    );
    admit_create::<PodStrategy>(&mut gated, &ctx).expect("valid pod");
    let conditions = gated.status.and_then(|s| s.conditions).expect("conditions");
    assert_eq!(
        serde_json::to_value(&conditions).expect("json"),
        json!([{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
                "lastTransitionTime": "2026-12-05T10:00:00Z"}])
    );
}
