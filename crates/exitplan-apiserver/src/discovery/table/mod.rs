//! Server-side Tables (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`):
//! the columns and cells upstream's printers
//! (`pkg/printers/internalversion/printers.go`) produce — always the wide
//! set; kubectl hides priority-1 columns unless `-o wide` — and printers of
//! our own for the lifecycle kinds.
//!
//! ```text
//!   printer_for(group, kind) ── PRINTERS: one line per kind
//!       core.rs  apps.rs  batch.rs  networking.rs  cluster.rs  builtin.rs
//!       pod.rs  lifecycle.rs  rbac.rs (cells.rs: shared cell formats)
//!   kinds without a printer ── DEFAULT: Name, Created At (rest.DefaultTableConvertor)
//!   custom resources ──────── custom.rs: CustomColumns from a CRD version's
//!                             additionalPrinterColumns (jsonpath.rs)
//! ```

mod age;
mod apps;
mod batch;
mod builtin;
mod cells;
mod cluster;
mod core;
mod custom;
mod jsonpath;
mod lifecycle;
mod networking;
mod pod;
mod rbac;

use std::borrow::Cow;
use std::sync::Arc;

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub use age::{human_duration, since};
pub use custom::{CustomColumns, InvalidColumn};
pub use jsonpath::{JsonPath, JsonPathError};

use super::IncludeObject;
use super::openapi::describe;
use crate::registry::ResourceDef;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// One column (`metav1.TableColumnDefinition`).
#[derive(Clone, Debug)]
pub struct Column {
    /// Header, as kubectl upper-cases it.
    pub name: Cow<'static, str>,
    /// `string`, `integer`, `date`, …
    pub ty: Cow<'static, str>,
    /// `name` for the object's name column.
    pub format: Cow<'static, str>,
    /// What the column shows.
    pub description: String,
    /// 0 always shown, above 0 only with `-o wide`.
    pub priority: i32,
}

impl Column {
    fn new(name: &'static str, ty: &'static str, description: String) -> Self {
        Column {
            name: Cow::Borrowed(name),
            ty: Cow::Borrowed(ty),
            format: Cow::Borrowed(""),
            description,
            priority: 0,
        }
    }

    fn wide(mut self) -> Self {
        self.priority = 1;
        self
    }

    /// The `Name` column.
    fn name() -> Self {
        Column {
            format: Cow::Borrowed("name"),
            ..Column::new("Name", "string", describe(OBJECT_META, "name"))
        }
    }

