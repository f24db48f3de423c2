//! `metadata.managedFields` entries as kube-apiserver reads and writes them
//! (`managedfields/internal/managedfields.go`): one entry per manager
//! identity — manager, operation, and for `Update` the API version, plus
//! the subresource — sorted by operation, time, manager, version and
//! subresource.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Map, Value};

use super::fields::FieldSet;
use super::gofmt;

/// `Apply` or `Update`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Any other write.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// A manager identity (`BuildManagerIdentifier`): appliers are one
/// identity whatever version they applied at.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ManagerId {
    /// The field manager name.
    pub manager: String,
    /// The operation.
    pub operation: Operation,
    /// The API version, for `Update` only.
    pub api_version: Option<String>,
    /// The subresource (`""` for the main resource).
    pub subresource: String,
}

impl ManagerId {
    /// The identity `buildManagerInfo` gives a request (an empty manager
    /// name is `unknown`).
    pub fn new(
        manager: &str,
        operation: Operation,
        version: &str,
        subresource: Option<&str>,
    ) -> ManagerId {
        ManagerId {
            manager: if manager.is_empty() {
                "unknown"
            } else {
                manager
            }
            .to_owned(),
            operation,
            api_version: (operation == Operation::Update).then(|| version.to_owned()),
            subresource: subresource.unwrap_or_default().to_owned(),
        }
    }

    /// The identifier JSON upstream keys managers by (and sorts on when
    /// capping update managers).
    pub fn identifier(&self) -> String {
        let mut s = format!(
            "{{\"manager\":{},\"operation\":{}",
            super::fields::go_json(&Value::String(self.manager.clone())),
            super::fields::go_json(&Value::String(self.operation.as_str().into()))
        );
        if let Some(v) = &self.api_version {
            s.push_str(&format!(
                ",\"apiVersion\":{}",
                super::fields::go_json(&Value::String(v.clone()))
            ));
        }
        if !self.subresource.is_empty() {
            s.push_str(&format!(
                ",\"subresource\":{}",
                super::fields::go_json(&Value::String(self.subresource.clone()))
            ));
        }
        s.push('}');
        s
    }

    /// `printManager`: how conflicts name a manager
    /// (`"kubectl-client-side-apply" using v1`).
    pub fn print(&self) -> String {
        let mut s = gofmt::quote(&self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(
                " with subresource {}",
                gofmt::quote(&self.subresource)
            ));
        }
        if let Some(v) = &self.api_version {
            s.push_str(&format!(" using {v}"));
        }
        s
    }
}

/// What a manager owns.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The owned fields.
    pub set: FieldSet,
    /// The version the fields are expressed in.
    pub api_version: String,
    /// Whether they were applied.
    pub applied: bool,
    /// The entry's `time`, as written.
    pub time: Option<String>,
}

impl Entry {
    /// The time in whole seconds since the epoch (0 when unset).
    fn seconds(&self) -> i64 {
        self.time
            .as_deref()
            .and_then(|t| t.parse::<Timestamp>().ok())
            .map_or(0, |t| t.as_second())
    }
}

/// All managers of an object.
pub type Managed = BTreeMap<ManagerId, Entry>;

/// `DecodeManagedFields`.
pub fn decode(managed_fields: Option<&Value>) -> Result<Managed, String> {
    let mut out = Managed::new();
    let Some(Value::Array(entries)) = managed_fields else {
        return Ok(out);
    };
    for (i, e) in entries.iter().enumerate() {
        let empty = Map::new();
        let m = e.as_object().unwrap_or(&empty);
        let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or_default();
        let operation = match s("operation") {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => return Err("operation must be `Apply` or `Update`".to_owned()),
        };
        let api_version = s("apiVersion");
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".to_owned());
        }
        match s("fieldsType") {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
            other => {
                return Err(format!(
                    "invalid fieldsType {} in managed fields entry {i}",
                    gofmt::quote(other)
                ));
            }
        }
        let set = match m.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::new(),
            Some(v) => FieldSet::from_fields_v1(v).map_err(|err| {
                format!("error decoding versioned set: error decoding set: {err}")
            })?,
        };
        let sub = s("subresource");
        let id = ManagerId {
            manager: s("manager").to_owned(),
            operation,
            api_version: (operation == Operation::Update).then(|| api_version.to_owned()),
            subresource: sub.to_owned(),
        };
        out.insert(
            id,
            Entry {
                set,
                api_version: api_version.to_owned(),
                applied: operation == Operation::Apply,
                time: m.get("time").and_then(Value::as_str).map(str::to_owned),
            },
        );
    }
    Ok(out)
}

