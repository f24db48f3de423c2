//! CRD validation (`pkg/apis/apiextensions/validation/validation.go`):
//! [`validate_crd`], [`validate_crd_update`], [`validate_crd_status_update`].
//!
//! Upstream validates the internal type, into which the v1 conversion moves
//! a schema (subresources, printer columns, selectable fields) shared by all
//! versions to the top level: errors on such a shared schema carry the path
//! `spec.validation.openAPIV3Schema…` (`spec.subresources…`,
//! `spec.additionalPrinterColumns…`), per-version ones
//! `spec.versions[i].schema.openAPIV3Schema…`. This module does the same.
//! CEL rules are compiled by `exitplan-cel`, not here.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionNames, CustomResourceDefinitionSpec, CustomResourceDefinitionVersion,
    CustomResourceSubresources, JSONSchemaProps, SelectableField,
};

use super::defaults::{NONE_CONVERTER, WEBHOOK_CONVERTER};
use super::schema_rules::{
    has_non_atomic_set_type, schema_has, validate_map_list_keys_map_set, validate_validation,
};
use super::structural::Structural;
use super::webhook::{validate_webhook_service, validate_webhook_url};
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, NameRule};

/// The column types `additionalPrinterColumns[].type` accepts (sorted).
pub const PRINTER_COLUMN_TYPES: &[&str] = &["boolean", "date", "integer", "number", "string"];
/// The formats `additionalPrinterColumns[].format` accepts (sorted).
pub const PRINTER_COLUMN_FORMATS: &[&str] = &[
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];
/// The OpenAPI v3 types a schema may declare (sorted).
pub const OPENAPI_V3_TYPES: &[&str] =
    &["array", "boolean", "integer", "number", "object", "string"];
/// Most selectable fields per version (`MaxSelectableFields`).
pub const MAX_SELECTABLE_FIELDS: usize = 8;
/// The `reason`s an `x-kubernetes-validations` rule may carry (sorted).
pub const VALIDATION_REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];
/// The fields allowed at the schema root when the status subresource is on.
pub(super) const ALLOWED_AT_ROOT: &str = "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]";
/// The annotation protected `*.k8s.io` / `*.kubernetes.io` groups must carry.
pub const API_APPROVAL_ANNOTATION: &str = "api-approved.kubernetes.io";

/// Which rules apply; updates relax the ones an existing CRD already breaks
/// (upstream's `validationOptions`, ratcheting on the old object).
#[derive(Clone, Copy, Debug)]
pub(super) struct Options {
    pub(super) require_open_api_schema: bool,
    pub(super) require_valid_property_type: bool,
    pub(super) require_atomic_set_type: bool,
    pub(super) require_map_list_keys_map_set_validation: bool,
}

impl Options {
    fn create() -> Self {
        Options {
            require_open_api_schema: true,
            require_valid_property_type: true,
            require_atomic_set_type: true,
            require_map_list_keys_map_set_validation: true,
        }
    }

    fn update(old: &CustomResourceDefinitionSpec) -> Self {
        let schemas = || old.versions.iter().filter_map(version_schema);
        Options {
            require_open_api_schema: old.versions.iter().all(|v| version_schema(v).is_some()),
            require_valid_property_type: !schemas().any(|s| {
                schema_has(s, &|s| {
                    s.type_
                        .as_deref()
                        .is_some_and(|t| !t.is_empty() && !OPENAPI_V3_TYPES.contains(&t))
                })
            }),
            require_atomic_set_type: !schemas().any(|s| schema_has(s, &has_non_atomic_set_type)),
            require_map_list_keys_map_set_validation: !schemas().any(|s| {
                schema_has(s, &|s| {
                    !validate_map_list_keys_map_set(s, &Path::new("")).is_empty()
                })
            }),
        }
    }
}

fn version_schema(v: &CustomResourceDefinitionVersion) -> Option<&JSONSchemaProps> {
    v.schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
}

