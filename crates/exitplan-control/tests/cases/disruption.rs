//! Section J (cases 115–124) and the PDB-status cases of section K (135,
//! the controller half of 142) of `job-failure-cases.md`, plus the stale
//! `DisruptionTarget` cleanup of spec §11. Each sync's write is applied to
//! the budget before the next sync, like upstream's fake updater.

use std::collections::BTreeMap;

use exitplan_control::disruption::{
    ControllerScale, EventTarget, EventType, PdbPlan, ScaleError, StaleCleanup, Workloads,
    fail_safe, stale_disruption_target, sync_pdb, without_scale_subresources,
};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec, StatefulSet, StatefulSetSpec,
};
use k8s_openapi::api::core::v1::{
    Pod, PodCondition, PodStatus, ReplicationController, ReplicationControllerSpec,
};
use k8s_openapi::api::policy::v1::{
    PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Condition, LabelSelector, LabelSelectorRequirement, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

const NS: &str = "default";

fn now() -> Timestamp {
    "2026-03-01T12:00:00Z".parse().expect("timestamp")
}

fn foo_bar() -> BTreeMap<String, String> {
    BTreeMap::from([("foo".to_owned(), "bar".to_owned())])
}

fn meta(name: &str, uid: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some(NS.to_owned()),
        uid: Some(uid.to_owned()),
        resource_version: Some("18".to_owned()),
        labels: Some(foo_bar()),
        ..ObjectMeta::default()
    }
}

/// A Ready pod labelled `foo=bar` (upstream's `newPod`).
fn pod(name: &str) -> Pod {
    Pod {
        metadata: meta(name, &format!("uid-{name}")),
        spec: None,
        status: Some(PodStatus {
            conditions: Some(vec![ready(true)]),
            ..PodStatus::default()
        }),
    }
}

fn ready(status: bool) -> PodCondition {
    PodCondition {
        type_: "Ready".to_owned(),
        status: if status { "True" } else { "False" }.to_owned(),
        ..PodCondition::default()
    }
}

fn unready(mut p: Pod) -> Pod {
    if let Some(st) = p.status.as_mut() {
        st.conditions = Some(Vec::new());
    }
    p
}

fn owned(mut p: Pod, api_version: &str, kind: &str, name: &str, uid: &str) -> Pod {
    p.metadata.owner_references = Some(vec![OwnerReference {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        name: name.to_owned(),
        uid: uid.to_owned(),
        controller: Some(true),
        block_owner_deletion: None,
    }]);
    p
}

fn budget(min: Option<IntOrString>, max: Option<IntOrString>) -> PodDisruptionBudget {
    PodDisruptionBudget {
        metadata: ObjectMeta {
            name: Some("foobar".to_owned()),
            namespace: Some(NS.to_owned()),
            uid: Some("pdb-uid".to_owned()),
            generation: Some(1),
            resource_version: Some("18".to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(PodDisruptionBudgetSpec {
            min_available: min,
            max_unavailable: max,
            selector: Some(LabelSelector {
                match_labels: Some(foo_bar()),
                match_expressions: None,
            }),
            unhealthy_pod_eviction_policy: None,
        }),
        status: None,
    }
}

fn min_available(v: IntOrString) -> PodDisruptionBudget {
    budget(Some(v), None)
}

fn max_unavailable(v: IntOrString) -> PodDisruptionBudget {
    budget(None, Some(v))
}

fn int(n: i32) -> IntOrString {
    IntOrString::Int(n)
}

fn pct(s: &str) -> IntOrString {
    IntOrString::String(s.to_owned())
}

fn replica_set(name: &str, uid: &str, replicas: i32) -> ReplicaSet {
    ReplicaSet {
        metadata: meta(name, uid),
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            ..ReplicaSetSpec::default()
        },
        status: None,
    }
}

/// Scale lookup over built-in workloads, Jobs without `/scale`.
fn lookup(
    w: Workloads<'_>,
) -> impl Fn(&OwnerReference) -> Result<Option<ControllerScale>, ScaleError> + '_ {
    move |o| w.lookup(o, without_scale_subresources)
}

fn no_controllers(_: &OwnerReference) -> Result<Option<ControllerScale>, ScaleError> {
    Ok(None)
}

