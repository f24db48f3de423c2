//! Leader election against the embedded API server in virtual time: two
//! candidates on one Lease, sampled every 250 ms over minutes — never two
//! leaders, a crashed leader's lease taken over only after it expired by the
//! follower's observed time, a released lease taken at once, and the Lease
//! fields as client-go writes them.

mod support;

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, PostParams};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use exitplan_runtime::leader::{LeaderConfig, LeaderElector};
use support::Cluster;

const LEASE: &str = "exitplan-controller";
const TICK: Duration = Duration::from_millis(250);

struct Candidate {
    id: &'static str,
    leading: watch::Receiver<bool>,
    task: Option<JoinHandle<()>>,
    stop: Option<oneshot::Sender<()>>,
}

impl Candidate {
    fn start(cluster: &Cluster, id: &'static str) -> Candidate {
        let elector = LeaderElector::new(
            leases(cluster),
            LEASE,
            id,
            LeaderConfig::default(),
            cluster.clock.clone(),
        );
        let leading = elector.subscribe();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(elector.run(async move {
            let _ = stopped.await;
        }));
        Candidate {
            id,
            leading,
            task: Some(task),
            stop: Some(stop),
        }
    }

    /// Leading as far as its process is concerned (a crashed one does not).
    fn leads(&self) -> bool {
        self.task.is_some() && *self.leading.borrow()
    }

    /// A crash: the task is gone, nothing is released.
    fn crash(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }

    /// A clean stop (SIGTERM): the elector releases the lease.
    async fn stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            t.await.expect("elector task");
        }
    }
}

fn leases(cluster: &Cluster) -> Api<Lease> {
    Api::namespaced(cluster.client.clone(), "kube-system")
}

async fn lease(cluster: &Cluster) -> Lease {
    leases(cluster).get(LEASE).await.expect("lease")
}

fn holder(l: &Lease) -> String {
    l.spec
        .as_ref()
        .and_then(|s| s.holder_identity.clone())
        .unwrap_or_default()
}

fn renew_time(l: &Lease) -> Timestamp {
    l.spec
        .as_ref()
        .and_then(|s| s.renew_time.as_ref())
        .expect("renewTime")
        .0
}

fn acquire_time(l: &Lease) -> Timestamp {
    l.spec
        .as_ref()
        .and_then(|s| s.acquire_time.as_ref())
        .expect("acquireTime")
        .0
}

fn transitions(l: &Lease) -> i32 {
    l.spec
        .as_ref()
        .and_then(|s| s.lease_transitions)
        .expect("leaseTransitions")
}

fn secs(d: jiff::SignedDuration) -> f64 {
    d.as_secs_f64()
}

/// Samples every tick for `span`: asserts never more than one leader, and
/// returns the leaders seen at each tick.
async fn sample(cands: &[&Candidate], span: Duration) -> Vec<Option<&'static str>> {
    let mut seen = Vec::new();
    let end = tokio::time::Instant::now() + span;
    while tokio::time::Instant::now() < end {
        let leaders: Vec<_> = cands.iter().filter(|c| c.leads()).map(|c| c.id).collect();
        assert!(leaders.len() <= 1, "two leaders at once: {leaders:?}");
        seen.push(leaders.first().copied());
        tokio::time::sleep(TICK).await;
    }
    seen
}

