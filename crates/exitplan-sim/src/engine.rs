//! Running a scenario: the embedded API server, the components and the
//! simulated nodes in one process under tokio's paused clock, driven by the
//! scenario's steps, recorded by the [`Recorder`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::lifecycle::v1alpha1::EvictionRequest;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use exitplan_clock::{SharedClock, TokioClock};
use exitplan_runtime::context::Context;
use exitplan_runtime::runtime::{Component, Runtime, RuntimeConfig};

use crate::kinds::KindInfo;
use crate::report::Report;
use crate::responder::{ResponderFactory, ResponderSpec};
use crate::scenario::{Action, DRAIN_REQUESTER, ObjectRef, PatchType, Scenario, Step};
use crate::timeline::{Recorder, format_offset};

/// Without `until`, the run ends once every step ran and nothing changed for
/// this long (node heartbeats do not count). Longer than the controller's
/// 20-minute heartbeat deadline, so a silent responder is always seen
/// interrupted.
pub const QUIET: Duration = Duration::from_secs(30 * 60);
/// Without `until`, the run ends at the latest this long after the last step.
pub const LIMIT: Duration = Duration::from_secs(24 * 3600);
/// How long (real time) a run waits for its simulated nodes to register.
const NODE_WAIT: Duration = Duration::from_secs(30);
/// The field manager of the scenario's own writes (`objects`, `apply`, `patch`).
pub const FIELD_MANAGER: &str = "exitplan-simulate";

/// A simulation that could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The in-memory store.
    #[error("store: {0}")]
    Store(String),
    /// The embedded API server.
    #[error("api server: {0}")]
    Server(String),
    /// The tokio runtime.
    #[error("runtime: {0}")]
    Runtime(#[from] std::io::Error),
}

/// Every component a simulation runs.
pub fn components() -> BTreeSet<Component> {
    [
        Component::EvictionRequest,
        Component::ImperativeEvictor,
        Component::Disruption,
        Component::GarbageCollector,
        Component::Scheduler,
        Component::Job,
    ]
    .into_iter()
    .collect()
}

/// Runs `scenario` on a fresh current-thread tokio runtime with paused time
/// (real time: milliseconds to seconds, whatever the virtual duration).
pub fn run_blocking(
    scenario: &Scenario,
    responders: Arc<dyn ResponderFactory>,
) -> Result<Report, SimError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()?
        .block_on(run(scenario, responders))
}

/// Runs `scenario` on the current tokio runtime, whose time must be paused
/// (`#[tokio::test(start_paused = true)]`, or [`run_blocking`]).
pub async fn run(
    scenario: &Scenario,
    responders: Arc<dyn ResponderFactory>,
) -> Result<Report, SimError> {
    let origin = tokio::time::Instant::now();
    let clock: SharedClock = Arc::new(TokioClock::starting_at(scenario.start));
    let store = Store::in_memory().map_err(|e| SimError::Store(e.to_string()))?;
    let server = Server::builder()
        .store(store)
        .clock(clock.clone())
        .build()
        .await
        .map_err(|e| SimError::Server(e.to_string()))?;
    let client = crate::names::client(server.router(), scenario.seed);
    let ctx = Context::new(client.clone(), clock.clone());
    let recorder = Recorder::new(clock.clone(), scenario.start);
    recorder.register(&ctx);
    let runtime = Runtime::start(
        ctx.clone(),
        RuntimeConfig {
            components: components(),
            nodes: scenario.node_names(),
            clients: None,
        },
    )
    .await;

    let mut sim = Sim {
        scenario,
        ctx: ctx.clone(),
        recorder: recorder.clone(),
        responders,
        running: BTreeMap::new(),
        errors: Vec::new(),
    };
    // The simulated nodes register themselves once started: let them (no
    // virtual time passes while this task yields), so a step at 0s finds
    // them. Nodes that are Ready carry a status. The wait is bounded in real
    // time, not in yields: the store commits on its own thread, which a
    // loaded machine can delay past any fixed number of yields.
    let wall_limit = std::time::Instant::now() + NODE_WAIT;
    while std::time::Instant::now() < wall_limit {
        let ready = ctx
            .informers
            .nodes
            .list()
            .iter()
            .filter(|n| n.status.as_ref().is_some_and(|s| s.conditions.is_some()))
            .count();
        if ready >= scenario.nodes {
            break;
        }
        tokio::task::yield_now().await;
    }
    for (i, obj) in scenario.objects.iter().enumerate() {
        if let Err(e) = apply(&client, &obj.value).await {
            sim.fail(obj.line, &format!("objects[{i}]"), e);
        }
    }
    let mut last_step = Duration::ZERO;
    for step in &scenario.steps {
        tokio::time::sleep_until(origin + step.at).await;
        sim.step(step).await;
        last_step = step.at;
    }
    let stopped = match scenario.until {
        Some(until) => {
            tokio::time::sleep_until(origin + until).await;
            "until"
        }
        None => loop {
            let quiet_at = recorder.last_activity().max(last_step) + QUIET;
            let limit_at = last_step + LIMIT;
            let due = quiet_at.min(limit_at);
            if origin.elapsed() >= due {
                break if quiet_at <= limit_at {
                    "quiet"
                } else {
                    "limit"
                };
            }
            tokio::time::sleep_until(origin + due).await;
        },
    };
    let end = recorder.offset();
    let objects = show(&client, scenario).await;
    for (_, h) in std::mem::take(&mut sim.running) {
        for h in h {
            h.abort();
        }
    }
    let errors = std::mem::take(&mut sim.errors);
    drop(sim);
    runtime.shutdown().await;
    server.shutdown();
    Ok(Report {
        name: scenario.name.clone(),
        file: scenario.file.clone(),
        start: exitplan_api::time::format_rfc3339(scenario.start),
        seed: scenario.seed,
        nodes: scenario.nodes,
        end: format_offset(end),
        stopped: stopped.to_owned(),
        timeline: recorder.entries(),
        summary: recorder.summary(end),
        jobs: recorder.job_summary(),
        objects,
        errors,
    })
}

