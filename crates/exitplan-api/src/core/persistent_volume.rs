//! core/v1 PersistentVolume: defaulting (`SetDefaults_PersistentVolume`),
//! validation (`ValidatePersistentVolume*` of `pkg/apis/core/validation`,
//! with `checkMountOption` of `pkg/volume/validation`) and the registry
//! strategy (`pkg/registry/core/persistentvolume`). Also the access-mode,
//! volume-mode and quantity rules PersistentVolumeClaims share.
//!
//! Every volume source counts toward "exactly one volume type"; the sources
//! users declare by hand — `hostPath`, `local`, `nfs` and `csi` — are also
//! validated field by field. Feature gates are at their v1.37 defaults
//! (`VolumeAttributesClass` on, `MutablePVNodeAffinity` off).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    PersistentVolume, PersistentVolumeSpec, PersistentVolumeStatus, SecretReference,
    VolumeNodeAffinity,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;
use serde_json::Value;

use super::validation::diff::diff;
use super::validation::quantity::Quantity;
use super::validation::scheduling::validate_node_selector;
use super::validation::strings::{validate_dns1123_label, validate_dns1123_subdomain};
use super::validation::volume::validate_no_backsteps;
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::generic::{before_create_scoped, validate_common_fields_scoped};
use crate::meta::{self, FIELD_IMMUTABLE, NameRule};
use crate::render;
use crate::strategy::{Context, Strategy};

/// Access modes a volume or claim may name, sorted as upstream lists them.
pub const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
/// Reclaim policies of a PersistentVolume, sorted.
pub const RECLAIM_POLICIES: [&str; 3] = ["Delete", "Recycle", "Retain"];
/// Volume modes, sorted.
pub const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];
/// `isNotPositiveErrorMsg`.
pub const IS_NOT_POSITIVE: &str = "must be greater than zero";
/// The annotation older clients set mount options with.
pub const MOUNT_OPTION_ANNOTATION: &str = "volume.beta.kubernetes.io/mount-options";
/// `Pending`, the phase of a new volume or claim.
pub const PHASE_PENDING: &str = "Pending";

