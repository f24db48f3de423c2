//! apps/v1 kinds: upstream's `printDeployment`, `printReplicaSet`,
//! `printStatefulSet`, `printDaemonSet` and `printControllerRevision`.
//! A workload without `spec.replicas` shows the default of one, as
//! upstream's defaulting stores it.

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use serde_json::json;

use exitplan_api::selector::as_selector;

use super::cells::{self, NONE};
use super::core::{containers_column, images_column};
use super::{Column, Printer, Row, decode};
use crate::discovery::openapi::describe;

const APPS: &str = "io.k8s.api.apps.v1.";

fn d(definition: &str, property: &str) -> String {
    describe(&format!("{APPS}{definition}"), property)
}

fn ready_column() -> Column {
    Column::new(
        "Ready",
        "string",
        "Number of the pod with ready state".into(),
    )
}

/// The Deployment printer: NAME READY UP-TO-DATE AVAILABLE AGE, wide
/// CONTAINERS IMAGES SELECTOR.
pub const DEPLOYMENT: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            ready_column(),
            Column::new(
                "Up-to-date",
                "string",
                d("DeploymentStatus", "updatedReplicas"),
            ),
            Column::new(
                "Available",
                "string",
                d("DeploymentStatus", "availableReplicas"),
            ),
            Column::age(),
            containers_column(),
            images_column(),
            Column::new("Selector", "string", d("DeploymentSpec", "selector")).wide(),
        ]
    },
    row: |v, now| decode::<Deployment>(v).map(|d| deployment_row(&d, now)),
};

fn deployment_row(deploy: &Deployment, now: Timestamp) -> Row {
    let spec = deploy.spec.clone();
    let status = deploy.status.clone().unwrap_or_default();
    let (names, images) = cells::containers(Some(&spec.template));
    // Unlike the other workloads, upstream prints selector.String() here:
    // empty for an empty selector, `<invalid>` when it does not convert.
    let selector = as_selector(Some(&spec.selector))
        .map_or_else(|_| "<invalid>".to_owned(), |s| cells::selector_string(&s));
    Row::from(vec![
        cells::name(&deploy.metadata),
        json!(format!(
            "{}/{}",
            status.ready_replicas.unwrap_or(0),
            spec.replicas.unwrap_or(1)
        )),
        json!(status.updated_replicas.unwrap_or(0)),
        json!(status.available_replicas.unwrap_or(0)),
        cells::age(&deploy.metadata, now),
        json!(names),
        json!(images),
        json!(selector),
    ])
}

/// The ReplicaSet printer: NAME DESIRED CURRENT READY AGE, wide CONTAINERS
/// IMAGES SELECTOR.
pub const REPLICA_SET: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Desired", "integer", d("ReplicaSetSpec", "replicas")),
            Column::new("Current", "integer", d("ReplicaSetStatus", "replicas")),
            Column::new("Ready", "integer", d("ReplicaSetStatus", "readyReplicas")),
            Column::age(),
            containers_column(),
            images_column(),
            Column::new("Selector", "string", d("ReplicaSetSpec", "selector")).wide(),
        ]
    },
    row: |v, now| {
        let rs = decode::<ReplicaSet>(v)?;
        let spec = rs.spec.clone();
        let status = rs.status.clone().unwrap_or_default();
        let (names, images) = cells::containers(spec.template.as_ref());
        Some(Row::from(vec![
            cells::name(&rs.metadata),
            json!(spec.replicas.unwrap_or(1)),
            json!(status.replicas),
            json!(status.ready_replicas.unwrap_or(0)),
            cells::age(&rs.metadata, now),
            json!(names),
            json!(images),
            json!(cells::label_selector(Some(&spec.selector))),
        ]))
    },
};

/// The StatefulSet printer: NAME READY AGE, wide CONTAINERS IMAGES.
pub const STATEFUL_SET: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            ready_column(),
            Column::age(),
            containers_column(),
            images_column(),
        ]
    },
    row: |v, now| {
        let sts = decode::<StatefulSet>(v)?;
        let spec = sts.spec.clone();
        let ready = sts
            .status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0);
        let (names, images) = cells::containers(Some(&spec.template));
        Some(Row::from(vec![
            cells::name(&sts.metadata),
            json!(format!("{ready}/{}", spec.replicas.unwrap_or(1))),
            cells::age(&sts.metadata, now),
            json!(names),
            json!(images),
        ]))
    },
};

