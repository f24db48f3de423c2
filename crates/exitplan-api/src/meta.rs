//! `ObjectMeta` validation on create and update, as apimachinery's
//! `ValidateObjectMetaAccessor` / `ValidateObjectMetaUpdate` do it with a
//! kind's own name rule (what a strategy's `Validate` runs), and in
//! [`generic`] the checks kube-apiserver's generic registry adds around every
//! strategy (`rest.BeforeCreate` / `BeforeUpdate`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::nonnegative::validate_nonnegative_field;

pub mod generic;

/// Upstream's detail for a changed immutable field.
pub const FIELD_IMMUTABLE: &str = "field is immutable";
/// Upper bound on the summed size of all annotation keys and values.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// How `metadata.name` (and `generateName`) must look for a kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// A DNS-1123 subdomain (most kinds); errors carry `format=k8s-long-name`.
    Subdomain,
    /// A DNS-1123 label (namespaces).
    Label,
    /// A DNS-1035 label: a DNS-1123 label starting with a letter (services).
    Dns1035Label,
    /// A path segment (`ValidateRBACName`): not `.` nor `..`, no `/` or
    /// `%`; a generateName prefix is checked the same way.
    PathSegment,
}

impl NameRule {
    fn check(self, name: &str, prefix: bool) -> Vec<String> {
        // A generateName prefix may end in '-' (`maskTrailingDash`).
        let masked = if prefix && name.len() > 1 {
            name.strip_suffix('-').unwrap_or(name)
        } else {
            name
        };
        match self {
            NameRule::Subdomain => formats::is_dns1123_subdomain(masked),
            NameRule::Label => formats::is_dns1123_label(masked),
            NameRule::Dns1035Label => formats::is_dns1035_label(masked),
            NameRule::PathSegment => generic::path_segment_name_errors(name, false),
        }
    }

    fn origin(self) -> Option<&'static str> {
        match self {
            NameRule::Subdomain => Some("format=k8s-long-name"),
            NameRule::Label | NameRule::Dns1035Label => Some("format=k8s-short-name"),
            NameRule::PathSegment => None,
        }
    }
}

/// Validates `metadata` of a new object. `namespaced` says whether the kind
/// lives in a namespace (namespace required) or not (namespace forbidden).
pub fn validate_object_meta(meta: &ObjectMeta, namespaced: bool, rule: NameRule) -> ErrorList {
    let path = Path::new("metadata");
    let mut errs = ErrorList::new();
    if let Some(gen_name) = meta.generate_name.as_deref().filter(|g| !g.is_empty()) {
        for msg in rule.check(gen_name, true) {
            errs.push(Error::invalid(&path.child("generateName"), gen_name, msg));
        }
    }
    match meta.name.as_deref().filter(|n| !n.is_empty()) {
        None => errs.push(Error::required(
            &path.child("name"),
            "name or generateName is required",
        )),
        Some(name) => {
            for msg in rule.check(name, false) {
                let e = Error::invalid(&path.child("name"), name, msg);
                errs.push(match rule.origin() {
                    Some(origin) => e.with_origin(origin),
                    None => e,
                });
            }
        }
    }
    let namespace = meta.namespace.as_deref().unwrap_or_default();
    if namespaced {
        if namespace.is_empty() {
            errs.push(Error::required(&path.child("namespace"), ""));
        } else {
            for msg in formats::is_dns1123_label(namespace) {
                errs.push(Error::invalid(&path.child("namespace"), namespace, msg));
            }
        }
    } else if !namespace.is_empty() {
        errs.push(Error::forbidden(
            &path.child("namespace"),
            "not allowed on this type",
        ));
    }
    errs.append(validate_nonnegative_field(
        meta.generation.unwrap_or(0),
        &path.child("generation"),
    ));
    errs.append(validate_common(meta, &path));
    errs
}

fn validate_common(meta: &ObjectMeta, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(labels) = &meta.labels {
        errs.append(validate_labels(labels, &path.child("labels")));
    }
    if let Some(annotations) = &meta.annotations {
        errs.append(validate_annotations(
            annotations,
            &path.child("annotations"),
        ));
    }
    if let Some(refs) = &meta.owner_references {
        errs.append(validate_owner_references(
            refs,
            &path.child("ownerReferences"),
        ));
    }
    if let Some(finalizers) = &meta.finalizers {
        for (i, f) in finalizers.iter().enumerate() {
            errs.append(formats::validate_qualified_name(
                &path.child("finalizers").index(i),
                f,
            ));
        }
    }
    errs
}

/// `ValidateLabels`: keys are label keys, values label values (errors at `path`).
pub fn validate_labels(labels: &BTreeMap<String, String>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (k, v) in labels {
        errs.append(formats::validate_qualified_name(path, k));
        for msg in formats::is_label_value(v) {
            errs.push(Error::invalid(path, v.as_str(), msg));
        }
    }
    errs
}

/// `ValidateAnnotations`: keys are qualified names; total size ≤ 256 KiB.
pub fn validate_annotations(annotations: &BTreeMap<String, String>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut total = 0usize;
    for (k, v) in annotations {
        for msg in formats::is_qualified_name(&k.to_lowercase()) {
            errs.push(Error::invalid(path, k.as_str(), msg));
        }
        total += k.len() + v.len();
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(Error::too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT));
    }
    errs
}

