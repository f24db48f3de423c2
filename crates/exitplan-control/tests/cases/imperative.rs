//! Cases 84–93 (eviction-cases.md §F): the imperative eviction responder
//! `imperative-eviction.k8s.io/evictor`, plus the heartbeat/back-off property.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Pod, PodStatus};
use k8s_openapi::api::lifecycle::v1alpha1::{
    Eviction, EvictionPodReference, EvictionSpec, EvictionStatus, EvictionTarget, ResponderStatus,
    TargetResponder,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use proptest::prelude::*;

use exitplan_control::imperative::filter::{
    active_evictions_for_pod, has_label_changed, on_eviction_add, on_eviction_delete,
    on_eviction_update, on_pod_delete, on_pod_update,
};
use exitplan_control::imperative::metrics::FailedEvictionLabels;
use exitplan_control::imperative::{
    AttemptRecord, AttemptRecords, AttemptUpdate, Decision, EvictCall, EvictOutcome, SkipReason,
    Write, after_evict, apply_payload, apply_status_body, decide, exponential_backoff,
    merge_responder_status, recorded_attempts, should_handle,
};

const EVICTOR: &str = "imperative-eviction.k8s.io/evictor";
const NS: &str = "ns";
const EVICTION_NAME: &str = "pod-1-foo.pod";
const POD: &str = "foo.pod";
const UID: &str = "04c63289-90de-470b-8ce1-fa50d962ea10";
const OTHER_UID: &str = "ef3f28c5-176a-41ec-a0f9-d069cad9e0ff";
const PDB_ERROR: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

const MSG_EVICTED: &str = "\"foo.pod\" pod has been been marked for deletion via the /eviction subresource and will be terminated gracefully";
const MSG_TERMINATING_VIA: &str = "\"foo.pod\" pod has been been marked for deletion via the /eviction subresource and is being terminated gracefully";
const MSG_TERMINATING: &str =
    "\"foo.pod\" pod has been been marked for deletion and is being terminated gracefully";

fn secs(s: i64) -> SignedDuration {
    SignedDuration::from_secs(s)
}

fn mins(m: i64) -> SignedDuration {
    SignedDuration::from_mins(m)
}

/// A fixed origin (whole second) plus `offset`.
fn at(offset: SignedDuration) -> Timestamp {
    let origin: Timestamp = "2026-03-01T10:00:00Z".parse().expect("origin");
    origin.checked_add(offset).expect("in range")
}

fn at_ms(ms: i64) -> Timestamp {
    at(SignedDuration::from_millis(ms))
}

fn failed(attempts: u64) -> String {
    format!(
        "\"foo.pod\" pod deletion via the /eviction subresource failed (attempts={attempts}): {PDB_ERROR}"
    )
}

fn pdb_blocked() -> EvictOutcome {
    EvictOutcome::Failed {
        error_message: PDB_ERROR.to_owned(),
        retry_after: None,
    }
}

fn target_responder(name: &str, priority: i32, state: &str) -> TargetResponder {
    TargetResponder {
        name: name.to_owned(),
        priority,
        state: state.to_owned(),
    }
}

/// The status the evictionrequest-controller writes when it activates the
/// evictor (upstream integration test `mkValidActiveEvictionStatus`).
fn status(state: &str, start: Timestamp) -> EvictionStatus {
    EvictionStatus {
        observed_generation: Some(1),
        target_responders: Some(vec![target_responder(EVICTOR, 100, state)]),
        responders: Some(vec![ResponderStatus {
            name: EVICTOR.to_owned(),
            start_time: Some(Time(start)),
            ..ResponderStatus::default()
        }]),
        ..EvictionStatus::default()
    }
}

fn eviction_with(label: Option<&str>, target: bool, status: Option<EvictionStatus>) -> Eviction {
    Eviction {
        metadata: ObjectMeta {
            name: Some(EVICTION_NAME.to_owned()),
            namespace: Some(NS.to_owned()),
            labels: label.map(|v| {
                BTreeMap::from([
                    ("app".to_owned(), "bar".to_owned()),
                    (EVICTOR.to_owned(), v.to_owned()),
                ])
            }),
            ..ObjectMeta::default()
        },
        spec: EvictionSpec {
            target: EvictionTarget {
                pod: target.then(|| EvictionPodReference {
                    name: POD.to_owned(),
                    uid: UID.to_owned(),
                }),
            },
        },
        status,
    }
}

/// A handled Eviction whose evictor is Active since `start`.
fn active_eviction(start: Timestamp) -> Eviction {
    eviction_with(
        Some("responder"),
        true,
        Some(status("Active", whole(start))),
    )
}

fn pod(uid: &str, phase: &str, deletion: Option<Timestamp>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(POD.to_owned()),
            namespace: Some(NS.to_owned()),
            uid: Some(uid.to_owned()),
            deletion_timestamp: deletion.map(Time),
            ..ObjectMeta::default()
        },
        status: Some(PodStatus {
            phase: Some(phase.to_owned()),
            ..PodStatus::default()
        }),
        ..Pod::default()
    }
}

fn running() -> Pod {
    pod(UID, "Running", None)
}

fn own(eviction: &Eviction) -> &ResponderStatus {
    eviction
        .status
        .as_ref()
        .and_then(|s| s.responders.as_ref())
        .and_then(|r| r.iter().find(|r| r.name == EVICTOR))
        .expect("own responder status")
}

fn set_state(eviction: &mut Eviction, state: &str) {
    let trs = eviction
        .status
        .as_mut()
        .and_then(|s| s.target_responders.as_mut())
        .expect("target responders");
    for tr in trs.iter_mut().filter(|t| t.name == EVICTOR) {
        tr.state = state.to_owned();
    }
}

/// What the runtime does with a write: apply the entry to the Eviction.
fn apply(eviction: &mut Eviction, write: &Write) {
    if let Some(entry) = &write.responder_status {
        let current = eviction.status.take().unwrap_or_default();
        eviction.status = Some(merge_responder_status(&current, entry.clone()));
    }
}

fn expect_write(decision: Decision) -> Write {
    match decision {
        Decision::Write(w) => w,
        other => panic!("expected a write, got {other:?}"),
    }
}

fn expect_evict(decision: Decision) -> EvictCall {
    match decision {
        Decision::Evict(call) => *call,
        other => panic!("expected an /eviction call, got {other:?}"),
    }
}

