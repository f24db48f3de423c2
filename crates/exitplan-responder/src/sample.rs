//! The sample responder's work (`exitplan responder --work 5m [--fail]`):
//! "works" for a fixed time per eviction, reporting progress and the
//! expected completion, then completes — or, with `fail`, goes silent
//! halfway so the controller interrupts it after 20 minutes.

use std::time::Duration;

use jiff::SignedDuration;

use crate::{ActiveEviction, WorkResult};

/// Fixed-duration sample work.
#[derive(Debug, Clone, Copy)]
pub struct TimedWork {
    /// How long each eviction takes.
    pub duration: Duration,
    /// Stop heartbeating halfway instead of completing.
    pub fail: bool,
}

/// The error the failing sample work gives up with.
#[derive(Debug, thiserror::Error)]
#[error("simulated failure after {0:?}: going silent")]
pub struct SimulatedFailure(pub Duration);

impl TimedWork {
    /// Works on `eviction`: progress at the start (`expectedCompletionTime`
    /// = start + duration) and halfway, then `complete`; with `fail`, returns
    /// [`SimulatedFailure`] halfway (the SDK stops heartbeating). Returns
    /// early when the responder must stop.
    pub async fn run(self, eviction: ActiveEviction) -> WorkResult {
        let half = self.duration / 2;
        let rest = self.duration - half;
        tracing::info!(
            responder = %eviction.responder(),
            eviction = %eviction.name(),
            pod = %eviction.target().name,
            work = ?self.duration,
            fail = self.fail,
            "working"
        );
        let ahead = |d: Duration| {
            let d = SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX);
            eviction.now().saturating_add(d).ok()
        };
        eviction
            .progress(
                format!(
                    "working on pod {}: 0/{}",
                    eviction.target().name,
                    human(self.duration)
                ),
                ahead(self.duration),
            )
            .await?;
        if let Some(reason) = sleep_or_stop(&eviction, half).await {
            return Err(crate::Error::NotActive {
                responder: eviction.responder().to_owned(),
                eviction: format!("{}/{}", eviction.namespace(), eviction.name()),
                reason,
            }
            .into());
        }
        if self.fail {
            tracing::warn!(
                responder = %eviction.responder(),
                eviction = %eviction.name(),
                after = ?half,
                "simulating a failure: no more heartbeats"
            );
            return Err(SimulatedFailure(half).into());
        }
        tracing::info!(
            responder = %eviction.responder(),
            eviction = %eviction.name(),
            remaining = ?rest,
            "halfway"
        );
        eviction
            .progress(
                format!(
                    "working on pod {}: {}/{}",
                    eviction.target().name,
                    human(half),
                    human(self.duration)
                ),
                ahead(rest),
            )
            .await?;
        if let Some(reason) = sleep_or_stop(&eviction, rest).await {
            return Err(crate::Error::NotActive {
                responder: eviction.responder().to_owned(),
                eviction: format!("{}/{}", eviction.namespace(), eviction.name()),
                reason,
            }
            .into());
        }
        Ok(eviction
            .complete(format!("done after {}", human(self.duration)))
            .await?)
    }
}

/// Sleeps `d` unless the responder must stop first (then the reason).
async fn sleep_or_stop(eviction: &ActiveEviction, d: Duration) -> Option<crate::StopReason> {
    tokio::select! {
        () = tokio::time::sleep(d) => None,
        r = eviction.canceled() => Some(r),
    }
}

/// `5m`, `2m30s`, `45s`.
fn human(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 60, s % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s}s"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_durations() {
        use std::time::Duration;
        assert_eq!(super::human(Duration::from_secs(300)), "5m");
        assert_eq!(super::human(Duration::from_secs(150)), "2m30s");
        assert_eq!(super::human(Duration::from_secs(45)), "45s");
    }
}
