//! evictionrequest-controller (eviction spec §7): cases 55–83 of
//! `eviction-cases.md`, the §7.2 event wiring, and property tests of the
//! controller's invariants (one Active responder at most, frozen final
//! Evictions, ≤ 100 requesters, responder states moving only along §5.2,
//! every Eviction status write passing the §5.4 state-machine rules).

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{EvictionResponder, Pod, PodSchedulingGroup, PodSpec, PodStatus};
use k8s_openapi::api::lifecycle::v1alpha1::{
    Eviction, EvictionPodReference, EvictionRequest, EvictionRequestPodReference,
    EvictionRequestSpec, EvictionRequestStatus, EvictionRequestTarget, EvictionSpec,
    EvictionStatus, EvictionTarget, Requester, ResponderStatus, TargetResponder,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, OwnerReference, Time};

use exitplan_api::absent::Absent;
use exitplan_api::field::ErrorList;
use exitplan_api::lifecycle::constants::*;
use exitplan_api::lifecycle::eviction::EvictionStrategy;
use exitplan_api::strategy::{Context, Strategy as _};
use exitplan_control::evictionrequest::events::{
    on_eviction_add, on_eviction_delete, on_eviction_request_add, on_eviction_request_delete,
    on_eviction_request_update, on_eviction_update, on_pod_delete, on_pod_update,
};
use exitplan_control::evictionrequest::keys::{
    eviction_request_target_key, eviction_target_key, pod_target_key, queue_key,
};
use exitplan_control::evictionrequest::meta_refresh::{
    compute_eviction_labels, labels_need_update,
};
use exitplan_control::evictionrequest::relevant::compare_condition_transition_time;
use exitplan_control::evictionrequest::requesters::aggregate_requesters;
use exitplan_control::evictionrequest::responders::{get_or_initialize, initial_target_responders};
use exitplan_control::evictionrequest::*;

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

const NS: &str = "ns";
const U: &str = "11111111-1111-4111-8111-111111111111";
const V: &str = "22222222-2222-4222-8222-222222222222";
const A: &str = "responder-a.example.com/a";
const B: &str = "responder-b.example.com/b";
const EVICTOR: &str = DEFAULT_RESPONDER_NAME;
const REQ: &str = "acme.io/drain";

fn now() -> Timestamp {
    "2026-07-01T12:00:00Z".parse().expect("valid timestamp")
}

fn at(offset: SignedDuration) -> Timestamp {
    now().checked_add(offset).expect("in range")
}

fn secs(s: i64) -> SignedDuration {
    SignedDuration::from_secs(s)
}

fn mins(m: i64) -> SignedDuration {
    SignedDuration::from_mins(m)
}

fn time(ts: Timestamp) -> Time {
    Time(ts)
}

fn pod(name: &str, uid: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(NS.to_owned()),
            uid: Some(uid.to_owned()),
            ..Default::default()
        },
        spec: Some(PodSpec::default()),
        status: Some(PodStatus {
            phase: Some("Running".to_owned()),
            ..Default::default()
        }),
    }
}

fn with_responders(mut p: Pod, responders: &[(&str, i32)]) -> Pod {
    if let Some(spec) = p.spec.as_mut() {
        spec.eviction_responders = Some(
            responders
                .iter()
                .map(|(name, priority)| EvictionResponder {
                    name: (*name).to_owned(),
                    priority: *priority,
                })
                .collect(),
        );
    }
    p
}

fn in_phase(mut p: Pod, phase: &str) -> Pod {
    p.status = Some(PodStatus {
        phase: Some(phase.to_owned()),
        ..Default::default()
    });
    p
}

fn deleting_pod(mut p: Pod, ts: Timestamp) -> Pod {
    p.metadata.deletion_timestamp = Some(time(ts));
    p
}

fn in_pod_group(mut p: Pod) -> Pod {
    if let Some(spec) = p.spec.as_mut() {
        spec.scheduling_group = Some(PodSchedulingGroup {
            pod_group_name: Some("blue".to_owned()),
        });
    }
    p
}

fn request(name: &str, requester: &str, created: Timestamp) -> EvictionRequest {
    request_for(name, requester, "p", U, created)
}

fn request_for(
    name: &str,
    requester: &str,
    pod_name: &str,
    uid: &str,
    created: Timestamp,
) -> EvictionRequest {
    EvictionRequest {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(NS.to_owned()),
            uid: Some(format!("er-uid-{name}")),
            generation: Some(1),
            creation_timestamp: Some(time(created)),
            ..Default::default()
        },
        spec: EvictionRequestSpec {
            intent: INTENT_EVICTION.to_owned(),
            requester: requester.to_owned(),
            target: EvictionRequestTarget {
                pod: Some(EvictionRequestPodReference {
                    name: pod_name.to_owned(),
                    uid: uid.to_owned(),
                }),
            },
        },
        status: None,
    }
}

fn withdrawn(mut r: EvictionRequest) -> EvictionRequest {
    r.spec.intent = INTENT_WITHDRAWN.to_owned();
    r
}

fn deleting_request(mut r: EvictionRequest, ts: Timestamp) -> EvictionRequest {
    r.metadata.deletion_timestamp = Some(time(ts));
    r
}

fn eviction(name: &str, created: Timestamp) -> Eviction {
    Eviction {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(NS.to_owned()),
            uid: Some(format!("ev-uid-{name}")),
            generation: Some(1),
            creation_timestamp: Some(time(created)),
            ..Default::default()
        },
        spec: EvictionSpec {
            target: EvictionTarget {
                pod: Some(EvictionPodReference {
                    name: "p".to_owned(),
                    uid: U.to_owned(),
                }),
            },
        },
        status: None,
    }
}

fn tr(name: &str, priority: i32, state: &str) -> TargetResponder {
    TargetResponder {
        name: name.to_owned(),
        priority,
        state: state.to_owned(),
    }
}

fn rs(name: &str) -> ResponderStatus {
    ResponderStatus {
        name: name.to_owned(),
        ..Default::default()
    }
}

fn started(name: &str, start: Timestamp) -> ResponderStatus {
    ResponderStatus {
        start_time: Some(time(start)),
        ..rs(name)
    }
}

fn condition(type_: &str, status: &str, reason: &str, message: &str, ts: Timestamp) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        last_transition_time: time(ts),
        observed_generation: None,
    }
}

fn awaiting(ts: Timestamp) -> Vec<Condition> {
    vec![
        condition(CONDITION_FAILED, "False", REASON_AWAITING_EVICTION, "", ts),
        condition(
            CONDITION_TARGET_EVICTED,
            "False",
            REASON_AWAITING_EVICTION,
            "",
            ts,
        ),
    ]
}

fn requester(name: &str, intent: &str) -> Requester {
    Requester {
        name: name.to_owned(),
        intent: intent.to_owned(),
    }
}

/// An Eviction already being walked: conditions Awaiting since an hour ago,
/// `observedGeneration=1`, requester `REQ` with intent Eviction.
fn walking(
    name: &str,
    responders: Vec<TargetResponder>,
    statuses: Vec<ResponderStatus>,
) -> Eviction {
    let mut e = eviction(name, at(-mins(60)));
    e.status = Some(EvictionStatus {
        conditions: Some(awaiting(at(-mins(60)))),
        observed_generation: Some(1),
        requesters: Some(vec![requester(REQ, INTENT_EVICTION)]),
        responders: Some(statuses),
        target_responders: Some(responders),
    });
    e
}

/// The three-responder walk of the upstream tests: A (15000), B (1000), evictor (100).
fn abe(states: [&str; 3], statuses: [ResponderStatus; 3]) -> Eviction {
    walking(
        "pod-1-p",
        vec![
            tr(A, 15000, states[0]),
            tr(B, 1000, states[1]),
            tr(EVICTOR, 100, states[2]),
        ],
        statuses.into(),
    )
}

fn pod_abe() -> Pod {
    with_responders(pod("p", U), &[(A, 15000), (B, 1000)])
}

fn sync(e: &Eviction, p: Option<&Pod>, requests: &[&EvictionRequest]) -> EvictionSyncPlan {
    sync_at(e, p, requests, now())
}

fn sync_at(
    e: &Eviction,
    p: Option<&Pod>,
    requests: &[&EvictionRequest],
    ts: Timestamp,
) -> EvictionSyncPlan {
    sync_eviction(
        &EvictionSyncInput {
            eviction: e,
            pod: p,
            target_evictions: &[e],
            target_requests: requests,
        },
        ts,
    )
}

fn sync_request(
    r: &EvictionRequest,
    p: Option<&Pod>,
    evictions: &[&Eviction],
    requests: &[&EvictionRequest],
) -> EvictionRequestSyncPlan {
    let names: Vec<&str> = evictions
        .iter()
        .filter_map(|e| e.metadata.name.as_deref())
        .collect();
    sync_eviction_request(
        &EvictionRequestSyncInput {
            request: r,
            pod: p,
            target_evictions: evictions,
            target_requests: requests,
            namespace_eviction_names: &names,
        },
        now(),
    )
}

fn states(status: &EvictionStatus) -> Vec<(&str, &str)> {
    status
        .target_responders
        .iter()
        .flatten()
        .map(|t| (t.name.as_str(), t.state.as_str()))
        .collect()
}

fn cond<'a>(conditions: Option<&'a Vec<Condition>>, type_: &str) -> &'a Condition {
    conditions
        .into_iter()
        .flatten()
        .find(|c| c.type_ == type_)
        .unwrap_or_else(|| panic!("condition {type_} missing"))
}

#[track_caller]
fn assert_cond(
    conditions: Option<&Vec<Condition>>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
) {
    let c = cond(conditions, type_);
    assert_eq!(
        (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
        (status, reason, message),
        "condition {type_}"
    );
}

#[track_caller]
fn assert_awaiting(conditions: Option<&Vec<Condition>>) {
    assert_cond(
        conditions,
        CONDITION_FAILED,
        "False",
        REASON_AWAITING_EVICTION,
        "",
    );
    assert_cond(
        conditions,
        CONDITION_TARGET_EVICTED,
        "False",
        REASON_AWAITING_EVICTION,
        "",
    );
}

/// Applies a planned status to the object (what the runtime's write does).
fn applied(mut e: Eviction, plan: &EvictionSyncPlan) -> Eviction {
    if let Some(status) = &plan.status {
        e.status = Some(status.clone());
    }
    e
}

fn status_of(plan: &EvictionSyncPlan) -> &EvictionStatus {
    plan.status.as_ref().expect("a status write")
}

// ---------------------------------------------------------------------------
// Cases 55–60: sort wrapper, happy path, initialization, early validation
// ---------------------------------------------------------------------------

#[test]
fn case_55_controller_sort_wrapper_orders_by_priority() {
    // Through the sync: an unsorted stored list is written back sorted.
    let mut e = walking(
        "pod-1-p",
        vec![
            tr("bar", 3, STATE_INACTIVE),
            tr("foo", 5, STATE_ACTIVE),
            tr("baz", 4, STATE_INACTIVE),
        ],
        vec![started("foo", at(-mins(1))), rs("bar"), rs("baz")],
    );
    if let Some(s) = e.status.as_mut() {
        s.observed_generation = None; // forces a write
    }
    let r = request("a", REQ, at(-mins(60)));
    let plan = sync(&e, Some(&pod("p", U)), &[&r]);
    let names: Vec<&str> = states(status_of(&plan))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["foo", "baz", "bar"]);
    let entries: Vec<&str> = status_of(&plan)
        .responders
        .iter()
        .flatten()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(entries, ["foo", "baz", "bar"]);

    // The empty list stays empty (pod gone before initialization).
    let e = eviction("pod-1-p", at(-mins(1)));
    let plan = sync(&e, None, &[&r]);
    assert_eq!(status_of(&plan).target_responders.as_deref(), Some(&[][..]));
}

