//! The `scale` subresource (`autoscaling/v1` Scale) of Deployments,
//! ReplicaSets, StatefulSets and ReplicationControllers — upstream's
//! `ScaleREST` in `pkg/registry/{apps,core}/*/storage` and
//! `autoscalingvalidation.ValidateScale`.
//!
//! How the REST layer uses it (`<resource>/<name>/scale`):
//!
//! * **GET**: [`scale_of`] on the stored object (a [`ScaleError`] answers
//!   400 with its text).
//! * **PUT**: decode the body as a Scale (namespace defaulted from the URL,
//!   name checked against it as for any update), then
//!   [`update_from_scale`]`(&stored, &scale)` → the updated object, which
//!   goes through the kind's ordinary update (`admit_update` with its
//!   strategy; resourceVersion of the Scale, when set, is the
//!   precondition; an empty one is an unconditional update), is stored,
//!   and the answer is [`scale_of`] of the stored result.
//! * **PATCH**: patch the JSON of [`scale_of`]`(&stored)` (merge, JSON
//!   or strategic — Scale has no list keys), decode, then as PUT.

use std::collections::BTreeMap;

use k8s_openapi::Metadata;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::autoscaling::v1::{Scale, ScaleSpec, ScaleStatus};
use k8s_openapi::api::core::v1::ReplicationController;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use crate::field::{Error, ErrorList, Path};
use crate::meta::{self, NameRule};
use crate::selector::as_selector;
use crate::status::{GroupKind, InvalidError};

/// The kind named in a rejected Scale (`Scale.autoscaling "x" is invalid`).
pub const SCALE_KIND: GroupKind = GroupKind {
    group: "autoscaling",
    kind: "Scale",
};

/// A kind with a `scale` subresource.
pub trait Scalable: k8s_openapi::Resource + Metadata<Ty = ObjectMeta> + Clone {
    /// `spec.replicas` (unset reads as 0).
    fn spec_replicas(&self) -> i32;
    /// Sets `spec.replicas`.
    fn set_spec_replicas(&mut self, replicas: i32);
    /// `status.replicas` (unset reads as 0).
    fn status_replicas(&self) -> i32;
    /// `status.selector` of the Scale: the pod selector as a string
    /// (`labels.Selector.String()`), or why it cannot be converted.
    fn selector_string(&self) -> Result<String, ScaleError>;
}

/// Why a scale request fails, with the Status kube-apiserver answers.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ScaleError {
    /// 400 BadRequest: the object's selector cannot be converted.
    #[error("{0}")]
    BadRequest(String),
    /// 422 Invalid: the Scale failed [`validate_scale`].
    #[error(transparent)]
    Invalid(InvalidError),
    /// 409 Conflict: the Scale's UID precondition does not match the
    /// object (`Operation cannot be fulfilled on <resource> "<name>": …`).
    #[error("Operation cannot be fulfilled on {resource} \"{name}\": {message}")]
    Conflict {
        /// `<plural>.<group>` (`deployments.apps`).
        resource: String,
        /// The object's name.
        name: String,
        /// `Precondition failed: UID in precondition: …, UID in object meta: …`.
        message: String,
    },
}

fn label_selector_string(selector: &LabelSelector) -> Result<String, ScaleError> {
    as_selector(Some(selector))
        .map(|s| s.to_string())
        .map_err(|e| ScaleError::BadRequest(e.to_string()))
}

impl Scalable for Deployment {
    fn spec_replicas(&self) -> i32 {
        self.spec.replicas.unwrap_or(0)
    }
    fn set_spec_replicas(&mut self, replicas: i32) {
        self.spec.replicas = Some(replicas);
    }
    fn status_replicas(&self) -> i32 {
        self.status.as_ref().and_then(|s| s.replicas).unwrap_or(0)
    }
    fn selector_string(&self) -> Result<String, ScaleError> {
        label_selector_string(&self.spec.selector)
    }
}

impl Scalable for ReplicaSet {
    fn spec_replicas(&self) -> i32 {
        self.spec.replicas.unwrap_or(0)
    }
    fn set_spec_replicas(&mut self, replicas: i32) {
        self.spec.replicas = Some(replicas);
    }
    fn status_replicas(&self) -> i32 {
        self.status.as_ref().map_or(0, |s| s.replicas)
    }
    fn selector_string(&self) -> Result<String, ScaleError> {
        label_selector_string(&self.spec.selector)
    }
}