fn written(write: &Write) -> &ResponderStatus {
    write
        .responder_status
        .as_ref()
        .expect("a status write was expected")
}

fn time_of(t: &Option<Time>) -> Option<Timestamp> {
    t.as_ref().map(|t| t.0)
}

/// `ts` truncated to whole seconds, computed independently of the crate.
fn whole(ts: Timestamp) -> Timestamp {
    Timestamp::from_second(ts.as_second()).expect("in range")
}

// ---------------------------------------------------------------------------
// 84. Handling filter.

#[test]
fn case_84_handling_filter() {
    let cases: &[(&str, Option<&str>, bool, bool)] = &[
        ("correct target", Some("responder"), true, true),
        (
            "requester-responder",
            Some("requester-responder"),
            true,
            true,
        ),
        ("no target", Some("responder"), false, false),
        ("missing participant label", Some(""), true, false),
        ("wrong participant label", Some("requester"), true, false),
        ("invalid participant label", Some("invalid"), true, false),
        ("no participant label", None, true, false),
    ];
    let now = at(secs(0));
    for (name, label, target, want) in cases {
        let eviction = eviction_with(*label, *target, Some(status("Active", now)));
        assert_eq!(should_handle(&eviction), *want, "{name}");
        assert_eq!(on_eviction_add(&eviction), *want, "{name}: add event");
        let decision = decide(&eviction, Some(&running()), None, now);
        if *want {
            assert!(
                matches!(decision, Decision::Evict(_)),
                "{name}: {decision:?}"
            );
        } else {
            assert_eq!(
                decision,
                Decision::Skip(SkipReason::NotHandled),
                "{name}: sync"
            );
        }
    }
}

#[test]
fn case_84_label_change_detection() {
    // Upstream TestHasLabelChanged.
    let with = |labels: &[(&str, &str)]| {
        let mut e = eviction_with(None, true, None);
        if !labels.is_empty() {
            e.metadata.labels = Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            );
        }
        e
    };
    type Labels = &'static [(&'static str, &'static str)];
    let cases: &[(&str, Labels, Labels, bool)] = &[
        ("no label", &[], &[], false),
        (
            "label stays the same",
            &[(EVICTOR, "responder"), ("foo", "bar")],
            &[(EVICTOR, "responder"), ("baz", "bar")],
            false,
        ),
        ("label introduced", &[], &[(EVICTOR, "responder")], true),
        (
            "label changed",
            &[(EVICTOR, "responder"), ("foo", "bar")],
            &[(EVICTOR, "requester")],
            true,
        ),
        (
            "label value removed",
            &[(EVICTOR, "responder"), ("foo", "bar")],
            &[(EVICTOR, "")],
            true,
        ),
        (
            "label removed",
            &[(EVICTOR, "responder"), ("foo", "bar")],
            &[],
            true,
        ),
    ];
    for (name, old, new, want) in cases {
        assert_eq!(
            has_label_changed(&with(old), &with(new), EVICTOR),
            *want,
            "{name}"
        );
    }
}

#[test]
fn case_84_requeue_on_eviction_update() {
    let now = at(secs(0));
    let base = active_eviction(now);

    // Own ResponderStatus changed (e.g. by the evictor's own write): no.
    let mut heartbeat = base.clone();
    apply(
        &mut heartbeat,
        &Write {
            responder_status: Some(ResponderStatus {
                heartbeat_time: Some(Time(now)),
                ..own(&base).clone()
            }),
            requeue_after: None,
        },
    );
    assert!(!on_eviction_update(&base, &heartbeat), "own heartbeat");

    // Own TargetResponder state changed: yes.
    let mut canceled = base.clone();
    set_state(&mut canceled, "Canceled");
    assert!(on_eviction_update(&base, &canceled), "state change");

    // Role label flipped between two handled values: yes.
    let mut relabeled = base.clone();
    relabeled.metadata.labels = Some(BTreeMap::from([(
        EVICTOR.to_owned(),
        "requester-responder".to_owned(),
    )]));
    assert!(on_eviction_update(&base, &relabeled), "label change");

    // New Eviction not handled: never, whatever changed.
    let mut unlabeled = canceled.clone();
    unlabeled.metadata.labels = None;
    assert!(!on_eviction_update(&base, &unlabeled), "not handled");

    // Number of ResponderStatus entries changed: yes.
    let mut fewer = base.clone();
    if let Some(s) = fewer.status.as_mut() {
        s.responders = None;
    }
    assert!(on_eviction_update(&fewer, &base), "responder initialized");

    // Another responder's TargetResponder changed: no.
    let mut two = base.clone();
    if let Some(trs) = two
        .status
        .as_mut()
        .and_then(|s| s.target_responders.as_mut())
    {
        trs.insert(0, target_responder("foo.example.com/bar", 1000, "Active"));
    }
    let mut two_changed = two.clone();
    if let Some(trs) = two_changed
        .status
        .as_mut()
        .and_then(|s| s.target_responders.as_mut())
    {
        trs[0].state = "Completed".to_owned();
    }
    assert!(!on_eviction_update(&two, &two_changed), "other responder");

    // Delete: the target pod's attempt record is cleared.
    assert_eq!(
        on_eviction_delete(&base),
        Some(AttemptUpdate::Clear {
            pod_uid: UID.to_owned()
        })
    );
    assert_eq!(on_eviction_delete(&eviction_with(None, false, None)), None);
}

#[test]
fn case_84_pod_events() {
    let d = at(secs(30));
    let cases: &[(&str, Pod, Pod, bool)] = &[
        ("no change", running(), running(), false),
        (
            "deletionTimestamp set",
            running(),
            pod(UID, "Running", Some(d)),
            true,
        ),
        (
            "deletionTimestamp changed",
            pod(UID, "Running", Some(d)),
            pod(UID, "Running", Some(at(secs(10)))),
            true,
        ),
        (
            "became Succeeded",
            running(),
            pod(UID, "Succeeded", None),
            true,
        ),
        ("became Failed", running(), pod(UID, "Failed", None), true),
        (
            "phase changed, not terminal",
            pod(UID, "Pending", None),
            running(),
            false,
        ),
        (
            "terminal, unchanged",
            pod(UID, "Failed", None),
            pod(UID, "Failed", None),
            false,
        ),
    ];
    for (name, old, new, want) in cases {
        let event = on_pod_update(old, new);
        assert_eq!(event.is_some(), *want, "{name}");
        if let Some(event) = event {
            assert_eq!(
                event.attempt_update(),
                AttemptUpdate::Clear {
                    pod_uid: UID.to_owned()
                },
                "{name}"
            );
        }
    }
    assert_eq!(on_pod_delete(&running()).pod_uid, UID);
}

