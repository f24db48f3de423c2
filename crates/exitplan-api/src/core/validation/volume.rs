//! Volumes (`ValidateVolumes`, `validateVolumeSource`), volume mounts
//! (`ValidateVolumeMounts`) and devices (`ValidateVolumeDevices`), and the
//! path rules they share.
//!
//! Every volume source is counted for the one-source rule; the sources
//! pods use in practice (emptyDir, hostPath, secret, configMap,
//! persistentVolumeClaim, downwardAPI, projected, nfs, csi, ephemeral,
//! image, gitRepo) are validated in depth, the legacy in-tree cloud
//! sources only for their required identifiers.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Container, DownwardAPIVolumeFile, KeyToPath, ProjectedVolumeSource, Volume, VolumeDevice,
    VolumeMount,
};

use super::env::{validate_object_field_selector, validate_resource_field_selector};
use super::quantity::Quantity;
use super::strings::validate_dns1123_label;
use crate::field::{Error, ErrorList, Path};
use crate::formats;

/// `fileModeErrorMsg`.
pub const FILE_MODE: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// Downward API fields a volume may project.
pub const VOLUME_FIELD_PATHS: &[&str] = &[
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];

/// What a validated volume is, for the mount and device checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VolumeKind {
    /// Backed by a PVC (claim or generic ephemeral volume).
    pub pvc: bool,
    /// An image volume (no subPath).
    pub image: bool,
}

/// The valid volumes by name (`map[string]core.VolumeSource`).
pub type Volumes = BTreeMap<String, VolumeKind>;

/// `validateLocalDescendingPath`: relative, no `..` element.
pub fn validate_local_descending_path(target: &str, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if target.starts_with('/') {
        errs.push(Error::invalid(path, target, "must be a relative path"));
    }
    errs.append(validate_no_backsteps(target, path));
    errs
}

/// `validatePathNoBacksteps`.
pub fn validate_no_backsteps(target: &str, path: &Path) -> ErrorList {
    if target.split('/').any(|p| p == "..") {
        ErrorList(vec![Error::invalid(path, target, "must not contain '..'")])
    } else {
        ErrorList::new()
    }
}

/// `ValidateLocalNonReservedPath`.
pub fn validate_local_non_reserved_path(target: &str, path: &Path) -> ErrorList {
    let mut errs = validate_local_descending_path(target, path);
    if target.starts_with("..") && !target.starts_with("../") {
        errs.push(Error::invalid(path, target, "must not start with '..'"));
    }
    errs
}

fn validate_mode(mode: Option<i32>, path: &Path) -> ErrorList {
    match mode {
        Some(m) if !(0..=0o777).contains(&m) => ErrorList(vec![Error::invalid(path, m, FILE_MODE)]),
        _ => ErrorList::new(),
    }
}

fn validate_key_to_path(kp: &KeyToPath, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if kp.key.is_empty() {
        errs.push(Error::required(&path.child("key"), ""));
    }
    if kp.path.is_empty() {
        errs.push(Error::required(&path.child("path"), ""));
    }
    errs.append(validate_local_non_reserved_path(
        &kp.path,
        &path.child("path"),
    ));
    errs.append(validate_mode(kp.mode, &path.child("mode")));
    errs
}

fn validate_downward_file(f: &DownwardAPIVolumeFile, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if f.path.is_empty() {
        errs.push(Error::required(&path.child("path"), ""));
    }
    errs.append(validate_local_non_reserved_path(
        &f.path,
        &path.child("path"),
    ));
    if let Some(fr) = &f.field_ref {
        errs.append(validate_object_field_selector(
            fr,
            VOLUME_FIELD_PATHS,
            &path.child("fieldRef"),
        ));
        if f.resource_field_ref.is_some() {
            errs.push(Error::invalid(
                path,
                "resource",
                "fieldRef and resourceFieldRef can not be specified simultaneously",
            ));
        }
    } else if let Some(r) = &f.resource_field_ref {
        errs.append(validate_resource_field_selector(
            r,
            true,
            &path.child("resourceFieldRef"),
        ));
    } else {
        errs.push(Error::required(
            path,
            "one of fieldRef and resourceFieldRef is required",
        ));
    }
    errs.append(validate_mode(f.mode, &path.child("mode")));
    errs
}

