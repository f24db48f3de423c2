//! The structural schema of a CRD version (`pkg/apiserver/schema`):
//! [`Structural::new`] is `NewStructural`, [`validate_structural`] is
//! `ValidateStructural` (invariants and completeness).
//!
//! A structural schema specifies `type` for every field, keeps value
//! validations (`allOf`, `anyOf`, `oneOf`, `not`) free of structure that is
//! not also declared outside them, and restricts `metadata` at the root to
//! `name` and `generateName`.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinitionVersion, JSONSchemaProps, JSONSchemaPropsOrArray,
    JSONSchemaPropsOrBool, ValidationRule,
};
use serde_json::Value;

use crate::field::{Error, ErrorList, Path};

/// Why a schema cannot be turned into a structural schema (`NewStructural`'s errors).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StructuralError {
    /// A field the structural schema cannot represent.
    #[error("OpenAPIV3Schema '{0}' is not supported")]
    Unsupported(&'static str),
    /// `items` given as a list of schemas.
    #[error("OpenAPIV3Schema 'items' must be a schema, but is an array")]
    ItemsArray,
    /// `x-kubernetes-preserve-unknown-fields: false`.
    #[error("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined")]
    PreserveUnknownFieldsFalse,
}

/// `additionalProperties`: a boolean or a schema (`StructuralOrBool`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AdditionalProperties {
    /// `additionalProperties: true/false` (true when a schema is given).
    pub allows: bool,
    /// The schema of the values, if any.
    pub schema: Option<Box<Structural>>,
}

/// The Kubernetes vendor extensions of a schema node (`Extensions`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extensions {
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-embedded-resource: true`.
    pub embedded_resource: bool,
    /// `x-kubernetes-int-or-string: true`.
    pub int_or_string: bool,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`.
    pub map_type: Option<String>,
    /// `x-kubernetes-validations` (compiled by `exitplan-cel`, kept here verbatim).
    pub validations: Vec<ValidationRule>,
}

/// The generic (structure-defining) fields of a schema node (`Generic`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Generic {
    /// `type` (empty when unset).
    pub type_: String,
    /// `description`.
    pub description: String,
    /// `title`.
    pub title: String,
    /// `nullable`.
    pub nullable: bool,
    /// `default`.
    pub default: Option<Value>,
    /// `additionalProperties`.
    pub additional_properties: Option<AdditionalProperties>,
}

/// A compiled `pattern` (compared by its source text).
#[derive(Clone, Debug)]
pub struct Pattern(pub regex::Regex);

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

/// The value validations of a schema node (`ValueValidation`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValueValidation {
    /// `format`.
    pub format: String,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `maxLength`.
    pub max_length: Option<i64>,
    /// `minLength`.
    pub min_length: Option<i64>,
    /// `pattern`.
    pub pattern: String,
    /// `pattern`, compiled once (`None` when empty or not a valid regex).
    pub pattern_regex: Option<Pattern>,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `enum`.
    pub enum_: Vec<Value>,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `required`.
    pub required: Vec<String>,
    /// `allOf`.
    pub all_of: Vec<NestedValueValidation>,
    /// `oneOf`.
    pub one_of: Vec<NestedValueValidation>,
    /// `anyOf`.
    pub any_of: Vec<NestedValueValidation>,
    /// `not`.
    pub not: Option<Box<NestedValueValidation>>,
}

/// A schema under `allOf`/`anyOf`/`oneOf`/`not`: value validation only; any
/// generic field or extension set there is "forbidden" (`NestedValueValidation`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NestedValueValidation {
    /// The value validations.
    pub value_validation: ValueValidation,
    /// `items`.
    pub items: Option<Box<NestedValueValidation>>,
    /// `properties`.
    pub properties: BTreeMap<String, NestedValueValidation>,
    /// Generic fields, which must stay unset to be structural.
    pub forbidden_generics: Generic,
    /// Extensions, which must stay unset to be structural (except validations).
    pub forbidden_extensions: Extensions,
}