#[tokio::test(start_paused = true)]
async fn one_leader_at_a_time_and_takeover_only_after_expiry() {
    let cluster = Cluster::start(&[], &[]).await;
    let mut a = Candidate::start(&cluster, "a");
    let mut b = Candidate::start(&cluster, "b");

    // Both race to create the lease: exactly one wins, at once.
    let first = sample(&[&a, &b], Duration::from_secs(1)).await;
    let winner = first.last().copied().flatten().expect("a leader after 1 s");
    // Then three minutes with exactly one leader, always the same one.
    let steady = sample(&[&a, &b], Duration::from_secs(180)).await;
    assert_eq!(steady.len(), 720);
    assert!(steady.iter().all(|l| *l == Some(winner)), "{steady:?}");

    let l = lease(&cluster).await;
    assert_eq!(holder(&l), winner);
    let spec = l.spec.clone().expect("spec");
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert_eq!(spec.lease_transitions, Some(0), "created, never moved");
    assert_eq!(spec.strategy, None);
    assert_eq!(spec.preferred_holder, None);
    assert_eq!(
        acquire_time(&l),
        support::START.parse::<Timestamp>().expect("start"),
        "acquired at the start"
    );
    let age = secs(cluster.now().duration_since(renew_time(&l)));
    assert!(age <= 2.0, "renewed every 2 s, last {age} s ago");

    // The leader crashes (no release). The follower keeps out until the lease
    // has expired by its own observation of the last renewal.
    let (leader, follower) = if winner == "a" {
        (&mut a, &mut b)
    } else {
        (&mut b, &mut a)
    };
    let last_renew = renew_time(&lease(&cluster).await);
    leader.crash();
    let crashed_at = cluster.now();
    let mut took_over = None;
    for _ in 0..(30 * 4) {
        if follower.leads() {
            took_over = Some(cluster.now());
            break;
        }
        tokio::time::sleep(TICK).await;
    }
    let took_over = took_over.expect("the follower takes over within 30 s");
    let after_renew = secs(took_over.duration_since(last_renew));
    assert!(
        after_renew >= 15.0,
        "took over {after_renew} s after the last renewal: before the lease expired"
    );
    // Observed at most one retry (2 s + 120 % jitter) after the renewal, then
    // tried at most one jittered retry after expiry, plus a sampling tick.
    assert!(after_renew <= 15.0 + 4.4 + 4.4 + 0.25, "{after_renew}");
    assert!(secs(took_over.duration_since(crashed_at)) < 25.0);
    let l = lease(&cluster).await;
    assert_eq!(holder(&l), follower.id);
    assert_eq!(transitions(&l), 1, "one transition");
    assert!(acquire_time(&l) > last_renew);
    assert!(acquire_time(&l) <= took_over);

    // A third candidate joins; the new leader keeps the lease for minutes.
    let follower_id = follower.id;
    let c = Candidate::start(&cluster, "c");
    let steady = sample(&[&a, &b, &c], Duration::from_secs(120)).await;
    assert!(steady.iter().all(|l| *l == Some(follower_id)), "{steady:?}");
    let acquired = acquire_time(&lease(&cluster).await);

    // A clean stop releases the lease; the waiting candidate takes it well
    // before a lease duration.
    let mut c = c;
    let (leader, _) = if follower_id == "a" {
        (&mut a, &mut b)
    } else {
        (&mut b, &mut a)
    };
    leader.stop().await;
    assert!(!*leader.leading.borrow(), "stops leading before releasing");
    let released = lease(&cluster).await;
    assert_eq!(holder(&released), "");
    let rs = released.spec.clone().expect("spec");
    assert_eq!(rs.lease_duration_seconds, Some(1));
    assert_eq!(rs.lease_transitions, Some(1));
    assert_eq!(acquire_time(&released), renew_time(&released));
    assert!(acquire_time(&released) > acquired);
    let stopped_at = cluster.now();
    let mut c_leads = None;
    for _ in 0..(20 * 4) {
        if c.leads() {
            c_leads = Some(cluster.now());
            break;
        }
        tokio::time::sleep(TICK).await;
    }
    let c_leads = c_leads.expect("c takes the released lease");
    let wait = secs(c_leads.duration_since(stopped_at));
    assert!(wait <= 4.4 + 0.25, "released lease taken after {wait} s");
    let l = lease(&cluster).await;
    assert_eq!(holder(&l), "c");
    assert_eq!(transitions(&l), 2);
    assert_eq!(
        l.spec.as_ref().and_then(|s| s.lease_duration_seconds),
        Some(15)
    );
    let steady = sample(&[&a, &b, &c], Duration::from_secs(60)).await;
    assert!(steady.iter().all(|l| *l == Some("c")), "{steady:?}");
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_leader_that_sees_another_holder_stops_at_once() {
    let cluster = Cluster::start(&[], &[]).await;
    let a = Candidate::start(&cluster, "a");
    let _ = sample(&[&a], Duration::from_secs(5)).await;
    assert!(a.leads());

    // Someone else overwrites the lease (with the right resourceVersion).
    let mut l = lease(&cluster).await;
    if let Some(s) = l.spec.as_mut() {
        s.holder_identity = Some("intruder".into());
    }
    leases(&cluster)
        .replace(LEASE, &PostParams::default(), &l)
        .await
        .expect("replace");
    let overwritten = cluster.now();
    let mut stopped = None;
    for _ in 0..(12 * 4) {
        if !a.leads() {
            stopped = Some(cluster.now());
            break;
        }
        tokio::time::sleep(TICK).await;
    }
    let stopped = stopped.expect("a stops leading");
    let after = secs(stopped.duration_since(overwritten));
    assert!(
        after <= 2.0 + 0.25,
        "stops at its next renewal, not after the renew deadline: {after} s"
    );
    // It does not write over the intruder while the intruder's lease is valid.
    assert_eq!(holder(&lease(&cluster).await), "intruder");
    // The intruder never renews: a takes the lease back once it expired.
    let back = sample(&[&a], Duration::from_secs(25)).await;
    assert_eq!(back.last().copied().flatten(), Some("a"));
    let l = lease(&cluster).await;
    assert_eq!(holder(&l), "a");
    assert_eq!(transitions(&l), 1);
}

/// A client on the cluster's router whose requests hang forever while
/// `cut` is set: a candidate partitioned from the API server.
fn partitionable_client(
    cluster: &Cluster,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> kube::Client {
    use tower::ServiceExt as _;
    let router = cluster.server.router();
    let svc = tower::service_fn(move |req| {
        let router = router.clone();
        let cut = cut.clone();
        async move {
            if cut.load(std::sync::atomic::Ordering::SeqCst) {
                std::future::pending::<()>().await;
            }
            router.oneshot(req).await
        }
    });
    kube::Client::new(svc, "default")
}

#[tokio::test(start_paused = true)]
async fn a_partitioned_leader_stops_before_the_other_takes_over() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let cluster = Cluster::start(&[], &[]).await;
    let cut = Arc::new(AtomicBool::new(false));
    let elector = LeaderElector::new(
        Api::namespaced(partitionable_client(&cluster, cut.clone()), "kube-system"),
        LEASE,
        "a",
        LeaderConfig::default(),
        cluster.clock.clone(),
    );
    let a_leading = elector.subscribe();
    let a_task = tokio::spawn(elector.run(std::future::pending()));
    let a = Candidate {
        id: "a",
        leading: a_leading,
        task: Some(a_task),
        stop: None,
    };
    let _ = sample(&[&a], Duration::from_secs(3)).await;
    assert!(a.leads());
    let mut b = Candidate::start(&cluster, "b");
    let _ = sample(&[&a, &b], Duration::from_secs(30)).await;
    assert!(a.leads() && !b.leads());

    // Partition a: its renewals hang. It must stop within the renew deadline
    // of its last renewal; b must not lead before the lease expired.
    let last_renew = renew_time(&lease(&cluster).await);
    cut.store(true, Ordering::SeqCst);
    let mut a_stopped = None;
    let mut b_started = None;
    let end = tokio::time::Instant::now() + Duration::from_secs(40);
    while tokio::time::Instant::now() < end {
        assert!(!(a.leads() && b.leads()), "two leaders at once");
        if a_stopped.is_none() && !a.leads() {
            a_stopped = Some(cluster.now());
        }
        if b_started.is_none() && b.leads() {
            b_started = Some(cluster.now());
        }
        tokio::time::sleep(TICK).await;
    }
    let a_stopped = secs(a_stopped.expect("a stops").duration_since(last_renew));
    let b_started = secs(b_started.expect("b leads").duration_since(last_renew));
    assert!(
        a_stopped <= 10.0 + 0.25,
        "a led {a_stopped} s without renewing"
    );
    assert!(
        b_started >= 15.0,
        "b took over {b_started} s after the last renewal"
    );
    assert!(a_stopped < b_started);
    let l = lease(&cluster).await;
    assert_eq!(holder(&l), "b");
    assert_eq!(transitions(&l), 1);
    b.stop().await;
}