    /// The `Age` column.
    fn age() -> Self {
        Column::new("Age", "string", describe(OBJECT_META, "creationTimestamp"))
    }

    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.ty,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

/// One row's cells (and row conditions, for finished pods).
#[derive(Clone, Debug, Default)]
pub struct Row {
    /// Cell values, one per column.
    pub cells: Vec<Value>,
    /// `metav1.TableRowCondition`s.
    pub conditions: Vec<Value>,
}

impl From<Vec<Value>> for Row {
    fn from(cells: Vec<Value>) -> Self {
        Row {
            cells,
            conditions: Vec::new(),
        }
    }
}

/// A kind's printer: its columns and a row per object.
#[derive(Clone, Copy)]
pub struct Printer {
    /// The columns.
    pub columns: fn() -> Vec<Column>,
    /// The row of one object (`None`: the object does not decode).
    pub row: fn(&Value, Timestamp) -> Option<Row>,
}

fn decode<T: DeserializeOwned>(v: &Value) -> Option<T> {
    <T as serde::Deserialize>::deserialize(v).ok()
}

/// The creation time of an object's metadata.
fn created(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Option<Timestamp> {
    meta.creation_timestamp.as_ref().map(|t| t.0)
}

/// Every kind's printer, by API group and kind: adding a kind is one line.
const PRINTERS: &[(&str, &str, Printer)] = &[
    ("", "Pod", pod::PRINTER),
    ("", "Node", builtin::NODE),
    ("", "Namespace", builtin::NAMESPACE),
    ("", "Event", builtin::CORE_EVENT),
    ("", "ConfigMap", core::CONFIG_MAP),
    ("", "Secret", core::SECRET),
    ("", "Service", core::SERVICE),
    ("", "ServiceAccount", core::SERVICE_ACCOUNT),
    ("", "Endpoints", core::ENDPOINTS),
    ("", "PersistentVolumeClaim", core::PVC),
    ("", "PersistentVolume", core::PV),
    ("", "ResourceQuota", core::RESOURCE_QUOTA),
    ("", "PodTemplate", core::POD_TEMPLATE),
    ("", "ReplicationController", core::REPLICATION_CONTROLLER),
    ("apps", "Deployment", apps::DEPLOYMENT),
    ("apps", "ReplicaSet", apps::REPLICA_SET),
    ("apps", "StatefulSet", apps::STATEFUL_SET),
    ("apps", "DaemonSet", apps::DAEMON_SET),
    ("apps", "ControllerRevision", apps::CONTROLLER_REVISION),
    ("batch", "Job", builtin::JOB),
    ("batch", "CronJob", batch::CRON_JOB),
    (
        "discovery.k8s.io",
        "EndpointSlice",
        networking::ENDPOINT_SLICE,
    ),
    ("networking.k8s.io", "Ingress", networking::INGRESS),
    (
        "networking.k8s.io",
        "IngressClass",
        networking::INGRESS_CLASS,
    ),
    (
        "networking.k8s.io",
        "NetworkPolicy",
        networking::NETWORK_POLICY,
    ),
    ("events.k8s.io", "Event", builtin::EVENTS_EVENT),
    ("policy", "PodDisruptionBudget", builtin::PDB),
    ("coordination.k8s.io", "Lease", builtin::LEASE),
    (
        "scheduling.k8s.io",
        "PriorityClass",
        cluster::PRIORITY_CLASS,
    ),
    (
        "rbac.authorization.k8s.io",
        "RoleBinding",
        rbac::ROLE_BINDING,
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        rbac::CLUSTER_ROLE_BINDING,
    ),
    ("storage.k8s.io", "StorageClass", cluster::STORAGE_CLASS),
    (
        "lifecycle.k8s.io",
        "EvictionRequest",
        lifecycle::EVICTION_REQUEST,
    ),
    ("lifecycle.k8s.io", "Eviction", lifecycle::EVICTION),
];

/// The printer of a kind (`None`: upstream has none, e.g. LimitRange).
pub fn printer_for(group: &str, kind: &str) -> Option<Printer> {
    PRINTERS
        .iter()
        .find(|(g, k, _)| *g == group && *k == kind)
        .map(|(_, _, p)| *p)
}

/// The printer of a served kind; kinds without one get [`DEFAULT`].
pub fn printer(def: &ResourceDef) -> Printer {
    printer_for(def.group, def.kind).unwrap_or(DEFAULT)
}

/// `rest.DefaultTableConvertor`: Name and `Created At`, the creation time
/// in RFC 3339 (UTC, whole seconds).
pub const DEFAULT: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "Created At",
                "date",
                describe(OBJECT_META, "creationTimestamp"),
            ),
        ]
    },
    row: |v, _now| {
        let meta: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta =
            decode(v.get("metadata")?)?;
        let created = created(&meta).map_or_else(
            || "0001-01-01T00:00:00Z".to_owned(),
            |t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        );
        Some(Row::from(vec![
            json!(meta.name.clone().unwrap_or_default()),
            json!(created),
        ]))
    },
};

/// A row for an object the printer cannot read: its name, other cells empty.
fn fallback_row(columns: &[Column], object: &Value) -> Row {
    let name = object
        .pointer("/metadata/name")
        .cloned()
        .unwrap_or_else(|| json!(""));
    Row::from(
        columns
            .iter()
            .map(|c| {
                if c.format == "name" {
                    name.clone()
                } else {
                    json!("")
                }
            })
            .collect::<Vec<_>>(),
    )
}

fn row_object(object: &Value, include: IncludeObject) -> Value {
    match include {
        IncludeObject::None => Value::Null,
        IncludeObject::Metadata => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
        }),
        IncludeObject::Object => object.clone(),
    }
}