/// A structural schema node (`Structural`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Structural {
    /// `type`, `nullable`, `default`, `additionalProperties`, …
    pub generic: Generic,
    /// `x-kubernetes-*`.
    pub extensions: Extensions,
    /// Value validations (`None` only for the implicit root of a schemaless resource).
    pub value_validation: ValueValidation,
    /// `items`.
    pub items: Option<Box<Structural>>,
    /// `properties`.
    pub properties: BTreeMap<String, Structural>,
}

fn unsupported(s: &JSONSchemaProps) -> Result<(), StructuralError> {
    if s.id.as_deref().is_some_and(|v| !v.is_empty()) {
        return Err(StructuralError::Unsupported("id"));
    }
    if s.schema.as_deref().is_some_and(|v| !v.is_empty()) {
        return Err(StructuralError::Unsupported("schema"));
    }
    if s.ref_path.as_deref().is_some_and(|v| !v.is_empty()) {
        return Err(StructuralError::Unsupported("$ref"));
    }
    if s.pattern_properties.as_ref().is_some_and(|v| !v.is_empty()) {
        return Err(StructuralError::Unsupported("patternProperties"));
    }
    if s.dependencies.as_ref().is_some_and(|v| !v.is_empty()) {
        return Err(StructuralError::Unsupported("dependencies"));
    }
    if s.additional_items.is_some() {
        return Err(StructuralError::Unsupported("additionalItems"));
    }
    if s.definitions.as_ref().is_some_and(|v| !v.is_empty()) {
        return Err(StructuralError::Unsupported("definitions"));
    }
    Ok(())
}

fn generics(s: &JSONSchemaProps) -> Result<Generic, StructuralError> {
    let additional_properties = match &s.additional_properties {
        None => None,
        Some(JSONSchemaPropsOrBool::Bool(b)) => Some(AdditionalProperties {
            allows: *b,
            schema: None,
        }),
        Some(JSONSchemaPropsOrBool::Schema(schema)) => Some(AdditionalProperties {
            allows: true,
            schema: Some(Box::new(Structural::new(schema)?)),
        }),
    };
    Ok(Generic {
        type_: s.type_.clone().unwrap_or_default(),
        description: s.description.clone().unwrap_or_default(),
        title: s.title.clone().unwrap_or_default(),
        nullable: s.nullable.unwrap_or(false),
        default: s.default.as_ref().map(|d| d.0.clone()),
        additional_properties,
    })
}

fn extensions(s: &JSONSchemaProps) -> Result<Extensions, StructuralError> {
    if s.x_kubernetes_preserve_unknown_fields == Some(false) {
        return Err(StructuralError::PreserveUnknownFieldsFalse);
    }
    Ok(Extensions {
        preserve_unknown_fields: s.x_kubernetes_preserve_unknown_fields == Some(true),
        embedded_resource: s.x_kubernetes_embedded_resource.unwrap_or(false),
        int_or_string: s.x_kubernetes_int_or_string.unwrap_or(false),
        list_type: s.x_kubernetes_list_type.clone(),
        list_map_keys: s.x_kubernetes_list_map_keys.clone().unwrap_or_default(),
        map_type: s.x_kubernetes_map_type.clone(),
        validations: s.x_kubernetes_validations.clone().unwrap_or_default(),
    })
}

fn nested_list(
    list: Option<&Vec<JSONSchemaProps>>,
) -> Result<Vec<NestedValueValidation>, StructuralError> {
    list.map(|l| l.iter().map(NestedValueValidation::new).collect())
        .transpose()
        .map(Option::unwrap_or_default)
}