fn validate_projected(p: &ProjectedVolumeSource, path: &Path) -> ErrorList {
    let mut errs = validate_mode(p.default_mode, &path.child("defaultMode"));
    let mut all_paths = BTreeSet::new();
    for (i, source) in p.sources.iter().flatten().enumerate() {
        let src = path.child("sources").index(i);
        let mut n = 0;
        if let Some(s) = &source.secret {
            n += 1;
            let pp = src.child("secret");
            if s.name.is_empty() {
                errs.push(Error::required(&pp.child("name"), ""));
            }
            for (j, kp) in s.items.iter().flatten().enumerate() {
                errs.append(validate_key_to_path(kp, &pp.child("items").index(j)));
                if !kp.path.is_empty() && !all_paths.insert(kp.path.clone()) {
                    errs.push(Error::invalid(
                        path,
                        s.name.as_str(),
                        "conflicting duplicate paths",
                    ));
                }
            }
        }
        if let Some(c) = &source.config_map {
            n += 1;
            let pp = src.child("configMap");
            if c.name.is_empty() {
                errs.push(Error::required(&pp.child("name"), ""));
            }
            for (j, kp) in c.items.iter().flatten().enumerate() {
                errs.append(validate_key_to_path(kp, &pp.child("items").index(j)));
                if !kp.path.is_empty() && !all_paths.insert(kp.path.clone()) {
                    errs.push(Error::invalid(
                        path,
                        c.name.as_str(),
                        "conflicting duplicate paths",
                    ));
                }
            }
        }
        if let Some(d) = &source.downward_api {
            n += 1;
            let pp = src.child("downwardAPI");
            for f in d.items.iter().flatten() {
                errs.append(validate_downward_file(f, &pp));
                if !f.path.is_empty() && !all_paths.insert(f.path.clone()) {
                    errs.push(Error::invalid(
                        path,
                        f.path.as_str(),
                        "conflicting duplicate paths",
                    ));
                }
            }
        }
        if let Some(t) = &source.service_account_token {
            n += 1;
            let pp = src.child("serviceAccountToken");
            let exp = t.expiration_seconds.unwrap_or(0);
            if exp < 600 {
                errs.push(Error::invalid(
                    &pp.child("expirationSeconds"),
                    exp,
                    "may not specify a duration less than 10 minutes",
                ));
            }
            if exp > 1 << 32 {
                errs.push(Error::invalid(
                    &pp.child("expirationSeconds"),
                    exp,
                    "may not specify a duration larger than 2^32 seconds",
                ));
            }
            if t.path.is_empty() {
                errs.push(Error::required(&path.child("path"), ""));
            } else {
                errs.append(validate_local_non_reserved_path(
                    &t.path,
                    &path.child("path"),
                ));
            }
        }
        if source.cluster_trust_bundle.is_some() {
            n += 1;
        }
        if source.pod_certificate.is_some() {
            n += 1;
        }
        if n > 1 {
            errs.push(Error::forbidden(
                &src,
                "may not specify more than 1 volume type per source",
            ));
        }
    }
    errs
}

fn required_if_empty(value: &str, path: &Path) -> ErrorList {
    if value.is_empty() {
        ErrorList(vec![Error::required(path, "")])
    } else {
        ErrorList::new()
    }
}