#[test]
fn case_84_active_evictions_for_pod() {
    let now = at(secs(0));
    let handled = active_eviction(now);
    let mut other_pod = active_eviction(now);
    if let Some(p) = other_pod.spec.target.pod.as_mut() {
        p.uid = OTHER_UID.to_owned();
    }
    let unlabeled = eviction_with(None, true, Some(status("Active", now)));

    let found = active_evictions_for_pod(&running(), [&handled, &other_pod, &unlabeled]);
    assert_eq!(found.evictions, vec![&handled]);
    assert_eq!(found.error, None);

    let mut second = active_eviction(now);
    second.metadata.name = Some("x".to_owned());
    let found = active_evictions_for_pod(&running(), [&handled, &second]);
    assert_eq!(found.evictions.len(), 2, "all are still enqueued");
    assert_eq!(
        found.error.map(|e| e.to_string()).as_deref(),
        Some("found more than 1 active eviction matching pod ns/foo.pod, evictions 2")
    );

    // Quirk: an unobserved Eviction for the pod suppresses all of them.
    let unobserved = eviction_with(Some("responder"), true, Some(EvictionStatus::default()));
    for order in [[&handled, &unobserved], [&unobserved, &handled]] {
        let found = active_evictions_for_pod(&running(), order);
        assert!(found.evictions.is_empty());
        assert_eq!(found.error, None);
    }
}

// ---------------------------------------------------------------------------
// 85. Skip conditions.

#[test]
fn case_85_skip_conditions() {
    let now = at(secs(0));
    let condition = |type_: &str, reason: &str| Condition {
        type_: type_.to_owned(),
        status: "True".to_owned(),
        observed_generation: Some(1),
        last_transition_time: Time(now),
        reason: reason.to_owned(),
        message: "message".to_owned(),
    };
    let with_status = |f: &dyn Fn(&mut EvictionStatus)| {
        let mut s = status("Active", now);
        f(&mut s);
        eviction_with(Some("responder"), true, Some(s))
    };
    let cases: Vec<(&str, Eviction, SkipReason)> = vec![
        (
            "non-annotated eviction",
            eviction_with(None, true, Some(status("Active", now))),
            SkipReason::NotHandled,
        ),
        (
            "incorrectly annotated eviction",
            eviction_with(Some("requester"), true, Some(status("Active", now))),
            SkipReason::NotHandled,
        ),
        (
            "non observed eviction",
            with_status(&|s| s.observed_generation = None),
            SkipReason::NotObserved,
        ),
        (
            "failed eviction",
            with_status(&|s| {
                s.target_responders = Some(vec![target_responder(EVICTOR, 100, "Inactive")]);
                s.conditions = Some(vec![condition("Failed", "EvictionInvalid")]);
            }),
            SkipReason::NotActive {
                state: "Inactive".to_owned(),
            },
        ),
        (
            "evicted eviction",
            with_status(&|s| {
                s.target_responders = Some(vec![target_responder(EVICTOR, 100, "Inactive")]);
                s.conditions = Some(vec![condition("TargetEvicted", "PodDeleted")]);
            }),
            SkipReason::NotActive {
                state: "Inactive".to_owned(),
            },
        ),
        (
            "inactive eviction (another responder is Active)",
            with_status(&|s| {
                s.target_responders = Some(vec![
                    target_responder("foo/bar", 1000, "Active"),
                    target_responder(EVICTOR, 100, "Inactive"),
                ]);
                s.responders = Some(vec![
                    ResponderStatus {
                        name: "foo/bar".to_owned(),
                        start_time: Some(Time(now)),
                        ..ResponderStatus::default()
                    },
                    ResponderStatus {
                        name: EVICTOR.to_owned(),
                        ..ResponderStatus::default()
                    },
                ]);
            }),
            SkipReason::NotActive {
                state: "Inactive".to_owned(),
            },
        ),
        (
            "eviction with completionTime",
            with_status(&|s| {
                if let Some(r) = s.responders.as_mut() {
                    r[0].completion_time = Some(Time(at(secs(1))));
                }
            }),
            SkipReason::AlreadyCompleted,
        ),
        (
            "no own targetResponders entry",
            with_status(&|s| {
                s.target_responders = Some(vec![target_responder("foo/bar", 1000, "Active")]);
            }),
            SkipReason::NoTargetResponder,
        ),
        (
            "no own responders entry",
            with_status(&|s| s.responders = None),
            SkipReason::NoResponderStatus,
        ),
    ];
    for (name, eviction, reason) in cases {
        // Even with a pod to evict and one that is gone: nothing happens.
        for pod in [Some(running()), None] {
            assert_eq!(
                decide(&eviction, pod.as_ref(), None, now),
                Decision::Skip(reason.clone()),
                "{name}"
            );
        }
    }
    // Control: the same fixture with the evictor Active does act.
    assert!(matches!(
        decide(&with_status(&|_| {}), Some(&running()), None, now),
        Decision::Evict(_)
    ));
}

// ---------------------------------------------------------------------------
// 86. Normal eviction.

