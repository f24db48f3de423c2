//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's
//! `leaderelection` semantics (`k8s.io/client-go/tools/leaderelection`), so an
//! exitplan controller and a client-go controller would agree on who leads.
//!
//! * The Lease carries `holderIdentity`, `leaseDurationSeconds` (15),
//!   `acquireTime`, `renewTime` and `leaseTransitions`, written exactly as
//!   client-go's `LeaseLock` writes them (the whole spec is replaced).
//! * Writes are updates carrying the `resourceVersion` last read: two
//!   candidates racing for one lease both write, the API server answers one
//!   of them 409, and that one does not lead.
//! * A lease held by someone else is taken over only once it has expired by
//!   the **observed** time: `leaseDurationSeconds` counted from the instant
//!   this candidate last saw the record *change*, read from this process's own
//!   clock — never from the holder's `renewTime`, which was stamped by another
//!   machine's clock (clock-skew tolerance, as client-go's `isLeaseValid`).
//! * The leader renews every retry period (2 s); if it has not renewed for the
//!   renew deadline (10 s) — or it sees another holder in the record — it stops
//!   leading at once. Since the others wait a full lease duration (15 s) from
//!   their own observation of the last renewal, the old leader has stopped
//!   before anyone else starts.
//! * On shutdown a leader releases the lease (client-go's `ReleaseOnCancel`):
//!   empty holder, `leaseDurationSeconds: 1`, so a successor need not wait.
//!
//! The decisions (`attempt`, `is_lease_valid`, `release_spec`) are pure
//! functions of the observed record and `now`; [`LeaderElector`] does the IO.
//! Times come from the injected clock, delays from tokio time.

use std::future::Future;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use tokio::sync::watch;
use tokio::time::Instant;

use exitplan_clock::SharedClock;

/// client-go's `LeaseDuration` default of kube-controller-manager.
pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
/// client-go's `RenewDeadline` default of kube-controller-manager.
pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// client-go's `RetryPeriod` default of kube-controller-manager.
pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);
/// client-go's `JitterFactor` for acquisition retries.
pub const JITTER_FACTOR: f64 = 1.2;

/// Timings of an election.
#[derive(Clone, Debug, PartialEq)]
pub struct LeaderConfig {
    /// How long non-leaders wait, from their last observation of a change,
    /// before they may take the lease over (`leaseDurationSeconds`).
    pub lease_duration: Duration,
    /// How long the leader keeps leading without a successful renewal.
    pub renew_deadline: Duration,
    /// The interval between attempts to acquire or renew.
    pub retry_period: Duration,
    /// Whether a leader releases the lease when it is shut down.
    pub release_on_cancel: bool,
}

impl Default for LeaderConfig {
    fn default() -> Self {
        LeaderConfig {
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
            release_on_cancel: true,
        }
    }
}

/// Errors of one attempt to acquire, renew or release the lease.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    /// The API request failed.
    #[error("lease {lease}: {source}")]
    Api {
        /// `namespace/name` of the lease.
        lease: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
    /// The lease changed between our read and our write (409), but we are
    /// still its holder (someone else touched it): retry.
    #[error("lease {0}: conflicting update, still held by us")]
    Conflict(String),
}

/// A record as this candidate last saw it, and when (by its own clock) it
/// last saw it change.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// The Lease's spec.
    pub spec: LeaseSpec,
    /// When this candidate first saw this exact spec.
    pub at: Timestamp,
}

impl Observation {
    /// Records `spec` seen at `now`: the observation time moves only when the
    /// spec differs from the one already observed (client-go compares the raw
    /// record), so an unchanged, unrenewed record ages by this clock.
    pub fn observe(previous: Option<Observation>, spec: LeaseSpec, now: Timestamp) -> Observation {
        match previous {
            Some(p) if p.spec == spec => p,
            _ => Observation { spec, at: now },
        }
    }

    /// The holder (empty if none).
    pub fn holder(&self) -> &str {
        self.spec.holder_identity.as_deref().unwrap_or("")
    }
}

/// What a candidate should do given what it has observed.
#[derive(Clone, Debug, PartialEq)]
pub enum Attempt {
    /// Someone else holds a lease that is still valid by the observed time.
    HeldByOther {
        /// Its holder.
        holder: String,
    },
    /// Write this spec (create the lease if none was observed, else update).
    Write(LeaseSpec),
}

/// `now` truncated to microseconds (what a `MicroTime` keeps on the wire), so
/// a spec we write compares equal to the one the server answers.
pub fn micro_now(now: Timestamp) -> Timestamp {
    let micros = now.as_microsecond();
    Timestamp::from_microsecond(micros).unwrap_or(now)
}

