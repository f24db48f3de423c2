//! Field sets as `sigs.k8s.io/structured-merge-diff` keeps them (a tree of
//! path elements; a node is a *member* when the field itself is owned) and
//! their `fieldsV1` encoding in `metadata.managedFields`:
//!
//! ```text
//! {"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{}}}}}
//! ```
//!
//! `f:<name>` a field, `k:<json>` a list item by its keys, `v:<json>` a set
//! item, `i:<n>` an index, `.` the node itself.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::gofmt;

/// One step of a field path.
#[derive(Clone, Debug)]
pub enum PathElement {
    /// A struct field or map key.
    Field(String),
    /// A list item by its key fields (sorted by name).
    Key(Vec<(String, Value)>),
    /// A set item by its value.
    Value(Value),
    /// A list item by index.
    Index(i64),
}

/// structured-merge-diff's total order on values: numbers < strings <
/// booleans < lists < maps < null.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i.cmp(&j),
            _ => {
                let (fx, fy) = (
                    x.as_f64().unwrap_or_default(),
                    y.as_f64().unwrap_or_default(),
                );
                fx.partial_cmp(&fy).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (i, j) in x.iter().zip(y) {
                let c = compare_values(i, j);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            for ((ka, va), (kb, vb)) in x.iter().zip(y) {
                let c = ka
                    .as_bytes()
                    .cmp(kb.as_bytes())
                    .then_with(|| compare_values(va, vb));
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        use PathElement::{Field, Index, Key, Value as V};
        match (self, other) {
            (Field(a), Field(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Field(_), _) => Ordering::Less,
            (_, Field(_)) => Ordering::Greater,
            (Key(a), Key(b)) => {
                for ((na, va), (nb, vb)) in a.iter().zip(b) {
                    let c = na
                        .as_bytes()
                        .cmp(nb.as_bytes())
                        .then_with(|| compare_values(va, vb));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Key(_), _) => Ordering::Less,
            (_, Key(_)) => Ordering::Greater,
            (V(a), V(b)) => compare_values(a, b),
            (V(_), _) => Ordering::Less,
            (_, V(_)) => Ordering::Greater,
            (Index(a), Index(b)) => a.cmp(b),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// `value.ToString`: strings quoted, everything else as Go prints it.
fn value_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::String(s) => gofmt::quote(s),
        Value::Number(n) => gofmt::number(n),
        Value::Bool(b) => b.to_string(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(value_string).collect::<Vec<_>>().join(",")
        ),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", value_string(v)))
            .collect(),
    }
}

impl std::fmt::Display for PathElement {
    /// `PathElement.String()`: `.name`, `[name="c"]`, `[="x"]`, `[3]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathElement::Field(n) => write!(f, ".{n}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(n, v)| format!("{n}={}", value_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", value_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

impl PathElement {
    /// The `fieldsV1` key of this element (`f:name`, `k:{"name":"c"}`).
    pub fn serialize(&self) -> String {
        match self {
            PathElement::Field(n) => format!("f:{n}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(n, v)| {
                        format!(
                            "{}:{}",
                            serde_json::to_string(n).unwrap_or_default(),
                            go_json(v)
                        )
                    })
                    .collect();
                format!("k:{{{}}}", parts.join(","))
            }
            PathElement::Value(v) => format!("v:{}", go_json(v)),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a `fieldsV1` key; `Ok(None)` for a kind this version does not
    /// know (upstream drops those).
    pub fn deserialize(s: &str) -> Result<Option<PathElement>, String> {
        let bytes = s.as_bytes();
        if bytes.len() < 2 {
            return Err("key must be 2 characters long:".to_owned());
        }
        if bytes.get(1) != Some(&b':') {
            return Err(format!("missing colon: {s}"));
        }
        let rest = s.get(2..).unwrap_or_default();
        match bytes.first() {
            Some(b'f') => Ok(Some(PathElement::Field(rest.to_owned()))),
            Some(b'v') => serde_json::from_str(rest)
                .map(|v| Some(PathElement::Value(v)))
                .map_err(|e| e.to_string()),
            Some(b'k') => {
                let v: Map<String, Value> =
                    serde_json::from_str(rest).map_err(|e| e.to_string())?;
                Ok(Some(PathElement::Key(v.into_iter().collect())))
            }
            Some(b'i') => gofmt::atoi(rest).map(|i| Some(PathElement::Index(i))),
            _ => Ok(None),
        }
    }
}

/// JSON as jsoniter's standard-library-compatible encoder writes it (HTML
/// characters escaped like `encoding/json`).
pub fn go_json(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    s.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// A path as upstream prints it in conflicts: `.spec.containers[name="c"].image`.
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// A set of field paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// The empty set.
    pub fn new() -> FieldSet {
        FieldSet::default()
    }

    /// Whether the set has no paths.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(FieldSet::is_empty)
    }

    /// Adds `path` (empty paths are ignored).
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// The subset under `pe` (paths relative to it).
    pub fn with_prefix(&self, pe: &PathElement) -> Option<&FieldSet> {
        self.children.get(pe).filter(|c| !c.is_empty())
    }

    /// Whether `pe` is a member of this level.
    pub fn has_member(&self, pe: &PathElement) -> bool {
        self.members.contains(pe)
    }

    /// Paths in either set.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out.prune();
        out
    }

    /// Adds the paths of `other`: `*self = self.union(other)`, without
    /// copying what `self` already holds.
    pub fn union_with(&mut self, other: &FieldSet) {
        for m in &other.members {
            if !self.members.contains(m) {
                self.members.insert(m.clone());
            }
        }
        for (pe, child) in &other.children {
            match self.children.get_mut(pe) {
                Some(mine) => mine.union_with(child),
                None => {
                    self.children.insert(pe.clone(), child.clone());
                }
            }
        }
        self.prune();
    }

    /// Removes the paths of `other`: `*self = self.difference(other)`, in
    /// place (nothing is copied, and nothing allocated when the sets are
    /// disjoint).
    pub fn subtract(&mut self, other: &FieldSet) {
        if !other.members.is_empty() {
            self.members.retain(|m| !other.members.contains(m));
        }
        for (pe, child) in &mut self.children {
            if let Some(o) = other.children.get(pe) {
                child.subtract(o);
            }
        }
        self.prune();
    }

    /// Paths of `self` not in `other` (children of a removed member stay).
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            members: self.members.difference(&other.members).cloned().collect(),
            children: BTreeMap::new(),
        };
        for (pe, child) in &self.children {
            let c = match other.children.get(pe) {
                Some(o) => child.difference(o),
                None => child.clone(),
            };
            if !c.is_empty() {
                out.children.insert(pe.clone(), c);
            }
        }
        out
    }

    /// Paths of `self` that are not in `other` nor under a member of `other`.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            members: self.members.difference(&other.members).cloned().collect(),
            children: BTreeMap::new(),
        };
        for (pe, child) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let c = match other.children.get(pe) {
                Some(o) => child.recursive_difference(o),
                None => child.clone(),
            };
            if !c.is_empty() {
                out.children.insert(pe.clone(), c);
            }
        }
        out
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            members: self.members.intersection(&other.members).cloned().collect(),
            children: BTreeMap::new(),
        };
        for (pe, child) in &self.children {
            if let Some(o) = other.children.get(pe) {
                let c = child.intersection(o);
                if !c.is_empty() {
                    out.children.insert(pe.clone(), c);
                }
            }
        }
        out
    }

    /// Every member path, members of a level before its children, each in
    /// order (`Set.Iterate`).
    pub fn paths(&self) -> Vec<Vec<PathElement>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Vec<PathElement>>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(p);
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect(prefix, out);
            prefix.pop();
        }
    }

    fn prune(&mut self) {
        self.children.retain(|_, c| !c.is_empty());
    }

    /// Iterates this level: members and children.
    pub(crate) fn level(&self) -> (&BTreeSet<PathElement>, &BTreeMap<PathElement, FieldSet>) {
        (&self.members, &self.children)
    }

    /// Builds a set from its parts.
    pub(crate) fn from_parts(
        members: BTreeSet<PathElement>,
        children: BTreeMap<PathElement, FieldSet>,
    ) -> FieldSet {
        let mut s = FieldSet { members, children };
        s.prune();
        s
    }

    /// The `fieldsV1` JSON of this set.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit(false))
    }

    fn emit(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        for m in &self.members {
            if !self.children.contains_key(m) {
                out.insert(m.serialize(), Value::Object(Map::new()));
            }
        }
        for (pe, child) in &self.children {
            let is_member = self.members.contains(pe);
            out.insert(pe.serialize(), Value::Object(child.emit(is_member)));
        }
        if include_self && !out.is_empty() {
            out.insert(".".to_owned(), Value::Object(Map::new()));
        }
        out
    }

    /// Parses `fieldsV1` JSON.
    pub fn from_fields_v1(v: &Value) -> Result<FieldSet, String> {
        let Value::Object(m) = v else {
            return Err("fieldsV1 is not an object".to_owned());
        };
        Ok(read(m).0.unwrap_or_default())
    }
}

/// `readIterV1`: the children of a node and whether it is a member.
fn read(m: &Map<String, Value>) -> (Option<FieldSet>, bool) {
    let mut children: Option<FieldSet> = None;
    let mut is_member = false;
    for (key, v) in m {
        if key == "." {
            is_member = true;
            continue;
        }
        let Ok(Some(pe)) = PathElement::deserialize(key) else {
            continue;
        };
        let (grand, child_member) = match v {
            Value::Object(inner) => read(inner),
            _ => (None, true),
        };
        let set = children.get_or_insert_with(FieldSet::new);
        if child_member {
            set.members.insert(pe.clone());
        }
        if let Some(g) = grand {
            set.children.insert(pe, g);
        }
    }
    if children.is_none() {
        is_member = true;
    }
    (children, is_member)
}