/// Syncs and applies the write, as the store would.
fn sync(
    pdb: &mut PodDisruptionBudget,
    pods: &[Pod],
    scale: &impl Fn(&OwnerReference) -> Result<Option<ControllerScale>, ScaleError>,
) -> PdbPlan {
    let plan = sync_pdb(pdb, pods, scale, now());
    if let Some(w) = plan.write.clone() {
        *pdb = w;
    }
    plan
}

fn status(pdb: &PodDisruptionBudget) -> PodDisruptionBudgetStatus {
    pdb.status.clone().unwrap_or_default()
}

/// `(disruptionsAllowed, currentHealthy, desiredHealthy, expectedPods)`.
fn tuple(pdb: &PodDisruptionBudget) -> (i32, i32, i32, i32) {
    let s = status(pdb);
    (
        s.disruptions_allowed.unwrap_or(0),
        s.current_healthy.unwrap_or(0),
        s.desired_healthy.unwrap_or(0),
        s.expected_pods.unwrap_or(0),
    )
}

fn allowed_condition(pdb: &PodDisruptionBudget) -> Condition {
    status(pdb)
        .conditions
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.type_ == "DisruptionAllowed")
        .expect("DisruptionAllowed condition")
}

/// Upstream's `VerifyPdbStatus`: the tuple, `disruptedPods`, observedGeneration
/// = generation and the condition status following `disruptionsAllowed`.
fn verify(pdb: &PodDisruptionBudget, want: (i32, i32, i32, i32), disrupted: &[&str]) {
    assert_eq!(tuple(pdb), want);
    let got: Vec<String> = status(pdb)
        .disrupted_pods
        .unwrap_or_default()
        .into_keys()
        .collect();
    assert_eq!(got, disrupted);
    assert_eq!(status(pdb).observed_generation, pdb.metadata.generation);
    let cond = allowed_condition(pdb);
    if want.0 > 0 {
        assert_eq!(
            (cond.status.as_str(), cond.reason.as_str()),
            ("True", "SufficientPods")
        );
    } else {
        assert_eq!(
            (cond.status.as_str(), cond.reason.as_str()),
            ("False", "InsufficientPods")
        );
    }
    assert_eq!(cond.observed_generation, pdb.metadata.generation);
}

fn reasons(plan: &PdbPlan) -> Vec<&'static str> {
    plan.events.iter().map(|e| e.reason).collect()
}

// ------------------------------------------------------------------ cases

#[test]
fn case_115_empty_selector_matches_everything() {
    let mut pdb = min_available(int(3));
    if let Some(spec) = pdb.spec.as_mut() {
        spec.selector = Some(LabelSelector::default());
    }
    let plan = sync(&mut pdb, &[], &no_controllers);
    verify(&pdb, (0, 0, 3, 0), &[]);
    assert_eq!(reasons(&plan), ["NoPods"]);
    assert_eq!(plan.events[0].type_, EventType::Normal);
    assert_eq!(plan.events[0].message, "No matching pods found");
    let mut other = pod("yo-yo-yo");
    other.metadata.labels = None;
    sync(&mut pdb, &[other], &no_controllers);
    verify(&pdb, (0, 1, 3, 1), &[]);
}

#[test]
fn case_116_unavailable_counts() {
    let mut pdb = min_available(int(3));
    let mut pods: Vec<Pod> = Vec::new();
    sync(&mut pdb, &pods, &no_controllers);
    for i in 0..4 {
        verify(&pdb, (0, i, 3, i), &[]);
        pods.push(pod(&format!("yo-yo-yo {i}")));
        sync(&mut pdb, &pods, &no_controllers);
    }
    verify(&pdb, (1, 4, 3, 4), &[]);
    pods[0] = unready(pods[0].clone());
    sync(&mut pdb, &pods, &no_controllers);
    verify(&pdb, (0, 3, 3, 4), &[]);
}

#[test]
fn case_117_integer_max_unavailable_over_naked_pods() {
    let mut pdb = max_unavailable(int(1));
    sync(&mut pdb, &[], &no_controllers);
    assert_eq!(tuple(&pdb).0, 0);
    let plan = sync(&mut pdb, &[pod("naked")], &no_controllers);
    assert_eq!(tuple(&pdb), (0, 1, 0, 0));
    assert_eq!(reasons(&plan), ["UnmanagedPods"]);
}

