//! The OpenAPI schemas of a custom resource: what upstream's
//! `apiextensions-apiserver/pkg/controller/openapi/builder` publishes for one
//! version of a CustomResourceDefinition (`BuildOpenAPIV3`, and
//! `BuildOpenAPIV2` with `v2.ToStructuralOpenAPIV2` and `PruneDefaults`).
//!
//! ```text
//!   versions[].schema.openAPIV3Schema
//!     │ no invalid types, NewStructural, ValidateStructural clean
//!     │ (otherwise: no schema, the kind is published as {type: object})
//!     ▼
//!   Structural ──► unfold (x-kubernetes-int-or-string → anyOf integer|string)
//!     │ v2 only: to_v2_structural (drops allOf/anyOf/oneOf/not and nullable,
//!     │          untypes preserve-unknown objects and item-less arrays)
//!     ▼
//!   JSON schema + metadata/apiVersion/kind, embedded-resource properties,
//!   x-kubernetes-group-version-kind, x-kubernetes-selectable-fields
//!     + <Kind>List schema
//!     ▼
//!   { "com.example.v1.Widget": …, "com.example.v1.WidgetList": … }
//! ```
//!
//! [`custom_resource_v3_document`], [`v3_index_with_custom_resources`] and
//! [`v2_with_custom_resources`] assemble whole documents from them (with the
//! paths of [`super::paths`], which offer no strategic merge patch for custom
//! resources), for the `Established` CRDs and their served versions, as
//! upstream's OpenAPI controllers publish them.

use std::collections::BTreeMap;

use exitplan_api::apiextensions::schema_rules::schema_has;
use exitplan_api::apiextensions::structural::{
    Extensions, Generic, NestedValueValidation, Structural, ValueValidation, validate_structural,
};
use exitplan_api::apiextensions::validation::OPENAPI_V3_TYPES;
use exitplan_api::field::Path;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion, JSONSchemaProps,
};
use serde_json::{Map, Value, json};

use super::paths::{self, Flavor, Resource};
use super::{
    API_VERSION_DESCRIPTION, INFO_VERSION, KIND_DESCRIPTION, LIST_METADATA_DESCRIPTION,
    META_DEFINITIONS, V2_DOC, V2_REF_PREFIX, V3_REF_PREFIX, closure, fingerprint, gvk,
};

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
/// `PartialObjectMetadata`'s `metadata` description.
const OBJECT_METADATA_DESCRIPTION: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
/// The `apiVersion` description of an `x-kubernetes-embedded-resource` object.
const EMBEDDED_API_VERSION_DESCRIPTION: &str = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
/// The `kind` description of an `x-kubernetes-embedded-resource` object.
const EMBEDDED_KIND_DESCRIPTION: &str = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// The v3 component schemas upstream publishes for one version of a CRD:
/// the kind (`<reversed group>.<version>.<Kind>`, e.g.
/// `com.example.v1.Widget`) and its list, with `apiVersion`/`kind`/
/// `metadata` (`ObjectMeta`/`ListMeta` through `allOf`),
/// `x-kubernetes-group-version-kind` and the schema's descriptions,
/// validations and extensions. Empty if the CRD has no such version.
pub fn custom_resource_schemas(
    crd: &CustomResourceDefinition,
    version: &str,
) -> BTreeMap<String, Value> {
    build(crd, version, Flavor::V3)
}

/// The same for OpenAPI v2 (`definitions`, `#/definitions/` refs), after
/// upstream's v2 conversion (`ToStructuralOpenAPIV2`) and with defaults
/// pruned, as the v2 controller merges them into `/openapi/v2`.
pub fn custom_resource_definitions_v2(
    crd: &CustomResourceDefinition,
    version: &str,
) -> BTreeMap<String, Value> {
    let mut defs = build(crd, version, Flavor::V2);
    defs.values_mut().for_each(prune_defaults);
    defs
}

/// Whether upstream publishes `crd`'s OpenAPI: only once it is `Established`.
fn established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