#[test]
fn case_56_happy_path_without_custom_responders() {
    let p = pod("p", U);
    let a = request("a", REQ, at(-secs(10)));

    // EvictionRequest sync: creates pod-1-p.
    let plan = sync_request(&a, Some(&p), &[], &[&a]);
    let created = plan.create_eviction.expect("an Eviction is created");
    assert_eq!(created.metadata.name.as_deref(), Some("pod-1-p"));
    assert_eq!(created.metadata.namespace.as_deref(), Some(NS));
    assert_eq!(
        created.metadata.owner_references,
        Some(vec![OwnerReference {
            api_version: "lifecycle.k8s.io/v1alpha1".to_owned(),
            kind: "EvictionRequest".to_owned(),
            name: "a".to_owned(),
            uid: "er-uid-a".to_owned(),
            block_owner_deletion: None,
            controller: None,
        }])
    );
    assert_eq!(
        created.metadata.labels,
        Some(BTreeMap::from([(REQ.to_owned(), "requester".to_owned())]))
    );
    assert_eq!(
        created.spec.target.pod,
        Some(EvictionPodReference {
            name: "p".to_owned(),
            uid: U.to_owned()
        })
    );
    assert!(created.status.is_none());
    let er_status = plan.status.expect("ER status written");
    assert_eq!(er_status.observed_generation, Some(1));
    let msg = MSG_WAITING_FOR_EVICTION;
    assert_cond(
        er_status.conditions.as_ref(),
        CONDITION_FAILED,
        "False",
        REASON_AWAITING_EVICTION,
        msg,
    );
    assert_cond(
        er_status.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "False",
        REASON_AWAITING_EVICTION,
        msg,
    );

    // The API server stamps it; the Eviction sync initializes and activates.
    let mut e = created;
    e.metadata.uid = Some("ev-uid-1".to_owned());
    e.metadata.generation = Some(1);
    e.metadata.creation_timestamp = Some(time(now()));
    let plan = sync(&e, Some(&p), &[&a]);
    assert_eq!(plan.requeue_after, Some(mins(20)));
    let s = status_of(&plan);
    assert_eq!(s.observed_generation, Some(1));
    assert_eq!(s.requesters, Some(vec![requester(REQ, INTENT_EVICTION)]));
    assert_eq!(
        s.target_responders,
        Some(vec![tr(EVICTOR, 100, STATE_ACTIVE)])
    );
    assert_eq!(s.responders, Some(vec![started(EVICTOR, now())]));
    assert_awaiting(s.conditions.as_ref());
    let c = cond(s.conditions.as_ref(), CONDITION_FAILED);
    assert_eq!(c.last_transition_time.0, now());
    let metrics = plan.metrics.clone().expect("metrics hint");
    assert_eq!(metrics.target_name, "p");
    assert_eq!(metrics.target_type, "pod");
    assert_eq!(metrics.target_responders(), 1);
    let e = applied(e, &plan);

    // Refresh adds the evictor's role label; the owner reference is kept.
    let refresh = sync_eviction_meta_refresh(&MetaRefreshInput {
        eviction: &e,
        pod: Some(&p),
        target_requests: &[&a],
    })
    .expect("label update");
    assert_eq!(
        refresh.labels,
        BTreeMap::from([
            (REQ.to_owned(), "requester".to_owned()),
            (EVICTOR.to_owned(), "responder".to_owned()),
        ])
    );
    assert_eq!(refresh.owner_references.len(), 1);
    assert_eq!(refresh.target, e.spec.target);

    // The request now mirrors the Eviction's conditions.
    let mut a = a;
    a.status = Some(er_status);
    let plan = sync_request(&a, Some(&p), &[&e], &[&a]);
    assert!(plan.create_eviction.is_none());
    let er_status = plan.status.expect("mirrored conditions changed");
    assert_eq!(er_status.observed_generation, Some(1));
    assert_awaiting(er_status.conditions.as_ref());

    // Steady state: nothing more to write.
    a.status = Some(er_status);
    assert_eq!(
        sync_request(&a, Some(&p), &[&e], &[&a]),
        EvictionRequestSyncPlan::default()
    );
    let plan = sync(&e, Some(&p), &[&a]);
    assert!(plan.status.is_none());
    assert_eq!(plan.requeue_after, Some(mins(20)));
}

#[test]
fn case_57_initialization_from_pod() {
    let p = with_responders(pod("p", U), &[(A, 1000), (B, 15000)]);
    assert_eq!(
        initial_target_responders(&p),
        vec![
            tr(A, 1000, STATE_INACTIVE),
            tr(B, 15000, STATE_INACTIVE),
            tr(EVICTOR, 100, STATE_INACTIVE),
        ]
    );
    let (list, changed) = get_or_initialize(&[], Some(&p));
    assert!(changed);
    assert_eq!(list.len(), 3);

    // Existing list copied unchanged; the pod's spec is ignored.
    let existing = vec![
        tr("foo.example.com/bar", 5000, STATE_ACTIVE),
        tr("foo.example.com/baz", 4999, STATE_INACTIVE),
    ];
    assert_eq!(
        get_or_initialize(&existing, Some(&p)),
        (existing.clone(), false)
    );
    // No pod, no list.
    assert_eq!(get_or_initialize(&[], None), (vec![], false));

    // After sort and one progression step, b runs first.
    let r = request("a", REQ, at(-mins(1)));
    let plan = sync(&eviction("pod-1-p", now()), Some(&p), &[&r]);
    assert_eq!(
        states(status_of(&plan)),
        [
            (B, STATE_ACTIVE),
            (A, STATE_INACTIVE),
            (EVICTOR, STATE_INACTIVE)
        ]
    );
    assert_eq!(
        status_of(&plan).responders,
        Some(vec![started(B, now()), rs(A), rs(EVICTOR)])
    );
}

#[test]
fn case_58_target_not_found() {
    let r = request_for("a", REQ, "ghost", U, at(-secs(5)));
    let plan = sync_request(&r, None, &[], &[&r]);
    assert!(plan.create_eviction.is_none());
    let s = plan.status.expect("status");
    assert_eq!(s.observed_generation, Some(1));
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_EVICTION_INVALID,
        "Target pod not found.",
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "False",
        REASON_EVICTION_FAILED,
        "",
    );

    // Completed: later syncs skip it ...
    let mut r = r;
    r.status = Some(s);
    assert_eq!(
        sync_request(&r, None, &[], &[&r]),
        EvictionRequestSyncPlan::default()
    );
    // ... until its generation changes.
    r.metadata.generation = Some(2);
    let s = sync_request(&r, None, &[], &[&r])
        .status
        .expect("revalidated");
    assert_eq!(s.observed_generation, Some(2));
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_EVICTION_INVALID,
        "Target pod not found.",
    );
}

#[test]
fn case_59_target_uid_mismatch() {
    let p = pod("p", V);
    let r = request("a", REQ, at(-secs(5)));
    let plan = sync_request(&r, Some(&p), &[], &[&r]);
    assert!(plan.create_eviction.is_none());
    let s = plan.status.expect("status");
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_EVICTION_INVALID,
        &format!("Target pod UID mismatch: expected {U}, got {V}."),
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "False",
        REASON_EVICTION_FAILED,
        "",
    );

    // Variant: an Eviction for U already exists (the pod was replaced): mirror it.
    let mut e = eviction("pod-1-p", at(-mins(5)));
    e.status = Some(EvictionStatus {
        conditions: Some(vec![
            condition(
                CONDITION_FAILED,
                "False",
                REASON_SUCCEEDED,
                "",
                at(-mins(1)),
            ),
            condition(
                CONDITION_TARGET_EVICTED,
                "True",
                REASON_POD_DELETED,
                MSG_POD_DELETED,
                at(-mins(1)),
            ),
        ]),
        ..Default::default()
    });
    let plan = sync_request(&r, Some(&p), &[&e], &[&r]);
    assert!(plan.create_eviction.is_none());
    let s = plan.status.expect("status");
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "True",
        REASON_POD_DELETED,
        MSG_POD_DELETED,
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "False",
        REASON_SUCCEEDED,
        "",
    );
    // Own transition time, not the Eviction's.
    assert_eq!(
        cond(s.conditions.as_ref(), CONDITION_TARGET_EVICTED)
            .last_transition_time
            .0,
        now()
    );
}

#[test]
fn case_60_pod_group_target() {
    let p = in_pod_group(pod("p", U));
    let r = request("a", REQ, at(-secs(5)));
    let plan = sync_request(&r, Some(&p), &[], &[&r]);
    assert!(plan.create_eviction.is_none());
    let s = plan.status.expect("status");
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_EVICTION_INVALID,
        MSG_SCHEDULING_GROUP,
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "False",
        REASON_EVICTION_FAILED,
        "",
    );

    // A third-party Eviction for such a pod is failed the same way, nothing else written.
    let e = eviction("x", at(-secs(5)));
    let plan = sync(&e, Some(&p), &[&r]);
    assert_eq!(plan.requeue_after, None);
    let s = status_of(&plan);
    assert_eq!(s.observed_generation, Some(1));
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_EVICTION_INVALID,
        MSG_SCHEDULING_GROUP,
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "False",
        REASON_EVICTION_FAILED,
        "",
    );
    assert!(s.target_responders.is_none());
    assert!(s.requesters.is_none());
}

// ---------------------------------------------------------------------------
// Cases 61–68: requesters, labels, cancellation, re-request
// ---------------------------------------------------------------------------

#[test]
fn case_61_second_requester_joins() {
    let p = pod("p", U);
    let a = request("a", REQ, at(-mins(2)));
    let b = request("b", "desched.io/x", at(-mins(1)));
    let e = walking(
        "pod-1-p",
        vec![tr(EVICTOR, 100, STATE_ACTIVE)],
        vec![started(EVICTOR, at(-mins(2)))],
    );
    // b's request sync finds the active Eviction: no second one.
    let plan = sync_request(&b, Some(&p), &[&e], &[&a, &b]);
    assert!(plan.create_eviction.is_none());

    let plan = sync(&e, Some(&p), &[&b, &a]);
    assert_eq!(
        status_of(&plan).requesters,
        Some(vec![
            requester(REQ, INTENT_EVICTION),
            requester("desched.io/x", INTENT_EVICTION)
        ])
    );
    let mut e = e;
    e.metadata.owner_references = Some(vec![
        exitplan_control::evictionrequest::request_sync::eviction_request_owner_reference(&a),
    ]);
    e.metadata.labels = Some(BTreeMap::from([(REQ.to_owned(), "requester".to_owned())]));
    let refresh = sync_eviction_meta_refresh(&MetaRefreshInput {
        eviction: &e,
        pod: Some(&p),
        target_requests: &[&a, &b],
    })
    .expect("update");
    assert_eq!(
        refresh.labels.get(REQ).map(String::as_str),
        Some("requester")
    );
    assert_eq!(
        refresh.labels.get("desched.io/x").map(String::as_str),
        Some("requester")
    );
    let owners: Vec<&str> = refresh
        .owner_references
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(owners, ["a", "b"]);
}

#[test]
fn case_62_requester_that_is_also_a_responder() {
    let p = with_responders(pod("p", U), &[(REQ, 12000)]);
    let a = request("a", REQ, at(-mins(2)));
    let e = eviction("pod-1-p", at(-mins(1)));
    let labels = compute_eviction_labels(&e, Some(&p), &[&a]);
    assert_eq!(
        labels,
        BTreeMap::from([
            (REQ.to_owned(), "requester-responder".to_owned()),
            (EVICTOR.to_owned(), "responder".to_owned()),
        ])
    );
}

#[test]
fn case_63_hundred_and_one_requesters() {
    let p = pod("p", U);
    let created = at(-mins(5));
    let mut requests: Vec<EvictionRequest> = (0..101)
        .map(|i| request(&format!("r{i:03}"), &format!("req.io/r{i:03}"), created))
        .collect();
    let e = walking(
        "pod-1-p",
        vec![tr(EVICTOR, 100, STATE_ACTIVE)],
        vec![started(EVICTOR, at(-mins(1)))],
    );
    let refs: Vec<&EvictionRequest> = requests.iter().collect();
    let plan = sync(&e, Some(&p), &refs);
    let listed = status_of(&plan).requesters.clone().expect("requesters");
    assert_eq!(listed.len(), 100);
    assert!(listed.iter().all(|r| r.intent == INTENT_EVICTION));
    assert!(
        !listed.iter().any(|r| r.name == "req.io/r100"),
        "last by name omitted"
    );
    let e = applied(e, &plan);

    // Labels and owner references are not capped.
    let refresh = sync_eviction_meta_refresh(&MetaRefreshInput {
        eviction: &e,
        pod: Some(&p),
        target_requests: &refs,
    })
    .expect("update");
    assert_eq!(
        refresh
            .labels
            .values()
            .filter(|v| *v == "requester")
            .count(),
        101
    );
    assert_eq!(refresh.owner_references.len(), 101);

    // One withdraws: the 100 Eviction-intent ones are listed.
    requests[7] = withdrawn(requests[7].clone());
    let refs: Vec<&EvictionRequest> = requests.iter().collect();
    let plan = sync(&e, Some(&p), &refs);
    let listed = status_of(&plan).requesters.clone().expect("requesters");
    assert_eq!(listed.len(), 100);
    assert!(listed.iter().all(|r| r.intent == INTENT_EVICTION));
    assert!(listed.iter().any(|r| r.name == "req.io/r100"));
    assert!(!listed.iter().any(|r| r.name == "req.io/r007"));
}