#[test]
fn case_118_integer_max_unavailable_with_scaling() {
    let mut pdb = max_unavailable(int(2));
    let p = owned(pod("pod"), "apps/v1", "ReplicaSet", "foobar", "rs-uid");
    for (replicas, want) in [(7, (0, 1, 5, 7)), (5, (0, 1, 3, 5))] {
        let rss = [replica_set("foobar", "rs-uid", replicas)];
        let w = Workloads {
            replica_sets: &rss,
            ..Workloads::default()
        };
        sync(&mut pdb, std::slice::from_ref(&p), &lookup(w));
        verify(&pdb, want, &[]);
    }
}

#[test]
fn case_119_percentage_max_unavailable_with_scaling() {
    let mut pdb = max_unavailable(pct("30%"));
    let p = owned(pod("pod"), "apps/v1", "ReplicaSet", "foobar", "rs-uid");
    // ceil(2.1) = 3, ceil(0.9) = 1.
    for (replicas, want) in [(7, (0, 1, 4, 7)), (3, (0, 1, 2, 3))] {
        let rss = [replica_set("foobar", "rs-uid", replicas)];
        let w = Workloads {
            replica_sets: &rss,
            ..Workloads::default()
        };
        sync(&mut pdb, std::slice::from_ref(&p), &lookup(w));
        verify(&pdb, want, &[]);
    }
}

#[test]
fn case_120_replica_set_without_deployment() {
    let mut pdb = min_available(pct("20%"));
    let rss = [replica_set("foobar", "rs-uid", 10)];
    let w = Workloads {
        replica_sets: &rss,
        ..Workloads::default()
    };
    let p = owned(pod("pod"), "apps/v1", "ReplicaSet", "foobar", "rs-uid");
    sync(&mut pdb, &[p], &lookup(w));
    verify(&pdb, (0, 1, 2, 10), &[]);
}

#[test]
fn case_121_replication_controller_and_rogue_pod() {
    let mut pdb = min_available(pct("34%"));
    let rcs = [ReplicationController {
        metadata: meta("foobar", "rc-uid"),
        spec: Some(ReplicationControllerSpec {
            replicas: Some(3),
            ..ReplicationControllerSpec::default()
        }),
        status: None,
    }];
    let w = Workloads {
        replication_controllers: &rcs,
        ..Workloads::default()
    };
    let scale = lookup(w);
    let mut pods = Vec::new();
    sync(&mut pdb, &pods, &scale);
    verify(&pdb, (0, 0, 0, 0), &[]);
    for i in 0..3 {
        let mut p = owned(
            pod(&format!("foobar {i}")),
            "v1",
            "ReplicationController",
            "foobar",
            "rc-uid",
        );
        if let Some(l) = p.metadata.labels.as_mut() {
            l.insert("baz".to_owned(), "quux".to_owned());
        }
        pods.push(p);
        sync(&mut pdb, &pods, &scale);
        if i < 2 {
            verify(&pdb, (0, i + 1, 2, 3), &[]);
        } else {
            verify(&pdb, (1, 3, 2, 3), &[]);
        }
    }
    pods.push(pod("rogue"));
    let plan = sync(&mut pdb, &pods, &scale);
    assert_eq!(tuple(&pdb), (2, 4, 2, 3));
    assert_eq!(reasons(&plan), ["UnmanagedPods"]);
}

#[test]
fn case_122_update_disrupted_pods() {
    let mut pdb = min_available(int(1));
    pdb.status = Some(PodDisruptionBudgetStatus {
        disrupted_pods: Some(BTreeMap::from([
            ("p1".to_owned(), Time(now())),
            ("p2".to_owned(), Time(now() - SignedDuration::from_mins(5))),
            ("p3".to_owned(), Time(now())),
            ("notthere".to_owned(), Time(now())),
        ])),
        ..PodDisruptionBudgetStatus::default()
    });
    let mut p1 = pod("p1");
    p1.metadata.deletion_timestamp = Some(Time(now()));
    let plan = sync(&mut pdb, &[p1, pod("p2"), pod("p3")], &no_controllers);
    verify(&pdb, (0, 1, 1, 3), &["p3"]);
    assert_eq!(
        status(&pdb).disrupted_pods,
        Some(BTreeMap::from([("p3".to_owned(), Time(now()))]))
    );
    assert_eq!(reasons(&plan), ["NotDeleted"]);
    assert_eq!(plan.events[0].target, EventTarget::Pod("p2".to_owned()));
    assert_eq!(plan.recheck_after, Some(SignedDuration::from_mins(2)));
}

