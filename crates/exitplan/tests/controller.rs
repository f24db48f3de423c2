//! `exitplan controller` end to end against `exitplan up`: two replicas, one
//! Lease holder, both serving /healthz and /metrics; SIGTERM on the leader
//! releases the lease and the standby takes over; a deposed leader exits 1.

mod cluster;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use cluster::{Up, eventually, http_get, sigterm, temp_dir};

const LEASE: &str =
    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/exitplan-controller";

/// Starts a replica; returns it and its metrics address.
fn controller(up: &Up, identity: &str) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_exitplan"))
        .args([
            "controller",
            "--metrics-addr",
            "127.0.0.1:0",
            "--identity",
            identity,
        ])
        .arg("--kubeconfig")
        .arg(&up.kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn exitplan controller");
    let stdout = child.stdout.take().expect("stdout");
    let first = BufReader::new(stdout)
        .lines()
        .next()
        .expect("a line")
        .expect("utf-8");
    let addr = first
        .strip_prefix("exitplan controller serving metrics on http://")
        .unwrap_or_else(|| panic!("unexpected first line: {first}"))
        .to_owned();
    (child, addr)
}

fn holder(up: &Up) -> Option<String> {
    up.get(LEASE)?["spec"]["holderIdentity"]
        .as_str()
        .map(str::to_owned)
}

/// The replica's own view: `leader_election_master_status` 1 or 0.
fn leads(addr: &str) -> Option<bool> {
    let (code, head, body) = http_get(addr, "/metrics");
    assert_eq!(code, 200);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text; version=1.0.0; charset=utf-8"),
        "{head}"
    );
    let line = body
        .lines()
        .find(|l| l.starts_with("leader_election_master_status{name=\"exitplan-controller\"}"))?;
    Some(line.ends_with(" 1"))
}

#[cfg(unix)]
#[test]
fn two_replicas_one_leader_and_failover_on_sigterm() {
    let dir = temp_dir("controller");
    let up = Up::start(&dir);
    let (one, one_addr) = controller(&up, "one");
    let (two, two_addr) = controller(&up, "two");

    for addr in [&one_addr, &two_addr] {
        let (code, _, body) = http_get(addr, "/healthz");
        assert_eq!((code, body.as_str()), (200, "ok"));
    }

    // Exactly one holds the Lease, and the replicas agree on which.
    let leader = eventually("one replica leads", Duration::from_secs(20), || {
        let h = holder(&up)?;
        let (l1, l2) = (leads(&one_addr)?, leads(&two_addr)?);
        match (h.as_str(), l1, l2) {
            ("one", true, false) | ("two", false, true) => Some(h),
            _ => None,
        }
    });
    let lease = up.get(LEASE).expect("lease");
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 15);
    assert_eq!(lease["spec"]["leaseTransitions"], 0);
    assert!(lease["spec"]["acquireTime"].is_string());
    assert!(lease["spec"]["renewTime"].is_string());

    // SIGTERM the leader: it releases, the standby takes over.
    let (stopped, standby, standby_addr, standby_id) = if leader == "one" {
        (one, two, two_addr, "two")
    } else {
        (two, one, one_addr, "one")
    };
    sigterm(stopped);
    // It released before exiting (no waiting out the 15 s lease).
    let released = holder(&up).expect("holder");
    assert!(
        released.is_empty() || released == standby_id,
        "released before exit: {released:?}"
    );
    eventually("the standby takes over", Duration::from_secs(20), || {
        (holder(&up).as_deref() == Some(standby_id) && leads(&standby_addr) == Some(true))
            .then_some(())
    });
    let lease = up.get(LEASE).expect("lease");
    assert_eq!(lease["spec"]["leaseTransitions"], 1);
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 15);

    // Someone else takes the lease: the leader stops at once and exits 1 (a
    // fresh process campaigns again), leaving the lease to its new holder.
    let mut taken = lease.clone();
    taken["spec"]["holderIdentity"] = "intruder".into();
    let (code, body) = up.request("PUT", LEASE, "application/json", Some(&taken));
    assert_eq!(code, 200, "{body}");
    let mut standby = standby;
    let exit = eventually("the deposed leader exits", Duration::from_secs(20), || {
        standby.try_wait().expect("wait")
    });
    assert_eq!(exit.code(), Some(1), "exits 1 on a lost lease");
    assert_eq!(holder(&up).as_deref(), Some("intruder"));
    up.stop();
}
