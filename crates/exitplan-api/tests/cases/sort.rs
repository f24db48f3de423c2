//! eviction-cases.md §D — responder ordering (cases 51–54), and the
//! properties that make the §6 comparator a strict total order.

use std::cmp::Ordering;

use exitplan_api::absent::Absent;
use exitplan_api::lifecycle::sort::{compare, sort_by_order, sort_target_responders};
use exitplan_api::lifecycle::validate_eviction_status;
use exitplan_api::strategy::Context;
use jiff::Timestamp;
use k8s_openapi::api::lifecycle::v1alpha1::{
    Eviction, EvictionStatus, ResponderStatus, TargetResponder,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use proptest::prelude::*;

// ---------------------------------------------------------------- builders

/// `r(i)`: `responder.example.com/bar<i>`.
fn r(i: usize) -> String {
    format!("responder.example.com/bar{i}")
}

type Item = (Option<i32>, String);

fn sorted(mut items: Vec<Item>) -> Vec<Item> {
    sort_by_order(&mut items, |(p, n)| (*p, n.as_str()));
    items
}

fn target(name: &str, priority: i32) -> TargetResponder {
    TargetResponder {
        name: name.into(),
        priority,
        state: "Inactive".into(),
    }
}

/// Case 51's expected order.
fn by_priority() -> Vec<Item> {
    vec![
        (Some(100_000), r(1)),
        (Some(99_999), r(9)),
        (Some(10_001), r(10)),
        (Some(10_000), r(2)),
        (Some(5), r(13)),
        (Some(4), r(4)),
        (Some(3), r(12)),
        (Some(3), r(6)),
        (Some(2), r(11)),
        (Some(1), r(8)),
        (Some(0), r(7)),
        (Some(-1), r(3)),
        (Some(-1000), r(14)),
        (None, r(5)),
    ]
}

/// Case 52's expected order.
fn by_domain() -> Vec<Item> {
    let p = |p: i32, n: &str| (Some(p), n.to_owned());
    vec![
        p(16, "responder-x.example.com/bar"),
        p(16, "responder-c.fooexample.com/bar"),
        p(15, "example.com/bar"),
        p(15, "example.com/baz"),
        p(15, "responder-y.example.com/bar"),
        p(15, "responder-y.example.com/baz"),
        p(15, "responder-z.example.com/bar"),
        p(15, "responder-z.example.com/baz"),
        p(15, "fooexample.com/bar"),
        p(15, "responder-a.fooexample.com/bar"),
        p(15, "responder-b.fooexample.com/bar"),
        p(15, "responder-b.fooexample.com/baz"),
        p(15, "responder-b.barexample.io/bar"),
        p(15, "responder-b.fooexample.io/bar"),
        p(15, "responder-b.fooexample.io/baz"),
        p(14, "responder-k.kubernetes.io/y"),
        p(14, "responder-k.kubernetes.io/y"),
        p(14, "responder-k.kubernetes.io/z"),
        p(13, "responder-k.kubernetes.io/x"),
    ]
}

/// A permutation of `items` chosen by `seed` (xorshift Fisher–Yates).
fn permuted<T: Clone>(items: &[T], mut seed: u64) -> Vec<T> {
    let mut v = items.to_vec();
    for i in (1..v.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let j = usize::try_from(seed % (i as u64 + 1)).expect("fits");
        v.swap(i, j);
    }
    v
}

// ---------------------------------------------------------------- cases

#[test]
fn case_51_priority_ordering() {
    let want = by_priority();
    let mut reversed = want.clone();
    reversed.reverse();
    assert_eq!(sorted(reversed), want);
    // `bar12` before `bar6`: byte-wise key comparison.
    assert_eq!(compare(Some(3), &r(12), Some(3), &r(6)), Ordering::Less);
    // A missing priority sorts after every number, negative ones included.
    assert_eq!(compare(None, &r(5), Some(-1000), &r(14)), Ordering::Greater);
    assert_eq!(
        compare(Some(i32::MIN), "a.io/x", None, "a.io/x"),
        Ordering::Less
    );
}

#[test]
fn case_52_domain_tie_break() {
    let want = by_domain();
    let mut reversed = want.clone();
    reversed.reverse();
    assert_eq!(sorted(reversed), want);
    // Reversed-domain comparison with the shorter list first.
    assert_eq!(
        compare(
            Some(15),
            "example.com/baz",
            Some(15),
            "responder-y.example.com/bar"
        ),
        Ordering::Less
    );
    assert_eq!(
        compare(
            Some(15),
            "responder-z.example.com/baz",
            Some(15),
            "fooexample.com/bar"
        ),
        Ordering::Less
    );
}

#[test]
fn case_53_worked_pod_example() {
    let mut list = vec![
        target("zeta.example.com/drain", 10000),
        target("alpha.example.org/drain", 10000),
        target("example.com/backup", 10000),
        target("mover.acme.io/migrate", 15000),
        target("fallback.rescue.io/evict", 1000),
        target("imperative-eviction.k8s.io/evictor", 100),
    ];
    sort_target_responders(&mut list);
    let order: Vec<&str> = list.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        order,
        [
            "mover.acme.io/migrate",
            "example.com/backup",
            "zeta.example.com/drain",
            "alpha.example.org/drain",
            "fallback.rescue.io/evict",
            "imperative-eviction.k8s.io/evictor",
        ]
    );

    // The first activated is mover.acme.io/migrate: status validation accepts
    // a first sync (declaration order kept) that activates it, and no other.
    let declared = [
        ("zeta.example.com/drain", 10000),
        ("alpha.example.org/drain", 10000),
        ("example.com/backup", 10000),
        ("mover.acme.io/migrate", 15000),
        ("fallback.rescue.io/evict", 1000),
        ("imperative-eviction.k8s.io/evictor", 100),
    ];
    let now: Timestamp = "2026-07-01T12:00:00Z".parse().expect("valid timestamp");
    let first_sync = |active: &str| {
        let targets = declared
            .iter()
            .map(|(n, p)| TargetResponder {
                state: if *n == active { "Active" } else { "Inactive" }.into(),
                ..target(n, *p)
            })
            .collect();
        let statuses = declared
            .iter()
            .map(|(n, _)| ResponderStatus {
                name: (*n).into(),
                start_time: (*n == active).then_some(Time(now)),
                ..ResponderStatus::default()
            })
            .collect();
        Eviction {
            metadata: ObjectMeta {
                name: Some("pod-1-p".into()),
                namespace: Some("ns".into()),
                resource_version: Some("2".into()),
                ..ObjectMeta::default()
            },
            status: Some(EvictionStatus {
                observed_generation: Some(1),
                target_responders: Some(targets),
                responders: Some(statuses),
                ..EvictionStatus::default()
            }),
            ..Eviction::default()
        }
    };
    let mut old = first_sync("");
    old.status = None;
    old.metadata.resource_version = Some("1".into());
    let absent = Absent::default();
    let ctx = Context {
        now,
        absent: &absent,
    };
    assert!(validate_eviction_status(&first_sync("mover.acme.io/migrate"), &old, &ctx).is_empty());
    let errs = validate_eviction_status(&first_sync("zeta.example.com/drain"), &old, &ctx);
    assert!(
        errs.iter()
            .any(|e| e.field == "status.targetResponders[3].state"
                && e.detail == "must be one of: Active, because this responder is next in line"),
        "{errs}"
    );
}

