//! The CRD registry strategy (`pkg/registry/customresourcedefinition/strategy.go`):
//! CRDs are cluster-scoped; the server keeps `status` (accepted names,
//! conditions) away from main-resource writes, records the storage
//! version in `status.storedVersions`, and bumps the generation on spec
//! changes.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionStatus,
};

use super::defaults::default_crd;
use super::validation::{validate_crd, validate_crd_status_update, validate_crd_update};
use crate::equality::semantic_eq;
use crate::field::ErrorList;
use crate::strategy::{Context, Strategy, next_generation};

/// The CustomResourceDefinition strategy: the main resource through
/// `admit_create`/`admit_update`, `customresourcedefinitions/status`
/// through `admit_status_update`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CrdStrategy;

/// Appends the storage version to `status.storedVersions` if missing.
fn record_storage_version(crd: &mut CustomResourceDefinition) {
    let Some(storage) = crd
        .spec
        .versions
        .iter()
        .find(|v| v.storage)
        .map(|v| v.name.clone())
    else {
        return;
    };
    let status = crd.status.get_or_insert_with(Default::default);
    let stored = status.stored_versions.get_or_insert_with(Vec::new);
    if !stored.contains(&storage) {
        stored.push(storage);
    }
}

impl Strategy for CrdStrategy {
    type Object = CustomResourceDefinition;
    const NAMESPACED: bool = false;

    fn default(obj: &mut CustomResourceDefinition) {
        default_crd(obj);
    }

    /// `PrepareForCreate`: status cleared, generation 1, storage version recorded.
    fn prepare_for_create(obj: &mut CustomResourceDefinition) {
        obj.status = Some(CustomResourceDefinitionStatus::default());
        obj.metadata.generation = Some(1);
        record_storage_version(obj);
    }

    fn validate_create(obj: &CustomResourceDefinition, _ctx: &Context<'_>) -> ErrorList {
        validate_crd(obj)
    }

    /// `PrepareForUpdate`: status kept, generation bumped on spec changes,
    /// a new storage version recorded.
    fn prepare_for_update(new: &mut CustomResourceDefinition, old: &CustomResourceDefinition) {
        new.status.clone_from(&old.status);
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
        record_storage_version(new);
    }

    fn validate_update(
        new: &CustomResourceDefinition,
        old: &CustomResourceDefinition,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_crd_update(new, old)
    }

    /// The status strategy's `PrepareForUpdate`: spec, labels, annotations,
    /// owner references and generation come from the stored object.
    fn prepare_for_status_update(
        new: &mut CustomResourceDefinition,
        old: &CustomResourceDefinition,
    ) {
        new.spec.clone_from(&old.spec);
        new.metadata.labels.clone_from(&old.metadata.labels);
        new.metadata
            .annotations
            .clone_from(&old.metadata.annotations);
        new.metadata
            .owner_references
            .clone_from(&old.metadata.owner_references);
        new.metadata.generation = old.metadata.generation;
        new.metadata.self_link.clone_from(&old.metadata.self_link);
    }

    fn validate_status_update(
        new: &CustomResourceDefinition,
        old: &CustomResourceDefinition,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_crd_status_update(new, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::{admit_create, admit_status_update, admit_update};
    use serde_json::json;

    fn crd() -> CustomResourceDefinition {
        serde_json::from_value(json!({
            "metadata": {"name": "foos.example.com", "resourceVersion": "1"},
            "spec": {
                "group": "example.com", "scope": "Namespaced",
                "names": {"plural": "foos", "kind": "Foo"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]
            },
            "status": {"acceptedNames": {"plural": "x", "kind": "X"}, "storedVersions": ["v0"]}
        }))
        .expect("crd")
    }

    fn ctx(absent: &Absent) -> Context<'_> {
        Context {
            now: "2026-11-29T10:00:00Z".parse().expect("time"),
            absent,
        }
    }

    #[test]
    fn create_clears_status_and_records_storage_version() {
        let absent = Absent::default();
        let mut c = crd();
        admit_create::<CrdStrategy>(&mut c, &ctx(&absent)).expect("valid");
        let status = c.status.clone().unwrap_or_default();
        assert_eq!(status.accepted_names, None);
        assert_eq!(status.stored_versions, Some(vec!["v1".to_owned()]));
        assert_eq!(c.metadata.generation, Some(1));
        assert_eq!(c.spec.names.list_kind.as_deref(), Some("FooList"));
    }

    #[test]
    fn update_keeps_status_and_bumps_generation() {
        let absent = Absent::default();
        let mut old = crd();
        admit_create::<CrdStrategy>(&mut old, &ctx(&absent)).expect("valid");
        let mut new = old.clone();
        new.status = None;
        new.spec.versions[0].served = false;
        admit_update::<CrdStrategy>(&mut new, &old, &ctx(&absent)).expect("valid");
        assert_eq!(new.status, old.status);
        assert_eq!(new.metadata.generation, Some(2));

        let mut bad = old.clone();
        bad.spec.group = "other.io".into();
        let err =
            admit_update::<CrdStrategy>(&mut bad, &old, &ctx(&absent)).expect_err("immutable");
        assert!(
            err.errors
                .to_string()
                .contains(r#"spec.group: Invalid value: "other.io": field is immutable"#),
            "{}",
            err.errors
        );
    }

    #[test]
    fn status_update_keeps_spec() {
        let absent = Absent::default();
        let mut old = crd();
        admit_create::<CrdStrategy>(&mut old, &ctx(&absent)).expect("valid");
        let mut new = old.clone();
        new.spec.scope = "Cluster".into();
        new.status
            .get_or_insert_with(Default::default)
            .accepted_names = Some(old.spec.names.clone());
        admit_status_update::<CrdStrategy>(&mut new, &old, &ctx(&absent)).expect("valid");
        assert_eq!(new.spec.scope, "Namespaced");
        assert_eq!(
            new.status.and_then(|s| s.accepted_names).map(|n| n.plural),
            Some("foos".to_owned())
        );
    }
}
