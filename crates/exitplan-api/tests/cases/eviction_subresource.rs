//! Section I (cases 101–114) and the eviction cases of section K (125–127,
//! 130–134, 142) of `job-failure-cases.md`: the eviction subresource state
//! machine driven against an in-memory store that behaves like the pod and
//! PDB storage (resourceVersions, preconditions, dry-run), with hooks that
//! inject conflicts and concurrent changes the way upstream's mock store does.

use std::collections::BTreeMap;

use exitplan_api::policy::eviction_subresource::answer::{self, Answer};
use exitplan_api::policy::eviction_subresource::machine::{RETRY_DELAY, RETRY_STEPS};
use exitplan_api::policy::eviction_subresource::options::decode_body;
use exitplan_api::policy::eviction_subresource::{Action, EvictionRequest, Outcome, Step, begin};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::api::policy::v1::{
    Eviction, PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Condition, DeleteOptions, LabelSelector, ObjectMeta, Preconditions, Status, Time,
};
use serde_json::json;

const NS: &str = "default";

fn now() -> Timestamp {
    "2026-03-01T12:00:00Z".parse().expect("timestamp")
}

fn a_true() -> BTreeMap<String, String> {
    BTreeMap::from([("a".to_owned(), "true".to_owned())])
}

// ---------------------------------------------------------------- fixtures

fn pod(name: &str, phase: &str, ready: Option<bool>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(NS.to_owned()),
            uid: Some(format!("uid-{name}")),
            resource_version: Some("1".to_owned()),
            labels: Some(a_true()),
            ..ObjectMeta::default()
        },
        spec: None,
        status: Some(PodStatus {
            phase: Some(phase.to_owned()),
            conditions: ready.map(|r| {
                vec![PodCondition {
                    type_: "Ready".to_owned(),
                    status: if r { "True" } else { "False" }.to_owned(),
                    ..PodCondition::default()
                }]
            }),
            ..PodStatus::default()
        }),
    }
}

fn selector_a() -> Option<LabelSelector> {
    Some(LabelSelector {
        match_labels: Some(a_true()),
        match_expressions: None,
    })
}

/// A PDB `name` selecting `a=true`, synced (observedGeneration = generation = 1).
fn pdb(name: &str, allowed: i32, current: i32, desired: i32) -> PodDisruptionBudget {
    PodDisruptionBudget {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(NS.to_owned()),
            generation: Some(1),
            resource_version: Some("1".to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(PodDisruptionBudgetSpec {
            selector: selector_a(),
            ..PodDisruptionBudgetSpec::default()
        }),
        status: Some(PodDisruptionBudgetStatus {
            disruptions_allowed: Some(allowed),
            current_healthy: Some(current),
            desired_healthy: Some(desired),
            expected_pods: Some(current),
            observed_generation: Some(1),
            ..PodDisruptionBudgetStatus::default()
        }),
    }
}

fn with_policy(mut p: PodDisruptionBudget, policy: Option<&str>) -> PodDisruptionBudget {
    if let Some(spec) = p.spec.as_mut() {
        spec.unhealthy_pod_eviction_policy = policy.map(str::to_owned);
    }
    p
}

fn with_condition(
    mut p: PodDisruptionBudget,
    status: &str,
    reason: &str,
    message: &str,
) -> PodDisruptionBudget {
    let st = p.status.get_or_insert_with(Default::default);
    st.conditions = Some(vec![Condition {
        type_: "DisruptionAllowed".to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        last_transition_time: Time(Timestamp::UNIX_EPOCH),
        observed_generation: None,
    }]);
    p
}

fn request(name: &str, options: Option<DeleteOptions>) -> EvictionRequest {
    EvictionRequest {
        namespace: NS.to_owned(),
        url_name: name.to_owned(),
        eviction: Eviction {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(NS.to_owned()),
                ..ObjectMeta::default()
            },
            delete_options: options,
        },
        dry_run: Vec::new(),
    }
}

fn grace(seconds: i64) -> Option<DeleteOptions> {
    Some(DeleteOptions {
        grace_period_seconds: Some(seconds),
        ..DeleteOptions::default()
    })
}

fn precondition(uid: Option<&str>, rv: Option<&str>) -> Option<DeleteOptions> {
    Some(DeleteOptions {
        preconditions: Some(Preconditions {
            uid: uid.map(str::to_owned),
            resource_version: rv.map(str::to_owned),
        }),
        ..DeleteOptions::default()
    })
}

fn dry_run_options() -> Option<DeleteOptions> {
    Some(DeleteOptions {
        dry_run: Some(vec!["All".to_owned()]),
        ..DeleteOptions::default()
    })
}

const POLICIES: [Option<&str>; 3] = [None, Some("IfHealthyBudget"), Some("AlwaysAllow")];

// ------------------------------------------------------------ fake storage

/// A write or delete the store performed (or refused, for deletes).
#[derive(Clone, Debug, PartialEq)]
enum Write {
    PdbStatus(String, PodDisruptionBudgetStatus),
    PodStatus(String, Box<PodStatus>),
    Delete(String, DeleteOptions),
}

type Hook = Box<dyn FnMut(&mut State, &Action) -> Option<Outcome>>;

#[derive(Default)]
struct State {
    pods: BTreeMap<String, Pod>,
    pdbs: BTreeMap<String, PodDisruptionBudget>,
    revision: u64,
    writes: Vec<Write>,
    actions: Vec<Action>,
    delete_calls: u32,
}

struct Store {
    state: State,
    hook: Option<Hook>,
}

fn status_of(a: Answer) -> Status {
    *a.status
}

impl State {
    fn next_rv(&mut self) -> String {
        self.revision += 1;
        (100 + self.revision).to_string()
    }

