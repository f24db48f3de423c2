//! [`Responder`]: watches the Evictions labelled for a responder and runs
//! the author's work on each one it becomes Active on.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use exitplan_clock::SharedClock;
use futures_util::StreamExt;
use k8s_openapi::api::lifecycle::v1alpha1::Eviction;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client};
use tokio::sync::{Mutex, watch};
use tokio::task::JoinSet;

use crate::Error;
use crate::handle::{ActiveEviction, Completed, Inner, Owned};
use crate::names::{
    DEFAULT_HEARTBEAT_INTERVAL, MAX_HEARTBEAT_INTERVAL, MIN_HEARTBEAT_INTERVAL, field_manager,
    label_selector, validate_responder_name,
};
use crate::view::{StopReason, View};

/// An error a work future may return (anything `?` converts).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a work future resolves to: `Ok` only through
/// [`ActiveEviction::complete`]; `Err` gives the eviction up (heartbeats stop,
/// the error becomes the entry's `message`, and the controller marks the
/// responder `Interrupted` once it has been silent for 20 minutes).
pub type WorkResult = Result<Completed, BoxError>;

/// The default time a work future gets to return after it was told to stop
/// before it is dropped.
pub const DEFAULT_STOP_GRACE: Duration = Duration::from_secs(10);

/// A responder: its name, where to watch, and how often to heartbeat.
///
/// ```no_run
/// # async fn f(client: kube::Client) -> Result<(), exitplan_responder::Error> {
/// use std::sync::Arc;
/// use exitplan_responder::{ActiveEviction, Responder};
///
/// Responder::new(client, "example.com/migrator", Arc::new(exitplan_clock::SystemClock))
///     .namespace(None)
///     .run(|work: ActiveEviction| async move {
///         work.progress("migrating", None).await?;
///         // … move the pod's state away …
///         Ok(work.complete("migrated").await?)
///     })
///     .await
/// # }
/// ```
#[derive(Clone)]
pub struct Responder {
    client: Client,
    name: String,
    clock: SharedClock,
    namespace: Option<String>,
    heartbeat_interval: Duration,
    stop_grace: Duration,
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Responder")
            .field("name", &self.name)
            .field("namespace", &self.namespace)
            .field("heartbeat_interval", &self.heartbeat_interval)
            .field("stop_grace", &self.stop_grace)
            .finish_non_exhaustive()
    }
}

impl Responder {
    /// A responder called `name` (a domain-prefixed key such as
    /// `example.com/migrator`, as pods list it in `spec.evictionResponders`),
    /// using `client` and taking every time it writes from `clock`.
    pub fn new(client: Client, name: impl Into<String>, clock: SharedClock) -> Responder {
        Responder {
            client,
            name: name.into(),
            clock,
            namespace: None,
            heartbeat_interval: DEFAULT_HEARTBEAT_INTERVAL,
            stop_grace: DEFAULT_STOP_GRACE,
        }
    }

    /// Watch only `namespace` (`None`: every namespace).
    pub fn namespace(mut self, namespace: Option<String>) -> Responder {
        self.namespace = namespace;
        self
    }

    /// How long after the last report the SDK heartbeats on its own (default
    /// 3 min), kept within 20 s (API guidance) and 19 min (the controller
    /// interrupts after 20 min of silence, the server allows 30 s of skew).
    pub fn heartbeat_interval(mut self, interval: Duration) -> Responder {
        let clamped = interval.clamp(MIN_HEARTBEAT_INTERVAL, MAX_HEARTBEAT_INTERVAL);
        if clamped != interval {
            tracing::warn!(
                requested = ?interval,
                used = ?clamped,
                "heartbeat interval out of range (20s..19m), clamped"
            );
        }
        self.heartbeat_interval = clamped;
        self
    }

    /// How long a work future may keep running after it was told to stop
    /// ([`ActiveEviction::canceled`]) before it is dropped (default 10 s).
    pub fn stop_grace(mut self, grace: Duration) -> Responder {
        self.stop_grace = grace;
        self
    }

