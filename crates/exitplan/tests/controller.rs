//! `exitplan controller` end to end against the bare API server of `exitplan
//! up --bare` (which runs no controllers, so whatever happens to the
//! EvictionRequest is the replicas' work): two replicas, one Lease holder,
//! both serving /healthz and /metrics; the leader's evictionrequest-controller
//! creates the Eviction and its imperative evictor evicts the pod (refused
//! once by a budget, counted and backed off; the test plays the disruption
//! controller and the kubelet), the leader's /metrics carry the names of
//! eviction spec §9 while the standby's show no work; SIGTERM on the leader releases the
//! lease and the standby takes over (resyncing without writing); a deposed
//! leader exits 1.

mod cluster;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use cluster::{Up, eventually, http_get, sigterm, temp_dir};
use serde_json::{Value, json};

const LEASE: &str =
    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/exitplan-controller";
const POD: &str = "/api/v1/namespaces/default/pods/web";
const REQUEST: &str = "/apis/lifecycle.k8s.io/v1alpha1/namespaces/default/evictionrequests/req";
const EVICTION: &str = "/apis/lifecycle.k8s.io/v1alpha1/namespaces/default/evictions/pod-1-web";
const PDB: &str = "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web";
const EVICTOR: &str = "imperative-eviction.k8s.io/evictor";
const REQUESTER: &str = "example.com/drain";

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

/// The replica's /metrics body.
fn metrics(addr: &str) -> String {
    let (code, _, body) = http_get(addr, "/metrics");
    assert_eq!(code, 200);
    body
}

/// The value of the series `name{labels}` in `body`.
fn series(body: &str, name: &str, labels: &str) -> Option<String> {
    let prefix = format!("{name}{{{labels}}} ");
    body.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(str::to_owned)
}

/// `(status, reason)` of the condition `type_` in `obj.status.conditions`.
fn condition(obj: &Value, type_: &str) -> Option<(String, String)> {
    let c = obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?;
    Some((
        c["status"].as_str()?.to_owned(),
        c["reason"].as_str()?.to_owned(),
    ))
}

fn cond(status: &str, reason: &str) -> Option<(String, String)> {
    Some((status.to_owned(), reason.to_owned()))
}

