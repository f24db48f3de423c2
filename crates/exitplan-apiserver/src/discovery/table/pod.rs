//! Pods: `printPod` — READY, STATUS as upstream computes it (init
//! containers, waiting/terminated reasons, `Completed`, `Error`,
//! `Terminating`, `SchedulingGated`), RESTARTS with the last restart's age;
//! wide: IP, NODE, NOMINATED NODE, READINESS GATES.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodStatus};
use serde_json::{Value, json};

use super::{Column, Printer, Row, created, decode, since};
use crate::discovery::openapi::describe;

const POD_SPEC: &str = "io.k8s.api.core.v1.PodSpec";
const POD_STATUS: &str = "io.k8s.api.core.v1.PodStatus";

fn columns() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Ready", "string", "The aggregate readiness state of this pod for accepting traffic.".into()),
        Column::new("Status", "string", "The aggregate status of the containers in this pod.".into()),
        Column::new(
            "Restarts",
            "string",
            "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.".into(),
        ),
        Column::age(),
        Column::new("IP", "string", describe(POD_STATUS, "podIP")).wide(),
        Column::new("Node", "string", describe(POD_SPEC, "nodeName")).wide(),
        Column::new("Nominated Node", "string", describe(POD_STATUS, "nominatedNodeName")).wide(),
        Column::new("Readiness Gates", "string", describe(POD_SPEC, "readinessGates")).wide(),
    ]
}

/// The pod printer.
pub const PRINTER: Printer = Printer {
    columns,
    row: |v, now| decode::<Pod>(v).map(|p| row(&p, now)),
};

fn last_termination(c: &ContainerStatus) -> Option<Timestamp> {
    c.last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .and_then(|t| t.finished_at.as_ref())
        .map(|t| t.0)
}

fn later(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn condition_true(status: &PodStatus, ty: &str) -> bool {
    status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == ty && c.status == "True")
}

