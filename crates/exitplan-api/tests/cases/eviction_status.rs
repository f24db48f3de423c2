//! eviction-cases.md §C — Eviction status validation in the apiserver
//! (cases 24–50), plus Eviction create/update and strategy checks.
//!
//! The builders mirror upstream's `validation_test.go` helpers
//! (`mkValidEvictionStatus`, `setStateFor`, `setRespondersStartTime`, …) with
//! a fixed clock: like upstream, the time setters add `i` seconds to the time
//! they are given for responder `i`.

use crate::support::{assert_errors, now};
use std::collections::BTreeMap;

use exitplan_api::absent::Absent;
use exitplan_api::field::{ErrorList, ErrorType, Path};
use exitplan_api::lifecycle::{
    EvictionStrategy, validate_eviction_create, validate_eviction_status,
    validate_eviction_status_update, validate_eviction_update,
};
use exitplan_api::strategy::{Context, admit_create, admit_status_update, admit_update};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::lifecycle::v1alpha1::{
    Eviction, EvictionPodReference, EvictionSpec, EvictionStatus, EvictionTarget, Requester,
    ResponderStatus, TargetResponder,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use proptest::prelude::*;

use ErrorType::{Duplicate, Forbidden, Invalid, NotSupported, Required, TooLong, TooMany};

// ---------------------------------------------------------------- clock

fn secs(s: i64) -> SignedDuration {
    SignedDuration::from_secs(s)
}

fn mins(m: i64) -> SignedDuration {
    SignedDuration::from_mins(m)
}

fn after(d: SignedDuration) -> Timestamp {
    now().checked_add(d).expect("in range")
}

fn before(d: SignedDuration) -> Timestamp {
    now().checked_sub(d).expect("in range")
}

const TEN_YEARS: SignedDuration = SignedDuration::from_hours(24 * 365 * 10);

// ---------------------------------------------------------------- builders

const ACTIVE: &str = "Active";
const INACTIVE: &str = "Inactive";
const COMPLETED: &str = "Completed";
const INTERRUPTED: &str = "Interrupted";
const CANCELED: &str = "Canceled";
const TE: &str = "TargetEvicted";
const FAILED: &str = "Failed";
const EVICTOR: &str = "imperative-eviction.k8s.io/evictor";

/// `r(i)`: `responder.example.com/bar<i>` (priority `5000 − i`).
fn r(i: usize) -> String {
    format!("responder.example.com/bar{i}")
}

/// An Eviction status under construction (upstream `mkValidEvictionStatus`).
#[derive(Clone, Debug)]
struct St(EvictionStatus);

fn push<T>(list: &mut Option<Vec<T>>, item: T) {
    list.get_or_insert_with(Vec::new).push(item);
}

fn at_index(t: Timestamp, i: usize) -> Option<Time> {
    let i = i64::try_from(i).expect("small index");
    Some(Time(t.checked_add(secs(i)).expect("in range")))
}

impl St {
    /// `n` target responders (`r0` Active, the rest Inactive) and `n`
    /// statuses (`r0` started now); observedGeneration 1.
    fn new(n: usize) -> St {
        St::with_statuses(n, n)
    }

    /// `targets` target responders and `statuses` statuses.
    fn with_statuses(targets: usize, statuses: usize) -> St {
        let mut s = EvictionStatus {
            observed_generation: Some(1),
            ..EvictionStatus::default()
        };
        for i in 0..targets {
            push(
                &mut s.target_responders,
                TargetResponder {
                    name: r(i),
                    priority: 5000 - i32::try_from(i).expect("small"),
                    state: if i == 0 { ACTIVE } else { INACTIVE }.into(),
                },
            );
        }
        for i in 0..statuses {
            push(
                &mut s.responders,
                ResponderStatus {
                    name: r(i),
                    start_time: (i == 0).then(|| Time(now())),
                    ..ResponderStatus::default()
                },
            );
        }
        St(s)
    }

    fn tr(&mut self, i: usize) -> &mut TargetResponder {
        self.0
            .target_responders
            .as_mut()
            .and_then(|l| l.get_mut(i))
            .expect("target responder exists")
    }

    fn rs(&mut self, i: usize) -> &mut ResponderStatus {
        self.0
            .responders
            .as_mut()
            .and_then(|l| l.get_mut(i))
            .expect("responder status exists")
    }

    fn state(mut self, state: &str, i: usize) -> St {
        self.tr(i).state = state.into();
        self
    }

    fn priority(mut self, priority: i32, i: usize) -> St {
        self.tr(i).priority = priority;
        self
    }

    fn completed_count(mut self, n: usize) -> St {
        for i in 0..n {
            self.tr(i).state = COMPLETED.into();
        }
        self
    }

    fn start(mut self, t: Timestamp, from: usize, to: usize) -> St {
        for i in from..to {
            self.rs(i).start_time = at_index(t, i);
        }
        self
    }

    fn no_start(mut self, i: usize) -> St {
        self.rs(i).start_time = None;
        self
    }

    fn heartbeat(mut self, t: Timestamp, from: usize, to: usize) -> St {
        for i in from..to {
            self.rs(i).heartbeat_time = at_index(t, i);
        }
        self
    }

    fn no_heartbeat(mut self, i: usize) -> St {
        self.rs(i).heartbeat_time = None;
        self
    }

    fn expected(mut self, t: Timestamp, from: usize, to: usize) -> St {
        for i in from..to {
            self.rs(i).expected_completion_time = at_index(t, i);
        }
        self
    }

    fn completion(mut self, t: Timestamp, from: usize, to: usize) -> St {
        for i in from..to {
            self.rs(i).completion_time = at_index(t, i);
        }
        self
    }

    fn no_completion(mut self, i: usize) -> St {
        self.rs(i).completion_time = None;
        self
    }

    fn message(mut self, from: usize, to: usize, suffix: &str) -> St {
        for i in from..to {
            self.rs(i).message = Some(format!("message {i}{suffix}"));
        }
        self
    }

    /// upstream `setRespondersFullStatus`.
    fn full(self, start: Timestamp, t: Timestamp, from: usize, to: usize) -> St {
        self.start(start, from, to)
            .heartbeat(t, from, to)
            .expected(t, from, to)
            .completion(t, from, to)
            .message(from, to, &t.to_string())
    }

    fn cond(mut self, type_: &str, status: bool) -> St {
        push(
            &mut self.0.conditions,
            Condition {
                type_: type_.into(),
                status: if status { "True" } else { "False" }.into(),
                reason: format!("{type_}Reason"),
                message: String::new(),
                last_transition_time: Time(now()),
                observed_generation: None,
            },
        );
        self
    }

    fn generation(mut self, g: Option<i64>) -> St {
        self.0.observed_generation = g;
        self
    }

    /// upstream `addTargetResponders`: Inactive, priority `5000 − (statuses + i)`.
    fn targets(mut self, names: &[&str]) -> St {
        let base = self.0.responders.as_ref().map_or(0, Vec::len);
        for (i, name) in names.iter().enumerate() {
            push(
                &mut self.0.target_responders,
                TargetResponder {
                    name: (*name).into(),
                    priority: 5000 - i32::try_from(base + i).expect("small"),
                    state: INACTIVE.into(),
                },
            );
        }
        self
    }

    fn statuses(mut self, names: &[&str]) -> St {
        for name in names {
            push(
                &mut self.0.responders,
                ResponderStatus {
                    name: (*name).into(),
                    ..ResponderStatus::default()
                },
            );
        }
        self
    }

    fn targets_and_statuses(self, names: &[&str]) -> St {
        self.targets(names).statuses(names)
    }

    fn requesters(mut self, intent: &str, names: &[&str]) -> St {
        for name in names {
            push(
                &mut self.0.requesters,
                Requester {
                    name: (*name).into(),
                    intent: intent.into(),
                },
            );
        }
        self
    }
}

/// Names `r(0)..r(n)` as `&str`s for the list builders.
fn names(n: usize) -> Vec<String> {
    (0..n).map(r).collect()
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn eviction(status: Option<EvictionStatus>, rv: &str) -> Eviction {
    Eviction {
        metadata: ObjectMeta {
            name: Some("pod-1-foo.pod".into()),
            namespace: Some("foo".into()),
            resource_version: Some(rv.into()),
            ..ObjectMeta::default()
        },
        spec: EvictionSpec {
            target: EvictionTarget {
                pod: Some(EvictionPodReference {
                    name: "foo.pod".into(),
                    uid: "a2ee91f4-e13c-44db-9edc-4240e7383ab9".into(),
                }),
            },
        },
        status,
    }
}

fn validate_raw(
    old: Option<EvictionStatus>,
    new: Option<EvictionStatus>,
    now: Timestamp,
    absent: &Absent,
) -> ErrorList {
    validate_eviction_status(
        &eviction(new, "1"),
        &eviction(old, "0"),
        &Context { now, absent },
    )
}

/// The full `/status` validation (handwritten + declarative) at `now`.
fn validate_at(old: &St, new: &St, now: Timestamp) -> ErrorList {
    validate_raw(
        Some(old.0.clone()),
        Some(new.0.clone()),
        now,
        &Absent::default(),
    )
}

fn validate(old: &St, new: &St) -> ErrorList {
    validate_at(old, new, now())
}

/// Asserts `(type, field, detail)` of every error, in order.
fn assert_details(errs: &ErrorList, want: &[(ErrorType, &str, &str)]) {
    let got: Vec<(ErrorType, &str, &str)> = errs
        .iter()
        .map(|e| (e.error_type, e.field.as_str(), e.detail.as_str()))
        .collect();
    assert_eq!(got, want, "errors: {errs}");
}

const NEXT_IN_LINE: &str = "must be one of: Active, because this responder is next in line";
const NOT_FINISHED: &str =
    "must be one of: Inactive, because the previously active has not finished processing";
const FINISHED_INACTIVE: &str =
    "must be one of: Inactive, because the eviction request has finished processing";
const MUST_FINISH: &str = "must be one of: Canceled, Completed, Interrupted, because this responder must reach a final state";
const FINISHED_FINAL: &str = "must be one of: Canceled, Completed, Interrupted, because the eviction request has finished processing";
const STAY_ACTIVE: &str = "must stay Active because the responder is in progress and it should report status.responders.heartbeatTime or status.responders.completionTime";
const NO_COMPLETION: &str =
    "cannot become Completed because the responder didn't report status.responders.completionTime";
const START_REQUIRED: &str = "is required for an active responder";
const PRESENT: &str = "must be set to the present time";

// ---------------------------------------------------------------- accepted cases

/// Every accepted status write of the case list (upstream's success table):
/// `(name, old, new, now)`.
fn accepted() -> Vec<(&'static str, St, St, Timestamp)> {
    let completed_r0 = || {
        St::new(1)
            .state(COMPLETED, 0)
            .start(now(), 0, 1)
            .completion(after(secs(5)), 0, 1)
    };
    let progress = || {
        St::new(2)
            .start(now(), 0, 1)
            .heartbeat(after(secs(5)), 0, 1)
            .expected(after(mins(10)), 0, 1)
            .message(0, 1, "")
    };
    let r0_done = || St::new(2).full(now(), after(mins(5) + secs(27)), 0, 1);
    let r1_active = || {
        r0_done()
            .state(COMPLETED, 0)
            .state(ACTIVE, 1)
            .start(after(mins(5) + secs(30)), 1, 2)
    };
    let r1_done = || {
        r0_done().state(COMPLETED, 0).state(ACTIVE, 1).full(
            after(mins(5) + secs(30)),
            after(mins(27) + secs(32)),
            1,
            2,
        )
    };
    let active_since = |start: Timestamp, heartbeat: Option<Timestamp>| {
        let s = St::new(1).start(start, 0, 1);
        match heartbeat {
            Some(h) => s.heartbeat(h, 0, 1),
            None => s,
        }
    };
    let two_completed = || {
        St::new(0)
            .targets_and_statuses(&refs(&names(2)))
            .state(COMPLETED, 0)
            .state(COMPLETED, 1)
            .start(now(), 0, 1)
            .completion(after(secs(5)), 0, 1)
            .start(after(secs(5)), 1, 2)
            .completion(after(secs(5)), 1, 2)
    };
    let many = || {
        St::new(10).full(after(mins(1)), after(mins(2)), 0, 4).full(
            after(mins(3)),
            after(mins(4)),
            4,
            10,
        )
    };
    let t = now();
    vec![
        // conditions
        (
            "Evicted condition can be set",
            completed_r0(),
            completed_r0().cond(TE, true),
            t,
        ),
        (
            "Evicted condition can be changed to true",
            completed_r0().cond(TE, false),
            completed_r0().cond(TE, true),
            t,
        ),
        (
            "Failed condition can be set",
            completed_r0(),
            completed_r0().cond(FAILED, true),
            t,
        ),
        (
            "Failed condition can be changed to true",
            completed_r0().cond(FAILED, false),
            completed_r0().cond(FAILED, true),
            t,
        ),
        (
            "Non terminal condition can be added next to Failed",
            completed_r0().cond(FAILED, true),
            completed_r0().cond("NewCondition", true).cond(FAILED, true),
            t,
        ),
        (
            "Non terminal condition can change next to Failed",
            completed_r0().cond("NewCondition", true).cond(FAILED, true),
            completed_r0()
                .cond("NewCondition", false)
                .cond(FAILED, true),
            t,
        ),
        (
            "A new condition without observedGeneration",
            St::new(0)
                .generation(None)
                .cond("NewCondition", true)
                .cond(FAILED, true),
            St::new(0)
                .generation(None)
                .cond("NewCondition", false)
                .cond(FAILED, true),
            t,
        ),
        // observedGeneration
        (
            "set initial generation",
            St(EvictionStatus::default()),
            St::new(0),
            t,
        ),
        (
            "update generation",
            St::new(0),
            St::new(0).generation(Some(5)),
            t,
        ),
        // requesters (case 26)
        (
            "initialize requester with eviction intent",
            St::new(0),
            St::new(0).requesters("Eviction", &["foo.example.com/baz"]),
            t,
        ),
        (
            "initialize requester with withdrawn intent",
            St::new(0),
            St::new(0).requesters("Withdrawn", &["foo.example.com/baz"]),
            t,
        ),
        (
            "change requester intent eviction to withdrawn",
            St::new(0).requesters("Eviction", &["foo.example.com/baz"]),
            St::new(0).requesters("Withdrawn", &["foo.example.com/baz"]),
            t,
        ),
        (
            "change requester intent withdrawn to eviction",
            St::new(0).requesters("Withdrawn", &["foo.example.com/baz"]),
            St::new(0).requesters("Eviction", &["foo.example.com/baz"]),
            t,
        ),
        (
            "add a second requester",
            St::new(0).requesters("Eviction", &["foo.example.com/bar"]),
            St::new(0).requesters("Eviction", &["foo.example.com/bar", "foo.example.com/baz"]),
            t,
        ),
        (
            "remove a requester (G3)",
            St::new(0).requesters("Eviction", &["foo.example.com/bar", "foo.example.com/baz"]),
            St::new(0).requesters("Withdrawn", &["foo.example.com/bar"]),
            t,
        ),
        // first sync
        ("responders initialization", St::new(0), St::new(3), t),
        ("11 responders", St::new(0), St::new(11), t),
        (
            "first inactive during the first sync if failed",
            St::new(0),
            St::new(0)
                .targets_and_statuses(&refs(&names(3)))
                .cond(FAILED, true),
            t,
        ),
        (
            "first inactive during the first sync if evicted",
            St::new(0),
            St::new(0)
                .targets_and_statuses(&refs(&names(3)))
                .cond(TE, true),
            t,
        ),
        // full progression
        ("responder reports progress", St::new(2), progress(), t),
        (
            "responder reports next progress",
            progress(),
            progress().heartbeat(after(mins(1) + secs(5)), 0, 1),
            after(mins(1) + secs(5)),
        ),
        (
            "cancel responder",
            progress(),
            progress().cond(FAILED, true).state(CANCELED, 0),
            after(mins(1) + secs(5)),
        ),
        (
            "interrupt responder",
            St::new(2),
            St::new(2).cond(FAILED, true).state(INTERRUPTED, 0),
            after(mins(1) + secs(5)),
        ),
        (
            "responder reports complete",
            progress().heartbeat(after(mins(1) + secs(5)), 0, 1),
            r0_done(),
            after(mins(5)),
        ),
        (
            "move active complete to processed and set new active",
            r0_done(),
            r1_active(),
            after(mins(5) + secs(27)),
        ),
        (
            "next responder reports next progress",
            r1_active(),
            r1_active().heartbeat(after(mins(25)), 1, 2),
            after(mins(25)),
        ),
        (
            "next responder reports complete",
            r1_active().heartbeat(after(mins(25)), 1, 2),
            r1_done(),
            after(mins(28)),
        ),
        (
            "finalize eviction active",
            r1_done(),
            r1_done().completed_count(2),
            after(mins(35)),
        ),
        (
            "cancel eviction for the next responder",
            r1_active().heartbeat(after(mins(25)), 1, 2),
            r1_active()
                .heartbeat(after(mins(25)), 1, 2)
                .cond(FAILED, true)
                .state(CANCELED, 1),
            after(mins(35)),
        ),
        (
            "interrupt eviction for the next responder",
            r1_active(),
            r1_active().cond(FAILED, true).state(INTERRUPTED, 1),
            after(mins(35)),
        ),
        (
            "finalize with many responders",
            many().state(ACTIVE, 9).completed_count(9),
            many().completed_count(10),
            after(mins(5)),
        ),
        // heartbeat deadline reached (cases 39, 40)
        (
            "deadline (start time fallback) reached",
            active_since(before(mins(19) + secs(32)), None),
            active_since(before(mins(19) + secs(32)), None).state(INTERRUPTED, 0),
            t,
        ),
        (
            "deadline reached",
            active_since(before(mins(60)), Some(before(mins(20)))),
            active_since(before(mins(60)), Some(before(mins(20)))).state(INTERRUPTED, 0),
            t,
        ),
        (
            "deadline reached exactly at 19m30s",
            active_since(before(mins(60)), Some(before(mins(19) + secs(30)))),
            active_since(before(mins(60)), Some(before(mins(19) + secs(30)))).state(INTERRUPTED, 0),
            t,
        ),
        // startTime (case 44)
        (
            "startTime with skew - slower clock",
            St::new(0),
            St::new(2).start(before(secs(29)), 0, 1),
            t,
        ),
        (
            "startTime with skew - faster clock",
            St::new(0),
            St::new(2).start(after(secs(27)), 0, 1),
            t,
        ),
        // heartbeatTime (case 45)
        (
            "heartbeatTime with skew - slower clock",
            St::new(2)
                .start(before(mins(20)), 0, 1)
                .heartbeat(before(mins(19)), 0, 1),
            St::new(2)
                .start(before(mins(20)), 0, 1)
                .heartbeat(before(secs(27)), 0, 1),
            t,
        ),
        (
            "heartbeatTime with skew - faster clock",
            St::new(2)
                .start(before(mins(20)), 0, 1)
                .heartbeat(before(mins(19)), 0, 1),
            St::new(2)
                .start(before(mins(20)), 0, 1)
                .heartbeat(after(secs(27)), 0, 1),
            t,
        ),
        (
            "heartbeatTime updated after one minute",
            St::new(2)
                .start(before(mins(20)), 0, 1)
                .heartbeat(before(mins(1)), 0, 1),
            St::new(2)
                .start(before(mins(20)), 0, 1)
                .heartbeat(now(), 0, 1),
            t,
        ),
        // expectedCompletionTime (case 46)
        (
            "expectedCompletionTime with skew - slower clock",
            St::new(2).start(before(mins(1)), 0, 1),
            St::new(2)
                .start(before(mins(1)), 0, 1)
                .expected(before(secs(27)), 0, 1),
            t,
        ),
        (
            "expectedCompletionTime in the future",
            St::new(2).start(before(mins(1)), 0, 1),
            St::new(2)
                .start(before(mins(1)), 0, 1)
                .expected(after(TEN_YEARS - mins(1)), 0, 1),
            t,
        ),
        // completionTime (case 47)
        (
            "completionTime with skew - faster clock",
            St::new(2),
            St::new(2).completion(after(secs(27)), 0, 1),
            t,
        ),
        // final condition bypasses the deadline (case 41)
        (
            "exceeded deadline (start fallback) - Failed",
            active_since(before(mins(19) + secs(29)), None),
            active_since(before(mins(19) + secs(29)), None)
                .state(INTERRUPTED, 0)
                .cond(FAILED, true),
            t,
        ),
        (
            "exceeded deadline (start fallback) - Evicted",
            active_since(before(mins(19) + secs(29)), None),
            active_since(before(mins(19) + secs(29)), None)
                .state(INTERRUPTED, 0)
                .cond(TE, true),
            t,
        ),
        (
            "exceeded deadline - Failed",
            active_since(before(mins(20)), Some(before(mins(19) + secs(29)))),
            active_since(before(mins(20)), Some(before(mins(19) + secs(29))))
                .state(INTERRUPTED, 0)
                .cond(FAILED, true),
            t,
        ),
        (
            "exceeded deadline - Evicted",
            active_since(before(mins(20)), Some(before(mins(19) + secs(29)))),
            active_since(before(mins(20)), Some(before(mins(19) + secs(29))))
                .state(INTERRUPTED, 0)
                .cond(TE, true),
            t,
        ),
        (
            "second responder completes without a final condition",
            two_completed().state(ACTIVE, 1),
            two_completed(),
            t,
        ),
        // empty syncs (case 49)
        (
            "empty sync during heartbeat wait",
            St::new(2)
                .start(before(mins(20)), 0, 1)
                .heartbeat(before(mins(19)), 0, 1),
            St::new(2)
                .start(before(mins(20)), 0, 1)
                .heartbeat(before(mins(19)), 0, 1),
            t,
        ),
        (
            "all completed without a final condition: empty sync",
            two_completed(),
            two_completed(),
            t,
        ),
        (
            "all completed with a final condition: empty sync",
            two_completed().cond(TE, true),
            two_completed().cond(TE, true),
            t,
        ),
        // default responder (case 30)
        (
            "default responder with its assigned priority",
            St::new(0),
            St::new(0)
                .targets_and_statuses(&[EVICTOR])
                .priority(100, 0)
                .state(ACTIVE, 0)
                .start(now(), 0, 1),
            t,
        ),
    ]
}

#[test]
fn accepted_status_writes() {
    for (name, old, new, at) in accepted() {
        let errs = validate_at(&old, &new, at);
        assert!(errs.is_empty(), "{name}: {errs}");
    }
}

/// Deterministic Fisher–Yates shuffle driven by `seed` (xorshift64).
fn shuffle<T>(list: &mut Option<Vec<T>>, seed: &mut u64) {
    let Some(items) = list.as_mut() else {
        return;
    };
    for i in (1..items.len()).rev() {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let j = usize::try_from(*seed % (i as u64 + 1)).expect("fits");
        items.swap(i, j);
    }
}

fn shuffled(s: &St, seed: &mut u64) -> St {
    let mut s = s.clone();
    shuffle(&mut s.0.target_responders, seed);
    shuffle(&mut s.0.responders, seed);
    shuffle(&mut s.0.requesters, seed);
    s
}

proptest! {
    /// Case 50: every accepted write stays accepted after shuffling
    /// targetResponders, responders and requesters in old and new.
    #[test]
    fn case_50_order_independence(seed in 1u64..u64::MAX) {
        let mut seed = seed;
        for (name, old, new, at) in accepted() {
            let errs = validate_at(&shuffled(&old, &mut seed), &shuffled(&new, &mut seed), at);
            prop_assert!(errs.is_empty(), "{}: {}", name, errs);
        }
    }

    /// Shuffling a rejected first sync keeps the same verdict, reported at
    /// the submitted index of the offending responder (spec §11 #17).
    #[test]
    fn state_errors_follow_the_submitted_index(seed in 1u64..u64::MAX) {
        let mut seed = seed;
        let new = shuffled(
            &St::new(0).targets_and_statuses(&refs(&names(3))).state(COMPLETED, 0),
            &mut seed,
        );
        let idx = new.0.target_responders.as_ref()
            .and_then(|l| l.iter().position(|t| t.name == r(0)))
            .expect("r0 present");
        let errs = validate(&St::new(0), &new);
        let field = format!("status.targetResponders[{idx}].state");
        prop_assert_eq!(errs.len(), 1);
        prop_assert_eq!(errs.0[0].field.as_str(), field.as_str());
        prop_assert_eq!(errs.0[0].detail.as_str(), NEXT_IN_LINE);
    }
}

// ---------------------------------------------------------------- cases

#[test]
fn case_24_responder_list_length() {
    assert_errors(&validate(&St::new(0), &St::new(11)), &[]);
    let errs = validate(&St::new(0), &St::new(12));
    assert_errors(
        &errs,
        &[
            (TooMany, "status.targetResponders", Some("maxItems")),
            (TooMany, "status.responders", Some("maxItems")),
        ],
    );
    assert_eq!(
        errs.0[0].to_string(),
        "status.targetResponders: Too many: 12: must have at most 11 items"
    );
    // 12 targets without statuses: the handwritten length rule plus TooMany.
    let errs = validate(&St::new(0), &St::with_statuses(12, 0));
    assert_errors(
        &errs,
        &[
            (Invalid, "status.responders", None),
            (TooMany, "status.targetResponders", Some("maxItems")),
        ],
    );
}

#[test]
fn case_25_requesters_declarative_rules() {
    let many: Vec<String> = (0..101).map(|i| format!("r{i}.example.com/x")).collect();
    let errs = validate(
        &St::new(0),
        &St::new(0).requesters("Eviction", &refs(&many)),
    );
    assert_errors(&errs, &[(TooMany, "status.requesters", Some("maxItems"))]);
    assert_eq!(
        errs.to_string(),
        "status.requesters: Too many: 101: must have at most 100 items"
    );

    let errs = validate(
        &St::new(0).requesters("Eviction", &["foo.example.com/baz"]),
        &St::new(0).requesters("Eviction", &["foo.example.com/baz", "foo.example.com/baz"]),
    );
    assert_errors(&errs, &[(Duplicate, "status.requesters[1]", None)]);
    assert_eq!(
        errs.to_string(),
        r#"status.requesters[1]: Duplicate value: {"name":"foo.example.com/baz","intent":"Eviction"}"#
    );

    let errs = validate(&St::new(0), &St::new(0).requesters("Eviction", &[""]));
    assert_errors(&errs, &[(Required, "status.requesters[0].name", None)]);
    let errs = validate(&St::new(0), &St::new(0).requesters("Eviction", &["nope"]));
    assert_errors(
        &errs,
        &[(
            Invalid,
            "status.requesters[0].name",
            Some("format=k8s-prefixed-label-key"),
        )],
    );
    let errs = validate(
        &St::new(0),
        &St::new(0).requesters("", &["foo.example.com/baz"]),
    );
    assert_errors(&errs, &[(Required, "status.requesters[0].intent", None)]);
    let errs = validate(
        &St::new(0).requesters("Eviction", &["foo.example.com/baz"]),
        &St::new(0).requesters("Invalid", &["foo.example.com/baz"]),
    );
    assert_errors(
        &errs,
        &[(NotSupported, "status.requesters[0].intent", None)],
    );
    assert_eq!(
        errs.to_string(),
        "status.requesters[0].intent: Unsupported value: \"Invalid\": supported values: \"Eviction\", \"Withdrawn\""
    );
    // Requester names are not subject to the reserved-domain rule (§2.2).
    assert_errors(
        &validate(
            &St::new(0),
            &St::new(0).requesters("Eviction", &["imperative-eviction.k8s.io/evictor"]),
        ),
        &[],
    );
}

#[test]
fn case_26_requester_changes_are_accepted() {
    let names = [
        "initialize requester with eviction intent",
        "initialize requester with withdrawn intent",
        "change requester intent eviction to withdrawn",
        "change requester intent withdrawn to eviction",
        "add a second requester",
        "remove a requester (G3)",
    ];
    let all = accepted();
    for wanted in names {
        let (_, old, new, at) = all
            .iter()
            .find(|(n, ..)| *n == wanted)
            .expect("case is in the accepted table");
        assert_errors(&validate_at(old, new, *at), &[]);
    }
    // Dropping every requester is accepted too.
    assert_errors(
        &validate(
            &St::new(0).requesters("Withdrawn", &["foo.example.com/baz"]),
            &St::new(0),
        ),
        &[],
    );
}

#[test]
fn case_27_key_set_frozen() {
    for (old, new) in [(5, 4), (4, 5)] {
        let errs = validate(&St::new(old), &St::new(new));
        assert_details(
            &errs,
            &[(
                Invalid,
                "status.targetResponders",
                "must preserve the same length and the same keys",
            )],
        );
    }
    let errs = validate(
        &St::new(4),
        &St::new(3).targets(&["foo/bar"]).statuses(&[&r(3)]),
    );
    assert_details(
        &errs,
        &[
            (
                Invalid,
                "status.targetResponders",
                "must preserve the same keys",
            ),
            (
                Invalid,
                "status.responders",
                "must contain the same keys as status.targetResponders",
            ),
        ],
    );
}

#[test]
fn case_28_untracked_responder() {
    let errs = validate(&St::new(0), &St::new(0).targets(&["foo/bar"]));
    assert_details(
        &errs,
        &[
            (
                Invalid,
                "status.targetResponders[0]",
                "\"foo/bar\" has to be tracked in status.responders first",
            ),
            (
                Invalid,
                "status.responders",
                "must be the same length as status.targetResponders and contain the same keys",
            ),
        ],
    );
    assert_eq!(
        errs.0[0].to_string(),
        r#"status.targetResponders[0]: Invalid value: {"name":"foo/bar","priority":5000,"state":"Inactive"}: "foo/bar" has to be tracked in status.responders first"#
    );
    assert_eq!(
        errs.0[1].to_string(),
        "status.responders: Invalid value: null: must be the same length as status.targetResponders and contain the same keys"
    );
    let errs = validate(&St::new(0), &St::with_statuses(0, 3));
    assert_details(
        &errs,
        &[(
            Invalid,
            "status.responders",
            "must be the same length as status.targetResponders and contain the same keys",
        )],
    );
    // A removed status entry, and a renamed one.
    let errs = validate(&St::new(5), &St::with_statuses(5, 4));
    assert_errors(
        &errs,
        &[
            (Invalid, "status.targetResponders[4]", None),
            (Invalid, "status.responders", None),
        ],
    );
    let errs = validate(
        &St::new(4),
        &St::new(3).targets(&[&r(3)]).statuses(&["foo/bar"]),
    );
    assert_details(
        &errs,
        &[
            (
                Invalid,
                "status.targetResponders[3]",
                "\"responder.example.com/bar3\" has to be tracked in status.responders first",
            ),
            (
                Invalid,
                "status.responders",
                "must contain the same keys as status.targetResponders",
            ),
        ],
    );
}

#[test]
fn case_29_reserved_priority_in_eviction_status() {
    for p in [0, 999] {
        let errs = validate(&St::new(0), &St::new(1).priority(p, 0));
        assert_errors(
            &errs,
            &[(Invalid, "status.targetResponders[0].priority", None)],
        );
        assert_eq!(
            errs.to_string(),
            format!(
                "status.targetResponders[0].priority: Invalid value: {p}: priorities 0-999 are reserved for responders with *.k8s.io suffix"
            )
        );
    }
    assert_errors(&validate(&St::new(0), &St::new(1).priority(1000, 0)), &[]);
    // SILENT (§5.4-4): an unknown *.k8s.io responder in the reserved range is rejected.
    let errs = validate(
        &St::new(0),
        &St::new(0)
            .targets_and_statuses(&["other.k8s.io/x"])
            .priority(500, 0)
            .state(ACTIVE, 0)
            .start(now(), 0, 1),
    );
    assert_details(
        &errs,
        &[(
            Invalid,
            "status.targetResponders[0].priority",
            "priorities 0-999 are reserved for responders with *.k8s.io suffix",
        )],
    );
    // Negative priorities get only the declarative minimum error.
    let errs = validate(&St::new(0), &St::new(1).priority(-1, 0));
    assert_errors(
        &errs,
        &[(
            Invalid,
            "status.targetResponders[0].priority",
            Some("minimum"),
        )],
    );
}

#[test]
fn case_30_default_responder_priority() {
    let errs = validate(
        &St::new(0),
        &St::new(0)
            .targets_and_statuses(&[EVICTOR])
            .priority(101, 0)
            .state(ACTIVE, 0)
            .start(now(), 0, 1),
    );
    assert_errors(
        &errs,
        &[(Invalid, "status.targetResponders[0].priority", None)],
    );
    assert_eq!(
        errs.to_string(),
        "status.targetResponders[0].priority: Invalid value: 101: core k8s responder is expected to have priority: 100"
    );
    let (_, old, new, at) = accepted()
        .into_iter()
        .find(|(n, ..)| *n == "default responder with its assigned priority")
        .expect("in table");
    assert_errors(&validate_at(&old, &new, at), &[]);
}

#[test]
fn case_31_final_conditions_frozen() {
    let base = || {
        St::new(1)
            .state(COMPLETED, 0)
            .start(now(), 0, 1)
            .completion(after(secs(5)), 0, 1)
    };
    for type_ in [TE, FAILED] {
        let detail = format!("{type_} condition status cannot be reverted");
        let errs = validate(&base().cond(type_, true), &base());
        assert_details(&errs, &[(Invalid, "status.conditions", &detail)]);
        assert_eq!(
            errs.to_string(),
            format!("status.conditions: Invalid value: null: {detail}")
        );
        let errs = validate(&base().cond(type_, true), &base().cond(type_, false));
        assert_details(&errs, &[(Invalid, "status.conditions", &detail)]);
        assert_eq!(
            errs.to_string(),
            format!(
                "status.conditions: Invalid value: [{{\"type\":\"{type_}\",\"status\":\"False\",\"lastTransitionTime\":\"2026-07-01T12:00:00Z\",\"reason\":\"{type_}Reason\",\"message\":\"\"}}]: {detail}"
            )
        );
    }
    assert_errors(
        &validate(
            &base().cond(FAILED, true),
            &base().cond("NewCondition", true).cond(FAILED, true),
        ),
        &[],
    );
    assert_errors(
        &validate(&base().cond(TE, false), &base().cond(TE, true)),
        &[],
    );
    // A reverted condition still counts as final for the state machine: the
    // Active responder may be interrupted before its deadline.
    let old = St::new(1).cond(FAILED, true);
    let errs = validate(&old, &St::new(1).state(INTERRUPTED, 0));
    assert_errors(&errs, &[(Invalid, "status.conditions", None)]);
    // Condition items are validated (`bad-nameReason` is not a valid reason).
    let errs = validate(
        &St::new(1),
        &St::new(1)
            .cond("bad-name", true)
            .cond("x", true)
            .cond("x", true),
    );
    assert_errors(
        &errs,
        &[
            (Invalid, "status.conditions[0].reason", None),
            (Duplicate, "status.conditions[2].type", None),
        ],
    );
}

#[test]
fn case_32_first_sync_must_activate_the_top_responder() {
    for state in [COMPLETED, INTERRUPTED, CANCELED, INACTIVE] {
        let errs = validate(
            &St::new(0),
            &St::new(0)
                .targets_and_statuses(&refs(&names(3)))
                .state(state, 0),
        );
        assert_details(
            &errs,
            &[(Invalid, "status.targetResponders[0].state", NEXT_IN_LINE)],
        );
    }
    // The top responder is chosen by the §6 sort, not by list position.
    let errs = validate(
        &St::new(0),
        &St::new(0)
            .targets_and_statuses(&["b.example.com/x", "a.example.com/x"])
            .priority(7000, 0)
            .priority(7000, 1)
            .state(ACTIVE, 0)
            .start(now(), 0, 1),
    );
    // b.example.com/x (submitted first) sorts after a.example.com/x; having
    // a startTime it also trips the heartbeat rule.
    assert_details(
        &errs,
        &[
            (Invalid, "status.targetResponders[0].state", NOT_FINISHED),
            (Forbidden, "status.targetResponders[0].state", STAY_ACTIVE),
            (Invalid, "status.targetResponders[1].state", NEXT_IN_LINE),
        ],
    );
}

#[test]
fn case_33_first_sync_with_a_final_condition() {
    let three = || St::new(0).targets_and_statuses(&refs(&names(3)));
    let errs = validate(
        &St::new(0),
        &three()
            .cond(FAILED, true)
            .state(ACTIVE, 0)
            .start(now(), 0, 1),
    );
    assert_details(
        &errs,
        &[(
            Invalid,
            "status.targetResponders[0].state",
            FINISHED_INACTIVE,
        )],
    );
    for state in [COMPLETED, INTERRUPTED, CANCELED] {
        let errs = validate(&St::new(0), &three().cond(FAILED, true).state(state, 0));
        assert_details(
            &errs,
            &[(
                Invalid,
                "status.targetResponders[0].state",
                FINISHED_INACTIVE,
            )],
        );
    }
    assert_errors(&validate(&St::new(0), &three().cond(FAILED, true)), &[]);
    assert_errors(&validate(&St::new(0), &three().cond(TE, true)), &[]);
}

#[test]
fn case_34_skipping_ahead() {
    let three = || St::new(0).targets_and_statuses(&refs(&names(3)));
    let errs = validate(&three(), &three().state(ACTIVE, 1));
    assert_details(
        &errs,
        &[
            (Invalid, "status.targetResponders[1].state", NOT_FINISHED),
            (Required, "status.responders[1].startTime", START_REQUIRED),
        ],
    );
}

#[test]
fn case_35_two_actives() {
    let old = || {
        St::new(0)
            .targets_and_statuses(&refs(&names(3)))
            .state(ACTIVE, 0)
            .start(now(), 0, 1)
    };
    let errs = validate(&old(), &old().state(ACTIVE, 1));
    assert_details(
        &errs,
        &[
            (Invalid, "status.targetResponders[1].state", NOT_FINISHED),
            (Required, "status.responders[1].startTime", START_REQUIRED),
        ],
    );
    for state in [COMPLETED, INTERRUPTED, CANCELED] {
        let errs = validate(&old(), &old().state(state, 1));
        assert_details(
            &errs,
            &[(Invalid, "status.targetResponders[1].state", NOT_FINISHED)],
        );
    }
}

#[test]
fn case_36_must_hand_over_in_the_same_write() {
    let old = || {
        St::new(0)
            .targets_and_statuses(&refs(&names(3)))
            .state(ACTIVE, 0)
            .start(now(), 0, 1)
            .completion(after(secs(5)), 0, 1)
    };
    let errs = validate(&old(), &old().state(COMPLETED, 0));
    assert_details(
        &errs,
        &[(Invalid, "status.targetResponders[1].state", NEXT_IN_LINE)],
    );
    for state in [COMPLETED, INTERRUPTED, CANCELED] {
        let errs = validate(&old(), &old().state(COMPLETED, 0).state(state, 1));
        assert_details(
            &errs,
            &[(Invalid, "status.targetResponders[1].state", NEXT_IN_LINE)],
        );
    }
    // Reverting the finished Active responder to Inactive.
    let errs = validate(&old(), &old().state(INACTIVE, 0));
    assert_details(
        &errs,
        &[
            (Invalid, "status.targetResponders[0].state", MUST_FINISH),
            (Invalid, "status.targetResponders[1].state", NEXT_IN_LINE),
        ],
    );
    assert_errors(
        &validate(
            &old(),
            &old()
                .state(COMPLETED, 0)
                .state(ACTIVE, 1)
                .start(before(secs(1)), 1, 2),
        ),
        &[],
    );
}

#[test]
fn case_37_no_resurrection() {
    let old = || {
        St::new(0)
            .targets_and_statuses(&refs(&names(3)))
            .state(COMPLETED, 0)
            .state(ACTIVE, 1)
            .start(now(), 0, 1)
            .completion(after(secs(5)), 0, 1)
            .start(after(secs(5)), 1, 2)
    };
    let errs = validate(&old(), &old().state(ACTIVE, 0));
    assert_details(
        &errs,
        &[(
            Invalid,
            "status.targetResponders[0].state",
            "must be one of: Completed, because final state is immutable",
        )],
    );
    // The same once the second one completes and the Eviction finishes.
    let two = || {
        St::new(0)
            .targets_and_statuses(&refs(&names(2)))
            .state(COMPLETED, 0)
            .state(ACTIVE, 1)
            .start(now(), 0, 1)
            .completion(after(secs(5)), 0, 1)
            .start(after(secs(5)), 1, 2)
            .completion(after(secs(5)), 1, 2)
    };
    let errs = validate(
        &two(),
        &two().state(ACTIVE, 0).state(COMPLETED, 1).cond(TE, true),
    );
    assert_details(
        &errs,
        &[(
            Invalid,
            "status.targetResponders[0].state",
            "must be one of: Completed, because final state is immutable",
        )],
    );
}

#[test]
fn case_38_finishing_with_an_active_responder() {
    let two = || {
        St::new(0)
            .targets_and_statuses(&refs(&names(2)))
            .state(COMPLETED, 0)
            .state(ACTIVE, 1)
            .start(now(), 0, 1)
            .completion(after(secs(5)), 0, 1)
            .start(after(secs(5)), 1, 2)
            .completion(after(secs(5)), 1, 2)
    };
    let errs = validate(&two(), &two().cond(TE, true));
    assert_details(
        &errs,
        &[(Invalid, "status.targetResponders[1].state", FINISHED_FINAL)],
    );
    let errs = validate(&two(), &two().state(INACTIVE, 1).cond(TE, true));
    assert_details(
        &errs,
        &[(Invalid, "status.targetResponders[1].state", MUST_FINISH)],
    );
    let errs = validate(&two(), &two().state(COMPLETED, 1));
    assert_errors(&errs, &[]);
    // With a third responder, the next one must take over.
    let three = || {
        St::new(0)
            .targets_and_statuses(&refs(&names(3)))
            .state(COMPLETED, 0)
            .state(ACTIVE, 1)
            .start(now(), 0, 1)
            .completion(after(secs(5)), 0, 1)
            .start(after(secs(5)), 1, 2)
            .completion(after(secs(5)), 1, 2)
    };
    let errs = validate(&three(), &three().state(COMPLETED, 1));
    assert_details(
        &errs,
        &[(Invalid, "status.targetResponders[2].state", NEXT_IN_LINE)],
    );
}

#[test]
fn case_39_heartbeat_deadline_start_time_fallback() {
    let old = || St::new(1).start(before(mins(19) + secs(29)), 0, 1);
    let errs = validate(&old(), &old().state(INTERRUPTED, 0));
    assert_details(
        &errs,
        &[(Forbidden, "status.targetResponders[0].state", STAY_ACTIVE)],
    );
    assert_eq!(
        errs.to_string(),
        format!("status.targetResponders[0].state: Forbidden: {STAY_ACTIVE}")
    );
    let old = || St::new(1).start(before(mins(19) + secs(32)), 0, 1);
    assert_errors(&validate(&old(), &old().state(INTERRUPTED, 0)), &[]);
}

#[test]
fn case_40_heartbeat_deadline_boundary() {
    let old = |hb: SignedDuration| {
        St::new(1)
            .start(before(mins(60)), 0, 1)
            .heartbeat(before(hb), 0, 1)
    };
    let exact = mins(19) + secs(30);
    assert_errors(
        &validate(&old(exact), &old(exact).state(INTERRUPTED, 0)),
        &[],
    );
    assert_errors(
        &validate(&old(mins(20)), &old(mins(20)).state(INTERRUPTED, 0)),
        &[],
    );
    let early = mins(19) + secs(29);
    for state in [INTERRUPTED, CANCELED] {
        let errs = validate(&old(early), &old(early).state(state, 0));
        assert_details(
            &errs,
            &[(Forbidden, "status.targetResponders[0].state", STAY_ACTIVE)],
        );
    }
    // One second before the boundary, seen from a clock with a sub-second part.
    let sub_second = now()
        .checked_add(SignedDuration::from_millis(999))
        .expect("in range");
    let errs = validate_at(
        &old(exact + secs(1)),
        &old(exact + secs(1)).state(INTERRUPTED, 0),
        sub_second,
    );
    assert_errors(&errs, &[]);
}

#[test]
fn case_41_final_condition_bypasses_the_deadline() {
    let old = || {
        St::new(1)
            .start(before(mins(20)), 0, 1)
            .heartbeat(before(mins(19) + secs(29)), 0, 1)
    };
    assert_errors(
        &validate(&old(), &old().state(INTERRUPTED, 0).cond(FAILED, true)),
        &[],
    );
    assert_errors(
        &validate(&old(), &old().state(INTERRUPTED, 0).cond(TE, true)),
        &[],
    );
    let (_, old, new, at) = accepted()
        .into_iter()
        .find(|(n, ..)| *n == "cancel responder")
        .expect("in table");
    assert_errors(&validate_at(&old, &new, at), &[]);
}

#[test]
fn case_42_completed_needs_completion_time() {
    let old = || {
        St::new(1)
            .start(before(mins(20)), 0, 1)
            .heartbeat(before(mins(20)), 0, 1)
    };
    let errs = validate(&old(), &old().state(COMPLETED, 0));
    assert_details(
        &errs,
        &[(Invalid, "status.targetResponders[0].state", NO_COMPLETION)],
    );
    assert_eq!(
        errs.to_string(),
        format!("status.targetResponders[0].state: Invalid value: \"Completed\": {NO_COMPLETION}")
    );
    let old = || {
        St::new(1)
            .start(before(mins(20)), 0, 1)
            .heartbeat(before(mins(19) + secs(29)), 0, 1)
    };
    let errs = validate(&old(), &old().state(COMPLETED, 0));
    assert_details(
        &errs,
        &[
            (Forbidden, "status.targetResponders[0].state", STAY_ACTIVE),
            (Invalid, "status.targetResponders[0].state", NO_COMPLETION),
        ],
    );
    let old = || St::new(1).start(before(mins(19) + secs(29)), 0, 1);
    let errs = validate(&old(), &old().state(COMPLETED, 0));
    assert_details(
        &errs,
        &[
            (Forbidden, "status.targetResponders[0].state", STAY_ACTIVE),
            (Invalid, "status.targetResponders[0].state", NO_COMPLETION),
        ],
    );
}

#[test]
fn case_43_only_the_active_entry_is_mutable() {
    let errs = validate(&St::new(5), &St::new(5).heartbeat(now(), 1, 2));
    assert_errors(
        &errs,
        &[(Invalid, "status.responders[1]", Some("immutable"))],
    );
    assert_eq!(
        errs.to_string(),
        r#"status.responders[1]: Invalid value: {"name":"responder.example.com/bar1","heartbeatTime":"2026-07-01T12:00:01Z"}: field is immutable"#
    );
    // A finished responder's entry is frozen too.
    let old = || {
        St::new(2)
            .state(COMPLETED, 0)
            .state(ACTIVE, 1)
            .completion(after(secs(5)), 0, 1)
            .start(now(), 1, 2)
    };
    let errs = validate(&old(), &old().message(0, 1, " late"));
    assert_errors(
        &errs,
        &[(Invalid, "status.responders[0]", Some("immutable"))],
    );
}

#[test]
fn case_44_start_time() {
    let old = || St::new(2).full(now(), after(secs(5)), 0, 1);
    let handed_over = || old().state(COMPLETED, 0).state(ACTIVE, 1);
    let errs = validate(&old(), &handed_over());
    assert_details(
        &errs,
        &[(Required, "status.responders[1].startTime", START_REQUIRED)],
    );
    let set = |t: Timestamp| {
        let mut s = handed_over();
        s.rs(1).start_time = Some(Time(t));
        s
    };
    for bad in [
        before(secs(31)),
        after(secs(31)),
        before(secs(30)),
        after(secs(30)),
    ] {
        let errs = validate(&old(), &set(bad));
        assert_details(
            &errs,
            &[(Invalid, "status.responders[1].startTime", PRESENT)],
        );
    }
    let errs = validate(&old(), &set(before(secs(31))));
    assert_eq!(
        errs.to_string(),
        "status.responders[1].startTime: Invalid value: \"2026-07-01T11:59:29Z\": must be set to the present time"
    );
    for good in [before(secs(29)), after(secs(27))] {
        assert_errors(&validate(&old(), &set(good)), &[]);
    }
    // Changing or removing a set startTime is the declarative update rule.
    let errs = validate(&St::new(2), &St::new(2).start(after(secs(15)), 0, 1));
    assert_errors(
        &errs,
        &[(Invalid, "status.responders[0].startTime", Some("update"))],
    );
    assert_eq!(
        errs.to_string(),
        "status.responders[0].startTime: Invalid value: null: field cannot be modified once set"
    );
    let errs = validate(&St::new(2), &St::new(2).no_start(0));
    assert_errors(
        &errs,
        &[(Invalid, "status.responders[0].startTime", Some("update"))],
    );
    assert_eq!(
        errs.to_string(),
        "status.responders[0].startTime: Invalid value: null: field cannot be cleared once set"
    );
}

#[test]
fn case_45_heartbeat_time() {
    let errs = validate(
        &St::new(2).heartbeat(now(), 0, 1),
        &St::new(2).heartbeat(now(), 0, 1).no_heartbeat(0),
    );
    assert_details(
        &errs,
        &[(
            Required,
            "status.responders[0].heartbeatTime",
            "is required once set",
        )],
    );
    let errs = validate(
        &St::new(0),
        &St::new(0)
            .targets_and_statuses(&refs(&names(2)))
            .state(ACTIVE, 0)
            .heartbeat(before(secs(2)), 0, 1),
    );
    assert_details(
        &errs,
        &[
            (Required, "status.responders[0].startTime", START_REQUIRED),
            (
                Invalid,
                "status.responders[0].heartbeatTime",
                "cannot be set before status.responders[0].startTime is set",
            ),
        ],
    );
    let base = || St::new(2).start(before(secs(20)), 0, 1);
    let errs = validate(
        &base().heartbeat(now(), 0, 1),
        &base().heartbeat(before(secs(2)), 0, 1),
    );
    assert_details(
        &errs,
        &[(
            Invalid,
            "status.responders[0].heartbeatTime",
            "cannot be decreased",
        )],
    );
    let errs = validate(&St::new(2), &St::new(2).heartbeat(before(secs(2)), 0, 1));
    assert_details(
        &errs,
        &[(
            Invalid,
            "status.responders[0].heartbeatTime",
            "must occur after status.responders[0].startTime",
        )],
    );
    let base = || St::new(2).start(before(mins(20)), 0, 1);
    let errs = validate(
        &base().heartbeat(before(mins(19)), 0, 1),
        &base().heartbeat(after(secs(31)), 0, 1),
    );
    assert_details(
        &errs,
        &[(Invalid, "status.responders[0].heartbeatTime", PRESENT)],
    );
    for good in [before(secs(27)), after(secs(27))] {
        assert_errors(
            &validate(
                &base().heartbeat(before(mins(19)), 0, 1),
                &base().heartbeat(good, 0, 1),
            ),
            &[],
        );
    }
}

#[test]
fn case_46_expected_completion_time() {
    let errs = validate(
        &St::new(2).start(before(secs(32)), 0, 1),
        &St::new(2)
            .start(before(secs(32)), 0, 1)
            .expected(before(secs(31)), 0, 1),
    );
    assert_details(
        &errs,
        &[(
            Invalid,
            "status.responders[0].expectedCompletionTime",
            "cannot be set to the past time",
        )],
    );
    let base = || St::new(2).start(before(mins(1)), 0, 1);
    let errs = validate(&base(), &base().expected(after(TEN_YEARS + secs(1)), 0, 1));
    assert_details(
        &errs,
        &[(
            Invalid,
            "status.responders[0].expectedCompletionTime",
            "must complete within 10 years",
        )],
    );
    for good in [
        after(TEN_YEARS - mins(1)),
        after(TEN_YEARS),
        before(secs(27)),
    ] {
        assert_errors(&validate(&base(), &base().expected(good, 0, 1)), &[]);
    }
    let errs = validate(&St::new(2), &St::new(2).expected(before(secs(2)), 0, 1));
    assert_details(
        &errs,
        &[(
            Invalid,
            "status.responders[0].expectedCompletionTime",
            "must occur after status.responders[0].startTime",
        )],
    );
    let errs = validate(
        &St::new(0),
        &St::new(0)
            .targets_and_statuses(&refs(&names(2)))
            .state(ACTIVE, 0)
            .expected(before(secs(2)), 0, 1),
    );
    assert_details(
        &errs,
        &[
            (Required, "status.responders[0].startTime", START_REQUIRED),
            (
                Invalid,
                "status.responders[0].expectedCompletionTime",
                "cannot be set before status.responders[0].startTime is set",
            ),
        ],
    );
    // Clearing it is allowed.
    let with = || base().expected(after(mins(5)), 0, 1);
    let mut cleared = with();
    cleared.rs(0).expected_completion_time = None;
    assert_errors(&validate(&with(), &cleared), &[]);
}

#[test]
fn case_47_completion_time() {
    let base = || St::new(2).start(now(), 0, 1);
    let errs = validate(
        &base().completion(after(mins(5)), 0, 1),
        &base().completion(after(mins(4)), 0, 1),
    );
    assert_errors(
        &errs,
        &[(
            Invalid,
            "status.responders[0].completionTime",
            Some("update"),
        )],
    );
    let errs = validate(
        &base().completion(after(mins(5)), 0, 1),
        &base().completion(after(mins(5)), 0, 1).no_completion(0),
    );
    assert_errors(
        &errs,
        &[(
            Invalid,
            "status.responders[0].completionTime",
            Some("update"),
        )],
    );
    assert_eq!(
        errs.to_string(),
        "status.responders[0].completionTime: Invalid value: null: field cannot be cleared once set"
    );
    let errs = validate(&base(), &base().completion(after(secs(31)), 0, 1));
    assert_details(
        &errs,
        &[(Invalid, "status.responders[0].completionTime", PRESENT)],
    );
    let early = || St::new(2).start(before(mins(1)), 0, 1);
    let errs = validate(&early(), &early().completion(before(secs(31)), 0, 1));
    assert_details(
        &errs,
        &[(Invalid, "status.responders[0].completionTime", PRESENT)],
    );
    assert_errors(
        &validate(&base(), &base().completion(after(secs(27)), 0, 1)),
        &[],
    );
    let errs = validate(&base(), &base().completion(before(secs(2)), 0, 1));
    assert_details(
        &errs,
        &[(
            Invalid,
            "status.responders[0].completionTime",
            "must occur after status.responders[0].startTime",
        )],
    );
    let errs = validate(
        &St::new(0),
        &St::new(0)
            .targets_and_statuses(&refs(&names(2)))
            .state(ACTIVE, 0)
            .completion(before(secs(2)), 0, 1),
    );
    assert_details(
        &errs,
        &[
            (Required, "status.responders[0].startTime", START_REQUIRED),
            (
                Invalid,
                "status.responders[0].completionTime",
                "cannot be set before status.responders[0].startTime is set",
            ),
        ],
    );
}

#[test]
fn case_48_message_length() {
    let base = || St::new(2).heartbeat(now(), 0, 1);
    let errs = validate(&base(), &base().message(0, 1, &"a".repeat(4000)));
    assert_errors(
        &errs,
        &[(TooLong, "status.responders[0].message", Some("maxLength"))],
    );
    assert_eq!(
        errs.to_string(),
        "status.responders[0].message: Too long: may not be more than 4000 characters"
    );
    // The limit counts characters, not bytes.
    let mut ok = base();
    ok.rs(0).message = Some("é".repeat(4000));
    assert_errors(&validate(&base(), &ok), &[]);
}

#[test]
fn case_49_empty_syncs() {
    for wanted in [
        "empty sync during heartbeat wait",
        "all completed without a final condition: empty sync",
        "all completed with a final condition: empty sync",
    ] {
        let (_, old, new, at) = accepted()
            .into_iter()
            .find(|(n, ..)| *n == wanted)
            .expect("in table");
        assert_eq!(old.0, new.0, "{wanted} rewrites an identical status");
        assert_errors(&validate_at(&old, &new, at), &[]);
    }
}

#[test]
fn declarative_target_responder_rules() {
    // Duplicate names in both lists (the state machine is then not judged).
    let errs = validate(
        &St::new(0),
        &St::new(0)
            .targets(&["example.com/baz", "example.com/baz"])
            .statuses(&["example.com/baz", "example.com/baz"]),
    );
    assert_errors(
        &errs,
        &[
            (Duplicate, "status.targetResponders[1]", None),
            (Duplicate, "status.responders[1]", None),
        ],
    );
    assert_eq!(
        errs.to_string(),
        r#"[status.targetResponders[1]: Duplicate value: {"name":"example.com/baz","priority":4999,"state":"Inactive"}, status.responders[1]: Duplicate value: {"name":"example.com/baz"}]"#
    );
    // Required names.
    let errs = validate(
        &St::new(0),
        &St::new(0)
            .targets(&[""])
            .state(ACTIVE, 0)
            .statuses(&[""])
            .start(now(), 0, 1),
    );
    assert_errors(
        &errs,
        &[
            (Required, "status.targetResponders[0].name", None),
            (Required, "status.responders[0].name", None),
        ],
    );
    // State: Required / NotSupported next to the state machine's verdict.
    let errs = validate(&St::new(0), &St::new(1).state("", 0));
    assert_errors(
        &errs,
        &[
            (Invalid, "status.targetResponders[0].state", None),
            (Required, "status.targetResponders[0].state", None),
        ],
    );
    let errs = validate(&St::new(0), &St::new(1).state("Invalid", 0));
    assert_errors(
        &errs,
        &[
            (Invalid, "status.targetResponders[0].state", None),
            (NotSupported, "status.targetResponders[0].state", None),
        ],
    );
    assert_eq!(
        errs.0[1].to_string(),
        "status.targetResponders[0].state: Unsupported value: \"Invalid\": supported values: \"Active\", \"Canceled\", \"Completed\", \"Inactive\", \"Interrupted\""
    );
    // Priority: immutable once set, maximum, missing.
    let errs = validate(&St::new(2), &St::new(2).priority(6000, 1));
    assert_errors(
        &errs,
        &[(
            Invalid,
            "status.targetResponders[1].priority",
            Some("update"),
        )],
    );
    let errs = validate(&St::new(0), &St::new(1).priority(100_001, 0));
    assert_errors(
        &errs,
        &[(
            Invalid,
            "status.targetResponders[0].priority",
            Some("maximum"),
        )],
    );
    let mut absent = Absent::default();
    absent.insert(
        &Path::new("status")
            .child("targetResponders")
            .index(0)
            .child("priority"),
    );
    let errs = validate_raw(
        Some(St::new(0).0),
        Some(St::new(1).priority(0, 0).0),
        now(),
        &absent,
    );
    assert_errors(
        &errs,
        &[(Required, "status.targetResponders[0].priority", None)],
    );
    let errs = validate_raw(
        Some(St::new(1).0),
        Some(St::new(1).priority(0, 0).0),
        now(),
        &absent,
    );
    assert_errors(
        &errs,
        &[
            (Required, "status.targetResponders[0].priority", None),
            (
                Invalid,
                "status.targetResponders[0].priority",
                Some("update"),
            ),
        ],
    );
}

#[test]
fn handwritten_part_alone() {
    // The handwritten function does not report declarative errors.
    let errs = validate_eviction_status_update(
        &eviction(Some(St::new(0).0), "1"),
        &eviction(Some(St::new(12).0), "0"),
        &Context {
            now: now(),
            absent: &Absent::default(),
        },
    );
    assert_errors(&errs, &[(Invalid, "status.targetResponders", None)]);
    let errs = validate_eviction_status_update(
        &eviction(Some(St::new(12).0), "1"),
        &eviction(Some(St::new(0).0), "0"),
        &Context {
            now: now(),
            absent: &Absent::default(),
        },
    );
    assert_errors(&errs, &[]);
}

// ---------------------------------------------------------------- create / update / strategy

#[test]
fn eviction_create_and_update() {
    let ok = eviction(None, "");
    assert_errors(&validate_eviction_create(&ok), &[]);
    let mut no_target = ok.clone();
    no_target.spec.target.pod = None;
    assert_errors(
        &validate_eviction_create(&no_target),
        &[(Invalid, "spec.target", Some("union"))],
    );
    let mut bad = ok.clone();
    if let Some(p) = bad.spec.target.pod.as_mut() {
        p.name = "_test".into();
        p.uid = String::new();
    }
    assert_errors(
        &validate_eviction_create(&bad),
        &[
            (
                Invalid,
                "spec.target.pod.name",
                Some("format=k8s-long-name"),
            ),
            (Required, "spec.target.pod.uid", None),
        ],
    );
    let mut no_ns = ok.clone();
    no_ns.metadata.namespace = None;
    assert_errors(
        &validate_eviction_create(&no_ns),
        &[(Required, "metadata.namespace", None)],
    );

    let old = eviction(None, "0");
    let mut new = eviction(None, "1");
    new.metadata.labels = Some(BTreeMap::from([(
        "acme.io/foo".into(),
        "requester-responder".into(),
    )]));
    assert_errors(&validate_eviction_update(&new, &old), &[]);
    if let Some(p) = new.spec.target.pod.as_mut() {
        p.name = "change".into();
    }
    assert_errors(
        &validate_eviction_update(&new, &old),
        &[(Invalid, "spec.target", Some("immutable"))],
    );
}

#[test]
fn eviction_strategy() {
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    let mut obj = eviction(Some(St::new(3).0), "");
    admit_create::<EvictionStrategy>(&mut obj, &ctx).expect("valid eviction");
    assert_eq!(obj.status, Some(EvictionStatus::default()));
    assert_eq!(obj.metadata.generation, Some(1));

    // Main resource: status changes are ignored, labels are free.
    let old = eviction(Some(St::new(0).0), "0");
    let mut new = eviction(Some(St::new(3).0), "1");
    new.metadata.labels = Some(BTreeMap::from([("a.io/x".into(), "requester".into())]));
    admit_update::<EvictionStrategy>(&mut new, &old, &ctx).expect("labels may change");
    assert_eq!(new.status, old.status);

    // /status: spec and labels are reset, the status is validated.
    let old = eviction(Some(St::new(0).0), "0");
    let mut new = eviction(Some(St::new(3).0), "1");
    new.metadata.labels = Some(BTreeMap::from([("a.io/x".into(), "requester".into())]));
    if let Some(p) = new.spec.target.pod.as_mut() {
        p.name = "other".into();
    }
    admit_status_update::<EvictionStrategy>(&mut new, &old, &ctx).expect("valid first sync");
    assert_eq!(new.spec, old.spec);
    assert_eq!(new.metadata.labels, None);
    let mut bad = eviction(Some(St::new(3).state(COMPLETED, 0).0), "1");
    let err = admit_status_update::<EvictionStrategy>(&mut bad, &old, &ctx)
        .expect_err("first sync must activate");
    assert_eq!(
        err.to_string(),
        format!(
            "Eviction.lifecycle.k8s.io \"pod-1-foo.pod\" is invalid: status.targetResponders[0].state: Invalid value: \"Completed\": {NEXT_IN_LINE}"
        )
    );
}
