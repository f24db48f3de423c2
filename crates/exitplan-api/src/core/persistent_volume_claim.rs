//! core/v1 PersistentVolumeClaim: defaulting
//! (`SetDefaults_PersistentVolumeClaim(Spec)`), validation
//! (`ValidatePersistentVolumeClaim*` of `pkg/apis/core/validation`) and the
//! registry strategy (`pkg/registry/core/persistentvolumeclaim`), with the
//! v1.37 feature gates (`VolumeAttributesClass`,
//! `RecoverVolumeExpansionFailure` and `AnyVolumeDataSource` on).
//!
//! After create the spec is immutable except `resources.requests` (growing
//! only, or shrinking above `status.capacity`) and
//! `volumeAttributesClassName`; `volumeName` may be set once and a
//! `storageClassName` may replace the beta annotation or a nil value.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimSpec, PersistentVolumeClaimStatus,
    TypedLocalObjectReference, TypedObjectReference,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;

use super::persistent_volume::{
    PHASE_PENDING, VOLUME_MODES, quantity, validate_access_modes, validate_basic_resource,
    validate_class_name, validate_positive_quantity,
};
use super::validation::diff::diff;
use super::validation::quantity::Quantity;
use super::validation::resources::{is_native, validate_quantity_value};
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, FIELD_IMMUTABLE, NameRule};
use crate::selector::validate_label_selector;
use crate::strategy::{Context, Strategy};

/// The beta annotation older clients name the storage class with.
pub const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";
/// `Bound`.
pub const CLAIM_BOUND: &str = "Bound";
/// The resize statuses of `status.allocatedResourceStatuses`, sorted.
pub const RESIZE_STATUSES: [&str; 5] = [
    "ControllerResizeInProgress",
    "ControllerResizeInfeasible",
    "NodeResizeInProgress",
    "NodeResizeInfeasible",
    "NodeResizePending",
];
/// The detail of a forbidden spec change.
pub const SPEC_IMMUTABLE: &str = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";

/// Options of claim validation (`PersistentVolumeClaimSpecValidationOptions`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClaimValidationOptions {
    /// Stored claims with invalid selector label values stay valid.
    pub allow_invalid_label_value_in_selector: bool,
    /// Stored claims with a data source API group stay valid.
    pub allow_invalid_api_group_in_data_source_or_ref: bool,
}

/// `ValidationOptionsForPersistentVolumeClaim`.
pub fn validation_options(old: Option<&PersistentVolumeClaim>) -> ClaimValidationOptions {
    let Some(old) = old else {
        return ClaimValidationOptions::default();
    };
    let spec = old.spec.clone().unwrap_or_default();
    let group = spec
        .data_source
        .as_ref()
        .is_some_and(|d| d.api_group.is_some())
        || spec
            .data_source_ref
            .as_ref()
            .is_some_and(|d| d.api_group.is_some());
    ClaimValidationOptions {
        allow_invalid_label_value_in_selector: spec.selector.is_some()
            && !validate_label_selector(spec.selector.as_ref(), false, &Path::default()).is_empty(),
        allow_invalid_api_group_in_data_source_or_ref: group,
    }
}

fn validate_data_source_fields(
    kind: &str,
    name: &str,
    api_group: Option<&str>,
    allow_invalid_group: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if name.is_empty() {
        errs.push(Error::required(&path.child("name"), ""));
    }
    if kind.is_empty() {
        errs.push(Error::required(&path.child("kind"), ""));
    }
    let group = api_group.unwrap_or_default();
    if group.is_empty() && kind != "PersistentVolumeClaim" {
        errs.push(Error::invalid(
            path,
            kind,
            "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
        ));
    }
    if !group.is_empty() && !allow_invalid_group {
        for m in formats::is_dns1123_subdomain(group) {
            errs.push(Error::invalid(&path.child("apiGroup"), group, m));
        }
    }
    errs
}

/// `validateDataSource`.
fn validate_data_source(ds: &TypedLocalObjectReference, allow: bool, path: &Path) -> ErrorList {
    validate_data_source_fields(&ds.kind, &ds.name, ds.api_group.as_deref(), allow, path)
}