/// `ValidateCustomResourceDefinition`: a new CRD.
pub fn validate_crd(crd: &CustomResourceDefinition) -> ErrorList {
    let mut errs = validate_crd_meta(crd);
    errs.append(validate_spec(&crd.spec, Options::create()));
    errs.append(validate_status(crd));
    errs.append(validate_stored_versions(crd));
    errs.append(validate_api_approval(crd, None));
    errs.append(validate_preserve_unknown_fields(crd, None));
    errs
}

/// `ValidateCustomResourceDefinitionUpdate`: an update of the main resource.
pub fn validate_crd_update(
    new: &CustomResourceDefinition,
    old: &CustomResourceDefinition,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_spec(&new.spec, Options::update(&old.spec)));
    let spec = Path::new("spec");
    if is_established(old) {
        errs.append(immutable(
            &new.spec.scope,
            &old.spec.scope,
            &spec.child("scope"),
        ));
        errs.append(immutable(
            &new.spec.names.kind,
            &old.spec.names.kind,
            &spec.child("names").child("kind"),
        ));
    }
    errs.append(immutable(
        &new.spec.group,
        &old.spec.group,
        &spec.child("group"),
    ));
    errs.append(immutable(
        &new.spec.names.plural,
        &old.spec.names.plural,
        &spec.child("names").child("plural"),
    ));
    errs.append(validate_status(new));
    errs.append(validate_stored_versions(new));
    errs.append(validate_api_approval(new, Some(old)));
    errs.append(validate_preserve_unknown_fields(new, Some(old)));
    errs
}

/// `ValidateUpdateCustomResourceDefinitionStatus`: a `/status` update.
pub fn validate_crd_status_update(
    new: &CustomResourceDefinition,
    old: &CustomResourceDefinition,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_status(new));
    errs
}

/// Whether the CRD's `Established` condition is `True`.
pub fn is_established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

fn immutable(new: &str, old: &str, path: &Path) -> ErrorList {
    if new == old {
        ErrorList::new()
    } else {
        ErrorList::from(vec![Error::invalid(path, new, meta::FIELD_IMMUTABLE)])
    }
}

/// `metadata` with the CRD name rule: a DNS subdomain equal to `<plural>.<group>`.
fn validate_crd_meta(crd: &CustomResourceDefinition) -> ErrorList {
    const DETAIL: &str = r#"must be spec.names.plural+"."+spec.group"#;
    let mut errs = meta::validate_object_meta(&crd.metadata, false, NameRule::Subdomain);
    let required = format!("{}.{}", crd.spec.names.plural, crd.spec.group);
    let mp = Path::new("metadata");
    let after = |errs: &ErrorList, fields: &[&str]| {
        errs.iter()
            .rposition(|e| fields.contains(&e.field.as_str()))
            .map_or(0, |i| i + 1)
    };
    if let Some(g) = crd
        .metadata
        .generate_name
        .as_deref()
        .filter(|g| !g.is_empty() && *g != required)
    {
        let at = after(&errs, &["metadata.generateName"]);
        errs.0
            .insert(at, Error::invalid(&mp.child("generateName"), g, DETAIL));
    }
    if let Some(n) = crd
        .metadata
        .name
        .as_deref()
        .filter(|n| !n.is_empty() && *n != required)
    {
        let at = after(&errs, &["metadata.generateName", "metadata.name"]);
        errs.0.insert(
            at,
            Error::invalid(&mp.child("name"), n, DETAIL).with_origin("format=k8s-long-name"),
        );
    }
    errs
}

/// Upstream's v1→internal conversion: a value every version shares is
/// moved to the top level.
fn shared<'a, T: PartialEq>(
    versions: &'a [CustomResourceDefinitionVersion],
    get: impl Fn(&'a CustomResourceDefinitionVersion) -> Option<&'a T>,
) -> Option<&'a T> {
    let first = get(versions.first()?)?;
    versions
        .iter()
        .all(|v| get(v) == Some(first))
        .then_some(first)
}