/// `validateVolumeSource`: exactly one source, each valid.
fn validate_volume_source(v: &Volume, path: &Path, pod_name: Option<&str>) -> ErrorList {
    let mut errs = ErrorList::new();
    let n = std::cell::Cell::new(0usize);
    // (field name for the "more than 1" error, set?, deep validation)
    let one = |name: &str, set: bool, errs: &mut ErrorList, check: &dyn Fn() -> ErrorList| {
        if !set {
            return;
        }
        if n.get() > 0 {
            errs.push(Error::forbidden(
                &path.child(name),
                "may not specify more than 1 volume type",
            ));
        } else {
            n.set(n.get() + 1);
            errs.append(check());
        }
    };
    if let Some(e) = &v.empty_dir {
        n.set(n.get() + 1);
        if e.size_limit
            .as_ref()
            .and_then(|q| Quantity::parse(&q.0).ok())
            .is_some_and(|q| q.is_negative())
        {
            errs.push(Error::forbidden(
                &path.child("emptyDir").child("sizeLimit"),
                "SizeLimit field must be a valid resource quantity",
            ));
        }
    }
    one("hostPath", v.host_path.is_some(), &mut errs, &|| {
        let Some(h) = &v.host_path else {
            return ErrorList::new();
        };
        let p = path.child("hostPath");
        if h.path.is_empty() {
            return ErrorList(vec![Error::required(&p.child("path"), "")]);
        }
        let mut e = validate_no_backsteps(&h.path, &p.child("path"));
        const TYPES: &[&str] = &[
            "",
            "BlockDevice",
            "CharDevice",
            "Directory",
            "DirectoryOrCreate",
            "File",
            "FileOrCreate",
            "Socket",
        ];
        if let Some(t) = h.type_.as_deref()
            && !TYPES.contains(&t)
        {
            e.push(Error::not_supported(&p.child("type"), t, TYPES));
        }
        e
    });
    one("gitRepo", v.git_repo.is_some(), &mut errs, &|| {
        let Some(g) = &v.git_repo else {
            return ErrorList::new();
        };
        let p = path.child("gitRepo");
        let mut e = required_if_empty(&g.repository, &p.child("repository"));
        e.append(validate_local_descending_path(
            g.directory.as_deref().unwrap_or_default(),
            &p.child("directory"),
        ));
        e
    });
    one(
        "gcePersistentDisk",
        v.gce_persistent_disk.is_some(),
        &mut errs,
        &|| {
            let Some(g) = &v.gce_persistent_disk else {
                return ErrorList::new();
            };
            required_if_empty(&g.pd_name, &path.child("persistentDisk").child("pdName"))
        },
    );
    one(
        "awsElasticBlockStore",
        v.aws_elastic_block_store.is_some(),
        &mut errs,
        &|| {
            let Some(a) = &v.aws_elastic_block_store else {
                return ErrorList::new();
            };
            required_if_empty(
                &a.volume_id,
                &path.child("awsElasticBlockStore").child("volumeID"),
            )
        },
    );
    one("secret", v.secret.is_some(), &mut errs, &|| {
        let Some(s) = &v.secret else {
            return ErrorList::new();
        };
        let p = path.child("secret");
        let mut e = required_if_empty(
            s.secret_name.as_deref().unwrap_or_default(),
            &p.child("secretName"),
        );
        e.append(validate_mode(s.default_mode, &p.child("defaultMode")));
        for (i, kp) in s.items.iter().flatten().enumerate() {
            e.append(validate_key_to_path(kp, &p.child("items").index(i)));
        }
        e
    });
    one("nfs", v.nfs.is_some(), &mut errs, &|| {
        let Some(nfs) = &v.nfs else {
            return ErrorList::new();
        };
        let p = path.child("nfs");
        let mut e = required_if_empty(&nfs.server, &p.child("server"));
        e.append(required_if_empty(&nfs.path, &p.child("path")));
        if !nfs.path.starts_with('/') {
            e.push(Error::invalid(
                &p.child("path"),
                nfs.path.as_str(),
                "must be an absolute path",
            ));
        }
        e
    });
    one("iscsi", v.iscsi.is_some(), &mut errs, &|| {
        let Some(i) = &v.iscsi else {
            return ErrorList::new();
        };
        let p = path.child("iscsi");
        let mut e = required_if_empty(&i.target_portal, &p.child("targetPortal"));
        e.append(required_if_empty(&i.iqn, &p.child("iqn")));
        e
    });
    one("glusterfs", v.glusterfs.is_some(), &mut errs, &|| {
        let Some(g) = &v.glusterfs else {
            return ErrorList::new();
        };
        let p = path.child("glusterfs");
        let mut e = required_if_empty(&g.endpoints, &p.child("endpoints"));
        e.append(required_if_empty(&g.path, &p.child("path")));
        e
    });
    one("flocker", v.flocker.is_some(), &mut errs, &|| {
        ErrorList::new()
    });
    one(
        "persistentVolumeClaim",
        v.persistent_volume_claim.is_some(),
        &mut errs,
        &|| {
            let Some(c) = &v.persistent_volume_claim else {
                return ErrorList::new();
            };
            required_if_empty(
                &c.claim_name,
                &path.child("persistentVolumeClaim").child("claimName"),
            )
        },
    );
    one("rbd", v.rbd.is_some(), &mut errs, &|| ErrorList::new());
    one("cinder", v.cinder.is_some(), &mut errs, &|| {
        let Some(c) = &v.cinder else {
            return ErrorList::new();
        };
        required_if_empty(&c.volume_id, &path.child("cinder").child("volumeID"))
    });
    one("cephFS", v.cephfs.is_some(), &mut errs, &|| {
        let Some(c) = &v.cephfs else {
            return ErrorList::new();
        };
        if c.monitors.is_empty() {
            ErrorList(vec![Error::required(
                &path.child("cephfs").child("monitors"),
                "",
            )])
        } else {
            ErrorList::new()
        }
    });
    one("quobyte", v.quobyte.is_some(), &mut errs, &|| {
        ErrorList::new()
    });
    one("downwarAPI", v.downward_api.is_some(), &mut errs, &|| {
        let Some(d) = &v.downward_api else {
            return ErrorList::new();
        };
        let p = path.child("downwardAPI");
        let mut e = validate_mode(d.default_mode, &p.child("defaultMode"));
        for f in d.items.iter().flatten() {
            e.append(validate_downward_file(f, &p));
        }
        e
    });
    one("fc", v.fc.is_some(), &mut errs, &|| ErrorList::new());
    one("flexVolume", v.flex_volume.is_some(), &mut errs, &|| {
        let Some(f) = &v.flex_volume else {
            return ErrorList::new();
        };
        required_if_empty(&f.driver, &path.child("flexVolume").child("driver"))
    });
    one("configMap", v.config_map.is_some(), &mut errs, &|| {
        let Some(c) = &v.config_map else {
            return ErrorList::new();
        };
        let p = path.child("configMap");
        let mut e = required_if_empty(&c.name, &p.child("name"));
        e.append(validate_mode(c.default_mode, &p.child("defaultMode")));
        for (i, kp) in c.items.iter().flatten().enumerate() {
            e.append(validate_key_to_path(kp, &p.child("items").index(i)));
        }
        e
    });
    one("azureFile", v.azure_file.is_some(), &mut errs, &|| {
        let Some(a) = &v.azure_file else {
            return ErrorList::new();
        };
        let p = path.child("azureFile");
        let mut e = required_if_empty(&a.secret_name, &p.child("secretName"));
        e.append(required_if_empty(&a.share_name, &p.child("shareName")));
        e
    });
    one(
        "vsphereVolume",
        v.vsphere_volume.is_some(),
        &mut errs,
        &|| ErrorList::new(),
    );
    one(
        "photonPersistentDisk",
        v.photon_persistent_disk.is_some(),
        &mut errs,
        &|| ErrorList::new(),
    );
    one(
        "portworxVolume",
        v.portworx_volume.is_some(),
        &mut errs,
        &|| ErrorList::new(),
    );
    one("azureDisk", v.azure_disk.is_some(), &mut errs, &|| {
        ErrorList::new()
    });
    one("storageos", v.storageos.is_some(), &mut errs, &|| {
        ErrorList::new()
    });
    one("projected", v.projected.is_some(), &mut errs, &|| {
        v.projected
            .as_ref()
            .map(|p| validate_projected(p, &path.child("projected")))
            .unwrap_or_default()
    });
    one("scaleIO", v.scale_io.is_some(), &mut errs, &|| {
        ErrorList::new()
    });
    one("csi", v.csi.is_some(), &mut errs, &|| {
        let Some(c) = &v.csi else {
            return ErrorList::new();
        };
        let p = path.child("csi").child("driver");
        let mut e = required_if_empty(&c.driver, &p);
        if c.driver.len() > 63 {
            e.push(Error::too_long(&p, 63));
        }
        for msg in formats::is_dns1123_subdomain(&c.driver.to_lowercase()) {
            e.push(Error::invalid(&p, c.driver.as_str(), msg));
        }
        e
    });
    one("ephemeral", v.ephemeral.is_some(), &mut errs, &|| {
        let Some(eph) = &v.ephemeral else {
            return ErrorList::new();
        };
        let mut e = ErrorList::new();
        if eph.volume_claim_template.is_none() {
            e.push(Error::required(
                &path.child("ephemeral").child("volumeClaimTemplate"),
                "",
            ));
        }
        if let Some(pod) = pod_name.filter(|p| !p.is_empty() && !v.name.is_empty()) {
            let pvc = format!("{pod}-{}", v.name);
            for msg in formats::is_dns1123_subdomain(&pvc) {
                e.push(Error::invalid(
                    &path.child("name"),
                    v.name.as_str(),
                    format!("PVC name {}: {msg}", crate::field::go_quote(&pvc)),
                ));
            }
        }
        e
    });
    one("image", v.image.is_some(), &mut errs, &|| ErrorList::new());
    if n.get() == 0 {
        errs.push(Error::required(path, "must specify a volume type"));
    }
    errs
}

