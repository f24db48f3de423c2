//! The schemas of the built-in kinds, derived once from the embedded OpenAPI
//! definitions ([`crate::openapi::DEFINITIONS_JSON`]):
//!
//! * `$ref` / `allOf: [$ref]` → the referenced definition ([`Schema::Def`]);
//!   a definition with `properties` is a struct, one with
//!   `x-kubernetes-map-type: atomic` an atomic struct;
//! * `type: array` → a list: strategic merge patch from
//!   `x-kubernetes-patch-strategy` (`merge` in its comma list) and
//!   `x-kubernetes-patch-merge-key`; apply from `x-kubernetes-list-type` /
//!   `x-kubernetes-list-map-keys`, falling back to the patch strategy as
//!   kube-openapi's `schemaconv` does (merge key → map on that key, merge
//!   without key → set, else atomic); a `required` list is always present;
//! * `additionalProperties` → a map, atomic with `x-kubernetes-map-type:
//!   atomic`; anything else is [`Schema::Any`].
//!
//! The file is generated from k8s-openapi, whose merge strategies lose some
//! of upstream's Go tags (`exitplan-openapi-gen` probes them): it has no
//! `+structType=atomic`, keeps only the first of several list-map keys and
//! no key defaults, and writes `patchStrategy: merge` on every set or map
//! list, also where upstream has a list type but no patch strategy.
//! [`FIELD_OVERRIDES`] and [`ATOMIC_STRUCTS`] restore upstream's tags for
//! exactly those fields (checked against the `+` tags in upstream's
//! `generated.proto` comments, as carried by the k8s-pb crate).

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

use super::{ANY, Fields, ListSchema, Schema, SmpList, SsaList, TypeSchema};

/// Strategic merge patch tags of an overridden list.
#[derive(Clone, Copy, Debug)]
enum Smp {
    /// No `patchStrategy`.
    Replace,
    /// `patchStrategy:"merge" patchMergeKey:"<key>"`.
    Key(&'static str),
}

/// Apply tags of an overridden list.
#[derive(Clone, Copy, Debug)]
enum Ssa {
    /// `+listType=atomic`.
    Atomic,
    /// `+listType=set`.
    Set,
    /// `+listType=map` with `+listMapKey`s and their defaults.
    Map(&'static [(&'static str, Option<&'static str>)]),
}

/// `+listMapKey=containerPort +listMapKey=protocol`; `protocol` has
/// `+default="TCP"`.
const CONTAINER_PORT_KEYS: &[(&str, Option<&str>)] =
    &[("containerPort", None), ("protocol", Some("TCP"))];

/// Upstream's tags of the list fields the definitions describe wrongly:
/// `(definition, field, strategic merge patch, apply)`.
const FIELD_OVERRIDES: &[(&str, &str, Smp, Ssa)] = &[
    // `+listType=atomic` beside `patchStrategy:"merge"`.
    (
        "io.k8s.api.batch.v1.JobStatus",
        "conditions",
        Smp::Key("type"),
        Ssa::Atomic,
    ),
    (
        "io.k8s.api.core.v1.PodStatus",
        "hostIPs",
        Smp::Key("ip"),
        Ssa::Atomic,
    ),
    // Two list-map keys, `protocol` defaulting to TCP.
    (
        "io.k8s.api.core.v1.Container",
        "ports",
        Smp::Key("containerPort"),
        Ssa::Map(CONTAINER_PORT_KEYS),
    ),
    (
        "io.k8s.api.core.v1.EphemeralContainer",
        "ports",
        Smp::Key("containerPort"),
        Ssa::Map(CONTAINER_PORT_KEYS),
    ),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "ports",
        Smp::Key("port"),
        Ssa::Map(&[("port", None), ("protocol", Some("TCP"))]),
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "topologySpreadConstraints",
        Smp::Key("topologyKey"),
        Ssa::Map(&[("topologyKey", None), ("whenUnsatisfiable", None)]),
    ),
    // A list type without a patch strategy.
    (
        "io.k8s.api.core.v1.ResourceRequirements",
        "claims",
        Smp::Replace,
        Ssa::Map(&[("name", None)]),
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus",
        "conditions",
        Smp::Replace,
        Ssa::Map(&[("type", None)]),
    ),
    (
        "io.k8s.api.batch.v1.UncountedTerminatedPods",
        "succeeded",
        Smp::Replace,
        Ssa::Set,
    ),
    (
        "io.k8s.api.batch.v1.UncountedTerminatedPods",
        "failed",
        Smp::Replace,
        Ssa::Set,
    ),
    (
        "io.k8s.api.core.v1.VolumeMount",
        "bindMountOptions",
        Smp::Replace,
        Ssa::Set,
    ),
    // `+listType=set` the probe could not see (lists of integers and of
    // strings it read as atomic).
    (
        "io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement",
        "values",
        Smp::Replace,
        Ssa::Set,
    ),
    (
        "io.k8s.api.core.v1.ContainerRestartRuleOnExitCodes",
        "values",
        Smp::Replace,
        Ssa::Set,
    ),
    (
        "io.k8s.api.discovery.v1.Endpoint",
        "addresses",
        Smp::Replace,
        Ssa::Set,
    ),
];

/// `+structType=atomic` definitions (apply owns them whole).
const ATOMIC_STRUCTS: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
    "io.k8s.api.core.v1.ConfigMapKeySelector",
    "io.k8s.api.core.v1.EndpointAddress",
    "io.k8s.api.core.v1.EndpointPort",
    "io.k8s.api.core.v1.FileKeySelector",
    "io.k8s.api.core.v1.LocalObjectReference",
    "io.k8s.api.core.v1.NodeSelector",
    "io.k8s.api.core.v1.NodeSelectorTerm",
    "io.k8s.api.core.v1.ObjectFieldSelector",
    "io.k8s.api.core.v1.ObjectReference",
    "io.k8s.api.core.v1.ResourceFieldSelector",
    "io.k8s.api.core.v1.ScopeSelector",
    "io.k8s.api.core.v1.SecretKeySelector",
    "io.k8s.api.core.v1.SecretReference",
    "io.k8s.api.core.v1.TopologySelectorTerm",
    "io.k8s.api.core.v1.TypedLocalObjectReference",
    "io.k8s.api.discovery.v1.EndpointPort",
    "io.k8s.api.networking.v1.ServiceBackendPort",
    // exitplan's lifecycle.k8s.io types.
    "io.k8s.api.lifecycle.v1alpha1.Requester",
    "io.k8s.api.lifecycle.v1alpha1.TargetResponder",
];