/// The published (`Established` CRD, served version) pairs of `crds`.
fn published(
    crds: &[CustomResourceDefinition],
) -> impl Iterator<Item = (&CustomResourceDefinition, &CustomResourceDefinitionVersion)> {
    crds.iter().filter(|c| established(c)).flat_map(|c| {
        c.spec
            .versions
            .iter()
            .filter(|v| v.served)
            .map(move |v| (c, v))
    })
}

/// The REST paths of one version of a CRD (upstream's `generateBuilder`
/// routes): collection, object, `status` and `scale` when enabled; PATCH
/// without strategic merge patch.
fn resource_paths(
    crd: &CustomResourceDefinition,
    v: &CustomResourceDefinitionVersion,
    out: &mut Map<String, Value>,
    flavor: Flavor,
) {
    let sub = v.subresources.as_ref();
    let subresources = [
        ("status", sub.is_some_and(|s| s.status.is_some())),
        ("scale", sub.is_some_and(|s| s.scale.is_some())),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    let resource = Resource {
        group: &crd.spec.group,
        version: &v.name,
        kind: &crd.spec.names.kind,
        plural: &crd.spec.names.plural,
        namespaced: crd.spec.scope == "Namespaced",
        subresources,
        kind_definition: custom_definition_name(&crd.spec.group, &v.name, &crd.spec.names.kind),
        patch_types: exitplan_api::patch::CUSTOM_RESOURCE_PATCH_TYPES,
    };
    paths::add_resource(&resource, out, flavor);
}

/// `/openapi/v3/apis/<group>/<version>` for custom resources: the schemas
/// and paths of every `Established` CRD serving `group`/`version`, with the
/// meta types they refer to. `None` when no such CRD serves it.
pub fn custom_resource_v3_document(
    crds: &[CustomResourceDefinition],
    group: &str,
    version: &str,
) -> Option<Value> {
    let mut roots: Vec<String> = META_DEFINITIONS.iter().map(|s| (*s).to_owned()).collect();
    roots.extend([OBJECT_META.to_owned(), LIST_META.to_owned()]);
    let mut schemas = BTreeMap::new();
    let mut path_map = Map::new();
    let mut any = false;
    for (crd, v) in published(crds).filter(|(c, v)| c.spec.group == group && v.name == version) {
        any = true;
        if v.subresources.as_ref().is_some_and(|s| s.scale.is_some()) {
            roots.push(paths::SCALE.to_owned());
        }
        schemas.extend(custom_resource_schemas(crd, version));
        resource_paths(crd, v, &mut path_map, Flavor::V3);
    }
    if !any {
        return None;
    }
    let mut all = closure(roots);
    all.extend(schemas);
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": INFO_VERSION},
        "paths": path_map,
        "components": {"schemas": all},
    }))
}

/// `/openapi/v3`: the built-in index plus an entry, with its content hash,
/// for each group-version the `Established` CRDs serve.
pub fn v3_index_with_custom_resources(crds: &[CustomResourceDefinition]) -> Value {
    let mut index = super::v3_index();
    let mut seen = std::collections::BTreeSet::new();
    for (crd, v) in published(crds) {
        let (group, version) = (crd.spec.group.as_str(), v.name.as_str());
        if !seen.insert((group, version)) {
            continue;
        }
        let key = format!("apis/{group}/{version}");
        let Some(doc) = custom_resource_v3_document(crds, group, version) else {
            continue;
        };
        if let Some(Value::Object(paths)) = index.get_mut("paths") {
            paths.entry(key.clone()).or_insert_with(|| {
                json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={}", fingerprint(&doc))})
            });
        }
    }
    index
}

/// `/openapi/v2` with the `Established` CRDs' definitions (v2-converted,
/// defaults pruned) and paths merged in, as upstream's v2 controller
/// merges them into the static spec.
pub fn v2_with_custom_resources(crds: &[CustomResourceDefinition]) -> Value {
    let mut doc = V2_DOC.clone();
    for (crd, v) in published(crds) {
        if let Some(Value::Object(defs)) = doc.get_mut("definitions") {
            defs.extend(custom_resource_definitions_v2(crd, &v.name));
        }
        if let Some(Value::Object(path_map)) = doc.get_mut("paths") {
            resource_paths(crd, v, path_map, Flavor::V2);
        }
    }
    doc
}