#[test]
fn case_54_review_example() {
    let items: Vec<Item> = [
        "deployment.k8s.io/responder-b",
        "example.com/responder-c",
        "replicaset.k8s.io/responder-a",
    ]
    .iter()
    .map(|n| (Some(10000), (*n).to_owned()))
    .collect();
    let names: Vec<String> = sorted(items).into_iter().map(|(_, n)| n).collect();
    assert_eq!(
        names,
        [
            "example.com/responder-c",
            "deployment.k8s.io/responder-b",
            "replicaset.k8s.io/responder-a",
        ]
    );
}

// ---------------------------------------------------------------- properties

/// Valid prefixed label keys over a small alphabet, so ties in priority and
/// shared domain suffixes are frequent.
fn name() -> impl Strategy<Value = String> {
    (
        prop::collection::vec("[a-c]{1,2}", 1..4),
        "[a-cA-C0-9]{1,3}",
    )
        .prop_map(|(labels, key)| format!("{}/{key}", labels.join(".")))
}

fn item() -> impl Strategy<Value = Item> {
    (prop::option::weighted(0.9, -2i32..3), name())
}

proptest! {
    /// Cases 51/52: any shuffle of the tables sorts back to the table
    /// (identical names in case 52 compare equal, so the result is the same).
    #[test]
    fn case_51_52_shuffled_tables_sort_back(seed in 1u64..u64::MAX) {
        prop_assert_eq!(sorted(permuted(&by_priority(), seed)), by_priority());
        prop_assert_eq!(sorted(permuted(&by_domain(), seed)), by_domain());
    }

    /// The comparator is a strict total order on distinct names: total
    /// (never Equal), antisymmetric, and transitive.
    #[test]
    fn sort_is_a_strict_total_order(a in item(), b in item(), c in item()) {
        let cmp = |x: &Item, y: &Item| compare(x.0, &x.1, y.0, &y.1);
        prop_assert_eq!(cmp(&a, &a), Ordering::Equal);
        if a.1 != b.1 {
            prop_assert_ne!(cmp(&a, &b), Ordering::Equal);
        }
        prop_assert_eq!(cmp(&a, &b), cmp(&b, &a).reverse());
        if cmp(&a, &b) == Ordering::Less && cmp(&b, &c) == Ordering::Less {
            prop_assert_eq!(cmp(&a, &c), Ordering::Less);
        }
        if cmp(&a, &b) != Ordering::Greater && cmp(&b, &c) != Ordering::Greater {
            prop_assert_ne!(cmp(&a, &c), Ordering::Greater);
        }
    }

    /// Sorting is independent of the input order.
    #[test]
    fn sort_ignores_input_order(items in prop::collection::vec(item(), 0..12), seed in 1u64..u64::MAX) {
        prop_assert_eq!(sorted(permuted(&items, seed)), sorted(items));
    }
}