#[test]
fn case_86_normal_eviction() {
    let start = at(secs(0));
    let mut eviction = active_eviction(start);
    let mut records = AttemptRecords::default();

    // Running pod, no PDB: the sync calls /eviction with a UID precondition.
    let t0 = at_ms(400);
    let call = expect_evict(decide(&eviction, Some(&running()), None, t0));
    assert_eq!(
        (
            call.namespace.as_str(),
            call.pod_name.as_str(),
            call.pod_uid.as_str()
        ),
        (NS, POD, UID)
    );
    let body = serde_json::to_value(&call.body).expect("serialize");
    assert_eq!(
        body,
        serde_json::json!({
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": { "name": POD, "namespace": NS },
            "deleteOptions": { "preconditions": { "uid": UID } },
        })
    );

    let done = after_evict(&eviction, EvictOutcome::Ok, t0).expect("after evict");
    assert_eq!(
        done.attempt,
        AttemptUpdate::Clear {
            pod_uid: UID.to_owned()
        }
    );
    assert_eq!(done.failed_eviction, None);
    assert_eq!(done.write.requeue_after, None, "pod events drive the rest");
    let entry = written(&done.write);
    assert_eq!(entry.message.as_deref(), Some(MSG_EVICTED));
    assert_eq!(time_of(&entry.heartbeat_time), Some(whole(t0)));
    assert_eq!(time_of(&entry.start_time), Some(start));
    assert_eq!(entry.expected_completion_time, None);
    assert_eq!(entry.completion_time, None);
    records.apply(done.attempt);
    apply(&mut eviction, &done.write);

    // The pod gets a deletionTimestamp (grace period 30 s).
    let deletion = at(secs(30));
    let terminating = pod(UID, "Running", Some(deletion));
    let event = on_pod_update(&running(), &terminating).expect("relevant pod event");
    records.apply(event.attempt_update());
    let t1 = at_ms(1_200);
    let w = expect_write(decide(
        &eviction,
        Some(&terminating),
        records.get(UID).as_ref(),
        t1,
    ));
    assert_eq!(w.requeue_after, Some(mins(3)));
    let entry = written(&w);
    assert_eq!(entry.message.as_deref(), Some(MSG_TERMINATING_VIA));
    assert_eq!(time_of(&entry.expected_completion_time), Some(deletion));
    assert_eq!(time_of(&entry.heartbeat_time), Some(whole(t1)));
    assert_eq!(entry.completion_time, None);
    apply(&mut eviction, &w);

    // A sync 10 s later changes nothing: no write; requeued for when the
    // heartbeat written at 1 s turns 3 min old (upstream: 3 min from now).
    let w = expect_write(decide(&eviction, Some(&terminating), None, at(secs(11))));
    assert_eq!(
        w,
        Write {
            responder_status: None,
            requeue_after: Some(mins(3) - secs(10))
        }
    );

    // Three minutes later the grace period is over but the pod is still
    // there: expectedCompletionTime is clamped to now, heartbeat refreshed.
    let t2 = t1.checked_add(mins(3)).expect("t2");
    let w = expect_write(decide(&eviction, Some(&terminating), None, t2));
    let entry = written(&w);
    assert_eq!(entry.message.as_deref(), Some(MSG_TERMINATING_VIA));
    assert_eq!(time_of(&entry.expected_completion_time), Some(whole(t2)));
    assert_eq!(time_of(&entry.heartbeat_time), Some(whole(t2)));
    assert_eq!(w.requeue_after, Some(mins(3)));
    apply(&mut eviction, &w);

    // The pod reaches Succeeded (a finalizer keeps the object).
    let succeeded = pod(UID, "Succeeded", Some(deletion));
    assert!(on_pod_update(&terminating, &succeeded).is_some());
    let t3 = at_ms(200_700);
    let w = expect_write(decide(&eviction, Some(&succeeded), None, t3));
    assert_eq!(w.requeue_after, None);
    let entry = written(&w);
    assert_eq!(
        entry.message.as_deref(),
        Some("\"foo.pod\" pod has been deleted and fully terminated (pod phase=\"Succeeded\")")
    );
    assert_eq!(time_of(&entry.completion_time), Some(whole(t3)));
    assert_eq!(time_of(&entry.expected_completion_time), Some(whole(t3)));
    assert_eq!(time_of(&entry.heartbeat_time), Some(whole(t3)));
    assert_eq!(time_of(&entry.start_time), Some(start));
    apply(&mut eviction, &w);

    // Done: later syncs are no-ops.
    assert_eq!(
        decide(&eviction, Some(&succeeded), None, at(secs(400))),
        Decision::Skip(SkipReason::AlreadyCompleted)
    );
}

#[test]
fn case_86_terminating_without_own_eviction() {
    // Someone else deleted the pod: no " via the /eviction subresource".
    let mut eviction = active_eviction(at(secs(0)));
    let deletion = at(secs(100));
    let terminating = pod(UID, "Running", Some(deletion));
    let w = expect_write(decide(&eviction, Some(&terminating), None, at(secs(2))));
    assert_eq!(written(&w).message.as_deref(), Some(MSG_TERMINATING));
    apply(&mut eviction, &w);
    // A failure message before does not count as "marked via /eviction".
    if let Some(r) = eviction.status.as_mut().and_then(|s| s.responders.as_mut()) {
        r[0].message = Some(failed(3));
    }
    let w = expect_write(decide(&eviction, Some(&terminating), None, at(secs(3))));
    assert_eq!(written(&w).message.as_deref(), Some(MSG_TERMINATING));
    // Terminating pods are never re-evicted, even with a due back-off.
    let record = AttemptRecord {
        pod_uid: UID.to_owned(),
        at: at(secs(-3600)),
    };
    assert!(matches!(
        decide(&eviction, Some(&terminating), Some(&record), at(secs(4))),
        Decision::Write(_)
    ));
}

// ---------------------------------------------------------------------------
// 87. PDB blocks eviction.

