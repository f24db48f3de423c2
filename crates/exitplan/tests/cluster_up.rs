//! `exitplan up --nodes 2` end to end with real processes and the real
//! clock: the controllers and simulated nodes it runs make a pod applied with
//! kubectl Running on a node; `exitplan drain` evicts it through its
//! EvictionRequest (the imperative evictor evicts it: `TargetEvicted=True`);
//! with `exitplan responder` serving the pod's own responder, that responder
//! completes before the evictor takes its turn.

mod cluster;

use std::io::Write as _;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use cluster::{Up, eventually, sigterm, temp_dir};

const PODS: &str = "/api/v1/namespaces/default/pods";
const ERS: &str = "/apis/lifecycle.k8s.io/v1alpha1/namespaces/default/evictionrequests";
const EVICTIONS: &str = "/apis/lifecycle.k8s.io/v1alpha1/namespaces/default/evictions";
const LIMIT: Duration = Duration::from_secs(20);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn kubectl_apply(up: &Up, yaml: &str) {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&up.kubeconfig)
        .args(["apply", "--validate=false", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kubectl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(yaml.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("kubectl");
    assert!(out.status.success(), "kubectl apply: {}", text(&out.stderr));
}

fn pod_yaml(name: &str, responders: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  annotations: {{sim.exitplan.io/stop: 1s}}\n\
         spec:\n  terminationGracePeriodSeconds: 5\n  containers: [{{name: main, image: registry.example/app:1}}]\n{responders}"
    )
}

/// Waits until `name` is Running; its node.
fn running_on(up: &Up, name: &str) -> String {
    eventually(&format!("{name} Running on a node"), LIMIT, || {
        let p = up.get(&format!("{PODS}/{name}"))?;
        (p["status"]["phase"] == "Running")
            .then(|| p["spec"]["nodeName"].as_str().map(str::to_owned))
            .flatten()
    })
}

fn drain(up: &Up, node: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_exitplan"))
        .args(["drain", node, "--timeout", "20s", "--kubeconfig"])
        .arg(&up.kubeconfig)
        .stdin(Stdio::null())
        .output()
        .expect("run exitplan drain")
}

fn condition(obj: &serde_json::Value, t: &str) -> Option<serde_json::Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == t)
        .cloned()
}

#[cfg(unix)]
#[test]
fn up_runs_the_controllers_and_nodes_drain_and_responder_work_against_it() {
    let dir = temp_dir("cluster-up");
    let (up, running) = Up::start_with(&dir, &["--nodes", "2"]);
    assert_eq!(
        running,
        [
            "controllers: evictionrequest-controller, imperative-eviction.k8s.io/evictor, \
             disruption-controller, garbage-collector, scheduler, job-controller",
            "simulated nodes: node-1, node-2",
        ]
    );
    for node in ["node-1", "node-2"] {
        eventually(&format!("{node} registered Ready"), LIMIT, || {
            let n = up.get(&format!("/api/v1/nodes/{node}"))?;
            (condition(&n, "Ready")?["status"] == "True").then_some(())
        });
    }

    // A pod that declares no responders: the evictor evicts it at once.
    kubectl_apply(&up, &pod_yaml("plain", ""));
    let node = running_on(&up, "plain");
    let out = drain(&up, &node);
    assert!(
        out.status.success(),
        "drain {node}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains(&format!("node/{node} drained")),
        "{}",
        text(&out.stdout)
    );
    // Terminal when the drain ends; removed once the kubelet confirms.
    eventually("the pod is gone", LIMIT, || {
        up.get(&format!("{PODS}/plain")).is_none().then_some(())
    });
    let er = up.get(&format!("{ERS}/drain-plain")).expect("request kept");
    let evicted = condition(&er, "TargetEvicted").expect("TargetEvicted");
    assert_eq!(evicted["status"], "True", "{er}");
    assert_eq!(er["spec"]["requester"], "exitplan.io/drain");

    // A pod with its own responder, served by `exitplan responder`.
    let responder = Command::new(env!("CARGO_BIN_EXE_exitplan"))
        .args([
            "responder",
            "--name",
            "example.com/migrator",
            "--work",
            "3s",
            "--kubeconfig",
        ])
        .arg(&up.kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn exitplan responder");
    kubectl_apply(
        &up,
        &pod_yaml(
            "migrated",
            "  evictionResponders:\n  - {name: example.com/migrator, priority: 10000}\n",
        ),
    );
    let other = running_on(&up, "migrated");
    assert_ne!(other, node, "the drained node is cordoned");
    let uid = up.get(&format!("{PODS}/migrated")).expect("pod")["metadata"]["uid"].clone();
    // Follow the Eviction while the drain runs (it may be gone afterwards).
    let drained = std::thread::spawn({
        let kubeconfig = up.kubeconfig.clone();
        let other = other.clone();
        move || {
            Command::new(env!("CARGO_BIN_EXE_exitplan"))
                .args(["drain", &other, "--timeout", "20s", "--kubeconfig"])
                .arg(&kubeconfig)
                .stdin(Stdio::null())
                .output()
                .expect("run exitplan drain")
        }
    });
    let eviction = eventually("the migrator Completed, the evictor Active", LIMIT, || {
        let list = up.get(EVICTIONS)?;
        let ev = list["items"]
            .as_array()?
            .iter()
            .find(|e| e["spec"]["target"]["pod"]["uid"] == uid)?
            .clone();
        let states: Vec<(String, String)> = ev["status"]["targetResponders"]
            .as_array()?
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap_or_default().to_owned(),
                    t["state"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        let migrator = states.iter().find(|(n, _)| n == "example.com/migrator")?;
        (migrator.1 == "Completed").then_some(ev)
    });
    let out = drained.join().expect("drain thread");
    assert!(
        out.status.success(),
        "drain {other}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // Terminal when the drain ends; removed once the kubelet confirms.
    eventually("the pod is gone", LIMIT, || {
        up.get(&format!("{PODS}/migrated")).is_none().then_some(())
    });
    let er = up
        .get(&format!("{ERS}/drain-migrated"))
        .expect("request kept");
    assert_eq!(
        condition(&er, "TargetEvicted").expect("TargetEvicted")["status"],
        "True",
        "{er}"
    );
    // The migrator (priority 10000; 0-999 are reserved for *.k8s.io responders) went first and completed; only then was the
    // evictor (priority 100) activated.
    let names: Vec<&str> = eviction["status"]["targetResponders"]
        .as_array()
        .expect("targetResponders")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        ["example.com/migrator", "imperative-eviction.k8s.io/evictor"]
    );
    let entry = |name: &str| {
        eviction["status"]["responders"]
            .as_array()
            .expect("responders")
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no entry for {name}: {eviction}"))
    };
    let migrator = entry("example.com/migrator");
    assert_eq!(migrator["message"], "done after 3s", "{migrator}");
    let completed = migrator["completionTime"].as_str().expect("completionTime");
    assert!(
        completed >= migrator["startTime"].as_str().expect("startTime"),
        "{migrator}"
    );
    let evictor = entry("imperative-eviction.k8s.io/evictor");
    let evictor_start = evictor["startTime"].as_str().expect("evictor startTime");
    assert!(
        evictor_start >= completed,
        "the evictor starts only after the migrator completed: {eviction}"
    );
    sigterm(responder);
    up.stop();
}

/// A Job of one pod (no nodes will run it).
fn one_pod_job(name: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox"}]
        }}}
    })
}

