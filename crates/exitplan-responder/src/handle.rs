//! [`ActiveEviction`]: the handle a responder's work gets, and the only
//! writer of the responder's own `status.responders[name]` entry.

use std::sync::Arc;
use std::time::Duration;

use exitplan_clock::SharedClock;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, ResponderStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Api;
use kube::api::{Patch, PatchParams};
use tokio::sync::{Mutex, watch};

use crate::Error;
use crate::names::{ALLOWED_CLOCK_SKEW, MAX_EXPECTED_COMPLETION, MAX_MESSAGE_CHARS};
use crate::view::{StopReason, Target, View};

/// Proof that the work reported completion ([`ActiveEviction::complete`]);
/// the only `Ok` value a work future can return.
#[derive(Debug)]
pub struct Completed {
    _private: (),
}

/// The responder-owned fields of its entry, as last applied. Every apply
/// carries all of them: with server-side apply, a field the manager owns and
/// leaves out is removed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Owned {
    heartbeat: Option<Timestamp>,
    expected: Option<Timestamp>,
    completion: Option<Timestamp>,
    message: Option<String>,
}

impl Owned {
    /// The fields already in `entry` (a restarted responder keeps what it
    /// wrote before).
    pub(crate) fn from_entry(entry: Option<&ResponderStatus>) -> Owned {
        let t = |v: Option<&Time>| v.map(|t| t.0);
        Owned {
            heartbeat: entry.and_then(|e| t(e.heartbeat_time.as_ref())),
            expected: entry.and_then(|e| t(e.expected_completion_time.as_ref())),
            completion: entry.and_then(|e| t(e.completion_time.as_ref())),
            message: entry.and_then(|e| e.message.clone()),
        }
    }
}

/// Everything [`ActiveEviction`] shares between its clones.
pub(crate) struct Inner {
    pub(crate) api: Api<Eviction>,
    pub(crate) responder: String,
    pub(crate) manager: String,
    pub(crate) clock: SharedClock,
    pub(crate) name: String,
    pub(crate) namespace: String,
    pub(crate) uid: String,
    pub(crate) target: Target,
    pub(crate) start_time: Timestamp,
    pub(crate) stop: watch::Receiver<Option<StopReason>>,
    pub(crate) owned: Mutex<Owned>,
    /// `heartbeatTime` last written (else `startTime`): the automatic
    /// heartbeat is due `interval` after it.
    pub(crate) last_report: watch::Sender<Timestamp>,
}

/// One Eviction on which this responder is `Active`: handed to the work
/// closure of [`Responder::run`](crate::Responder::run). Cheap to clone.
///
/// Every write is a server-side apply (force, field manager = the responder
/// name) of this responder's own `status.responders[name]` entry and nothing
/// else, with times from the injected clock truncated to whole seconds and
/// kept within the server's rules (§5.4): `heartbeatTime` never before
/// `startTime` nor decreasing, `expectedCompletionTime` between now and 10
/// years ahead, `completionTime` set once.
#[derive(Clone)]
pub struct ActiveEviction {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for ActiveEviction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActiveEviction")
            .field("responder", &self.inner.responder)
            .field("namespace", &self.inner.namespace)
            .field("name", &self.inner.name)
            .field("target", &self.inner.target)
            .finish_non_exhaustive()
    }
}

