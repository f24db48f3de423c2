//! Every component under its own identity (`exitplan_runtime::identity`),
//! through a cooperative eviction (a drain: EvictionRequests, Evictions, the
//! imperative evictor's `pods/eviction`) and a Job whose pod failure policy
//! ignores the disruption, then the Job's deletion (the garbage collector):
//! every request each component sends is authorized as the server's RBAC
//! authorizer does (`exitplan_authz::rbac::Policy` over the request's
//! attributes, `exitplan_apiserver::rest::request_info`) against the
//! sender's own role, and none may be refused.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::lifecycle::v1alpha1::EvictionRequest;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

use exitplan_apiserver::rest::request_info::attributes;
use exitplan_apiserver::server::Server;
use exitplan_authz::rbac::{Policy, aggregation, bootstrap};
use exitplan_authz::{Attributes, UserInfo};
use exitplan_runtime::identity::{ALL as IDENTITIES, Identity, NAMESPACE};
use exitplan_runtime::runtime::{ClientFor, Component};
use support::{Cluster, eventually};

const LIMIT: Duration = Duration::from_secs(40 * 60);

/// Every request of the components: who sent it and what it asked.
type Log = Arc<Mutex<Vec<(Identity, Attributes)>>>;

/// Clients over the server's router that log each request under the
/// identity that sends it.
fn logging_clients(log: Log) -> impl FnOnce(&Server) -> ClientFor {
    move |server: &Server| {
        let server = server.clone();
        Arc::new(move |id: Identity| {
            let log = log.clone();
            let service = tower::ServiceExt::map_request(
                server.router(),
                move |req: axum::http::Request<kube::client::Body>| {
                    let attrs = attributes(req.method(), req.uri().path(), req.uri().query());
                    if let Ok(mut l) = log.lock() {
                        l.push((id, attrs));
                    }
                    req
                },
            );
            kube::Client::new(service, "default")
        })
    }
}

/// The RBAC policy of a server holding the default roles (discovery for
/// every authenticated user) and the identities' own roles and bindings —
/// ours alone, not upstream's broader controller roles the server also
/// bootstraps under three of the names, so the check is least privilege.
fn policy() -> Policy {
    let mut roles = bootstrap::cluster_roles();
    for (name, rules) in aggregation::aggregate(&roles) {
        if let Some(r) = roles
            .iter_mut()
            .find(|r| r.metadata.name.as_deref() == Some(name.as_str()))
        {
            r.rules = Some(rules);
        }
    }
    let mut bindings = bootstrap::cluster_role_bindings();
    for id in IDENTITIES {
        let o = id.objects();
        roles.push(o.cluster_role);
        bindings.push(o.cluster_role_binding);
    }
    Policy::new(vec![], vec![], roles, bindings)
}

fn describe(a: &Attributes) -> String {
    if a.resource_request {
        format!(
            "{} {}/{}{} ns={:?} name={:?}",
            a.verb,
            a.api_group,
            a.resource,
            if a.subresource.is_empty() {
                String::new()
            } else {
                format!("/{}", a.subresource)
            },
            a.namespace,
            a.name
        )
    } else {
        format!("{} {}", a.verb, a.path)
    }
}

