//! In-process responders for scenarios.
//!
//! [`ResponderFactory`] is the hook: the engine asks it to start one
//! responder per `responder` step. [`BuiltinResponders`] runs the
//! `exitplan-responder` SDK's [`Responder`] with the sample work
//! [`TimedWork`] — the same program as `exitplan responder` — against the
//! simulation's API server, on its clock: it watches the Evictions labelled
//! for its name and, on each one where it is Active, reports progress and
//! `expectedCompletionTime`, heartbeats every [`HEARTBEAT`] and reports
//! `completionTime` once `work` has passed; with `fail` it gives up halfway
//! (heartbeats stop; the controller interrupts it 20 minutes later).
//! Aborting the handle stops it (a `stop: true` step): nothing more is
//! written.

use std::time::Duration;

use exitplan_responder::Responder;
use exitplan_responder::sample::TimedWork;
use tokio::task::JoinHandle;

use exitplan_runtime::context::Context;

/// How long after its last write a scenario responder heartbeats (the
/// spec's guidance: not more often than every 20 s). Not a divisor of whole
/// minutes, so a heartbeat does not fall on the very instant the work of a
/// whole-minute `work` reports (which of the two writes first would
/// otherwise depend on task scheduling, and with it the heartbeat the
/// 20-minute deadline counts from).
pub const HEARTBEAT: Duration = Duration::from_secs(45);

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
    /// Starts `spec` against `ctx`'s cluster (its client and clock);
    /// aborting the handle stops it.
    fn start(&self, ctx: &Context, spec: ResponderSpec) -> JoinHandle<()>;
}

/// The scenario responders: the SDK's [`Responder`] running [`TimedWork`].
#[derive(Clone, Copy, Debug, Default)]
pub struct BuiltinResponders;

impl ResponderFactory for BuiltinResponders {
    fn start(&self, ctx: &Context, spec: ResponderSpec) -> JoinHandle<()> {
        let work = TimedWork {
            duration: spec.work,
            fail: spec.fail,
        };
        let responder = Responder::new(ctx.client.clone(), spec.name.clone(), ctx.clock.clone())
            .heartbeat_interval(HEARTBEAT);
        tokio::spawn(async move {
            if let Err(e) = responder.run(move |eviction| work.run(eviction)).await {
                tracing::warn!(responder = %spec.name, error = %e, "responder stopped");
            }
        })
    }
}