/// The access-mode rules of a volume or claim spec: every mode supported,
/// `ReadWriteOncePod` alone.
pub fn validate_access_modes(modes: &[String], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let (mut rwop, mut other) = (false, false);
    for mode in modes {
        let supported = ACCESS_MODES.contains(&mode.as_str());
        if !supported {
            errs.push(Error::not_supported(path, mode.as_str(), &ACCESS_MODES));
        }
        if mode == "ReadWriteOncePod" {
            rwop = true;
        } else if supported {
            other = true;
        }
    }
    if rwop && other {
        errs.push(Error::forbidden(
            path,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    errs
}

/// A quantity as validation sees it (malformed ones were refused at decode).
pub(crate) fn quantity(q: &WireQuantity) -> Quantity {
    Quantity::parse(q.0.trim()).unwrap_or_else(|_| Quantity::zero())
}

/// `ValidatePositiveQuantityValue`: greater than zero.
pub fn validate_positive_quantity(q: &Quantity, path: &Path) -> ErrorList {
    if *q <= Quantity::zero() {
        ErrorList(vec![Error::invalid(path, q.to_string(), IS_NOT_POSITIVE)])
    } else {
        ErrorList::new()
    }
}

/// `validateBasicResource`: `Value()` (rounded up) not below zero.
pub fn validate_basic_resource(q: &Quantity, path: &Path) -> ErrorList {
    let minus_one = Quantity::parse("-1").unwrap_or_else(|_| Quantity::zero());
    if *q <= minus_one {
        let value = q.value().and_then(|v| i64::try_from(v).ok()).unwrap_or(-1);
        ErrorList(vec![Error::invalid(
            path,
            value,
            "must be a valid resource quantity",
        )])
    } else {
        ErrorList::new()
    }
}

/// `ValidateClassName` (a DNS subdomain), errors at `path`.
pub fn validate_class_name(name: &str, path: &Path) -> ErrorList {
    formats::is_dns1123_subdomain(name)
        .into_iter()
        .map(|m| Error::invalid(path, name, m))
        .collect()
}

fn required_if_empty(value: &str, path: &Path) -> ErrorList {
    if value.is_empty() {
        ErrorList(vec![Error::required(path, "")])
    } else {
        ErrorList::new()
    }
}

const HOST_PATH_TYPES: &[&str] = &[
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
];

/// `ValidateCSIDriverName`: required, at most 63 characters, a DNS subdomain
/// once lowercased.
pub fn validate_csi_driver_name(driver: &str, path: &Path) -> ErrorList {
    let mut errs = required_if_empty(driver, path);
    if driver.len() > 63 {
        errs.push(Error::too_long(path, 63));
    }
    for m in formats::is_dns1123_subdomain(&driver.to_lowercase()) {
        errs.push(Error::invalid(path, driver, m));
    }
    errs
}

/// `validatePVSecretReference`: a name (DNS subdomain) and a namespace
/// (DNS label), both required.
fn validate_pv_secret_reference(secret: &SecretReference, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let name = secret.name.as_deref().unwrap_or_default();
    if name.is_empty() {
        errs.push(Error::required(&path.child("name"), ""));
    } else {
        errs.append(validate_dns1123_subdomain(&path.child("name"), name));
    }
    let ns = secret.namespace.as_deref().unwrap_or_default();
    if ns.is_empty() {
        errs.push(Error::required(&path.child("namespace"), ""));
    } else {
        errs.append(validate_dns1123_label(&path.child("namespace"), ns));
    }
    errs
}

/// The sources of a PersistentVolume in upstream's order: the field name
/// used in "more than 1" errors, whether it is set, and its own checks.
fn volume_sources(
    spec: &PersistentVolumeSpec,
    path: &Path,
) -> Vec<(&'static str, bool, ErrorList)> {
    let host_path = spec.host_path.as_ref().map(|h| {
        let p = path.child("hostPath");
        if h.path.is_empty() {
            return ErrorList(vec![Error::required(&p.child("path"), "")]);
        }
        let mut e = validate_no_backsteps(&h.path, &p.child("path"));
        if let Some(t) = h.type_.as_deref()
            && !HOST_PATH_TYPES.contains(&t)
        {
            e.push(Error::not_supported(&p.child("type"), t, HOST_PATH_TYPES));
        }
        e
    });
    let nfs = spec.nfs.as_ref().map(|n| {
        let p = path.child("nfs");
        let mut e = required_if_empty(&n.server, &p.child("server"));
        e.append(required_if_empty(&n.path, &p.child("path")));
        if !n.path.starts_with('/') {
            e.push(Error::invalid(
                &p.child("path"),
                n.path.as_str(),
                "must be an absolute path",
            ));
        }
        e
    });
    let local = spec.local.as_ref().map(|l| {
        let p = path.child("local").child("path");
        if l.path.is_empty() {
            return ErrorList(vec![Error::required(&p, "")]);
        }
        validate_no_backsteps(&l.path, &p)
    });
    let csi = spec.csi.as_ref().map(|c| {
        let p = path.child("csi");
        let mut e = validate_csi_driver_name(&c.driver, &p.child("driver"));
        e.append(required_if_empty(
            &c.volume_handle,
            &p.child("volumeHandle"),
        ));
        for (name, secret) in [
            (
                "controllerPublishSecretRef",
                &c.controller_publish_secret_ref,
            ),
            ("controllerExpandSecretRef", &c.controller_expand_secret_ref),
            ("nodePublishSecretRef", &c.node_publish_secret_ref),
            ("nodeExpandSecretRef", &c.node_expand_secret_ref),
        ] {
            if let Some(secret) = secret {
                e.append(validate_pv_secret_reference(secret, &p.child(name)));
            }
        }
        e
    });
    let set = |present: bool| (present, ErrorList::new());
    let entries: Vec<(&'static str, (bool, ErrorList))> = vec![
        (
            "hostPath",
            host_path.map_or((false, ErrorList::new()), |e| (true, e)),
        ),
        ("gcePersistentDisk", set(spec.gce_persistent_disk.is_some())),
        (
            "awsElasticBlockStore",
            set(spec.aws_elastic_block_store.is_some()),
        ),
        ("glusterfs", set(spec.glusterfs.is_some())),
        ("flocker", set(spec.flocker.is_some())),
        ("nfs", nfs.map_or((false, ErrorList::new()), |e| (true, e))),
        ("rbd", set(spec.rbd.is_some())),
        ("quobyte", set(spec.quobyte.is_some())),
        ("cephFS", set(spec.cephfs.is_some())),
        ("iscsi", set(spec.iscsi.is_some())),
        ("cinder", set(spec.cinder.is_some())),
        ("fc", set(spec.fc.is_some())),
        ("flexVolume", set(spec.flex_volume.is_some())),
        ("azureFile", set(spec.azure_file.is_some())),
        ("vsphereVolume", set(spec.vsphere_volume.is_some())),
        (
            "photonPersistentDisk",
            set(spec.photon_persistent_disk.is_some()),
        ),
        ("portworxVolume", set(spec.portworx_volume.is_some())),
        ("azureDisk", set(spec.azure_disk.is_some())),
        ("scaleIO", set(spec.scale_io.is_some())),
        (
            "local",
            local.map_or((false, ErrorList::new()), |e| (true, e)),
        ),
        ("storageos", set(spec.storageos.is_some())),
        ("csi", csi.map_or((false, ErrorList::new()), |e| (true, e))),
    ];
    entries
        .into_iter()
        .map(|(name, (present, errs))| (name, present, errs))
        .collect()
}

/// `validateVolumeNodeAffinity`: `required` must be set and valid.
fn validate_volume_node_affinity(na: &VolumeNodeAffinity, path: &Path) -> ErrorList {
    match &na.required {
        Some(r) => validate_node_selector(r, &path.child("required")),
        None => ErrorList(vec![Error::required(
            &path.child("required"),
            "must specify required node constraints",
        )]),
    }
}

/// `ValidatePersistentVolumeSpec` for a PersistentVolume object (not an
/// inline volume): access modes, capacity (only `storage`, positive),
/// reclaim policy, node affinity, exactly one volume source, class names
/// and volume mode.
pub fn validate_persistent_volume_spec(spec: &PersistentVolumeSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let modes = spec.access_modes.as_deref().unwrap_or_default();
    if modes.is_empty() {
        errs.push(Error::required(&path.child("accessModes"), ""));
    }
    errs.append(validate_access_modes(modes, &path.child("accessModes")));

    let cap_path = path.child("capacity");
    let capacity = spec.capacity.clone().unwrap_or_default();
    let shown_capacity = spec.capacity.as_ref().map_or(BadValue::Null, |c| {
        let shown: BTreeMap<String, String> = c
            .iter()
            .map(|(k, v)| (k.clone(), quantity(v).to_string()))
            .collect();
        BadValue::Json(render::string_map(&shown))
    });
    if capacity.is_empty() {
        errs.push(Error::required(&cap_path, ""));
    }
    if !capacity.contains_key("storage") || capacity.len() > 1 {
        errs.push(Error::not_supported(
            &cap_path,
            shown_capacity,
            &["storage"],
        ));
    }
    for (name, q) in &capacity {
        let q = quantity(q);
        errs.append(validate_basic_resource(&q, &cap_path.key(name)));
        errs.append(validate_positive_quantity(&q, &cap_path.key(name)));
    }

    let policy = spec
        .persistent_volume_reclaim_policy
        .as_deref()
        .unwrap_or_default();
    if !policy.is_empty() && !RECLAIM_POLICIES.contains(&policy) {
        errs.push(Error::not_supported(
            &path.child("persistentVolumeReclaimPolicy"),
            policy,
            &RECLAIM_POLICIES,
        ));
    }

    let mut node_affinity = false;
    if let Some(na) = &spec.node_affinity {
        node_affinity = true;
        errs.append(validate_volume_node_affinity(
            na,
            &path.child("nodeAffinity"),
        ));
    }

    let mut count = 0;
    for (name, present, source_errs) in volume_sources(spec, path) {
        if !present {
            continue;
        }
        // flexVolume is counted without the "more than 1" check, as upstream.
        if count > 0 && name != "flexVolume" {
            errs.push(Error::forbidden(
                &path.child(name),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        errs.append(source_errs);
        if name == "local" && !node_affinity {
            errs.push(Error::required(
                &path.child("nodeAffinity"),
                "Local volume requires node affinity",
            ));
        }
    }
    if count == 0 {
        errs.push(Error::required(path, "must specify a volume type"));
    }

    if let Some(h) = &spec.host_path
        && clean_is_root(&h.path)
        && policy == "Recycle"
    {
        errs.push(Error::forbidden(
            &path.child("persistentVolumeReclaimPolicy"),
            "may not be 'recycle' for a hostPath mount of '/'",
        ));
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
    if let Some(vac) = spec.volume_attributes_class_name.as_deref() {
        let p = path.child("volumeAttributesClassName");
        if vac.is_empty() {
            errs.push(Error::required(&p, "an empty string is disallowed"));
        } else {
            errs.append(validate_class_name(vac, &p));
        }
        if spec.csi.is_none() {
            errs.push(Error::required(
                &path.child("csi"),
                "has to be specified when using volumeAttributesClassName",
            ));
        }
    }
    errs
}

/// Whether Go's `path.Clean(p) == "/"`.
fn clean_is_root(p: &str) -> bool {
    if !p.starts_with('/') {
        return false;
    }
    let mut depth = 0usize;
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => depth = depth.saturating_sub(1),
            _ => depth += 1,
        }
    }
    depth == 0
}

/// `checkMountOption` (`pkg/volume/validation`): mount options by
/// annotation only for the sources that support them.
pub fn check_mount_option(pv: &PersistentVolume) -> ErrorList {
    let s = pv.spec.clone().unwrap_or_default();
    let supports = s.gce_persistent_disk.is_some()
        || s.aws_elastic_block_store.is_some()
        || s.glusterfs.is_some()
        || s.nfs.is_some()
        || s.rbd.is_some()
        || s.quobyte.is_some()
        || s.iscsi.is_some()
        || s.cinder.is_some()
        || s.cephfs.is_some()
        || s.azure_file.is_some()
        || s.vsphere_volume.is_some()
        || s.azure_disk.is_some()
        || s.photon_persistent_disk.is_some();
    let annotated = pv
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(MOUNT_OPTION_ANNOTATION));
    if supports || !annotated {
        return ErrorList::new();
    }
    ErrorList(vec![Error::forbidden(
        &Path::new("metadata")
            .child("annotations")
            .child(MOUNT_OPTION_ANNOTATION),
        "may not specify mount options for this volume type",
    )])
}

/// `ValidatePersistentVolume`: metadata (cluster-scoped, a DNS subdomain)
/// and the spec.
pub fn validate_persistent_volume(pv: &PersistentVolume) -> ErrorList {
    let mut errs = meta::validate_object_meta(&pv.metadata, false, NameRule::Subdomain);
    errs.append(validate_persistent_volume_spec(
        &pv.spec.clone().unwrap_or_default(),
        &Path::new("spec"),
    ));
    errs
}

/// What the strategy checks of a new or updated volume:
/// [`validate_persistent_volume`], then [`check_mount_option`].
fn validate_with_plugins(pv: &PersistentVolume) -> ErrorList {
    let mut errs = validate_persistent_volume(pv);
    errs.append(check_mount_option(pv));
    errs
}

const SOURCE_FIELDS: &[&str] = &[
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "hostPath",
    "glusterfs",
    "nfs",
    "rbd",
    "iscsi",
    "cinder",
    "cephfs",
    "fc",
    "flocker",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
    "storageos",
    "csi",
];

/// The `PersistentVolumeSource` part of a spec, as JSON.
fn source_of(spec: &PersistentVolumeSpec) -> Value {
    let Ok(Value::Object(all)) = serde_json::to_value(spec) else {
        return Value::Null;
    };
    Value::Object(
        all.into_iter()
            .filter(|(k, _)| SOURCE_FIELDS.contains(&k.as_str()))
            .collect(),
    )
}

/// `ValidatePersistentVolumeUpdate` (the new object's rules come first):
/// the volume source is immutable (a CSI `controllerExpandSecretRef` may be
/// added), so are `volumeMode` and a set `nodeAffinity`; a
/// `volumeAttributesClassName` may not be removed.
pub fn validate_persistent_volume_update(
    new: &PersistentVolume,
    old: &PersistentVolume,
) -> ErrorList {
    let mut errs = validate_persistent_volume(new);
    let new_spec = new.spec.clone().unwrap_or_default();
    let old_spec = old.spec.clone().unwrap_or_default();
    let mut compared = new_spec.clone();
    if let (Some(o), Some(n)) = (&old_spec.csi, &mut compared.csi)
        && o.controller_expand_secret_ref.is_none()
    {
        n.controller_expand_secret_ref = None;
    }
    let (o, n) = (source_of(&old_spec), source_of(&compared));
    if o != n {
        errs.push(Error::forbidden(
            &Path::new("spec").child("persistentvolumesource"),
            format!(
                "spec.persistentvolumesource is immutable after creation\n{}",
                diff("core.PersistentVolumeSource", &o, &n)
            ),
        ));
    }
    if new_spec.volume_mode != old_spec.volume_mode {
        errs.push(Error::invalid(
            &Path::new("volumeMode"),
            BadValue::from(new_spec.volume_mode.as_deref()),
            FIELD_IMMUTABLE,
        ));
    }
    if old_spec.node_affinity.is_some()
        && !semantic_eq(&new_spec.node_affinity, &old_spec.node_affinity)
    {
        let shown = new_spec
            .node_affinity
            .as_ref()
            .map_or(BadValue::Null, |na| BadValue::Json(render::json(na)));
        errs.push(Error::invalid(
            &Path::new("nodeAffinity"),
            shown,
            FIELD_IMMUTABLE,
        ));
    }
    if old_spec.volume_attributes_class_name.is_some()
        && new_spec.volume_attributes_class_name.is_none()
    {
        errs.push(Error::forbidden(
            &Path::new("spec").child("volumeAttributesClassName"),
            "update from non-nil value to nil is forbidden",
        ));
    }
    errs
}

/// `ValidatePersistentVolumeStatusUpdate`: metadata rules only.
pub fn validate_persistent_volume_status_update(
    new: &PersistentVolume,
    old: &PersistentVolume,
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
    errs
}

/// `status.lastPhaseTransitionTime`, which upstream's strategy stamps from
/// its clock: on create (`old` = `None`) always; on a `/status` update when
/// the phase changed and the client did not set a new time itself. The
/// strategy has no clock, so the server calls this after
/// [`crate::strategy::admit_create`] / [`crate::strategy::admit_status_update`].
pub fn stamp_last_phase_transition(
    new: &mut PersistentVolume,
    old: Option<&PersistentVolume>,
    now: jiff::Timestamp,
) {
    let status = new
        .status
        .get_or_insert_with(PersistentVolumeStatus::default);
    let stamp = match old {
        None => true,
        Some(o) => {
            let o = o.status.clone().unwrap_or_default();
            o.phase != status.phase
                && (status.last_phase_transition_time.is_none()
                    || status.last_phase_transition_time == o.last_phase_transition_time)
        }
    };
    if stamp {
        status.last_phase_transition_time = Some(crate::time::mtime(now));
    }
}

impl crate::quantities::Quantities for PersistentVolume {
    fn visit_quantities<'a>(&'a self, f: &mut dyn FnMut(&'a WireQuantity)) {
        for q in self
            .spec
            .iter()
            .flat_map(|s| s.capacity.iter().flat_map(BTreeMap::values))
        {
            f(q);
        }
    }
}

/// Create, update and status-update rules of core/v1 PersistentVolumes
/// (cluster-scoped). `status.lastPhaseTransitionTime` is not stamped: the
/// strategy has no clock (the server may set it).
#[derive(Clone, Copy, Debug, Default)]
pub struct PersistentVolumeStrategy;

impl Strategy for PersistentVolumeStrategy {
    type Object = PersistentVolume;
    const NAMESPACED: bool = false;

    /// `SetDefaults_PersistentVolume`: phase `Pending`, reclaim policy
    /// `Retain`, volume mode `Filesystem`; a hostPath `type` of `""`.
    fn default(obj: &mut PersistentVolume) {
        let status = obj
            .status
            .get_or_insert_with(PersistentVolumeStatus::default);
        if status.phase.as_deref().unwrap_or_default().is_empty() {
            status.phase = Some(PHASE_PENDING.to_owned());
        }
        let spec = obj.spec.get_or_insert_with(PersistentVolumeSpec::default);
        if spec
            .persistent_volume_reclaim_policy
            .as_deref()
            .unwrap_or_default()
            .is_empty()
        {
            spec.persistent_volume_reclaim_policy = Some("Retain".to_owned());
        }
        spec.volume_mode
            .get_or_insert_with(|| "Filesystem".to_owned());
        if let Some(h) = &mut spec.host_path {
            h.type_.get_or_insert_with(String::new);
        }
    }

    /// Status reset to phase `Pending`.
    fn prepare_for_create(obj: &mut PersistentVolume) {
        obj.status = Some(PersistentVolumeStatus {
            phase: Some(PHASE_PENDING.to_owned()),
            ..PersistentVolumeStatus::default()
        });
    }

    fn validate_create(obj: &PersistentVolume, _ctx: &Context<'_>) -> ErrorList {
        before_create_scoped(validate_with_plugins(obj), &obj.metadata, false)
    }

    /// Status kept.
    fn prepare_for_update(new: &mut PersistentVolume, old: &PersistentVolume) {
        new.status.clone_from(&old.status);
    }

    /// The new object's rules, then the update rules (which repeat them, as
    /// upstream's strategy does).
    fn validate_update(
        new: &PersistentVolume,
        old: &PersistentVolume,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, false);
        errs.append(validate_with_plugins(new));
        errs.append(validate_persistent_volume_update(new, old));
        errs
    }

    /// Spec kept.
    fn prepare_for_status_update(new: &mut PersistentVolume, old: &PersistentVolume) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(
        new: &PersistentVolume,
        old: &PersistentVolume,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, false);
        errs.append(validate_persistent_volume_status_update(new, old));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::{admit_create, admit_update};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pv(name: &str, spec: Value) -> PersistentVolume {
        let mut v: PersistentVolume = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "resourceVersion": "1"},
            "spec": spec,
        }))
        .expect("pv");
        v.metadata.namespace = None;
        v
    }

    fn host(path: &str) -> Value {
        serde_json::json!({
            "capacity": {"storage": "10G"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": path, "type": ""},
            "persistentVolumeReclaimPolicy": "Retain",
        })
    }

    fn with(mut base: Value, key: &str, value: Value) -> Value {
        if let Some(m) = base.as_object_mut() {
            if value.is_null() {
                m.remove(key);
            } else {
                m.insert(key.to_owned(), value);
            }
        }
        base
    }

    /// `TestValidatePersistentVolumes` of upstream's validation_test.go.
    #[test]
    fn validate_persistent_volumes_table() {
        let good = [
            ("good-volume", host("/foo")),
            (
                "good-volume-with-storage-class",
                with(host("/foo"), "storageClassName", "valid".into()),
            ),
            (
                "good-volume-with-retain-policy",
                with(
                    host("/foo"),
                    "persistentVolumeReclaimPolicy",
                    "Retain".into(),
                ),
            ),
            (
                "good-local",
                serde_json::json!({
                    "capacity": {"storage": "10G"},
                    "accessModes": ["ReadWriteOnce"],
                    "local": {"path": "/foo"},
                    "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "test-label-key", "operator": "In", "values": ["test-label-value"]}]}]}},
                }),
            ),
            (
                "good-csi",
                serde_json::json!({
                    "capacity": {"storage": "10G"},
                    "accessModes": ["ReadWriteOnce"],
                    "csi": {"driver": "test-driver", "volumeHandle": "test-123"},
                    "volumeAttributesClassName": "valid",
                }),
            ),
            (
                "good-nfs",
                serde_json::json!({
                    "capacity": {"storage": "10G"},
                    "accessModes": ["ReadWriteMany"],
                    "nfs": {"server": "nfs.example.com", "path": "/exports"},
                }),
            ),
        ];
        for (name, spec) in good {
            let errs = validate_persistent_volume(&pv(name, spec));
            assert!(errs.is_empty(), "{name}: {errs}");
        }

        let mut namespaced = pv("foo", host("/foo"));
        namespaced.metadata.namespace = Some("unexpected-namespace".into());
        let mut mount_options = pv(
            "foo",
            serde_json::json!({
                "capacity": {"storage": "10G"},
                "accessModes": ["ReadWriteOnce"],
                "local": {"path": "/foo"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Exists"}]}]}},
            }),
        );
        mount_options.metadata.annotations = Some(
            [(MOUNT_OPTION_ANNOTATION.to_owned(), "ro".to_owned())]
                .into_iter()
                .collect(),
        );
        let bad: Vec<(&str, PersistentVolume, &str)> = vec![
            (
                "invalid-accessmode",
                pv(
                    "foo",
                    with(host("/foo"), "accessModes", serde_json::json!(["fakemode"])),
                ),
                r#"spec.accessModes: Unsupported value: "fakemode": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod""#,
            ),
            (
                "invalid-reclaimpolicy",
                pv(
                    "foo",
                    with(
                        host("/foo"),
                        "persistentVolumeReclaimPolicy",
                        "fakeReclaimPolicy".into(),
                    ),
                ),
                r#"spec.persistentVolumeReclaimPolicy: Unsupported value: "fakeReclaimPolicy": supported values: "Delete", "Recycle", "Retain""#,
            ),
            (
                "unexpected-namespace",
                namespaced,
                "metadata.namespace: Forbidden: not allowed on this type",
            ),
            (
                "missing-volume-source",
                pv(
                    "foo",
                    serde_json::json!({"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"]}),
                ),
                "spec: Required value: must specify a volume type",
            ),
            (
                "bad-name",
                pv("123*Bad(Name", host("/foo")),
                r#"metadata.name: Invalid value: "123*Bad(Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ),
            (
                "missing-name",
                pv("", host("/foo")),
                "metadata.name: Required value: name or generateName is required",
            ),
            (
                "missing-capacity",
                pv("foo", with(host("/foo"), "capacity", Value::Null)),
                r#"[spec.capacity: Required value, spec.capacity: Unsupported value: null: supported values: "storage"]"#,
            ),
            (
                "bad-volume-zero-capacity",
                pv(
                    "foo",
                    with(
                        host("/foo"),
                        "capacity",
                        serde_json::json!({"storage": "0"}),
                    ),
                ),
                r#"spec.capacity[storage]: Invalid value: "0": must be greater than zero"#,
            ),
            (
                "missing-accessmodes",
                pv("foo", with(host("/foo"), "accessModes", Value::Null)),
                "spec.accessModes: Required value",
            ),
            (
                "too-many-sources",
                pv(
                    "foo",
                    with(
                        host("/foo"),
                        "gcePersistentDisk",
                        serde_json::json!({"pdName": "foo", "fsType": "ext4"}),
                    ),
                ),
                "spec.gcePersistentDisk: Forbidden: may not specify more than 1 volume type",
            ),
            (
                "host mount of / with recycle reclaim policy",
                pv(
                    "foo",
                    with(host("/"), "persistentVolumeReclaimPolicy", "Recycle".into()),
                ),
                "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
            ),
            (
                "host mount of / with recycle reclaim policy 2",
                pv(
                    "foo",
                    with(
                        host("/a/.."),
                        "persistentVolumeReclaimPolicy",
                        "Recycle".into(),
                    ),
                ),
                "[spec.hostPath.path: Invalid value: \"/a/..\": must not contain '..', spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/']",
            ),
            (
                "invalid-storage-class-name",
                pv(
                    "foo",
                    with(host("/foo"), "storageClassName", "-invalid-".into()),
                ),
                r#"spec.storageClassName: Invalid value: "-invalid-": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ),
            (
                "bad-hostpath-volume-backsteps",
                pv("foo", host("/foo/..")),
                r#"spec.hostPath.path: Invalid value: "/foo/..": must not contain '..'"#,
            ),
            (
                "volume-node-affinity-missing-for-local",
                pv(
                    "foo",
                    serde_json::json!({"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"], "local": {"path": "/foo"}}),
                ),
                "spec.nodeAffinity: Required value: Local volume requires node affinity",
            ),
            (
                "volume-node-affinity-required-missing",
                pv(
                    "foo",
                    with(host("/foo"), "nodeAffinity", serde_json::json!({})),
                ),
                "spec.nodeAffinity.required: Required value: must specify required node constraints",
            ),
            (
                "invalid-rwop-with-other-mode",
                pv(
                    "foo",
                    with(
                        host("/foo"),
                        "accessModes",
                        serde_json::json!(["ReadWriteOncePod", "ReadWriteMany"]),
                    ),
                ),
                "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
            ),
            (
                "volume-attributes-class-without-csi",
                pv(
                    "foo",
                    with(host("/foo"), "volumeAttributesClassName", "vac".into()),
                ),
                "spec.csi: Required value: has to be specified when using volumeAttributesClassName",
            ),
            (
                "nfs-relative-path",
                pv(
                    "foo",
                    serde_json::json!({"capacity": {"storage": "1"}, "accessModes": ["ReadWriteMany"], "nfs": {"server": "", "path": "exports"}}),
                ),
                r#"[spec.nfs.server: Required value, spec.nfs.path: Invalid value: "exports": must be an absolute path]"#,
            ),
            (
                "csi-missing-handle",
                pv(
                    "foo",
                    serde_json::json!({"capacity": {"storage": "1"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "", "volumeHandle": ""}}),
                ),
                "[spec.csi.driver: Required value, spec.csi.driver: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.csi.volumeHandle: Required value]",
            ),
            (
                "csi secret reference without namespace",
                pv(
                    "foo",
                    serde_json::json!({"capacity": {"storage": "1"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "d.example.com", "volumeHandle": "h", "nodePublishSecretRef": {"name": "s"}}}),
                ),
                "spec.csi.nodePublishSecretRef.namespace: Required value",
            ),
            (
                "mount options on a local volume",
                mount_options,
                "metadata.annotations.volume.beta.kubernetes.io/mount-options: Forbidden: may not specify mount options for this volume type",
            ),
        ];
        for (name, v, want) in bad {
            assert_eq!(validate_with_plugins(&v).to_string(), want, "{name}");
        }
    }

    /// `TestValidatePersistentVolumeSourceUpdate` / `TestValidatePVVolumeMode`.
    #[test]
    fn validate_persistent_volume_update_table() {
        let csi = |extra: Value| {
            let mut c = serde_json::json!({"driver": "come.example.csi", "volumeHandle": "h"});
            if let (Some(m), Some(e)) = (c.as_object_mut(), extra.as_object()) {
                m.extend(e.clone());
            }
            pv(
                "foo",
                serde_json::json!({"capacity": {"storage": "1"}, "accessModes": ["ReadWriteOnce"], "csi": c, "volumeMode": "Filesystem"}),
            )
        };
        let old = csi(serde_json::json!({}));
        let ok = [
            ("no change", old.clone()),
            (
                "controllerExpandSecretRef added",
                csi(
                    serde_json::json!({"controllerExpandSecretRef": {"name": "s", "namespace": "ns"}}),
                ),
            ),
        ];
        for (name, new) in ok {
            let errs = validate_persistent_volume_update(&new, &old);
            assert!(errs.is_empty(), "{name}: {errs}");
        }
        let with_publish =
            csi(serde_json::json!({"nodePublishSecretRef": {"name": "s", "namespace": "ns"}}));
        let got = validate_persistent_volume_update(&with_publish, &old);
        assert_eq!(got.len(), 1);
        assert!(
            got.to_string()
                .starts_with("spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n"),
            "{got}"
        );
        let mut block = old.clone();
        if let Some(s) = block.spec.as_mut() {
            s.volume_mode = Some("Block".into());
        }
        assert_eq!(
            validate_persistent_volume_update(&block, &old).to_string(),
            r#"volumeMode: Invalid value: "Block": field is immutable"#
        );
    }

    #[test]
    fn last_phase_transition_is_stamped_on_create_and_phase_change() {
        let now: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().expect("time");
        let later: jiff::Timestamp = "2026-01-01T01:00:00Z".parse().expect("time");
        let mut v = pv("pv0", host("/data"));
        v.status = Some(PersistentVolumeStatus {
            phase: Some(PHASE_PENDING.into()),
            ..Default::default()
        });
        stamp_last_phase_transition(&mut v, None, now);
        let at = |v: &PersistentVolume| {
            v.status
                .as_ref()
                .and_then(|s| s.last_phase_transition_time.as_ref())
                .map(|t| t.0.as_second())
        };
        assert_eq!(at(&v), Some(now.as_second()));
        let mut same = v.clone();
        stamp_last_phase_transition(&mut same, Some(&v), later);
        assert_eq!(at(&same), Some(now.as_second()), "phase unchanged");
        let mut bound = v.clone();
        if let Some(s) = bound.status.as_mut() {
            s.phase = Some("Bound".into());
        }
        stamp_last_phase_transition(&mut bound, Some(&v), later);
        assert_eq!(at(&bound), Some(later.as_second()));
    }

    #[test]
    fn strategy_defaults_and_keeps_status() {
        let absent = Absent::default();
        let ctx = Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent: &absent,
        };
        let mut v = pv(
            "pv0",
            serde_json::json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}),
        );
        v.metadata = ObjectMeta {
            name: Some("pv0".into()),
            ..ObjectMeta::default()
        };
        admit_create::<PersistentVolumeStrategy>(&mut v, &ctx).expect("valid");
        let spec = v.spec.clone().unwrap_or_default();
        assert_eq!(
            spec.persistent_volume_reclaim_policy.as_deref(),
            Some("Retain")
        );
        assert_eq!(spec.volume_mode.as_deref(), Some("Filesystem"));
        assert_eq!(
            v.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some(PHASE_PENDING)
        );
        v.metadata.resource_version = Some("1".into());
        let mut new = v.clone();
        new.status = Some(PersistentVolumeStatus {
            phase: Some("Bound".into()),
            ..Default::default()
        });
        admit_update::<PersistentVolumeStrategy>(&mut new, &v, &ctx).expect("valid");
        assert_eq!(
            new.status.and_then(|s| s.phase).as_deref(),
            Some(PHASE_PENDING),
            "an update of the main resource keeps the status"
        );
    }
}
