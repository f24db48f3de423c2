//! # exitplan-clock
//!
//! The one clock of exitplan. The API server stamps every timestamp it writes
//! (`creationTimestamp`, `deletionTimestamp`, condition times, PDB
//! `disruptedPods`) from it, and the controllers pass its `now` to every
//! decision, so tests and `exitplan simulate` run in virtual time: with
//! [`TokioClock`] under `tokio::time::pause()`, a 20-minute deadline takes
//! microseconds and every run is deterministic.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

/// A source of "now".
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// A shared clock handle.
pub type SharedClock = Arc<dyn Clock>;

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that follows tokio's time: a fixed start plus the tokio time
/// elapsed since the clock was made. Under `tokio::time::pause()` it advances
/// only when the runtime's virtual time does, so a 20-minute deadline takes
/// microseconds and every run is deterministic.
#[derive(Debug, Clone)]
pub struct TokioClock {
    start: Timestamp,
    origin: tokio::time::Instant,
}

impl TokioClock {
    /// A clock that reads `start` now and advances with tokio time.
    pub fn starting_at(start: Timestamp) -> Self {
        TokioClock {
            start,
            origin: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Timestamp {
        let elapsed =
            SignedDuration::try_from(self.origin.elapsed()).unwrap_or(SignedDuration::MAX);
        self.start.checked_add(elapsed).unwrap_or(Timestamp::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn tokio_clock_follows_virtual_time() {
        let start: Timestamp = "2026-11-29T10:00:00Z".parse().expect("time");
        let clock = TokioClock::starting_at(start);
        assert_eq!(clock.now(), start);
        tokio::time::advance(std::time::Duration::from_secs(1200)).await;
        assert_eq!(
            clock.now(),
            "2026-11-29T10:20:00Z".parse::<Timestamp>().expect("time")
        );
    }
}