fn job_pods(up: &Up, job: &str) -> Vec<serde_json::Value> {
    up.get(&format!(
        "/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io/job-name%3D{job}"
    ))
    .and_then(|l| l["items"].as_array().cloned())
    .unwrap_or_default()
}

/// `--nodes 0`: the controllers without simulated nodes (kwok style: the
/// Job controller makes its pod, nothing runs it, no Node registers);
/// `--bare`: the API server alone (nothing acts on the Job).
#[cfg(unix)]
#[test]
fn nodes_zero_runs_the_controllers_and_bare_runs_none() {
    let dir = temp_dir("cluster-nodes-0");
    let (up, running) = Up::start_with(&dir, &["--nodes", "0"]);
    assert_eq!(
        running,
        [
            "controllers: evictionrequest-controller, imperative-eviction.k8s.io/evictor, \
             disruption-controller, garbage-collector, scheduler, job-controller",
            "simulated nodes: none (--nodes 0)",
        ]
    );
    up.create("/apis/batch/v1/namespaces/default/jobs", one_pod_job("j"));
    let pods = eventually("the Job controller creates its pod", LIMIT, || {
        Some(job_pods(&up, "j")).filter(|p| !p.is_empty())
    });
    assert_eq!(pods.len(), 1);
    assert_eq!(pods[0]["status"]["phase"], "Pending");
    let nodes = up.get("/api/v1/nodes").expect("nodes");
    assert_eq!(nodes["items"].as_array().map(Vec::len), Some(0));
    // `/metrics` carries the server's series and the controllers' (kubectl
    // sends the token; the unauthenticated case is the server's own test).
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&up.kubeconfig)
        .args(["get", "--raw", "/metrics"])
        .output()
        .expect("run kubectl");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let metrics = text(&out.stdout);
    for series in [
        "apiserver_request_total{verb=\"POST\",group=\"batch\",version=\"v1\",resource=\"jobs\",subresource=\"\",scope=\"namespace\",component=\"apiserver\",code=\"201\"} 1",
        "apiserver_storage_objects{resource=\"jobs.batch\"} 1",
        "workqueue_depth{name=\"evictionrequest_controller_eviction_request\"}",
        "job_controller_job_syncs_total ",
    ] {
        assert!(metrics.contains(series), "{series} in {metrics}");
    }
    up.stop();

    let dir = temp_dir("cluster-bare");
    let (up, running) = Up::start_with(&dir, &["--bare"]);
    assert_eq!(running, ["controllers: none (--bare)"]);
    up.create("/apis/batch/v1/namespaces/default/jobs", one_pod_job("j"));
    // Long enough for a running Job controller to act (it did above well
    // within it); nothing may.
    std::thread::sleep(Duration::from_secs(2));
    assert!(job_pods(&up, "j").is_empty());
    let job = up
        .get("/apis/batch/v1/namespaces/default/jobs/j")
        .expect("job");
    assert!(job["status"].get("startTime").is_none(), "{job}");
    up.stop();
}