/// Kinds whose `/status` also ignores `metadata` (group, kind).
const STATUS_IGNORES_METADATA: &[(&str, &str)] = &[
    ("lifecycle.k8s.io", "EvictionRequest"),
    ("lifecycle.k8s.io", "Eviction"),
];

/// The parts of an OpenAPI schema that decide merging (everything else,
/// descriptions included, is skipped while parsing).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Raw {
    #[serde(rename = "$ref")]
    reference: Option<String>,
    #[serde(rename = "allOf")]
    all_of: Vec<Raw>,
    #[serde(rename = "type")]
    ty: Option<String>,
    properties: BTreeMap<String, Raw>,
    required: Vec<String>,
    items: Option<Box<Raw>>,
    #[serde(rename = "additionalProperties")]
    additional: Option<Additional>,
    #[serde(rename = "x-kubernetes-patch-strategy")]
    patch_strategy: Option<String>,
    #[serde(rename = "x-kubernetes-patch-merge-key")]
    patch_merge_key: Option<String>,
    #[serde(rename = "x-kubernetes-list-type")]
    list_type: Option<String>,
    #[serde(rename = "x-kubernetes-list-map-keys")]
    list_map_keys: Vec<String>,
    #[serde(rename = "x-kubernetes-map-type")]
    map_type: Option<String>,
}

/// `additionalProperties`: a schema or a boolean.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Additional {
    Bool(bool),
    Schema(Box<Raw>),
}

#[derive(Deserialize)]
struct Doc {
    definitions: BTreeMap<String, Raw>,
}

/// The compiled definitions and the kinds among them.
struct Table {
    /// Each definition's schema, by index (definition names sorted).
    defs: Vec<Schema>,
    /// Definition indexes by name.
    names: HashMap<String, usize>,
    /// The kinds: `(package, kind)` → schema.
    kinds: HashMap<(String, String), TypeSchema>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let doc = serde_json::from_str::<Doc>(crate::openapi::DEFINITIONS_JSON).ok();
        build(doc.map(|d| d.definitions).unwrap_or_default())
    })
}

/// The built-in definition `i` ([`ANY`] out of range).
pub fn definition(i: usize) -> &'static Schema {
    table().defs.get(i).unwrap_or(&ANY)
}

/// A reference to the built-in definition `name` (`None`: not defined).
pub fn definition_named(name: &str) -> Option<Schema> {
    table().names.get(name).map(|&i| Schema::Def(i))
}