#[test]
fn case_64_requester_relevance_sort() {
    let zero = |mut r: EvictionRequest| {
        r.metadata.creation_timestamp = None;
        r
    };
    let t = now();
    let r = |n: &str| request(n, &format!("foo.example.com/{n}"), t);
    let inputs = [
        zero(r("2")),
        withdrawn(zero(r("4"))),
        r("1"),
        r("3"),
        deleting_request(r("5"), t),
        r("7"),
        withdrawn(r("6")),
        deleting_request(r("8"), t),
        withdrawn(deleting_request(r("9"), t)),
    ];
    let mut refs: Vec<&EvictionRequest> = inputs.iter().collect();
    sort_eviction_requests_by_relevance(&mut refs);
    let order: Vec<&str> = refs
        .iter()
        .filter_map(|r| r.metadata.name.as_deref())
        .collect();
    assert_eq!(order, ["1", "3", "7", "6", "5", "8", "9", "2", "4"]);
}

#[test]
fn case_65_withdraw_by_the_only_requester_cancels() {
    let p = pod_abe();
    let a = withdrawn(request("a", REQ, at(-mins(30))));
    let e = abe(
        [STATE_ACTIVE, STATE_INACTIVE, STATE_INACTIVE],
        [started(A, at(-mins(3))), rs(B), rs(EVICTOR)],
    );
    let plan = sync(&e, Some(&p), &[&a]);
    assert_eq!(plan.requeue_after, None);
    let s = status_of(&plan);
    assert_eq!(
        states(s),
        [
            (A, STATE_CANCELED),
            (B, STATE_INACTIVE),
            (EVICTOR, STATE_INACTIVE)
        ]
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_CANCELED_NO_REQUESTERS,
        MSG_NO_REQUESTERS,
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "False",
        REASON_EVICTION_FAILED,
        "",
    );
    assert_eq!(s.requesters, Some(vec![requester(REQ, INTENT_WITHDRAWN)]));
    let e = applied(e, &plan);

    // The request mirrors the cancellation and creates nothing.
    let plan = sync_request(&a, Some(&p), &[&e], &[&a]);
    assert!(plan.create_eviction.is_none());
    let s = plan.status.expect("status");
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_CANCELED_NO_REQUESTERS,
        MSG_NO_REQUESTERS,
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "False",
        REASON_EVICTION_FAILED,
        "",
    );

    // Cancel with no Active responder: states unchanged.
    let e = abe(
        [STATE_INACTIVE, STATE_INACTIVE, STATE_INACTIVE],
        [rs(A), rs(B), rs(EVICTOR)],
    );
    let plan = sync(&e, Some(&p), &[&a]);
    let s = status_of(&plan);
    assert_eq!(
        states(s),
        [
            (A, STATE_INACTIVE),
            (B, STATE_INACTIVE),
            (EVICTOR, STATE_INACTIVE)
        ]
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_CANCELED_NO_REQUESTERS,
        MSG_NO_REQUESTERS,
    );
}

#[test]
fn case_66_partial_withdrawal_only_updates_requesters() {
    let p = pod_abe();
    let a = withdrawn(request("a", REQ, at(-mins(30))));
    let b = request("b", "desched.io/x", at(-mins(20)));
    let mut e = abe(
        [STATE_ACTIVE, STATE_INACTIVE, STATE_INACTIVE],
        [started(A, at(-mins(3))), rs(B), rs(EVICTOR)],
    );
    if let Some(s) = e.status.as_mut() {
        s.requesters = Some(vec![
            requester(REQ, INTENT_EVICTION),
            requester("desched.io/x", INTENT_EVICTION),
        ]);
    }
    let plan = sync(&e, Some(&p), &[&a, &b]);
    let s = status_of(&plan);
    assert_eq!(
        states(s),
        [
            (A, STATE_ACTIVE),
            (B, STATE_INACTIVE),
            (EVICTOR, STATE_INACTIVE)
        ]
    );
    assert_awaiting(s.conditions.as_ref());
    assert_eq!(
        s.requesters,
        Some(vec![
            requester("desched.io/x", INTENT_EVICTION),
            requester(REQ, INTENT_WITHDRAWN),
        ])
    );
    assert_eq!(plan.requeue_after, Some(mins(17)));
}

#[test]
fn case_67_deleting_the_last_eviction_intent_request_cancels() {
    let p = pod_abe();
    let a = deleting_request(request("a", REQ, at(-mins(30))), now());
    let b = withdrawn(request("b", "desched.io/x", at(-mins(20))));
    let e = abe(
        [STATE_ACTIVE, STATE_INACTIVE, STATE_INACTIVE],
        [started(A, at(-mins(3))), rs(B), rs(EVICTOR)],
    );
    let plan = sync(&e, Some(&p), &[&a, &b]);
    let s = status_of(&plan);
    assert_eq!(states(s)[0], (A, STATE_CANCELED));
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_CANCELED_NO_REQUESTERS,
        MSG_NO_REQUESTERS,
    );
    let listed = s.requesters.clone().expect("requesters");
    assert!(listed.contains(&requester(REQ, INTENT_WITHDRAWN)));
    assert!(listed.contains(&requester("desched.io/x", INTENT_WITHDRAWN)));

    // Once gone from the cache it lingers as a status-only leftover, Withdrawn.
    let update = aggregate_requesters(&[requester(REQ, INTENT_EVICTION)], &[&b], MAX_REQUESTERS);
    assert_eq!(
        update.requesters,
        vec![
            requester("desched.io/x", INTENT_WITHDRAWN),
            requester(REQ, INTENT_WITHDRAWN)
        ]
    );
    assert!(update.changed);
}

#[test]
fn case_68_withdrawn_then_re_requested_creates_pod_2() {
    let p = pod_abe();
    // pod-1-p was canceled (case 65).
    let mut old = abe(
        [STATE_CANCELED, STATE_INACTIVE, STATE_INACTIVE],
        [started(A, at(-mins(10))), rs(B), rs(EVICTOR)],
    );
    if let Some(s) = old.status.as_mut() {
        s.conditions = Some(vec![
            condition(
                CONDITION_FAILED,
                "True",
                REASON_CANCELED_NO_REQUESTERS,
                MSG_NO_REQUESTERS,
                at(-mins(5)),
            ),
            condition(
                CONDITION_TARGET_EVICTED,
                "False",
                REASON_EVICTION_FAILED,
                "",
                at(-mins(5)),
            ),
        ]);
    }
    let mut a = request("a", REQ, at(-mins(30)));
    a.metadata.generation = Some(3);
    a.status = Some(EvictionRequestStatus {
        observed_generation: Some(2),
        conditions: Some(vec![
            condition(
                CONDITION_FAILED,
                "True",
                REASON_CANCELED_NO_REQUESTERS,
                MSG_NO_REQUESTERS,
                at(-mins(5)),
            ),
            condition(
                CONDITION_TARGET_EVICTED,
                "False",
                REASON_EVICTION_FAILED,
                "",
                at(-mins(5)),
            ),
        ]),
    });
    let plan = sync_request(&a, Some(&p), &[&old], &[&a]);
    let created = plan.create_eviction.expect("a new Eviction");
    assert_eq!(created.metadata.name.as_deref(), Some("pod-2-p"));
    assert_eq!(
        created.metadata.owner_references.as_ref().map(Vec::len),
        Some(1)
    );
    let s = plan.status.expect("observedGeneration refreshed");
    assert_eq!(s.observed_generation, Some(3));
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_CANCELED_NO_REQUESTERS,
        MSG_NO_REQUESTERS,
    );
    a.status = Some(s);

    // pod-1-p stays frozen.
    assert_eq!(sync(&old, Some(&p), &[&a]), EvictionSyncPlan::default());

    // Once pod-2-p is synced, the request follows it back to False/AwaitingEviction.
    let mut new = created;
    new.metadata.uid = Some("ev-uid-2".to_owned());
    new.metadata.generation = Some(1);
    new.metadata.creation_timestamp = Some(time(now()));
    let plan = sync_eviction(
        &EvictionSyncInput {
            eviction: &new,
            pod: Some(&p),
            target_evictions: &[&old, &new],
            target_requests: &[&a],
        },
        now(),
    );
    assert_eq!(states(status_of(&plan))[0], (A, STATE_ACTIVE));
    let new = applied(new, &plan);
    let plan = sync_request(&a, Some(&p), &[&old, &new], &[&a]);
    assert!(plan.create_eviction.is_none());
    let s = plan.status.expect("flipped back");
    assert_awaiting(s.conditions.as_ref());
    assert_eq!(
        cond(s.conditions.as_ref(), CONDITION_FAILED)
            .last_transition_time
            .0,
        now()
    );
}

// ---------------------------------------------------------------------------
// Cases 69–76: the walk, heartbeats, target gone / terminal / replaced
// ---------------------------------------------------------------------------

#[test]
fn case_69_progression_on_completion() {
    let p = pod_abe();
    let a = request("a", REQ, at(-mins(60)));
    let done = |name: &str, start: Timestamp| ResponderStatus {
        completion_time: Some(time(now())),
        ..started(name, start)
    };
    // A completed → B activated with startTime now.
    let e = abe(
        [STATE_ACTIVE, STATE_INACTIVE, STATE_INACTIVE],
        [done(A, at(-mins(5))), rs(B), rs(EVICTOR)],
    );
    let plan = sync(&e, Some(&p), &[&a]);
    assert_eq!(plan.requeue_after, Some(mins(20)));
    let s = status_of(&plan);
    assert_eq!(
        states(s),
        [
            (A, STATE_COMPLETED),
            (B, STATE_ACTIVE),
            (EVICTOR, STATE_INACTIVE)
        ]
    );
    assert_eq!(
        s.responders,
        Some(vec![done(A, at(-mins(5))), started(B, now()), rs(EVICTOR)])
    );
    assert_awaiting(s.conditions.as_ref());

    // B completes → the evictor runs.
    let mut e = applied(e, &plan);
    if let Some(st) = e.status.as_mut() {
        st.responders = Some(vec![done(A, at(-mins(5))), done(B, now()), rs(EVICTOR)]);
    }
    let plan = sync(&e, Some(&p), &[&a]);
    assert_eq!(plan.requeue_after, Some(mins(20)));
    assert_eq!(
        states(status_of(&plan)),
        [
            (A, STATE_COMPLETED),
            (B, STATE_COMPLETED),
            (EVICTOR, STATE_ACTIVE)
        ]
    );

    // The evictor completes → all Completed, no further progression yet.
    let mut e = applied(e, &plan);
    if let Some(st) = e.status.as_mut() {
        st.responders = Some(vec![
            done(A, at(-mins(5))),
            done(B, now()),
            done(EVICTOR, now()),
        ]);
    }
    let plan = sync(&e, Some(&p), &[&a]);
    assert_eq!(plan.requeue_after, None);
    let s = status_of(&plan);
    assert_eq!(
        states(s),
        [
            (A, STATE_COMPLETED),
            (B, STATE_COMPLETED),
            (EVICTOR, STATE_COMPLETED)
        ]
    );
    assert_awaiting(s.conditions.as_ref());

    // Next sync: the walk is over without an eviction.
    let e = applied(e, &plan);
    let plan = sync(&e, Some(&p), &[&a]);
    assert_eq!(plan.requeue_after, None);
    let s = status_of(&plan);
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_NO_FURTHER_RESPONDER,
        MSG_NO_FURTHER_RESPONDER,
    );
}