/// `validateDataSourceRef`.
fn validate_data_source_ref(ds: &TypedObjectReference, allow: bool, path: &Path) -> ErrorList {
    let mut errs =
        validate_data_source_fields(&ds.kind, &ds.name, ds.api_group.as_deref(), allow, path);
    if let Some(ns) = ds.namespace.as_deref().filter(|n| !n.is_empty()) {
        for m in formats::is_dns1123_label(ns) {
            errs.push(Error::invalid(&path.child("namespace"), ns, m));
        }
    }
    errs
}

/// `ValidatePersistentVolumeClaimSpec`: access modes required and valid, a
/// positive `resources.requests.storage`, class names, volume mode and data
/// sources.
pub fn validate_persistent_volume_claim_spec(
    spec: &PersistentVolumeClaimSpec,
    opts: ClaimValidationOptions,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let modes = spec.access_modes.as_deref().unwrap_or_default();
    if modes.is_empty() {
        errs.push(Error::required(
            &path.child("accessModes"),
            "at least 1 access mode is required",
        ));
    }
    if let Some(sel) = &spec.selector {
        errs.append(validate_label_selector(
            Some(sel),
            opts.allow_invalid_label_value_in_selector,
            &path.child("selector"),
        ));
    }
    errs.append(validate_access_modes(modes, &path.child("accessModes")));

    let storage_path = path.child("resources").key("storage");
    match spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
    {
        None => errs.push(Error::required(&storage_path, "")),
        Some(q) => {
            let q = quantity(q);
            let positive = validate_positive_quantity(&q, &storage_path);
            if positive.is_empty() {
                errs.append(validate_quantity_value("storage", &q, &storage_path));
            } else {
                errs.append(positive);
            }
        }
    }
    if let Some(sc) = spec.storage_class_name.as_deref().filter(|s| !s.is_empty()) {
        errs.append(validate_class_name(sc, &path.child("storageClassName")));
    }
    if let Some(mode) = spec.volume_mode.as_deref()
        && !VOLUME_MODES.contains(&mode)
    {
        errs.push(Error::not_supported(
            &path.child("volumeMode"),
            mode,
            &VOLUME_MODES,
        ));
    }
    let allow_group = opts.allow_invalid_api_group_in_data_source_or_ref;
    if let Some(ds) = &spec.data_source {
        errs.append(validate_data_source(
            ds,
            allow_group,
            &path.child("dataSource"),
        ));
    }
    if let Some(dsr) = &spec.data_source_ref {
        errs.append(validate_data_source_ref(
            dsr,
            allow_group,
            &path.child("dataSourceRef"),
        ));
    }
    let shown = BadValue::Json(path.child("dataSource").to_string());
    let namespaced_ref = spec
        .data_source_ref
        .as_ref()
        .is_some_and(|r| r.namespace.as_deref().is_some_and(|n| !n.is_empty()));
    if namespaced_ref {
        if spec.data_source.is_some() {
            errs.push(Error::invalid(
                path,
                shown,
                "may not be specified when dataSourceRef.namespace is specified",
            ));
        }
    } else if let (Some(ds), Some(r)) = (&spec.data_source, &spec.data_source_ref)
        && !(ds.api_group == r.api_group && ds.kind == r.kind && ds.name == r.name)
    {
        errs.push(Error::invalid(path, shown, "must match dataSourceRef"));
    }
    if let Some(vac) = spec
        .volume_attributes_class_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        errs.append(validate_class_name(
            vac,
            &path.child("volumeAttributesClassName"),
        ));
    }
    errs
}

/// `ValidatePersistentVolumeClaim`: metadata (a DNS subdomain) and the spec.
pub fn validate_persistent_volume_claim(
    pvc: &PersistentVolumeClaim,
    opts: ClaimValidationOptions,
) -> ErrorList {
    let mut errs = meta::validate_object_meta(&pvc.metadata, true, NameRule::Subdomain);
    errs.append(validate_persistent_volume_claim_spec(
        &pvc.spec.clone().unwrap_or_default(),
        opts,
        &Path::new("spec"),
    ));
    errs
}

