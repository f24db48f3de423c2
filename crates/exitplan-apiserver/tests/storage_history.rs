//! Historical reads: `list_at` and `list_page` against a reference model,
//! from memory and from disk, and paging consistent at one revision while
//! writes continue.

mod storage_support;

use std::collections::BTreeMap;

use exitplan_apiserver::storage::{
    Key, Page, Precondition, Prefix, StorageError, Store, StoreConfig, WriteError,
};
use proptest::prelude::*;
use storage_support::{labelled, pod, pod_key};

/// What the model knows of an object: its revision.
type State = BTreeMap<String, u64>;

#[derive(Clone, Debug)]
enum Op {
    Put(Key, Precondition),
    Delete(Key, Precondition),
    Compact,
}

fn key() -> impl Strategy<Value = Key> {
    (0..3usize, 0..4usize).prop_map(|(place, name)| {
        let name = format!("o{name}");
        match place {
            0 => Key::new("pods", "a", &name),
            1 => Key::new("pods", "b", &name),
            _ => Key::new("nodes", "", &name),
        }
    })
}

fn precondition() -> impl Strategy<Value = Precondition> {
    prop_oneof![
        3 => Just(Precondition::None),
        1 => Just(Precondition::Absent),
        1 => Just(Precondition::Exists),
        1 => (1..30u64).prop_map(Precondition::Revision),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (key(), precondition()).prop_map(|(k, p)| Op::Put(k, p)),
        3 => (key(), precondition()).prop_map(|(k, p)| Op::Delete(k, p)),
        1 => Just(Op::Compact),
    ]
}

fn holds(precondition: Precondition, current: Option<u64>) -> bool {
    match precondition {
        Precondition::None => true,
        Precondition::Absent => current.is_none(),
        Precondition::Exists => current.is_some(),
        Precondition::Revision(r) => current == Some(r),
    }
}

fn under(state: &State, prefix: &Prefix) -> Vec<(String, u64)> {
    state
        .iter()
        .filter(|(k, _)| prefix.contains(&Key::from_stored(k)))
        .map(|(k, r)| (k.clone(), *r))
        .collect()
}

fn summary(page: &Page) -> Vec<(String, u64)> {
    page.items
        .iter()
        .map(|o| (o.key.as_str().to_owned(), o.revision))
        .collect()
}

/// Every page of `prefix` at `revision`, `limit` at a time.
fn all_pages(store: &Store, prefix: &Prefix, revision: u64, limit: usize) -> Vec<(String, u64)> {
    let mut items = Vec::new();
    let mut next = None;
    loop {
        let page = store
            .list_page(prefix, revision, next.as_ref(), limit)
            .expect("page");
        assert_eq!(page.revision, revision);
        assert!(page.items.len() <= limit);
        items.extend(summary(&page));
        match page.next {
            Some(key) => {
                assert_eq!(Some(&key), page.items.last().map(|o| &o.key));
                next = Some(key);
            }
            None => break items,
        }
    }
}