#[test]
fn case_70_heartbeat_expiry_and_resync_table() {
    struct Row {
        name: &'static str,
        start: SignedDuration,
        heartbeat: Option<SignedDuration>,
        a_state: &'static str,
        b_state: &'static str,
        resync: SignedDuration,
    }
    let rows = [
        Row {
            name: "heartbeat exactly 20m ago",
            start: -mins(25),
            heartbeat: Some(-mins(20)),
            a_state: STATE_INTERRUPTED,
            b_state: STATE_ACTIVE,
            resync: mins(20),
        },
        Row {
            name: "heartbeat 2m ago",
            start: -mins(25),
            heartbeat: Some(-mins(2)),
            a_state: STATE_ACTIVE,
            b_state: STATE_INACTIVE,
            resync: mins(18),
        },
        Row {
            name: "started 1m ago",
            start: -mins(1),
            heartbeat: None,
            a_state: STATE_ACTIVE,
            b_state: STATE_INACTIVE,
            resync: mins(19),
        },
        Row {
            name: "started 21m ago, silent",
            start: -mins(21),
            heartbeat: None,
            a_state: STATE_INTERRUPTED,
            b_state: STATE_ACTIVE,
            resync: mins(20),
        },
        Row {
            name: "heartbeat 19m59s ago",
            start: -mins(25),
            heartbeat: Some(-(mins(19) + secs(59))),
            a_state: STATE_ACTIVE,
            b_state: STATE_INACTIVE,
            resync: secs(1),
        },
    ];
    let p = pod_abe();
    let a = request("a", REQ, at(-mins(60)));
    for row in rows {
        let status_a = ResponderStatus {
            heartbeat_time: row.heartbeat.map(|h| time(at(h))),
            ..started(A, at(row.start))
        };
        let e = abe(
            [STATE_ACTIVE, STATE_INACTIVE, STATE_INACTIVE],
            [status_a.clone(), rs(B), rs(EVICTOR)],
        );
        let plan = sync(&e, Some(&p), &[&a]);
        assert_eq!(plan.requeue_after, Some(row.resync), "{}", row.name);
        if row.a_state == STATE_ACTIVE {
            assert!(plan.status.is_none(), "{}: nothing changed", row.name);
            continue;
        }
        let s = status_of(&plan);
        assert_eq!(
            states(s),
            [
                (A, row.a_state),
                (B, row.b_state),
                (EVICTOR, STATE_INACTIVE)
            ],
            "{}",
            row.name
        );
        assert_eq!(
            s.responders.as_ref().map(|r| r[0].clone()),
            Some(status_a),
            "{}: responder-owned fields kept",
            row.name
        );
        assert_eq!(
            s.responders.as_ref().and_then(|r| r[1].start_time.clone()),
            Some(time(now())),
            "{}",
            row.name
        );
        assert_awaiting(s.conditions.as_ref());
    }
}

#[test]
fn case_71_last_responder_fails_no_further_responder() {
    let p = pod_abe();
    let a = request("a", REQ, at(-mins(60)));
    for last in [STATE_INTERRUPTED, STATE_CANCELED] {
        let e = abe(
            [STATE_COMPLETED, STATE_COMPLETED, last],
            [
                started(A, at(-mins(50))),
                started(B, at(-mins(40))),
                started(EVICTOR, at(-mins(30))),
            ],
        );
        let plan = sync(&e, Some(&p), &[&a]);
        assert_eq!(plan.requeue_after, None);
        let s = status_of(&plan);
        assert_eq!(states(s)[2], (EVICTOR, last));
        assert_cond(
            s.conditions.as_ref(),
            CONDITION_FAILED,
            "True",
            REASON_NO_FURTHER_RESPONDER,
            MSG_NO_FURTHER_RESPONDER,
        );
        assert_cond(
            s.conditions.as_ref(),
            CONDITION_TARGET_EVICTED,
            "False",
            REASON_EVICTION_FAILED,
            "",
        );
        let c = cond(s.conditions.as_ref(), CONDITION_FAILED);
        assert_eq!(c.last_transition_time.0, now());
        // Frozen afterwards.
        let e = applied(e, &plan);
        assert_eq!(sync(&e, Some(&p), &[&a]), EvictionSyncPlan::default());
    }
}

#[test]
fn case_72_pod_deleted_responder_finished() {
    let a = request("a", REQ, at(-mins(60)));
    let e = abe(
        [STATE_ACTIVE, STATE_INACTIVE, STATE_INACTIVE],
        [
            ResponderStatus {
                completion_time: Some(time(at(-secs(3)))),
                ..started(A, at(-mins(5)))
            },
            rs(B),
            rs(EVICTOR),
        ],
    );
    let plan = sync(&e, None, &[&a]);
    assert_eq!(plan.requeue_after, None);
    let s = status_of(&plan);
    assert_eq!(
        states(s),
        [
            (A, STATE_COMPLETED),
            (B, STATE_INACTIVE),
            (EVICTOR, STATE_INACTIVE)
        ]
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "True",
        REASON_POD_DELETED,
        "Target pod has been deleted.",
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "False",
        REASON_SUCCEEDED,
        "",
    );
}

#[test]
fn case_73_pod_deleted_responder_silent() {
    let a = request("a", REQ, at(-mins(60)));
    let e = abe(
        [STATE_ACTIVE, STATE_INACTIVE, STATE_INACTIVE],
        [started(A, at(-mins(5))), rs(B), rs(EVICTOR)],
    );
    let plan = sync(&e, None, &[&a]);
    assert_eq!(plan.requeue_after, None);
    let s = status_of(&plan);
    assert_eq!(
        states(s),
        [
            (A, STATE_INTERRUPTED),
            (B, STATE_INACTIVE),
            (EVICTOR, STATE_INACTIVE)
        ]
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "True",
        REASON_POD_DELETED,
        MSG_POD_DELETED,
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "False",
        REASON_SUCCEEDED,
        "",
    );
}

#[test]
fn case_74_terminal_pod_grace() {
    let a = request("a", REQ, at(-mins(60)));
    let walk = |completion: Option<Timestamp>| {
        abe(
            [STATE_ACTIVE, STATE_INACTIVE, STATE_INACTIVE],
            [
                ResponderStatus {
                    completion_time: completion.map(time),
                    ..started(A, at(-mins(5)))
                },
                rs(B),
                rs(EVICTOR),
            ],
        )
    };
    // Deleted 4 s ago, no completionTime: wait 1 s more, nothing written.
    let p = deleting_pod(in_phase(pod_abe(), "Succeeded"), at(-secs(4)));
    let plan = sync(&walk(None), Some(&p), &[&a]);
    assert_eq!(plan.requeue_after, Some(secs(1)));
    assert!(
        plan.status.is_none(),
        "Active kept, conditions still Awaiting"
    );

    // Deleted 6 s ago: interrupted, PodTerminal.
    let p = deleting_pod(in_phase(pod_abe(), "Succeeded"), at(-secs(6)));
    let plan = sync(&walk(None), Some(&p), &[&a]);
    assert_eq!(plan.requeue_after, None);
    let s = status_of(&plan);
    assert_eq!(states(s)[0], (A, STATE_INTERRUPTED));
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "True",
        REASON_POD_TERMINAL,
        "Pod has reached terminal state.",
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "False",
        REASON_SUCCEEDED,
        "",
    );

    // Terminal with completionTime: Completed right away, even inside the grace.
    let p = deleting_pod(in_phase(pod_abe(), "Failed"), at(-secs(1)));
    let plan = sync(&walk(Some(at(-secs(2)))), Some(&p), &[&a]);
    let s = status_of(&plan);
    assert_eq!(
        states(s),
        [
            (A, STATE_COMPLETED),
            (B, STATE_INACTIVE),
            (EVICTOR, STATE_INACTIVE)
        ]
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "True",
        REASON_POD_TERMINAL,
        MSG_POD_TERMINAL,
    );

    // Terminal without a deletionTimestamp: no grace.
    let p = in_phase(pod_abe(), "Failed");
    let s = sync(&walk(None), Some(&p), &[&a]).status.expect("status");
    assert_eq!(states(&s)[0], (A, STATE_INTERRUPTED));

    // Terminating but not terminal: the walk goes on (heartbeats still required).
    let p = deleting_pod(pod_abe(), at(-secs(30)));
    let plan = sync(&walk(None), Some(&p), &[&a]);
    assert!(plan.status.is_none());
    assert_eq!(plan.requeue_after, Some(mins(15)));
}

#[test]
fn case_75_should_defer_completion_table() {
    let open = rs(A);
    let finished = ResponderStatus {
        completion_time: Some(time(now())),
        ..rs(A)
    };
    let deleted = |d: SignedDuration| deleting_pod(pod("p", U), at(d));
    let live = pod("p", U);
    type Row<'a> = (
        &'a str,
        Option<&'a ResponderStatus>,
        Option<Pod>,
        Option<SignedDuration>,
    );
    let rows: [Row<'_>; 7] = [
        ("no responder status", None, Some(deleted(-secs(1))), None),
        (
            "responder with completion time",
            Some(&finished),
            Some(deleted(-secs(1))),
            None,
        ),
        ("no pod", Some(&open), None, None),
        ("no deletion timestamp", Some(&open), Some(live), None),
        (
            "planned deletion",
            Some(&open),
            Some(deleted(mins(1))),
            Some(mins(1) + secs(5)),
        ),
        (
            "recent deletion",
            Some(&open),
            Some(deleted(-secs(1))),
            Some(secs(4)),
        ),
        ("old deletion", Some(&open), Some(deleted(-secs(5))), None),
    ];
    for (name, status, p, want) in rows {
        assert_eq!(
            should_defer_completion(now(), status, p.as_ref()),
            want,
            "{name}"
        );
    }

    // Through the sync: a deletionTimestamp 1 min ahead defers 1m5s.
    let a = request("a", REQ, at(-mins(60)));
    let e = abe(
        [STATE_ACTIVE, STATE_INACTIVE, STATE_INACTIVE],
        [started(A, at(-mins(5))), rs(B), rs(EVICTOR)],
    );
    let p = deleting_pod(in_phase(pod_abe(), "Succeeded"), at(mins(1)));
    assert_eq!(
        sync(&e, Some(&p), &[&a]).requeue_after,
        Some(mins(1) + secs(5))
    );
}

#[test]
fn case_76_pod_replaced_is_gone() {
    let a = request("a", REQ, at(-mins(60)));
    let replacement = with_responders(pod("p", V), &[("other.io/x", 5000)]);
    let e = abe(
        [STATE_ACTIVE, STATE_INACTIVE, STATE_INACTIVE],
        [started(A, at(-mins(5))), rs(B), rs(EVICTOR)],
    );
    let s = sync(&e, Some(&replacement), &[&a]).status.expect("status");
    assert_eq!(states(&s)[0], (A, STATE_INTERRUPTED));
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "True",
        REASON_POD_DELETED,
        MSG_POD_DELETED,
    );

    // Quirk: never initialized → the replacement's responders, all Inactive.
    let e = eviction("pod-1-p", at(-secs(2)));
    let s = sync(&e, Some(&replacement), &[&a]).status.expect("status");
    assert_eq!(
        states(&s),
        [("other.io/x", STATE_INACTIVE), (EVICTOR, STATE_INACTIVE)]
    );
    assert_eq!(s.responders, Some(vec![rs("other.io/x"), rs(EVICTOR)]));
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "True",
        REASON_POD_DELETED,
        MSG_POD_DELETED,
    );

    // A fresh deletionTimestamp on the replacement also defers (pod read by name).
    let e = abe(
        [STATE_ACTIVE, STATE_INACTIVE, STATE_INACTIVE],
        [started(A, at(-mins(5))), rs(B), rs(EVICTOR)],
    );
    let deleting_replacement = deleting_pod(replacement, at(-secs(2)));
    let plan = sync(&e, Some(&deleting_replacement), &[&a]);
    assert_eq!(plan.requeue_after, Some(secs(3)));
    assert!(plan.status.is_none());
}

// ---------------------------------------------------------------------------
// Cases 77–83: duplicates, frozen Evictions, relevance, naming, metadata
// ---------------------------------------------------------------------------

