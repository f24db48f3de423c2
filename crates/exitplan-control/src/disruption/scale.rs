//! Controller scale lookup for PDB status (job-failure spec §13 step 2):
//! which controller owns a pod and how many replicas it wants.
//!
//! [`sync_pdb`](super::sync_pdb) takes the lookup as a function so the
//! caller decides where objects come from; [`Workloads::lookup`] implements
//! upstream's finder order over the built-in workloads (ReplicationController,
//! Deployment through its ReplicaSet, ReplicaSet not owned by a Deployment,
//! StatefulSet) and then asks a `/scale` fallback.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::ReplicationController;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

/// A controller found for a pod: its UID (budgets count each controller
/// once) and its desired replicas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerScale {
    /// UID of the controller whose scale counts (the Deployment for pods of
    /// a Deployment's ReplicaSet).
    pub uid: String,
    /// Desired replicas (`spec.replicas`, default 1).
    pub replicas: i32,
}

/// Why a controller's scale cannot be determined; `Display` is upstream's text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScaleError {
    /// The owner's resource has no `/scale` subresource (`jobs.batch`).
    #[error("{resource} does not implement the scale subresource")]
    NoScaleSubresource {
        /// Group-qualified resource, `jobs.batch`.
        resource: String,
    },
    /// The owner reference's apiVersion does not parse.
    #[error("unexpected GroupVersion string: {0}")]
    BadApiVersion(String),
    /// Any other lookup failure, with its message.
    #[error("{0}")]
    Other(String),
}

/// The group of an apiVersion (`schema.ParseGroupVersion`): `apps/v1` →
/// `apps`, `v1` → core, more than one `/` is an error.
pub fn api_group(api_version: &str) -> Result<&str, ScaleError> {
    if api_version.is_empty() || api_version == "/" {
        return Ok("");
    }
    match api_version.matches('/').count() {
        0 => Ok(""),
        1 => Ok(api_version.split('/').next().unwrap_or_default()),
        _ => Err(ScaleError::BadApiVersion(api_version.to_owned())),
    }
}

/// `verifyGroupKind`: the reference is of `kind` in one of `groups`.
fn is_group_kind(owner: &OwnerReference, kind: &str, groups: &[&str]) -> Result<bool, ScaleError> {
    let group = api_group(&owner.api_version)?;
    Ok(owner.kind == kind && groups.contains(&group))
}

/// `metav1.GetControllerOf`: the owner reference with `controller: true`.
pub fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
}

fn found(meta: &ObjectMeta, replicas: Option<i32>) -> ControllerScale {
    ControllerScale {
        uid: meta.uid.clone().unwrap_or_default(),
        replicas: replicas.unwrap_or(1),
    }
}

/// The built-in workloads of the PDB's namespace, as the controller's
/// listers would see them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Workloads<'a> {
    /// ReplicationControllers.
    pub replication_controllers: &'a [ReplicationController],
    /// ReplicaSets.
    pub replica_sets: &'a [ReplicaSet],
    /// Deployments.
    pub deployments: &'a [Deployment],
    /// StatefulSets.
    pub stateful_sets: &'a [StatefulSet],
}

fn by_name_and_uid<'o, T>(
    objects: &'o [T],
    meta: impl Fn(&T) -> &ObjectMeta,
    owner: &OwnerReference,
) -> Option<&'o T> {
    objects
        .iter()
        .find(|o| meta(o).name.as_deref() == Some(owner.name.as_str()))
        .filter(|o| meta(o).uid.as_deref() == Some(owner.uid.as_str()))
}

impl Workloads<'_> {
    /// The scale behind a pod's controller reference, trying in order
    /// ReplicationController, Deployment, ReplicaSet, StatefulSet and then
    /// `scale_subresource` (upstream's `/scale` finder). `Ok(None)`: nothing
    /// found (the sync then fails with `found no controllers for pod …`).
    pub fn lookup(
        &self,
        owner: &OwnerReference,
        scale_subresource: impl Fn(&OwnerReference) -> Result<Option<ControllerScale>, ScaleError>,
    ) -> Result<Option<ControllerScale>, ScaleError> {
        if is_group_kind(owner, "ReplicationController", &[""])? {
            let rc = by_name_and_uid(self.replication_controllers, |o| &o.metadata, owner);
            if let Some(rc) = rc {
                let replicas = rc.spec.as_ref().and_then(|s| s.replicas);
                return Ok(Some(found(&rc.metadata, replicas)));
            }
        }
        if let Some(d) = self.deployment_of(owner)? {
            return Ok(Some(d));
        }
        if is_group_kind(owner, "ReplicaSet", &["apps", "extensions"])? {
            let rs = by_name_and_uid(self.replica_sets, |o| &o.metadata, owner);
            let owned_by_deployment = rs
                .and_then(|rs| controller_of(&rs.metadata))
                .is_some_and(|c| c.kind == "Deployment");
            if let Some(rs) = rs.filter(|_| !owned_by_deployment) {
                let replicas = rs.spec.replicas;
                return Ok(Some(found(&rs.metadata, replicas)));
            }
        }
        if is_group_kind(owner, "StatefulSet", &["apps"])? {
            let ss = by_name_and_uid(self.stateful_sets, |o| &o.metadata, owner);
            if let Some(ss) = ss {
                let replicas = ss.spec.replicas;
                return Ok(Some(found(&ss.metadata, replicas)));
            }
        }
        scale_subresource(owner)
    }

    /// `getPodDeployment`: the Deployment controlling the pod's ReplicaSet.
    fn deployment_of(&self, owner: &OwnerReference) -> Result<Option<ControllerScale>, ScaleError> {
        if !is_group_kind(owner, "ReplicaSet", &["apps", "extensions"])? {
            return Ok(None);
        }
        let Some(rs) = by_name_and_uid(self.replica_sets, |o| &o.metadata, owner) else {
            return Ok(None);
        };
        let Some(rs_owner) = controller_of(&rs.metadata) else {
            return Ok(None);
        };
        if !is_group_kind(rs_owner, "Deployment", &["apps", "extensions"])? {
            return Ok(None);
        }
        Ok(by_name_and_uid(self.deployments, |o| &o.metadata, rs_owner)
            .map(|d| found(&d.metadata, d.spec.replicas)))
    }
}

/// A `/scale` fallback for clusters where only the built-in workloads scale:
/// a `batch` Job (or CronJob) owner is `jobs.batch does not implement the
/// scale subresource` (resp. `cronjobs.batch`), anything else is not found.
pub fn without_scale_subresources(
    owner: &OwnerReference,
) -> Result<Option<ControllerScale>, ScaleError> {
    let group = api_group(&owner.api_version)?;
    match (group, owner.kind.as_str()) {
        ("batch", "Job") => Err(ScaleError::NoScaleSubresource {
            resource: "jobs.batch".to_owned(),
        }),
        ("batch", "CronJob") => Err(ScaleError::NoScaleSubresource {
            resource: "cronjobs.batch".to_owned(),
        }),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_groups() {
        assert_eq!(api_group("apps/v1"), Ok("apps"));
        assert_eq!(api_group("v1"), Ok(""));
        assert_eq!(api_group("/v1"), Ok(""));
        assert_eq!(
            api_group("a/b/c").map_err(|e| e.to_string()),
            Err("unexpected GroupVersion string: a/b/c".to_owned())
        );
    }
}