#[test]
fn case_123_invalid_selectors_fail_safe() {
    let cases = [
        (
            "illegal value key",
            LabelSelector {
                match_labels: Some(BTreeMap::from([(
                    "k8s.io/too/many/slashes".to_owned(),
                    "value".to_owned(),
                )])),
                match_expressions: None,
            },
            "key: Invalid value: \"k8s.io/too/many/slashes\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        ),
        (
            "illegal operator",
            LabelSelector {
                match_labels: None,
                match_expressions: Some(vec![LabelSelectorRequirement {
                    key: "foo".to_owned(),
                    operator: "illegal".to_owned(),
                    values: Some(vec!["bar".to_owned()]),
                }]),
            },
            "\"illegal\" is not a valid label selector operator",
        ),
    ];
    for (name, selector, message) in cases {
        let mut pdb = min_available(int(3));
        if let Some(spec) = pdb.spec.as_mut() {
            spec.selector = Some(selector);
        }
        let plan = sync(&mut pdb, &[pod("p")], &no_controllers);
        assert_eq!(tuple(&pdb), (0, 0, 0, 0), "{name}");
        assert_eq!(plan.sync_error.as_deref(), Some(message), "{name}");
        let cond = allowed_condition(&pdb);
        assert_eq!(
            (
                cond.status.as_str(),
                cond.reason.as_str(),
                cond.message.as_str()
            ),
            ("False", "SyncFailed", message)
        );
        // Never synced: observedGeneration stays unset.
        assert_eq!(status(&pdb).observed_generation, None);
        assert_eq!(cond.observed_generation, None);
        assert_eq!(reasons(&plan), ["NoPods"]);
        assert_eq!(plan.events[0].type_, EventType::Warning);
        assert_eq!(
            plan.events[0].message,
            format!("Failed to get pods: {message}")
        );
    }
}

#[test]
fn case_124_naked_pod_with_percentage() {
    let mut pdb = min_available(pct("28%"));
    sync(&mut pdb, &[], &no_controllers);
    assert_eq!(tuple(&pdb).0, 0);
    let plan = sync(&mut pdb, &[pod("naked")], &no_controllers);
    assert_eq!(tuple(&pdb).0, 0);
    assert_eq!(plan.sync_error, None);
    assert_eq!(reasons(&plan), ["UnmanagedPods"]);
    assert_eq!(
        plan.events[0].message,
        "Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{foo: bar,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value."
    );
}

#[test]
fn case_135_status_computations() {
    // minAvailable 2 over naked pods: 2 Ready + 1 unready, then all Ready.
    let mut pdb = min_available(int(2));
    let mut pods = vec![pod("a"), pod("b"), unready(pod("c"))];
    sync(&mut pdb, &pods, &no_controllers);
    verify(&pdb, (0, 2, 2, 3), &[]);
    pods[2] = pod("c");
    sync(&mut pdb, &pods, &no_controllers);
    verify(&pdb, (1, 3, 2, 3), &[]);
    // A fourth Ready pod that is then deleted stays expected, not healthy.
    let mut d = pod("d");
    d.metadata.deletion_timestamp = Some(Time(now()));
    pods.push(d);
    sync(&mut pdb, &pods, &no_controllers);
    verify(&pdb, (1, 3, 2, 4), &[]);

    // minAvailable 50% over naked pods.
    let mut pdb = min_available(pct("50%"));
    let plan = sync(&mut pdb, &[pod("a"), pod("b")], &no_controllers);
    verify(&pdb, (0, 2, 0, 0), &[]);
    assert_eq!(reasons(&plan), ["UnmanagedPods"]);

    // ReplicaSet 7, maxUnavailable 30%, 5 Ready; then scaled to 3.
    let mut pdb = max_unavailable(pct("30%"));
    let rs_pods: Vec<Pod> = (0..5)
        .map(|i| {
            owned(
                pod(&format!("r{i}")),
                "apps/v1",
                "ReplicaSet",
                "rs",
                "rs-uid",
            )
        })
        .collect();
    let rss = [replica_set("rs", "rs-uid", 7)];
    let w = Workloads {
        replica_sets: &rss,
        ..Workloads::default()
    };
    sync(&mut pdb, &rs_pods, &lookup(w));
    verify(&pdb, (1, 5, 4, 7), &[]);
    let rss = [replica_set("rs", "rs-uid", 3)];
    let w = Workloads {
        replica_sets: &rss,
        ..Workloads::default()
    };
    sync(&mut pdb, &rs_pods[..3], &lookup(w));
    verify(&pdb, (1, 3, 2, 3), &[]);

    // ReplicaSet 3, minAvailable 34% → desired 2.
    let mut pdb = min_available(pct("34%"));
    sync(&mut pdb, &rs_pods[..3], &lookup(w));
    verify(&pdb, (1, 3, 2, 3), &[]);

    // Deployment 4 through its ReplicaSet, maxUnavailable 1, 4 Ready.
    let mut rs = replica_set("web-1", "rs1-uid", 2);
    rs.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps/v1".to_owned(),
        kind: "Deployment".to_owned(),
        name: "web".to_owned(),
        uid: "dep-uid".to_owned(),
        controller: Some(true),
        block_owner_deletion: None,
    }]);
    let mut rs2 = rs.clone();
    rs2.metadata.name = Some("web-2".to_owned());
    rs2.metadata.uid = Some("rs2-uid".to_owned());
    let rss = [rs, rs2];
    let deps = [Deployment {
        metadata: meta("web", "dep-uid"),
        spec: DeploymentSpec {
            replicas: Some(4),
            ..DeploymentSpec::default()
        },
        status: None,
    }];
    let w = Workloads {
        replica_sets: &rss,
        deployments: &deps,
        ..Workloads::default()
    };
    // Pods of two ReplicaSets of one Deployment count the Deployment once.
    let dep_pods: Vec<Pod> = (0..4)
        .map(|i| {
            let (rs, uid) = if i < 2 {
                ("web-1", "rs1-uid")
            } else {
                ("web-2", "rs2-uid")
            };
            owned(pod(&format!("w{i}")), "apps/v1", "ReplicaSet", rs, uid)
        })
        .collect();
    let mut pdb = max_unavailable(int(1));
    sync(&mut pdb, &dep_pods, &lookup(w));
    verify(&pdb, (1, 4, 3, 4), &[]);

    // StatefulSet 3, minAvailable 50%, 2 Ready.
    let sss = [StatefulSet {
        metadata: meta("db", "ss-uid"),
        spec: StatefulSetSpec {
            replicas: Some(3),
            ..StatefulSetSpec::default()
        },
        status: None,
    }];
    let w = Workloads {
        stateful_sets: &sss,
        ..Workloads::default()
    };
    let ss_pods: Vec<Pod> = (0..2)
        .map(|i| {
            owned(
                pod(&format!("db-{i}")),
                "apps/v1",
                "StatefulSet",
                "db",
                "ss-uid",
            )
        })
        .collect();
    let mut pdb = min_available(pct("50%"));
    sync(&mut pdb, &ss_pods, &lookup(w));
    verify(&pdb, (0, 2, 2, 3), &[]);

    // Neither minAvailable nor maxUnavailable.
    let mut pdb = budget(None, None);
    sync(&mut pdb, &[pod("a")], &no_controllers);
    verify(&pdb, (0, 1, 0, 0), &[]);

    // Job pods: a percentage needs the Job's scale, which it does not have.
    let job_pods: Vec<Pod> = (0..2)
        .map(|i| owned(pod(&format!("j{i}")), "batch/v1", "Job", "jp", "job-uid"))
        .collect();
    let mut pdb = min_available(pct("50%"));
    let plan = sync(&mut pdb, &job_pods, &lookup(Workloads::default()));
    let msg = "jobs.batch does not implement the scale subresource";
    assert_eq!(plan.sync_error.as_deref(), Some(msg));
    assert_eq!(reasons(&plan), ["CalculateExpectedPodCountFailed"]);
    assert_eq!(
        plan.events[0].message,
        format!("Failed to calculate the number of expected pods: {msg}")
    );
    let cond = allowed_condition(&pdb);
    assert_eq!(
        (cond.reason.as_str(), cond.message.as_str()),
        ("SyncFailed", msg)
    );
    let mut pdb = min_available(int(1));
    sync(&mut pdb, &job_pods, &lookup(Workloads::default()));
    verify(&pdb, (1, 2, 1, 2), &[]);

    // disruptedPods {i1: now, i2: now − 5 min, ghost: now}.
    let mut pdb = min_available(int(1));
    pdb.status = Some(PodDisruptionBudgetStatus {
        disrupted_pods: Some(BTreeMap::from([
            ("i1".to_owned(), Time(now())),
            ("i2".to_owned(), Time(now() - SignedDuration::from_mins(5))),
            ("ghost".to_owned(), Time(now())),
        ])),
        ..PodDisruptionBudgetStatus::default()
    });
    let mut ns_pdb = pdb.clone();
    ns_pdb.metadata.namespace = Some("ev".to_owned());
    let in_ev = |mut p: Pod| {
        p.metadata.namespace = Some("ev".to_owned());
        p
    };
    let plan = sync(
        &mut ns_pdb,
        &[in_ev(pod("i1")), in_ev(pod("i2"))],
        &no_controllers,
    );
    verify(&ns_pdb, (0, 1, 1, 2), &["i1"]);
    assert_eq!(plan.events.len(), 1);
    assert_eq!(plan.events[0].target, EventTarget::Pod("i2".to_owned()));
    assert_eq!(plan.events[0].type_, EventType::Warning);
    assert_eq!(
        plan.events[0].message,
        "Pod was expected by PDB ev/ev to be deleted but it wasn't"
    );
}