/// The definition package of an API group (`core`, `apps`, `events` for
/// `events.k8s.io`, `apiextensions`).
fn package(group: &str) -> &str {
    match group {
        "" => "core",
        g => g.split('.').next().unwrap_or(g),
    }
}

/// `(package, version, kind)` of a kind's definition name.
fn kind_of(name: &str) -> Option<(&str, &str, &str)> {
    if let Some(rest) = name.strip_prefix("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.")
    {
        let (version, kind) = rest.split_once('.')?;
        return (!kind.contains('.')).then_some(("apiextensions", version, kind));
    }
    let mut parts = name.strip_prefix("io.k8s.api.")?.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(p), Some(v), Some(k), None) => Some((p, v, k)),
        _ => None,
    }
}

/// The schema of built-in kind `group`/`kind`.
pub fn lookup(group: &str, kind: &str) -> Option<&'static TypeSchema> {
    table()
        .kinds
        .get(&(package(group).to_owned(), kind.to_owned()))
}

/// The version this server serves `group`/`kind` at (`v1`, `v1alpha1`).
pub fn served_version(group: &str, kind: &str) -> Option<&'static str> {
    lookup(group, kind).map(|t| t.version.as_str())
}

fn build(raw: BTreeMap<String, Raw>) -> Table {
    let index: HashMap<&str, usize> = raw
        .keys()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let defs = raw
        .iter()
        .map(|(name, def)| compile_definition(name, def, &index))
        .collect();
    let mut kinds = HashMap::new();
    for (name, def) in &raw {
        let Some((pkg, version, kind)) = kind_of(name) else {
            continue;
        };
        let is_kind = ["apiVersion", "kind", "metadata"]
            .iter()
            .all(|p| def.properties.contains_key(*p));
        let Some(&i) = index.get(name.as_str()).filter(|_| is_kind) else {
            continue;
        };
        let status_ignores_metadata = STATUS_IGNORES_METADATA
            .iter()
            .any(|(g, k)| package(g) == pkg && *k == kind);
        kinds
            .entry((pkg.to_owned(), kind.to_owned()))
            .or_insert(TypeSchema {
                version: version.to_owned(),
                root: Schema::Def(i),
                status_subresource: def.properties.contains_key("status"),
                status_ignores_metadata,
                strategic: true,
            });
    }
    let names = index.into_iter().map(|(n, i)| (n.to_owned(), i)).collect();
    Table { defs, names, kinds }
}

fn ref_name(raw: &Raw) -> Option<&str> {
    raw.reference
        .as_deref()
        .or_else(|| raw.all_of.first()?.reference.as_deref())?
        .rsplit('/')
        .next()
}

fn compile_definition(name: &str, def: &Raw, index: &HashMap<&str, usize>) -> Schema {
    let atomic = ATOMIC_STRUCTS.contains(&name) || def.map_type.as_deref() == Some("atomic");
    if def.properties.is_empty() {
        return compile(def, index);
    }
    let fields = Fields::new(
        def.properties
            .iter()
            .map(|(prop, raw)| {
                let required = def.required.iter().any(|r| r == prop);
                let schema = match FIELD_OVERRIDES
                    .iter()
                    .find(|(d, p, ..)| *d == name && p == prop)
                {
                    Some((_, _, smp, ssa)) => overridden(raw, *smp, *ssa, required, index),
                    None => compile_field(raw, required, index),
                };
                (Box::from(prop.as_str()), schema)
            })
            .collect(),
    );
    if atomic {
        Schema::AtomicStruct(fields)
    } else {
        Schema::Struct(fields)
    }
}

/// A value's schema (a definition's own when it has no properties).
fn compile(raw: &Raw, index: &HashMap<&str, usize>) -> Schema {
    compile_field(raw, false, index)
}

fn compile_field(raw: &Raw, required: bool, index: &HashMap<&str, usize>) -> Schema {
    if let Some(name) = ref_name(raw) {
        return index.get(name).map_or(Schema::Any, |&i| Schema::Def(i));
    }
    if raw.ty.as_deref() == Some("array") {
        let elem = raw
            .items
            .as_deref()
            .map_or(Schema::Any, |i| compile(i, index));
        let smp = smp_of(raw);
        let ssa = ssa_of(raw, &smp);
        return list(smp, ssa, elem, required);
    }
    if !raw.properties.is_empty() {
        let fields = Fields::new(
            raw.properties
                .iter()
                .map(|(p, r)| {
                    let req = raw.required.iter().any(|x| x == p);
                    (Box::from(p.as_str()), compile_field(r, req, index))
                })
                .collect(),
        );
        return if raw.map_type.as_deref() == Some("atomic") {
            Schema::AtomicStruct(fields)
        } else {
            Schema::Struct(fields)
        };
    }
    match &raw.additional {
        Some(_) if raw.map_type.as_deref() == Some("atomic") => Schema::AtomicMap,
        Some(Additional::Schema(values)) => Schema::Map(Box::new(compile(values, index))),
        Some(Additional::Bool(true)) => Schema::Map(Box::new(Schema::Any)),
        _ => Schema::Any,
    }
}