/// `t` cut to whole seconds (the API's `Time` precision).
pub(crate) fn truncate(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

fn signed(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

impl ActiveEviction {
    /// The responder's name.
    pub fn responder(&self) -> &str {
        &self.inner.responder
    }

    /// The Eviction's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The Eviction's namespace (also the pod's).
    pub fn namespace(&self) -> &str {
        &self.inner.namespace
    }

    /// The Eviction's UID.
    pub fn uid(&self) -> &str {
        &self.inner.uid
    }

    /// The pod to act on.
    pub fn target(&self) -> &Target {
        &self.inner.target
    }

    /// When the controller made this responder Active (`startTime`).
    pub fn start_time(&self) -> Timestamp {
        self.inner.start_time
    }

    /// The injected clock's reading (for `expected_completion` estimates).
    pub fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    fn eviction_ref(&self) -> String {
        format!("{}/{}", self.inner.namespace, self.inner.name)
    }

    fn not_active(&self, reason: StopReason) -> Error {
        Error::NotActive {
            responder: self.inner.responder.clone(),
            eviction: self.eviction_ref(),
            reason,
        }
    }

    /// Why the work must stop, once it must (the controller marked this
    /// responder `Canceled`, `Interrupted` or `Completed`, the Eviction became
    /// final, or it was deleted); `None` while Active.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.inner.stop.borrow().clone()
    }

    /// Resolves when the work must stop (see [`stop_reason`](Self::stop_reason)),
    /// with the reason. Race it against the work (`tokio::select!`). After
    /// it resolves the SDK stops heartbeating, refuses writes with
    /// [`Error::NotActive`], and drops the work future after the responder's
    /// stop grace period.
    pub async fn canceled(&self) -> StopReason {
        let mut rx = self.inner.stop.clone();
        let reason = rx
            .wait_for(Option::is_some)
            .await
            .map(|r| r.clone().unwrap_or(StopReason::Deleted));
        match reason {
            Ok(r) => r,
            // The watch loop is gone: so is this work (its task is aborted).
            Err(_) => std::future::pending().await,
        }
    }

    /// Reports that the work is alive: `heartbeatTime = now`. The SDK does
    /// this on its own every heartbeat interval while the work runs; every
    /// other report counts as a heartbeat too.
    pub async fn heartbeat(&self) -> Result<(), Error> {
        self.write(|o, now, start| {
            o.heartbeat = Some(next_heartbeat(o.heartbeat, now, start));
        })
        .await
    }

    /// Reports progress: `message`, the estimated `expectedCompletionTime`
    /// (`None` removes a previous estimate) and a heartbeat. An estimate in
    /// the past is reported as now, one more than 10 years ahead as the limit.
    pub async fn progress(
        &self,
        message: impl Into<String>,
        expected_completion: Option<Timestamp>,
    ) -> Result<(), Error> {
        let message = checked_message(message.into())?;
        self.write(|o, now, start| {
            o.heartbeat = Some(next_heartbeat(o.heartbeat, now, start));
            o.expected = expected_completion.map(|e| clamp_expected(e, now, start));
            o.message = Some(message);
        })
        .await
    }

    /// Reports that the responder stopped working on this eviction (fully or
    /// partially): `completionTime = now` (immutable afterwards) and
    /// `message`. The controller then marks it `Completed` and moves on.
    pub async fn complete(&self, message: impl Into<String>) -> Result<Completed, Error> {
        let message = checked_message(message.into())?;
        self.write(|o, now, start| {
            o.heartbeat = Some(next_heartbeat(o.heartbeat, now, start));
            o.completion = Some(now.max(start));
            o.message = Some(message);
        })
        .await?;
        Ok(Completed { _private: () })
    }

    /// Writes only `message` (no heartbeat): why the work gave up.
    pub(crate) async fn report_failure(&self, message: &str) -> Result<(), Error> {
        let message: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
        self.write(|o, _, _| o.message = Some(message)).await
    }

    /// Whether `completionTime` was written.
    pub(crate) async fn is_completed(&self) -> bool {
        self.inner.owned.lock().await.completion.is_some()
    }

    fn check_active(&self) -> Result<(), Error> {
        match self.stop_reason() {
            Some(r) => Err(self.not_active(r)),
            None => Ok(()),
        }
    }

    /// Applies the owned fields after `change(owned, now, startTime)`.
    async fn write(
        &self,
        change: impl FnOnce(&mut Owned, Timestamp, Timestamp),
    ) -> Result<(), Error> {
        self.check_active()?;
        let mut owned = self.inner.owned.lock().await;
        if owned.completion.is_some() {
            return Err(Error::AlreadyCompleted {
                responder: self.inner.responder.clone(),
                eviction: self.eviction_ref(),
            });
        }
        self.check_active()?;
        let now = truncate(self.inner.clock.now());
        let mut next = owned.clone();
        change(&mut next, now, self.inner.start_time);
        let entry = ResponderStatus {
            name: self.inner.responder.clone(),
            heartbeat_time: next.heartbeat.map(Time),
            expected_completion_time: next.expected.map(Time),
            completion_time: next.completion.map(Time),
            message: next.message.clone(),
            start_time: None,
        };
        let body = serde_json::json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1",
            "kind": "Eviction",
            "metadata": {"name": self.inner.name, "namespace": self.inner.namespace},
            "status": {"responders": [serde_json::to_value(&entry)?]},
        });
        let params = PatchParams::apply(&self.inner.manager).force();
        match self
            .inner
            .api
            .patch_status(&self.inner.name, &params, &Patch::Apply(&body))
            .await
        {
            Ok(_) => {
                tracing::debug!(
                    responder = %self.inner.responder,
                    eviction = %self.eviction_ref(),
                    heartbeat = ?next.heartbeat,
                    expected_completion = ?next.expected,
                    completion = ?next.completion,
                    "reported status"
                );
                if let Some(hb) = next.heartbeat {
                    self.inner.last_report.send_replace(hb);
                }
                *owned = next;
                Ok(())
            }
            Err(kube::Error::Api(s)) if s.is_not_found() => {
                Err(self.not_active(StopReason::Deleted))
            }
            Err(kube::Error::Api(s)) if s.is_invalid() => {
                // Refused: most likely the controller moved on between our
                // last look and this write. Say so if it did.
                match self.inner.api.get_opt(&self.inner.name).await {
                    Ok(Some(e)) if e.metadata.uid.as_deref() == Some(self.inner.uid.as_str()) => {
                        match View::of(&e, &self.inner.responder).stop_reason() {
                            Some(r) => Err(self.not_active(r)),
                            None => Err(Error::Kube(kube::Error::Api(s))),
                        }
                    }
                    Ok(_) => Err(self.not_active(StopReason::Deleted)),
                    Err(_) => Err(Error::Kube(kube::Error::Api(s))),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Heartbeats every `interval` after the last report until the work must
    /// stop or has completed. Transient failures are retried.
    pub(crate) async fn heartbeat_loop(&self, interval: Duration) {
        let mut reports = self.inner.last_report.subscribe();
        loop {
            if self.stop_reason().is_some() || self.is_completed().await {
                return;
            }
            let last = *reports.borrow_and_update();
            let due = last
                .saturating_add(signed(interval))
                .unwrap_or(Timestamp::MAX);
            let wait = Duration::try_from(due.duration_since(self.now())).unwrap_or_default();
            tokio::select! {
                _ = tokio::time::sleep(wait) => match self.heartbeat().await {
                    Ok(()) => {}
                    Err(Error::NotActive { .. } | Error::AlreadyCompleted { .. }) => return,
                    Err(e) => {
                        tracing::warn!(
                            responder = %self.inner.responder,
                            eviction = %self.eviction_ref(),
                            error = %e,
                            "heartbeat failed, retrying"
                        );
                        tokio::time::sleep(HEARTBEAT_RETRY.min(interval)).await;
                    }
                },
                changed = reports.changed() => if changed.is_err() { return },
                _ = self.canceled() => return,
            }
        }
    }
}

/// How long a failed heartbeat waits before the next attempt.
const HEARTBEAT_RETRY: Duration = Duration::from_secs(10);

/// `now`, but never before `startTime` nor the previous heartbeat (both
/// rejected by the server; only reachable with a clock behind the server's).
fn next_heartbeat(prev: Option<Timestamp>, now: Timestamp, start: Timestamp) -> Timestamp {
    now.max(start).max(prev.unwrap_or(start))
}

/// `expected` within what the server accepts: not before now (or
/// `startTime`), not more than 10 years (less the skew) ahead.
fn clamp_expected(expected: Timestamp, now: Timestamp, start: Timestamp) -> Timestamp {
    let low = now.max(start);
    let high = now
        .saturating_add(signed(MAX_EXPECTED_COMPLETION) - signed(ALLOWED_CLOCK_SKEW))
        .unwrap_or(Timestamp::MAX);
    truncate(expected).clamp(low, high)
}

fn checked_message(message: String) -> Result<String, Error> {
    let len = message.chars().count();
    if len > MAX_MESSAGE_CHARS {
        return Err(Error::MessageTooLong {
            len,
            max: MAX_MESSAGE_CHARS,
        });
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("time")
    }

    #[test]
    fn heartbeats_never_go_back() {
        let start = ts("2026-11-29T10:00:00Z");
        assert_eq!(
            next_heartbeat(None, ts("2026-11-29T10:01:00Z"), start),
            ts("2026-11-29T10:01:00Z")
        );
        assert_eq!(
            next_heartbeat(None, ts("2026-11-29T09:59:50Z"), start),
            start
        );
        assert_eq!(
            next_heartbeat(
                Some(ts("2026-11-29T10:02:00Z")),
                ts("2026-11-29T10:01:00Z"),
                start
            ),
            ts("2026-11-29T10:02:00Z")
        );
    }

    #[test]
    fn expected_completion_is_kept_in_range() {
        let start = ts("2026-11-29T10:00:00Z");
        let now = ts("2026-11-29T10:01:00Z");
        assert_eq!(
            clamp_expected(ts("2026-11-29T10:05:00.7Z"), now, start),
            ts("2026-11-29T10:05:00Z")
        );
        assert_eq!(clamp_expected(ts("2026-11-29T09:00:00Z"), now, start), now);
        let far = clamp_expected(ts("2099-01-01T00:00:00Z"), now, start);
        assert!(far < ts("2036-11-27T10:01:00Z"), "{far}");
    }

    #[test]
    fn messages_are_limited_in_characters() {
        assert!(checked_message("é".repeat(4000)).is_ok());
        assert!(matches!(
            checked_message("a".repeat(4001)),
            Err(Error::MessageTooLong {
                len: 4001,
                max: 4000
            })
        ));
    }

    #[test]
    fn truncates_to_seconds() {
        assert_eq!(
            truncate(ts("2026-11-29T10:00:00.999Z")),
            ts("2026-11-29T10:00:00Z")
        );
    }
}