/// `ValidateOwnerReferences`: apiVersion/kind/name/uid present, at most one controller.
pub fn validate_owner_references(refs: &[OwnerReference], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut controllers = Vec::new();
    for r in refs {
        let version = r.api_version.rsplit('/').next().unwrap_or_default();
        if version.is_empty() {
            errs.push(Error::invalid(
                &path.child("apiVersion"),
                r.api_version.as_str(),
                "version must not be empty",
            ));
        }
        if r.kind.is_empty() {
            errs.push(Error::invalid(
                &path.child("kind"),
                r.kind.as_str(),
                "kind must not be empty",
            ));
        }
        if r.name.is_empty() {
            errs.push(Error::invalid(
                &path.child("name"),
                r.name.as_str(),
                "name must not be empty",
            ));
        }
        if r.uid.is_empty() {
            errs.push(Error::invalid(
                &path.child("uid"),
                r.uid.as_str(),
                "uid must not be empty",
            ));
        }
        if r.controller == Some(true) {
            controllers.push(format!(
                "{}/{}, Kind={}, Name={}",
                r.api_version, r.uid, r.kind, r.name
            ));
        }
    }
    if controllers.len() > 1 {
        errs.push(Error::invalid(
            path,
            BadValue::Omit,
            format!(
                "Only one reference can have Controller set to true. Found \"true\" in references for {}",
                controllers.join(" and ")
            ),
        ));
    }
    errs
}

/// Validates `metadata` on update against the stored object
/// (`ValidateObjectMetaUpdate`): identity fields are immutable, a
/// resourceVersion is required, generation never decreases, and no
/// finalizer may be added once deletion started.
pub fn validate_object_meta_update(new: &ObjectMeta, old: &ObjectMeta) -> ErrorList {
    let path = Path::new("metadata");
    let mut errs = ErrorList::new();
    if old.deletion_timestamp.is_some() {
        let old_f = old.finalizers.clone().unwrap_or_default();
        let mut extra: Vec<&String> = new
            .finalizers
            .iter()
            .flatten()
            .filter(|f| !old_f.contains(f))
            .collect();
        extra.sort();
        extra.dedup();
        if !extra.is_empty() {
            let list: Vec<String> = extra.iter().map(|f| crate::field::go_quote(f)).collect();
            errs.push(Error::forbidden(
                &path.child("finalizers"),
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    list.join(", ")
                ),
            ));
        }
    }
    if new
        .resource_version
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        errs.push(Error::invalid(
            &path.child("resourceVersion"),
            new.resource_version.as_deref().unwrap_or_default(),
            "must be specified for an update",
        ));
    }
    if new.generation.unwrap_or(0) < old.generation.unwrap_or(0) {
        errs.push(Error::invalid(
            &path.child("generation"),
            new.generation.unwrap_or(0),
            "must not be decremented",
        ));
    }
    immutable(&mut errs, &path.child("name"), &new.name, &old.name);
    immutable(
        &mut errs,
        &path.child("namespace"),
        &new.namespace,
        &old.namespace,
    );
    immutable(&mut errs, &path.child("uid"), &new.uid, &old.uid);
    if new.creation_timestamp != old.creation_timestamp {
        errs.push(Error::invalid(
            &path.child("creationTimestamp"),
            new.creation_timestamp.as_ref(),
            FIELD_IMMUTABLE,
        ));
    }
    if new.deletion_timestamp != old.deletion_timestamp {
        errs.push(Error::invalid(
            &path.child("deletionTimestamp"),
            new.deletion_timestamp.as_ref(),
            FIELD_IMMUTABLE,
        ));
    }
    if new.deletion_grace_period_seconds != old.deletion_grace_period_seconds {
        errs.push(Error::invalid(
            &path.child("deletionGracePeriodSeconds"),
            new.deletion_grace_period_seconds,
            FIELD_IMMUTABLE,
        ));
    }
    errs.append(validate_common(new, &path));
    errs
}

fn immutable(errs: &mut ErrorList, path: &Path, new: &Option<String>, old: &Option<String>) {
    let (n, o) = (
        new.as_deref().unwrap_or_default(),
        old.as_deref().unwrap_or_default(),
    );
    if n != o {
        errs.push(Error::invalid(path, n, FIELD_IMMUTABLE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, ns: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_owned()),
            namespace: ns.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn namespace_required_for_namespaced_kinds() {
        let errs = validate_object_meta(&meta("bar", None), true, NameRule::Subdomain);
        assert_eq!(errs.to_string(), "metadata.namespace: Required value");
    }

    #[test]
    fn bad_name_carries_long_name_origin() {
        let errs = validate_object_meta(
            &meta("-invalid-name", Some("foo")),
            true,
            NameRule::Subdomain,
        );
        assert_eq!(errs.len(), 1);
        assert_eq!(errs.0[0].origin.as_deref(), Some("format=k8s-long-name"));
        assert_eq!(errs.0[0].field, "metadata.name");
    }

    #[test]
    fn update_requires_resource_version_and_keeps_identity() {
        let old = meta("a", Some("ns"));
        let mut new = meta("b", Some("ns"));
        new.resource_version = Some("1".into());
        let errs = validate_object_meta_update(&new, &old);
        assert_eq!(
            errs.to_string(),
            "metadata.name: Invalid value: \"b\": field is immutable"
        );
        new.resource_version = None;
        new.name = Some("a".into());
        assert_eq!(
            validate_object_meta_update(&new, &old).to_string(),
            "metadata.resourceVersion: Invalid value: \"\": must be specified for an update"
        );
    }
}