fn annotation<'a>(pvc: &'a PersistentVolumeClaim, key: &str) -> Option<&'a str> {
    pvc.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

fn storage_request(spec: &PersistentVolumeClaimSpec) -> Quantity {
    spec.resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
        .map_or_else(Quantity::zero, quantity)
}

/// `ValidatePersistentVolumeClaimUpdate`: metadata update rules, the new
/// claim's rules, then the immutable spec (see the module comment), storage
/// requests that only shrink above `status.capacity`, an immutable
/// `volumeMode` and a `volumeAttributesClassName` that may not be removed.
pub fn validate_persistent_volume_claim_update(
    new: &PersistentVolumeClaim,
    old: &PersistentVolumeClaim,
    opts: ClaimValidationOptions,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_persistent_volume_claim(new, opts));
    let new_spec = new.spec.clone().unwrap_or_default();
    let old_spec = old.spec.clone().unwrap_or_default();
    let mut new_clone = new_spec.clone();
    let mut old_clone = old_spec.clone();
    if old_spec
        .volume_name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        old_clone.volume_name.clone_from(&new_clone.volume_name);
    }
    let old_ann = annotation(old, BETA_STORAGE_CLASS_ANNOTATION);
    let new_ann = annotation(new, BETA_STORAGE_CLASS_ANNOTATION);
    let upgrade_from_annotation = old_ann.is_some_and(|old_sc| {
        old_spec.storage_class_name.is_none()
            && new_spec.storage_class_name.as_deref() == Some(old_sc)
            && new_ann.is_none_or(|n| n == old_sc)
    });
    if upgrade_from_annotation {
        new_clone.storage_class_name = None;
    } else {
        let (n, o) = (new_ann.unwrap_or_default(), old_ann.unwrap_or_default());
        if n != o {
            errs.push(Error::invalid(
                &Path::new("metadata")
                    .child("annotations")
                    .child(BETA_STORAGE_CLASS_ANNOTATION),
                n,
                FIELD_IMMUTABLE,
            ));
        }
        let upgrade_from_nil = new_spec.storage_class_name.as_deref().is_some_and(|sc| {
            old_spec.storage_class_name.is_none() && old_ann.is_none_or(|a| a == sc)
        });
        if upgrade_from_nil {
            new_clone
                .storage_class_name
                .clone_from(&old_clone.storage_class_name);
        }
    }
    let bound = new.status.as_ref().and_then(|s| s.phase.as_deref()) == Some(CLAIM_BOUND);
    if bound
        && let Some(requests) = new_clone
            .resources
            .as_mut()
            .and_then(|r| r.requests.as_mut())
    {
        match old_spec
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get("storage"))
        {
            Some(q) => {
                requests.insert("storage".to_owned(), q.clone());
            }
            None => {
                requests.insert("storage".to_owned(), WireQuantity("0".to_owned()));
            }
        }
    }
    new_clone
        .volume_attributes_class_name
        .clone_from(&old_clone.volume_attributes_class_name);
    if !semantic_eq(&new_clone, &old_clone) {
        errs.push(Error::forbidden(
            &Path::new("spec"),
            format!(
                "{SPEC_IMMUTABLE}\n{}",
                diff("core.PersistentVolumeClaimSpec", &old_clone, &new_clone)
            ),
        ));
    }
    let (old_size, new_size) = (storage_request(&old_spec), storage_request(&new_spec));
    let status_size = old
        .status
        .as_ref()
        .and_then(|s| s.capacity.as_ref())
        .and_then(|c| c.get("storage"))
        .map_or_else(Quantity::zero, quantity);
    if new_size < old_size && new_size <= status_size {
        errs.push(Error::forbidden(
            &Path::new("spec")
                .child("resources")
                .child("requests")
                .child("storage"),
            "field can not be less than status.capacity",
        ));
    }
    if new_spec.volume_mode != old_spec.volume_mode {
        errs.push(Error::invalid(
            &Path::new("volumeMode"),
            BadValue::from(new_spec.volume_mode.as_deref()),
            FIELD_IMMUTABLE,
        ));
    }
    if let Some(_old_vac) = &old_spec.volume_attributes_class_name {
        let p = Path::new("spec").child("volumeAttributesClassName");
        match new_spec.volume_attributes_class_name.as_deref() {
            None => errs.push(Error::forbidden(
                &p,
                "update from non-nil value to nil is forbidden",
            )),
            Some("") => errs.push(Error::forbidden(
                &p,
                "update from non-nil value to an empty string is forbidden",
            )),
            Some(_) => {}
        }
    }
    errs
}