fn value_validation(s: &JSONSchemaProps) -> Result<ValueValidation, StructuralError> {
    Ok(ValueValidation {
        format: s.format.clone().unwrap_or_default(),
        maximum: s.maximum,
        exclusive_maximum: s.exclusive_maximum.unwrap_or(false),
        minimum: s.minimum,
        exclusive_minimum: s.exclusive_minimum.unwrap_or(false),
        max_length: s.max_length,
        min_length: s.min_length,
        pattern: s.pattern.clone().unwrap_or_default(),
        pattern_regex: s
            .pattern
            .as_deref()
            .filter(|p| !p.is_empty())
            .and_then(|p| super::go_regex::compile(p).ok())
            .map(Pattern),
        max_items: s.max_items,
        min_items: s.min_items,
        unique_items: s.unique_items.unwrap_or(false),
        multiple_of: s.multiple_of,
        enum_: s
            .enum_
            .as_ref()
            .map(|e| e.iter().map(|v| v.0.clone()).collect())
            .unwrap_or_default(),
        max_properties: s.max_properties,
        min_properties: s.min_properties,
        required: s.required.clone().unwrap_or_default(),
        all_of: nested_list(s.all_of.as_ref())?,
        one_of: nested_list(s.one_of.as_ref())?,
        any_of: nested_list(s.any_of.as_ref())?,
        not: s
            .not
            .as_deref()
            .map(NestedValueValidation::new)
            .transpose()?
            .map(Box::new),
    })
}

fn single_item(
    items: Option<&JSONSchemaPropsOrArray>,
) -> Result<Option<&JSONSchemaProps>, StructuralError> {
    match items {
        None => Ok(None),
        Some(JSONSchemaPropsOrArray::Schema(s)) => Ok(Some(s)),
        Some(JSONSchemaPropsOrArray::Schemas(v)) if v.is_empty() => Ok(None),
        Some(JSONSchemaPropsOrArray::Schemas(_)) => Err(StructuralError::ItemsArray),
    }
}

impl NestedValueValidation {
    /// `newNestedValueValidation`.
    pub fn new(s: &JSONSchemaProps) -> Result<Self, StructuralError> {
        unsupported(s)?;
        let items = single_item(s.items.as_ref())?
            .map(NestedValueValidation::new)
            .transpose()?
            .map(Box::new);
        let mut properties = BTreeMap::new();
        for (k, p) in s.properties.iter().flatten() {
            properties.insert(k.clone(), NestedValueValidation::new(p)?);
        }
        Ok(NestedValueValidation {
            value_validation: value_validation(s)?,
            items,
            properties,
            forbidden_generics: generics_nested(s)?,
            forbidden_extensions: extensions(s)?,
        })
    }
}

/// Generics under a junctor: `additionalProperties` is kept as a schema-less
/// marker plus its nested form (structure is forbidden there anyway).
fn generics_nested(s: &JSONSchemaProps) -> Result<Generic, StructuralError> {
    let mut g = generics(s)?;
    if let Some(ap) = &mut g.additional_properties {
        ap.schema = None;
        ap.allows = true;
    }
    Ok(g)
}

impl Structural {
    /// `NewStructural`: converts an OpenAPI v3 schema. Fails only on fields
    /// CRD validation already rejects.
    pub fn new(s: &JSONSchemaProps) -> Result<Self, StructuralError> {
        unsupported(s)?;
        let items = single_item(s.items.as_ref())?
            .map(Structural::new)
            .transpose()?
            .map(Box::new);
        let mut properties = BTreeMap::new();
        for (k, p) in s.properties.iter().flatten() {
            properties.insert(k.clone(), Structural::new(p)?);
        }
        Ok(Structural {
            generic: generics(s)?,
            extensions: extensions(s)?,
            value_validation: value_validation(s)?,
            items,
            properties,
        })
    }

    /// The structural schema of a CRD version's `schema.openAPIV3Schema`,
    /// checked with [`validate_structural`]; a version without a schema gets
    /// an empty schema (everything but metadata is pruned). Errors carry
    /// the path `schema.openAPIV3Schema…`.
    pub fn from_crd_version(v: &CustomResourceDefinitionVersion) -> Result<Structural, ErrorList> {
        let Some(schema) = v
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        else {
            return Ok(Structural::default());
        };
        let path = Path::new("schema").child("openAPIV3Schema");
        let s = Structural::new(schema)
            .map_err(|e| ErrorList::from(vec![Error::invalid(&path, "", e.to_string())]))?;
        let errs = validate_structural(&path, &s);
        if errs.is_empty() { Ok(s) } else { Err(errs) }
    }