#[test]
fn case_135_fail_safe_keeps_everything_but_allowed() {
    // Synced before, then Job pods appear under maxUnavailable.
    let mut pdb = max_unavailable(int(1));
    sync(&mut pdb, &[], &no_controllers);
    verify(&pdb, (0, 0, 0, 0), &[]);
    let big: BTreeMap<String, Time> = (0..2001).map(|i| (format!("x{i}"), Time(now()))).collect();
    if let Some(st) = pdb.status.as_mut() {
        st.disruptions_allowed = Some(3);
        st.current_healthy = Some(5);
        st.disrupted_pods = Some(big.clone());
    }
    let job = owned(pod("j"), "batch/v1", "Job", "jp", "job-uid");
    sync(&mut pdb, &[job], &lookup(Workloads::default()));
    let st = status(&pdb);
    assert_eq!(st.disruptions_allowed, Some(0));
    assert_eq!(st.current_healthy, Some(5));
    assert_eq!(st.observed_generation, Some(1));
    assert_eq!(st.disrupted_pods, Some(big));
    let cond = allowed_condition(&pdb);
    assert_eq!(cond.observed_generation, Some(1));
    assert_eq!(cond.last_transition_time, Time(now()));
    // A failed status write falls back to the same fail-safe.
    let failed = fail_safe(&pdb, "etcd unavailable", now());
    assert_eq!(allowed_condition(&failed).message, "etcd unavailable");
}