    /// The responder's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Watches the Evictions labelled for this responder
    /// (`<name>: responder` or `requester-responder`) and, once on each
    /// Eviction where its `TargetResponder` is `Active` and its
    /// `ResponderStatus` entry has a `startTime`, runs `work` with an
    /// [`ActiveEviction`] — heartbeating while it runs and telling it to stop
    /// when the responder is no longer Active.
    ///
    /// Runs until the watch ends (it retries with backoff, so in practice
    /// until the future is dropped, which also drops all running work).
    /// Fails at once with [`Error::InvalidName`].
    pub async fn run<F, Fut>(self, work: F) -> Result<(), Error>
    where
        F: Fn(ActiveEviction) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = WorkResult> + Send + 'static,
    {
        validate_responder_name(&self.name)?;
        let api: Api<Eviction> = match &self.namespace {
            Some(ns) => Api::namespaced(self.client.clone(), ns),
            None => Api::all(self.client.clone()),
        };
        let config = watcher::Config::default().labels(&label_selector(&self.name));
        let mut events = watcher::watcher(api, config).default_backoff().boxed();
        let work = Arc::new(work);
        let mut running: HashMap<String, watch::Sender<Option<StopReason>>> = HashMap::new();
        // UIDs already handed to the work: never started twice by one process.
        let mut handled: HashSet<String> = HashSet::new();
        let mut listed: HashSet<String> = HashSet::new();
        let mut tasks: JoinSet<String> = JoinSet::new();
        tracing::info!(
            responder = %self.name,
            namespace = self.namespace.as_deref().unwrap_or("*"),
            heartbeat_interval = ?self.heartbeat_interval,
            "watching evictions"
        );
        loop {
            tokio::select! {
                event = events.next() => {
                    let Some(event) = event else { break };
                    match event {
                        Ok(Event::Apply(e)) => {
                            self.observe(&e, &work, &mut running, &mut handled, &mut tasks);
                        }
                        Ok(Event::InitApply(e)) => {
                            if let Some(uid) = e.metadata.uid.clone() {
                                listed.insert(uid);
                            }
                            self.observe(&e, &work, &mut running, &mut handled, &mut tasks);
                        }
                        Ok(Event::Delete(e)) => {
                            if let Some(uid) = e.metadata.uid.as_deref() {
                                gone(uid, &mut running, &mut handled);
                            }
                        }
                        Ok(Event::Init) => listed.clear(),
                        Ok(Event::InitDone) => {
                            let missing: Vec<String> =
                                handled.iter().filter(|u| !listed.contains(*u)).cloned().collect();
                            for uid in missing {
                                gone(&uid, &mut running, &mut handled);
                            }
                        }
                        Err(e) => tracing::warn!(responder = %self.name, error = %e, "watch failed, retrying"),
                    }
                }
                Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                    match done {
                        Ok(uid) => { running.remove(&uid); }
                        Err(e) => tracing::error!(responder = %self.name, error = %e, "work task failed"),
                    }
                }
            }
        }
        Ok(())
    }

    /// Reacts to one observed Eviction: tells running work to stop, or starts
    /// work.
    fn observe<F, Fut>(
        &self,
        eviction: &Eviction,
        work: &Arc<F>,
        running: &mut HashMap<String, watch::Sender<Option<StopReason>>>,
        handled: &mut HashSet<String>,
        tasks: &mut JoinSet<String>,
    ) where
        F: Fn(ActiveEviction) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = WorkResult> + Send + 'static,
    {
        let Some(uid) = eviction.metadata.uid.clone() else {
            return;
        };
        let view = View::of(eviction, &self.name);
        if let Some(stop) = running.get(&uid) {
            if let Some(reason) = view.stop_reason() {
                stop.send_if_modified(|s| {
                    if s.is_none() {
                        *s = Some(reason);
                        true
                    } else {
                        false
                    }
                });
            }
            return;
        }
        if handled.contains(&uid) || !view.startable() {
            return;
        }
        let (Some(target), Some(start_time), Some(name), Some(namespace)) = (
            view.target.clone(),
            view.start_time(),
            eviction.metadata.name.clone(),
            eviction.metadata.namespace.clone(),
        ) else {
            return;
        };
        let (stop_tx, stop_rx) = watch::channel(None);
        let owned = Owned::from_entry(view.entry.as_ref());
        let last = view
            .entry
            .as_ref()
            .and_then(|e| e.heartbeat_time.as_ref())
            .map_or(start_time, |t| t.0);
        let (last_report, _) = watch::channel(last);
        let handle = ActiveEviction {
            inner: Arc::new(Inner {
                api: Api::namespaced(self.client.clone(), &namespace),
                responder: self.name.clone(),
                manager: field_manager(&self.name),
                clock: self.clock.clone(),
                name,
                namespace,
                uid: uid.clone(),
                target,
                start_time,
                stop: stop_rx,
                owned: Mutex::new(owned),
                last_report,
            }),
        };
        tracing::info!(
            responder = %self.name,
            eviction = %format!("{}/{}", handle.namespace(), handle.name()),
            pod = %handle.target().name,
            pod_uid = %handle.target().uid,
            start_time = %start_time,
            "responder is active, starting work"
        );
        handled.insert(uid.clone());
        running.insert(uid.clone(), stop_tx);
        let fut = work(handle.clone());
        let interval = self.heartbeat_interval;
        let grace = self.stop_grace;
        tasks.spawn(async move {
            drive(handle, fut, interval, grace).await;
            uid
        });
    }
}