/// Writes a Table one row at a time, with the same bytes as serializing
/// [`table`]: a large LIST is sent as its rows are made instead of being
/// built whole.
pub struct Rows {
    source: Source,
    columns: Vec<Column>,
    include: IncludeObject,
    now: Timestamp,
}

/// Where a Table's columns and cells come from.
enum Source {
    /// A built-in kind's printer.
    Printer(Printer),
    /// A custom resource's `additionalPrinterColumns`.
    Custom(Arc<CustomColumns>),
}

/// What follows the last row of a Table written by [`Rows`].
pub const TABLE_END: &[u8] = b"]}";

impl Rows {
    /// A writer of `def`'s rows.
    pub fn new(def: &ResourceDef, include: IncludeObject, now: Timestamp) -> Self {
        if let Some(c) = def.custom {
            return Rows::custom(c.columns.clone(), include, now);
        }
        let printer = printer(def);
        let columns = (printer.columns)();
        Rows {
            source: Source::Printer(printer),
            columns,
            include,
            now,
        }
    }

    /// A writer of a custom resource's rows, with the columns its CRD
    /// version declares (see [`CustomColumns::serving`]).
    pub fn custom(columns: Arc<CustomColumns>, include: IncludeObject, now: Timestamp) -> Self {
        Rows {
            columns: columns.columns().to_vec(),
            source: Source::Custom(columns),
            include,
            now,
        }
    }

    /// The Table up to its first row: everything [`table`] writes before
    /// the rows (`rows` comes last in the serialized object).
    pub fn head(&self, list_meta: Value) -> Result<Vec<u8>, serde_json::Error> {
        let mut head = serde_json::to_vec(&self.table(list_meta, Vec::new()))?;
        if head.ends_with(TABLE_END) {
            head.truncate(head.len() - TABLE_END.len());
            Ok(head)
        } else {
            Err(serde::ser::Error::custom("a Table's rows are not last"))
        }
    }

    /// Appends the row of `object` (in the shape `def` serves) to `out`.
    pub fn write(&self, out: &mut Vec<u8>, object: &Value) -> Result<(), serde_json::Error> {
        serde_json::to_writer(out, &self.row(object))
    }

    fn row(&self, object: &Value) -> Value {
        let row = match &self.source {
            Source::Printer(p) => (p.row)(object, self.now),
            Source::Custom(c) => Some(c.row(object, self.now)),
        }
        .unwrap_or_else(|| fallback_row(&self.columns, object));
        let mut r = json!({"cells": row.cells, "object": row_object(object, self.include)});
        if !row.conditions.is_empty() {
            r["conditions"] = Value::Array(row.conditions);
        }
        r
    }

    fn whole(&self, objects: &[Value], list_meta: Value) -> Value {
        let cells = objects.iter().map(|o| self.row(o)).collect();
        self.table(list_meta, cells)
    }

    fn table(&self, list_meta: Value, rows: Vec<Value>) -> Value {
        let columns: Vec<Value> = self.columns.iter().map(Column::to_json).collect();
        json!({
            "kind": "Table",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": list_meta,
            "columnDefinitions": columns,
            "rows": rows,
        })
    }
}

/// The Table of `objects` (each in the shape `def` serves).
pub fn table(
    def: &ResourceDef,
    objects: &[Value],
    list_meta: Value,
    include: IncludeObject,
    now: Timestamp,
) -> Value {
    Rows::new(def, include, now).whole(objects, list_meta)
}