fn columns(v: &CustomResourceDefinitionVersion) -> Option<&Vec<CustomResourceColumnDefinition>> {
    v.additional_printer_columns
        .as_ref()
        .filter(|c| !c.is_empty())
}

fn selectable(v: &CustomResourceDefinitionVersion) -> Option<&Vec<SelectableField>> {
    v.selectable_fields.as_ref().filter(|c| !c.is_empty())
}

fn validate_spec(spec: &CustomResourceDefinitionSpec, opts: Options) -> ErrorList {
    let path = Path::new("spec");
    let mut errs = ErrorList::new();
    let group = spec.group.as_str();
    if group.is_empty() {
        errs.push(Error::required(&path.child("group"), ""));
    } else {
        let e = formats::is_dns1123_subdomain(group);
        if !e.is_empty() {
            errs.push(Error::invalid(&path.child("group"), group, e.join(",")));
        } else if !group.contains('.') {
            errs.push(Error::invalid(
                &path.child("group"),
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    errs.append(enum_strings(
        &path.child("scope"),
        &spec.scope,
        &["Cluster", "Namespaced"],
    ));

    let top_schema = shared(&spec.versions, |v| v.schema.as_ref());
    let top_subresources = shared(&spec.versions, |v| v.subresources.as_ref());
    let top_columns = shared(&spec.versions, columns);
    let top_selectable = shared(&spec.versions, selectable);
    let preserve_unknown = spec.preserve_unknown_fields == Some(true);

    if opts.require_open_api_schema {
        if top_schema
            .and_then(|s| s.open_api_v3_schema.as_ref())
            .is_none()
        {
            for (i, v) in spec.versions.iter().enumerate() {
                if version_schema(v).is_none() {
                    errs.push(Error::required(
                        &path
                            .child("versions")
                            .index(i)
                            .child("schema")
                            .child("openAPIV3Schema"),
                        "schemas are required",
                    ));
                }
            }
        }
    } else if !preserve_unknown && top_schema.is_none() {
        for (i, v) in spec.versions.iter().enumerate() {
            if v.served && version_schema(v).is_none() {
                errs.push(Error::required(
                    &path
                        .child("versions")
                        .index(i)
                        .child("schema")
                        .child("openAPIV3Schema"),
                    "because otherwise all fields are pruned",
                ));
            }
        }
    }
    let has_defaults = spec
        .versions
        .iter()
        .filter_map(version_schema)
        .any(|s| schema_has(s, &|s| s.default.is_some()));
    // v1's preserveUnknownFields is a plain bool: unset is false.
    if has_defaults && preserve_unknown {
        errs.push(Error::invalid(
            &path.child("preserveUnknownFields"),
            true,
            "must be false in order to use defaults in the schema",
        ));
    }

    let mut storage = 0;
    let mut seen = BTreeSet::new();
    let mut unique = true;
    for (i, v) in spec.versions.iter().enumerate() {
        let vp = path.child("versions").index(i);
        if v.storage {
            storage += 1;
        }
        if !seen.insert(v.name.as_str()) {
            unique = false;
        }
        let e = formats::is_dns1035_label(&v.name);
        if !e.is_empty() {
            errs.push(Error::invalid(
                &vp.child("name"),
                v.name.as_str(),
                e.join(","),
            ));
        }
        let subresources = if top_subresources.is_some() {
            top_subresources
        } else {
            v.subresources.as_ref()
        };
        errs.append(validate_version(
            v,
            &vp,
            status_enabled(subresources),
            opts,
            top_schema.is_some(),
            top_subresources.is_some(),
            top_columns.is_some(),
            top_selectable.is_some(),
        ));
    }
    if !unique {
        errs.push(Error::invalid(
            &path.child("versions"),
            versions_value(&spec.versions),
            "must contain unique version names",
        ));
    }
    if storage != 1 {
        errs.push(Error::invalid(
            &path.child("versions"),
            versions_value(&spec.versions),
            "must have exactly one version marked as storage version",
        ));
    }
    let names = &spec.names;
    let np = path.child("names");
    if names.plural.is_empty() {
        errs.push(Error::required(&np.child("plural"), ""));
    }
    if names.singular.as_deref().unwrap_or_default().is_empty() {
        errs.push(Error::required(&np.child("singular"), ""));
    }
    if names.kind.is_empty() {
        errs.push(Error::required(&np.child("kind"), ""));
    }
    if names.list_kind.as_deref().unwrap_or_default().is_empty() {
        errs.push(Error::required(&np.child("listKind"), ""));
    }
    errs.append(validate_names(names, &np));

    if let Some(schema) = top_schema {
        let any_status = spec
            .versions
            .iter()
            .any(|v| status_enabled(v.subresources.as_ref()));
        errs.append(validate_validation(
            schema,
            any_status,
            opts,
            &path.child("validation"),
        ));
    }
    if let Some(sub) = top_subresources {
        errs.append(validate_subresources(sub, &path.child("subresources")));
    }
    for (i, c) in top_columns.into_iter().flatten().enumerate() {
        errs.append(validate_column(
            c,
            &path.child("additionalPrinterColumns").index(i),
        ));
    }
    if let Some(fields) = top_selectable {
        let schema = top_schema.and_then(|s| s.open_api_v3_schema.as_ref());
        errs.append(validate_selectable_fields_with_schema(
            fields,
            schema,
            &path,
            "selectableFields may only be set when validations.schema is included",
        ));
    }
    if let Some(conv) = &spec.conversion {
        if conv.strategy != NONE_CONVERTER && preserve_unknown {
            errs.push(Error::invalid(
                &path.child("conversion").child("strategy"),
                conv.strategy.as_str(),
                "must be None if spec.preserveUnknownFields is true",
            ));
        }
        errs.append(validate_conversion(conv, &path.child("conversion")));
    }
    errs
}

fn versions_value(v: &[CustomResourceDefinitionVersion]) -> BadValue {
    BadValue::Json(crate::render::json(&v))
}

fn status_enabled(s: Option<&CustomResourceSubresources>) -> bool {
    s.is_some_and(|s| s.status.is_some())
}

fn enum_strings(path: &Path, value: &str, accepted: &[&str]) -> ErrorList {
    if value.is_empty() {
        return ErrorList::from(vec![Error::required(path, "")]);
    }
    if accepted.contains(&value) {
        return ErrorList::new();
    }
    ErrorList::from(vec![Error::not_supported(path, value, accepted)])
}

#[allow(clippy::too_many_arguments)]
fn validate_version(
    v: &CustomResourceDefinitionVersion,
    path: &Path,
    status: bool,
    opts: Options,
    top_schema: bool,
    top_subresources: bool,
    top_columns: bool,
    top_selectable: bool,
) -> ErrorList {
    let mut errs = ErrorList::new();
    for msg in deprecation_warning_errors(
        v.deprecated.unwrap_or(false),
        v.deprecation_warning.as_deref(),
    ) {
        errs.push(Error::invalid(
            &path.child("deprecationWarning"),
            v.deprecation_warning.as_deref(),
            msg,
        ));
    }
    if !top_schema && let Some(schema) = &v.schema {
        errs.append(validate_validation(
            schema,
            status,
            opts,
            &path.child("schema"),
        ));
    }
    if !top_subresources && let Some(sub) = &v.subresources {
        errs.append(validate_subresources(sub, &path.child("subresources")));
    }
    if !top_columns {
        for (i, c) in v.additional_printer_columns.iter().flatten().enumerate() {
            errs.append(validate_column(
                c,
                &path.child("additionalPrinterColumns").index(i),
            ));
        }
    }
    if !top_selectable && let Some(fields) = selectable(v) {
        errs.append(validate_selectable_fields_with_schema(
            fields,
            version_schema(v),
            path,
            "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
        ));
    }
    errs
}

fn deprecation_warning_errors(deprecated: bool, warning: Option<&str>) -> Vec<String> {
    let Some(w) = warning else { return Vec::new() };
    if !deprecated {
        return vec!["can only be set for deprecated versions".to_owned()];
    }
    let mut errs = Vec::new();
    if w.len() > 256 {
        errs.push("must be <= 256 characters long".to_owned());
    }
    if w.is_empty() {
        errs.push("must not be an empty string".to_owned());
    }
    for (i, c) in w.char_indices() {
        if c.is_control() {
            errs.push(format!(
                "must only contain printable UTF-8 characters; control character found at index {i}"
            ));
            break;
        }
        if !crate::printable::is_print(c) {
            errs.push(format!("must only contain printable UTF-8 characters; non-printable character found at index {i}"));
            break;
        }
    }
    errs
}

/// `ValidateCustomResourceDefinitionNames` (spec names and accepted names).
pub fn validate_names(names: &CustomResourceDefinitionNames, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let label = |errs: &mut ErrorList, p: Path, v: &str| {
        let e = formats::is_dns1035_label(v);
        if !v.is_empty() && !e.is_empty() {
            errs.push(Error::invalid(&p, v, e.join(",")));
        }
    };
    let mixed = |errs: &mut ErrorList, p: Path, v: &str| {
        let e = formats::is_dns1035_label(&v.to_lowercase());
        if !v.is_empty() && !e.is_empty() {
            errs.push(Error::invalid(
                &p,
                v,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    e.join(",")
                ),
            ));
        }
    };
    label(&mut errs, path.child("plural"), &names.plural);
    label(
        &mut errs,
        path.child("singular"),
        names.singular.as_deref().unwrap_or_default(),
    );
    mixed(&mut errs, path.child("kind"), &names.kind);
    let list_kind = names.list_kind.as_deref().unwrap_or_default();
    mixed(&mut errs, path.child("listKind"), list_kind);
    for (i, s) in names.short_names.iter().flatten().enumerate() {
        let e = formats::is_dns1035_label(s);
        if !e.is_empty() {
            errs.push(Error::invalid(
                &path.child("shortNames").index(i),
                s.as_str(),
                e.join(","),
            ));
        }
    }
    if !names.kind.is_empty() && names.kind == list_kind {
        errs.push(Error::invalid(
            &path.child("listKind"),
            list_kind,
            "kind and listKind may not be the same",
        ));
    }
    for (i, c) in names.categories.iter().flatten().enumerate() {
        let e = formats::is_dns1035_label(c);
        if !e.is_empty() {
            errs.push(Error::invalid(
                &path.child("categories").index(i),
                c.as_str(),
                e.join(","),
            ));
        }
    }
    errs
}

fn validate_status(crd: &CustomResourceDefinition) -> ErrorList {
    crd.status
        .as_ref()
        .and_then(|s| s.accepted_names.as_ref())
        .map(|n| validate_names(n, &Path::new("status").child("acceptedNames")))
        .unwrap_or_default()
}

/// `ValidateCustomResourceDefinitionStoredVersions`.
fn validate_stored_versions(crd: &CustomResourceDefinition) -> ErrorList {
    let path = Path::new("status").child("storedVersions");
    let stored: Vec<String> = crd
        .status
        .as_ref()
        .and_then(|s| s.stored_versions.clone())
        .unwrap_or_default();
    if stored.is_empty() {
        return ErrorList::from(vec![Error::invalid(
            &path,
            BadValue::Null,
            "must have at least one stored version",
        )]);
    }
    let mut errs = ErrorList::new();
    let mut remaining: BTreeMap<&str, usize> = stored
        .iter()
        .enumerate()
        .map(|(i, v)| (v.as_str(), i))
        .collect();
    for v in &crd.spec.versions {
        let found = remaining.remove(v.name.as_str()).is_some();
        if v.storage && !found {
            errs.push(Error::invalid(
                &path,
                BadValue::Json(crate::render::strings(&stored)),
                format!("must have the storage version {}", v.name),
            ));
        }
    }
    let mut left: Vec<(usize, &str)> = remaining.into_iter().map(|(v, i)| (i, v)).collect();
    left.sort_unstable();
    for (i, v) in left {
        errs.push(Error::invalid(
            &path.index(i),
            v,
            format!("missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"),
        ));
    }
    errs
}

/// `validateAPIApproval`: groups under `k8s.io` / `kubernetes.io` need the
/// `api-approved.kubernetes.io` annotation.
fn validate_api_approval(
    new: &CustomResourceDefinition,
    old: Option<&CustomResourceDefinition>,
) -> ErrorList {
    let g = new.spec.group.as_str();
    let protected = g == "k8s.io"
        || g.ends_with(".k8s.io")
        || g == "kubernetes.io"
        || g.ends_with(".kubernetes.io");
    if !protected {
        return ErrorList::new();
    }
    let state = |crd: &CustomResourceDefinition| -> (u8, Option<String>, String) {
        let v = crd
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(API_APPROVAL_ANNOTATION))
            .cloned();
        match v.as_deref() {
            None => (
                1,
                None,
                format!(
                    "protected groups must have approval annotation {API_APPROVAL_ANNOTATION:?}, see https://github.com/kubernetes/enhancements/pull/1111"
                ),
            ),
            Some(s) if s.starts_with("unapproved") => (2, v.clone(), String::new()),
            Some(s) if s.starts_with("https://") || s.starts_with("http://") => {
                (3, v.clone(), String::new())
            }
            Some(_) => (
                0,
                v.clone(),
                format!(
                    "protected groups must have approval annotation {API_APPROVAL_ANNOTATION:?} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"
                ),
            ),
        }
    };
    let (new_state, value, reason) = state(new);
    if old.is_some_and(|o| state(o).0 == new_state) {
        return ErrorList::new();
    }
    let p = Path::new("metadata")
        .child("annotations")
        .key(API_APPROVAL_ANNOTATION);
    match new_state {
        1 => ErrorList::from(vec![Error::required(&p, reason)]),
        0 => ErrorList::from(vec![Error::invalid(&p, value.unwrap_or_default(), reason)]),
        _ => ErrorList::new(),
    }
}

fn validate_preserve_unknown_fields(
    new: &CustomResourceDefinition,
    old: Option<&CustomResourceDefinition>,
) -> ErrorList {
    if old.is_some_and(|o| o.spec.preserve_unknown_fields == Some(true)) {
        return ErrorList::new();
    }
    if new.spec.preserve_unknown_fields == Some(true) {
        return ErrorList::from(vec![Error::invalid(
            &Path::new("spec").child("preserveUnknownFields"),
            true,
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        )]);
    }
    ErrorList::new()
}

fn validate_conversion(conv: &CustomResourceConversion, path: &Path) -> ErrorList {
    let mut errs = enum_strings(
        &path.child("strategy"),
        &conv.strategy,
        &[NONE_CONVERTER, WEBHOOK_CONVERTER],
    );
    let client = conv.webhook.as_ref().and_then(|w| w.client_config.as_ref());
    let review_versions: &[String] = conv
        .webhook
        .as_ref()
        .map_or(&[], |w| w.conversion_review_versions.as_slice());
    if conv.strategy == WEBHOOK_CONVERTER {
        match client {
            None => errs.push(Error::required(
                &path.child("webhookClientConfig"),
                "required when strategy is set to Webhook",
            )),
            Some(cc) if cc.url.is_some() == cc.service.is_some() => {
                errs.push(Error::required(
                    &path.child("webhookClientConfig"),
                    "exactly one of url or service is required",
                ));
            }
            Some(cc) => {
                let wp = path.child("webhookClientConfig");
                if let Some(url) = &cc.url {
                    errs.append(validate_webhook_url(&wp.child("url"), url));
                }
                if let Some(svc) = &cc.service {
                    errs.append(validate_webhook_service(&wp.child("service"), svc));
                }
            }
        }
        let rp = path.child("conversionReviewVersions");
        if review_versions.is_empty() {
            errs.push(Error::required(&rp, ""));
        } else {
            let mut seen = BTreeSet::new();
            let mut accepted = false;
            for (i, v) in review_versions.iter().enumerate() {
                if !seen.insert(v.as_str()) {
                    errs.push(Error::invalid(
                        &rp.index(i),
                        v.as_str(),
                        "duplicate version",
                    ));
                    continue;
                }
                for m in formats::is_dns1035_label(v) {
                    errs.push(Error::invalid(&rp.index(i), v.as_str(), m));
                }
                accepted |= v == "v1" || v == "v1beta1";
            }
            if !accepted {
                errs.push(Error::invalid(
                    &rp,
                    BadValue::Json(crate::render::strings(review_versions)),
                    "must include at least one of v1, v1beta1",
                ));
            }
        }
    } else {
        if client.is_some() {
            errs.push(Error::forbidden(
                &path.child("webhookClientConfig"),
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !review_versions.is_empty() {
            errs.push(Error::forbidden(
                &path.child("conversionReviewVersions"),
                "should not be set when strategy is not set to Webhook",
            ));
        }
    }
    errs
}

/// `ValidateCustomResourceColumnDefinition`.
fn validate_column(col: &CustomResourceColumnDefinition, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if col.name.is_empty() {
        errs.push(Error::required(&path.child("name"), ""));
    }
    let types = format!("must be one of {}", PRINTER_COLUMN_TYPES.join(","));
    if col.type_.is_empty() {
        errs.push(Error::required(&path.child("type"), types));
    } else if !PRINTER_COLUMN_TYPES.contains(&col.type_.as_str()) {
        errs.push(Error::invalid(
            &path.child("type"),
            col.type_.as_str(),
            types,
        ));
    }
    if let Some(f) = col
        .format
        .as_deref()
        .filter(|f| !f.is_empty() && !PRINTER_COLUMN_FORMATS.contains(f))
    {
        errs.push(Error::invalid(
            &path.child("format"),
            f,
            format!("must be one of {}", PRINTER_COLUMN_FORMATS.join(",")),
        ));
    }
    if col.json_path.is_empty() {
        errs.push(Error::required(&path.child("JSONPath"), ""));
    } else {
        errs.append(validate_simple_json_path(
            &col.json_path,
            &path.child("JSONPath"),
        ));
    }
    errs
}

fn validate_simple_json_path(s: &str, path: &Path) -> ErrorList {
    if s.is_empty() {
        return ErrorList::from(vec![Error::invalid(path, s, "must not be empty")]);
    }
    if !s.starts_with('.') {
        return ErrorList::from(vec![Error::invalid(
            path,
            s,
            "must be a simple json path starting with .",
        )]);
    }
    ErrorList::new()
}

/// `ValidateCustomResourceDefinitionSubresources`: the scale paths.
pub fn validate_subresources(sub: &CustomResourceSubresources, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(scale) = &sub.scale else { return errs };
    let spec = path.child("scale.specReplicasPath");
    if scale.spec_replicas_path.is_empty() {
        errs.push(Error::required(&spec, ""));
    } else {
        let e = validate_simple_json_path(&scale.spec_replicas_path, &spec);
        if !e.is_empty() {
            errs.append(e);
        } else if !scale.spec_replicas_path.starts_with(".spec.") {
            errs.push(Error::invalid(
                &spec,
                scale.spec_replicas_path.as_str(),
                "should be a json path under .spec",
            ));
        }
    }
    let status = path.child("scale.statusReplicasPath");
    if scale.status_replicas_path.is_empty() {
        errs.push(Error::required(&status, ""));
    } else {
        let e = validate_simple_json_path(&scale.status_replicas_path, &status);
        if !e.is_empty() {
            errs.append(e);
        } else if !scale.status_replicas_path.starts_with(".status.") {
            errs.push(Error::invalid(
                &status,
                scale.status_replicas_path.as_str(),
                "should be a json path under .status",
            ));
        }
    }
    if let Some(sel) = scale
        .label_selector_path
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        let p = path.child("scale.labelSelectorPath");
        let e = validate_simple_json_path(sel, &p);
        if !e.is_empty() {
            errs.append(e);
        } else if !sel.starts_with(".spec.") && !sel.starts_with(".status.") {
            errs.push(Error::invalid(
                &p,
                sel,
                "should be a json path under either .spec or .status",
            ));
        }
    }
    errs
}

fn validate_selectable_fields_with_schema(
    fields: &[SelectableField],
    schema: Option<&JSONSchemaProps>,
    parent: &Path,
    missing: &str,
) -> ErrorList {
    let path = parent.child("selectableFields");
    let Some(schema) = schema else {
        return ErrorList::from(vec![Error::invalid(&path, "", missing)]);
    };
    match Structural::new(schema) {
        Ok(s) => validate_selectable_fields(fields, &s, &path),
        Err(e) => ErrorList::from(vec![Error::invalid(
            &parent.child("schema.openAPIV3Schema"),
            "",
            e.to_string(),
        )]),
    }
}

/// `ValidateCustomResourceSelectableFields`: each path names a string,
/// boolean or integer field outside `metadata`, at most 8 distinct.
pub fn validate_selectable_fields(
    fields: &[SelectableField],
    schema: &Structural,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut unique = BTreeSet::new();
    for (i, f) in fields.iter().enumerate() {
        let p = path.index(i).child("jsonPath");
        if f.json_path.is_empty() {
            errs.push(Error::required(&p, ""));
            continue;
        }
        let (segments, found) = match resolve_field_path(&f.json_path, schema) {
            Ok(r) => r,
            Err(e) => {
                errs.push(Error::invalid(
                    &p,
                    f.json_path.as_str(),
                    format!("is an invalid path: {e}"),
                ));
                continue;
            }
        };
        if segments.first().map(String::as_str) == Some("metadata") {
            errs.push(Error::invalid(
                &p,
                f.json_path.as_str(),
                "must not point to fields in metadata",
            ));
        }
        if !matches!(found.type_(), "string" | "boolean" | "integer") {
            errs.push(Error::invalid(&p, f.json_path.as_str(), "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."));
        }
        if !unique.insert(segments.join(".")) {
            errs.push(Error::duplicate(&p, f.json_path.as_str()));
        }
    }
    if unique.len() > MAX_SELECTABLE_FIELDS {
        errs.push(Error::too_many(path, unique.len(), MAX_SELECTABLE_FIELDS));
    }
    errs
}

/// `cel.ValidFieldPath` without array notation: a `.a.b` path whose every
/// step is a declared property (or an `additionalProperties` key).
fn resolve_field_path<'a>(
    path: &str,
    schema: &'a Structural,
) -> Result<(Vec<String>, &'a Structural), String> {
    let Some(rest) = path.strip_prefix('.') else {
        return Err(format!(
            "expected [.] at position 0 but found {:?}",
            path.chars().next().unwrap_or(' ')
        ));
    };
    let mut cur = schema;
    let mut segments = Vec::new();
    for seg in rest.split('.') {
        if seg.is_empty() || seg.contains(['[', ']']) {
            return Err(format!("invalid field path: {path}"));
        }
        cur = match cur.properties.get(seg) {
            Some(p) => p,
            None => match cur.additional_schema() {
                Some(a) => a,
                None => return Err("does not refer to a valid field".to_string()),
            },
        };
        segments.push(seg.to_owned());
    }
    Ok((segments, cur))
}

#[cfg(test)]
#[path = "validation_tests.rs"]
mod tests;