/// `validatePersistentVolumeClaimResourceKey`: a qualified name; native
/// names may only be `storage`.
fn validate_resource_key(value: &str, path: &Path) -> ErrorList {
    let errs = formats::validate_qualified_name(path, value);
    if !errs.is_empty() {
        return errs;
    }
    if is_native(value) && value != "storage" {
        return ErrorList(vec![Error::not_supported(path, value, &["storage"])]);
    }
    errs
}

/// `ValidatePersistentVolumeClaimStatusUpdate`.
pub fn validate_persistent_volume_claim_status_update(
    new: &PersistentVolumeClaim,
    old: &PersistentVolumeClaim,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    if new
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        errs.push(Error::required(&Path::new("resourceVersion"), ""));
    }
    let spec = new.spec.clone().unwrap_or_default();
    if spec.access_modes.as_deref().unwrap_or_default().is_empty() {
        errs.push(Error::required(&Path::new("Spec").child("accessModes"), ""));
    }
    let status = new.status.clone().unwrap_or_default();
    let cap_path = Path::new("status").child("capacity");
    for (name, q) in status.capacity.iter().flatten() {
        errs.append(validate_basic_resource(&quantity(q), &cap_path.key(name)));
    }
    let resize_path = Path::new("status").child("allocatedResourceStatus");
    for (k, v) in status.allocated_resource_statuses.iter().flatten() {
        errs.append(validate_resource_key(k, &resize_path));
        if !RESIZE_STATUSES.contains(&v.as_str()) {
            errs.push(Error::not_supported(
                &resize_path,
                k.as_str(),
                &RESIZE_STATUSES,
            ));
        }
    }
    let alloc_path = Path::new("status").child("allocatedResources");
    for (name, q) in status.allocated_resources.iter().flatten() {
        let key_errs = validate_resource_key(name, &alloc_path);
        if !key_errs.is_empty() {
            errs.append(key_errs);
            continue;
        }
        let q = quantity(q);
        let basic = validate_basic_resource(&q, &alloc_path.key(name));
        if basic.is_empty() {
            errs.append(validate_quantity_value(
                "storage",
                &q,
                &alloc_path.key(name),
            ));
        } else {
            errs.append(basic);
        }
    }
    errs
}

/// `NormalizeDataSources`: `dataSource` and `dataSourceRef` mirror each
/// other when only one is set (a namespaced `dataSourceRef` is not mirrored).
pub fn normalize_data_sources(spec: &mut PersistentVolumeClaimSpec) {
    match (&spec.data_source, &spec.data_source_ref) {
        (Some(ds), None) => {
            spec.data_source_ref = Some(TypedObjectReference {
                api_group: ds.api_group.clone(),
                kind: ds.kind.clone(),
                name: ds.name.clone(),
                namespace: None,
            });
        }
        (None, Some(r)) if r.namespace.as_deref().unwrap_or_default().is_empty() => {
            spec.data_source = Some(TypedLocalObjectReference {
                api_group: r.api_group.clone(),
                kind: r.kind.clone(),
                name: r.name.clone(),
            });
        }
        _ => {}
    }
}

type List = BTreeMap<String, WireQuantity>;

fn visit<'a>(l: Option<&'a List>, f: &mut dyn FnMut(&'a WireQuantity)) {
    for q in l.into_iter().flat_map(BTreeMap::values) {
        f(q);
    }
}

impl crate::quantities::Quantities for PersistentVolumeClaim {
    fn visit_quantities<'a>(&'a self, f: &mut dyn FnMut(&'a WireQuantity)) {
        if let Some(r) = self.spec.as_ref().and_then(|s| s.resources.as_ref()) {
            visit(r.limits.as_ref(), f);
            visit(r.requests.as_ref(), f);
        }
        if let Some(s) = &self.status {
            visit(s.allocated_resources.as_ref(), f);
            visit(s.capacity.as_ref(), f);
        }
    }
}

