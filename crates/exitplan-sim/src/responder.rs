//! In-process responders for scenarios.
//!
//! [`ResponderFactory`] is the hook: the engine asks it to start one
//! responder per `responder` step. [`BuiltinResponders`] is a minimal
//! responder kept in this one file so it can be swapped for the responder SDK
//! (`exitplan-responder`) later: it watches Evictions labelled
//! `<name>: responder|requester-responder`, and while its targetResponder is
//! `Active` writes its own `status.responders` entry (server-side apply on
//! `/status`, forced, field manager = its name): a heartbeat and
//! `expectedCompletionTime` when it starts, a heartbeat every
//! [`HEARTBEAT`], and `completionTime` once `work` has passed. With `fail`, it
//! stops heartbeating halfway and never completes.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::lifecycle::v1alpha1::Eviction;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use tokio::task::{JoinHandle, JoinSet};

use exitplan_api::time::format_rfc3339;
use exitplan_runtime::context::Context;
use exitplan_runtime::informer::{Change, ObjectKey};

/// How often the built-in responder heartbeats (the spec's guidance: not
/// more often than every 20 s).
pub const HEARTBEAT: Duration = Duration::from_secs(60);

/// One responder to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponderSpec {
    /// Its name (`mover.acme.io/migrate`).
    pub name: String,
    /// How long its work takes once Active.
    pub work: Duration,
    /// Stop heartbeating halfway through (never complete).
    pub fail: bool,
}

/// Starts in-process responders.
pub trait ResponderFactory: Send + Sync {
    /// Starts `spec` against `ctx`'s cluster (its client, clock and shared
    /// informers, already running); aborting the handle stops it.
    fn start(&self, ctx: &Context, spec: ResponderSpec) -> JoinHandle<()>;
}

/// The minimal built-in responder.
#[derive(Clone, Copy, Debug, Default)]
pub struct BuiltinResponders;

impl ResponderFactory for BuiltinResponders {
    fn start(&self, ctx: &Context, spec: ResponderSpec) -> JoinHandle<()> {
        tokio::spawn(run(ctx.clone(), spec))
    }
}

fn labelled(ev: &Eviction, name: &str) -> bool {
    ev.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(name))
        .is_some_and(|v| v == "responder" || v == "requester-responder")
}

/// Whether `name` is the Active responder of `ev` and has not completed.
fn should_work(ev: &Eviction, name: &str) -> bool {
    let status = ev.status.as_ref();
    let active = status
        .and_then(|s| s.target_responders.as_ref())
        .is_some_and(|trs| trs.iter().any(|t| t.name == name && t.state == "Active"));
    let completed = status
        .and_then(|s| s.responders.as_ref())
        .is_some_and(|rs| {
            rs.iter()
                .any(|r| r.name == name && r.completion_time.is_some())
        });
    active && !completed
}

async fn run(ctx: Context, spec: ResponderSpec) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ObjectKey>();
    let name = spec.name.clone();
    let handler_tx = tx.clone();
    ctx.informers.evictions.on_change(move |c| {
        if let Change::Added(ev) | Change::Updated { new: ev, .. } = c
            && labelled(ev, &name)
        {
            // The receiver is gone once the responder stopped.
            let _ = handler_tx.send(ObjectKey::of(ev.as_ref()));
        }
    });
    let mut existing: Vec<ObjectKey> = ctx
        .informers
        .evictions
        .list()
        .iter()
        .filter(|ev| labelled(ev, &spec.name))
        .map(|ev| ObjectKey::of(ev.as_ref()))
        .collect();
    existing.sort();
    for k in existing {
        let _ = tx.send(k);
    }
    drop(tx);
    // Work in progress per Eviction (by UID: a new Eviction of the same name is new work).
    let mut working: BTreeMap<String, tokio::task::AbortHandle> = BTreeMap::new();
    let mut tasks = JoinSet::new();
    while let Some(key) = rx.recv().await {
        let Some(ev) = ctx.informers.evictions.get(&key) else {
            continue;
        };
        let uid = ev.metadata.uid.clone().unwrap_or_default();
        let active = ev
            .status
            .as_ref()
            .and_then(|s| s.target_responders.as_ref())
            .is_some_and(|t| t.iter().any(|t| t.name == spec.name && t.state == "Active"));
        if should_work(&ev, &spec.name) {
            if let std::collections::btree_map::Entry::Vacant(slot) = working.entry(uid) {
                tracing::debug!(responder = %spec.name, eviction = %key, "starting work");
                slot.insert(tasks.spawn(work(ctx.clone(), spec.clone(), key.clone())));
            }
        } else if !active && let Some(h) = working.remove(&uid) {
            // No longer Active (interrupted, canceled): stop working on it.
            // (Still Active with our completionTime: the task ends by itself.)
            h.abort();
        }
        while tasks.try_join_next().is_some() {}
    }
}

async fn work(ctx: Context, spec: ResponderSpec, key: ObjectKey) {
    let api: Api<Eviction> = Api::namespaced(
        ctx.client.clone(),
        key.namespace.as_deref().unwrap_or("default"),
    );
    let begin = tokio::time::Instant::now();
    let done = begin + spec.work;
    let silent_from = begin + spec.work / 2;
    let now = ctx.clock.now();
    let expected = exitplan_api::time::add(
        now,
        jiff::SignedDuration::try_from(spec.work).unwrap_or(jiff::SignedDuration::ZERO),
    );
    // Every apply re-states every field this responder owns: with
    // server-side apply, a field left out of the next apply is removed.
    let expected = format_rfc3339(expected);
    report(&ctx, &api, &spec.name, &key.name, |now| {
        json!({
            "name": spec.name,
            "heartbeatTime": now,
            "expectedCompletionTime": expected,
            "message": "working",
        })
    })
    .await;
    loop {
        let next = (tokio::time::Instant::now() + HEARTBEAT).min(done);
        if spec.fail && next >= silent_from {
            tokio::time::sleep_until(silent_from).await;
            tracing::debug!(responder = %spec.name, eviction = %key, "going silent");
            return;
        }
        tokio::time::sleep_until(next).await;
        if next >= done {
            report(&ctx, &api, &spec.name, &key.name, |now| {
                json!({
                    "name": spec.name,
                    "heartbeatTime": now,
                    "expectedCompletionTime": expected,
                    "completionTime": now,
                    "message": "done",
                })
            })
            .await;
            return;
        }
        report(&ctx, &api, &spec.name, &key.name, |now| {
            json!({
                "name": spec.name,
                "heartbeatTime": now,
                "expectedCompletionTime": expected,
                "message": "working",
            })
        })
        .await;
    }
}

/// Applies this responder's own `status.responders` entry.
async fn report(
    ctx: &Context,
    api: &Api<Eviction>,
    name: &str,
    eviction: &str,
    entry: impl Fn(String) -> serde_json::Value,
) {
    let now = format_rfc3339(ctx.clock.now());
    let body = json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1",
        "kind": "Eviction",
        "metadata": {"name": eviction},
        "status": {"responders": [entry(now)]},
    });
    // Field managers are limited to 128 bytes (kube-rs and kube-apiserver).
    let mut manager = name.to_owned();
    while manager.len() > 128 {
        manager.pop();
    }
    if let Err(e) = api
        .patch_status(
            eviction,
            &PatchParams::apply(&manager).force(),
            &Patch::Apply(&body),
        )
        .await
    {
        tracing::warn!(responder = name, eviction, error = %e, "status apply failed");
    }
}