    fn perform(&mut self, action: &Action) -> Outcome {
        match action {
            Action::GetPod { name, .. } => match self.pods.get(name) {
                Some(p) => Outcome::Pod(Box::new(p.clone())),
                None => Outcome::NotFound(status_of(answer::not_found("", "pods", name))),
            },
            Action::GetPdb { name, .. } => match self.pdbs.get(name) {
                Some(p) => Outcome::Pdb(Box::new(p.clone())),
                None => Outcome::NotFound(status_of(answer::not_found(
                    "policy",
                    "poddisruptionbudgets",
                    name,
                ))),
            },
            Action::UpdatePdbStatus {
                pdb,
                expected_resource_version,
            } => {
                let name = pdb.metadata.name.clone().unwrap_or_default();
                let Some(stored) = self.pdbs.get(&name).cloned() else {
                    return Outcome::NotFound(status_of(answer::not_found(
                        "policy",
                        "poddisruptionbudgets",
                        &name,
                    )));
                };
                if stored.metadata.resource_version.as_deref()
                    != Some(expected_resource_version.as_str())
                {
                    return Outcome::Conflict(modified("policy", "poddisruptionbudgets", &name));
                }
                let mut next = stored;
                next.status.clone_from(&pdb.status);
                next.metadata.resource_version = Some(self.next_rv());
                self.writes.push(Write::PdbStatus(
                    name.clone(),
                    pdb.status.clone().unwrap_or_default(),
                ));
                self.pdbs.insert(name, next.clone());
                Outcome::Pdb(Box::new(next))
            }
            Action::UpdatePodStatus {
                pod,
                expected_resource_version,
            } => {
                let name = pod.metadata.name.clone().unwrap_or_default();
                let Some(stored) = self.pods.get(&name).cloned() else {
                    return Outcome::NotFound(status_of(answer::not_found("", "pods", &name)));
                };
                if stored.metadata.resource_version.as_deref()
                    != Some(expected_resource_version.as_str())
                {
                    return Outcome::Conflict(modified("", "pods", &name));
                }
                let mut next = stored;
                next.status.clone_from(&pod.status);
                next.metadata.resource_version = Some(self.next_rv());
                self.writes.push(Write::PodStatus(
                    name.clone(),
                    Box::new(pod.status.clone().unwrap_or_default()),
                ));
                self.pods.insert(name, next.clone());
                Outcome::Pod(Box::new(next))
            }
            Action::DeletePod { name, options, .. } => {
                self.writes
                    .push(Write::Delete(name.clone(), options.clone()));
                let Some(stored) = self.pods.get(name).cloned() else {
                    return Outcome::NotFound(status_of(answer::not_found("", "pods", name)));
                };
                if let Some(pre) = &options.preconditions {
                    let uid = stored.metadata.uid.clone().unwrap_or_default();
                    let rv = stored.metadata.resource_version.clone().unwrap_or_default();
                    if let Some(want) = pre.uid.as_ref().filter(|u| **u != uid) {
                        return Outcome::Conflict(status_of(answer::conflict(
                            "",
                            "pods",
                            name,
                            &format!(
                                "Precondition failed: UID in precondition: {want}, UID in object meta: {uid}"
                            ),
                        )));
                    }
                    if let Some(want) = pre.resource_version.as_ref().filter(|r| **r != rv) {
                        return Outcome::Conflict(status_of(answer::conflict(
                            "",
                            "pods",
                            name,
                            &format!(
                                "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {rv}"
                            ),
                        )));
                    }
                }
                if options.dry_run.as_ref().is_some_and(|d| !d.is_empty()) {
                    return Outcome::Deleted;
                }
                let immediate = options.grace_period_seconds == Some(0);
                if immediate {
                    self.pods.remove(name);
                } else {
                    let mut next = stored;
                    next.metadata.deletion_timestamp = Some(Time(now()));
                    next.metadata.resource_version = Some(self.next_rv());
                    self.pods.insert(name.clone(), next);
                }
                Outcome::Deleted
            }
        }
    }
}

fn modified(group: &str, resource: &str, name: &str) -> Status {
    status_of(answer::conflict(
        group,
        resource,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
    ))
}

impl Store {
    fn new(pods: Vec<Pod>, pdbs: Vec<PodDisruptionBudget>) -> Self {
        let mut state = State::default();
        for p in pods {
            state
                .pods
                .insert(p.metadata.name.clone().unwrap_or_default(), p);
        }
        for p in pdbs {
            state
                .pdbs
                .insert(p.metadata.name.clone().unwrap_or_default(), p);
        }
        Store { state, hook: None }
    }

    fn with_hook(
        mut self,
        hook: impl FnMut(&mut State, &Action) -> Option<Outcome> + 'static,
    ) -> Self {
        self.hook = Some(Box::new(hook));
        self
    }

    /// Drives one eviction to its answer, like the API server would.
    fn evict(&mut self, req: &EvictionRequest) -> Answer {
        let pod = self.state.pods.get(&req.url_name).cloned();
        let pdbs: Vec<PodDisruptionBudget> = self.state.pdbs.values().cloned().collect();
        let mut step = begin(req, pod.as_ref(), &pdbs, now());
        for _ in 0..1000 {
            match step {
                Step::Done(answer) => return answer,
                Step::Perform(pending) => {
                    let action = pending.action().clone();
                    if matches!(action, Action::GetPod { .. } | Action::GetPdb { .. })
                        && pending.delay().is_some()
                    {
                        assert_eq!(pending.delay(), Some(RETRY_DELAY));
                    }
                    self.state.actions.push(action.clone());
                    if matches!(action, Action::DeletePod { .. }) {
                        self.state.delete_calls += 1;
                    }
                    let injected = match self.hook.as_mut() {
                        Some(h) => h(&mut self.state, &action),
                        None => None,
                    };
                    let outcome = match injected {
                        Some(o) => o,
                        None => self.state.perform(&action),
                    };
                    step = pending.resume(outcome, now());
                }
            }
        }
        panic!("eviction did not finish");
    }

    fn pod(&self, name: &str) -> Option<&Pod> {
        self.state.pods.get(name)
    }

    fn pdb_status(&self, name: &str) -> PodDisruptionBudgetStatus {
        self.state
            .pdbs
            .get(name)
            .and_then(|p| p.status.clone())
            .unwrap_or_default()
    }

    fn pdb_writes(&self) -> usize {
        self.state
            .writes
            .iter()
            .filter(|w| matches!(w, Write::PdbStatus(..)))
            .count()
    }

    fn pod_status_writes(&self) -> Vec<&PodStatus> {
        self.state
            .writes
            .iter()
            .filter_map(|w| match w {
                Write::PodStatus(_, s) => Some(&**s),
                _ => None,
            })
            .collect()
    }

    fn deletes(&self) -> Vec<&DeleteOptions> {
        self.state
            .writes
            .iter()
            .filter_map(|w| match w {
                Write::Delete(_, o) => Some(o),
                _ => None,
            })
            .collect()
    }

    /// Gone, or marked for graceful deletion.
    fn deleted(&self, name: &str) -> bool {
        self.pod(name)
            .is_none_or(|p| p.metadata.deletion_timestamp.is_some())
    }
}

// ------------------------------------------------------------- assertions

fn assert_budget_429(a: &Answer, cause: &str) {
    assert_eq!(a.code, 429, "{a:?}");
    assert_eq!(a.status.reason.as_deref(), Some("TooManyRequests"));
    assert_eq!(
        a.status.message.as_deref(),
        Some("Cannot evict pod as it would violate the pod's disruption budget.")
    );
    let causes = a
        .status
        .details
        .as_ref()
        .and_then(|d| d.causes.clone())
        .unwrap_or_default();
    assert_eq!(causes.len(), 1, "{a:?}");
    assert_eq!(causes[0].reason.as_deref(), Some("DisruptionBudget"));
    assert_eq!(causes[0].message.as_deref(), Some(cause));
    assert_eq!(causes[0].field, None);
}