    /// `type`.
    pub fn type_(&self) -> &str {
        &self.generic.type_
    }

    /// The schema of `additionalProperties`, if any.
    pub fn additional_schema(&self) -> Option<&Structural> {
        self.generic
            .additional_properties
            .as_ref()
            .and_then(|a| a.schema.as_deref())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// `ValidateStructural`: the structural invariants and completeness, errors
/// sorted by their rendering as upstream does.
pub fn validate_structural(path: &Path, s: &Structural) -> ErrorList {
    let mut errs = invariants(s, Level::Root, path);
    errs.append(completeness(s, path));
    let mut v = errs.0;
    v.sort_by_key(|e| e.to_string());
    ErrorList(v)
}

fn invariants(s: &Structural, lvl: Level, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if s.generic.type_ == "array" && s.items.is_none() {
        errs.push(Error::required(&path.child("items"), "must be specified"));
    }
    if let Some(items) = &s.items {
        errs.append(invariants(items, Level::Item, &path.child("items")));
    }
    for (k, v) in &s.properties {
        errs.append(invariants(
            v,
            Level::Field,
            &path.child("properties").key(k),
        ));
    }
    if let Some(ap) = &s.generic.additional_properties {
        if lvl == Level::Root {
            errs.push(Error::forbidden(
                &path.child("additionalProperties"),
                "must not be used at the root",
            ));
        }
        if let Some(schema) = &ap.schema {
            errs.append(invariants(
                schema,
                Level::Field,
                &path.child("additionalProperties"),
            ));
        }
    }
    let x = &s.extensions;
    if x.int_or_string && x.preserve_unknown_fields {
        errs.push(Error::invalid(
            &path.child("x-kubernetes-preserve-unknown-fields"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if x.int_or_string && x.embedded_resource {
        errs.push(Error::invalid(
            &path.child("x-kubernetes-embedded-resource"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    let vv = &s.value_validation;
    let skip_any_of = is_int_or_string_pattern(&vv.any_of);
    let skip_first_all_of_any_of = vv
        .all_of
        .first()
        .is_some_and(|a| is_int_or_string_pattern(&a.value_validation.any_of));
    errs.append(value_validation_errors(
        vv,
        skip_any_of,
        skip_first_all_of_any_of,
        lvl,
        path,
    ));

    let check_metadata = lvl == Level::Root || x.embedded_resource;
    let ty = s.generic.type_.as_str();
    if x.embedded_resource && ty != "object" {
        if ty.is_empty() {
            errs.push(Error::required(
                &path.child("type"),
                "must be object if x-kubernetes-embedded-resource is true",
            ));
        } else {
            errs.push(Error::invalid(
                &path.child("type"),
                ty,
                "must be object if x-kubernetes-embedded-resource is true",
            ));
        }
    } else if ty.is_empty() && !x.int_or_string && !x.preserve_unknown_fields {
        let detail = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(Error::required(&path.child("type"), detail));
    }
    if x.embedded_resource && s.generic.additional_properties.is_some() {
        errs.push(Error::forbidden(
            &path.child("additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(Error::invalid(
            &path.child("type"),
            ty,
            "must be object at the root",
        ));
    }
    for name in ["kind", "apiVersion"] {
        if let Some(p) = s.properties.get(name).filter(|_| check_metadata)
            && p.generic.type_ != "string"
        {
            errs.push(Error::invalid(
                &path.child("properties").key(name).child("type"),
                p.generic.type_.as_str(),
                "must be string",
            ));
        }
    }
    if let Some(metadata) = s.properties.get("metadata") {
        errs.append(metadata_invariants(
            metadata,
            check_metadata,
            lvl,
            &path.child("properties").key("metadata"),
        ));
    }
    if x.embedded_resource && !x.preserve_unknown_fields && s.properties.is_empty() {
        errs.push(Error::required(
            &path.child("properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
    errs
}

fn metadata_invariants(s: &Structural, check_metadata: bool, lvl: Level, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if check_metadata && s.generic.type_ != "object" {
        errs.push(Error::invalid(
            &path.child("type"),
            s.generic.type_.as_str(),
            "must be object",
        ));
    }
    if lvl == Level::Root {
        let mut m = s.clone();
        let name = m.properties.contains_key("name");
        let generate_name = m.properties.contains_key("generateName");
        if (name && generate_name && m.properties.len() == 2)
            || ((name || generate_name) && m.properties.len() == 1)
        {
            m.properties.clear();
        }
        m.generic.type_.clear();
        m.generic.default = None;
        if m != Structural::default() {
            errs.push(Error::forbidden(
                path,
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
    errs
}

fn is_int_or_string_pattern(any_of: &[NestedValueValidation]) -> bool {
    let only_type = |n: &NestedValueValidation, t: &str| {
        let expected = NestedValueValidation {
            forbidden_generics: Generic {
                type_: t.to_owned(),
                ..Generic::default()
            },
            ..NestedValueValidation::default()
        };
        *n == expected
    };
    matches!(any_of, [a, b] if only_type(a, "integer") && only_type(b, "string"))
}

fn value_validation_errors(
    v: &ValueValidation,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    lvl: Level,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if !skip_any_of {
        for (i, n) in v.any_of.iter().enumerate() {
            errs.append(nested_errors(n, false, lvl, &path.child("anyOf").index(i)));
        }
    }
    for (i, n) in v.all_of.iter().enumerate() {
        errs.append(nested_errors(
            n,
            skip_first_all_of_any_of && i == 0,
            lvl,
            &path.child("allOf").index(i),
        ));
    }
    for (i, n) in v.one_of.iter().enumerate() {
        errs.append(nested_errors(n, false, lvl, &path.child("oneOf").index(i)));
    }
    if let Some(n) = &v.not {
        errs.append(nested_errors(n, false, lvl, &path.child("not")));
    }
    if !v.pattern.is_empty()
        && let Err(e) = super::go_regex::compile(&v.pattern)
    {
        errs.push(Error::invalid(
            &path.child("pattern"),
            v.pattern.as_str(),
            format!(
                "must be a valid regular expression, but isn't: {}",
                super::go_regex::error_text(&v.pattern, &e)
            ),
        ));
    }
    errs
}

fn nested_errors(
    v: &NestedValueValidation,
    skip_any_of: bool,
    lvl: Level,
    path: &Path,
) -> ErrorList {
    let mut errs = value_validation_errors(&v.value_validation, skip_any_of, false, lvl, path);
    if let Some(items) = &v.items {
        errs.append(nested_errors(items, false, lvl, &path.child("items")));
    }
    for (k, p) in &v.properties {
        errs.append(nested_errors(
            p,
            false,
            Level::Field,
            &path.child("properties").key(k),
        ));
    }
    let g = &v.forbidden_generics;
    if !g.type_.is_empty() {
        errs.push(Error::forbidden(
            &path.child("type"),
            "must be empty to be structural",
        ));
    }
    if g.additional_properties.is_some() {
        errs.push(Error::forbidden(
            &path.child("additionalProperties"),
            "must be undefined to be structural",
        ));
    }
    if g.default.is_some() {
        errs.push(Error::forbidden(
            &path.child("default"),
            "must be undefined to be structural",
        ));
    }
    if !g.title.is_empty() {
        errs.push(Error::forbidden(
            &path.child("title"),
            "must be empty to be structural",
        ));
    }
    if !g.description.is_empty() {
        errs.push(Error::forbidden(
            &path.child("description"),
            "must be empty to be structural",
        ));
    }
    if g.nullable {
        errs.push(Error::forbidden(
            &path.child("nullable"),
            "must be false to be structural",
        ));
    }
    let x = &v.forbidden_extensions;
    if x.preserve_unknown_fields {
        errs.push(Error::forbidden(
            &path.child("x-kubernetes-preserve-unknown-fields"),
            "must be false to be structural",
        ));
    }
    if x.embedded_resource {
        errs.push(Error::forbidden(
            &path.child("x-kubernetes-embedded-resource"),
            "must be false to be structural",
        ));
    }
    if x.int_or_string {
        errs.push(Error::forbidden(
            &path.child("x-kubernetes-int-or-string"),
            "must be false to be structural",
        ));
    }
    if !x.list_map_keys.is_empty() {
        errs.push(Error::forbidden(
            &path.child("x-kubernetes-list-map-keys"),
            "must be empty to be structural",
        ));
    }
    if x.list_type.is_some() {
        errs.push(Error::forbidden(
            &path.child("x-kubernetes-list-type"),
            "must be undefined to be structural",
        ));
    }
    if x.map_type.is_some() {
        errs.push(Error::forbidden(
            &path.child("x-kubernetes-map-type"),
            "must be undefined to be structural",
        ));
    }
    if !x.validations.is_empty() {
        errs.push(Error::forbidden(
            &path.child("x-kubernetes-validations"),
            "must be empty to be structural",
        ));
    }
    if v.properties.contains_key("metadata") {
        errs.push(Error::forbidden(
            &path.child("properties").key("metadata"),
            "must not be specified in a nested context",
        ));
    }
    errs
}

/// `validateStructuralCompleteness`: every property or items schema used in
/// a value validation is also specified in the structural part.
fn completeness(s: &Structural, path: &Path) -> ErrorList {
    value_completeness(&s.value_validation, Some(s), path, path)
}

fn value_completeness(
    v: &ValueValidation,
    s: Option<&Structural>,
    s_path: &Path,
    v_path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, n) in v.all_of.iter().enumerate() {
        errs.append(nested_completeness(
            n,
            s,
            s_path,
            &v_path.child("allOf").index(i),
        ));
    }
    for (i, n) in v.any_of.iter().enumerate() {
        errs.append(nested_completeness(
            n,
            s,
            s_path,
            &v_path.child("anyOf").index(i),
        ));
    }
    for (i, n) in v.one_of.iter().enumerate() {
        errs.append(nested_completeness(
            n,
            s,
            s_path,
            &v_path.child("oneOf").index(i),
        ));
    }
    if let Some(n) = &v.not {
        errs.append(nested_completeness(n, s, s_path, &v_path.child("not")));
    }
    errs
}

fn nested_completeness(
    v: &NestedValueValidation,
    s: Option<&Structural>,
    s_path: &Path,
    v_path: &Path,
) -> ErrorList {
    let Some(s) = s else {
        return ErrorList::from(vec![Error::required(
            s_path,
            format!("because it is defined in {v_path}"),
        )]);
    };
    let mut errs = value_completeness(&v.value_validation, Some(s), s_path, v_path);
    if let Some(items) = &v.items {
        errs.append(nested_completeness(
            items,
            s.items.as_deref(),
            &s_path.child("items"),
            &v_path.child("items"),
        ));
    }
    for (k, p) in &v.properties {
        let sp = s_path.child("properties").key(k);
        let vp = v_path.child("properties").key(k);
        match s.properties.get(k) {
            None => errs.push(Error::required(
                &sp,
                format!("because it is defined in {vp}"),
            )),
            Some(sf) => errs.append(nested_completeness(p, Some(sf), &sp, &vp)),
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(j: serde_json::Value) -> JSONSchemaProps {
        serde_json::from_value(j).expect("schema")
    }

    fn errors(j: serde_json::Value) -> Vec<String> {
        let s = Structural::new(&schema(j)).expect("structural");
        validate_structural(&Path::new("openAPIV3Schema"), &s)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn structural_invariants() {
        let cases: Vec<(&str, serde_json::Value, Vec<&str>)> = vec![
            (
                "empty root type",
                serde_json::json!({}),
                vec!["openAPIV3Schema.type: Required value: must not be empty at the root"],
            ),
            (
                "root not object",
                serde_json::json!({"type": "string"}),
                vec![
                    r#"openAPIV3Schema.type: Invalid value: "string": must be object at the root"#,
                ],
            ),
            (
                "field without type",
                serde_json::json!({"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}}),
                vec![
                    "openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
                ],
            ),
            (
                "items without type and array without items",
                serde_json::json!({"type": "object", "properties": {"l": {"type": "array", "items": {}}, "m": {"type": "array"}}}),
                vec![
                    "openAPIV3Schema.properties[l].items.type: Required value: must not be empty for specified array items",
                    "openAPIV3Schema.properties[m].items: Required value: must be specified",
                ],
            ),
            (
                "preserve unknown and int-or-string need no type",
                serde_json::json!({"type": "object", "properties": {"a": {"x-kubernetes-preserve-unknown-fields": true}, "b": {"x-kubernetes-int-or-string": true}}}),
                vec![],
            ),
            (
                "int-or-string anyOf pattern allowed",
                serde_json::json!({"type": "object", "properties": {"b": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}}}),
                vec![],
            ),
            (
                "type in anyOf forbidden",
                serde_json::json!({"type": "object", "properties": {"b": {"type": "string", "anyOf": [{"type": "string", "description": "d"}]}}}),
                vec![
                    "openAPIV3Schema.properties[b].anyOf[0].description: Forbidden: must be empty to be structural",
                    "openAPIV3Schema.properties[b].anyOf[0].type: Forbidden: must be empty to be structural",
                ],
            ),
            (
                "nested property not specified outside",
                serde_json::json!({"type": "object", "properties": {"a": {"type": "object"}}, "allOf": [{"properties": {"a": {"properties": {"x": {"minLength": 1}}}}}]}),
                vec![
                    "openAPIV3Schema.properties[a].properties[x]: Required value: because it is defined in openAPIV3Schema.allOf[0].properties[a].properties[x]",
                ],
            ),
            (
                "metadata beyond name",
                serde_json::json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}),
                vec![
                    "openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
                ],
            ),
            (
                "metadata name ok",
                serde_json::json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}}}}),
                vec![],
            ),
            (
                "embedded resource",
                serde_json::json!({"type": "object", "properties": {"e": {"x-kubernetes-embedded-resource": true}, "k": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"kind": {"type": "integer"}}}}}),
                vec![
                    r#"openAPIV3Schema.properties[k].properties[kind].type: Invalid value: "integer": must be string"#,
                    "openAPIV3Schema.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
                    "openAPIV3Schema.properties[e].type: Required value: must be object if x-kubernetes-embedded-resource is true",
                ],
            ),
            (
                "additionalProperties at root",
                serde_json::json!({"type": "object", "additionalProperties": {"type": "string"}}),
                vec![
                    "openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root",
                ],
            ),
            (
                "bad pattern",
                serde_json::json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "("}}}),
                vec![
                    r#"openAPIV3Schema.properties[s].pattern: Invalid value: "(": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `(`"#,
                ],
            ),
        ];
        for (name, s, want) in cases {
            let mut want: Vec<String> = want.into_iter().map(String::from).collect();
            want.sort();
            assert_eq!(errors(s), want, "{name}");
        }
    }

    #[test]
    fn unsupported_fields_fail_conversion() {
        let s = schema(serde_json::json!({"type": "object", "properties": {"a": {"$ref": "#/x"}}}));
        assert_eq!(
            Structural::new(&s).map(|_| ()).map_err(|e| e.to_string()),
            Err("OpenAPIV3Schema '$ref' is not supported".to_owned())
        );
    }
}