#[test]
fn case_87_pdb_blocks_eviction() {
    let mut eviction = active_eviction(at(secs(0)));
    let mut records = AttemptRecords::default();

    // First attempt fails with 429.
    let t0 = at_ms(500);
    expect_evict(decide(&eviction, Some(&running()), None, t0));
    let first = after_evict(&eviction, pdb_blocked(), t0).expect("after evict");
    assert_eq!(
        first.attempt,
        AttemptUpdate::Record(AttemptRecord {
            pod_uid: UID.to_owned(),
            at: t0
        })
    );
    assert_eq!(
        first.failed_eviction,
        Some(FailedEvictionLabels {
            namespace: NS.to_owned(),
            eviction: EVICTION_NAME.to_owned(),
            pod: POD.to_owned(),
        })
    );
    assert_eq!(first.write.requeue_after, Some(secs(5)));
    let entry = written(&first.write);
    assert_eq!(entry.message.as_deref(), Some(failed(1).as_str()));
    assert_eq!(time_of(&entry.heartbeat_time), Some(whole(t0)));
    assert_eq!(entry.completion_time, None);
    assert_eq!(entry.expected_completion_time, None);
    records.apply(first.attempt);
    apply(&mut eviction, &first.write);

    // An early sync (3 s later) waits for the rest of the 5 s back-off,
    // without a write (heartbeat fresh, message unchanged).
    let early = at_ms(3_500);
    assert_eq!(
        decide(
            &eviction,
            Some(&running()),
            records.get(UID).as_ref(),
            early
        ),
        Decision::Write(Write {
            responder_status: None,
            requeue_after: Some(secs(2)),
        })
    );

    // Second attempt after 5 s: attempts=2, next wait 10 s.
    let t1 = at_ms(5_500);
    expect_evict(decide(
        &eviction,
        Some(&running()),
        records.get(UID).as_ref(),
        t1,
    ));
    let second = after_evict(&eviction, pdb_blocked(), t1).expect("after evict");
    assert_eq!(second.write.requeue_after, Some(secs(10)));
    assert_eq!(
        written(&second.write).message.as_deref(),
        Some(failed(2).as_str())
    );
    assert_eq!(
        time_of(&written(&second.write).heartbeat_time),
        Some(whole(t1))
    );
    records.apply(second.attempt);
    apply(&mut eviction, &second.write);

    // 9.9 s later: still gated.
    let gated = decide(
        &eviction,
        Some(&running()),
        records.get(UID).as_ref(),
        at_ms(15_400),
    );
    assert_eq!(
        expect_write(gated).requeue_after,
        Some(SignedDuration::from_millis(100))
    );

    // The PDB is deleted; the attempt 10 s later succeeds and case 86 goes on.
    let t2 = at_ms(15_500);
    expect_evict(decide(
        &eviction,
        Some(&running()),
        records.get(UID).as_ref(),
        t2,
    ));
    let ok = after_evict(&eviction, EvictOutcome::Ok, t2).expect("after evict");
    assert_eq!(ok.write.requeue_after, None);
    assert_eq!(written(&ok.write).message.as_deref(), Some(MSG_EVICTED));
    records.apply(ok.attempt);
    assert!(records.is_empty());
    apply(&mut eviction, &ok.write);

    let terminating = pod(UID, "Running", Some(at(secs(45))));
    let w = expect_write(decide(&eviction, Some(&terminating), None, at(secs(16))));
    assert_eq!(written(&w).message.as_deref(), Some(MSG_TERMINATING_VIA));
}

#[test]
fn case_87_backoff_waits() {
    // Ten consecutive failures, each sync run exactly when requeued: the
    // waits between /eviction calls are 5, 10, 20, …, 320, 600, 600 s while
    // every requeue stays ≤ 3 min.
    let mut eviction = active_eviction(at(secs(0)));
    let mut records = AttemptRecords::default();
    let mut now = at(secs(0));
    let mut calls = Vec::new();
    let mut syncs = 0;
    while calls.len() < 11 {
        syncs += 1;
        assert!(syncs < 1000, "runaway");
        let write = match decide(&eviction, Some(&running()), records.get(UID).as_ref(), now) {
            Decision::Evict(_) => {
                calls.push(now);
                let done = after_evict(&eviction, pdb_blocked(), now).expect("after evict");
                assert_eq!(
                    recorded_attempts(written(&done.write).message.as_deref().expect("message")),
                    calls.len() as u64
                );
                records.apply(done.attempt);
                done.write
            }
            other => expect_write(other),
        };
        apply(&mut eviction, &write);
        let requeue = write.requeue_after.expect("requeued while blocked");
        assert!(requeue <= mins(3), "requeue {requeue:?}");
        now = now.checked_add(requeue).expect("time");
    }
    let waits: Vec<i64> = calls
        .windows(2)
        .map(|w| w[1].duration_since(w[0]).as_secs())
        .collect();
    assert_eq!(waits, vec![5, 10, 20, 40, 80, 160, 320, 600, 600, 600]);
}

#[test]
fn case_87_retry_after() {
    let eviction = active_eviction(at(secs(0)));
    let now = at(secs(1));
    let cases: &[(&str, Option<i64>, SignedDuration)] = &[
        ("no suggestion", None, secs(5)),
        ("smaller suggestion", Some(2), secs(5)),
        ("equal suggestion", Some(5), secs(5)),
        ("larger suggestion", Some(30), secs(30)),
        ("larger than the heartbeat cap", Some(3600), mins(3)),
    ];
    for (name, retry_after, want) in cases {
        let done = after_evict(
            &eviction,
            EvictOutcome::Failed {
                error_message: "Too many requests".to_owned(),
                retry_after: retry_after.map(secs),
            },
            now,
        )
        .expect("after evict");
        assert_eq!(done.write.requeue_after, Some(*want), "{name}");
    }
}

// ---------------------------------------------------------------------------
// 88. Cancel during back-off.

#[test]
fn case_88_cancel_during_backoff() {
    let mut eviction = active_eviction(at(secs(0)));
    let mut records = AttemptRecords::default();
    let t0 = at(secs(1));
    expect_evict(decide(&eviction, Some(&running()), None, t0));
    let first = after_evict(&eviction, pdb_blocked(), t0).expect("after evict");
    records.apply(first.attempt);
    apply(&mut eviction, &first.write);

    // The controller cancels: [evictor Canceled] + Failed=True.
    let before = eviction.clone();
    set_state(&mut eviction, "Canceled");
    if let Some(s) = eviction.status.as_mut() {
        s.conditions = Some(vec![Condition {
            type_: "Failed".to_owned(),
            status: "True".to_owned(),
            observed_generation: Some(1),
            last_transition_time: Time(at(secs(2))),
            reason: "CanceledDueToNoRequesters".to_owned(),
            message: "message".to_owned(),
        }]);
    }
    assert!(
        on_eviction_update(&before, &eviction),
        "cancellation re-queues"
    );

    // PDB removed; at, and long after, the back-off: no call, no write.
    for later in [secs(6), secs(8), mins(5)] {
        assert_eq!(
            decide(
                &eviction,
                Some(&running()),
                records.get(UID).as_ref(),
                t0.checked_add(later).expect("t")
            ),
            Decision::Skip(SkipReason::NotActive {
                state: "Canceled".to_owned()
            })
        );
    }
    assert_eq!(own(&eviction).message.as_deref(), Some(failed(1).as_str()));
}

// ---------------------------------------------------------------------------
// 89. Third-party termination.