fn assert_no_retry_after(a: &Answer) {
    assert_eq!(a.retry_after_seconds, None);
    assert_eq!(
        a.status
            .details
            .as_ref()
            .and_then(|d| d.retry_after_seconds),
        None
    );
}

fn assert_still_processing(a: &Answer, pdb: &str) {
    assert_budget_429(
        a,
        &format!("The disruption budget {pdb} is still being processed by the server."),
    );
    assert_eq!(a.retry_after_seconds, Some(10));
    assert_eq!(
        a.status
            .details
            .as_ref()
            .and_then(|d| d.retry_after_seconds),
        Some(10)
    );
}

fn assert_success(a: &Answer) {
    assert_eq!(a.code, 201, "{a:?}");
    assert_eq!(
        serde_json::to_value(&*a.status).expect("json"),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
    );
}

fn disruption_target(status: &PodStatus) -> Option<&PodCondition> {
    status
        .conditions
        .as_ref()
        .and_then(|c| c.iter().find(|c| c.type_ == "DisruptionTarget"))
}

/// The first pod write added `DisruptionTarget True EvictionByEvictionAPI`
/// and it happened before the first delete.
fn assert_condition_then_delete(store: &Store) {
    let first_status = store
        .state
        .writes
        .iter()
        .position(|w| matches!(w, Write::PodStatus(..)))
        .expect("a pod status write");
    let first_delete = store
        .state
        .writes
        .iter()
        .position(|w| matches!(w, Write::Delete(..)))
        .expect("a delete");
    assert!(first_status < first_delete);
    let status = store.pod_status_writes()[0];
    let c = disruption_target(status).expect("DisruptionTarget");
    assert_eq!(c.status, "True");
    assert_eq!(c.reason.as_deref(), Some("EvictionByEvictionAPI"));
    assert_eq!(c.message.as_deref(), Some("Eviction API: evicting"));
    assert_eq!(c.last_transition_time, Some(Time(now())));
}

// ------------------------------------------------------------------ cases

#[test]
fn case_101_running_unready_pod_no_disruptions_allowed() {
    for policy in POLICIES {
        let mut store = Store::new(
            vec![pod("t1", "Running", None)],
            vec![with_policy(pdb("foo", 0, 0, 0), policy)],
        );
        let a = store.evict(&request("t1", grace(0)));
        if policy == Some("AlwaysAllow") {
            // Unready pod: AlwaysAllow deletes it without touching the budget.
            assert_success(&a);
            assert!(store.deleted("t1"));
            assert_eq!(store.pdb_writes(), 0);
        } else {
            assert_budget_429(
                &a,
                "The disruption budget foo needs 0 healthy pods and has 0 currently",
            );
            assert_no_retry_after(&a);
            assert!(!store.deleted("t1"), "{policy:?}");
            assert!(store.state.writes.is_empty(), "{policy:?}");
        }
    }
}

#[test]
fn case_102_pending_succeeded_failed_pods_bypass_the_budget() {
    for policy in POLICIES {
        for phase in ["Pending", "Succeeded", "Failed"] {
            let mut store = Store::new(
                vec![pod("t2", phase, None)],
                vec![with_policy(pdb("foo", 0, 0, 0), policy)],
            );
            let a = store.evict(&request("t2", grace(0)));
            assert_success(&a);
            assert!(store.pod("t2").is_none(), "{phase} {policy:?}");
            assert_eq!(store.pdb_writes(), 0);
            assert_condition_then_delete(&store);
            // Only the non-terminal Pending pod gets a resourceVersion precondition,
            // bumped to the version the condition write produced.
            let deletes = store.deletes();
            assert_eq!(deletes.len(), 1);
            let rv = deletes[0]
                .preconditions
                .as_ref()
                .and_then(|p| p.resource_version.clone());
            if phase == "Pending" {
                assert_eq!(rv.as_deref(), Some("101"));
            } else {
                assert_eq!(rv, None);
            }
        }
    }
}

#[test]
fn case_103_allowed_nonmatching_and_bad_name() {
    for policy in POLICIES {
        // Allowed 1: deleted; the budget is spent unless AlwaysAllow lets the
        // unready pod go without it.
        let mut store = Store::new(
            vec![pod("t5", "Running", None)],
            vec![with_policy(pdb("foo", 1, 0, 0), policy)],
        );
        assert_success(&store.evict(&request("t5", grace(0))));
        assert!(store.deleted("t5"));
        let spent = if policy == Some("AlwaysAllow") { 1 } else { 0 };
        assert_eq!(store.pdb_status("foo").disruptions_allowed, Some(spent));
        // A Ready pod always spends it.
        let mut store = Store::new(
            vec![pod("t5", "Running", Some(true))],
            vec![with_policy(pdb("foo", 1, 1, 0), policy)],
        );
        assert_success(&store.evict(&request("t5", grace(0))));
        assert_eq!(store.pdb_status("foo").disruptions_allowed, Some(0));

        // Non-matching selector: no budget applies.
        let mut other = with_policy(pdb("foo", 0, 0, 0), policy);
        if let Some(spec) = other.spec.as_mut() {
            spec.selector = Some(LabelSelector {
                match_labels: Some(BTreeMap::from([("b".to_owned(), "true".to_owned())])),
                match_expressions: None,
            });
        }
        let mut store = Store::new(vec![pod("t6", "Running", None)], vec![other]);
        assert_success(&store.evict(&request("t6", grace(0))));
        assert!(store.deleted("t6"));
        assert_eq!(store.pdb_writes(), 0);

        // Bad name in URL.
        let mut store = Store::new(
            vec![pod("t7", "Running", None)],
            vec![with_policy(pdb("foo", 1, 0, 0), policy)],
        );
        let mut req = request("t7", grace(0));
        req.url_name = "t7bad-name".to_owned();
        let a = store.evict(&req);
        assert_eq!(a.code, 400);
        assert_eq!(a.status.reason.as_deref(), Some("BadRequest"));
        assert_eq!(
            a.status.message.as_deref(),
            Some("name in URL does not match name in Eviction object")
        );
        assert!(store.state.actions.is_empty());
        assert!(!store.deleted("t7"));
    }
}

#[test]
fn case_104_empty_selector_matches_every_pod() {
    for policy in [None, Some("IfHealthyBudget")] {
        let mut p = with_policy(pdb("foo", 0, 0, 0), policy);
        if let Some(spec) = p.spec.as_mut() {
            spec.selector = Some(LabelSelector::default());
        }
        let mut store = Store::new(vec![pod("t1", "Running", None)], vec![p]);
        let a = store.evict(&request("t1", grace(0)));
        assert_budget_429(
            &a,
            "The disruption budget foo needs 0 healthy pods and has 0 currently",
        );
    }
    // A nil selector matches nothing.
    let mut p = pdb("foo", 0, 0, 0);
    if let Some(spec) = p.spec.as_mut() {
        spec.selector = None;
    }
    let mut store = Store::new(vec![pod("t1", "Running", None)], vec![p]);
    assert_success(&store.evict(&request("t1", grace(0))));
}