#[test]
fn case_142_disrupted_entry_keeps_a_ready_pod_unhealthy() {
    let mut pdb = min_available(int(1));
    sync(&mut pdb, &[pod("q1"), pod("q2")], &no_controllers);
    verify(&pdb, (1, 2, 1, 2), &[]);
    // The eviction spent the budget and recorded q1, whose delete then failed.
    if let Some(st) = pdb.status.as_mut() {
        st.disruptions_allowed = Some(0);
        st.disrupted_pods = Some(BTreeMap::from([("q1".to_owned(), Time(now()))]));
    }
    let plan = sync(&mut pdb, &[pod("q1"), pod("q2")], &no_controllers);
    verify(&pdb, (0, 1, 1, 2), &["q1"]);
    assert_eq!(plan.recheck_after, Some(SignedDuration::from_mins(2)));
    // Two minutes later the entry still holds (expiry is strict) …
    let at_expiry = now() + SignedDuration::from_mins(2);
    let plan = sync_pdb(&pdb, &[pod("q1"), pod("q2")], &no_controllers, at_expiry);
    assert_eq!(plan.status.current_healthy, Some(2));
    assert_eq!(plan.status.disrupted_pods.map(|m| m.len()), Some(1));
    // … and one second after, it is dropped with a NotDeleted event.
    let after = at_expiry + SignedDuration::from_secs(1);
    let plan = sync_pdb(&pdb, &[pod("q1"), pod("q2")], &no_controllers, after);
    assert_eq!(plan.status.disrupted_pods, None);
    assert_eq!(plan.status.disruptions_allowed, Some(1));
    assert_eq!(reasons(&plan), ["NotDeleted"]);
}