/// The Table of custom resources `objects` with a CRD version's columns.
pub fn custom_table(
    columns: Arc<CustomColumns>,
    objects: &[Value],
    list_meta: Value,
    include: IncludeObject,
    now: Timestamp,
) -> Value {
    Rows::custom(columns, include, now).whole(objects, list_meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{RESOURCES, find};

    /// Every served kind but LimitRange, CRDs, Roles and ClusterRoles (none
    /// upstream either) has its own printer; every column says what it shows (a misspelt OpenAPI
    /// property would describe it as ""); a minimal object gets a real
    /// row, not the fallback.
    #[test]
    fn every_served_kind_has_a_described_printer() {
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().expect("time");
        for def in RESOURCES {
            let p = printer_for(def.group, def.kind);
            // CRDs get the default Name/Created At table upstream too.
            let default = matches!(
                def.kind,
                "LimitRange" | "CustomResourceDefinition" | "Role" | "ClusterRole"
            );
            assert_eq!(p.is_none(), default, "{}", def.plural);
            let p = printer(def);
            for c in (p.columns)() {
                assert!(!c.description.is_empty(), "{} {}", def.plural, c.name);
            }
            let row = (p.row)(&json!({"metadata": {"name": "x"}}), now);
            assert!(row.is_some(), "{}", def.plural);
        }
        let limits = find("", "v1", "limitranges").expect("limitranges");
        let t = table(
            limits,
            &[json!({"metadata": {"name": "l", "creationTimestamp": "2025-12-31T23:00:00Z"}})],
            json!({}),
            IncludeObject::None,
            now,
        );
        assert_eq!(t["columnDefinitions"][1]["name"], "Created At");
        assert_eq!(t["columnDefinitions"][1]["type"], "date");
        assert_eq!(t["rows"][0]["cells"], json!(["l", "2025-12-31T23:00:00Z"]));
    }

    /// A custom resource's Table: the CRD version's columns, streamed with
    /// the same bytes as built whole.
    #[test]
    fn custom_resource_tables() {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceColumnDefinition;
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().expect("time");
        let (columns, error) = CustomColumns::serving(&[CustomResourceColumnDefinition {
            name: "Replicas".into(),
            type_: "integer".into(),
            json_path: ".spec.replicas".into(),
            priority: Some(1),
            ..Default::default()
        }]);
        assert_eq!(error, None);
        let columns = Arc::new(columns);
        let objects = [
            json!({"kind": "Widget", "metadata": {"name": "a"}, "spec": {"replicas": 2}}),
            json!({"kind": "Widget", "metadata": {"name": "b"}}),
        ];
        let whole = custom_table(
            columns.clone(),
            &objects,
            json!({"resourceVersion": "3"}),
            IncludeObject::Metadata,
            now,
        );
        assert_eq!(whole["columnDefinitions"][1]["name"], "Replicas");
        assert_eq!(whole["columnDefinitions"][1]["priority"], 1);
        assert_eq!(whole["rows"][0]["cells"], json!(["a", 2]));
        assert_eq!(whole["rows"][1]["cells"], json!(["b", null]));
        assert_eq!(whole["rows"][1]["object"]["kind"], "PartialObjectMetadata");
        let rows = Rows::custom(columns, IncludeObject::Metadata, now);
        let mut streamed = rows.head(json!({"resourceVersion": "3"})).expect("head");
        for (i, o) in objects.iter().enumerate() {
            if i > 0 {
                streamed.push(b',');
            }
            rows.write(&mut streamed, o).expect("row");
        }
        streamed.extend_from_slice(TABLE_END);
        assert_eq!(streamed, serde_json::to_vec(&whole).expect("encodes"));
    }

    #[test]
    fn every_printer_has_as_many_cells_as_columns() {
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().expect("time");
        for def in RESOURCES {
            let t = table(
                def,
                &[json!({"metadata": {"name": "x"}})],
                json!({}),
                IncludeObject::Metadata,
                now,
            );
            let cols = t["columnDefinitions"].as_array().map(Vec::len);
            assert_eq!(
                t["rows"][0]["cells"].as_array().map(Vec::len),
                cols,
                "{}",
                def.plural
            );
            assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
            assert!(
                t["columnDefinitions"][0]["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty())
                    || def.kind == "Event",
                "{}",
                def.plural
            );
        }
        let ns = find("", "v1", "namespaces").expect("ns");
        let t = table(
            ns,
            &[json!({"metadata": {"name": "x"}})],
            json!({"resourceVersion": "7"}),
            IncludeObject::None,
            now,
        );
        assert_eq!(t["rows"][0]["object"], Value::Null);
        assert_eq!(t["metadata"]["resourceVersion"], "7");
        let full = table(
            ns,
            &[json!({"kind": "Namespace", "metadata": {"name": "x"}})],
            json!({}),
            IncludeObject::Object,
            now,
        );
        assert_eq!(full["rows"][0]["object"]["kind"], "Namespace");
    }
}