/// The Eviction `uid` is gone: stop its work, forget it.
fn gone(
    uid: &str,
    running: &mut HashMap<String, watch::Sender<Option<StopReason>>>,
    handled: &mut HashSet<String>,
) {
    handled.remove(uid);
    if let Some(stop) = running.get(uid) {
        stop.send_if_modified(|s| {
            if s.is_none() {
                *s = Some(StopReason::Deleted);
                true
            } else {
                false
            }
        });
    }
}

/// Runs one work future with heartbeats until it returns, or until it was
/// told to stop and the grace period is over.
async fn drive(
    handle: ActiveEviction,
    work: impl Future<Output = WorkResult>,
    interval: Duration,
    grace: Duration,
) {
    let eviction = format!("{}/{}", handle.namespace(), handle.name());
    let responder = handle.responder().to_owned();
    let heartbeats = async {
        handle.heartbeat_loop(interval).await;
        std::future::pending::<()>().await
    };
    tokio::pin!(work);
    let result = tokio::select! {
        r = &mut work => Some(r),
        () = heartbeats => None,
        _ = handle.canceled() => None,
    };
    let result = match result {
        Some(r) => r,
        None => {
            let reason = handle.stop_reason().unwrap_or(StopReason::Deleted);
            tracing::info!(%responder, %eviction, %reason, "stopping work");
            match tokio::time::timeout(grace, work).await {
                Ok(r) => r,
                Err(_) => {
                    tracing::warn!(%responder, %eviction, ?grace, "work did not stop in time, dropped");
                    return;
                }
            }
        }
    };
    match result {
        Ok(Completed { .. }) => tracing::info!(%responder, %eviction, "work completed"),
        Err(e) => match handle.stop_reason().or_else(|| refused_reason(&*e)) {
            Some(reason) => {
                tracing::info!(%responder, %eviction, %reason, error = %e, "work stopped")
            }
            None => {
                tracing::warn!(
                    %responder, %eviction, error = %e,
                    "work failed: heartbeats stop, the controller interrupts the responder after 20 min"
                );
                if let Err(w) = handle.report_failure(&format!("work failed: {e}")).await {
                    tracing::warn!(%responder, %eviction, error = %w, "could not report the failure");
                }
            }
        },
    }
}

/// The reason in an [`Error::NotActive`] (or `Completed` for
/// [`Error::AlreadyCompleted`]) the work returned: the server said it must
/// stop before the watch did.
fn refused_reason(e: &(dyn std::error::Error + Send + Sync + 'static)) -> Option<StopReason> {
    match e.downcast_ref::<Error>()? {
        Error::NotActive { reason, .. } => Some(reason.clone()),
        Error::AlreadyCompleted { .. } => Some(StopReason::Completed),
        _ => None,
    }
}