/// A list; `required` lists are always present (only granular ones care).
fn list(smp: SmpList, ssa: SsaList, elem: Schema, required: bool) -> Schema {
    let always_present = required && ssa != SsaList::Atomic;
    Schema::List(Box::new(ListSchema {
        smp,
        ssa,
        elem,
        always_present,
    }))
}

/// `x-kubernetes-patch-strategy` (a comma list: `merge,retainKeys`) and
/// `x-kubernetes-patch-merge-key`.
fn smp_of(raw: &Raw) -> SmpList {
    let merge = raw
        .patch_strategy
        .as_deref()
        .is_some_and(|s| s.split(',').any(|p| p == "merge"));
    match (merge, raw.patch_merge_key.as_deref()) {
        (false, _) => SmpList::Replace,
        (true, Some(key)) => SmpList::MergeKey(key.into()),
        (true, None) => SmpList::MergePrimitives,
    }
}

/// `x-kubernetes-list-type`, else the patch strategy (schemaconv's
/// fallback).
fn ssa_of(raw: &Raw, smp: &SmpList) -> SsaList {
    match raw.list_type.as_deref() {
        Some("map") => SsaList::Map(
            raw.list_map_keys
                .iter()
                .map(|k| (Box::from(k.as_str()), None))
                .collect(),
        ),
        Some("set") => SsaList::Set,
        Some(_) => SsaList::Atomic,
        None => match smp {
            SmpList::MergeKey(k) => SsaList::Map(vec![(k.clone(), None)]),
            SmpList::MergePrimitives => SsaList::Set,
            SmpList::Replace => SsaList::Atomic,
        },
    }
}

fn overridden(
    raw: &Raw,
    smp: Smp,
    ssa: Ssa,
    required: bool,
    index: &HashMap<&str, usize>,
) -> Schema {
    let elem = raw
        .items
        .as_deref()
        .map_or(Schema::Any, |i| compile(i, index));
    let smp = match smp {
        Smp::Replace => SmpList::Replace,
        Smp::Key(k) => SmpList::MergeKey(k.into()),
    };
    let ssa = match ssa {
        Ssa::Atomic => SsaList::Atomic,
        Ssa::Set => SsaList::Set,
        Ssa::Map(keys) => SsaList::Map(
            keys.iter()
                .map(|(k, d)| (Box::from(*k), d.map(|d| Value::String(d.to_owned()))))
                .collect(),
        ),
    };
    list(smp, ssa, elem, required)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded file parses, and every override names a field and
    /// definition it has (a regenerated file that renames one fails here).
    #[test]
    fn overrides_name_existing_fields() {
        let raw = serde_json::from_str::<Doc>(crate::openapi::DEFINITIONS_JSON)
            .expect("definitions.json")
            .definitions;
        assert!(raw.len() > 300, "{} definitions", raw.len());
        for (def, prop, ..) in FIELD_OVERRIDES {
            let d = raw.get(*def).unwrap_or_else(|| panic!("{def}"));
            let p = d
                .properties
                .get(*prop)
                .unwrap_or_else(|| panic!("{def}.{prop}"));
            assert_eq!(p.ty.as_deref(), Some("array"), "{def}.{prop}");
        }
        for def in ATOMIC_STRUCTS {
            assert!(raw.contains_key(*def), "{def}");
        }
    }

    /// One definition per served (package, kind): a kind served at two
    /// versions would need the version in the lookup.
    #[test]
    fn kinds_are_unique_per_package() {
        let raw = serde_json::from_str::<Doc>(crate::openapi::DEFINITIONS_JSON)
            .expect("definitions.json")
            .definitions;
        let mut seen = std::collections::BTreeSet::new();
        for (name, def) in &raw {
            if let Some((p, _, k)) = kind_of(name)
                && def.properties.contains_key("metadata")
                && def.properties.contains_key("kind")
            {
                assert!(seen.insert((p, k)), "{name}: a second version of {p}/{k}");
            }
        }
    }
}
