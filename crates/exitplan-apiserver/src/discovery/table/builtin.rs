//! Nodes, namespaces, core and `events.k8s.io` Events, Jobs,
//! PodDisruptionBudgets and Leases: upstream's `printNode`,
//! `printNamespace`, `printEvent`, `printJob`, `printPodDisruptionBudget`,
//! `printLease`.

use std::collections::BTreeSet;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Namespace, Node};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use super::{Column, Printer, Row, cells, created, decode, human_duration, since};
use crate::discovery::openapi::describe;

const NODE_INFO: &str = "io.k8s.api.core.v1.NodeSystemInfo";
const NODE_STATUS: &str = "io.k8s.api.core.v1.NodeStatus";
const CORE_EVENT_DEF: &str = "io.k8s.api.core.v1.Event";

fn name_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Value {
    json!(meta.name.clone().unwrap_or_default())
}

fn non_empty_or(s: Option<&str>, default: &str) -> String {
    match s {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => default.to_owned(),
    }
}

/// The node printer.
pub const NODE: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Status", "string", "The status of the node".into()),
            Column::new("Roles", "string", "The roles of the node".into()),
            Column::age(),
            Column::new("Version", "string", describe(NODE_INFO, "kubeletVersion")),
            Column::new("Internal-IP", "string", describe(NODE_STATUS, "addresses")).wide(),
            Column::new("External-IP", "string", describe(NODE_STATUS, "addresses")).wide(),
            Column::new("OS-Image", "string", describe(NODE_INFO, "osImage")).wide(),
            Column::new(
                "Kernel-Version",
                "string",
                describe(NODE_INFO, "kernelVersion"),
            )
            .wide(),
            Column::new(
                "Container-Runtime",
                "string",
                describe(NODE_INFO, "containerRuntimeVersion"),
            )
            .wide(),
        ]
    },
    row: |v, now| decode::<Node>(v).map(|n| node_row(&n, now)),
};

fn node_row(node: &Node, now: Timestamp) -> Row {
    let status = node.status.clone().unwrap_or_default();
    let mut states: Vec<String> = status
        .conditions
        .iter()
        .flatten()
        .filter(|c| c.type_ == "Ready")
        .take(1)
        .map(|c| {
            if c.status == "True" {
                "Ready".to_owned()
            } else {
                "NotReady".to_owned()
            }
        })
        .collect();
    if states.is_empty() {
        states.push("Unknown".to_owned());
    }
    if node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
        states.push("SchedulingDisabled".to_owned());
    }
    let roles: BTreeSet<&str> = node
        .metadata
        .labels
        .iter()
        .flatten()
        .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
            Some(role) if !role.is_empty() => Some(role),
            Some(_) => None,
            None if k == "kubernetes.io/role" && !v.is_empty() => Some(v.as_str()),
            None => None,
        })
        .collect();
    let roles = if roles.is_empty() {
        "<none>".to_owned()
    } else {
        roles.into_iter().collect::<Vec<_>>().join(",")
    };
    let info = status.node_info.clone().unwrap_or_default();
    let address = |ty: &str| {
        status
            .addresses
            .iter()
            .flatten()
            .find(|a| a.type_ == ty)
            .map_or_else(|| "<none>".to_owned(), |a| a.address.clone())
    };
    Row::from(vec![
        name_of(&node.metadata),
        json!(states.join(",")),
        json!(roles),
        json!(since(created(&node.metadata), now)),
        json!(info.kubelet_version),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(non_empty_or(Some(&info.os_image), "<unknown>")),
        json!(non_empty_or(Some(&info.kernel_version), "<unknown>")),
        json!(non_empty_or(
            Some(&info.container_runtime_version),
            "<unknown>"
        )),
    ])
}

/// The namespace printer.
pub const NAMESPACE: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Status", "string", "The status of the namespace".into()),
            Column::age(),
        ]
    },
    row: |v, now| {
        let ns = decode::<Namespace>(v)?;
        let phase = ns
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default();
        Some(Row::from(vec![
            name_of(&ns.metadata),
            json!(phase),
            json!(since(created(&ns.metadata), now)),
        ]))
    },
};

fn event_columns() -> Vec<Column> {
    let d = |p: &str| describe(CORE_EVENT_DEF, p);
    vec![
        Column::new("Last Seen", "string", d("lastTimestamp")),
        Column::new("Type", "string", d("type")),
        Column::new("Reason", "string", d("reason")),
        Column::new("Object", "string", d("involvedObject")),
        Column::new(
            "Subobject",
            "string",
            describe("io.k8s.api.core.v1.ObjectReference", "fieldPath"),
        )
        .wide(),
        Column::new("Source", "string", d("source")).wide(),
        Column::new("Message", "string", d("message")),
        Column::new("First Seen", "string", d("firstTimestamp")).wide(),
        Column::new("Count", "string", d("count")).wide(),
        Column {
            priority: 1,
            ..Column::name()
        },
    ]
}

