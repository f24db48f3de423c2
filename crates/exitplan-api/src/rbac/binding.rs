//! RoleBinding and ClusterRoleBinding: defaulting (`SetDefaults_RoleBinding`,
//! `SetDefaults_ClusterRoleBinding`, `SetDefaults_Subject`), validation
//! (`ValidateRoleBinding`, `ValidateClusterRoleBinding` and their updates:
//! `roleRef` cannot change) and the registry strategies
//! (`pkg/registry/rbac/rolebinding`, `pkg/registry/rbac/clusterrolebinding`:
//! no status).

use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding};

use super::{
    default_role_ref, default_subject, validate_role_ref, validate_role_ref_unchanged,
    validate_subjects,
};
use crate::field::ErrorList;
use crate::meta::generic::{before_create_scoped, validate_common_fields_scoped};
use crate::meta::{self, NameRule};
use crate::strategy::{Context, Strategy};

/// `ValidateRoleBinding`: metadata (path-segment names), a `roleRef` to a
/// Role or ClusterRole of the RBAC group, then each subject.
pub fn validate_role_binding(rb: &RoleBinding) -> ErrorList {
    let mut errs = meta::validate_object_meta(&rb.metadata, true, NameRule::PathSegment);
    errs.append(validate_role_ref(&rb.role_ref, &["Role", "ClusterRole"]));
    errs.append(validate_subjects(rb.subjects.as_ref(), true));
    errs
}

/// `ValidateRoleBindingUpdate`: the new binding, the metadata update rules,
/// and `roleRef` unchanged (`cannot change roleRef`).
pub fn validate_role_binding_update(new: &RoleBinding, old: &RoleBinding) -> ErrorList {
    let mut errs = validate_role_binding(new);
    errs.append(meta::validate_object_meta_update(
        &new.metadata,
        &old.metadata,
    ));
    errs.append(validate_role_ref_unchanged(&new.role_ref, &old.role_ref));
    errs
}

/// `ValidateClusterRoleBinding`: metadata, a `roleRef` to a ClusterRole,
/// then each subject (service accounts need a namespace).
pub fn validate_cluster_role_binding(crb: &ClusterRoleBinding) -> ErrorList {
    let mut errs = meta::validate_object_meta(&crb.metadata, false, NameRule::PathSegment);
    errs.append(validate_role_ref(&crb.role_ref, &["ClusterRole"]));
    errs.append(validate_subjects(crb.subjects.as_ref(), false));
    errs
}

/// `ValidateClusterRoleBindingUpdate`: as for RoleBindings.
pub fn validate_cluster_role_binding_update(
    new: &ClusterRoleBinding,
    old: &ClusterRoleBinding,
) -> ErrorList {
    let mut errs = validate_cluster_role_binding(new);
    errs.append(meta::validate_object_meta_update(
        &new.metadata,
        &old.metadata,
    ));
    errs.append(validate_role_ref_unchanged(&new.role_ref, &old.role_ref));
    errs
}

/// Create and update rules of rbac.authorization.k8s.io/v1 RoleBindings.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoleBindingStrategy;

impl Strategy for RoleBindingStrategy {
    type Object = RoleBinding;

    /// `roleRef.apiGroup` and each subject's `apiGroup`.
    fn default(obj: &mut RoleBinding) {
        default_role_ref(&mut obj.role_ref);
        obj.subjects.iter_mut().flatten().for_each(default_subject);
    }

    fn validate_create(obj: &RoleBinding, _ctx: &Context<'_>) -> ErrorList {
        before_create_scoped(validate_role_binding(obj), &obj.metadata, true)
    }

    /// `BeforeUpdate`'s common fields, then upstream's `ValidateUpdate`
    /// (`ValidateRoleBinding` and `ValidateRoleBindingUpdate`, which
    /// repeats it: the causes repeat, the message shows each once).
    fn validate_update(new: &RoleBinding, old: &RoleBinding, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, true);
        errs.append(validate_role_binding(new));
        errs.append(validate_role_binding_update(new, old));
        errs
    }

    /// RoleBindings have no `/status`; the stored object is kept.
    fn prepare_for_status_update(new: &mut RoleBinding, old: &RoleBinding) {
        *new = old.clone();
    }

    fn validate_status_update(
        new: &RoleBinding,
        old: &RoleBinding,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_common_fields_scoped(&new.metadata, &old.metadata, true)
    }
}