#[test]
fn writes_only_when_something_changed() {
    let mut pdb = min_available(int(1));
    let pods = [pod("a"), pod("b")];
    assert!(sync(&mut pdb, &pods, &no_controllers).write.is_some());
    assert!(sync(&mut pdb, &pods, &no_controllers).write.is_none());
    // A message written by someone else is not compared: it survives.
    if let Some(c) = pdb
        .status
        .as_mut()
        .and_then(|s| s.conditions.as_mut())
        .and_then(|c| c.first_mut())
    {
        c.message = "custom message".to_owned();
    }
    assert!(sync(&mut pdb, &pods, &no_controllers).write.is_none());
    assert_eq!(allowed_condition(&pdb).message, "custom message");
    // A new generation is written, and then the message is reset.
    pdb.metadata.generation = Some(2);
    let plan = sync(&mut pdb, &pods, &no_controllers);
    assert!(plan.write.is_some());
    assert_eq!(status(&pdb).observed_generation, Some(2));
    assert_eq!(allowed_condition(&pdb).message, "");
}

#[test]
fn unresolved_controller_fails_the_sync() {
    let mut pdb = max_unavailable(int(1));
    let p = owned(pod("orphan"), "apps/v1", "ReplicaSet", "gone", "gone-uid");
    let plan = sync(&mut pdb, &[p], &lookup(Workloads::default()));
    assert_eq!(
        plan.sync_error.as_deref(),
        Some("found no controllers for pod \"orphan\"")
    );
    assert_eq!(reasons(&plan), ["CalculateExpectedPodCountFailed"]);
}

// ------------------------------------------------ §11 stale DisruptionTarget

fn disrupted_pod(phase: &str, reason: &str, set_at: Timestamp) -> Pod {
    let mut p = pod("victim");
    if let Some(st) = p.status.as_mut() {
        st.phase = Some(phase.to_owned());
        st.conditions = Some(vec![
            ready(true),
            PodCondition {
                type_: "DisruptionTarget".to_owned(),
                status: "True".to_owned(),
                reason: Some(reason.to_owned()),
                message: Some("Eviction API: evicting".to_owned()),
                last_transition_time: Some(Time(set_at)),
                ..PodCondition::default()
            },
        ]);
    }
    p
}

#[test]
fn stale_disruption_target_flips_after_two_minutes() {
    let fresh = disrupted_pod(
        "Running",
        "EvictionByEvictionAPI",
        now() - SignedDuration::from_secs(30),
    );
    assert_eq!(
        stale_disruption_target(&fresh, now()),
        Some(StaleCleanup::RequeueAfter(SignedDuration::from_secs(90)))
    );
    let old = disrupted_pod(
        "Running",
        "EvictionByEvictionAPI",
        now() - SignedDuration::from_mins(2),
    );
    let Some(StaleCleanup::UpdateStatus(updated)) = stale_disruption_target(&old, now()) else {
        panic!("expected a status update");
    };
    let conds = updated
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default();
    assert_eq!(conds.len(), 2);
    assert_eq!(conds[0], ready(true));
    assert_eq!(
        conds[1],
        PodCondition {
            type_: "DisruptionTarget".to_owned(),
            status: "False".to_owned(),
            last_transition_time: Some(Time(now())),
            ..PodCondition::default()
        }
    );
}

#[test]
fn stale_disruption_target_leaves_other_pods_alone() {
    let long_ago = now() - SignedDuration::from_mins(10);
    let kubelet = disrupted_pod("Running", "TerminationByKubelet", long_ago);
    assert_eq!(stale_disruption_target(&kubelet, now()), None);
    for phase in ["Succeeded", "Failed"] {
        let terminal = disrupted_pod(phase, "EvictionByEvictionAPI", long_ago);
        assert_eq!(stale_disruption_target(&terminal, now()), None);
    }
    let mut deleting = disrupted_pod("Running", "EvictionByEvictionAPI", long_ago);
    deleting.metadata.deletion_timestamp = Some(Time(now()));
    assert_eq!(stale_disruption_target(&deleting, now()), None);
    assert_eq!(stale_disruption_target(&pod("plain"), now()), None);
    // Already False: nothing to do.
    let mut flipped = disrupted_pod("Running", "EvictionByEvictionAPI", long_ago);
    if let Some(c) = flipped
        .status
        .as_mut()
        .and_then(|s| s.conditions.as_mut())
        .and_then(|c| c.get_mut(1))
    {
        c.status = "False".to_owned();
    }
    assert_eq!(stale_disruption_target(&flipped, now()), None);
    // Pending pods are not terminal: they are cleaned up too.
    let pending = disrupted_pod("Pending", "PreemptionByScheduler", long_ago);
    assert!(matches!(
        stale_disruption_target(&pending, now()),
        Some(StaleCleanup::UpdateStatus(_))
    ));
}