/// Create, update and status-update rules of core/v1 PersistentVolumeClaims.
#[derive(Clone, Copy, Debug, Default)]
pub struct PersistentVolumeClaimStrategy;

impl Strategy for PersistentVolumeClaimStrategy {
    type Object = PersistentVolumeClaim;

    /// `SetDefaults_PersistentVolumeClaim(Spec)`: volume mode `Filesystem`,
    /// phase `Pending`.
    fn default(obj: &mut PersistentVolumeClaim) {
        obj.spec
            .get_or_insert_with(PersistentVolumeClaimSpec::default)
            .volume_mode
            .get_or_insert_with(|| "Filesystem".to_owned());
        let status = obj
            .status
            .get_or_insert_with(PersistentVolumeClaimStatus::default);
        if status.phase.as_deref().unwrap_or_default().is_empty() {
            status.phase = Some(PHASE_PENDING.to_owned());
        }
    }

    /// Status reset (phase `Pending`, as a read of the stored object shows
    /// it); data sources normalized.
    fn prepare_for_create(obj: &mut PersistentVolumeClaim) {
        obj.status = Some(PersistentVolumeClaimStatus {
            phase: Some(PHASE_PENDING.to_owned()),
            ..PersistentVolumeClaimStatus::default()
        });
        if let Some(spec) = &mut obj.spec {
            normalize_data_sources(spec);
        }
    }

    fn validate_create(obj: &PersistentVolumeClaim, _ctx: &Context<'_>) -> ErrorList {
        let errs = validate_persistent_volume_claim(obj, validation_options(None));
        before_create(errs, &obj.metadata)
    }

    /// Status kept; data sources normalized.
    fn prepare_for_update(new: &mut PersistentVolumeClaim, old: &PersistentVolumeClaim) {
        new.status.clone_from(&old.status);
        if let Some(spec) = &mut new.spec {
            normalize_data_sources(spec);
        }
    }