/// A `/openapi/v2` document (e.g. [`v2_with_custom_resources`]) as gnostic's
/// `openapi.v2.Document` protobuf.
pub fn v2_protobuf_of(doc: &Value) -> Result<Vec<u8>, super::EncodeError> {
    super::v2_protobuf::encode(doc)
}

/// The definition name of a custom kind: the group reversed, then version
/// and kind (`util.ToRESTFriendlyName`): `example.com`, `v1`, `Widget` →
/// `com.example.v1.Widget`; a group without dots stays as it is.
pub fn custom_definition_name(group: &str, version: &str, kind: &str) -> String {
    let group = if group.contains('.') {
        group.rsplit('.').collect::<Vec<_>>().join(".")
    } else {
        group.to_owned()
    };
    format!("{group}.{version}.{kind}")
}

fn build(crd: &CustomResourceDefinition, version: &str, flavor: Flavor) -> BTreeMap<String, Value> {
    let Some(v) = crd.spec.versions.iter().find(|v| v.name == version) else {
        return BTreeMap::new();
    };
    let group = crd.spec.group.as_str();
    let names = &crd.spec.names;
    let kind = names.kind.as_str();
    let list_kind = names
        .list_kind
        .clone()
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| format!("{kind}List"));
    let name = custom_definition_name(group, version, kind);

    let mut schema = kind_schema(
        publishable_schema(v),
        flavor,
        crd.spec.preserve_unknown_fields == Some(true),
    );
    if let Value::Object(m) = &mut schema {
        m.insert(
            "x-kubernetes-group-version-kind".into(),
            gvk(group, version, kind),
        );
        let selectable: Vec<Value> = v
            .selectable_fields
            .iter()
            .flatten()
            .map(|f| {
                let path = f.json_path.strip_prefix('.').unwrap_or(&f.json_path);
                json!({"fieldPath": path})
            })
            .collect();
        if !selectable.is_empty() {
            m.insert(
                "x-kubernetes-selectable-fields".into(),
                Value::Array(selectable),
            );
        }
    }

    let list = json!({
        "description": format!("{list_kind} is a list of {kind}"),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"description": API_VERSION_DESCRIPTION, "type": "string"},
            "items": {
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", names.plural),
                "type": "array",
                "items": {"$ref": format!("{}{name}", ref_prefix(flavor))},
            },
            "kind": {"description": KIND_DESCRIPTION, "type": "string"},
            "metadata": meta_ref(flavor, LIST_META, LIST_METADATA_DESCRIPTION),
        },
        "x-kubernetes-group-version-kind": gvk(group, version, &list_kind),
    });
    BTreeMap::from([
        (custom_definition_name(group, version, &list_kind), list),
        (name, schema),
    ])
}

fn ref_prefix(flavor: Flavor) -> &'static str {
    match flavor {
        Flavor::V2 => V2_REF_PREFIX,
        Flavor::V3 => V3_REF_PREFIX,
    }
}

/// A described reference to a meta type: `$ref` with a sibling
/// description in v2, wrapped in `allOf` in v3 (where `$ref` siblings are
/// ignored), as kube-openapi renders both.
fn meta_ref(flavor: Flavor, definition: &str, description: &str) -> Value {
    let reference = format!("{}{definition}", ref_prefix(flavor));
    match flavor {
        Flavor::V2 => json!({"$ref": reference, "description": description}),
        Flavor::V3 => json!({"allOf": [{"$ref": reference}], "description": description}),
    }
}

/// The version's schema as upstream publishes it (`generateBuilder`): none
/// when it is missing, declares a type OpenAPI v3 lacks, or is not
/// structural; otherwise structural with `x-kubernetes-int-or-string`
/// unfolded.
fn publishable_schema(v: &CustomResourceDefinitionVersion) -> Option<Structural> {
    let schema = v.schema.as_ref()?.open_api_v3_schema.as_ref()?;
    let invalid_type = |s: &JSONSchemaProps| {
        s.type_
            .as_deref()
            .is_some_and(|t| !t.is_empty() && !OPENAPI_V3_TYPES.contains(&t))
    };
    if schema_has(schema, &invalid_type) {
        return None;
    }
    let mut s = Structural::new(schema).ok()?;
    if !validate_structural(&Path::new("openAPIV3Schema"), &s).is_empty() {
        return None;
    }
    unfold(&mut s);
    Some(s)
}