impl Scalable for StatefulSet {
    fn spec_replicas(&self) -> i32 {
        self.spec.replicas.unwrap_or(0)
    }
    fn set_spec_replicas(&mut self, replicas: i32) {
        self.spec.replicas = Some(replicas);
    }
    fn status_replicas(&self) -> i32 {
        self.status.as_ref().map_or(0, |s| s.replicas)
    }
    fn selector_string(&self) -> Result<String, ScaleError> {
        label_selector_string(&self.spec.selector)
    }
}

/// `labels.SelectorFromSet(m).String()`: `k=v` pairs in key order.
fn map_selector_string(m: Option<&BTreeMap<String, String>>) -> String {
    m.into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

impl Scalable for ReplicationController {
    fn spec_replicas(&self) -> i32 {
        self.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0)
    }
    fn set_spec_replicas(&mut self, replicas: i32) {
        self.spec.get_or_insert_with(Default::default).replicas = Some(replicas);
    }
    fn status_replicas(&self) -> i32 {
        self.status.as_ref().map_or(0, |s| s.replicas)
    }
    fn selector_string(&self) -> Result<String, ScaleError> {
        Ok(map_selector_string(
            self.spec.as_ref().and_then(|s| s.selector.as_ref()),
        ))
    }
}

/// The Scale of `obj` (`scaleFrom<Kind>`): name, namespace, UID,
/// resourceVersion and creationTimestamp of the object; `spec.replicas`;
/// `status.replicas` and `status.selector`. Zero replicas and an empty
/// selector are omitted, as upstream's `omitempty` does.
pub fn scale_of<T: Scalable>(obj: &T) -> Result<Scale, ScaleError> {
    let m = obj.metadata();
    let selector = obj.selector_string()?;
    let replicas = obj.spec_replicas();
    Ok(Scale {
        metadata: ObjectMeta {
            name: m.name.clone(),
            namespace: m.namespace.clone(),
            uid: m.uid.clone(),
            resource_version: m.resource_version.clone(),
            creation_timestamp: m.creation_timestamp.clone(),
            ..Default::default()
        },
        spec: Some(ScaleSpec {
            replicas: (replicas != 0).then_some(replicas),
        }),
        status: Some(ScaleStatus {
            replicas: obj.status_replicas(),
            selector: (!selector.is_empty()).then_some(selector),
        }),
    })
}

/// `ValidateScale`: the Scale's metadata (namespaced, name a DNS
/// subdomain) and `spec.replicas` ≥ 0.
pub fn validate_scale(scale: &Scale) -> ErrorList {
    let mut errs = meta::validate_object_meta(&scale.metadata, true, NameRule::Subdomain);
    let replicas = scale.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0);
    if replicas < 0 {
        errs.push(Error::invalid(
            &Path::new("spec").child("replicas"),
            replicas,
            "must be greater than or equal to 0",
        ));
    }
    errs
}

/// Moves the Scale's `spec.replicas` and `metadata.resourceVersion` onto
/// `obj` (nothing else of the Scale is used).
pub fn apply_scale<T: Scalable>(obj: &mut T, scale: &Scale) {
    obj.set_spec_replicas(scale.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0));
    obj.metadata_mut()
        .resource_version
        .clone_from(&scale.metadata.resource_version);
}