#[test]
fn case_89_third_party_termination() {
    let cases: &[(&str, Option<Pod>, &str)] = &[
        (
            "pod never existed / deleted",
            None,
            "\"foo.pod\" pod has been deleted and fully terminated",
        ),
        (
            "pod replaced (UID mismatch)",
            Some(pod(OTHER_UID, "Running", None)),
            "\"foo.pod\" pod has been deleted and fully terminated",
        ),
        (
            "pod terminated (Failed, not deleted)",
            Some(pod(UID, "Failed", None)),
            "\"foo.pod\" pod has been fully terminated (pod phase=\"Failed\")",
        ),
        (
            "pod terminated (Succeeded, not deleted)",
            Some(pod(UID, "Succeeded", None)),
            "\"foo.pod\" pod has been fully terminated (pod phase=\"Succeeded\")",
        ),
        (
            "pod deleted and terminated",
            Some(pod(UID, "Failed", Some(at(secs(1))))),
            "\"foo.pod\" pod has been deleted and fully terminated (pod phase=\"Failed\")",
        ),
    ];
    let now = at_ms(7_250);
    for (name, pod, message) in cases {
        let eviction = active_eviction(at(secs(0)));
        // A pending back-off changes nothing once the pod is gone.
        let record = AttemptRecord {
            pod_uid: UID.to_owned(),
            at: at(secs(7)),
        };
        let w = expect_write(decide(&eviction, pod.as_ref(), Some(&record), now));
        assert_eq!(w.requeue_after, None, "{name}");
        let entry = written(&w);
        assert_eq!(entry.message.as_deref(), Some(*message), "{name}");
        for (field, value) in [
            ("heartbeatTime", &entry.heartbeat_time),
            ("expectedCompletionTime", &entry.expected_completion_time),
            ("completionTime", &entry.completion_time),
        ] {
            assert_eq!(time_of(value), Some(at(secs(7))), "{name}: {field}");
        }
        assert_eq!(time_of(&entry.start_time), Some(at(secs(0))), "{name}");
    }
}

// ---------------------------------------------------------------------------
// 90. Back-off function.

#[test]
fn case_90_exponential_backoff() {
    let cases: &[(&str, SignedDuration, SignedDuration, u64, SignedDuration)] = &[
        ("calculates backoff", secs(5), mins(1), 1, secs(10)),
        (
            "calculates backoff with a maximum",
            secs(5),
            mins(1),
            10,
            mins(1),
        ),
        (
            "calculates backoff with a maximum after an overflow",
            secs(5),
            mins(1),
            1000,
            mins(1),
        ),
        ("production, exponent 0", secs(5), mins(10), 0, secs(5)),
        ("production, exponent 6", secs(5), mins(10), 6, secs(320)),
        (
            "production, exponent 7 capped",
            secs(5),
            mins(10),
            7,
            mins(10),
        ),
        ("production, exponent 62", secs(5), mins(10), 62, mins(10)),
        (
            "production, u64::MAX",
            secs(5),
            mins(10),
            u64::MAX,
            mins(10),
        ),
    ];
    for (name, base, max, exponent, want) in cases {
        assert_eq!(exponential_backoff(*base, *max, *exponent), *want, "{name}");
    }
}

// ---------------------------------------------------------------------------
// 91. Attempt parsing.

#[test]
fn case_91_recorded_attempts() {
    let msg = |attempts: &str| {
        format!(
            "foo pod (uid=\"492fe0ed-e8ee-4ad4-900f-591e35d6d352\") deletion via the /eviction subresource failed (attempts={attempts}): pods \"foo\" is forbidden:"
        )
    };
    let cases: Vec<(&str, String, u64)> = vec![
        ("missing message", String::new(), 0),
        (
            "missing attempts",
            "foo pod (uid=\"492fe0ed-e8ee-4ad4-900f-591e35d6d352\") deletion".to_owned(),
            0,
        ),
        ("invalid attempts", msg("bar"), 0),
        ("negative number attempts", msg("-7"), 0),
        ("found 0", msg("0"), 0),
        ("found 1", msg("1"), 1),
        ("found 7 with preceding zeros", msg("007"), 7),
        ("found MaxUint64", msg("18446744073709551615"), u64::MAX),
        ("MaxUint64 overflow", msg("18446744073709551616"), 0),
        ("our own failure message", failed(12), 12),
    ];
    for (name, message, want) in cases {
        assert_eq!(recorded_attempts(&message), want, "{name}");
    }
}

#[test]
fn case_91_attempts_after_overflowing_count() {
    // A recorded u64::MAX wraps to 0 on the next failure (Go's uint64).
    let mut eviction = active_eviction(at(secs(0)));
    if let Some(r) = eviction.status.as_mut().and_then(|s| s.responders.as_mut()) {
        r[0].message = Some(failed(u64::MAX));
    }
    let done = after_evict(&eviction, pdb_blocked(), at(secs(1))).expect("after evict");
    assert_eq!(
        written(&done.write).message.as_deref(),
        Some(failed(0).as_str())
    );
    assert_eq!(done.write.requeue_after, Some(mins(3)), "10 min, capped");
}

// ---------------------------------------------------------------------------
// 92. Apply payload.

#[test]
fn case_92_apply_payload() {
    let now = Time(at(secs(42)));
    let mut status = ResponderStatus {
        name: "foo".to_owned(),
        start_time: Some(now.clone()),
        heartbeat_time: Some(now.clone()),
        completion_time: Some(now.clone()),
        ..ResponderStatus::default()
    };
    let payload = apply_payload(&status);
    assert_eq!(payload.name, "foo");
    assert_eq!(payload.start_time, Some(now.clone()));
    assert_eq!(payload.heartbeat_time, Some(now.clone()));
    assert_eq!(payload.expected_completion_time, None);
    assert_eq!(payload.completion_time, Some(now.clone()));
    assert_eq!(payload.message.as_deref(), Some(""), "empty, not absent");

    status.expected_completion_time = Some(now.clone());
    status.message = Some("message".to_owned());
    let payload = apply_payload(&status);
    assert_eq!(payload.expected_completion_time, Some(now.clone()));
    assert_eq!(payload.message.as_deref(), Some("message"));

    // The SSA body carries only the evictor's entry.
    let eviction = active_eviction(at(secs(0)));
    let body = apply_status_body(&eviction, &payload);
    assert_eq!(
        body,
        serde_json::json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1",
            "kind": "Eviction",
            "metadata": { "name": EVICTION_NAME, "namespace": NS },
            "status": { "responders": [{
                "name": "foo",
                "startTime": "2026-03-01T10:00:42Z",
                "heartbeatTime": "2026-03-01T10:00:42Z",
                "expectedCompletionTime": "2026-03-01T10:00:42Z",
                "completionTime": "2026-03-01T10:00:42Z",
                "message": "message",
            }]},
        })
    );
}