/// `ValidateVolumes`: names are unique DNS labels and each volume has one
/// valid source. Returns the valid volumes by name.
pub fn validate_volumes(
    volumes: &[Volume],
    pod_name: Option<&str>,
    path: &Path,
) -> (Volumes, ErrorList) {
    let mut errs = ErrorList::new();
    let mut names = BTreeSet::new();
    let created_pvcs: BTreeSet<String> = pod_name
        .filter(|p| !p.is_empty())
        .map(|pod| {
            volumes
                .iter()
                .filter(|v| v.ephemeral.is_some())
                .map(|v| format!("{pod}-{}", v.name))
                .collect()
        })
        .unwrap_or_default();
    let mut valid = Volumes::new();
    for (i, v) in volumes.iter().enumerate() {
        let p = path.index(i);
        let name_path = p.child("name");
        let mut el = validate_volume_source(v, &p, pod_name);
        if v.name.is_empty() {
            el.push(Error::required(&name_path, ""));
        } else {
            el.append(validate_dns1123_label(&name_path, &v.name));
        }
        if names.contains(&v.name) {
            el.push(Error::duplicate(&name_path, v.name.as_str()));
        }
        if el.is_empty() {
            names.insert(v.name.clone());
            valid.insert(
                v.name.clone(),
                VolumeKind {
                    pvc: v.persistent_volume_claim.is_some() || v.ephemeral.is_some(),
                    image: v.image.is_some(),
                },
            );
        } else {
            errs.append(el);
        }
        if let Some(c) = &v.persistent_volume_claim
            && created_pvcs.contains(&c.claim_name)
        {
            errs.push(Error::invalid(
                &p.child("persistentVolumeClaim").child("claimName"),
                c.claim_name.as_str(),
                "must not reference a PVC that gets created for an ephemeral volume",
            ));
        }
    }
    (valid, errs)
}