/// Create and update rules of rbac.authorization.k8s.io/v1
/// ClusterRoleBindings (cluster-scoped).
#[derive(Clone, Copy, Debug, Default)]
pub struct ClusterRoleBindingStrategy;

impl Strategy for ClusterRoleBindingStrategy {
    type Object = ClusterRoleBinding;
    const NAMESPACED: bool = false;

    /// `roleRef.apiGroup` and each subject's `apiGroup`.
    fn default(obj: &mut ClusterRoleBinding) {
        default_role_ref(&mut obj.role_ref);
        obj.subjects.iter_mut().flatten().for_each(default_subject);
    }

    fn validate_create(obj: &ClusterRoleBinding, _ctx: &Context<'_>) -> ErrorList {
        before_create_scoped(validate_cluster_role_binding(obj), &obj.metadata, false)
    }

    /// As for RoleBindings.
    fn validate_update(
        new: &ClusterRoleBinding,
        old: &ClusterRoleBinding,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, false);
        errs.append(validate_cluster_role_binding(new));
        errs.append(validate_cluster_role_binding_update(new, old));
        errs
    }

    /// ClusterRoleBindings have no `/status`; the stored object is kept.
    fn prepare_for_status_update(new: &mut ClusterRoleBinding, old: &ClusterRoleBinding) {
        *new = old.clone();
    }

    fn validate_status_update(
        new: &ClusterRoleBinding,
        old: &ClusterRoleBinding,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_common_fields_scoped(&new.metadata, &old.metadata, false)
    }
}