#[test]
fn case_92_writes_carry_the_full_entry() {
    // A write keeps every field set before (here expectedCompletionTime
    // from an earlier sync) and leaves other responders' entries alone.
    let mut eviction = active_eviction(at(secs(0)));
    if let Some(s) = eviction.status.as_mut() {
        if let Some(trs) = s.target_responders.as_mut() {
            trs.insert(0, target_responder("foo.example.com/a", 1000, "Completed"));
        }
        if let Some(rs) = s.responders.as_mut() {
            rs.insert(
                0,
                ResponderStatus {
                    name: "foo.example.com/a".to_owned(),
                    message: Some("theirs".to_owned()),
                    ..ResponderStatus::default()
                },
            );
            rs[1].expected_completion_time = Some(Time(at(secs(90))));
            rs[1].heartbeat_time = Some(Time(at(secs(1))));
            rs[1].message = Some(failed(1));
        }
    }
    let done = after_evict(&eviction, pdb_blocked(), at(secs(20))).expect("after evict");
    let entry = written(&done.write);
    assert_eq!(time_of(&entry.expected_completion_time), Some(at(secs(90))));
    assert_eq!(time_of(&entry.start_time), Some(at(secs(0))));
    assert_eq!(entry.message.as_deref(), Some(failed(2).as_str()));
    apply(&mut eviction, &done.write);
    let responders = eviction
        .status
        .as_ref()
        .and_then(|s| s.responders.as_ref())
        .expect("responders");
    assert_eq!(responders.len(), 2);
    assert_eq!(responders[0].message.as_deref(), Some("theirs"));
}

#[test]
fn case_92_message_truncated_to_4000_characters() {
    let eviction = active_eviction(at(secs(0)));
    for filler in ["x", "é", "🙂"] {
        let error_message = filler.repeat(5000);
        let done = after_evict(
            &eviction,
            EvictOutcome::Failed {
                error_message: error_message.clone(),
                retry_after: None,
            },
            at(secs(1)),
        )
        .expect("after evict");
        let message = written(&done.write).message.clone().expect("message");
        let full = format!(
            "\"foo.pod\" pod deletion via the /eviction subresource failed (attempts=1): {error_message}"
        );
        assert_eq!(message.chars().count(), 4000, "{filler}: characters");
        assert!(full.starts_with(&message), "{filler}: a prefix");
        assert_eq!(recorded_attempts(&message), 1);
    }
}

// ---------------------------------------------------------------------------
// 93. Heartbeat cadence.

#[test]
fn case_93_heartbeat_cadence() {
    // Blocked with 7 failures recorded; the 8th fails at t0: back-off
    // 5 s × 2^7 = 640 s, capped at 10 min.
    let mut eviction = active_eviction(at(secs(0)));
    if let Some(r) = eviction.status.as_mut().and_then(|s| s.responders.as_mut()) {
        r[0].message = Some(failed(7));
        r[0].heartbeat_time = Some(Time(at(secs(0))));
    }
    let mut records = AttemptRecords::default();
    let t0 = at(secs(100));
    expect_evict(decide(
        &eviction,
        Some(&running()),
        records.get(UID).as_ref(),
        t0,
    ));
    let failure = after_evict(&eviction, pdb_blocked(), t0).expect("after evict");
    assert_eq!(failure.write.requeue_after, Some(mins(3)), "10 min → 3 min");
    records.apply(failure.attempt);
    apply(&mut eviction, &failure.write);
    let message = own(&eviction).message.clone();
    assert_eq!(message.as_deref(), Some(failed(8).as_str()));

    let sync = |eviction: &Eviction, records: &AttemptRecords, offset: SignedDuration| {
        decide(
            eviction,
            Some(&running()),
            records.get(UID).as_ref(),
            t0.checked_add(offset).expect("t"),
        )
    };

    // Exactly 2 m 59 s after the heartbeat: not older than 2m59s → no write;
    // 7 min 1 s of back-off left, but the heartbeat is due in 1 s.
    let w = expect_write(sync(&eviction, &records, secs(179)));
    assert_eq!(w.responder_status, None);
    assert_eq!(w.requeue_after, Some(secs(1)));

    // Half a second later it is older: heartbeat only, message unchanged.
    let w = expect_write(sync(
        &eviction,
        &records,
        SignedDuration::from_millis(179_500),
    ));
    let entry = written(&w);
    assert_eq!(entry.message, message);
    assert_eq!(time_of(&entry.heartbeat_time), Some(at(secs(279))));
    assert_eq!(entry.expected_completion_time, None);
    assert_eq!(entry.completion_time, None);

    // Requeued every 3 min: heartbeats at +3, +6, +9 min, then the call at +10.
    let mut heartbeats = Vec::new();
    let mut offset = mins(3);
    loop {
        match sync(&eviction, &records, offset) {
            Decision::Evict(_) => break,
            decision => {
                let w = expect_write(decision);
                let entry = written(&w);
                assert_eq!(entry.message, message, "message unchanged at {offset:?}");
                heartbeats.push(time_of(&entry.heartbeat_time).expect("heartbeat"));
                apply(&mut eviction, &w);
                offset += w.requeue_after.expect("requeue");
            }
        }
    }
    assert_eq!(offset, mins(10), "no /eviction call before the back-off");
    assert_eq!(
        heartbeats,
        vec![
            t0.checked_add(mins(3)).expect("t"),
            t0.checked_add(mins(6)).expect("t"),
            t0.checked_add(mins(9)).expect("t"),
        ]
    );
}

// ---------------------------------------------------------------------------
// Property: heartbeat cadence and back-off under failures and extra syncs.

/// One failed `/eviction` call: the server's Retry-After, and an optional
/// extra sync (some unrelated watch event) this long after the call.
#[derive(Clone, Debug)]
struct Failure {
    retry_after_secs: Option<i64>,
    extra_sync_after_ms: Option<i64>,
}

fn failure() -> impl Strategy<Value = Failure> {
    (
        proptest::option::of(0i64..900),
        proptest::option::of(1i64..400_000),
    )
        .prop_map(|(retry_after_secs, extra_sync_after_ms)| Failure {
            retry_after_secs,
            extra_sync_after_ms,
        })
}