/// `buildKubeNative`: the kind's schema with the Kubernetes meta properties.
fn kind_schema(schema: Option<Structural>, flavor: Flavor, crd_preserve_unknown: bool) -> Value {
    let Some(mut s) = schema else {
        return json!({"type": "object"});
    };
    if flavor == Flavor::V2 {
        // kubectl would reject every unknown field if the published schema
        // listed properties, not even apiVersion/kind/metadata.
        if s.extensions.preserve_unknown_fields || crd_preserve_unknown {
            return json!({"type": "object"});
        }
        to_v2_structural(&mut s);
    }
    let mut out = structural_json(&s);
    if let Value::Object(m) = &mut out {
        let props = m
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(props) = props {
            props.insert(
                "metadata".into(),
                meta_ref(flavor, OBJECT_META, OBJECT_METADATA_DESCRIPTION),
            );
            props.insert(
                "apiVersion".into(),
                json!({"description": API_VERSION_DESCRIPTION, "type": "string"}),
            );
            props.insert(
                "kind".into(),
                json!({"description": KIND_DESCRIPTION, "type": "string"}),
            );
        }
    }
    add_embedded_properties(&mut out, flavor);
    out
}

/// `addEmbeddedProperties`: `apiVersion`, `kind` (both required) and
/// `metadata` on every `x-kubernetes-embedded-resource` object, except, in
/// v2, where unknown fields are preserved (kubectl would refuse them).
fn add_embedded_properties(s: &mut Value, flavor: Flavor) {
    let Value::Object(m) = s else {
        return;
    };
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        props
            .values_mut()
            .for_each(|p| add_embedded_properties(p, flavor));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = m.get_mut(key) {
            add_embedded_properties(child, flavor);
        }
    }
    let flag = |m: &Map<String, Value>, k: &str| m.get(k) == Some(&Value::Bool(true));
    if flavor == Flavor::V2 && flag(m, "x-kubernetes-preserve-unknown-fields") {
        return;
    }
    if !flag(m, "x-kubernetes-embedded-resource") {
        return;
    }
    let props = m
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(props) = props {
        props.insert(
            "apiVersion".into(),
            json!({"description": EMBEDDED_API_VERSION_DESCRIPTION, "type": "string"}),
        );
        props.insert(
            "kind".into(),
            json!({"description": EMBEDDED_KIND_DESCRIPTION, "type": "string"}),
        );
        props.insert(
            "metadata".into(),
            meta_ref(flavor, OBJECT_META, OBJECT_METADATA_DESCRIPTION),
        );
    }
    let required = m
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(required) = required {
        for field in ["kind", "apiVersion"] {
            if !required.iter().any(|r| r == field) {
                required.push(Value::String(field.to_owned()));
            }
        }
    }
}

/// `anyOf: [{type: integer}, {type: string}]`, the int-or-string pattern.
fn int_or_string_any_of() -> Vec<NestedValueValidation> {
    ["integer", "string"]
        .into_iter()
        .map(|t| NestedValueValidation {
            forbidden_generics: Generic {
                type_: t.to_owned(),
                ..Generic::default()
            },
            ..NestedValueValidation::default()
        })
        .collect()
}

/// `Structural.Unfold`: spells out `x-kubernetes-int-or-string` as
/// `anyOf: [{type: integer}, {type: string}]` (in front of `allOf` when
/// `anyOf` is taken), unless the schema already does.
fn unfold(s: &mut Structural) {
    if s.extensions.int_or_string {
        let pattern = int_or_string_any_of();
        let vv = &mut s.value_validation;
        let spelled = vv.any_of == pattern
            || vv
                .all_of
                .first()
                .is_some_and(|a| a.value_validation.any_of == pattern);
        if !spelled {
            if vv.any_of.is_empty() {
                vv.any_of = pattern;
            } else {
                vv.all_of.insert(
                    0,
                    NestedValueValidation {
                        value_validation: ValueValidation {
                            any_of: pattern,
                            ..ValueValidation::default()
                        },
                        ..NestedValueValidation::default()
                    },
                );
            }
        }
    }
    visit_children(s, unfold);
}