#[test]
fn case_105_terminating_pod_ignores_the_budget() {
    for policy in POLICIES {
        let mut p = pod("t6", "Running", Some(true));
        p.metadata.deletion_timestamp = Some(Time(now()));
        let mut store = Store::new(vec![p], vec![with_policy(pdb("foo", 0, 0, 0), policy)]);
        let a = store.evict(&request("t6", grace(300)));
        assert_success(&a);
        assert_eq!(store.state.delete_calls, 1);
        assert_eq!(store.pdb_writes(), 0);
        // Deleting pods get no resourceVersion precondition.
        assert_eq!(store.deletes()[0].preconditions, None);
        assert_eq!(store.deletes()[0].grace_period_seconds, Some(300));
    }
}

#[test]
fn case_106_ready_pod_budget_exhausted() {
    for policy in POLICIES {
        let mut store = Store::new(
            vec![pod("t7", "Running", Some(true))],
            vec![with_policy(pdb("foo", 0, 2, 2), policy)],
        );
        let a = store.evict(&request("t7", grace(0)));
        assert_budget_429(
            &a,
            "The disruption budget foo needs 2 healthy pods and has 2 currently",
        );
        assert_no_retry_after(&a);
        assert_eq!(store.state.delete_calls, 0);
    }
}

#[test]
fn case_107_unready_pod_deleted_without_spending_the_budget() {
    for policy in POLICIES {
        let mut store = Store::new(
            vec![pod("t8", "Running", Some(false))],
            vec![with_policy(pdb("foo", 0, 2, 2), policy)],
        );
        let a = store.evict(&request("t8", grace(0)));
        assert_success(&a);
        assert_eq!(store.state.delete_calls, 1);
        assert_eq!(store.pdb_writes(), 0);
        assert_eq!(store.pdb_status("foo").disruptions_allowed, Some(0));
        // The server pinned the pod's resourceVersion, bumped past its own write.
        let rv = store.deletes()[0]
            .preconditions
            .as_ref()
            .and_then(|p| p.resource_version.clone());
        assert_eq!(rv.as_deref(), Some("101"));
        assert_condition_then_delete(&store);
    }
}

#[test]
fn case_108_always_allow_deletes_unready_pod_even_with_zero_desired() {
    for policy in POLICIES {
        let mut store = Store::new(
            vec![pod("t8", "Running", Some(false))],
            vec![with_policy(pdb("foo", 0, 0, 0), policy)],
        );
        let a = store.evict(&request("t8", grace(0)));
        if policy == Some("AlwaysAllow") {
            assert_success(&a);
            assert_eq!(store.state.delete_calls, 1);
        } else {
            assert_budget_429(
                &a,
                "The disruption budget foo needs 0 healthy pods and has 0 currently",
            );
            assert_eq!(store.state.delete_calls, 0);
        }
        assert_eq!(store.pdb_writes(), 0);
    }
}

/// Upstream's mock store answering every delete with a conflict.
fn always_conflict_on_delete(state: &mut State, action: &Action) -> Option<Outcome> {
    let _ = state;
    matches!(action, Action::DeletePod { .. })
        .then(|| Outcome::Conflict(modified("", "tests", "2")))
}

#[test]
fn case_109_conflict_on_pinned_delete_becomes_retryable_429() {
    for policy in POLICIES {
        let mut store = Store::new(
            vec![pod("t9", "Running", Some(false))],
            vec![with_policy(pdb("foo", 0, 2, 2), policy)],
        )
        .with_hook(always_conflict_on_delete);
        let a = store.evict(&request("t9", grace(0)));
        assert_still_processing(&a, "foo");
        assert_eq!(store.state.delete_calls, 1);

        // Any other delete error is answered unchanged.
        let mut store = Store::new(
            vec![pod("t10", "Running", Some(false))],
            vec![with_policy(pdb("foo", 0, 2, 2), policy)],
        )
        .with_hook(|_, action| {
            matches!(action, Action::DeletePod { .. })
                .then(|| Outcome::Failed(status_of(answer::bad_request("test designed to error"))))
        });
        let a = store.evict(&request("t10", grace(0)));
        assert_eq!(a.code, 400);
        assert_eq!(a.status.message.as_deref(), Some("test designed to error"));
        assert_eq!(store.state.delete_calls, 1);
    }
}

#[test]
fn case_110_pending_pod_delete_conflicts_retry_twenty_times_unless_caller_rv() {
    let mut store = Store::new(vec![pod("t4", "Pending", None)], vec![pdb("foo", 0, 0, 0)])
        .with_hook(always_conflict_on_delete);
    let a = store.evict(&request("t4", grace(0)));
    assert_eq!(store.state.delete_calls, 20);
    assert_eq!(RETRY_STEPS, 20);
    assert_eq!(a.code, 409);
    assert_eq!(
        a.status.message.as_deref(),
        Some(
            "Operation cannot be fulfilled on tests \"2\": the object has been modified; please apply your changes to the latest version and try again"
        )
    );
    // Every retry re-read the pod after the back-off.
    let rereads = store
        .state
        .actions
        .iter()
        .filter(|a| matches!(a, Action::GetPod { .. }))
        .count();
    assert_eq!(rereads, 19);

    // The caller's resourceVersion precondition disables retries.
    let mut p = pod("t5", "Pending", None);
    p.metadata.resource_version = Some("userProvided".to_owned());
    let mut store =
        Store::new(vec![p], vec![pdb("foo", 0, 0, 0)]).with_hook(always_conflict_on_delete);
    let a = store.evict(&request("t5", precondition(None, Some("userProvided"))));
    assert_eq!(store.state.delete_calls, 1);
    assert_eq!(a.code, 409);
    assert!(a.is_conflict());
}

/// Upstream's "first delete conflicts" mock: the first delete fails with a
/// conflict after the pod changed (optionally to Running).
fn first_delete_conflicts(
    becomes_running: bool,
) -> impl FnMut(&mut State, &Action) -> Option<Outcome> {
    let mut deletes = 0;
    move |state, action| {
        let Action::DeletePod { name, .. } = action else {
            return None;
        };
        deletes += 1;
        if deletes > 1 {
            return None;
        }
        let rv = state.next_rv();
        if let Some(p) = state.pods.get_mut(name) {
            p.metadata.resource_version = Some(rv);
            if let Some(st) = p.status.as_mut().filter(|_| becomes_running) {
                st.phase = Some("Running".to_owned());
            }
        }
        Some(Outcome::Conflict(modified("", "tests", "2")))
    }
}