/// The core/v1 Event printer.
pub const CORE_EVENT: Printer = Printer {
    columns: event_columns,
    row: |v, now| decode::<Event>(v).map(|e| event_row(&e, now)),
};

/// The `events.k8s.io/v1` Event printer (upstream prints the same object).
pub const EVENTS_EVENT: Printer = Printer {
    columns: event_columns,
    row: |v, now| {
        decode::<k8s_openapi::api::events::v1::Event>(v)
            .map(|e| event_row(&exitplan_api::events::to_core(&e), now))
    },
};

fn event_row(e: &Event, now: Timestamp) -> Row {
    let micro = |t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime>| {
        since(t.map(|t| t.0), now)
    };
    let first = match &e.first_timestamp {
        Some(t) => since(Some(t.0), now),
        None => micro(e.event_time.as_ref()),
    };
    let mut last = match &e.last_timestamp {
        Some(t) => since(Some(t.0), now),
        None => first.clone(),
    };
    let mut count = i64::from(e.count.unwrap_or(0));
    if let Some(series) = &e.series {
        last = micro(series.last_observed_time.as_ref());
        count = i64::from(series.count.unwrap_or(0));
    } else if count == 0 {
        count = 1;
    }
    let kind = e
        .involved_object
        .kind
        .clone()
        .unwrap_or_default()
        .to_lowercase();
    let target = match e.involved_object.name.as_deref() {
        Some(n) if !n.is_empty() => format!("{kind}/{n}"),
        _ => kind,
    };
    let source = e.source.clone().unwrap_or_default();
    let first_non_empty = |a: Option<String>, b: Option<String>| {
        a.filter(|s| !s.is_empty()).or(b).unwrap_or_default()
    };
    let component = first_non_empty(source.component, e.reporting_component.clone());
    let instance = first_non_empty(source.host, e.reporting_instance.clone());
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    Row::from(vec![
        json!(last),
        json!(e.type_.clone().unwrap_or_default()),
        json!(e.reason.clone().unwrap_or_default()),
        json!(target),
        json!(e.involved_object.field_path.clone().unwrap_or_default()),
        json!(source),
        json!(e.message.clone().unwrap_or_default().trim()),
        json!(first),
        json!(count),
        name_of(&e.metadata),
    ])
}

/// The Job printer.
pub const JOB: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Status", "string", "Status of the job.".into()),
            Column::new(
                "Completions",
                "string",
                describe("io.k8s.api.batch.v1.JobStatus", "succeeded"),
            ),
            Column::new(
                "Duration",
                "string",
                "Time required to complete the job.".into(),
            ),
            Column::age(),
            Column::new(
                "Containers",
                "string",
                "Names of each container in the template.".into(),
            )
            .wide(),
            Column::new(
                "Images",
                "string",
                "Images referenced by each container in the template.".into(),
            )
            .wide(),
            Column::new(
                "Selector",
                "string",
                describe("io.k8s.api.batch.v1.JobSpec", "selector"),
            )
            .wide(),
        ]
    },
    row: |v, now| decode::<Job>(v).map(|j| job_row(&j, now)),
};

fn job_row(job: &Job, now: Timestamp) -> Row {
    let spec = job.spec.clone().unwrap_or_default();
    let status = job.status.clone().unwrap_or_default();
    let succeeded = status.succeeded.unwrap_or(0);
    let completions = match spec.completions {
        Some(c) => format!("{succeeded}/{c}"),
        None => match spec.parallelism.unwrap_or(0) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let duration = match (&status.start_time, &status.completion_time) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now.duration_since(start.0)),
        (Some(start), Some(done)) => human_duration(done.0.duration_since(start.0)),
    };
    let has = |ty: &str| {
        status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == ty)
            .is_some_and(|c| c.status == "True")
    };
    let state = if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if job.metadata.deletion_timestamp.is_some() {
        "Terminating"
    } else if has("Suspended") {
        "Suspended"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let (names, images) = cells::containers(Some(&spec.template));
    Row::from(vec![
        name_of(&job.metadata),
        json!(state),
        json!(completions),
        json!(duration),
        json!(since(created(&job.metadata), now)),
        json!(names),
        json!(images),
        json!(cells::label_selector(spec.selector.as_ref())),
    ])
}

fn int_or_string(v: Option<&IntOrString>) -> String {
    match v {
        Some(IntOrString::Int(i)) => i.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => "N/A".to_owned(),
    }
}