fn with_conditions(mut e: Eviction, conditions: Vec<Condition>) -> Eviction {
    let mut status = e.status.unwrap_or_default();
    status.conditions = Some(conditions);
    e.status = Some(status);
    e
}

fn succeeded(e: Eviction, ts: Timestamp) -> Eviction {
    with_conditions(
        e,
        vec![
            condition(CONDITION_FAILED, "False", REASON_SUCCEEDED, "", ts),
            condition(
                CONDITION_TARGET_EVICTED,
                "True",
                REASON_POD_DELETED,
                MSG_POD_DELETED,
                ts,
            ),
        ],
    )
}

fn failed(e: Eviction, ts: Timestamp) -> Eviction {
    with_conditions(
        e,
        vec![condition(
            CONDITION_FAILED,
            "True",
            REASON_NO_FURTHER_RESPONDER,
            MSG_NO_FURTHER_RESPONDER,
            ts,
        )],
    )
}

#[test]
fn case_77_duplicate_eviction() {
    let p = pod("p", U);
    let a = request("a", REQ, at(-mins(60)));
    let older = walking(
        "pod-1-p",
        vec![tr(EVICTOR, 100, STATE_ACTIVE)],
        vec![started(EVICTOR, at(-mins(1)))],
    );
    let third = eviction("x", now());
    let all = [&older, &third];
    let run = |e: &Eviction, all: &[&Eviction]| {
        sync_eviction(
            &EvictionSyncInput {
                eviction: e,
                pod: Some(&p),
                target_evictions: all,
                target_requests: &[&a],
            },
            now(),
        )
    };
    let plan = run(&third, &all);
    assert_eq!(plan.requeue_after, None);
    let s = status_of(&plan);
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_EVICTION_INVALID,
        "Active Eviction already exists for the same target.",
    );
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "False",
        REASON_EVICTION_FAILED,
        "",
    );
    assert_eq!(s.observed_generation, Some(1));
    // The older one is unaffected.
    let plan = run(&older, &all);
    assert!(plan.status.is_none());
    assert_eq!(plan.requeue_after, Some(mins(19)));

    // With a succeeded Eviction around, neither active one is a duplicate.
    let done = succeeded(eviction("pod-0-p", at(-mins(90))), at(-mins(80)));
    let all = [&older, &third, &done];
    let plan = run(&third, &all);
    assert_eq!(states(status_of(&plan)), [(EVICTOR, STATE_ACTIVE)]);
    assert_awaiting(status_of(&plan).conditions.as_ref());

    // A duplicate that already has an Active responder cannot be failed
    // validly: no write, but it is looked at again after the heartbeat deadline.
    let mut newer_active = older.clone();
    newer_active.metadata.name = Some("y".to_owned());
    newer_active.metadata.uid = Some("ev-uid-y".to_owned());
    newer_active.metadata.creation_timestamp = Some(time(now()));
    let all = [&older, &newer_active];
    assert_eq!(
        run(&newer_active, &all),
        EvictionSyncPlan {
            requeue_after: Some(HEARTBEAT_DEADLINE),
            ..EvictionSyncPlan::default()
        }
    );
}

#[test]
fn case_78_final_eviction_is_frozen() {
    let p = pod("p", U);
    let e = succeeded(
        walking(
            "pod-1-p",
            vec![tr(EVICTOR, 100, STATE_COMPLETED)],
            vec![started(EVICTOR, at(-mins(9)))],
        ),
        at(-mins(1)),
    );
    let a = request("a", REQ, at(-mins(60)));
    let b = request("b", "late.io/x", now());
    let a_withdrawn = withdrawn(a.clone());
    for requests in [vec![&a, &b], vec![&a_withdrawn], vec![]] {
        assert_eq!(sync(&e, Some(&p), &requests), EvictionSyncPlan::default());
        assert_eq!(sync(&e, None, &requests), EvictionSyncPlan::default());
    }

    // The new request mirrors TargetEvicted=True and is then completed.
    let plan = sync_request(&b, Some(&p), &[&e], &[&a, &b]);
    assert!(plan.create_eviction.is_none());
    let s = plan.status.expect("status");
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_TARGET_EVICTED,
        "True",
        REASON_POD_DELETED,
        MSG_POD_DELETED,
    );
    let mut b = b;
    b.status = Some(s);
    assert!(has_eviction_request_completed(&b));
    assert_eq!(
        sync_request(&b, Some(&p), &[&e], &[&a, &b]),
        EvictionRequestSyncPlan::default()
    );
}

#[test]
fn case_79_relevant_eviction_selection() {
    let t = now();
    let older = at(-mins(60));
    let oldest = at(-(mins(60) + secs(1)));
    let name_of = |r: RelevantEviction<'_>| r.eviction.and_then(|e| e.metadata.name.clone());
    let permutations = |n: usize| -> Vec<Vec<usize>> {
        // Rotations and reversals: every element in every position.
        let mut out = Vec::new();
        for k in 0..n {
            let rot: Vec<usize> = (0..n).map(|i| (i + k) % n).collect();
            out.push(rot.iter().rev().copied().collect());
            out.push(rot);
        }
        out
    };
    let check = |evictions: &[Eviction], want: Option<&str>, should_create: bool| {
        for order in permutations(evictions.len().max(1)) {
            let refs: Vec<&Eviction> = order.iter().filter_map(|&i| evictions.get(i)).collect();
            let got = find_relevant_eviction(&refs);
            assert_eq!(name_of(got).as_deref(), want, "order {order:?}");
            assert_eq!(got.should_create, should_create, "order {order:?}");
        }
    };
    // Latest succeeded wins.
    check(
        &[
            eviction("pod-1-foo", t),
            eviction("pod-2-foo", older),
            failed(eviction("pod-3-foo", t), t),
            eviction("pod-4-foo", t),
            eviction("pod-5-foo", oldest),
            succeeded(eviction("pod-6-foo", t), oldest),
            succeeded(eviction("pod-7-foo", t), t),
            eviction("pod-8-foo", t),
        ],
        Some("pod-7-foo"),
        false,
    );
    // Oldest active, even with False/AwaitingEviction conditions.
    check(
        &[
            eviction("pod-1-foo", older),
            failed(eviction("pod-2-foo", oldest), t),
            with_conditions(eviction("pod-3-foo", oldest), awaiting(oldest)),
            eviction("pod-4-foo", older),
        ],
        Some("pod-3-foo"),
        false,
    );
    // Only failed ones: the latest, and a new one may be created.
    check(
        &[
            failed(eviction("pod-1-foo", t), oldest),
            failed(eviction("pod-2-foo", t), t),
        ],
        Some("pod-2-foo"),
        true,
    );
    check(&[], None, true);

    // compareConditionTransitionTime.
    use std::cmp::Ordering::*;
    let plain = eviction("a", t);
    let f_now = failed(eviction("b", t), t);
    let f_later = failed(eviction("c", t), at(mins(60)));
    let cmp =
        |a: &Eviction, b: &Eviction| compare_condition_transition_time(a, b, CONDITION_FAILED);
    assert_eq!(cmp(&plain, &eviction("d", t)), Equal);
    assert_eq!(cmp(&f_now, &failed(eviction("e", t), t)), Equal);
    assert_eq!(cmp(&plain, &f_now), Less);
    assert_eq!(cmp(&f_now, &plain), Greater);
    assert_eq!(cmp(&f_later, &f_now), Greater);
    assert_eq!(cmp(&f_now, &f_later), Less);
}

#[test]
fn case_80_naming() {
    assert_eq!(new_eviction_name("foo", []).as_deref(), Some("pod-1-foo"));
    assert_eq!(
        new_eviction_name(
            "foo",
            [
                "pod-0-foo",
                "pod-1-foo",
                "pod-3-foo",
                "pod-4-foo",
                "pod-7-foo"
            ]
        )
        .as_deref(),
        Some("pod-8-foo")
    );
    // Other pods' counters do not count; unanchored matches do.
    assert_eq!(
        new_eviction_name("foo", ["pod-9-bar", "pod-5-foo-x", "xpod-2-foo"]).as_deref(),
        Some("pod-3-foo")
    );
    let long = "a".repeat(253);
    let name = new_eviction_name(&long, []).expect("name");
    assert_eq!(name, format!("pod-1-{}", "a".repeat(247)));
    assert_eq!(name.len(), 253);
    // Long names share a counter space with a truncated 253-char name.
    let other = format!("pod-1-{}", "a".repeat(247));
    let target = format!("{}b", "a".repeat(252));
    assert_eq!(
        new_eviction_name(&target, [other.as_str()]),
        Some(format!("pod-2-{}", "a".repeat(247)))
    );
    assert_eq!(new_eviction_name("", []), None);
}

#[test]
fn case_81_label_maintenance() {
    let labels = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    // Need-update rules.
    assert!(labels_need_update(None, &labels(&[("foo", "bar")])));
    assert!(labels_need_update(
        Some(&labels(&[("foo", "bar")])),
        &labels(&[("foo", "baz")])
    ));
    assert!(labels_need_update(
        Some(&labels(&[
            ("baz", "bar"),
            ("foo.example.com/bar", "requester")
        ])),
        &labels(&[("baz", "bar")])
    ));
    assert!(!labels_need_update(
        Some(&labels(&[
            ("baz", "bar"),
            ("foo.example.com/bar", "responder")
        ])),
        &BTreeMap::new()
    ));

    // Pod present: requesters and the pod's responders plus the default one.
    let p = with_responders(pod("my-pod", U), &[(A, 1000), (B, 15000)]);
    let mut e = eviction("pod-1-my-pod", now());
    e.metadata.labels = Some(labels(&[("foo", "bar")]));
    let r1 = request("requester-1", "foo.example.com/1", now());
    let r2 = request("requester-2", A, now());
    assert_eq!(
        compute_eviction_labels(&e, Some(&p), &[&r1, &r2]),
        labels(&[
            ("foo.example.com/1", "requester"),
            (A, "requester-responder"),
            (B, "responder"),
            (EVICTOR, "responder"),
        ])
    );

    // Pod gone: existing responder keys kept, roles follow the current requesters.
    e.metadata.labels = Some(labels(&[
        ("foo", "bar"),
        ("foo.example.com/1", "requester"),
        (A, "requester-responder"),
        (B, "responder"),
        (EVICTOR, "responder"),
    ]));
    assert_eq!(
        compute_eviction_labels(&e, None, &[&r1, &r2]),
        labels(&[
            ("foo.example.com/1", "requester"),
            (A, "requester-responder"),
            (B, "responder"),
            (EVICTOR, "responder"),
        ])
    );
    let r3 = request("requester-3", "bar.example.com/1", now());
    let r4 = request("requester-4", B, now());
    let want = labels(&[
        ("bar.example.com/1", "requester"),
        (A, "responder"),
        (B, "requester-responder"),
        (EVICTOR, "responder"),
    ]);
    assert_eq!(compute_eviction_labels(&e, None, &[&r3, &r4]), want);

    // The refresh drops the stale requester label and leaves foreign labels alone.
    e.metadata.owner_references = Some(vec![
        exitplan_control::evictionrequest::request_sync::eviction_request_owner_reference(&r3),
        exitplan_control::evictionrequest::request_sync::eviction_request_owner_reference(&r4),
    ]);
    let plan = sync_eviction_meta_refresh(&MetaRefreshInput {
        eviction: &e,
        pod: None,
        target_requests: &[&r3, &r4],
    })
    .expect("update");
    assert_eq!(plan.managed_labels, want);
    let mut full = want.clone();
    full.insert("foo".to_owned(), "bar".to_owned());
    assert_eq!(plan.labels, full);

    // Steady state: nothing to do.
    e.metadata.labels = Some(full);
    assert_eq!(
        sync_eviction_meta_refresh(&MetaRefreshInput {
            eviction: &e,
            pod: None,
            target_requests: &[&r3, &r4],
        }),
        None
    );
}