// --------------------------------------------------------------- properties

mod properties {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Rule {
        MinInt(i32),
        MinPct(i32),
        MaxInt(i32),
        MaxPct(i32),
        None,
    }

    fn rule() -> impl Strategy<Value = Rule> {
        prop_oneof![
            (0..6_i32).prop_map(Rule::MinInt),
            (0..=100_i32).prop_map(Rule::MinPct),
            (0..6_i32).prop_map(Rule::MaxInt),
            (0..=100_i32).prop_map(Rule::MaxPct),
            Just(Rule::None),
        ]
    }

    proptest! {
        /// Every computed status is valid (no negative counts), allowed is
        /// `max(0, current − desired)` and 0 without expected pods, the
        /// condition follows it, healthy pods are Ready non-deleting pods, and
        /// a second sync with the same inputs writes nothing.
        #[test]
        fn status_invariants_and_idempotence(
            rule in rule(),
            replicas in 0..8_i32,
            pods in proptest::collection::vec((any::<bool>(), any::<bool>(), any::<bool>(), 0..4_u8), 0..7),
            minutes_ago in 0..5_i64,
        ) {
            let mut pdb = match rule {
                Rule::MinInt(n) => min_available(int(n)),
                Rule::MinPct(n) => min_available(pct(&format!("{n}%"))),
                Rule::MaxInt(n) => max_unavailable(int(n)),
                Rule::MaxPct(n) => max_unavailable(pct(&format!("{n}%"))),
                Rule::None => budget(None, None),
            };
            let mut disrupted = BTreeMap::new();
            let pods: Vec<Pod> = pods
                .iter()
                .enumerate()
                .map(|(i, (is_ready, is_deleting, managed, entry))| {
                    let name = format!("p{i}");
                    let mut p = if *is_ready { pod(&name) } else { unready(pod(&name)) };
                    if *is_deleting {
                        p.metadata.deletion_timestamp = Some(Time(now()));
                    }
                    if *entry == 0 {
                        disrupted.insert(name.clone(), Time(now() - SignedDuration::from_mins(minutes_ago)));
                    }
                    if *managed {
                        p = owned(p, "apps/v1", "ReplicaSet", "rs", "rs-uid");
                    }
                    p
                })
                .collect();
            pdb.status = Some(PodDisruptionBudgetStatus {
                disrupted_pods: Some(disrupted),
                ..PodDisruptionBudgetStatus::default()
            });
            let rss = [replica_set("rs", "rs-uid", replicas)];
            let w = Workloads { replica_sets: &rss, ..Workloads::default() };
            let scale = lookup(w);
            let plan = sync(&mut pdb, &pods, &scale);
            prop_assert!(plan.write.is_some());
            let (allowed, current, desired, expected) = tuple(&pdb);
            prop_assert!(allowed >= 0 && current >= 0 && desired >= 0 && expected >= 0);
            let want = if expected <= 0 { 0 } else { (current - desired).max(0) };
            prop_assert_eq!(allowed, want);
            let ready_alive = pods
                .iter()
                .filter(|p| p.metadata.deletion_timestamp.is_none())
                .filter(|p| p.status.as_ref().and_then(|s| s.conditions.as_ref()).is_some_and(|c| !c.is_empty()))
                .count();
            prop_assert!(usize::try_from(current).unwrap_or(usize::MAX) <= ready_alive);
            let cond = allowed_condition(&pdb);
            prop_assert_eq!(cond.status == "True", allowed > 0);
            // Idempotent: nothing left to write.
            let again = sync(&mut pdb, &pods, &scale);
            prop_assert!(again.write.is_none(), "{:?}", again.write);
        }
    }
}