#[test]
fn case_111_pending_pod_becomes_running_after_conflict_continues_to_pdbs() {
    for policy in [None, Some("IfHealthyBudget")] {
        let mut store = Store::new(
            vec![pod("t2", "Pending", None)],
            vec![with_policy(pdb("foo", 0, 0, 0), policy)],
        )
        .with_hook(first_delete_conflicts(true));
        let a = store.evict(&request("t2", grace(0)));
        assert_budget_429(
            &a,
            "The disruption budget foo needs 0 healthy pods and has 0 currently",
        );
        assert_eq!(store.state.delete_calls, 1);
        assert!(!store.deleted("t2"));
    }
    // Same with a budget allowing one disruption: spent, then deleted (2 deletes).
    let mut store = Store::new(vec![pod("t3", "Pending", None)], vec![pdb("foo", 1, 0, 0)])
        .with_hook(first_delete_conflicts(true));
    assert_success(&store.evict(&request("t3", grace(0))));
    assert_eq!(store.state.delete_calls, 2);
    assert_eq!(store.pdb_status("foo").disruptions_allowed, Some(0));
    // Still Pending after the conflict: the retry pins the new version and succeeds.
    let mut store = Store::new(vec![pod("t1", "Pending", None)], vec![pdb("foo", 0, 0, 0)])
        .with_hook(first_delete_conflicts(false));
    assert_success(&store.evict(&request("t1", grace(0))));
    assert_eq!(store.state.delete_calls, 2);
    assert!(store.pod("t1").is_none());
}

#[test]
fn case_112_add_condition_and_delete_preconditions() {
    struct Case {
        name: &'static str,
        options: Option<DeleteOptions>,
        vanish: bool,
        want: Result<(), &'static str>,
    }
    let cases = [
        Case {
            name: "simple",
            options: grace(0),
            vanish: false,
            want: Ok(()),
        },
        Case {
            name: "valid uid",
            options: precondition(Some("uid-p1"), None),
            vanish: false,
            want: Ok(()),
        },
        Case {
            name: "valid resourceVersion",
            options: precondition(None, Some("1")),
            vanish: false,
            want: Ok(()),
        },
        Case {
            name: "invalid uid",
            options: precondition(Some("bad-uid"), None),
            vanish: false,
            want: Err(
                "Operation cannot be fulfilled on Pod \"p1\": the UID in the precondition (bad-uid) does not match the UID in record (uid-p1). The object might have been deleted and then recreated",
            ),
        },
        Case {
            name: "invalid resourceVersion",
            options: precondition(None, Some("42")),
            vanish: false,
            want: Err(
                "Operation cannot be fulfilled on Pod \"p1\": the ResourceVersion in the precondition (42) does not match the ResourceVersion in record (1). The object might have been modified",
            ),
        },
        Case {
            name: "missing",
            options: grace(0),
            vanish: true,
            want: Err("pods \"p1\" not found"),
        },
    ];
    for case in cases {
        let mut store = Store::new(vec![pod("p1", "Running", Some(true))], vec![]);
        if case.vanish {
            store = store.with_hook(|state, action| {
                if matches!(action, Action::UpdatePodStatus { .. }) {
                    state.pods.clear();
                }
                None
            });
        }
        let a = store.evict(&request("p1", case.options));
        match case.want {
            Ok(()) => {
                assert_success(&a);
                assert_condition_then_delete(&store);
                assert!(store.deleted("p1"), "{}", case.name);
                // A caller resourceVersion precondition is bumped past our own write.
                if case.name == "valid resourceVersion" {
                    let rv = store.deletes()[0]
                        .preconditions
                        .as_ref()
                        .and_then(|p| p.resource_version.clone());
                    assert_eq!(rv.as_deref(), Some("101"));
                }
            }
            Err(msg) => {
                assert_eq!(a.status.message.as_deref(), Some(msg), "{}", case.name);
                assert_eq!(store.state.delete_calls, 0, "{}", case.name);
                if case.vanish {
                    assert_eq!(a.code, 404);
                } else {
                    assert_eq!(a.code, 409);
                    assert_eq!(a.status.reason.as_deref(), Some("Conflict"));
                    let d = a.status.details.clone().unwrap_or_default();
                    assert_eq!(
                        (d.kind.as_deref(), d.name.as_deref()),
                        (Some("Pod"), Some("p1"))
                    );
                    assert!(store.pod_status_writes().is_empty());
                }
            }
        }
    }
}

#[test]
fn case_113_pdb_status_after_eviction() {
    for (allowed, want_allowed, want_reason) in
        [(1, 0, "InsufficientPods"), (3, 2, "SufficientPods")]
    {
        let budget = with_condition(pdb("foo", allowed, 0, 0), "True", "SufficientPods", "");
        let mut store = Store::new(
            vec![pod("foo-1", "Running", None), pod("foo-2", "Running", None)],
            vec![budget],
        );
        assert_success(&store.evict(&request("foo-1", Some(DeleteOptions::default()))));
        let st = store.pdb_status("foo");
        assert_eq!(st.disruptions_allowed, Some(want_allowed));
        let cond = st
            .conditions
            .as_ref()
            .and_then(|c| c.iter().find(|c| c.type_ == "DisruptionAllowed"))
            .cloned()
            .expect("condition");
        assert_eq!(cond.reason, want_reason);
        assert_eq!(
            cond.status,
            if want_allowed == 0 { "False" } else { "True" }
        );
        assert_eq!(
            st.disrupted_pods,
            Some(BTreeMap::from([("foo-1".to_owned(), Time(now()))]))
        );
        assert_eq!(store.pdb_writes(), 1);
    }
}

#[test]
fn case_114_dry_run_changes_nothing() {
    struct Case {
        name: &'static str,
        request_dry_run: bool,
        body: Option<DeleteOptions>,
        pdbs: Vec<PodDisruptionBudget>,
    }
    let cases = [
        Case {
            name: "just request-options",
            request_dry_run: true,
            body: Some(DeleteOptions::default()),
            pdbs: vec![],
        },
        Case {
            name: "just eviction-options",
            request_dry_run: false,
            body: dry_run_options(),
            pdbs: vec![],
        },
        Case {
            name: "both options",
            request_dry_run: true,
            body: dry_run_options(),
            pdbs: vec![],
        },
        Case {
            name: "with pdbs",
            request_dry_run: true,
            body: dry_run_options(),
            pdbs: vec![pdb("foo", 1, 0, 0)],
        },
    ];
    for case in cases {
        let mut store = Store::new(vec![pod("foo", "Running", Some(true))], case.pdbs);
        let before = store.state.pdbs.clone();
        let mut req = request("foo", case.body);
        if case.request_dry_run {
            req.dry_run = vec!["All".to_owned()];
        }
        assert_success(&store.evict(&req));
        assert!(!store.deleted("foo"), "{}", case.name);
        assert_eq!(store.pdb_writes(), 0, "{}", case.name);
        assert!(store.pod_status_writes().is_empty(), "{}", case.name);
        assert_eq!(store.state.pdbs, before, "{}", case.name);
        // The delete itself is issued as a dry run.
        let deletes = store.deletes();
        assert_eq!(deletes.len(), 1);
        assert_eq!(deletes[0].dry_run.as_deref(), Some(&["All".to_owned()][..]));
    }
}