/// `ValidateVolumeMounts` of one container.
pub fn validate_volume_mounts(
    mounts: &[VolumeMount],
    devices: &[VolumeDevice],
    volumes: &Volumes,
    container: Option<&Container>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut mount_points = BTreeSet::new();
    for (i, m) in mounts.iter().enumerate() {
        let p = path.index(i);
        if m.name.is_empty() {
            errs.push(Error::required(&p.child("name"), ""));
        }
        if !volumes.contains_key(&m.name) {
            errs.push(Error::not_found(&p.child("name"), m.name.as_str()));
        }
        if m.mount_path.is_empty() {
            errs.push(Error::required(&p.child("mountPath"), ""));
        }
        if !mount_points.insert(m.mount_path.as_str()) {
            errs.push(Error::invalid(
                &p.child("mountPath"),
                m.mount_path.as_str(),
                "must be unique",
            ));
        }
        if devices.iter().any(|d| d.name == m.name) {
            errs.push(Error::invalid(
                &p.child("name"),
                m.name.as_str(),
                "must not already exist in volumeDevices",
            ));
        }
        if devices.iter().any(|d| d.device_path == m.mount_path) {
            errs.push(Error::invalid(
                &p.child("mountPath"),
                m.mount_path.as_str(),
                "must not already exist as a path in volumeDevices",
            ));
        }
        let sub_path = m.sub_path.as_deref().unwrap_or_default();
        let sub_path_expr = m.sub_path_expr.as_deref().unwrap_or_default();
        if volumes.get(&m.name).is_some_and(|k| k.image) {
            if !sub_path.is_empty() {
                errs.push(Error::invalid(
                    &p.child("subPath"),
                    sub_path,
                    "not allowed in image volume sources",
                ));
            }
            if !sub_path_expr.is_empty() {
                errs.push(Error::invalid(
                    &p.child("subPathExpr"),
                    sub_path_expr,
                    "not allowed in image volume sources",
                ));
            }
        }
        if !sub_path.is_empty() {
            errs.append(validate_local_descending_path(
                sub_path,
                &path.child("subPath"),
            ));
        }
        if !sub_path_expr.is_empty() {
            if !sub_path.is_empty() {
                errs.push(Error::invalid(
                    &p.child("subPathExpr"),
                    sub_path_expr,
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            errs.append(validate_local_descending_path(
                sub_path_expr,
                &path.child("subPathExpr"),
            ));
        }
        if let Some(mp) = m.mount_propagation.as_deref() {
            let pp = path.child("mountPropagation");
            const MODES: &[&str] = &["Bidirectional", "HostToContainer", "None"];
            if !MODES.contains(&mp) {
                errs.push(Error::not_supported(&pp, mp, MODES));
            }
            if let Some(c) = container {
                let privileged = c
                    .security_context
                    .as_ref()
                    .and_then(|s| s.privileged)
                    .unwrap_or(false);
                if mp == "Bidirectional" && !privileged {
                    errs.push(Error::forbidden(
                        &pp,
                        "Bidirectional mount propagation is available only to privileged containers",
                    ));
                }
            }
        }
        if let Some(rro) = m.recursive_read_only.as_deref() {
            let rp = path.child("recursiveReadOnly");
            match rro {
                "Disabled" => {}
                "Enabled" | "IfPossible" => {
                    if !m.read_only.unwrap_or(false) {
                        errs.push(Error::forbidden(
                            &rp,
                            "may only be specified when readOnly is true",
                        ));
                    }
                    if m.mount_propagation
                        .as_deref()
                        .is_some_and(|mp| mp != "None")
                    {
                        errs.push(Error::forbidden(
                            &rp,
                            "may only be specified when mountPropagation is None or not specified",
                        ));
                    }
                }
                other => errs.push(Error::not_supported(
                    &rp,
                    other,
                    &["Disabled", "Enabled", "IfPossible"],
                )),
            }
        }
    }
    errs
}

/// `ValidateVolumeDevices` of one container.
pub fn validate_volume_devices(
    devices: &[VolumeDevice],
    mounts: &[VolumeMount],
    volumes: &Volumes,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut paths = BTreeSet::new();
    let mut names = BTreeSet::new();
    for (i, d) in devices.iter().enumerate() {
        let p = path.index(i);
        let kind = volumes.get(&d.name);
        if d.name.is_empty() {
            errs.push(Error::required(&p.child("name"), ""));
        }
        if names.contains(&d.name) {
            errs.push(Error::invalid(
                &p.child("name"),
                d.name.as_str(),
                "must be unique",
            ));
        }
        match kind {
            Some(k) if !k.pvc => errs.push(Error::invalid(
                &p.child("name"),
                d.name.as_str(),
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            )),
            Some(_) => {}
            None => errs.push(Error::not_found(&p.child("name"), d.name.as_str())),
        }
        if d.device_path.is_empty() {
            errs.push(Error::required(&p.child("devicePath"), ""));
        }
        if paths.contains(&d.device_path) {
            errs.push(Error::invalid(
                &p.child("devicePath"),
                d.device_path.as_str(),
                "must be unique",
            ));
        }
        if !d.device_path.is_empty() && d.device_path.split('/').any(|s| s == "..") {
            errs.push(Error::invalid(
                &p.child("devicePath"),
                d.device_path.as_str(),
                "can not contain backsteps ('..')",
            ));
        } else {
            paths.insert(d.device_path.clone());
        }
        if mounts.iter().any(|m| m.name == d.name) {
            errs.push(Error::invalid(
                &p.child("name"),
                d.name.as_str(),
                "must not already exist in volumeMounts",
            ));
        }
        if mounts.iter().any(|m| m.mount_path == d.device_path) {
            errs.push(Error::invalid(
                &p.child("devicePath"),
                d.device_path.as_str(),
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !d.name.is_empty() {
            names.insert(d.name.clone());
        }
    }
    errs
}