/// RoleBindings hold no quantities.
impl crate::quantities::Quantities for RoleBinding {}
/// ClusterRoleBindings hold no quantities.
impl crate::quantities::Quantities for ClusterRoleBinding {}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::absent::Absent;
    use crate::rbac::GROUP_NAME;
    use crate::strategy::admit_update;
    use crate::strategy::testing::{created, edited};

    fn crb(v: Value) -> ClusterRoleBinding {
        serde_json::from_value(v).expect("cluster role binding")
    }

    fn rb(v: Value) -> RoleBinding {
        serde_json::from_value(v).expect("role binding")
    }

    fn ref_(kind: &str, name: &str) -> Value {
        json!({"apiGroup": GROUP_NAME, "kind": kind, "name": name})
    }

    /// Upstream's `TestValidateClusterRoleBinding`, with the texts.
    #[test]
    fn validate_cluster_role_binding_table() {
        let valid = crb(json!({
            "metadata": {"name": "master"},
            "roleRef": ref_("ClusterRole", "valid"),
            "subjects": [
                {"name": "validsaname", "namespace": "foo", "kind": "ServiceAccount"},
                {"name": "valid@username", "kind": "User", "apiGroup": GROUP_NAME},
                {"name": "valid@groupname", "kind": "Group", "apiGroup": GROUP_NAME}
            ]
        }));
        assert!(validate_cluster_role_binding(&valid).is_empty());

        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "bad group",
                json!({"metadata": {"name": "default"},
                       "roleRef": {"apiGroup": "rbac.GroupName", "kind": "ClusterRole", "name": "valid"}}),
                r#"roleRef.apiGroup: Unsupported value: "rbac.GroupName": supported values: "rbac.authorization.k8s.io""#,
            ),
            (
                "bad kind",
                json!({"metadata": {"name": "default"}, "roleRef": ref_("Type", "valid")}),
                r#"roleRef.kind: Unsupported value: "Type": supported values: "ClusterRole""#,
            ),
            (
                "reference role",
                json!({"metadata": {"name": "default"}, "roleRef": ref_("Role", "valid")}),
                r#"roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole""#,
            ),
            (
                "zero-length name",
                json!({"metadata": {}, "roleRef": ref_("ClusterRole", "valid")}),
                "metadata.name: Required value: name or generateName is required",
            ),
            (
                "bad role",
                json!({"metadata": {"name": "default"}, "roleRef": {"apiGroup": GROUP_NAME, "kind": "ClusterRole"}}),
                "roleRef.name: Required value",
            ),
            (
                "role name with '/'",
                json!({"metadata": {"name": "default"}, "roleRef": ref_("ClusterRole", "a/b")}),
                r#"roleRef.name: Invalid value: "a/b": may not contain '/'"#,
            ),
            (
                "bad subject kind",
                json!({"metadata": {"name": "master"}, "roleRef": ref_("ClusterRole", "valid"),
                       "subjects": [{"name": "subject"}]}),
                r#"subjects[0].kind: Unsupported value: "": supported values: "ServiceAccount", "User", "Group""#,
            ),
            (
                "bad subject name",
                json!({"metadata": {"name": "master"}, "roleRef": ref_("ClusterRole", "valid"),
                       "subjects": [{"namespace": "foo", "name": "subject:bad", "kind": "ServiceAccount"}]}),
                r#"subjects[0].name: Invalid value: "subject:bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ),
            (
                "missing SA namespace",
                json!({"metadata": {"name": "master"}, "roleRef": ref_("ClusterRole", "valid"),
                       "subjects": [{"name": "good", "kind": "ServiceAccount"}]}),
                "subjects[0].namespace: Required value",
            ),
            (
                "missing subject name",
                json!({"metadata": {"name": "master"}, "roleRef": ref_("ClusterRole", "valid"),
                       "subjects": [{"namespace": "foo", "kind": "ServiceAccount"}]}),
                "subjects[0].name: Required value",
            ),
        ];
        for (name, v, want) in cases {
            assert_eq!(
                validate_cluster_role_binding(&crb(v)).to_string(),
                want,
                "{name}"
            );
        }
    }

    /// Upstream's `TestValidateRoleBinding`, with the texts.
    #[test]
    fn validate_role_binding_table() {
        let valid = rb(json!({
            "metadata": {"namespace": "default", "name": "master"},
            "roleRef": ref_("Role", "valid"),
            "subjects": [
                {"name": "validsaname", "kind": "ServiceAccount"},
                {"name": "valid@username", "kind": "User", "apiGroup": GROUP_NAME},
                {"name": "valid@groupname", "kind": "Group", "apiGroup": GROUP_NAME}
            ]
        }));
        assert!(validate_role_binding(&valid).is_empty());
        let cluster_ref = rb(json!({"metadata": {"namespace": "default", "name": "b"},
                                    "roleRef": ref_("ClusterRole", "view")}));
        assert!(
            validate_role_binding(&cluster_ref).is_empty(),
            "a ClusterRole may be bound in a namespace"
        );

        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "bad group",
                json!({"metadata": {"namespace": "default", "name": "default"},
                       "roleRef": {"apiGroup": "rbac.GroupName", "kind": "ClusterRole", "name": "valid"}}),
                r#"roleRef.apiGroup: Unsupported value: "rbac.GroupName": supported values: "rbac.authorization.k8s.io""#,
            ),
            (
                "bad kind",
                json!({"metadata": {"namespace": "default", "name": "default"}, "roleRef": ref_("Type", "valid")}),
                r#"roleRef.kind: Unsupported value: "Type": supported values: "Role", "ClusterRole""#,
            ),
            (
                "zero-length namespace",
                json!({"metadata": {"name": "default"}, "roleRef": ref_("Role", "valid")}),
                "metadata.namespace: Required value",
            ),
            (
                "zero-length name",
                json!({"metadata": {"namespace": "default"}, "roleRef": ref_("Role", "valid")}),
                "metadata.name: Required value: name or generateName is required",
            ),
            (
                "bad role",
                json!({"metadata": {"namespace": "default", "name": "default"},
                       "roleRef": {"apiGroup": GROUP_NAME, "kind": "Role"}}),
                "roleRef.name: Required value",
            ),
            (
                "bad subject kind",
                json!({"metadata": {"namespace": "default", "name": "master"}, "roleRef": ref_("Role", "valid"),
                       "subjects": [{"name": "subject"}]}),
                r#"subjects[0].kind: Unsupported value: "": supported values: "ServiceAccount", "User", "Group""#,
            ),
            (
                "bad subject name",
                json!({"metadata": {"namespace": "default", "name": "master"}, "roleRef": ref_("Role", "valid"),
                       "subjects": [{"name": "subject:bad", "kind": "ServiceAccount"}]}),
                r#"subjects[0].name: Invalid value: "subject:bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ),
            (
                "missing subject name",
                json!({"metadata": {"namespace": "default", "name": "master"}, "roleRef": ref_("Role", "valid"),
                       "subjects": [{"kind": "ServiceAccount"}]}),
                "subjects[0].name: Required value",
            ),
            (
                "empty roleRef",
                json!({"metadata": {"namespace": "default", "name": "x"}, "roleRef": {}}),
                r#"[roleRef.apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io", roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole", roleRef.name: Required value]"#,
            ),
        ];
        for (name, v, want) in cases {
            assert_eq!(validate_role_binding(&rb(v)).to_string(), want, "{name}");
        }
    }

    /// Upstream's `TestValidateRoleBindingUpdate`, with the text.
    #[test]
    fn validate_role_binding_update_table() {
        let old = rb(json!({
            "metadata": {"namespace": "default", "name": "master", "resourceVersion": "1"},
            "roleRef": ref_("Role", "valid")
        }));
        assert!(validate_role_binding_update(&old.clone(), &old).is_empty());
        let mut subjects = old.clone();
        subjects.subjects = Some(vec![
            serde_json::from_value(json!({"kind": "User", "name": "u", "apiGroup": GROUP_NAME}))
                .expect("subject"),
        ]);
        assert!(
            validate_role_binding_update(&subjects, &old).is_empty(),
            "subjects may change"
        );
        let changed = rb(json!({
            "metadata": {"namespace": "default", "name": "master", "resourceVersion": "1"},
            "roleRef": ref_("Role", "changed")
        }));
        assert_eq!(
            validate_role_binding_update(&changed, &old).to_string(),
            r#"roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"changed"}: cannot change roleRef"#
        );
        let old_crb = crb(json!({"metadata": {"name": "m", "resourceVersion": "1"},
                                 "roleRef": ref_("ClusterRole", "view")}));
        let new_crb = crb(json!({"metadata": {"name": "m", "resourceVersion": "1"},
                                 "roleRef": ref_("ClusterRole", "edit")}));
        assert_eq!(
            validate_cluster_role_binding_update(&new_crb, &old_crb).to_string(),
            r#"roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef"#
        );
    }

    #[test]
    fn strategies_default_and_refuse_role_ref_changes() {
        let stored = created::<ClusterRoleBindingStrategy>(&json!({
            "metadata": {"name": "readers"},
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [
                {"kind": "User", "name": "jane"},
                {"kind": "Group", "name": "devs"},
                {"kind": "ServiceAccount", "name": "default", "namespace": "ns", "apiGroup": ""}
            ]
        }))
        .expect("valid binding");
        assert_eq!(stored.role_ref.api_group.as_deref(), Some(GROUP_NAME));
        let groups: Vec<Option<&str>> = stored
            .subjects
            .iter()
            .flatten()
            .map(|s| s.api_group.as_deref())
            .collect();
        assert_eq!(groups, [Some(GROUP_NAME), Some(GROUP_NAME), None]);

        let absent = Absent::default();
        let ctx = Context {
            now: jiff::Timestamp::UNIX_EPOCH,
            absent: &absent,
        };
        let base = serde_json::to_value(&stored).expect("encode");
        let mut changed = crb(edited(base, |v| v["roleRef"]["name"] = json!("edit")));
        let err = admit_update::<ClusterRoleBindingStrategy>(&mut changed, &stored, &ctx)
            .expect_err("roleRef is immutable");
        assert_eq!(
            err.message(),
            r#"ClusterRoleBinding.rbac.authorization.k8s.io "readers" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef"#
        );

        let err = created::<RoleBindingStrategy>(&json!({
            "metadata": {"namespace": "ns", "name": "b"},
            "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "apiGroup": "v1"}]
        }))
        .expect_err("service accounts are in the core group");
        assert_eq!(
            err.to_string(),
            r#"subjects[0].apiGroup: Unsupported value: "v1": supported values: """#
        );
    }
}