/// The DaemonSet printer: NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE
/// NODE SELECTOR AGE, wide CONTAINERS IMAGES SELECTOR.
pub const DAEMON_SET: Printer = Printer {
    columns: || {
        let s = |p: &str| d("DaemonSetStatus", p);
        vec![
            Column::name(),
            Column::new("Desired", "integer", s("desiredNumberScheduled")),
            Column::new("Current", "integer", s("currentNumberScheduled")),
            Column::new("Ready", "integer", s("numberReady")),
            Column::new("Up-to-date", "integer", s("updatedNumberScheduled")),
            Column::new("Available", "integer", s("numberAvailable")),
            Column::new(
                "Node Selector",
                "string",
                describe("io.k8s.api.core.v1.PodSpec", "nodeSelector"),
            ),
            Column::age(),
            containers_column(),
            images_column(),
            Column::new("Selector", "string", d("DaemonSetSpec", "selector")).wide(),
        ]
    },
    row: |v, now| {
        let ds = decode::<DaemonSet>(v)?;
        let spec = ds.spec.clone();
        let status = ds.status.clone().unwrap_or_default();
        let (names, images) = cells::containers(Some(&spec.template));
        let node_selector = spec
            .template
            .spec
            .as_ref()
            .and_then(|s| s.node_selector.as_ref());
        Some(Row::from(vec![
            cells::name(&ds.metadata),
            json!(status.desired_number_scheduled),
            json!(status.current_number_scheduled),
            json!(status.number_ready),
            json!(status.updated_number_scheduled.unwrap_or(0)),
            json!(status.number_available.unwrap_or(0)),
            json!(cells::labels(node_selector)),
            cells::age(&ds.metadata, now),
            json!(names),
            json!(images),
            json!(cells::label_selector(Some(&spec.selector))),
        ]))
    },
};