struct Sim<'a> {
    scenario: &'a Scenario,
    ctx: Context,
    recorder: Recorder,
    responders: Arc<dyn ResponderFactory>,
    running: BTreeMap<String, Vec<JoinHandle<()>>>,
    errors: Vec<String>,
}

impl Sim<'_> {
    fn fail(&mut self, line: u64, what: &str, e: String) {
        let msg = format!("{}:{line}: {what}: {e}", self.scenario.file);
        tracing::warn!(error = %msg, "step failed");
        self.recorder.push("Step", what, format!("failed: {e}"));
        self.errors.push(msg);
    }

    async fn step(&mut self, step: &Step) {
        let what = format!("steps[{}]", step.index);
        if let Err(e) = self.execute(step).await {
            self.fail(step.line, &what, e);
        }
    }

    async fn execute(&mut self, step: &Step) -> Result<(), String> {
        let client = self.ctx.client.clone();
        match &step.action {
            Action::Advance(_) => Ok(()),
            Action::Apply(obj) => apply(&client, obj).await,
            Action::Patch(p) => {
                let api = dynamic(&client, &p.target);
                let params = PatchParams::default();
                let patch = match p.patch_type {
                    PatchType::Merge => Patch::Merge(&p.patch),
                    PatchType::Strategic => Patch::Strategic(&p.patch),
                };
                let r = match p.subresource.as_deref() {
                    Some("status") => api.patch_status(&p.target.name, &params, &patch).await,
                    _ => api.patch(&p.target.name, &params, &patch).await,
                };
                r.map(drop).map_err(api_error)
            }
            Action::Delete(r) => dynamic(&client, r)
                .delete(&r.name, &DeleteParams::default())
                .await
                .map(drop)
                .map_err(api_error),
            Action::Withdraw(r) => dynamic(&client, r)
                .patch(
                    &r.name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"intent": "Withdrawn"}})),
                )
                .await
                .map(drop)
                .map_err(api_error),
            Action::Exit(e) => {
                let suffix = e
                    .container
                    .as_ref()
                    .map(|c| format!(".{c}"))
                    .unwrap_or_default();
                let now = exitplan_api::time::format_rfc3339(self.ctx.clock.now());
                let annotations = json!({
                    format!("sim.exitplan.io/exit-at{suffix}"): now,
                    format!("sim.exitplan.io/exit-code{suffix}"): e.code.to_string(),
                });
                Api::<Pod>::namespaced(client, &e.namespace)
                    .patch(
                        &e.pod,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"metadata": {"annotations": annotations}})),
                    )
                    .await
                    .map(drop)
                    .map_err(api_error)
            }
            Action::Request(r) => {
                let pod = Api::<Pod>::namespaced(client.clone(), &r.namespace)
                    .get(&r.pod)
                    .await
                    .map_err(api_error)?;
                request(&client, &pod, &r.name, &r.requester).await
            }
            Action::Uncordon(node) => cordon(&client, node, false).await,
            Action::Drain(node) => self.drain(node).await,
            Action::Responder(r) => {
                if r.stop {
                    match self.running.remove(&r.name) {
                        Some(handles) => {
                            for h in handles {
                                h.abort();
                            }
                            self.recorder
                                .push("Responder", &r.name, "stopped".to_owned());
                            Ok(())
                        }
                        None => Err(format!("responder {} is not running", r.name)),
                    }
                } else {
                    let h = self.responders.start(
                        &self.ctx,
                        ResponderSpec {
                            name: r.name.clone(),
                            work: r.work,
                            fail: r.fail,
                        },
                    );
                    self.running.entry(r.name.clone()).or_default().push(h);
                    let mut msg = format!("started (work {}", crate::duration::format(r.work));
                    if r.fail {
                        msg.push_str(", fails halfway");
                    }
                    msg.push(')');
                    self.recorder.push("Responder", &r.name, msg);
                    Ok(())
                }
            }
        }
    }

    /// Cordon, then one EvictionRequest per pod on the node (requester
    /// `exitplan.io/drain`, name `drain-<pod>`), terminal and terminating
    /// pods skipped.
    async fn drain(&mut self, node: &str) -> Result<(), String> {
        let client = self.ctx.client.clone();
        cordon(&client, node, true).await?;
        let pods = Api::<Pod>::all(client.clone())
            .list(&ListParams::default())
            .await
            .map_err(api_error)?;
        let mut targets: Vec<&Pod> = pods
            .items
            .iter()
            .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node))
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter(|p| {
                !matches!(
                    p.status.as_ref().and_then(|s| s.phase.as_deref()),
                    Some("Succeeded" | "Failed")
                )
            })
            .collect();
        targets.sort_by_key(|p| (p.metadata.namespace.clone(), p.metadata.name.clone()));
        let mut problems = Vec::new();
        for pod in targets {
            let ns = pod
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into());
            let name = pod.metadata.name.clone().unwrap_or_default();
            let er_name: String = format!("drain-{name}").chars().take(253).collect();
            if let Err(e) = request(&client, pod, &er_name, DRAIN_REQUESTER).await {
                problems.push(format!("{ns}/{er_name}: {e}"));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// Creates the EvictionRequest `name` for `pod` (its current UID), or if it
/// exists sets its intent back to `Eviction`.
async fn request(
    client: &kube::Client,
    pod: &Pod,
    name: &str,
    requester: &str,
) -> Result<(), String> {
    let ns = pod
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let er: EvictionRequest = serde_json::from_value(json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1",
        "kind": "EvictionRequest",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "target": {"pod": {
                "name": pod.metadata.name.clone().unwrap_or_default(),
                "uid": pod.metadata.uid.clone().unwrap_or_default(),
            }},
            "requester": requester,
            "intent": "Eviction",
        },
    }))
    .map_err(|e| e.to_string())?;
    let api = Api::<EvictionRequest>::namespaced(client.clone(), &ns);
    match api.create(&PostParams::default(), &er).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => api
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"intent": "Eviction"}})),
            )
            .await
            .map(drop)
            .map_err(api_error),
        Err(e) => Err(api_error(e)),
    }
}