proptest! {
    #[test]
    fn prop_heartbeats_and_backoff(
        failures in proptest::collection::vec(failure(), 1..12),
        start_ms in 0i64..1000,
    ) {
        let t_start = at_ms(start_ms);
        let mut eviction = active_eviction(at(secs(0)));
        let mut records = AttemptRecords::default();
        // The work queue: one pending requeue (the earliest wins, as with
        // client-go's AddAfter), plus extra event-driven syncs. `fresh` says
        // whether the pending requeue is the one the latest sync asked for
        // (an older, earlier one survives and also disturbs the cadence).
        let mut pending = Some(t_start);
        let mut fresh = true;
        let mut extra: Vec<Timestamp> = Vec::new();
        let mut calls: Vec<Timestamp> = Vec::new();
        let mut extra_in_gap = vec![false; failures.len() + 1];
        let mut heartbeats: Vec<Timestamp> = Vec::new();
        let mut succeeded = false;

        for _ in 0..10_000 {
            extra.sort();
            let next_extra = extra.first().copied();
            let (now, disturbed) = match (pending, next_extra) {
                (Some(p), Some(e)) if e < p => { extra.remove(0); (e, true) }
                (Some(p), _) => { pending = None; (p, !fresh) }
                (None, Some(e)) => { extra.remove(0); (e, true) }
                (None, None) => break,
            };
            if disturbed && !calls.is_empty() {
                extra_in_gap[calls.len() - 1] = true;
            }
            let write = match decide(&eviction, Some(&running()), records.get(UID).as_ref(), now) {
                Decision::Evict(_) => {
                    calls.push(now);
                    let outcome = match failures.get(calls.len() - 1) {
                        Some(f) => {
                            if let Some(ms) = f.extra_sync_after_ms {
                                extra.push(now.checked_add(SignedDuration::from_millis(ms)).expect("t"));
                            }
                            EvictOutcome::Failed {
                                error_message: PDB_ERROR.to_owned(),
                                retry_after: f.retry_after_secs.map(secs),
                            }
                        }
                        None => EvictOutcome::Ok,
                    };
                    succeeded = outcome == EvictOutcome::Ok;
                    let done = after_evict(&eviction, outcome, now).expect("after evict");
                    records.apply(done.attempt);
                    done.write
                }
                Decision::Write(w) => w,
                Decision::Skip(reason) => panic!("skipped while Active: {reason:?}"),
            };
            if let Some(entry) = &write.responder_status {
                heartbeats.push(time_of(&entry.heartbeat_time).expect("every write heartbeats"));
            }
            apply(&mut eviction, &write);
            // After every sync the stored heartbeat is fresh.
            let hb = time_of(&own(&eviction).heartbeat_time).expect("heartbeat");
            prop_assert!(now.duration_since(hb) < mins(3), "stale heartbeat {hb} at {now}");
            if succeeded {
                prop_assert_eq!(write.requeue_after, None);
                break;
            }
            let requeue = write.requeue_after.expect("requeued while Active and blocked");
            prop_assert!(requeue.is_positive() && requeue <= mins(3), "requeue {requeue:?}");
            let due = now.checked_add(requeue).expect("t");
            fresh = pending.is_none_or(|p| due <= p);
            pending = Some(pending.map_or(due, |p| p.min(due)));
        }
        prop_assert!(succeeded, "the final attempt must have been made");
        prop_assert_eq!(calls.len(), failures.len() + 1);

        // Heartbeats: the first at the first sync, then never > 3 min apart.
        prop_assert_eq!(heartbeats.first().copied(), Some(whole(t_start)));
        for pair in heartbeats.windows(2) {
            prop_assert!(pair[1].duration_since(pair[0]) <= mins(3), "gap {:?}", pair);
        }

        // Waits between calls: 5, 10, 20, … capped at 600 s, or Retry-After
        // if larger (bounded by the 3-minute requeue cap: the back-off gate
        // itself only knows the count).
        let mut backoff = secs(5);
        for (k, pair) in calls.windows(2).enumerate() {
            let gap = pair[1].duration_since(pair[0]);
            let suggested = failures[k].retry_after_secs.map_or(SignedDuration::ZERO, secs);
            let longest = backoff.max(suggested.min(mins(3)));
            prop_assert!(gap >= backoff, "call {}: gap {:?} < back-off {:?}", k + 1, gap, backoff);
            prop_assert!(gap <= longest, "call {}: gap {:?} > {:?}", k + 1, gap, longest);
            if !extra_in_gap[k] {
                prop_assert_eq!(gap, longest, "call {}", k + 1);
            }
            backoff = (backoff * 2).min(secs(600));
        }
    }
}

#[test]
fn case_93_heartbeat_cadence_with_earliest_wins_queue() {
    // The work queue keeps only the earliest pending requeue. Blocked with 8
    // failures (back-off 10 min), last call and heartbeat at 0 s, requeue
    // pending at 180 s.
    let mut eviction = active_eviction(at(secs(0)));
    if let Some(r) = eviction.status.as_mut().and_then(|s| s.responders.as_mut()) {
        r[0].message = Some(failed(8));
        r[0].heartbeat_time = Some(Time(at(secs(0))));
    }
    let record = AttemptRecord {
        pod_uid: UID.to_owned(),
        at: at(secs(0)),
    };
    // An unrelated event at 179.5 s finds the heartbeat stale and writes
    // one (179 s); its 3-min requeue (359.5 s) loses to the pending 180 s.
    let w = expect_write(decide(
        &eviction,
        Some(&running()),
        Some(&record),
        at_ms(179_500),
    ));
    assert_eq!(time_of(&written(&w).heartbeat_time), Some(at(secs(179))));
    assert_eq!(w.requeue_after, Some(mins(3)));
    apply(&mut eviction, &w);
    // At 180 s the heartbeat is fresh: no write. Upstream would requeue in
    // 3 min (→ next heartbeat at 360 s, 181 s after the last); the requeue
    // here is when that heartbeat turns 3 min old.
    let w = expect_write(decide(
        &eviction,
        Some(&running()),
        Some(&record),
        at(secs(180)),
    ));
    assert_eq!(w.responder_status, None);
    assert_eq!(w.requeue_after, Some(secs(179)));
    let w = expect_write(decide(
        &eviction,
        Some(&running()),
        Some(&record),
        at(secs(359)),
    ));
    assert_eq!(
        time_of(&written(&w).heartbeat_time),
        Some(at(secs(359))),
        "exactly 3 min after the last heartbeat"
    );
}