fn check(ops: Vec<Op>, event_window: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let store = Store::in_memory_with(StoreConfig {
        event_window,
        ..StoreConfig::default()
    })
    .expect("store");
    // states[r]: the model at revision r.
    let mut states: Vec<State> = vec![State::new()];
    let mut compacted = 0;
    for op in ops {
        let current = states.last().cloned().unwrap_or_default();
        match op {
            Op::Put(key, precondition) => {
                let result = runtime.block_on(store.put(
                    key.clone(),
                    pod(key.as_str()),
                    Default::default(),
                    precondition,
                ));
                let before = current.get(key.as_str()).copied();
                if holds(precondition, before) {
                    let stored = result.expect("put");
                    let mut next = current;
                    next.insert(key.as_str().to_owned(), stored.revision);
                    states.push(next);
                    assert_eq!(stored.revision, states.len() as u64 - 1);
                } else {
                    assert!(matches!(result, Err(WriteError::Conflict { .. })));
                }
            }
            Op::Delete(key, precondition) => {
                let result = runtime.block_on(store.delete(&key, precondition));
                let before = current.get(key.as_str()).copied();
                if before.is_some() && holds(precondition, before) {
                    result.expect("delete");
                    let mut next = current;
                    next.remove(key.as_str());
                    states.push(next);
                } else {
                    assert!(matches!(result, Err(WriteError::Conflict { .. })));
                }
            }
            Op::Compact => {
                // Keep the last few revisions.
                let target = (states.len() as u64 - 1).saturating_sub(3);
                let previous = compacted;
                compacted = runtime.block_on(store.compact(target)).expect("compact");
                assert_eq!(compacted, target.max(previous));
            }
        }
    }
    let head = states.len() as u64 - 1;
    assert_eq!(store.revision(), head);
    let prefixes = [
        Prefix::new("pods", None),
        Prefix::new("pods", Some("a")),
        Prefix::new("nodes", None),
    ];
    for prefix in &prefixes {
        for (revision, state) in states.iter().enumerate() {
            let revision = revision as u64;
            if revision < compacted {
                assert!(matches!(
                    store.list_at(prefix, revision),
                    Err(StorageError::Expired { oldest, .. }) if oldest == compacted
                ));
                continue;
            }
            let expected = under(state, prefix);
            let (items, at) = store.list_at(prefix, revision).expect("list_at");
            assert_eq!(at, revision);
            let got: Vec<(String, u64)> = items
                .iter()
                .map(|o| (o.key.as_str().to_owned(), o.revision))
                .collect();
            assert_eq!(got, expected, "{prefix:?} at {revision} of {head}");
            for o in &items {
                let json = o.value().expect("json");
                assert_eq!(json["metadata"]["resourceVersion"], o.revision.to_string());
            }
            for limit in [1, 2, 5] {
                assert_eq!(all_pages(&store, prefix, revision, limit), expected);
            }
        }
        assert!(matches!(
            store.list_at(prefix, head + 1),
            Err(StorageError::TooLarge { requested, current }) if requested == head + 1 && current == head
        ));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// For every retained revision `r`, `list_at(r)` (and paging through
    /// `list_page` at `r`) is the model's state at `r` — rewound from the
    /// in-memory window, from disk (window 0), or from both.
    #[test]
    fn list_at_matches_the_model_at_every_retained_revision(
        ops in proptest::collection::vec(op(), 1..40),
        event_window in prop_oneof![Just(0usize), Just(4), Just(10_000)],
    ) {
        check(ops, event_window);
    }
}

#[tokio::test]
async fn pages_stay_at_their_revision_while_writes_continue() {
    let store = Store::in_memory().expect("store");
    for i in 0..10 {
        let name = format!("p{i}");
        let tier = if i % 2 == 0 { "even" } else { "odd" };
        store
            .put(
                pod_key(&name),
                pod(&name),
                labelled("tier", tier),
                Precondition::Absent,
            )
            .await
            .expect("create");
    }
    let pods = Prefix::new("pods", Some("default"));
    let first = store
        .list_page(&pods, store.revision(), None, 4)
        .expect("page 1");
    let at = first.revision;
    // Meanwhile: deletes before and after the cursor, an update, a create.
    store
        .delete(&pod_key("p1"), Precondition::None)
        .await
        .expect("delete");
    store
        .delete(&pod_key("p7"), Precondition::None)
        .await
        .expect("delete");
    store
        .put(
            pod_key("p5"),
            pod("p5"),
            Default::default(),
            Precondition::None,
        )
        .await
        .expect("update");
    store
        .put(
            pod_key("p45"),
            pod("p45"),
            Default::default(),
            Precondition::None,
        )
        .await
        .expect("create");
    let second = store
        .list_page(&pods, at, first.next.as_ref(), 4)
        .expect("page 2");
    let third = store
        .list_page(&pods, at, second.next.as_ref(), 4)
        .expect("page 3");
    assert_eq!(third.next, None);
    let names: Vec<String> = [first, second, third]
        .iter()
        .flat_map(|p| p.items.iter().map(|o| o.key.as_str().to_owned()))
        .collect();
    let expected: Vec<String> = (0..10).map(|i| format!("pods/default/p{i}")).collect();
    assert_eq!(names, expected);
    let (now, _) = store.list(&pods);
    assert_eq!(now.len(), 9);

    // With a selector, a page holds `limit` matches.
    let odd = |o: &exitplan_apiserver::storage::StoredObject| {
        o.attrs.labels.get("tier").map(String::as_str) == Some("odd")
    };
    let page = store
        .list_page_where(&pods, at, None, 2, odd)
        .expect("selected page");
    let names: Vec<&str> = page.items.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(names, ["pods/default/p1", "pods/default/p3"]);
    let rest = store
        .list_page_where(&pods, at, page.next.as_ref(), 0, odd)
        .expect("the rest");
    let names: Vec<&str> = rest.items.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(
        names,
        ["pods/default/p5", "pods/default/p7", "pods/default/p9"]
    );
    assert_eq!(rest.next, None);
}