/// The PodDisruptionBudget printer.
pub const PDB: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "Min Available",
                "string",
                "The minimum number of pods that must be available.".into(),
            ),
            Column::new(
                "Max Unavailable",
                "string",
                "The maximum number of pods that may be unavailable.".into(),
            ),
            Column::new(
                "Allowed Disruptions",
                "integer",
                "Calculated number of pods that may be disrupted at this time.".into(),
            ),
            Column::age(),
        ]
    },
    row: |v, now| {
        let pdb = decode::<PodDisruptionBudget>(v)?;
        let spec = pdb.spec.clone().unwrap_or_default();
        let allowed = pdb
            .status
            .as_ref()
            .and_then(|s| s.disruptions_allowed)
            .unwrap_or(0);
        Some(Row::from(vec![
            name_of(&pdb.metadata),
            json!(int_or_string(spec.min_available.as_ref())),
            json!(int_or_string(spec.max_unavailable.as_ref())),
            json!(i64::from(allowed)),
            json!(since(created(&pdb.metadata), now)),
        ]))
    },
};

/// The Lease printer.
pub const LEASE: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "Holder",
                "string",
                describe("io.k8s.api.coordination.v1.LeaseSpec", "holderIdentity"),
            ),
            Column::age(),
        ]
    },
    row: |v, now| {
        let lease = decode::<Lease>(v)?;
        let holder = lease
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.clone())
            .unwrap_or_default();
        Some(Row::from(vec![
            name_of(&lease.metadata),
            json!(holder),
            json!(since(created(&lease.metadata), now)),
        ]))
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-01-03T00:00:00Z".parse().expect("time")
    }

    #[test]
    fn node_cells() {
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "n1", "creationTimestamp": "2026-01-01T00:00:00Z",
                         "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                       "nodeInfo": {"kubeletVersion": "v1.37.0", "osImage": "", "kernelVersion": "6.1", "containerRuntimeVersion": "",
                                    "architecture": "", "bootID": "", "kubeProxyVersion": "", "machineID": "", "operatingSystem": "", "systemUUID": ""}}
        })).expect("node");
        let r = node_row(&node, now());
        assert_eq!(
            r.cells,
            vec![
                json!("n1"),
                json!("Ready,SchedulingDisabled"),
                json!("control-plane,worker"),
                json!("2d"),
                json!("v1.37.0"),
                json!("10.0.0.1"),
                json!("<none>"),
                json!("<unknown>"),
                json!("6.1"),
                json!("<unknown>")
            ]
        );
    }

    #[test]
    fn event_cells() {
        let e: Event = serde_json::from_value(json!({
            "metadata": {"name": "p.1", "namespace": "d"},
            "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.containers{a}"},
            "reason": "Evicted", "message": " bye \n", "type": "Normal",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2026-01-02T23:00:00Z", "lastTimestamp": "2026-01-02T23:59:00Z", "count": 3
        })).expect("event");
        assert_eq!(
            event_row(&e, now()).cells,
            vec![
                json!("60s"),
                json!("Normal"),
                json!("Evicted"),
                json!("pod/p"),
                json!("spec.containers{a}"),
                json!("kubelet, n1"),
                json!("bye"),
                json!("60m"),
                json!(3),
                json!("p.1")
            ]
        );
    }

    #[test]
    fn job_cells() {
        let job: Job = serde_json::from_value(json!({
            "metadata": {"name": "j", "creationTimestamp": "2026-01-02T23:00:00Z"},
            "spec": {"completions": 3, "selector": {"matchLabels": {"b": "2", "a": "1"}},
                     "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
            "status": {"succeeded": 3, "startTime": "2026-01-02T23:00:00Z", "completionTime": "2026-01-02T23:05:03Z",
                       "conditions": [{"type": "Complete", "status": "True"}]}
        })).expect("job");
        assert_eq!(
            job_row(&job, now()).cells,
            vec![
                json!("j"),
                json!("Complete"),
                json!("3/3"),
                json!("5m3s"),
                json!("60m"),
                json!("c"),
                json!("busybox"),
                json!("a=1,b=2")
            ]
        );
        let running: Job = serde_json::from_value(json!({
            "metadata": {"name": "r", "deletionTimestamp": "2026-01-02T23:00:00Z"},
            "spec": {"parallelism": 4, "template": {}},
            "status": {"conditions": [{"type": "FailureTarget", "status": "True"}]}
        }))
        .expect("job");
        let c = job_row(&running, now()).cells;
        assert_eq!(
            (c[1].clone(), c[2].clone(), c[3].clone()),
            (json!("Terminating"), json!("0/1 of 4"), json!(""))
        );
    }

    #[test]
    fn pdb_and_lease_cells() {
        let pdb = json!({"metadata": {"name": "b"}, "spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 2, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}});
        let r = (PDB.row)(&pdb, now()).expect("pdb");
        assert_eq!(
            r.cells,
            vec![
                json!("b"),
                json!("50%"),
                json!("N/A"),
                json!(2),
                json!("<unknown>")
            ]
        );
        let lease = json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "ctl-1"}});
        assert_eq!(
            (LEASE.row)(&lease, now()).expect("lease").cells[1],
            json!("ctl-1")
        );
    }
}