#[test]
fn case_125_cause_mentions_failed_sync() {
    let budget = with_condition(pdb("foo", 0, 0, 0), "False", "SyncFailed", "hoge");
    let mut store = Store::new(vec![pod("t1", "Running", Some(true))], vec![budget]);
    let a = store.evict(&request("t1", grace(0)));
    assert_budget_429(
        &a,
        "The disruption budget foo does not allow evicting pods currently because it failed sync: hoge",
    );
    assert_no_retry_after(&a);
}

#[test]
fn case_126_cause_includes_condition_reason() {
    let budget = with_condition(pdb("foo", 0, 4, 3), "False", "bar-reason", "hoge");
    let mut store = Store::new(vec![pod("t1", "Running", Some(true))], vec![budget]);
    let a = store.evict(&request("t1", grace(0)));
    assert_budget_429(
        &a,
        "The disruption budget foo does not allow evicting pods currently (bar-reason): hoge",
    );
}

#[test]
fn case_127_ignore_store_read_error_is_invalid() {
    let mut store = Store::new(vec![pod("foo", "Running", Some(true))], vec![]);
    let options = Some(DeleteOptions {
        ignore_store_read_error_with_cluster_breaking_potential: Some(true),
        ..DeleteOptions::default()
    });
    let mut req = request("foo", options);
    // Checked before the dry-run merge: a dry-run mismatch does not mask it.
    req.dry_run = vec!["All".to_owned()];
    let a = store.evict(&req);
    assert_eq!(a.code, 422);
    assert_eq!(
        serde_json::to_value(&*a.status).expect("json"),
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Eviction.policy \"foo\" is invalid: deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: can not be set for pod eviction, try after removing the option",
            "reason": "Invalid",
            "details": {"name": "foo", "group": "policy", "kind": "Eviction", "causes": [{
                "reason": "FieldValueInvalid",
                "message": "Invalid value: true: can not be set for pod eviction, try after removing the option",
                "field": "deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential"
            }]},
            "code": 422
        })
    );
    assert!(store.state.actions.is_empty());
}

#[test]
fn case_130_two_matching_pdbs_answer_500() {
    let mut everything = pdb("all", 1, 0, 0);
    if let Some(spec) = everything.spec.as_mut() {
        spec.selector = Some(LabelSelector::default());
    }
    let mut store = Store::new(
        vec![pod("p", "Running", Some(true))],
        vec![pdb("foo", 1, 1, 0), everything],
    );
    let a = store.evict(&request("p", grace(0)));
    assert_eq!(a.code, 500);
    assert_eq!(
        serde_json::to_value(&*a.status).expect("json"),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
               "code": 500})
    );
    assert!(store.state.writes.is_empty());
    assert!(!store.deleted("p"));
}

#[test]
fn case_131_429_shapes() {
    // Never synced: observedGeneration 0 < generation 1.
    let mut never = pdb("jp2", 0, 0, 0);
    if let Some(st) = never.status.as_mut() {
        st.observed_generation = None;
    }
    let mut store = Store::new(vec![pod("w", "Running", Some(true))], vec![never]);
    let a = store.evict(&request("w", None));
    assert_still_processing(&a, "jp2");
    assert_eq!(
        serde_json::to_value(&*a.status).expect("json")["details"],
        json!({"causes": [{"reason": "DisruptionBudget", "message": "The disruption budget jp2 is still being processed by the server."}], "retryAfterSeconds": 10})
    );
    // Budget met exactly: no retry-after.
    let mut store = Store::new(
        vec![pod("w", "Running", Some(true))],
        vec![pdb("web", 0, 1, 1)],
    );
    let a = store.evict(&request("w", None));
    assert_budget_429(
        &a,
        "The disruption budget web needs 1 healthy pods and has 1 currently",
    );
    assert_no_retry_after(&a);
    assert_eq!(
        serde_json::to_value(&*a.status).expect("json")["details"],
        json!({"causes": [{"reason": "DisruptionBudget", "message": "The disruption budget web needs 1 healthy pods and has 1 currently"}]})
    );
}

#[test]
fn case_132_cause_variants_failed_sync_bare_and_custom_message() {
    let jp = with_condition(
        pdb("jp", 0, 0, 0),
        "False",
        "SyncFailed",
        "jobs.batch does not implement the scale subresource",
    );
    let mut store = Store::new(vec![pod("j", "Running", Some(true))], vec![jp]);
    assert_budget_429(
        &store.evict(&request("j", None)),
        "The disruption budget jp does not allow evicting pods currently because it failed sync: jobs.batch does not implement the scale subresource",
    );
    // (0, 1, 0, 0): healthy 1 > desired 0, empty condition message.
    let nk = with_condition(pdb("nk", 0, 1, 0), "False", "InsufficientPods", "");
    let mut store = Store::new(vec![pod("n", "Running", Some(true))], vec![nk]);
    assert_budget_429(
        &store.evict(&request("n", None)),
        "The disruption budget nk does not allow evicting pods currently",
    );
    let nk = with_condition(
        pdb("nk", 0, 1, 0),
        "False",
        "InsufficientPods",
        "custom message",
    );
    let mut store = Store::new(vec![pod("n", "Running", Some(true))], vec![nk]);
    assert_budget_429(
        &store.evict(&request("n", None)),
        "The disruption budget nk does not allow evicting pods currently (InsufficientPods): custom message",
    );
}

#[test]
fn case_133_forbidden_answers() {
    let mut big = with_condition(pdb("jp3", 0, 0, 0), "False", "SyncFailed", "x");
    if let Some(st) = big.status.as_mut() {
        st.disrupted_pods = Some((0..2001).map(|i| (format!("p{i}"), Time(now()))).collect());
    }
    let mut store = Store::new(vec![pod("j", "Running", Some(true))], vec![big]);
    let a = store.evict(&request("j", None));
    assert_eq!(a.code, 403);
    assert_eq!(
        serde_json::to_value(&*a.status).expect("json"),
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "poddisruptionbudget.policy \"jp3\" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            "reason": "Forbidden",
            "details": {"name": "jp3", "group": "policy", "kind": "poddisruptionbudget"},
            "code": 403
        })
    );
    // Exactly 2000 entries is still fine: the next check (allowed 0) answers.
    let mut full = pdb("jp3", 0, 0, 0);
    if let Some(st) = full.status.as_mut() {
        st.disrupted_pods = Some((0..2000).map(|i| (format!("p{i}"), Time(now()))).collect());
    }
    let mut store = Store::new(vec![pod("j", "Running", Some(true))], vec![full]);
    assert_eq!(store.evict(&request("j", None)).code, 429);
    // Negative allowed (unreachable through validation, still handled).
    let mut store = Store::new(
        vec![pod("j", "Running", Some(true))],
        vec![pdb("neg", -1, 0, 0)],
    );
    let a = store.evict(&request("j", None));
    assert_eq!(a.code, 403);
    assert_eq!(
        a.status.message.as_deref(),
        Some(
            "poddisruptionbudget.policy \"neg\" is forbidden: pdb disruptions allowed is negative"
        )
    );
}