fn visit_children(s: &mut Structural, f: fn(&mut Structural)) {
    if let Some(items) = &mut s.items {
        f(items);
    }
    s.properties.values_mut().for_each(f);
    if let Some(schema) = s
        .generic
        .additional_properties
        .as_mut()
        .and_then(|a| a.schema.as_deref_mut())
    {
        f(schema);
    }
}

/// `ToStructuralOpenAPIV2`: what Swagger 2.0 and kubectl's client-side
/// validation cannot take, removed node by node (parents first).
fn to_v2_structural(s: &mut Structural) {
    let vv = &mut s.value_validation;
    vv.all_of.clear();
    vv.one_of.clear();
    vv.any_of.clear();
    vv.not = None;
    if s.generic.nullable {
        // Untyped values break kubectl if items or properties are set.
        s.generic.type_.clear();
        s.generic.nullable = false;
        s.items = None;
        s.properties.clear();
    }
    if s.extensions.preserve_unknown_fields {
        // kubectl rejects unknown fields if items or properties are set,
        // and treats a typed object without properties as closed.
        s.items = None;
        s.properties.clear();
        if s.generic.type_ == "object" {
            s.generic.type_.clear();
        }
    }
    if s.items.is_none() && s.generic.type_ == "array" {
        // kubectl cannot cope with an array without an item schema.
        s.generic.type_.clear();
    }
    let nullable: Vec<String> = s
        .properties
        .iter()
        .filter(|(_, p)| p.generic.nullable)
        .map(|(k, _)| k.clone())
        .collect();
    s.value_validation
        .required
        .retain(|r| !nullable.contains(r));
    if s.additional_schema().is_some_and(|a| a.generic.nullable) {
        s.value_validation.required.clear();
    }
    visit_children(s, to_v2_structural);
}

/// A JSON number as Go's encoder writes a `float64` (`42`, not `42.0`).
fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        // Exact: |f| < 2^53 and integral.
        #[allow(clippy::cast_possible_truncation)]
        let i = f as i64;
        json!(i)
    } else {
        json!(f)
    }
}

/// `Structural.ToKubeOpenAPI`, serialized.
fn structural_json(s: &Structural) -> Value {
    let mut m = Map::new();
    if let Some(items) = &s.items {
        m.insert("items".into(), structural_json(items));
    }
    if !s.properties.is_empty() {
        m.insert(
            "properties".into(),
            Value::Object(
                s.properties
                    .iter()
                    .map(|(k, v)| (k.clone(), structural_json(v)))
                    .collect(),
            ),
        );
    }
    if let Some(ap) = &s.generic.additional_properties {
        let v = match &ap.schema {
            Some(schema) => structural_json(schema),
            None => Value::Bool(ap.allows),
        };
        m.insert("additionalProperties".into(), v);
    }
    generic_json(&s.generic, &mut m);
    extensions_json(&s.extensions, &mut m);
    value_validation_json(&s.value_validation, &mut m);
    Value::Object(m)
}

fn nested_json(n: &NestedValueValidation) -> Value {
    let mut m = Map::new();
    value_validation_json(&n.value_validation, &mut m);
    if let Some(items) = &n.items {
        m.insert("items".into(), nested_json(items));
    }
    if !n.properties.is_empty() {
        m.insert(
            "properties".into(),
            Value::Object(
                n.properties
                    .iter()
                    .map(|(k, v)| (k.clone(), nested_json(v)))
                    .collect(),
            ),
        );
    }
    // Normally empty; `type` for the int-or-string pattern.
    generic_json(&n.forbidden_generics, &mut m);
    extensions_json(&n.forbidden_extensions, &mut m);
    Value::Object(m)
}