/// `scaleUpdatedObjectInfo.UpdatedObject`: validates `scale`
/// ([`validate_scale`], 422 naming the object), checks its UID
/// precondition against `stored` (409), and returns `stored` with the
/// Scale applied ([`apply_scale`]). The caller then runs the kind's
/// ordinary update on the result.
pub fn update_from_scale<T: Scalable>(stored: &T, scale: &Scale) -> Result<T, ScaleError> {
    let name = stored.metadata().name.clone().unwrap_or_default();
    let errors = validate_scale(scale);
    if !errors.is_empty() {
        return Err(ScaleError::Invalid(InvalidError {
            kind: SCALE_KIND,
            name,
            errors,
        }));
    }
    let uid = scale.metadata.uid.as_deref().unwrap_or_default();
    let stored_uid = stored.metadata().uid.as_deref().unwrap_or_default();
    if !uid.is_empty() && uid != stored_uid {
        let group = T::GROUP;
        let resource = if group.is_empty() {
            T::URL_PATH_SEGMENT.to_owned()
        } else {
            format!("{}.{group}", T::URL_PATH_SEGMENT)
        };
        return Err(ScaleError::Conflict {
            resource,
            name,
            message: format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {stored_uid}"
            ),
        });
    }
    let mut obj = stored.clone();
    apply_scale(&mut obj, scale);
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(selector: serde_json::Value) -> Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "u1", "resourceVersion": "7"},
            "spec": {"replicas": 3, "selector": selector, "template": {}},
            "status": {"replicas": 2}
        }))
        .expect("deployment")
    }

    #[test]
    fn scale_of_formats_the_selector() {
        let cases = [
            (
                json!({"matchLabels": {"b": "2", "a": "1"}}),
                Some("a=1,b=2"),
            ),
            (
                json!({"matchLabels": {"z": "1"}, "matchExpressions": [
                    {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                    {"key": "tier", "operator": "NotIn", "values": ["x"]},
                    {"key": "app", "operator": "Exists"},
                    {"key": "old", "operator": "DoesNotExist"}]}),
                Some("app,env in (dev,prod),!old,tier notin (x),z=1"),
            ),
            (json!({}), None),
        ];
        for (selector, want) in cases {
            let s = scale_of(&deployment(selector)).expect("scale");
            assert_eq!(s.status.as_ref().and_then(|s| s.selector.as_deref()), want);
        }
        let s = scale_of(&deployment(json!({"matchLabels": {"a": "1"}}))).expect("scale");
        assert_eq!(
            serde_json::to_value(&s).expect("json"),
            json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                   "metadata": {"name": "web", "namespace": "ns", "uid": "u1", "resourceVersion": "7"},
                   "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "a=1"}})
        );
        let bad = deployment(json!({"matchExpressions": [{"key": "a", "operator": "Bad"}]}));
        assert_eq!(
            scale_of(&bad),
            Err(ScaleError::BadRequest(
                "\"Bad\" is not a valid label selector operator".into()
            ))
        );
    }

    #[test]
    fn replication_controller_map_selector() {
        let rc: ReplicationController = serde_json::from_value(json!({
            "metadata": {"name": "rc", "namespace": "ns"},
            "spec": {"replicas": 0, "selector": {"b": "2", "a": "1"}}
        }))
        .expect("rc");
        let s = scale_of(&rc).expect("scale");
        assert_eq!(serde_json::to_value(&s).expect("json")["spec"], json!({}));
        assert_eq!(
            s.status.and_then(|s| s.selector).as_deref(),
            Some("a=1,b=2")
        );
    }

    // Upstream TestValidateScale.
    #[test]
    fn validate_scale_cases() {
        let scale = |replicas: i32| Scale {
            metadata: ObjectMeta {
                name: Some("frontend".into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            spec: Some(ScaleSpec {
                replicas: Some(replicas),
            }),
            status: None,
        };
        for ok in [1, 10, 0] {
            assert!(validate_scale(&scale(ok)).is_empty(), "{ok}");
        }
        assert_eq!(
            validate_scale(&scale(-1)).to_string(),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
    }

    #[test]
    fn update_from_scale_rules() {
        let stored = deployment(json!({"matchLabels": {"a": "1"}}));
        let mut scale = scale_of(&stored).expect("scale");
        scale.spec = Some(ScaleSpec { replicas: Some(5) });
        scale.metadata.resource_version = Some("7".into());
        scale.metadata.labels = Some([("ignored".to_owned(), "x".to_owned())].into());
        let updated = update_from_scale(&stored, &scale).expect("update");
        assert_eq!(updated.spec.replicas, Some(5));
        assert_eq!(updated.metadata.labels, None);
        assert_eq!(updated.metadata.resource_version.as_deref(), Some("7"));

        scale.spec = Some(ScaleSpec { replicas: Some(-2) });
        let err = update_from_scale(&stored, &scale).expect_err("negative");
        assert_eq!(
            err.to_string(),
            r#"Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -2: must be greater than or equal to 0"#
        );

        scale.spec = Some(ScaleSpec { replicas: Some(1) });
        scale.metadata.uid = Some("other".into());
        let err = update_from_scale(&stored, &scale).expect_err("uid");
        assert_eq!(
            err.to_string(),
            r#"Operation cannot be fulfilled on deployments.apps "web": Precondition failed: UID in precondition: other, UID in object meta: u1"#
        );
    }
}
