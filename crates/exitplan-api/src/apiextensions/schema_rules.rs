//! The schema rules of CRD validation (`validateCustomResourceDefinitionValidation`,
//! `ValidateCustomResourceDefinitionOpenAPISchema`, `specStandardValidatorV3`,
//! `ValidateDefaults`): the checks on one version's `openAPIV3Schema` beyond
//! the structural ones of [`super::structural`]. CEL rules are compiled by
//! `exitplan-cel`; only their static checks are here.

use std::collections::BTreeSet;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceValidation, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

use super::pruning;
use super::schema_validation::{self, bad_value};
use super::structural::{self, Structural};
use super::validation::{ALLOWED_AT_ROOT, OPENAPI_V3_TYPES, Options, VALIDATION_REASONS};
use crate::field::{BadValue, Error, ErrorList, Path};

/// `validateCustomResourceDefinitionValidation` for one schema.
pub(super) fn validate_validation(
    v: &CustomResourceValidation,
    status: bool,
    opts: Options,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(schema) = &v.open_api_v3_schema else {
        return errs;
    };
    let sp = path.child("openAPIV3Schema");
    if status {
        errs.append(root_with_status(schema, path));
    }
    if schema.nullable == Some(true) {
        errs.push(Error::forbidden(
            &path.child("openAPIV3Schema.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let mut init_errs = ErrorList::new();
    match Structural::new(schema) {
        Err(e) => init_errs.push(Error::invalid(&sp, "", e.to_string())),
        Ok(ss) => {
            let e = structural::validate_structural(&sp, &ss);
            if !e.is_empty() {
                errs.append(e);
            } else {
                errs.append(validate_defaults(&ss, &sp, true, false));
            }
        }
    }
    let ssv = Ssv {
        allow_defaults: true,
        disallow_reason: String::new(),
        inside_resource_meta: false,
    };
    errs.append(openapi_schema(schema, &sp, &ssv, true, opts));
    if errs.is_empty() {
        errs.append(init_errs);
    }
    errs
}

fn root_with_status(schema: &JSONSchemaProps, path: &Path) -> ErrorList {
    if let Some(t) = schema.type_.as_deref().filter(|t| !t.is_empty())
        && t != "object"
    {
        return ErrorList::from(vec![Error::invalid(
            &path.child("openAPIV3Schema.type"),
            t,
            r#"only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
        )]);
    }
    let s = schema;
    let disallowed = s.id.is_some()
        || s.schema.is_some()
        || s.ref_path.is_some()
        || s.default.is_some()
        || s.enum_.as_ref().is_some_and(|e| !e.is_empty())
        || s.max_properties.is_some()
        || s.min_properties.is_some()
        || s.all_of.as_ref().is_some_and(|e| !e.is_empty())
        || s.one_of.as_ref().is_some_and(|e| !e.is_empty())
        || s.any_of.as_ref().is_some_and(|e| !e.is_empty())
        || s.not.is_some()
        || s.additional_properties.is_some()
        || s.pattern_properties.as_ref().is_some_and(|e| !e.is_empty())
        || s.dependencies.as_ref().is_some_and(|e| !e.is_empty())
        || s.additional_items.is_some()
        || s.definitions.as_ref().is_some_and(|e| !e.is_empty())
        || s.nullable == Some(true)
        || s.x_kubernetes_embedded_resource == Some(true)
        || s.x_kubernetes_int_or_string == Some(true)
        || s.x_kubernetes_list_map_keys
            .as_ref()
            .is_some_and(|e| !e.is_empty())
        || s.x_kubernetes_list_type.is_some()
        || s.x_kubernetes_map_type.is_some();
    if disallowed {
        return ErrorList::from(vec![Error::invalid(
            &path.child("openAPIV3Schema"),
            BadValue::Json(crate::render::json(schema)),
            format!(
                "only {ALLOWED_AT_ROOT} fields are allowed at the root of the schema if the status subresource is enabled"
            ),
        )]);
    }
    ErrorList::new()
}

/// `structuraldefaulting.ValidateDefaults`: every `default` must survive
/// pruning unchanged and validate against its own schema.
fn validate_defaults(s: &Structural, path: &Path, is_root: bool, inside_meta: bool) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(d) = &s.generic.default {
        let dp = path.child("default");
        if !inside_meta {
            let mut pruned = d.clone();
            pruning::prune_with(&mut pruned, s, s.extensions.embedded_resource);
            if &pruned != d {
                errs.push(Error::invalid(
                    &dp,
                    bad_value(d),
                    "must not have unknown fields",
                ));
            } else {
                errs.append(schema_validation::validate_value(Some(&dp), s, d));
            }
        }
    }
    if let Some(items) = &s.items {
        errs.append(validate_defaults(
            items,
            &path.child("items"),
            false,
            inside_meta,
        ));
    }
    for (k, p) in &s.properties {
        let meta_field = (is_root || s.extensions.embedded_resource)
            && matches!(k.as_str(), "metadata" | "apiVersion" | "kind");
        errs.append(validate_defaults(
            p,
            &path.child("properties").key(k),
            false,
            inside_meta || meta_field,
        ));
    }
    errs
}

/// The per-node options of `ValidateCustomResourceDefinitionOpenAPISchema`
/// (`specStandardValidatorV3`).
#[derive(Clone)]
struct Ssv {
    allow_defaults: bool,
    disallow_reason: String,
    inside_resource_meta: bool,
}

impl Ssv {
    fn forbid_defaults(&self, reason: &str) -> Ssv {
        Ssv {
            allow_defaults: false,
            disallow_reason: reason.to_owned(),
            inside_resource_meta: self.inside_resource_meta,
        }
    }

    fn validate(&self, s: &JSONSchemaProps, path: &Path, opts: Options) -> ErrorList {
        let mut errs = ErrorList::new();
        let ty = s.type_.as_deref().unwrap_or_default();
        if opts.require_valid_property_type && !ty.is_empty() && !OPENAPI_V3_TYPES.contains(&ty) {
            errs.push(Error::not_supported(
                &path.child("type"),
                ty,
                OPENAPI_V3_TYPES,
            ));
        }
        if s.default.is_some() && !self.allow_defaults {
            let mut detail = "must not be set".to_owned();
            if !self.disallow_reason.is_empty() {
                detail.push(' ');
                detail.push_str(&self.disallow_reason);
            }
            errs.push(Error::forbidden(&path.child("default"), detail));
        }
        if s.id.as_deref().is_some_and(|v| !v.is_empty()) {
            errs.push(Error::forbidden(&path.child("id"), "id is not supported"));
        }
        if s.additional_items.is_some() {
            errs.push(Error::forbidden(
                &path.child("additionalItems"),
                "additionalItems is not supported",
            ));
        }
        if s.pattern_properties.as_ref().is_some_and(|p| !p.is_empty()) {
            errs.push(Error::forbidden(
                &path.child("patternProperties"),
                "patternProperties is not supported",
            ));
        }
        if s.definitions.as_ref().is_some_and(|p| !p.is_empty()) {
            errs.push(Error::forbidden(
                &path.child("definitions"),
                "definitions is not supported",
            ));
        }
        if s.dependencies.is_some() {
            errs.push(Error::forbidden(
                &path.child("dependencies"),
                "dependencies is not supported",
            ));
        }
        if s.ref_path.is_some() {
            errs.push(Error::forbidden(
                &path.child("$ref"),
                "$ref is not supported",
            ));
        }
        if ty == "null" {
            errs.push(Error::forbidden(
                &path.child("type"),
                "type cannot be set to null, use nullable as an alternative",
            ));
        }
        if matches!(&s.items, Some(JSONSchemaPropsOrArray::Schemas(v)) if !v.is_empty()) {
            errs.push(Error::forbidden(
                &path.child("items"),
                "items must be a schema object and not an array",
            ));
        }
        if self.inside_resource_meta && s.x_kubernetes_embedded_resource == Some(true) {
            errs.push(Error::forbidden(
                &path.child("x-kubernetes-embedded-resource"),
                "must not be used inside of resource meta",
            ));
        }
        errs
    }
}

fn item_schema(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(i)) => Some(i),
        _ => None,
    }
}

/// `ValidateCustomResourceDefinitionOpenAPISchema` without CEL compilation.
fn openapi_schema(
    s: &JSONSchemaProps,
    path: &Path,
    ssv: &Ssv,
    is_root: bool,
    opts: Options,
) -> ErrorList {
    let mut errs = ssv.validate(s, path, opts);
    if s.unique_items == Some(true) {
        errs.push(Error::forbidden(
            &path.child("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let has_props = s.properties.as_ref().is_some_and(|p| !p.is_empty());
    if let Some(ap) = &s.additional_properties {
        if has_props && !matches!(ap, JSONSchemaPropsOrBool::Bool(true)) {
            errs.push(Error::forbidden(
                &path.child("additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if let JSONSchemaPropsOrBool::Schema(sub) = ap {
            let sub_ssv = if ssv.inside_resource_meta {
                ssv.forbid_defaults("inside additionalProperties applying to object metadata")
            } else {
                ssv.clone()
            };
            errs.append(openapi_schema(
                sub,
                &path.child("additionalProperties"),
                &sub_ssv,
                false,
                opts,
            ));
        }
    }
    for (k, p) in s.properties.iter().flatten() {
        let mut sub = ssv.clone();
        if (is_root || s.x_kubernetes_embedded_resource == Some(true))
            && matches!(k.as_str(), "metadata" | "kind" | "apiVersion")
        {
            sub.inside_resource_meta = true;
            if is_root {
                sub = sub.forbid_defaults(&format!("in top-level {k}"));
            }
        }
        errs.append(openapi_schema(
            p,
            &path.child("properties").key(k),
            &sub,
            false,
            opts,
        ));
    }
    if let Some(not) = &s.not {
        errs.append(openapi_schema(not, &path.child("not"), ssv, false, opts));
    }
    for (name, list) in [
        ("allOf", &s.all_of),
        ("oneOf", &s.one_of),
        ("anyOf", &s.any_of),
    ] {
        for (i, sub) in list.iter().flatten().enumerate() {
            errs.append(openapi_schema(
                sub,
                &path.child(name).index(i),
                ssv,
                false,
                opts,
            ));
        }
    }
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(i)) => {
            errs.append(openapi_schema(i, &path.child("items"), ssv, false, opts))
        }
        Some(JSONSchemaPropsOrArray::Schemas(v)) => {
            for (i, sub) in v.iter().enumerate() {
                errs.append(openapi_schema(
                    sub,
                    &path.child("items").index(i),
                    ssv,
                    false,
                    opts,
                ));
            }
        }
        None => {}
    }
    if s.x_kubernetes_preserve_unknown_fields == Some(false) {
        errs.push(Error::invalid(
            &path.child("x-kubernetes-preserve-unknown-fields"),
            false,
            "must be true or undefined",
        ));
    }
    let ty = s.type_.as_deref().unwrap_or_default();
    if let Some(mt) = &s.x_kubernetes_map_type {
        if ty != "object" {
            if ty.is_empty() {
                errs.push(Error::required(
                    &path.child("type"),
                    "must be object if x-kubernetes-map-type is specified",
                ));
            } else {
                errs.push(Error::invalid(
                    &path.child("type"),
                    ty,
                    "must be object if x-kubernetes-map-type is specified",
                ));
            }
        }
        if mt != "atomic" && mt != "granular" {
            errs.push(Error::not_supported(
                &path.child("x-kubernetes-map-type"),
                mt.as_str(),
                &["atomic", "granular"],
            ));
        }
    }
    let list_type = s.x_kubernetes_list_type.as_deref();
    if list_type.is_some() && ty != "array" {
        if ty.is_empty() {
            errs.push(Error::required(
                &path.child("type"),
                "must be array if x-kubernetes-list-type is specified",
            ));
        } else {
            errs.push(Error::invalid(
                &path.child("type"),
                ty,
                "must be array if x-kubernetes-list-type is specified",
            ));
        }
    } else if opts.require_atomic_set_type
        && list_type == Some("set")
        && let Some(is) = item_schema(s)
    {
        let it = is.type_.as_deref().unwrap_or_default();
        let ilt = is.x_kubernetes_list_type.as_deref();
        let bad = match it {
            "array" => ilt.is_some_and(|t| t != "atomic"),
            "object" => is.x_kubernetes_map_type.as_deref() != Some("atomic"),
            _ => false,
        };
        if bad {
            let field = if it == "array" {
                "x-kubernetes-list-type"
            } else {
                "x-kubernetes-map-type"
            };
            errs.push(Error::invalid(
                &path.child("items").child(field),
                ilt,
                "must be atomic as item of a list with x-kubernetes-list-type=set",
            ));
        }
    }
    if let Some(lt) = list_type.filter(|t| !matches!(*t, "atomic" | "set" | "map")) {
        errs.push(Error::not_supported(
            &path.child("x-kubernetes-list-type"),
            lt,
            &["atomic", "set", "map"],
        ));
    }
    let keys = s.x_kubernetes_list_map_keys.as_deref().unwrap_or_default();
    if !keys.is_empty() {
        match list_type {
            None => errs.push(Error::required(
                &path.child("x-kubernetes-list-type"),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
            Some(lt) if lt != "map" => errs.push(Error::invalid(
                &path.child("x-kubernetes-list-type"),
                lt,
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
            Some(_) => {}
        }
    }
    if list_type == Some("map") {
        if keys.is_empty() {
            errs.push(Error::required(
                &path.child("x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match &s.items {
            None => errs.push(Error::required(
                &path.child("items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            Some(JSONSchemaPropsOrArray::Schemas(_)) => errs.push(Error::invalid(
                &path.child("items"),
                BadValue::Json(crate::render::json(&s.items)),
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
            Some(JSONSchemaPropsOrArray::Schema(is)) => {
                let it = is.type_.as_deref().unwrap_or_default();
                if it != "object" {
                    errs.push(Error::invalid(
                        &path.child("items").child("type"),
                        it,
                        "must be object if parent array's x-kubernetes-list-type is map",
                    ));
                } else {
                    let mut seen = BTreeSet::new();
                    let keys_value = || BadValue::Json(crate::render::strings(keys));
                    for k in keys {
                        match is.properties.as_ref().and_then(|p| p.get(k)) {
                            Some(p) => {
                                if matches!(p.type_.as_deref(), Some("array" | "object")) {
                                    errs.push(Error::invalid(&path.child("items").child("properties").key(k).child("type"), it, "must be a scalar type if parent array's x-kubernetes-list-type is map"));
                                }
                            }
                            None => errs.push(Error::invalid(
                                &path.child("x-kubernetes-list-map-keys"),
                                keys_value(),
                                "entries must all be names of item properties",
                            )),
                        }
                        if !seen.insert(k.as_str()) {
                            errs.push(Error::invalid(
                                &path.child("x-kubernetes-list-map-keys"),
                                keys_value(),
                                "must not contain duplicate entries",
                            ));
                        }
                    }
                }
            }
        }
    }
    if opts.require_map_list_keys_map_set_validation {
        errs.append(validate_map_list_keys_map_set(s, path));
    }
    for (i, rule) in s.x_kubernetes_validations.iter().flatten().enumerate() {
        let rp = path.child("x-kubernetes-validations").index(i);
        let trimmed_rule = rule.rule.trim();
        let message = rule.message.as_deref().unwrap_or_default();
        let trimmed_msg = message.trim();
        let has_newlines = |s: &str| s.contains(['\n', '\r']);
        if trimmed_rule.is_empty() {
            errs.push(Error::required(&rp.child("rule"), "rule is not specified"));
        } else if !message.is_empty() && trimmed_msg.is_empty() {
            errs.push(Error::invalid(
                &rp.child("message"),
                message,
                "message must be non-empty if specified",
            ));
        } else if has_newlines(trimmed_msg) {
            errs.push(Error::invalid(
                &rp.child("message"),
                message,
                "message must not contain line breaks",
            ));
        } else if has_newlines(trimmed_rule) && trimmed_msg.is_empty() {
            errs.push(Error::required(
                &rp.child("message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        let me = rule.message_expression.as_deref().unwrap_or_default();
        if !me.is_empty() && me.trim().is_empty() {
            errs.push(Error::required(
                &rp.child("messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = rule
            .reason
            .as_deref()
            .filter(|r| !VALIDATION_REASONS.contains(r))
        {
            errs.push(Error::not_supported(
                &rp.child("reason"),
                reason,
                VALIDATION_REASONS,
            ));
        }
        let fp = rule.field_path.as_deref().unwrap_or_default();
        if !fp.is_empty() && fp.trim().is_empty() {
            errs.push(Error::invalid(
                &rp.child("fieldPath"),
                fp,
                "fieldPath must be non-empty if specified",
            ));
        }
        if has_newlines(fp) {
            errs.push(Error::invalid(
                &rp.child("fieldPath"),
                fp,
                "fieldPath must not contain line breaks",
            ));
        }
    }
    errs
}

pub(super) fn validate_map_list_keys_map_set(s: &JSONSchemaProps, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let (Some(is), Some(lt)) = (item_schema(s), s.x_kubernetes_list_type.as_deref()) else {
        return errs;
    };
    if lt != "set" && lt != "map" {
        return errs;
    }
    if is.nullable == Some(true) {
        errs.push(Error::forbidden(
            &path.child("items").child("nullable"),
            format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
        ));
    }
    if lt == "map" {
        let required = is.required.as_deref().unwrap_or_default();
        for k in s.x_kubernetes_list_map_keys.iter().flatten() {
            let Some(p) = is.properties.as_ref().and_then(|p| p.get(k)) else {
                continue;
            };
            let kp = path.child("items").child("properties").key(k);
            if !required.contains(k) && p.default.is_none() {
                errs.push(Error::required(&kp.child("default"), "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"));
            }
            if p.nullable == Some(true) {
                errs.push(Error::forbidden(
                    &kp.child("nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                ));
            }
        }
    }
    errs
}

pub(super) fn has_non_atomic_set_type(s: &JSONSchemaProps) -> bool {
    if s.x_kubernetes_list_type.as_deref() != Some("set") {
        return false;
    }
    let Some(is) = item_schema(s) else {
        return false;
    };
    match is.type_.as_deref() {
        Some("array") => is
            .x_kubernetes_list_type
            .as_deref()
            .is_some_and(|t| t != "atomic"),
        Some("object") => is.x_kubernetes_map_type.as_deref() != Some("atomic"),
        _ => false,
    }
}

/// `SchemaHas`: whether `pred` holds for any node of the schema.
pub fn schema_has(s: &JSONSchemaProps, pred: &dyn Fn(&JSONSchemaProps) -> bool) -> bool {
    if pred(s) {
        return true;
    }
    let any = |l: &Option<Vec<JSONSchemaProps>>| l.iter().flatten().any(|x| schema_has(x, pred));
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(i)) if schema_has(i, pred) => return true,
        Some(JSONSchemaPropsOrArray::Schemas(v)) if v.iter().any(|x| schema_has(x, pred)) => {
            return true;
        }
        _ => {}
    }
    if any(&s.all_of) || any(&s.any_of) || any(&s.one_of) {
        return true;
    }
    if s.not.as_deref().is_some_and(|n| schema_has(n, pred)) {
        return true;
    }
    if s.properties
        .iter()
        .flatten()
        .any(|(_, p)| schema_has(p, pred))
    {
        return true;
    }
    if let Some(JSONSchemaPropsOrBool::Schema(a)) = &s.additional_properties
        && schema_has(a, pred)
    {
        return true;
    }
    false
}