#[test]
fn case_134_bypass_decrement_dry_run_and_versions() {
    // Pending, Failed, Succeeded, terminating: 201, condition before deletion.
    for (name, phase, deleting) in [
        ("webpend", "Pending", false),
        ("webfail", "Failed", false),
        ("websucc", "Succeeded", false),
        ("webterm", "Running", true),
    ] {
        let mut p = pod(name, phase, Some(true));
        p.metadata.deletion_timestamp = deleting.then(|| Time(now()));
        let mut store = Store::new(vec![p], vec![pdb("web", 0, 0, 1)]);
        assert_success(&store.evict(&request(name, None)));
        assert_condition_then_delete(&store);
        assert_eq!(store.pdb_writes(), 0);
    }
    // Caller precondition resourceVersion "1" on a Pending pod at another version.
    let mut p = pod("webpend2", "Pending", None);
    p.metadata.resource_version = Some("5043".to_owned());
    let mut store = Store::new(vec![p], vec![pdb("web", 0, 0, 1)]);
    let a = store.evict(&request("webpend2", precondition(None, Some("1"))));
    assert_eq!(a.code, 409);
    assert_eq!(
        a.status.message.as_deref(),
        Some(
            "Operation cannot be fulfilled on Pod \"webpend2\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (5043). The object might have been modified"
        )
    );
    assert_eq!(store.state.delete_calls, 0);
    // Unready pod, minAvailable 1, current 2 >= desired 1: deleted, PDB unchanged.
    let mut store = Store::new(
        vec![pod("u", "Running", Some(false))],
        vec![pdb("web", 1, 2, 1)],
    );
    assert_success(&store.evict(&request("u", None)));
    assert_eq!(store.pdb_writes(), 0);
    // minAvailable 0, only pod unready: 429 …, AlwaysAllow: 201.
    let mut store = Store::new(
        vec![pod("u", "Running", Some(false))],
        vec![pdb("zero", 0, 0, 0)],
    );
    assert_budget_429(
        &store.evict(&request("u", None)),
        "The disruption budget zero needs 0 healthy pods and has 0 currently",
    );
    let mut store = Store::new(
        vec![pod("u", "Running", Some(false))],
        vec![with_policy(pdb("zero", 0, 0, 0), Some("AlwaysAllow"))],
    );
    assert_success(&store.evict(&request("u", None)));
    // Allowed 1: 201, (0, …), disruptedPods {pod: now}, False/InsufficientPods.
    let budget = with_condition(pdb("web", 1, 2, 1), "True", "SufficientPods", "");
    let mut store = Store::new(vec![pod("r", "Running", Some(true))], vec![budget]);
    assert_success(&store.evict(&request("r", None)));
    let st = store.pdb_status("web");
    assert_eq!(st.disruptions_allowed, Some(0));
    assert_eq!((st.current_healthy, st.desired_healthy), (Some(2), Some(1)));
    assert_eq!(
        st.disrupted_pods,
        Some(BTreeMap::from([("r".to_owned(), Time(now()))]))
    );
    let cond = st.conditions.unwrap_or_default().remove(0);
    assert_eq!(
        (
            cond.status.as_str(),
            cond.reason.as_str(),
            cond.message.as_str()
        ),
        ("False", "InsufficientPods", "")
    );
    assert_eq!(cond.last_transition_time, Time(now()));
    assert_eq!(cond.observed_generation, Some(1));
    // Dry-run: 201, nothing changed.
    let mut store = Store::new(
        vec![pod("r", "Running", Some(true))],
        vec![pdb("web", 1, 2, 1)],
    );
    let mut req = request("r", None);
    req.dry_run = vec!["All".to_owned()];
    assert_success(&store.evict(&req));
    assert!(
        store
            .pod("r")
            .is_some_and(|p| p.metadata.deletion_timestamp.is_none())
    );
    assert_eq!(store.pdb_writes(), 0);
    assert!(store.pod_status_writes().is_empty());
    // Mismatched dry-run: plain 500.
    let mut req = request(
        "r",
        Some(DeleteOptions {
            dry_run: Some(vec!["All".to_owned(), "All".to_owned()]),
            ..DeleteOptions::default()
        }),
    );
    req.dry_run = vec!["All".to_owned()];
    let a = store.evict(&req);
    assert_eq!(a.code, 500);
    assert_eq!(
        serde_json::to_value(&*a.status).expect("json"),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "Non-matching dry-run options in request and content: [All] and [All All]", "code": 500})
    );
    // A policy/v1beta1 body is accepted.
    let body = json!({"apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "r", "namespace": NS}});
    let eviction = decode_body(body).expect("v1beta1 decodes");
    let req = EvictionRequest {
        namespace: NS.to_owned(),
        url_name: "r".to_owned(),
        eviction,
        dry_run: Vec::new(),
    };
    let mut store = Store::new(
        vec![pod("r", "Running", Some(true))],
        vec![pdb("web", 1, 2, 1)],
    );
    assert_success(&store.evict(&req));
    assert!(store.deleted("r"));
}

#[test]
fn case_142_precondition_conflicts_spend_the_budget_without_evicting() {
    // No PDB, wrong UID.
    let mut store = Store::new(vec![pod("p1", "Running", Some(true))], vec![]);
    let a = store.evict(&request("p1", precondition(Some("0000-wrong"), None)));
    assert_eq!(a.code, 409);
    assert_eq!(
        a.status.message.as_deref(),
        Some(
            "Operation cannot be fulfilled on Pod \"p1\": the UID in the precondition (0000-wrong) does not match the UID in record (uid-p1). The object might have been deleted and then recreated"
        )
    );
    assert!(!store.deleted("p1"));
    // Ready pod, allowed 1, caller resourceVersion "1" while the pod is at 7.
    let mut q1 = pod("q1", "Running", Some(true));
    q1.metadata.resource_version = Some("7".to_owned());
    let mut store = Store::new(
        vec![q1, pod("q2", "Running", Some(true))],
        vec![pdb("mq", 1, 2, 1)],
    );
    let a = store.evict(&request("q1", precondition(None, Some("1"))));
    assert_eq!(a.code, 409);
    assert_eq!(
        a.status.message.as_deref(),
        Some(
            "Operation cannot be fulfilled on Pod \"q1\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (7). The object might have been modified"
        )
    );
    assert!(!store.deleted("q1"));
    assert_eq!(store.state.delete_calls, 0);
    let st = store.pdb_status("mq");
    assert_eq!(st.disruptions_allowed, Some(0));
    assert_eq!(
        st.disrupted_pods,
        Some(BTreeMap::from([("q1".to_owned(), Time(now()))]))
    );
}

#[test]
fn pdb_write_conflicts_are_retried_with_a_fresh_pdb() {
    // Two concurrent writers spend one disruption each, then our write lands.
    let mut writers = 0;
    let mut store = Store::new(
        vec![pod("r", "Running", Some(true))],
        vec![pdb("web", 3, 3, 0)],
    )
    .with_hook(move |state, action| {
        if !matches!(action, Action::UpdatePdbStatus { .. }) || writers == 2 {
            return None;
        }
        writers += 1;
        let rv = state.next_rv();
        if let Some(p) = state.pdbs.get_mut("web") {
            p.metadata.resource_version = Some(rv);
            if let Some(st) = p.status.as_mut() {
                st.disruptions_allowed = st.disruptions_allowed.map(|a| a - 1);
            }
        }
        None
    });
    assert_success(&store.evict(&request("r", None)));
    assert_eq!(store.pdb_status("web").disruptions_allowed, Some(0));
    let gets = store
        .state
        .actions
        .iter()
        .filter(|a| matches!(a, Action::GetPdb { .. }))
        .count();
    assert_eq!(gets, 2);
    assert_eq!(store.pdb_writes(), 1);

    // A PDB write that always conflicts: 20 attempts, the last 409 is answered.
    let mut store = Store::new(
        vec![pod("r", "Running", Some(true))],
        vec![pdb("web", 3, 3, 0)],
    )
    .with_hook(|_, action| {
        matches!(action, Action::UpdatePdbStatus { .. })
            .then(|| Outcome::Conflict(modified("policy", "poddisruptionbudgets", "web")))
    });
    let a = store.evict(&request("r", None));
    assert_eq!(a.code, 409);
    assert_eq!(
        a.status.message.as_deref(),
        Some(
            "Operation cannot be fulfilled on poddisruptionbudgets.policy \"web\": the object has been modified; please apply your changes to the latest version and try again"
        )
    );
    let writes = store
        .state
        .actions
        .iter()
        .filter(|a| matches!(a, Action::UpdatePdbStatus { .. }))
        .count();
    assert_eq!(writes, 20);
    assert_eq!(store.state.delete_calls, 0);
}

#[test]
fn pod_status_write_conflict_rereads_the_latest_pod() {
    // Someone else updates the pod between our read and our condition write.
    let mut raced = false;
    let mut store = Store::new(vec![pod("r", "Running", Some(true))], vec![]).with_hook(
        move |state, action| {
            if raced || !matches!(action, Action::UpdatePodStatus { .. }) {
                return None;
            }
            raced = true;
            let rv = state.next_rv();
            if let Some(p) = state.pods.get_mut("r") {
                p.metadata.resource_version = Some(rv);
            }
            None
        },
    );
    assert_success(&store.evict(&request("r", None)));
    assert_eq!(store.pod_status_writes().len(), 1);
    assert!(store.deleted("r"));
}

#[test]
fn missing_pod_is_404() {
    let mut store = Store::new(vec![], vec![]);
    let a = store.evict(&request("ghost", None));
    assert_eq!(a.code, 404);
    assert_eq!(
        serde_json::to_value(&*a.status).expect("json"),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "pods \"ghost\" not found", "reason": "NotFound",
               "details": {"name": "ghost", "kind": "pods"}, "code": 404})
    );
}