/// The ControllerRevision printer: NAME CONTROLLER REVISION AGE, the
/// controller as `kind.group/name` (lower-cased kind and group).
pub const CONTROLLER_REVISION: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Controller", "string", "Controller of the object".into()),
            Column::new("Revision", "string", d("ControllerRevision", "revision")),
            Column::age(),
        ]
    },
    row: |v, now| {
        let cr = decode::<ControllerRevision>(v)?;
        let controller = match cr
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|r| r.controller == Some(true))
        {
            None => NONE.to_owned(),
            Some(r) => {
                // schema.ParseGroupVersion: upstream fails the row on a
                // malformed apiVersion.
                let group = match r.api_version.split('/').collect::<Vec<_>>()[..] {
                    [_] => "",
                    [group, _] => group,
                    _ => return None,
                };
                let kind = match (r.kind.as_str(), group) {
                    ("", "") => String::new(),
                    (kind, "") => kind.to_owned(),
                    (kind, group) => format!("{kind}.{group}"),
                };
                if kind.is_empty() {
                    r.name.clone()
                } else {
                    format!("{}/{}", kind.to_lowercase(), r.name)
                }
            }
        };
        Some(Row::from(vec![
            cells::name(&cr.metadata),
            json!(controller),
            json!(cr.revision),
            cells::age(&cr.metadata, now),
        ]))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn now() -> Timestamp {
        "2026-01-03T00:00:00Z".parse().expect("time")
    }

    fn cells_of(p: Printer, v: Value) -> Vec<Value> {
        (p.row)(&v, now()).expect("decodes").cells
    }

    fn template() -> Value {
        json!({"spec": {"containers": [{"name": "fake-container1", "image": "fake-image1"},
                                        {"name": "fake-container2", "image": "fake-image2"}]}})
    }

    /// Upstream `TestPrintDeployment`.
    #[test]
    fn deployments() {
        let c = cells_of(
            DEPLOYMENT,
            json!({"metadata": {"name": "test1", "creationTimestamp": "2026-01-02T00:00:00Z"},
                   "spec": {"replicas": 5, "template": template(),
                            "selector": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}},
                   "status": {"replicas": 10, "updatedReplicas": 2, "availableReplicas": 1, "unavailableReplicas": 4, "readyReplicas": 3}}),
        );
        assert_eq!(
            c,
            vec![
                json!("test1"),
                json!("3/5"),
                json!(2),
                json!(1),
                json!("24h"),
                json!("fake-container1,fake-container2"),
                json!("fake-image1,fake-image2"),
                json!("foo in (bar)")
            ]
        );
        let empty = cells_of(
            DEPLOYMENT,
            json!({"metadata": {"name": "d"}, "spec": {"selector": {}, "template": {}}}),
        );
        assert_eq!(
            (&empty[1], &empty[2], &empty[7]),
            (&json!("0/1"), &json!(0), &json!(""))
        );
        let invalid = cells_of(
            DEPLOYMENT,
            json!({"metadata": {"name": "d"}, "spec": {"template": {},
                   "selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}}),
        );
        assert_eq!(invalid[7], json!("<invalid>"));
    }

    /// Upstream `TestPrintReplicaSet`.
    #[test]
    fn replica_sets() {
        let c = cells_of(
            REPLICA_SET,
            json!({"metadata": {"name": "test1"},
                   "spec": {"replicas": 5, "template": template(), "selector": {"matchLabels": {"foo": "bar"}}},
                   "status": {"replicas": 5, "readyReplicas": 2}}),
        );
        assert_eq!(
            c,
            vec![
                json!("test1"),
                json!(5),
                json!(5),
                json!(2),
                json!("<unknown>"),
                json!("fake-container1,fake-container2"),
                json!("fake-image1,fake-image2"),
                json!("foo=bar")
            ]
        );
    }

    /// Upstream `TestPrintStatefulSet`.
    #[test]
    fn stateful_sets() {
        let c = cells_of(
            STATEFUL_SET,
            json!({"metadata": {"name": "test1"},
                   "spec": {"replicas": 5, "template": template(), "selector": {}, "serviceName": "s"},
                   "status": {"replicas": 5, "readyReplicas": 2, "updatedReplicas": 2}}),
        );
        assert_eq!(
            c,
            vec![
                json!("test1"),
                json!("2/5"),
                json!("<unknown>"),
                json!("fake-container1,fake-container2"),
                json!("fake-image1,fake-image2")
            ]
        );
    }

    /// Upstream `TestPrintDaemonSet`.
    #[test]
    fn daemon_sets() {
        let c = cells_of(
            DAEMON_SET,
            json!({"metadata": {"name": "test1"},
                   "spec": {"selector": {"matchLabels": {"a": "b"}},
                            "template": {"spec": {"nodeSelector": {"disk": "ssd"},
                                                  "containers": [{"name": "c", "image": "i"}]}}},
                   "status": {"currentNumberScheduled": 2, "desiredNumberScheduled": 3, "numberReady": 1,
                              "updatedNumberScheduled": 2, "numberAvailable": 0, "numberMisscheduled": 0}}),
        );
        assert_eq!(
            c,
            vec![
                json!("test1"),
                json!(3),
                json!(2),
                json!(1),
                json!(2),
                json!(0),
                json!("disk=ssd"),
                json!("<unknown>"),
                json!("c"),
                json!("i"),
                json!("a=b")
            ]
        );
    }

    /// Upstream `TestPrintControllerRevision`.
    #[test]
    fn controller_revisions() {
        let rev = |owners: Value| {
            cells_of(
                CONTROLLER_REVISION,
                json!({"metadata": {"name": "test1", "ownerReferences": owners}, "revision": 1}),
            )
        };
        let owner = |api: &str, kind: &str, controller: bool| json!({"apiVersion": api, "kind": kind, "name": "foo", "uid": "u", "controller": controller});
        assert_eq!(
            rev(json!([owner("apps/v1", "DaemonSet", true)])),
            vec![
                json!("test1"),
                json!("daemonset.apps/foo"),
                json!(1),
                json!("<unknown>")
            ]
        );
        assert_eq!(
            rev(json!([owner("apps/v1", "DaemonSet", false)]))[1],
            json!("<none>")
        );
        assert_eq!(rev(json!([]))[1], json!("<none>"));
        assert_eq!(rev(json!([owner("v1", "Pod", true)]))[1], json!("pod/foo"));
        assert_eq!(rev(json!([owner("v1", "", true)]))[1], json!("foo"));
        assert!(
            (CONTROLLER_REVISION.row)(
                &json!({"metadata": {"name": "x", "ownerReferences": [owner("a/b/c", "K", true)]}, "revision": 1}),
                now()
            )
            .is_none()
        );
    }
}