#[test]
fn case_82_owner_references_and_gc() {
    let p = pod("p", U);
    let a = request("a", REQ, now());
    let b = deleting_request(request("b", "desched.io/x", now()), now());
    let gone_ref = OwnerReference {
        api_version: "lifecycle.k8s.io/v1alpha1".to_owned(),
        kind: "EvictionRequest".to_owned(),
        name: "old".to_owned(),
        uid: "er-uid-old".to_owned(),
        ..Default::default()
    };
    let mut e = eviction("pod-1-p", now());
    e.metadata.owner_references = Some(vec![gone_ref.clone()]);
    let plan = sync_eviction_meta_refresh(&MetaRefreshInput {
        eviction: &e,
        pod: Some(&p),
        target_requests: &[&a, &b],
    })
    .expect("update");
    let owners: Vec<&str> = plan
        .owner_references
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(
        owners,
        ["old", "a"],
        "existing kept, deleting one not added"
    );
    assert_eq!(
        plan.labels.get("desched.io/x").map(String::as_str),
        Some("requester")
    );

    // No requests at all: references are still never removed.
    e.metadata.owner_references = Some(plan.owner_references.clone());
    e.metadata.labels = Some(plan.labels.clone());
    let plan = sync_eviction_meta_refresh(&MetaRefreshInput {
        eviction: &e,
        pod: Some(&p),
        target_requests: &[],
    })
    .expect("requester labels removed");
    assert_eq!(plan.owner_references.len(), 2);
    assert!(!plan.labels.contains_key(REQ));

    // A third-party Eviction without requests is canceled (never deleted).
    let e = eviction("third", now());
    let s = sync(&e, Some(&p), &[]).status.expect("status");
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "True",
        REASON_CANCELED_NO_REQUESTERS,
        MSG_NO_REQUESTERS,
    );
    assert_eq!(states(&s), [(EVICTOR, STATE_INACTIVE)]);
    assert_eq!(s.requesters, Some(vec![]));

    // Non-pod targets are skipped.
    let mut odd = eviction("odd", now());
    odd.spec.target.pod = None;
    assert_eq!(
        sync_eviction_meta_refresh(&MetaRefreshInput {
            eviction: &odd,
            pod: None,
            target_requests: &[&a],
        }),
        None
    );
}

#[test]
fn case_83_completed_request_skip_and_regeneration() {
    let p = pod("p", U);
    let mut r = request("a", REQ, at(-mins(1)));
    r.status = Some(EvictionRequestStatus {
        observed_generation: Some(1),
        conditions: Some(vec![
            condition(
                CONDITION_FAILED,
                "True",
                REASON_EVICTION_INVALID,
                MSG_TARGET_NOT_FOUND,
                at(-mins(1)),
            ),
            condition(
                CONDITION_TARGET_EVICTED,
                "False",
                REASON_EVICTION_FAILED,
                "",
                at(-mins(1)),
            ),
        ]),
    });
    assert!(has_eviction_request_completed(&r));
    assert_eq!(
        sync_request(&r, Some(&p), &[], &[&r]),
        EvictionRequestSyncPlan::default()
    );

    // Intent changed (generation 2): revalidated — the pod exists now.
    r.metadata.generation = Some(2);
    let plan = sync_request(&r, Some(&p), &[], &[&r]);
    assert!(plan.create_eviction.is_some());
    let s = plan.status.expect("status");
    assert_eq!(s.observed_generation, Some(2));
    assert_cond(
        s.conditions.as_ref(),
        CONDITION_FAILED,
        "False",
        REASON_AWAITING_EVICTION,
        MSG_WAITING_FOR_EVICTION,
    );

    // Failed=True/NoFurtherResponder is not completed: a new Eviction follows.
    let mut r = request("a", REQ, at(-mins(1)));
    r.status = Some(EvictionRequestStatus {
        observed_generation: Some(1),
        conditions: Some(vec![condition(
            CONDITION_FAILED,
            "True",
            REASON_NO_FURTHER_RESPONDER,
            MSG_NO_FURTHER_RESPONDER,
            at(-mins(1)),
        )]),
    });
    assert!(!has_eviction_request_completed(&r));
    let old = failed(eviction("pod-1-p", at(-mins(30))), at(-mins(1)));
    let plan = sync_request(&r, Some(&p), &[&old], &[&r]);
    assert_eq!(
        plan.create_eviction
            .and_then(|e| e.metadata.name)
            .as_deref(),
        Some("pod-2-p")
    );
    // The other predicates.
    let mut in_progress = request("b", REQ, now());
    in_progress.status = Some(EvictionRequestStatus {
        observed_generation: Some(1),
        conditions: Some(awaiting(now())),
    });
    assert!(!has_eviction_request_completed(&in_progress));
}

// ---------------------------------------------------------------------------
// §7.1–§7.2: keys and event wiring
// ---------------------------------------------------------------------------

#[test]
fn keys_queue_and_target_index() {
    let e = eviction("pod-1-p", now());
    let r = request("a", REQ, now());
    assert_eq!(queue_key(&e.metadata).as_deref(), Some("ns/pod-1-p"));
    assert_eq!(eviction_target_key(&e), Some(format!("ns/pod/{U}")));
    assert_eq!(eviction_request_target_key(&r), Some(format!("ns/pod/{U}")));
    assert_eq!(pod_target_key(&pod("p", U)), format!("ns/pod/{U}"));
    assert_eq!(queue_key(&ObjectMeta::default()), None);
}

#[test]
fn events_eviction_add_update_delete() {
    let e = eviction("pod-1-p", now());
    let a = request("a", REQ, now());
    let b = request("b", "desched.io/x", now());
    let key = || vec!["ns/pod-1-p".to_owned()];
    assert_eq!(
        on_eviction_add(&e),
        Enqueue {
            evictions: key(),
            refreshes: key(),
            ..Default::default()
        }
    );

    // Status-only change without condition changes: just the Eviction.
    let mut moved = e.clone();
    moved.status = Some(EvictionStatus {
        requesters: Some(vec![requester(REQ, INTENT_EVICTION)]),
        ..Default::default()
    });
    assert_eq!(
        on_eviction_update(&e, &moved, &[&a, &b]),
        Enqueue {
            evictions: key(),
            ..Default::default()
        }
    );
    // Labels changed → refresh; a condition changed (any field) → the requests.
    let mut relabeled = moved.clone();
    relabeled.metadata.labels = Some(BTreeMap::from([(REQ.to_owned(), "requester".to_owned())]));
    assert_eq!(
        on_eviction_update(&moved, &relabeled, &[&a]).refreshes,
        key()
    );
    let mut conditioned = relabeled.clone();
    conditioned.status = Some(EvictionStatus {
        conditions: Some(awaiting(now())),
        ..Default::default()
    });
    let got = on_eviction_update(&relabeled, &conditioned, &[&a, &b]);
    assert_eq!(got.eviction_requests, ["ns/a", "ns/b"]);
    assert!(got.refreshes.is_empty());
    let mut retimed = conditioned.clone();
    retimed.status = Some(EvictionStatus {
        conditions: Some(awaiting(at(secs(1)))),
        ..Default::default()
    });
    assert_eq!(
        on_eviction_update(&conditioned, &retimed, &[&a]).eviction_requests,
        ["ns/a"]
    );

    assert_eq!(
        on_eviction_delete(&e, &[&a, &b]),
        Enqueue {
            eviction_requests: vec!["ns/a".to_owned(), "ns/b".to_owned()],
            ..Default::default()
        }
    );
}

#[test]
fn events_eviction_request_add_update_delete() {
    let e1 = eviction("pod-1-p", now());
    let e2 = eviction("pod-2-p", now());
    let a = request("a", REQ, now());
    let both = || vec!["ns/pod-1-p".to_owned(), "ns/pod-2-p".to_owned()];
    assert_eq!(
        on_eviction_request_add(&a, &[&e1, &e2]),
        Enqueue {
            eviction_requests: vec!["ns/a".to_owned()],
            evictions: both(),
            refreshes: both(),
            ..Default::default()
        }
    );
    // Unrelated update: only the request itself.
    let mut relabeled = a.clone();
    relabeled.metadata.labels = Some(BTreeMap::from([("x".to_owned(), "y".to_owned())]));
    assert_eq!(
        on_eviction_request_update(&a, &relabeled, &[&e1]),
        Enqueue {
            eviction_requests: vec!["ns/a".to_owned()],
            ..Default::default()
        }
    );
    assert_eq!(
        on_eviction_request_update(&a, &withdrawn(a.clone()), &[&e1, &e2]).evictions,
        both()
    );
    let dying = deleting_request(a.clone(), now());
    assert_eq!(
        on_eviction_request_update(&a, &dying, &[&e1]).evictions,
        ["ns/pod-1-p"]
    );
    // Deletion already started: nothing new for the Evictions.
    assert!(
        on_eviction_request_update(&dying, &dying, &[&e1])
            .evictions
            .is_empty()
    );
    assert_eq!(
        on_eviction_request_delete(&a, &[&e1, &e2]),
        Enqueue {
            evictions: both(),
            refreshes: both(),
            ..Default::default()
        }
    );
}

#[test]
fn events_pod_update_and_delayed_delete() {
    let active = eviction("pod-1-p", now());
    let done = succeeded(eviction("pod-0-p", now()), now());
    let p = pod("p", U);
    // Unrelated change.
    let mut labeled = p.clone();
    labeled.metadata.labels = Some(BTreeMap::from([("x".to_owned(), "y".to_owned())]));
    assert_eq!(on_pod_update(&p, &labeled, &[&active]), Enqueue::default());
    // deletionTimestamp set, or changed.
    let d1 = deleting_pod(p.clone(), at(secs(30)));
    let d2 = deleting_pod(p.clone(), at(secs(10)));
    assert_eq!(on_pod_update(&p, &d1, &[&active, &done]).evictions.len(), 2);
    assert_eq!(
        on_pod_update(&d1, &d2, &[&active]).evictions,
        ["ns/pod-1-p"]
    );
    // Phase turned terminal; a non-terminal phase change does not count.
    let pending = in_phase(p.clone(), "Pending");
    assert_eq!(on_pod_update(&pending, &p, &[&active]), Enqueue::default());
    let finished = in_phase(p.clone(), "Succeeded");
    assert_eq!(
        on_pod_update(&p, &finished, &[&active]).evictions,
        ["ns/pod-1-p"]
    );
    // Delete: non-final Evictions after the 5 s grace.
    assert_eq!(
        on_pod_delete(&p, &[&active, &done]),
        Enqueue {
            evictions_after: vec![("ns/pod-1-p".to_owned(), secs(5))],
            ..Default::default()
        }
    );
}

// ---------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------

mod props {
    use super::*;

    use exitplan_api::lifecycle::sort::sort_target_responders;
    use exitplan_api::time::mtime;
    use proptest::prelude::*;

    const RESPONDER_POOL: [&str; 4] = [
        "a.example.com/x",
        "b.example.com/y",
        "mover.acme.io/m",
        "zeta.example.org/z",
    ];
    const FINAL_STATES: [&str; 3] = [STATE_CANCELED, STATE_COMPLETED, STATE_INTERRUPTED];

    fn is_true(status: &EvictionStatus, type_: &str) -> bool {
        status
            .conditions
            .iter()
            .flatten()
            .any(|c| c.type_ == type_ && c.status == "True")
    }

    fn is_final(status: &EvictionStatus) -> bool {
        is_true(status, CONDITION_TARGET_EVICTED) || is_true(status, CONDITION_FAILED)
    }