/// `printPod`.
pub fn row(pod: &Pod, now: Timestamp) -> Row {
    let spec = pod.spec.clone().unwrap_or_default();
    let status = pod.status.clone().unwrap_or_default();
    let phase = status.phase.clone().unwrap_or_default();
    let mut reason = match status.reason.as_deref() {
        Some(r) if !r.is_empty() => r.to_owned(),
        _ => phase.clone(),
    };
    for c in status.conditions.iter().flatten() {
        if c.type_ == "PodScheduled" && c.reason.as_deref() == Some("SchedulingGated") {
            reason = "SchedulingGated".to_owned();
        }
    }
    let init_containers = spec.init_containers.clone().unwrap_or_default();
    let restartable = |name: &str| {
        init_containers
            .iter()
            .any(|c| c.name == name && c.restart_policy.as_deref() == Some("Always"))
    };
    let total = spec.containers.len()
        + init_containers
            .iter()
            .filter(|c| c.restart_policy.as_deref() == Some("Always"))
            .count();
    let mut ready = 0usize;
    let mut restarts: i64 = 0;
    let mut sidecar_restarts: i64 = 0;
    let mut last_restart: Option<Timestamp> = None;
    let mut last_sidecar_restart: Option<Timestamp> = None;

    let mut initializing = false;
    for (i, c) in status.init_container_statuses.iter().flatten().enumerate() {
        restarts += i64::from(c.restart_count);
        last_restart = later(last_restart, last_termination(c));
        let sidecar = restartable(&c.name);
        if sidecar {
            sidecar_restarts += i64::from(c.restart_count);
            last_sidecar_restart = later(last_sidecar_restart, last_termination(c));
        }
        let state = c.state.clone().unwrap_or_default();
        let terminated = state.terminated.as_ref();
        if terminated.is_some_and(|t| t.exit_code == 0) {
            continue;
        }
        if sidecar && c.started == Some(true) {
            if c.ready {
                ready += 1;
            }
            continue;
        }
        if let Some(t) = terminated {
            reason = match t.reason.as_deref() {
                Some(r) if !r.is_empty() => format!("Init:{r}"),
                _ => match t.signal {
                    Some(s) if s != 0 => format!("Init:Signal:{s}"),
                    _ => format!("Init:ExitCode:{}", t.exit_code),
                },
            };
        } else if let Some(r) = state
            .waiting
            .as_ref()
            .and_then(|w| w.reason.as_deref())
            .filter(|r| !r.is_empty() && *r != "PodInitializing")
        {
            reason = format!("Init:{r}");
        } else {
            reason = format!("Init:{i}/{}", init_containers.len());
        }
        initializing = true;
        break;
    }

    if !initializing || condition_true(&status, "Initialized") {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        for c in status.container_statuses.iter().flatten().rev() {
            restarts += i64::from(c.restart_count);
            last_restart = later(last_restart, last_termination(c));
            let state = c.state.clone().unwrap_or_default();
            let waiting = state
                .waiting
                .as_ref()
                .and_then(|w| w.reason.clone())
                .filter(|r| !r.is_empty());
            if let Some(r) = waiting {
                reason = r;
            } else if let Some(t) = &state.terminated {
                reason = match t.reason.as_deref() {
                    Some(r) if !r.is_empty() => r.to_owned(),
                    _ => match t.signal {
                        Some(s) if s != 0 => format!("Signal:{s}"),
                        _ => format!("ExitCode:{}", t.exit_code),
                    },
                };
            } else if c.ready && state.running.is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if condition_true(&status, "Ready") {
                "Running".to_owned()
            } else {
                "NotReady".to_owned()
            };
        }
    }

    if pod.metadata.deletion_timestamp.is_some() {
        if status.reason.as_deref() == Some("NodeLost") {
            reason = "Unknown".to_owned();
        } else if phase != "Succeeded" && phase != "Failed" {
            reason = "Terminating".to_owned();
        }
    }

    let restarts_cell = match last_restart {
        Some(t) if restarts != 0 => format!("{restarts} ({} ago)", since(Some(t), now)),
        _ => restarts.to_string(),
    };
    let or_none = |s: Option<String>| {
        s.filter(|s| !s.is_empty())
            .unwrap_or_else(|| "<none>".to_owned())
    };
    let ip = or_none(
        status
            .pod_ips
            .as_ref()
            .and_then(|ips| ips.first())
            .map(|ip| ip.ip.clone()),
    );
    let gates = match spec.readiness_gates.as_deref() {
        Some(gates) if !gates.is_empty() => {
            let true_count = gates
                .iter()
                .filter(|g| {
                    status
                        .conditions
                        .iter()
                        .flatten()
                        .find(|c| c.type_ == g.condition_type)
                        .is_some_and(|c| c.status == "True")
                })
                .count();
            format!("{true_count}/{}", gates.len())
        }
        _ => "<none>".to_owned(),
    };
    let cells: Vec<Value> = vec![
        json!(pod.metadata.name.clone().unwrap_or_default()),
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts_cell),
        json!(since(created(&pod.metadata), now)),
        json!(ip),
        json!(or_none(spec.node_name.clone())),
        json!(or_none(status.nominated_node_name.clone())),
        json!(gates),
    ];
    let conditions = match phase.as_str() {
        "Succeeded" => vec![
            json!({"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}),
        ],
        "Failed" => vec![
            json!({"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}),
        ],
        _ => Vec::new(),
    };
    Row { cells, conditions }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-01-01T01:00:00Z".parse().expect("time")
    }

    fn cells(pod: Value) -> Vec<Value> {
        let pod: Pod = serde_json::from_value(pod).expect("pod");
        row(&pod, now()).cells
    }

    #[test]
    fn running_pod_with_restart() {
        let c = cells(json!({
            "metadata": {"name": "web-0", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
            "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.5"}],
                "containerStatuses": [
                    {"name": "a", "ready": true, "restartCount": 2, "image": "i", "imageID": "", "state": {"running": {}},
                     "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2026-01-01T00:55:00Z"}}},
                    {"name": "b", "ready": false, "restartCount": 0, "image": "i", "imageID": "", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
                ]}
        }));
        assert_eq!(
            c,
            vec![
                json!("web-0"),
                json!("1/2"),
                json!("CrashLoopBackOff"),
                json!("2 (5m ago)"),
                json!("60m"),
                json!("10.0.0.5"),
                json!("n1"),
                json!("<none>"),
                json!("<none>")
            ]
        );
    }

    #[test]
    fn completed_error_and_terminating() {
        let done = |reason: &str, code: i32, phase: &str| {
            cells(json!({
                "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "a"}]},
                "status": {"phase": phase, "containerStatuses": [
                    {"name": "a", "ready": false, "restartCount": 0, "image": "i", "imageID": "",
                     "state": {"terminated": {"exitCode": code, "reason": reason}}}]}
            }))[2]
                .clone()
        };
        assert_eq!(done("Completed", 0, "Succeeded"), json!("Completed"));
        assert_eq!(done("Error", 1, "Failed"), json!("Error"));
        assert_eq!(done("", 137, "Failed"), json!("ExitCode:137"));
        let terminating = cells(json!({
            "metadata": {"name": "p", "deletionTimestamp": "2026-01-01T00:59:00Z"},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running"}
        }));
        assert_eq!(terminating[2], json!("Terminating"));
        assert_eq!(terminating[4], json!("<unknown>"));
        let pod: Pod = serde_json::from_value(
            json!({"metadata": {"name": "p"}, "status": {"phase": "Succeeded"}}),
        )
        .expect("pod");
        assert_eq!(row(&pod, now()).conditions[0]["reason"], "Succeeded");
    }

    #[test]
    fn init_containers_and_gates() {
        let c = cells(json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a"}], "initContainers": [{"name": "i1"}, {"name": "i2"}],
                     "readinessGates": [{"conditionType": "acme.io/ready"}]},
            "status": {"phase": "Pending",
                "conditions": [{"type": "acme.io/ready", "status": "True"}],
                "initContainerStatuses": [
                    {"name": "i1", "ready": false, "restartCount": 0, "image": "i", "imageID": "", "state": {"terminated": {"exitCode": 0}}},
                    {"name": "i2", "ready": false, "restartCount": 0, "image": "i", "imageID": "", "state": {"running": {}}}
                ]}
        }));
        assert_eq!(c[2], json!("Init:1/2"));
        assert_eq!(c[8], json!("1/1"));
        let sidecar = cells(json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a"}], "initContainers": [{"name": "s", "restartPolicy": "Always"}]},
            "status": {"phase": "Running",
                "initContainerStatuses": [{"name": "s", "ready": true, "started": true, "restartCount": 0, "image": "i", "imageID": "", "state": {"running": {}}}],
                "containerStatuses": [{"name": "a", "ready": true, "restartCount": 0, "image": "i", "imageID": "", "state": {"running": {}}}]}
        }));
        assert_eq!(sidecar[1], json!("2/2"));
        assert_eq!(sidecar[2], json!("Running"));
    }
}