/// A Running, Ready pod `web` bound to `node-1` (so its deletion is graceful
/// and waits for the kubelet), a budget `web` that blocks its eviction, and
/// an EvictionRequest `req` for it.
fn pod_and_request(up: &Up) -> String {
    up.create(
        "/api/v1/nodes",
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}),
    );
    let pod = up.create(
        "/api/v1/namespaces/default/pods",
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
               "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "i"}]}}),
    );
    let uid = pod["metadata"]["uid"].as_str().expect("uid").to_owned();
    up.merge_patch(
        &format!("{POD}/status"),
        json!({"status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-29T10:00:00Z"}
        ]}}),
    );
    // A budget that allows no disruption (its status written as the
    // disruption controller would: that controller does not run here).
    up.create(
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
               "metadata": {"name": "web", "namespace": "default"},
               "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}),
    );
    up.merge_patch(
        &format!("{PDB}/status"),
        json!({"status": {"observedGeneration": 1, "disruptionsAllowed": 0,
                          "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}}),
    );
    up.create(
        "/apis/lifecycle.k8s.io/v1alpha1/namespaces/default/evictionrequests",
        json!({"apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "EvictionRequest",
               "metadata": {"name": "req", "namespace": "default"},
               "spec": {"target": {"pod": {"name": "web", "uid": uid}},
                        "requester": REQUESTER, "intent": "Eviction"}}),
    );
    uid
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
    let uid = pod_and_request(&up);
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
    let (leader_addr, standby_addr) = if leader == "one" {
        (&one_addr, &two_addr)
    } else {
        (&two_addr, &one_addr)
    };

    // The leader's controller creates the Eviction and activates the
    // evictor, whose first /eviction call the budget refuses (429): counted
    // in its §9 counter and reported in its status.
    let limit = Duration::from_secs(20);
    let failed = r#"namespace="default",eviction="pod-1-web",pod="web""#;
    eventually("the refused eviction is counted", limit, || {
        series(
            &metrics(leader_addr),
            "imperative_eviction_responder_controller_failed_evictions_total",
            failed,
        )
        .filter(|n| n == "1")
    });
    let message = eventually("the evictor reports the refusal", limit, || {
        let e = up.get(EVICTION)?;
        e["status"]["responders"][0]["message"]
            .as_str()
            .map(str::to_owned)
    });
    assert!(
        message.starts_with(
            "\"web\" pod deletion via the /eviction subresource failed (attempts=1): "
        ),
        "{message}"
    );
    assert!(up.get(POD).expect("pod")["metadata"]["deletionTimestamp"].is_null());
    // The budget goes: the evictor's retry (after its 5 s back-off) evicts
    // the pod: DisruptionTarget, graceful deletion pending.
    let (code, body) = up.request("DELETE", PDB, "application/json", None);
    assert_eq!(code, 200, "{body}");
    let pod = eventually("the evictor evicts the pod", limit, || {
        let pod = up.get(POD)?;
        (pod["metadata"]["deletionTimestamp"].is_string()
            && condition(&pod, "DisruptionTarget") == cond("True", "EvictionByEvictionAPI"))
        .then_some(pod)
    });
    assert_eq!(pod["metadata"]["uid"], uid.as_str());
    let eviction = up.get(EVICTION).expect("the controller's Eviction");
    assert_eq!(
        eviction["spec"]["target"],
        json!({"pod": {"name": "web", "uid": uid}})
    );
    assert_eq!(eviction["metadata"]["ownerReferences"][0]["name"], "req");
    assert_eq!(
        eviction["status"]["requesters"],
        json!([{"name": REQUESTER, "intent": "Eviction"}])
    );
    // The kubelet confirms the deletion.
    let (code, body) = up.request(
        "DELETE",
        POD,
        "application/json",
        Some(&json!({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})),
    );
    assert_eq!(code, 200, "{body}");
    let eviction = eventually("the Eviction is final", limit, || {
        let e = up.get(EVICTION)?;
        (condition(&e, "TargetEvicted") == cond("True", "PodDeleted")).then_some(e)
    });
    assert_eq!(condition(&eviction, "Failed"), cond("False", "Succeeded"));
    assert_eq!(
        eviction["status"]["targetResponders"],
        json!([{"name": EVICTOR, "priority": 100, "state": "Completed"}])
    );
    let evictor = &eviction["status"]["responders"][0];
    assert_eq!(evictor["name"], EVICTOR);
    assert!(evictor["completionTime"].is_string(), "{evictor}");
    assert_eq!(
        evictor["message"],
        "\"web\" pod has been deleted and fully terminated"
    );
    let request = eventually("the request mirrors the Eviction", limit, || {
        let r = up.get(REQUEST)?;
        (condition(&r, "TargetEvicted") == cond("True", "PodDeleted")).then_some(r)
    });
    assert_eq!(condition(&request, "Failed"), cond("False", "Succeeded"));

    // The leader's /metrics: every §9 name, and the series of this work.
    let m = metrics(leader_addr);
    for (name, kind) in [
        (
            "imperative_eviction_responder_controller_failed_evictions",
            "counter",
        ),
        ("evictionrequest_controller_responder_state", "gauge"),
        ("evictionrequest_controller_requester_intent", "gauge"),
        ("evictionrequest_controller_target_responders", "gauge"),
        ("workqueue_adds", "counter"),
        ("workqueue_depth", "gauge"),
        ("workqueue_retries", "counter"),
    ] {
        assert!(
            m.contains(&format!("\n# TYPE {name} {kind}\n")),
            "{name}: {m}"
        );
    }
    for queue in [
        "evictionrequest_controller_eviction",
        "evictionrequest_controller_eviction_request",
        "evictionrequest_controller_eviction_metadata_refresh",
    ] {
        let labels = format!("name=\"{queue}\"");
        let adds = series(&m, "workqueue_adds_total", &labels)
            .unwrap_or_else(|| panic!("{queue} adds: {m}"));
        assert!(adds.parse::<u64>().expect("count") >= 1, "{queue}: {adds}");
        assert!(series(&m, "workqueue_depth", &labels).is_some(), "{m}");
    }
    let target =
        r#"namespace="default",evictionrequest="pod-1-web",target_name="web",target_type="pod""#;
    assert_eq!(
        series(&m, "evictionrequest_controller_target_responders", target).as_deref(),
        Some("1"),
        "{m}"
    );
    assert_eq!(
        series(
            &m,
            "evictionrequest_controller_responder_state",
            &format!(r#"{target},responder="{EVICTOR}",state="Completed""#)
        )
        .as_deref(),
        Some("1"),
        "{m}"
    );
    let intent = format!(
        r#"namespace="default",evictionrequest="req",target_name="web",target_type="pod",requester="{REQUESTER}",intent="Eviction""#
    );
    assert_eq!(
        series(&m, "evictionrequest_controller_requester_intent", &intent).as_deref(),
        Some("1"),
        "{m}"
    );
    assert_eq!(
        series(
            &m,
            "imperative_eviction_responder_controller_failed_evictions_total",
            failed
        )
        .as_deref(),
        Some("1"),
        "one refused eviction: {m}"
    );

    // The standby did nothing: no controller runs there, so no queue, no
    // series, only its leader gauge at 0.
    let s = metrics(standby_addr);
    assert_eq!(leads(standby_addr), Some(false));
    for prefix in [
        "workqueue_",
        "evictionrequest_controller_",
        "imperative_eviction_",
    ] {
        assert!(
            !s.lines().any(|l| l.starts_with(prefix)),
            "standby exposes {prefix}*: {s}"
        );
    }
    let eviction_rv = eviction["metadata"]["resourceVersion"].clone();
    let request_rv = request["metadata"]["resourceVersion"].clone();

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
    // The new leader runs the controllers: it syncs the finished request
    // (its intent series appears) and writes nothing.
    eventually("the new leader syncs the request", limit, || {
        series(
            &metrics(&standby_addr),
            "evictionrequest_controller_requester_intent",
            &intent,
        )
    });
    let (e, r) = (
        up.get(EVICTION).expect("eviction"),
        up.get(REQUEST).expect("request"),
    );
    assert_eq!(e["metadata"]["resourceVersion"], eviction_rv, "{e}");
    assert_eq!(r["metadata"]["resourceVersion"], request_rv, "{r}");
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