fn generic_json(g: &Generic, m: &mut Map<String, Value>) {
    let mut put_str = |k: &str, v: &str| {
        if !v.is_empty() {
            m.insert(k.into(), Value::String(v.to_owned()));
        }
    };
    put_str("type", &g.type_);
    put_str("description", &g.description);
    put_str("title", &g.title);
    if g.nullable {
        m.insert("nullable".into(), Value::Bool(true));
    }
    if let Some(d) = g.default.as_ref().filter(|d| !d.is_null()) {
        m.insert("default".into(), d.clone());
    }
}

fn extensions_json(x: &Extensions, m: &mut Map<String, Value>) {
    for (key, on) in [
        (
            "x-kubernetes-preserve-unknown-fields",
            x.preserve_unknown_fields,
        ),
        ("x-kubernetes-embedded-resource", x.embedded_resource),
        ("x-kubernetes-int-or-string", x.int_or_string),
    ] {
        if on {
            m.insert(key.into(), Value::Bool(true));
        }
    }
    if !x.list_map_keys.is_empty() {
        m.insert("x-kubernetes-list-map-keys".into(), json!(x.list_map_keys));
    }
    if let Some(t) = &x.list_type {
        m.insert("x-kubernetes-list-type".into(), json!(t));
    }
    if let Some(t) = &x.map_type {
        m.insert("x-kubernetes-map-type".into(), json!(t));
    }
    if !x.validations.is_empty() {
        let rules: Vec<Value> = x
            .validations
            .iter()
            .filter_map(|r| serde_json::to_value(r).ok())
            .collect();
        m.insert("x-kubernetes-validations".into(), Value::Array(rules));
    }
}

fn value_validation_json(v: &ValueValidation, m: &mut Map<String, Value>) {
    if !v.format.is_empty() {
        m.insert("format".into(), json!(v.format));
    }
    for (key, n) in [
        ("maximum", v.maximum),
        ("minimum", v.minimum),
        ("multipleOf", v.multiple_of),
    ] {
        if let Some(n) = n {
            m.insert(key.into(), number(n));
        }
    }
    for (key, on) in [
        ("exclusiveMaximum", v.exclusive_maximum),
        ("exclusiveMinimum", v.exclusive_minimum),
        ("uniqueItems", v.unique_items),
    ] {
        if on {
            m.insert(key.into(), Value::Bool(true));
        }
    }
    for (key, n) in [
        ("maxLength", v.max_length),
        ("minLength", v.min_length),
        ("maxItems", v.max_items),
        ("minItems", v.min_items),
        ("maxProperties", v.max_properties),
        ("minProperties", v.min_properties),
    ] {
        if let Some(n) = n {
            m.insert(key.into(), json!(n));
        }
    }
    if !v.pattern.is_empty() {
        m.insert("pattern".into(), json!(v.pattern));
    }
    if !v.enum_.is_empty() {
        m.insert("enum".into(), Value::Array(v.enum_.clone()));
    }
    if !v.required.is_empty() {
        m.insert("required".into(), json!(v.required));
    }
    for (key, list) in [
        ("allOf", &v.all_of),
        ("anyOf", &v.any_of),
        ("oneOf", &v.one_of),
    ] {
        if !list.is_empty() {
            m.insert(key.into(), list.iter().map(nested_json).collect());
        }
    }
    if let Some(not) = &v.not {
        m.insert("not".into(), nested_json(not));
    }
}

/// kube-openapi's `PruneDefaults`: no `default` anywhere in a schema (the
/// v2 document is merged with the built-in one, which has none). Walks
/// schema positions only: a property named `default` stays.
fn prune_defaults(s: &mut Value) {
    let Value::Object(m) = s else {
        return;
    };
    m.remove("default");
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        props.values_mut().for_each(prune_defaults);
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = m.get_mut(key) {
            prune_defaults(child);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = m.get_mut(key) {
            list.iter_mut().for_each(prune_defaults);
        }
    }
}

#[cfg(test)]
#[path = "custom_tests.rs"]
mod tests;