    fn entry<'a>(status: &'a EvictionStatus, name: &str) -> Option<&'a ResponderStatus> {
        status.responders.iter().flatten().find(|r| r.name == name)
    }

    fn whole_seconds(t: &Time) -> bool {
        t.0.subsec_nanosecond() == 0
    }

    /// The §5.4 status-update rules the controller's writes must satisfy
    /// (state machine, tracking, Completed ⇒ completionTime, heartbeat
    /// deadline, startTime of the Active responder, only the Active entry
    /// changes), checked on sorted lists.
    fn check_write(
        old: &EvictionStatus,
        new: &EvictionStatus,
        now: Timestamp,
    ) -> Result<(), String> {
        let mut o = old.target_responders.clone().unwrap_or_default();
        let mut n = new.target_responders.clone().unwrap_or_default();
        sort_target_responders(&mut o);
        sort_target_responders(&mut n);
        let key = |t: &TargetResponder| (t.name.clone(), t.priority);
        if !o.is_empty() && o.iter().map(key).ne(n.iter().map(key)) {
            return Err("targetResponders keys changed".into());
        }
        let names: Vec<&str> = n.iter().map(|t| t.name.as_str()).collect();
        let mut entries: Vec<&str> = new
            .responders
            .iter()
            .flatten()
            .map(|r| r.name.as_str())
            .collect();
        entries.sort_unstable();
        let mut sorted_names = names.clone();
        sorted_names.sort_unstable();
        if entries != sorted_names {
            return Err(format!(
                "responders {entries:?} vs targetResponders {sorted_names:?}"
            ));
        }
        if n.iter().filter(|t| t.state == STATE_ACTIVE).count() > 1 {
            return Err("more than one Active".into());
        }
        let final_ = is_final(new);
        let a = o.iter().position(|t| t.state == STATE_ACTIVE);
        let active_changed = a.is_some_and(|a| n[a].state != STATE_ACTIVE);
        for (i, t) in n.iter().enumerate() {
            let old_state = o.get(i).map(|t| t.state.as_str());
            let expected: Vec<&str> = match old_state {
                Some(s) if is_final_state(s) => vec![s],
                Some(s) if a.is_some_and(|a| i < a) || (a.is_none() && final_) => vec![s],
                _ if Some(i) == a => {
                    if active_changed || final_ {
                        FINAL_STATES.to_vec()
                    } else {
                        vec![STATE_ACTIVE]
                    }
                }
                _ if (i == 0 && o.is_empty())
                    || (a.is_some_and(|a| i == a + 1) && active_changed) =>
                {
                    if final_ {
                        vec![STATE_INACTIVE]
                    } else {
                        vec![STATE_ACTIVE]
                    }
                }
                _ => vec![STATE_INACTIVE],
            };
            if !expected.contains(&t.state.as_str()) {
                return Err(format!("{}: {} not in {expected:?}", t.name, t.state));
            }
            let e = entry(new, &t.name).ok_or("untracked responder")?;
            if t.state == STATE_COMPLETED && e.completion_time.is_none() {
                return Err(format!("{} Completed without completionTime", t.name));
            }
            if !expected.contains(&STATE_ACTIVE)
                && e.completion_time.is_none()
                && !final_
                && let Some(start) = &e.start_time
            {
                let last = e.heartbeat_time.as_ref().unwrap_or(start).0;
                let deadline = HEARTBEAT_DEADLINE - ALLOWED_CLOCK_SKEW;
                if now < last.checked_add(deadline).map_err(|e| e.to_string())? {
                    return Err(format!("{} left Active before the deadline", t.name));
                }
            }
            let before = entry(old, &t.name);
            if before.is_some_and(|b| b != e) && t.state != STATE_ACTIVE {
                return Err(format!("entry of non-Active {} changed", t.name));
            }
            if t.state == STATE_ACTIVE {
                let start = e.start_time.as_ref().ok_or("Active without startTime")?;
                if before.and_then(|b| b.start_time.as_ref()).is_none() && start.0 != mtime(now).0 {
                    return Err("new startTime is not now".into());
                }
            }
            if let Some(b) = before {
                let kept = b.heartbeat_time == e.heartbeat_time
                    && b.expected_completion_time == e.expected_completion_time
                    && b.completion_time == e.completion_time
                    && b.message == e.message
                    && (b.start_time.is_none() || b.start_time == e.start_time);
                if !kept {
                    return Err(format!("responder-owned fields of {} changed", t.name));
                }
            }
        }
        if final_ && n.iter().any(|t| t.state == STATE_ACTIVE) {
            return Err("final condition next to an Active responder".into());
        }
        // Final conditions never revert (the controller never writes a final Eviction at all).
        for type_ in [CONDITION_TARGET_EVICTED, CONDITION_FAILED] {
            if is_true(old, type_) {
                return Err(format!("wrote over a final {type_}"));
            }
            let c = new.conditions.iter().flatten().find(|c| c.type_ == type_);
            let c = c.ok_or(format!("{type_} missing"))?;
            if !whole_seconds(&c.last_transition_time) || c.last_transition_time.0 > now {
                return Err(format!(
                    "{type_} transition time {:?}",
                    c.last_transition_time
                ));
            }
        }
        let requesters = new.requesters.as_deref().unwrap_or_default();
        if requesters.len() > MAX_REQUESTERS {
            return Err("too many requesters".into());
        }
        let mut names: Vec<&str> = requesters.iter().map(|r| r.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        if names.len() != requesters.len() {
            return Err("duplicate requesters".into());
        }
        for e in new.responders.iter().flatten() {
            if e.start_time.as_ref().is_some_and(|t| !whole_seconds(t)) {
                return Err("startTime not truncated".into());
            }
        }
        Ok(())
    }

    /// Responder states move only along §5.2.
    fn check_states_move(old: &EvictionStatus, new: &EvictionStatus) -> Result<(), String> {
        for t in new.target_responders.iter().flatten() {
            let before = old
                .target_responders
                .iter()
                .flatten()
                .find(|o| o.name == t.name)
                .map_or(STATE_INACTIVE, |o| o.state.as_str());
            let ok = match before {
                STATE_INACTIVE => [STATE_INACTIVE, STATE_ACTIVE].contains(&t.state.as_str()),
                STATE_ACTIVE => t.state != STATE_INACTIVE,
                s => t.state == s,
            };
            if !ok {
                return Err(format!("{}: {before} → {}", t.name, t.state));
            }
        }
        Ok(())
    }

    #[derive(Clone, Debug)]
    enum Op {
        Advance(i64),
        Heartbeat,
        Complete,
        SetIntent(usize, bool),
        DeleteRequest(usize),
        RemoveRequest(usize),
        AddRequest,
        DeletePod(i64),
        TerminatePod(bool),
        VanishPod,
        ReplacePod(bool),
        ThirdParty,
        Evictor(bool),
        SyncRequests,
        SyncEvictions,
    }

    fn op() -> impl Strategy<Value = Op> {
        let pod_op = prop_oneof![
            prop_oneof![Just(0i64), 0i64..90].prop_map(Op::DeletePod),
            any::<bool>().prop_map(Op::TerminatePod),
            Just(Op::VanishPod),
            any::<bool>().prop_map(Op::ReplacePod),
        ];
        let request_op = prop_oneof![
            3 => (0usize..4, any::<bool>()).prop_map(|(i, b)| Op::SetIntent(i, b)),
            1 => (0usize..4).prop_map(Op::DeleteRequest),
            1 => (0usize..4).prop_map(Op::RemoveRequest),
            2 => Just(Op::AddRequest),
        ];
        prop_oneof![
            6 => prop_oneof![0i64..30, 0i64..1500, Just(1200i64), Just(1170i64), Just(4i64)]
                .prop_map(Op::Advance),
            3 => Just(Op::Heartbeat),
            3 => Just(Op::Complete),
            2 => request_op,
            1 => pod_op,
            1 => Just(Op::ThirdParty),
            3 => any::<bool>().prop_map(Op::Evictor),
            4 => Just(Op::SyncRequests),
            8 => Just(Op::SyncEvictions),
        ]
    }

    struct World {
        now: Timestamp,
        pod: Option<Pod>,
        requests: Vec<EvictionRequest>,
        evictions: Vec<Eviction>,
        next: u32,
        attempts: exitplan_control::imperative::backoff::AttemptRecords,
    }

    /// What kube-apiserver's `/status` validation says about replacing the
    /// status of `old` with `new` at `now` (the real validator, not a model).
    fn status_errors(old: &Eviction, new: &EvictionStatus, now: Timestamp) -> ErrorList {
        let mut old_obj = old.clone();
        old_obj.metadata.resource_version = Some("1".to_owned());
        let mut new_obj = old_obj.clone();
        new_obj.status = Some(new.clone());
        let absent = Absent::default();
        EvictionStrategy::validate_status_update(
            &new_obj,
            &old_obj,
            &Context {
                now,
                absent: &absent,
            },
        )
    }

    impl World {
        fn new(responders: &[(usize, i32)], pod_group: bool, requesters: usize) -> World {
            let mut seen = std::collections::BTreeSet::new();
            let declared: Vec<(&str, i32)> = responders
                .iter()
                .filter(|(i, _)| seen.insert(*i))
                .map(|(i, p)| (RESPONDER_POOL[*i % RESPONDER_POOL.len()], *p))
                .collect();
            let mut p = with_responders(pod("p", U), &declared);
            if pod_group {
                p = in_pod_group(p);
            }
            let requests = (0..requesters)
                .map(|i| {
                    request(
                        &format!("er{i}"),
                        &format!("r{i}.io/req"),
                        at(-secs(60 - i as i64)),
                    )
                })
                .collect();
            World {
                now: now(),
                pod: Some(p),
                requests,
                evictions: Vec::new(),
                next: 100,
                attempts: Default::default(),
            }
        }

        fn sync_requests(&mut self) -> Result<(), TestCaseError> {
            for i in 0..self.requests.len() {
                let names: Vec<String> = self
                    .evictions
                    .iter()
                    .filter_map(|e| e.metadata.name.clone())
                    .collect();
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                let evictions: Vec<&Eviction> = self.evictions.iter().collect();
                let requests: Vec<&EvictionRequest> = self.requests.iter().collect();
                let plan = sync_eviction_request(
                    &EvictionRequestSyncInput {
                        request: &self.requests[i],
                        pod: self.pod.as_ref(),
                        target_evictions: &evictions,
                        target_requests: &requests,
                        namespace_eviction_names: &names,
                    },
                    self.now,
                );
                if let Some(created) = plan.create_eviction {
                    let name = created.metadata.name.clone().unwrap_or_default();
                    prop_assert!(!names.contains(&name.as_str()), "name {name} reused");
                    let active = self
                        .evictions
                        .iter()
                        .filter(|e| !has_eviction_completed(e))
                        .count();
                    prop_assert_eq!(active, 0, "created next to an active Eviction");
                    let mut e = created;
                    self.next += 1;
                    e.metadata.uid = Some(format!("ev-{}", self.next));
                    e.metadata.generation = Some(1);
                    e.metadata.creation_timestamp = Some(mtime(self.now));
                    self.evictions.push(e);
                }
                if let Some(status) = plan.status {
                    prop_assert_eq!(
                        status.observed_generation,
                        self.requests[i].metadata.generation
                    );
                    for type_ in [CONDITION_FAILED, CONDITION_TARGET_EVICTED] {
                        prop_assert!(status.conditions.iter().flatten().any(|c| c.type_ == type_));
                    }
                    self.requests[i].status = Some(status);
                }
            }
            Ok(())
        }

        /// Syncs every Eviction once; returns how many statuses were written.
        fn sync_evictions(&mut self) -> Result<usize, TestCaseError> {
            let mut writes = 0;
            for i in 0..self.evictions.len() {
                let evictions: Vec<&Eviction> = self.evictions.iter().collect();
                let requests: Vec<&EvictionRequest> = self.requests.iter().collect();
                let old = &self.evictions[i];
                let plan = sync_eviction(
                    &EvictionSyncInput {
                        eviction: old,
                        pod: self.pod.as_ref(),
                        target_evictions: &evictions,
                        target_requests: &requests,
                    },
                    self.now,
                );
                let old_status = old.status.clone().unwrap_or_default();
                if has_eviction_completed(old) {
                    prop_assert_eq!(
                        &plan,
                        &EvictionSyncPlan::default(),
                        "final Eviction touched"
                    );
                }
                if let Some(d) = plan.requeue_after {
                    prop_assert!(d.is_positive(), "requeue {d:?}");
                }
                if let Some(new) = plan.status {
                    let errs = status_errors(old, &new, self.now);
                    prop_assert!(
                        errs.is_empty(),
                        "status validation rejects the controller's write: {errs}\nold: {old_status:?}\nnew: {new:?}"
                    );
                    check_write(&old_status, &new, self.now).map_err(TestCaseError::fail)?;
                    check_states_move(&old_status, &new).map_err(TestCaseError::fail)?;
                    prop_assert_eq!(new.observed_generation, Some(1));
                    self.evictions[i].status = Some(new);
                    writes += 1;
                }
            }
            let active = self
                .evictions
                .iter()
                .filter(|e| !has_eviction_completed(e))
                .count();
            prop_assert!(active <= 1, "{active} active Evictions after a full round");
            Ok(writes)
        }

        /// The Active responder of each active Eviction reports; the write is
        /// kept only if the API server would accept it, as in a real cluster.
        fn respond(&mut self, complete: bool) {
            let now = mtime(self.now);
            for e in &mut self.evictions {
                if has_eviction_completed(e) {
                    continue;
                }
                let Some(mut status) = e.status.clone() else {
                    continue;
                };
                let Some(active) = status
                    .target_responders
                    .iter()
                    .flatten()
                    .find(|t| t.state == STATE_ACTIVE)
                    .map(|t| t.name.clone())
                else {
                    continue;
                };
                for r in status.responders.iter_mut().flatten() {
                    if r.name == active && r.start_time.is_some() && r.completion_time.is_none() {
                        r.heartbeat_time = Some(now.clone());
                        r.message = Some(format!("working at {}", now.0));
                        if complete {
                            r.completion_time = Some(now.clone());
                        }
                    }
                }
                if status_errors(e, &status, self.now).is_empty() {
                    e.status = Some(status);
                }
            }
        }

        /// The default responder (`imperative-eviction.k8s.io/evictor`) runs
        /// one sync on every Eviction; its `/eviction` call fails (a PDB) or
        /// succeeds (the pod gets a deletionTimestamp 30 s ahead). Every status
        /// it writes must pass status validation.
        fn evictor(&mut self, fail: bool) -> Result<(), TestCaseError> {
            use exitplan_control::imperative::apply::merge_responder_status;
            use exitplan_control::imperative::sync::{Decision, EvictOutcome, after_evict, decide};
            for i in 0..self.evictions.len() {
                let mut e = self.evictions[i].clone();
                // The refresh loop labels the default responder before it acts.
                e.metadata
                    .labels
                    .get_or_insert_with(Default::default)
                    .insert(DEFAULT_RESPONDER_NAME.to_owned(), ROLE_RESPONDER.to_owned());
                let pod_uid = self
                    .pod
                    .as_ref()
                    .and_then(|p| p.metadata.uid.clone())
                    .unwrap_or_default();
                let record = self.attempts.get(&pod_uid);
                let write = match decide(&e, self.pod.as_ref(), record.as_ref(), self.now) {
                    Decision::Skip(_) => continue,
                    Decision::Write(w) => w,
                    Decision::Evict(_) => {
                        let outcome = if fail {
                            EvictOutcome::Failed {
                                error_message: "Cannot evict pod as it would violate the pod's disruption budget.".to_owned(),
                                retry_after: None,
                            }
                        } else {
                            if let Some(p) = self.pod.as_mut()
                                && p.metadata.deletion_timestamp.is_none()
                            {
                                p.metadata.deletion_timestamp =
                                    Some(mtime(self.now.checked_add(secs(30)).expect("in range")));
                            }
                            EvictOutcome::Ok
                        };
                        let done = after_evict(&e, outcome, self.now)
                            .map_err(|err| TestCaseError::fail(format!("after_evict: {err}")))?;
                        self.attempts.apply(done.attempt);
                        done.write
                    }
                };
                if let Some(entry) = write.responder_status {
                    let old = &self.evictions[i];
                    let new =
                        merge_responder_status(&old.status.clone().unwrap_or_default(), entry);
                    let errs = status_errors(old, &new, self.now);
                    prop_assert!(
                        errs.is_empty(),
                        "status validation rejects the evictor's write: {errs}\nnew: {new:?}"
                    );
                    self.evictions[i].status = Some(new);
                }
            }
            Ok(())
        }

        fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
            let n = self.requests.len();
            match *op {
                Op::Advance(s) => self.now = self.now.checked_add(secs(s)).expect("in range"),
                Op::Heartbeat => self.respond(false),
                Op::Complete => self.respond(true),
                Op::SetIntent(i, eviction) if n > 0 => {
                    let r = &mut self.requests[i % n];
                    let intent = if eviction {
                        INTENT_EVICTION
                    } else {
                        INTENT_WITHDRAWN
                    };
                    if r.spec.intent != intent {
                        r.spec.intent = intent.to_owned();
                        r.metadata.generation = r.metadata.generation.map(|g| g + 1);
                    }
                }
                Op::DeleteRequest(i) if n > 0 => {
                    let r = &mut self.requests[i % n];
                    if r.metadata.deletion_timestamp.is_none() {
                        r.metadata.deletion_timestamp = Some(mtime(self.now));
                    }
                }
                Op::RemoveRequest(i) if n > 0 => {
                    self.requests.remove(i % n);
                }
                Op::AddRequest => {
                    self.next += 1;
                    let id = self.next;
                    self.requests.push(request(
                        &format!("er{id}"),
                        &format!("r{id}.io/req"),
                        mtime(self.now).0,
                    ));
                }
                Op::DeletePod(grace) => {
                    if let Some(p) = self.pod.as_mut()
                        && p.metadata.deletion_timestamp.is_none()
                    {
                        p.metadata.deletion_timestamp =
                            Some(mtime(self.now.checked_add(secs(grace)).expect("in range")));
                    }
                }
                Op::TerminatePod(succeeded) => {
                    if let Some(p) = self.pod.take() {
                        self.pod =
                            Some(in_phase(p, if succeeded { "Succeeded" } else { "Failed" }));
                    }
                }
                Op::VanishPod => self.pod = None,
                Op::ReplacePod(pod_group) => {
                    let p = with_responders(pod("p", V), &[("other.io/x", 3000)]);
                    self.pod = Some(if pod_group { in_pod_group(p) } else { p });
                }
                Op::ThirdParty => {
                    self.now = self.now.checked_add(secs(1)).expect("in range");
                    self.next += 1;
                    let mut e = eviction(&format!("third-{}", self.next), mtime(self.now).0);
                    e.metadata.uid = Some(format!("ev-{}", self.next));
                    self.evictions.push(e);
                }
                Op::Evictor(fail) => self.evictor(fail)?,
                Op::SyncRequests => self.sync_requests()?,
                Op::SyncEvictions => {
                    self.sync_evictions()?;
                }
                _ => {}
            }
            Ok(())
        }
    }

    fn world() -> impl Strategy<Value = (Vec<(usize, i32)>, bool, usize)> {
        (
            prop::collection::vec((0usize..4, 1000i32..=20000), 0..4),
            prop::bool::weighted(0.05),
            0usize..4,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// Arbitrary interleavings of pod, request, responder and clock changes
        /// with the three syncs and the default responder: every status the
        /// controller or the evictor writes passes the API server's own status
        /// validation against its predecessor at the same clock, every Eviction
        /// write passes the §5.4 rules,
        /// states move only along §5.2, never two Actives, final Evictions are
        /// never touched, at most one active Eviction per target, and a stable
        /// world reaches a fixpoint.
        #[test]
        fn prop_simulated_controller_keeps_invariants(
            (responders, pod_group, requesters) in world(),
            ops in prop::collection::vec(op(), 1..80),
        ) {
            let mut w = World::new(&responders, pod_group, requesters);
            for op in &ops {
                w.apply(op)?;
            }
            w.sync_requests()?;
            let mut writes = usize::MAX;
            for _ in 0..4 {
                writes = w.sync_evictions()?;
            }
            prop_assert_eq!(writes, 0, "no fixpoint after 4 rounds at a fixed clock");
        }

        /// `status.requesters` never exceeds 100, holds unique names, and
        /// lists every live Eviction-intent requester when there are ≤ 100.
        #[test]
        fn prop_requesters_capped_and_live_first(
            live in prop::collection::vec((0u16..400, 0i64..3, any::<bool>(), prop::bool::weighted(0.2)), 0..160),
            leftovers in prop::collection::vec((0u16..400, any::<bool>()), 0..130),
        ) {
            let mut seen = std::collections::BTreeSet::new();
            let requests: Vec<EvictionRequest> = live
                .iter()
                .filter(|(id, ..)| seen.insert(*id))
                .map(|&(id, age, evict, deleting)| {
                    let r = request(&format!("er{id}"), &format!("r{id}.io/x"), at(-secs(age)));
                    let r = if evict { r } else { withdrawn(r) };
                    if deleting { deleting_request(r, now()) } else { r }
                })
                .collect();
            let current: Vec<Requester> = leftovers
                .iter()
                .map(|&(id, evict)| requester(&format!("r{id}.io/x"), if evict { INTENT_EVICTION } else { INTENT_WITHDRAWN }))
                .collect();
            let refs: Vec<&EvictionRequest> = requests.iter().collect();
            let out = aggregate_requesters(&current, &refs, MAX_REQUESTERS).requesters;
            prop_assert!(out.len() <= MAX_REQUESTERS);
            let mut names: Vec<&str> = out.iter().map(|r| r.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            prop_assert_eq!(names.len(), out.len());
            let wanting: Vec<&EvictionRequest> = requests
                .iter()
                .filter(|r| r.spec.intent == INTENT_EVICTION && r.metadata.deletion_timestamp.is_none())
                .collect();
            if wanting.len() <= MAX_REQUESTERS {
                for r in wanting {
                    prop_assert!(out.contains(&requester(&r.spec.requester, INTENT_EVICTION)));
                }
            }
        }

        /// A final Eviction is never changed, whatever the world looks like.
        #[test]
        fn prop_final_eviction_is_never_changed(
            evicted in any::<bool>(),
            pod_state in 0u8..4,
            intents in prop::collection::vec(any::<bool>(), 0..4),
            offset in -3000i64..3000,
        ) {
            let e = if evicted {
                succeeded(eviction("pod-1-p", at(-mins(30))), at(-mins(1)))
            } else {
                failed(eviction("pod-1-p", at(-mins(30))), at(-mins(1)))
            };
            let p = match pod_state {
                0 => None,
                1 => Some(pod("p", U)),
                2 => Some(in_phase(pod("p", U), "Failed")),
                _ => Some(pod("p", V)),
            };
            let requests: Vec<EvictionRequest> = intents
                .iter()
                .enumerate()
                .map(|(i, &evict)| {
                    let r = request(&format!("er{i}"), &format!("r{i}.io/x"), now());
                    if evict { r } else { withdrawn(r) }
                })
                .collect();
            let refs: Vec<&EvictionRequest> = requests.iter().collect();
            let plan = sync_at(&e, p.as_ref(), &refs, at(secs(offset)));
            prop_assert_eq!(plan, EvictionSyncPlan::default());
        }

        /// The relevant Eviction does not depend on input order (ties included).
        #[test]
        fn prop_relevant_eviction_is_order_independent(
            specs in prop::collection::vec((0i64..3, 0u8..3, 0i64..3), 0..7),
            rotation in 0usize..7,
        ) {
            let evictions: Vec<Eviction> = specs
                .iter()
                .enumerate()
                .map(|(i, &(created, kind, changed))| {
                    let e = eviction(&format!("e{i}"), at(-secs(created)));
                    match kind {
                        0 => e,
                        1 => failed(e, at(-secs(changed))),
                        _ => succeeded(e, at(-secs(changed))),
                    }
                })
                .collect();
            let forward: Vec<&Eviction> = evictions.iter().collect();
            let mut other = forward.clone();
            other.reverse();
            if !other.is_empty() {
                let k = rotation % other.len();
                other.rotate_left(k);
            }
            let a = find_relevant_eviction(&forward);
            let b = find_relevant_eviction(&other);
            prop_assert_eq!(a.eviction.map(|e| e.metadata.name.clone()), b.eviction.map(|e| e.metadata.name.clone()));
            prop_assert_eq!(a.should_create, b.should_create);
        }

        /// A new name never collides with an existing one and counts up.
        #[test]
        fn prop_new_eviction_name_is_fresh(
            counters in prop::collection::vec(0u32..50, 0..10),
            noise in prop::collection::vec("[a-z0-9-]{1,12}", 0..5),
        ) {
            let mut existing: Vec<String> = counters.iter().map(|c| format!("pod-{c}-p")).collect();
            existing.extend(noise);
            let refs: Vec<&str> = existing.iter().map(String::as_str).collect();
            let name = new_eviction_name("p", refs.iter().copied()).expect("name");
            prop_assert!(!existing.contains(&name), "{name} reused");
            let max = counters.iter().copied().max().unwrap_or(0);
            prop_assert!(name.starts_with("pod-") && name.ends_with("-p"));
            let n: u32 = name["pod-".len()..name.len() - 2].parse().expect("counter");
            prop_assert!(n > max);
        }
    }
}