/// client-go's `isLeaseValid`: the observed record's lease duration, counted
/// from when it was observed, has not yet run out at `now`.
pub fn is_lease_valid(observed: &Observation, now: Timestamp) -> bool {
    let secs = i64::from(observed.spec.lease_duration_seconds.unwrap_or(0));
    match observed.at.checked_add(SignedDuration::from_secs(secs)) {
        Ok(expiry) => expiry > now,
        Err(_) => true,
    }
}

fn spec(
    identity: &str,
    lease_duration: Duration,
    acquire: Timestamp,
    renew: Timestamp,
    transitions: i32,
) -> LeaseSpec {
    LeaseSpec {
        holder_identity: Some(identity.to_owned()),
        lease_duration_seconds: Some(i32::try_from(lease_duration.as_secs()).unwrap_or(i32::MAX)),
        acquire_time: Some(MicroTime(acquire)),
        renew_time: Some(MicroTime(renew)),
        lease_transitions: Some(transitions),
        ..LeaseSpec::default()
    }
}

/// client-go's `tryAcquireOrRenew` decision. `observed` is `None` when the
/// lease does not exist (create it, `leaseTransitions: 0`). A record held by
/// us is renewed (same `acquireTime` and `leaseTransitions`, new
/// `renewTime`); a record with another, still valid holder is left alone;
/// otherwise (no holder, or expired by observed time) it is taken over with
/// `leaseTransitions + 1` and `acquireTime = renewTime = now`.
pub fn attempt(
    identity: &str,
    observed: Option<&Observation>,
    now: Timestamp,
    lease_duration: Duration,
) -> Attempt {
    let now = micro_now(now);
    let Some(obs) = observed else {
        return Attempt::Write(spec(identity, lease_duration, now, now, 0));
    };
    let holder = obs.holder();
    let transitions = obs.spec.lease_transitions.unwrap_or(0);
    if holder == identity {
        let acquired = obs.spec.acquire_time.as_ref().map_or(now, |t| t.0);
        return Attempt::Write(spec(identity, lease_duration, acquired, now, transitions));
    }
    if !holder.is_empty() && is_lease_valid(obs, now) {
        return Attempt::HeldByOther {
            holder: holder.to_owned(),
        };
    }
    Attempt::Write(spec(
        identity,
        lease_duration,
        now,
        now,
        transitions.saturating_add(1),
    ))
}

/// client-go's `release`: no holder, `leaseDurationSeconds: 1`,
/// `acquireTime = renewTime = now`, the transitions kept.
pub fn release_spec(observed: &Observation, now: Timestamp) -> LeaseSpec {
    let now = micro_now(now);
    LeaseSpec {
        holder_identity: Some(String::new()),
        lease_duration_seconds: Some(1),
        acquire_time: Some(MicroTime(now)),
        renew_time: Some(MicroTime(now)),
        lease_transitions: Some(observed.spec.lease_transitions.unwrap_or(0)),
        ..LeaseSpec::default()
    }
}

/// client-go's `wait.Jitter(period, factor)`: `period + r·factor·period`,
/// `r` in [0, 1).
pub fn jitter(period: Duration, factor: f64, r: f64) -> Duration {
    period + period.mul_f64((factor * r).max(0.0))
}

/// The result of one acquire-or-renew attempt that reached the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Held {
    /// We hold the lease (acquired or renewed).
    ByUs,
    /// Someone else holds it.
    ByOther(String),
}

/// One candidate for one lease. Run it with [`LeaderElector::run`]; watch
/// [`LeaderElector::subscribe`] to know whether it leads.
pub struct LeaderElector {
    api: Api<Lease>,
    name: String,
    identity: String,
    config: LeaderConfig,
    clock: SharedClock,
    observed: Option<Observation>,
    lease: Option<Lease>,
    leading: watch::Sender<bool>,
    rng: u64,
}

impl std::fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("name", &self.name)
            .field("identity", &self.identity)
            .field("config", &self.config)
            .field("observed", &self.observed)
            .finish_non_exhaustive()
    }
}

impl LeaderElector {
    /// A candidate `identity` for the lease `name` of `api`'s namespace.
    pub fn new(
        api: Api<Lease>,
        name: impl Into<String>,
        identity: impl Into<String>,
        config: LeaderConfig,
        clock: SharedClock,
    ) -> Self {
        let name = name.into();
        let identity = identity.into();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        identity.hash(&mut h);
        let (leading, _) = watch::channel(false);
        LeaderElector {
            api,
            name,
            identity,
            config,
            clock,
            observed: None,
            lease: None,
            leading,
            rng: h.finish() | 1,
        }
    }