/// The API server's message for an API error (`nodes "node-1" not found`),
/// or the client's error.
fn api_error(e: kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} ({})", s.message, s.code),
        e => e.to_string(),
    }
}

async fn cordon(client: &kube::Client, node: &str, on: bool) -> Result<(), String> {
    let info = KindInfo::find("Node").ok_or("no Node kind")?;
    Api::<DynamicObject>::all_with(client.clone(), &info.api_resource())
        .patch(
            node,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"unschedulable": on}})),
        )
        .await
        .map(drop)
        .map_err(api_error)
}

fn dynamic(client: &kube::Client, r: &ObjectRef) -> Api<DynamicObject> {
    let ar = r.kind.api_resource();
    match &r.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

/// Server-side apply of `obj` (validated by the parser: served kind, name).
async fn apply(client: &kube::Client, obj: &Value) -> Result<(), String> {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let info = KindInfo::find(kind).ok_or_else(|| format!("unknown kind {kind:?}"))?;
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let namespace = info.namespaced.then(|| {
        obj.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default")
            .to_owned()
    });
    let r = ObjectRef {
        kind: info,
        name: name.to_owned(),
        namespace,
    };
    dynamic(client, &r)
        .patch(
            name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(obj),
        )
        .await
        .map(drop)
        .map_err(api_error)
}

/// The `show` objects, without what differs between identical runs (UIDs,
/// resourceVersions, managedFields).
async fn show(client: &kube::Client, scenario: &Scenario) -> Vec<Value> {
    let mut out = Vec::new();
    for s in &scenario.show {
        let s = &s.value;
        let ar = s.kind.api_resource();
        let api: Api<DynamicObject> = match &s.namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
            None => Api::all_with(client.clone(), &ar),
        };
        let mut objs: Vec<DynamicObject> = match &s.name {
            Some(n) => api.get_opt(n).await.ok().flatten().into_iter().collect(),
            None => api
                .list(&ListParams::default())
                .await
                .map(|l| l.items)
                .unwrap_or_default(),
        };
        objs.sort_by_key(|o| (o.metadata.namespace.clone(), o.metadata.name.clone()));
        for mut o in objs {
            o.types.get_or_insert_with(|| kube::api::TypeMeta {
                api_version: ar.api_version.clone(),
                kind: ar.kind.clone(),
            });
            let mut v = serde_json::to_value(&o).unwrap_or(Value::Null);
            scrub(&mut v);
            out.push(v);
        }
    }
    out
}

/// Removes identity noise: every `uid`, `resourceVersion` and `managedFields`.
pub fn scrub(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("uid");
            m.remove("resourceVersion");
            m.remove("managedFields");
            for (_, x) in m.iter_mut() {
                scrub(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(scrub),
        _ => {}
    }
}