/// `encodeManagedFields`: `None` when nobody owns anything.
pub fn encode(managed: &Managed) -> Option<Value> {
    if managed.is_empty() {
        return None;
    }
    let mut entries: Vec<(&ManagerId, &Entry)> = managed.iter().collect();
    entries.sort_by(|(a, ea), (b, eb)| {
        let op = |e: &Entry| {
            if e.applied {
                Operation::Apply
            } else {
                Operation::Update
            }
        };
        op(ea)
            .cmp(&op(eb))
            .then_with(|| ea.seconds().cmp(&eb.seconds()))
            .then_with(|| a.manager.cmp(&b.manager))
            .then_with(|| ea.api_version.cmp(&eb.api_version))
            .then_with(|| a.subresource.cmp(&b.subresource))
    });
    let list = entries
        .into_iter()
        .map(|(id, e)| {
            let mut m = Map::new();
            m.insert("manager".into(), Value::String(id.manager.clone()));
            let op = if e.applied {
                Operation::Apply
            } else {
                id.operation
            };
            m.insert("operation".into(), Value::String(op.as_str().into()));
            m.insert("apiVersion".into(), Value::String(e.api_version.clone()));
            if let Some(t) = &e.time {
                m.insert("time".into(), Value::String(t.clone()));
            }
            m.insert("fieldsType".into(), Value::String("FieldsV1".into()));
            m.insert("fieldsV1".into(), e.set.to_fields_v1());
            if !id.subresource.is_empty() {
                m.insert("subresource".into(), Value::String(id.subresource.clone()));
            }
            Value::Object(m)
        })
        .collect();
    Some(Value::Array(list))
}

/// `capManagersManager`: at most `max` update entries; the oldest are
/// merged into `ancient-changes` buckets per version.
pub fn cap_update_managers(managed: &mut Managed, max: usize) {
    let mut updaters: Vec<ManagerId> = managed
        .iter()
        .filter(|(_, e)| !e.applied)
        .map(|(id, _)| id.clone())
        .collect();
    if updaters.len() <= max {
        return;
    }
    updaters.sort_by(|a, b| {
        let secs = |id: &ManagerId| managed.get(id).map_or(0, Entry::seconds);
        secs(a)
            .cmp(&secs(b))
            .then_with(|| a.identifier().cmp(&b.identifier()))
    });
    let mut first_by_version: BTreeMap<String, ManagerId> = BTreeMap::new();
    let mut length = updaters.len();
    for id in updaters {
        if length <= max {
            break;
        }
        let Some(entry) = managed.get(&id).cloned() else {
            continue;
        };
        let version = entry.api_version.clone();
        let bucket = ManagerId::new("ancient-changes", Operation::Update, &version, None);
        if let Some(first) = first_by_version.get(&version) {
            if !managed.contains_key(&bucket)
                && let Some(s) = managed.remove(first)
            {
                managed.insert(bucket.clone(), s);
            }
            let merged = managed
                .get(&bucket)
                .map_or_else(|| entry.set.clone(), |b| entry.set.union(&b.set));
            managed.remove(&id);
            managed.insert(
                bucket,
                Entry {
                    set: merged,
                    api_version: version,
                    applied: false,
                    time: entry.time.clone(),
                },
            );
            length -= 1;
        } else {
            first_by_version.insert(version, id);
        }
    }
}