    /// Common metadata, the new claim, then the update rules (which repeat
    /// the new claim's, as upstream's strategy does).
    fn validate_update(
        new: &PersistentVolumeClaim,
        old: &PersistentVolumeClaim,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        let opts = validation_options(Some(old));
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_persistent_volume_claim(new, opts));
        errs.append(validate_persistent_volume_claim_update(new, old, opts));
        errs
    }

    /// Spec kept.
    fn prepare_for_status_update(new: &mut PersistentVolumeClaim, old: &PersistentVolumeClaim) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(
        new: &PersistentVolumeClaim,
        old: &PersistentVolumeClaim,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_persistent_volume_claim_status_update(new, old));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::{admit_create, admit_update};
    use serde_json::{Value, json};

    fn claim(spec: Value) -> PersistentVolumeClaim {
        serde_json::from_value(json!({
            "metadata": {"name": "foo", "namespace": "ns", "resourceVersion": "1"},
            "spec": spec,
        }))
        .expect("pvc")
    }

    fn base() -> Value {
        json!({
            "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
            "resources": {"requests": {"storage": "10G"}},
            "storageClassName": "slow",
            "volumeMode": "Filesystem",
        })
    }

    fn with(mut v: Value, key: &str, value: Value) -> Value {
        if let Some(m) = v.as_object_mut() {
            if value.is_null() {
                m.remove(key);
            } else {
                m.insert(key.to_owned(), value);
            }
        }
        v
    }

    const SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    /// `TestValidatePersistentVolumeClaim` of upstream's validation_test.go.
    #[test]
    fn validate_persistent_volume_claim_table() {
        let ok = [
            ("good-claim", base()),
            (
                "good-claim with data source",
                with(
                    base(),
                    "dataSource",
                    json!({"kind": "PersistentVolumeClaim", "name": "src"}),
                ),
            ),
            (
                "good-claim with snapshot source",
                with(
                    base(),
                    "dataSource",
                    json!({"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap"}),
                ),
            ),
            (
                "good-claim with selector",
                with(
                    base(),
                    "selector",
                    json!({"matchExpressions": [{"key": "key2", "operator": "Exists"}]}),
                ),
            ),
            (
                "rwop alone",
                with(base(), "accessModes", json!(["ReadWriteOncePod"])),
            ),
            (
                "volume attributes class",
                with(base(), "volumeAttributesClassName", "gold".into()),
            ),
        ];
        for (name, spec) in ok {
            let errs =
                validate_persistent_volume_claim(&claim(spec), ClaimValidationOptions::default());
            assert!(errs.is_empty(), "{name}: {errs}");
        }
        let mut no_ns = claim(base());
        no_ns.metadata.namespace = None;
        let bad: Vec<(&str, PersistentVolumeClaim, String)> = vec![
            (
                "invalid-claim-zero-capacity",
                claim(with(base(), "resources", json!({"requests": {"storage": "0"}}))),
                r#"spec.resources[storage]: Invalid value: "0": must be greater than zero"#.into(),
            ),
            (
                "invalid-label-selector",
                claim(with(base(), "selector", json!({"matchExpressions": [{"key": "key2", "operator": "InvalidOp", "values": ["value1"]}]}))),
                r#"spec.selector.matchExpressions[0].operator: Invalid value: "InvalidOp": not a valid selector operator"#.into(),
            ),
            (
                "invalid-accessmode",
                claim(with(base(), "accessModes", json!(["fakemode"]))),
                r#"spec.accessModes: Unsupported value: "fakemode": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod""#.into(),
            ),
            ("missing-namespace", no_ns, "metadata.namespace: Required value".into()),
            (
                "no-access-modes",
                claim(with(base(), "accessModes", Value::Null)),
                "spec.accessModes: Required value: at least 1 access mode is required".into(),
            ),
            (
                "no-resource-requests",
                claim(with(base(), "resources", Value::Null)),
                "spec.resources[storage]: Required value".into(),
            ),
            (
                "invalid-resource-requests",
                claim(with(base(), "resources", json!({"requests": {"memory": "10G"}}))),
                "spec.resources[storage]: Required value".into(),
            ),
            (
                "negative-storage-request",
                claim(with(base(), "resources", json!({"requests": {"storage": "-10G"}}))),
                r#"spec.resources[storage]: Invalid value: "-10G": must be greater than zero"#.into(),
            ),
            (
                "invalid-storage-class-name",
                claim(with(base(), "storageClassName", "-invalid-".into())),
                format!(r#"spec.storageClassName: Invalid value: "-invalid-": {SUBDOMAIN_ERR}"#),
            ),
            (
                "invalid-volume-mode",
                claim(with(base(), "volumeMode", "fakeVolumeMode".into())),
                r#"spec.volumeMode: Unsupported value: "fakeVolumeMode": supported values: "Block", "Filesystem""#.into(),
            ),
            (
                "mismatch-data-source-and-ref",
                claim(with(
                    with(base(), "dataSource", json!({"kind": "PersistentVolumeClaim", "name": "pvc1"})),
                    "dataSourceRef",
                    json!({"kind": "PersistentVolumeClaim", "name": "pvc2"}),
                )),
                "spec: Invalid value: spec.dataSource: must match dataSourceRef".into(),
            ),
            (
                "invalid-data-source-kind",
                claim(with(base(), "dataSource", json!({"kind": "Secret", "name": "s"}))),
                r#"spec.dataSource: Invalid value: "Secret": must be 'PersistentVolumeClaim' when referencing the default apiGroup"#.into(),
            ),
            (
                "missing-data-source-name",
                claim(with(base(), "dataSource", json!({"kind": "PersistentVolumeClaim", "name": ""}))),
                "spec.dataSource.name: Required value".into(),
            ),
            (
                "data source with namespaced ref",
                claim(with(
                    with(base(), "dataSource", json!({"kind": "PersistentVolumeClaim", "name": "pvc1"})),
                    "dataSourceRef",
                    json!({"kind": "PersistentVolumeClaim", "name": "pvc1", "namespace": "other"}),
                )),
                "spec: Invalid value: spec.dataSource: may not be specified when dataSourceRef.namespace is specified".into(),
            ),
            (
                "invalid-rwop-with-other-mode",
                claim(with(base(), "accessModes", json!(["ReadWriteOncePod", "ReadWriteOnce"]))),
                "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes".into(),
            ),
        ];
        for (name, pvc, want) in bad {
            assert_eq!(
                validate_persistent_volume_claim(&pvc, ClaimValidationOptions::default())
                    .to_string(),
                want,
                "{name}"
            );
        }
    }

    fn bound(mut pvc: PersistentVolumeClaim, capacity: &str) -> PersistentVolumeClaim {
        pvc.status = Some(
            serde_json::from_value(json!({"phase": "Bound", "capacity": {"storage": capacity}}))
                .expect("status"),
        );
        pvc
    }

    /// `TestValidatePersistentVolumeClaimUpdate` of upstream's validation_test.go.
    #[test]
    fn validate_persistent_volume_claim_update_table() {
        let old = bound(
            claim(with(base(), "volumeAttributesClassName", "gold".into())),
            "10G",
        );
        let unbound_old = claim(with(base(), "storageClassName", Value::Null));
        let opts = ClaimValidationOptions::default();
        let ok: Vec<(&str, PersistentVolumeClaim, &PersistentVolumeClaim)> = vec![
            ("no change", old.clone(), &old),
            (
                "resize up when bound",
                bound(
                    claim(with(
                        with(base(), "volumeAttributesClassName", "gold".into()),
                        "resources",
                        json!({"requests": {"storage": "15G"}}),
                    )),
                    "10G",
                ),
                &old,
            ),
            (
                "volumeAttributesClassName change",
                bound(
                    claim(with(base(), "volumeAttributesClassName", "silver".into())),
                    "10G",
                ),
                &old,
            ),
            (
                "volumeName set once",
                claim(with(
                    with(base(), "storageClassName", Value::Null),
                    "volumeName",
                    "pv1".into(),
                )),
                &unbound_old,
            ),
            ("storage class set from nil", claim(base()), &unbound_old),
        ];
        for (name, new, old) in ok {
            let errs = validate_persistent_volume_claim_update(&new, old, opts);
            assert!(errs.is_empty(), "{name}: {errs}");
        }

        let changed_modes = bound(
            claim(with(
                with(base(), "volumeAttributesClassName", "gold".into()),
                "accessModes",
                json!(["ReadWriteOnce"]),
            )),
            "10G",
        );
        let errs = validate_persistent_volume_claim_update(&changed_modes, &old, opts);
        assert_eq!(errs.len(), 1);
        assert!(
            errs.to_string()
                .starts_with(&format!("spec: Forbidden: {SPEC_IMMUTABLE}\n")),
            "{errs}"
        );

        let shrink = bound(
            claim(with(
                with(base(), "volumeAttributesClassName", "gold".into()),
                "resources",
                json!({"requests": {"storage": "5G"}}),
            )),
            "10G",
        );
        assert_eq!(
            validate_persistent_volume_claim_update(&shrink, &old, opts).to_string(),
            "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"
        );
        let mut grown = old.clone();
        grown.spec = claim(with(
            with(base(), "volumeAttributesClassName", "gold".into()),
            "resources",
            json!({"requests": {"storage": "20G"}}),
        ))
        .spec;
        let recover = bound(
            claim(with(
                with(base(), "volumeAttributesClassName", "gold".into()),
                "resources",
                json!({"requests": {"storage": "15G"}}),
            )),
            "10G",
        );
        assert!(
            validate_persistent_volume_claim_update(&recover, &grown, opts).is_empty(),
            "shrinking above status.capacity recovers from a failed expansion"
        );
        let block = bound(
            claim(with(
                with(base(), "volumeAttributesClassName", "gold".into()),
                "volumeMode",
                "Block".into(),
            )),
            "10G",
        );
        let errs = validate_persistent_volume_claim_update(&block, &old, opts);
        assert!(
            errs.iter()
                .any(|e| e.to_string()
                    == r#"volumeMode: Invalid value: "Block": field is immutable"#),
            "{errs}"
        );
        let removed = bound(claim(base()), "10G");
        assert_eq!(
            validate_persistent_volume_claim_update(&removed, &old, opts).to_string(),
            "spec.volumeAttributesClassName: Forbidden: update from non-nil value to nil is forbidden"
        );
    }

    /// The beta storage-class annotation cases of upstream's
    /// `TestValidatePersistentVolumeClaimUpdate`.
    #[test]
    fn storage_class_annotation_upgrade() {
        let annotated = |class: Option<&str>, annotation: Option<&str>| {
            let mut c = claim(with(
                base(),
                "storageClassName",
                class.map_or(Value::Null, Value::from),
            ));
            c.metadata.annotations = annotation
                .map(|a| [(BETA_STORAGE_CLASS_ANNOTATION.to_owned(), a.to_owned())].into());
            c
        };
        let opts = ClaimValidationOptions::default();
        let old = annotated(None, Some("foo"));
        let upgraded = annotated(Some("foo"), Some("foo"));
        assert!(validate_persistent_volume_claim_update(&upgraded, &old, opts).is_empty());
        let upgraded_without_annotation = annotated(Some("foo"), None);
        assert_eq!(
            validate_persistent_volume_claim_update(&upgraded_without_annotation, &old, opts)
                .to_string(),
            "",
            "the annotation may be dropped when the field takes its value"
        );
        let other_class = annotated(Some("bar"), Some("foo"));
        let errs = validate_persistent_volume_claim_update(&other_class, &old, opts);
        assert!(
            errs.to_string()
                .starts_with(&format!("spec: Forbidden: {SPEC_IMMUTABLE}")),
            "{errs}"
        );
        let changed_annotation = annotated(None, Some("bar"));
        assert_eq!(
            validate_persistent_volume_claim_update(&changed_annotation, &old, opts).to_string(),
            r#"metadata.annotations.volume.beta.kubernetes.io/storage-class: Invalid value: "bar": field is immutable"#
        );
    }

    #[test]
    fn status_update_rules() {
        let old = claim(base());
        let mut new = old.clone();
        new.status = Some(
            serde_json::from_value(json!({
                "capacity": {"storage": "-5"},
                "allocatedResources": {"memory": "1G", "storage": "1G"},
                "allocatedResourceStatuses": {"storage": "Bogus"},
            }))
            .expect("status"),
        );
        assert_eq!(
            validate_persistent_volume_claim_status_update(&new, &old).to_string(),
            r#"[status.capacity[storage]: Invalid value: -5: must be a valid resource quantity, status.allocatedResourceStatus: Unsupported value: "storage": supported values: "ControllerResizeInProgress", "ControllerResizeInfeasible", "NodeResizeInProgress", "NodeResizeInfeasible", "NodeResizePending", status.allocatedResources: Unsupported value: "memory": supported values: "storage"]"#
        );
    }

    #[test]
    fn strategy_defaults_normalizes_and_guards_spec() {
        let absent = Absent::default();
        let ctx = Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent: &absent,
        };
        let mut pvc = claim(with(
            with(base(), "volumeMode", Value::Null),
            "dataSource",
            json!({"kind": "PersistentVolumeClaim", "name": "src"}),
        ));
        pvc.metadata.resource_version = None;
        admit_create::<PersistentVolumeClaimStrategy>(&mut pvc, &ctx).expect("valid");
        let spec = pvc.spec.clone().unwrap_or_default();
        assert_eq!(spec.volume_mode.as_deref(), Some("Filesystem"));
        assert_eq!(spec.data_source_ref.map(|r| r.name).as_deref(), Some("src"));
        assert_eq!(
            pvc.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Pending")
        );
        pvc.metadata.resource_version = Some("1".into());
        let mut new = pvc.clone();
        if let Some(s) = new.spec.as_mut() {
            s.storage_class_name = Some("fast".into());
        }
        let err = admit_update::<PersistentVolumeClaimStrategy>(&mut new, &pvc, &ctx)
            .expect_err("immutable");
        assert!(
            err.message().starts_with(&format!(
                r#"PersistentVolumeClaim "foo" is invalid: spec: Forbidden: {SPEC_IMMUTABLE}"#
            )),
            "{}",
            err.message()
        );
    }
}