#[tokio::test(start_paused = true)]
async fn every_component_under_its_own_role() {
    let log: Log = Arc::default();
    let components = [
        Component::EvictionRequest,
        Component::ImperativeEvictor,
        Component::Disruption,
        Component::GarbageCollector,
        Component::Scheduler,
        Component::Job,
    ];
    let c = Cluster::start_as(
        &components,
        &["node-1", "node-2"],
        logging_clients(log.clone()),
    )
    .await;
    eventually("both nodes Ready", LIMIT, || async {
        let nodes = c
            .cluster_api::<Node>()
            .list(&ListParams::default())
            .await
            .ok()?;
        (nodes.items.len() == 2).then_some(())
    })
    .await;

    // A Job that ignores disruptions, two pods per node, under a budget.
    let _: PodDisruptionBudget = c
        .create(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "ign", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"job-name": "ign"}}}
        }))
        .await;
    c.create::<Job>(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "ign", "namespace": "default"},
        "spec": {
            "completions": 4, "parallelism": 4, "backoffLimit": 0,
            "podFailurePolicy": {"rules": [
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
            "template": {
                "metadata": {"annotations": {"sim.exitplan.io/run": "10m"}},
                "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 30,
                         "containers": [{"name": "main", "image": "busybox"}]}}}
    }))
    .await;
    let on_node_1 = eventually("four pods running", LIMIT, || async {
        let pods = c
            .api::<Pod>()
            .list(&ListParams::default())
            .await
            .ok()?
            .items;
        let running = pods
            .iter()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
            .count();
        (running == 4).then(|| {
            pods.iter()
                .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some("node-1"))
                .filter_map(|p| Some((p.metadata.name.clone()?, p.metadata.uid.clone()?)))
                .collect::<Vec<_>>()
        })
    })
    .await;
    assert!(!on_node_1.is_empty(), "pods on node-1");

    // Drain node-1 cooperatively: cordon, one EvictionRequest per pod.
    c.cluster_api::<Node>()
        .patch(
            "node-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"unschedulable": true}})),
        )
        .await
        .expect("cordon");
    for (name, uid) in &on_node_1 {
        let _: EvictionRequest = c
            .create(json!({
                "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "EvictionRequest",
                "metadata": {"name": format!("drain-{name}"), "namespace": "default"},
                "spec": {"target": {"pod": {"name": name, "uid": uid}},
                         "requester": "exitplan.io/drain", "intent": "Eviction"}
            }))
            .await;
    }
    eventually("drained pods evicted", LIMIT, || async {
        for (name, _) in &on_node_1 {
            if c.api::<Pod>().get_opt(name).await.ok()?.is_some() {
                return None;
            }
            let er = c
                .api::<EvictionRequest>()
                .get(&format!("drain-{name}"))
                .await
                .ok()?;
            let evicted = er
                .status
                .iter()
                .flat_map(|s| s.conditions.iter().flatten())
                .any(|c| c.type_ == "TargetEvicted" && c.status == "True");
            if !evicted {
                return None;
            }
        }
        Some(())
    })
    .await;
    let done = eventually("Job complete", LIMIT, || async {
        let job = c.api::<Job>().get("ign").await.ok()?;
        let complete = job
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c.type_ == "Complete" && c.status == "True")
            });
        complete.then_some(job)
    })
    .await;
    let status = done.status.unwrap_or_default();
    assert_eq!(
        (status.failed, status.succeeded),
        (None, Some(4)),
        "disruptions ignored"
    );

    // The garbage collector removes the Job's pods once it is deleted.
    c.api::<Job>()
        .delete("ign", &DeleteParams::background())
        .await
        .expect("delete job");
    eventually("the Job's pods collected", LIMIT, || async {
        let pods = c
            .api::<Pod>()
            .list(&ListParams::default())
            .await
            .ok()?
            .items;
        pods.is_empty().then_some(())
    })
    .await;

    let log = log.lock().expect("log").clone();
    let policy = policy();
    let denied: Vec<String> = log
        .iter()
        .filter(|(id, a)| {
            let attrs = Attributes {
                user: UserInfo::service_account(NAMESPACE, id.service_account(), "uid"),
                ..a.clone()
            };
            !policy.authorize(&attrs).allowed()
        })
        .map(|(id, a)| format!("{} may not {}", id.username(), describe(a)))
        .collect();
    assert_eq!(denied, Vec::<String>::new());
    for id in IDENTITIES {
        assert!(
            log.iter().any(|(who, _)| *who == id),
            "{id:?} sent nothing: not on its own client"
        );
    }
}