    /// Whether this candidate leads, now and as it changes. It turns `false`
    /// the moment leadership is lost, and when the elector stops.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.leading.subscribe()
    }

    /// This candidate's identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The record as last observed.
    pub fn observed(&self) -> Option<&Observation> {
        self.observed.as_ref()
    }

    fn describe(&self) -> String {
        format!("{}/{}", self.api.namespace().unwrap_or_default(), self.name)
    }

    fn api_err(&self, source: kube::Error) -> LeaderError {
        LeaderError::Api {
            lease: self.describe(),
            source,
        }
    }

    fn is_leader(&self) -> bool {
        self.observed
            .as_ref()
            .is_some_and(|o| o.holder() == self.identity)
    }

    fn next_random(&mut self) -> f64 {
        // xorshift64: enough to spread retries; deterministic per identity.
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }

    fn record_write(&mut self, lease: Lease) {
        let spec = lease.spec.clone().unwrap_or_default();
        self.observed = Some(Observation {
            spec,
            at: self.clock.now(),
        });
        self.lease = Some(lease);
    }

    async fn write(&mut self, spec: LeaseSpec) -> Result<Lease, kube::Error> {
        match self.lease.clone() {
            Some(mut lease) => {
                lease.spec = Some(spec);
                self.api
                    .replace(&self.name, &PostParams::default(), &lease)
                    .await
            }
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(spec),
                };
                self.api.create(&PostParams::default(), &lease).await
            }
        }
    }

    /// Reads the lease and folds it into the observation; `Ok(false)` if it
    /// does not exist.
    async fn read(&mut self) -> Result<bool, LeaderError> {
        match self.api.get_opt(&self.name).await {
            Ok(Some(lease)) => {
                let spec = lease.spec.clone().unwrap_or_default();
                self.observed = Some(Observation::observe(
                    self.observed.take(),
                    spec,
                    self.clock.now(),
                ));
                self.lease = Some(lease);
                Ok(true)
            }
            Ok(None) => {
                self.lease = None;
                self.observed = None;
                Ok(false)
            }
            Err(e) => Err(self.api_err(e)),
        }
    }

    /// client-go's `tryAcquireOrRenew`: one attempt. `Ok(ByOther)` means
    /// someone else holds the lease (we may not lead); errors are transient.
    pub async fn try_acquire_or_renew(&mut self) -> Result<Held, LeaderError> {
        let now = self.clock.now();
        // 1. Fast path: the leader updates optimistically from its last write.
        if self.is_leader()
            && self.lease.is_some()
            && let Some(obs) = self.observed.as_ref()
            && is_lease_valid(obs, now)
            && let Attempt::Write(spec) =
                attempt(&self.identity, Some(obs), now, self.config.lease_duration)
        {
            match self.write(spec).await {
                Ok(lease) => {
                    self.record_write(lease);
                    return Ok(Held::ByUs);
                }
                Err(e) => {
                    tracing::info!(lease = %self.describe(), error = %e, "failed to update lease optimistically, falling back to slow path");
                }
            }
        }
        // 2. Read (or create) the record.
        let exists = self.read().await?;
        let now = self.clock.now();
        let decision = attempt(
            &self.identity,
            self.observed.as_ref().filter(|_| exists),
            now,
            self.config.lease_duration,
        );
        let spec = match decision {
            Attempt::HeldByOther { holder } => {
                tracing::debug!(lease = %self.describe(), %holder, "lease is held by another candidate and has not yet expired");
                return Ok(Held::ByOther(holder));
            }
            Attempt::Write(spec) => spec,
        };
        // 3. Write with the resourceVersion just read: a 409 means someone
        //    else wrote in between; read again to see who holds it now.
        match self.write(spec).await {
            Ok(lease) => {
                self.record_write(lease);
                Ok(Held::ByUs)
            }
            Err(kube::Error::Api(s)) if s.is_conflict() || s.is_already_exists() => {
                self.read().await?;
                match self.observed.as_ref().map(|o| o.holder().to_owned()) {
                    Some(h) if h == self.identity => Err(LeaderError::Conflict(self.describe())),
                    Some(h) => Ok(Held::ByOther(h)),
                    None => Err(LeaderError::Conflict(self.describe())),
                }
            }
            Err(e) => Err(self.api_err(e)),
        }
    }

    /// client-go's `release`: if we hold the lease, give it up.
    pub async fn release(&mut self) -> Result<(), LeaderError> {
        if !self.is_leader() || self.lease.is_none() {
            return Ok(());
        }
        let Some(obs) = self.observed.as_ref() else {
            return Ok(());
        };
        let spec = release_spec(obs, self.clock.now());
        let lease = self.write(spec).await.map_err(|e| self.api_err(e))?;
        self.record_write(lease);
        tracing::info!(lease = %self.describe(), identity = %self.identity, "released lease");
        Ok(())
    }

    fn set_leading(&self, leading: bool) {
        self.leading.send_replace(leading);
    }

    /// Campaigns and leads until `shutdown` completes: acquires the lease
    /// (retrying every retry period, jittered), leads while renewals succeed,
    /// and after losing the lease becomes a candidate again. On shutdown a
    /// leader stops leading and then, with `release_on_cancel`, releases.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                () = self.acquire() => {}
            }
            self.set_leading(true);
            tokio::select! {
                () = &mut shutdown => break,
                () = self.renew() => {}
            }
            self.set_leading(false);
        }
        let was_leading = *self.leading.borrow();
        self.set_leading(false);
        if was_leading && self.config.release_on_cancel {
            let deadline = self.config.renew_deadline;
            match tokio::time::timeout(deadline, self.release()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "failed to release lease"),
                Err(_) => tracing::warn!(lease = %self.describe(), "timed out releasing lease"),
            }
        }
    }

    /// client-go's `acquire`: returns once this candidate holds the lease.
    async fn acquire(&mut self) {
        tracing::info!(lease = %self.name, identity = %self.identity, "attempting to acquire leader lease");
        loop {
            match self.try_acquire_or_renew().await {
                Ok(Held::ByUs) => {
                    tracing::info!(lease = %self.describe(), identity = %self.identity, "successfully acquired lease");
                    return;
                }
                Ok(Held::ByOther(_)) => {}
                Err(e) => tracing::warn!(error = %e, "failed to acquire lease"),
            }
            let r = self.next_random();
            tokio::time::sleep(jitter(self.config.retry_period, JITTER_FACTOR, r)).await;
        }
    }

    /// client-go's `renew`: renews every retry period; returns (leadership
    /// lost) when the renew deadline passed since the last renewal or another
    /// holder is seen. Each request is bounded by the deadline.
    async fn renew(&mut self) {
        let mut renewed = Instant::now();
        loop {
            tokio::time::sleep(self.config.retry_period).await;
            let deadline = renewed + self.config.renew_deadline;
            match tokio::time::timeout_at(deadline, self.try_acquire_or_renew()).await {
                Ok(Ok(Held::ByUs)) => {
                    renewed = Instant::now();
                    tracing::trace!(lease = %self.describe(), "successfully renewed lease");
                }
                Ok(Ok(Held::ByOther(holder))) => {
                    tracing::warn!(lease = %self.describe(), %holder, "leader lost: the lease has another holder");
                    return;
                }
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "failed to renew lease");
                    if Instant::now() + self.config.retry_period > deadline {
                        tracing::warn!(lease = %self.describe(), "leader lost: renew deadline passed");
                        return;
                    }
                }
                Err(_) => {
                    tracing::warn!(lease = %self.describe(), "leader lost: renew deadline passed");
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().expect("time")
    }

    fn obs(holder: &str, renew: &str, transitions: i32, at: &str) -> Observation {
        Observation {
            spec: spec(
                holder,
                DEFAULT_LEASE_DURATION,
                t("2026-11-29T09:00:00Z"),
                t(renew),
                transitions,
            ),
            at: t(at),
        }
    }

    #[test]
    fn no_lease_creates_with_zero_transitions() {
        let now = t("2026-11-29T10:00:00.123456789Z");
        let Attempt::Write(s) = attempt("a", None, now, DEFAULT_LEASE_DURATION) else {
            panic!("should write");
        };
        let micro = t("2026-11-29T10:00:00.123456Z");
        assert_eq!(s, spec("a", DEFAULT_LEASE_DURATION, micro, micro, 0));
        assert_eq!(s.lease_duration_seconds, Some(15));
        assert_eq!(s.strategy, None);
        assert_eq!(s.preferred_holder, None);
    }

    #[test]
    fn valid_lease_of_another_is_left_alone() {
        let o = obs("b", "2026-11-29T10:00:00Z", 3, "2026-11-29T10:00:00Z");
        let now = t("2026-11-29T10:00:14.999Z");
        assert_eq!(
            attempt("a", Some(&o), now, DEFAULT_LEASE_DURATION),
            Attempt::HeldByOther { holder: "b".into() }
        );
    }

    #[test]
    fn expired_lease_is_taken_over_with_a_transition() {
        let o = obs("b", "2026-11-29T10:00:00Z", 3, "2026-11-29T10:00:00Z");
        let now = t("2026-11-29T10:00:15Z");
        let Attempt::Write(s) = attempt("a", Some(&o), now, DEFAULT_LEASE_DURATION) else {
            panic!("should take over");
        };
        assert_eq!(s, spec("a", DEFAULT_LEASE_DURATION, now, now, 4));
    }

    #[test]
    fn expiry_counts_from_observation_not_from_renew_time() {
        // The holder's clock runs an hour behind: its renewTime looks ancient,
        // but we saw the record change just now, so it is valid for 15 s more.
        let o = obs("b", "2026-11-29T09:00:00Z", 0, "2026-11-29T10:00:00Z");
        let now = t("2026-11-29T10:00:10Z");
        assert!(is_lease_valid(&o, now));
        assert!(matches!(
            attempt("a", Some(&o), now, DEFAULT_LEASE_DURATION),
            Attempt::HeldByOther { .. }
        ));
        // And the other way round: a renewTime in the future (holder's clock
        // ahead) does not extend the lease past our observation + 15 s.
        let o = obs("b", "2026-11-29T11:00:00Z", 0, "2026-11-29T10:00:00Z");
        assert!(!is_lease_valid(&o, t("2026-11-29T10:00:15Z")));
    }

    #[test]
    fn observation_time_moves_only_when_the_record_changes() {
        let first = obs("b", "2026-11-29T10:00:00Z", 0, "2026-11-29T10:00:00Z");
        let same = Observation::observe(
            Some(first.clone()),
            first.spec.clone(),
            t("2026-11-29T10:00:09Z"),
        );
        assert_eq!(same.at, t("2026-11-29T10:00:00Z"));
        let renewed = spec(
            "b",
            DEFAULT_LEASE_DURATION,
            t("2026-11-29T09:00:00Z"),
            t("2026-11-29T10:00:02Z"),
            0,
        );
        let moved = Observation::observe(Some(first), renewed, t("2026-11-29T10:00:09Z"));
        assert_eq!(moved.at, t("2026-11-29T10:00:09Z"));
    }

    #[test]
    fn own_lease_is_renewed_keeping_acquire_time_and_transitions() {
        let o = obs("a", "2026-11-29T10:00:00Z", 2, "2026-11-29T10:00:00Z");
        let now = t("2026-11-29T10:00:02Z");
        let Attempt::Write(s) = attempt("a", Some(&o), now, DEFAULT_LEASE_DURATION) else {
            panic!("should renew");
        };
        assert_eq!(
            s,
            spec(
                "a",
                DEFAULT_LEASE_DURATION,
                t("2026-11-29T09:00:00Z"),
                now,
                2
            )
        );
    }

    #[test]
    fn released_lease_is_taken_at_once() {
        let held = obs("b", "2026-11-29T10:00:00Z", 5, "2026-11-29T10:00:00Z");
        let released = Observation {
            spec: release_spec(&held, t("2026-11-29T10:00:01Z")),
            at: t("2026-11-29T10:00:01Z"),
        };
        assert_eq!(released.holder(), "");
        assert_eq!(released.spec.lease_duration_seconds, Some(1));
        assert_eq!(released.spec.lease_transitions, Some(5));
        let now = t("2026-11-29T10:00:01.5Z");
        let Attempt::Write(s) = attempt("a", Some(&released), now, DEFAULT_LEASE_DURATION) else {
            panic!("should acquire");
        };
        assert_eq!(s.holder_identity.as_deref(), Some("a"));
        assert_eq!(s.lease_transitions, Some(6));
    }

    #[test]
    fn missing_fields_read_as_client_go_zero_values() {
        let o = Observation {
            spec: LeaseSpec {
                holder_identity: Some("b".into()),
                ..LeaseSpec::default()
            },
            at: t("2026-11-29T10:00:00Z"),
        };
        // leaseDurationSeconds unset = 0: already expired.
        assert!(!is_lease_valid(&o, t("2026-11-29T10:00:00Z")));
        let Attempt::Write(s) = attempt(
            "a",
            Some(&o),
            t("2026-11-29T10:00:00Z"),
            DEFAULT_LEASE_DURATION,
        ) else {
            panic!("should take over");
        };
        assert_eq!(s.lease_transitions, Some(1));
    }

    #[test]
    fn jitter_spans_period_to_period_times_one_plus_factor() {
        let p = Duration::from_secs(2);
        assert_eq!(jitter(p, JITTER_FACTOR, 0.0), p);
        assert_eq!(jitter(p, JITTER_FACTOR, 0.5), Duration::from_millis(3200));
        assert!(jitter(p, JITTER_FACTOR, 0.999_999) < Duration::from_millis(4400));
    }
}