#[test]
fn retry_delay_is_upstreams() {
    assert_eq!(RETRY_DELAY, SignedDuration::from_millis(500));
}

// --------------------------------------------------------------- properties

mod properties {
    use super::*;
    use proptest::prelude::*;
    use proptest::sample::select;

    proptest! {
        /// Whatever the pod and budget look like: the machine finishes with
        /// one of the spec's answers, a 201 means the pod was deleted (or
        /// would be, on dry-run), nothing else deletes it, the budget is spent
        /// at most once and only with a `disruptedPods` entry, dry-run writes
        /// nothing, and every real delete follows the DisruptionTarget write.
        #[test]
        fn eviction_invariants(
            phase in select(vec!["Pending", "Running", "Succeeded", "Failed"]),
            ready in any::<Option<bool>>(),
            deleting in any::<bool>(),
            allowed in 0..3_i32,
            current in 0..4_i32,
            desired in 0..4_i32,
            policy in select(POLICIES.to_vec()),
            budgets in 0..3_usize,
            unsynced in any::<bool>(),
            dry_run in any::<bool>(),
        ) {
            let mut p = pod("p", phase, ready);
            p.metadata.deletion_timestamp = deleting.then(|| Time(now()));
            let pdbs: Vec<PodDisruptionBudget> = (0..budgets)
                .map(|i| {
                    let mut b = with_policy(pdb(&format!("b{i}"), allowed, current, desired), policy);
                    if unsynced {
                        b.metadata.generation = Some(2);
                    }
                    b
                })
                .collect();
            let mut store = Store::new(vec![p], pdbs.clone());
            let mut req = request("p", None);
            if dry_run {
                req.dry_run = vec!["All".to_owned()];
            }
            let a = store.evict(&req);
            prop_assert!(matches!(a.code, 201 | 403 | 429 | 500), "{a:?}");
            if a.code == 201 && !dry_run {
                prop_assert!(store.deleted("p"));
            }
            if a.code != 201 || dry_run {
                prop_assert_eq!(store.deleted("p"), deleting);
            }
            if dry_run {
                prop_assert_eq!(store.pdb_writes(), 0);
                prop_assert!(store.pod_status_writes().is_empty());
            } else if store.state.delete_calls > 0 {
                assert_condition_then_delete(&store);
            }
            prop_assert!(store.pdb_writes() <= 1);
            for before in &pdbs {
                let name = before.metadata.name.clone().unwrap_or_default();
                let after = store.pdb_status(&name);
                let was = before.status.clone().unwrap_or_default();
                if after != was {
                    prop_assert_eq!(after.disruptions_allowed, was.disruptions_allowed.map(|n| n - 1));
                    prop_assert!(after.disrupted_pods.unwrap_or_default().contains_key("p"));
                }
            }
            if budgets > 1 && a.code == 500 {
                prop_assert!(store.state.writes.is_empty());
            }
        }
    }
}
