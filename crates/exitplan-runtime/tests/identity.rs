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
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

use exitplan_apiserver::rest::request_info::attributes;
use exitplan_apiserver::server::Server;
use exitplan_authz::rbac::escalation::covers;
use exitplan_authz::rbac::{Policy, aggregation, bootstrap};
use exitplan_authz::{Attributes, UserInfo};
use exitplan_runtime::identity::provision::{Tokens, ensure};
use exitplan_runtime::identity::{ALL as IDENTITIES, Identity, NAMESPACE};
use exitplan_runtime::runtime::{ClientFor, Component};
use support::{Cluster, eventually};

const LIMIT: Duration = Duration::from_secs(40 * 60);

/// Every request of the components: who sent it, what it asked, and the
/// HTTP status it got.
type Log = Arc<Mutex<Vec<(Identity, Attributes, u16)>>>;

/// Clients over the server's router that log each request under the
/// identity that sends it; with `tokens`, each sends its identity's bearer
/// token, as `exitplan up`'s.
fn logging_clients(server: &Server, log: &Log, tokens: Option<Tokens>) -> ClientFor {
    let server = server.clone();
    let log = log.clone();
    Arc::new(move |id: Identity| {
        let (log, tokens) = (log.clone(), tokens.clone());
        let service = tower::ServiceBuilder::new()
            .map_request(move |mut req: axum::http::Request<kube::client::Body>| {
                let bearer = tokens.as_ref().and_then(|t| t.bearer(id));
                if let Some(v) = bearer.and_then(|b| axum::http::HeaderValue::from_str(&b).ok()) {
                    req.headers_mut()
                        .insert(axum::http::header::AUTHORIZATION, v);
                }
                let attrs = attributes(req.method(), req.uri().path(), req.uri().query());
                req.extensions_mut().insert(attrs);
                req
            })
            .service(tower::service_fn({
                let router = server.router();
                move |req: axum::http::Request<kube::client::Body>| {
                    let (router, log) = (router.clone(), log.clone());
                    async move {
                        let attrs = req.extensions().get::<Attributes>().cloned();
                        let response = tower::ServiceExt::oneshot(router, req).await?;
                        if let (Some(attrs), Ok(mut l)) = (attrs, log.lock()) {
                            l.push((id, attrs, response.status().as_u16()));
                        }
                        Ok::<_, std::convert::Infallible>(response)
                    }
                }
            }));
        kube::Client::new(service, "default")
    })
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

const COMPONENTS: [Component; 6] = [
    Component::EvictionRequest,
    Component::ImperativeEvictor,
    Component::Disruption,
    Component::GarbageCollector,
    Component::Scheduler,
    Component::Job,
];

/// The drain, the Job and its collection; returns the requests the
/// components sent.
async fn scenario(c: &Cluster, log: &Log) -> Vec<(Identity, Attributes, u16)> {
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
    for id in IDENTITIES {
        assert!(
            log.iter().any(|(who, ..)| *who == id),
            "{id:?} sent nothing: not on its own client"
        );
    }
    log
}

/// Each request, as the server's RBAC authorizer would decide it against
/// the identities' own roles: none refused.
#[tokio::test(start_paused = true)]
async fn every_request_within_its_role() {
    let log: Log = Arc::default();
    let c = Cluster::start_as(&COMPONENTS, &["node-1", "node-2"], |server, _| {
        let clients = logging_clients(&server, &log, None);
        async move { clients }
    })
    .await;
    let sent = scenario(&c, &log).await;
    let policy = policy();
    let denied: Vec<String> = sent
        .iter()
        .filter(|(id, a, _)| {
            let attrs = Attributes {
                user: UserInfo::service_account(NAMESPACE, id.service_account(), "uid"),
                ..a.clone()
            };
            !policy.authorize(&attrs).allowed()
        })
        .map(|(id, a, _)| format!("{} may not {}", id.username(), describe(a)))
        .collect();
    assert_eq!(denied, Vec::<String>::new());
}

/// The same run as `exitplan up` makes it: the identities provisioned on the
/// server (ServiceAccounts, roles, bindings), each component sending its own
/// ServiceAccount token, renewed before it expires (the run starts three
/// hours in); the server refuses nothing (no 401, no 403).
#[tokio::test(start_paused = true)]
async fn the_server_refuses_nothing() {
    let log: Log = Arc::default();
    let c = Cluster::start_as(&COMPONENTS, &["node-1", "node-2"], |server, admin| {
        let log = log.clone();
        async move {
            ensure(&admin, &IDENTITIES).await.expect("identities");
            let tokens = Tokens::request(&admin, &IDENTITIES).await.expect("tokens");
            tokio::spawn(tokens.clone().refresh(admin));
            logging_clients(&server, &log, Some(tokens))
        }
    })
    .await;
    // Past the first tokens' hour: the renewed ones are sent.
    tokio::time::sleep(Duration::from_secs(3 * 3600)).await;
    let sent = scenario(&c, &log).await;
    let refused: Vec<String> = sent
        .iter()
        .filter(|(.., code)| matches!(code, 401 | 403))
        .map(|(id, a, code)| format!("{code}: {} {}", id.username(), describe(a)))
        .collect();
    assert_eq!(refused, Vec::<String>::new());
}

/// Provisioning twice (a restart) changes nothing and fails nothing; the
/// stored roles grant at least each identity's rules, bound to its account.
#[tokio::test(start_paused = true)]
async fn provisioning_is_idempotent() {
    let c = Cluster::start(&[], &[]).await;
    ensure(&c.client, &IDENTITIES).await.expect("first");
    let roles: Api<ClusterRole> = Api::all(c.client.clone());
    let before = roles
        .get(&Identity::NodeSimulator.role_name())
        .await
        .expect("role");
    ensure(&c.client, &IDENTITIES).await.expect("again");
    let after = roles
        .get(&Identity::NodeSimulator.role_name())
        .await
        .expect("role");
    assert_eq!(
        before.metadata.resource_version,
        after.metadata.resource_version
    );
    let bindings: Api<ClusterRoleBinding> = Api::all(c.client.clone());
    for id in IDENTITIES {
        let role = roles.get(&id.role_name()).await.expect("role");
        let (covered, missing) = covers(role.rules.as_deref().unwrap_or_default(), &id.rules());
        assert!(covered, "{id:?} lacks {missing:?}");
        let binding = bindings.get(&id.role_name()).await.expect("binding");
        assert_eq!(binding.role_ref.name, id.role_name());
        let subjects = binding.subjects.unwrap_or_default();
        assert!(
            subjects.iter().any(|s| s.kind == "ServiceAccount"
                && s.name == id.service_account()
                && s.namespace.as_deref() == Some(NAMESPACE)),
            "{id:?}: {subjects:?}"
        );
    }
}

/// The control of `the_server_refuses_nothing`: a component's token is
/// refused what its role lacks, with kube-apiserver's message.
#[tokio::test(start_paused = true)]
async fn the_server_refuses_what_a_role_lacks() {
    let log: Log = Arc::default();
    let c = Cluster::start(&[], &[]).await;
    ensure(&c.client, &IDENTITIES).await.expect("identities");
    let tokens = Tokens::request(&c.client, &IDENTITIES)
        .await
        .expect("tokens");
    let evictor = logging_clients(&c.server, &log, Some(tokens))(Identity::Component(
        Component::ImperativeEvictor,
    ));
    let err = Api::<Pod>::namespaced(evictor, "default")
        .list(&ListParams::default())
        .await
        .expect_err("refused");
    let kube::Error::Api(status) = err else {
        panic!("{err:?}");
    };
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message,
        r#"pods is forbidden: User "system:serviceaccount:kube-system:imperative-evictor" cannot list resource "pods" in API group "" in the namespace "default""#
    );
}
