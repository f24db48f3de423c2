//! rbac.authorization.k8s.io bindings (upstream's `printRoleBinding`,
//! `printClusterRoleBinding`). Roles and ClusterRoles have no printer
//! upstream: they get the default Name / Created At table.

use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use super::cells;
use super::{Column, Printer, Row, decode};

/// The Role column's description: upstream takes it from the v1beta1 types,
/// whose text lacks v1's "This field is immutable."
const ROLE_BINDING_ROLE_REF: &str = "roleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.";
/// The same for ClusterRoleBindings.
const CLUSTER_ROLE_BINDING_ROLE_REF: &str = "roleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.";

fn columns(role_ref: &str) -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Role", "string", role_ref.to_owned()),
        Column::age(),
        Column::new("Users", "string", "Users in the roleBinding".to_owned()).wide(),
        Column::new("Groups", "string", "Groups in the roleBinding".to_owned()).wide(),
        Column::new(
            "ServiceAccounts",
            "string",
            "ServiceAccounts in the roleBinding".to_owned(),
        )
        .wide(),
    ]
}

/// `rbac.SubjectsStrings`: users, groups and `namespace/name` service
/// accounts, each joined with `", "` (other kinds are not shown).
fn subject_cells(subjects: &[Subject]) -> [Value; 3] {
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    for s in subjects {
        match s.kind.as_str() {
            "ServiceAccount" => sas.push(format!(
                "{}/{}",
                s.namespace.as_deref().unwrap_or_default(),
                s.name
            )),
            "User" => users.push(s.name.clone()),
            "Group" => groups.push(s.name.clone()),
            _ => {}
        }
    }
    [users, groups, sas].map(|v| json!(v.join(", ")))
}

fn row(meta: &ObjectMeta, role_ref: &RoleRef, subjects: &[Subject], now: jiff::Timestamp) -> Row {
    let mut cells = vec![
        cells::name(meta),
        json!(format!("{}/{}", role_ref.kind, role_ref.name)),
        cells::age(meta, now),
    ];
    cells.extend(subject_cells(subjects));
    Row::from(cells)
}

/// The RoleBinding printer: NAME ROLE AGE, wide USERS GROUPS SERVICEACCOUNTS.
pub const ROLE_BINDING: Printer = Printer {
    columns: || columns(ROLE_BINDING_ROLE_REF),
    row: |v, now| {
        let b = decode::<RoleBinding>(v)?;
        Some(row(
            &b.metadata,
            &b.role_ref,
            b.subjects.as_deref().unwrap_or_default(),
            now,
        ))
    },
};

/// The ClusterRoleBinding printer: the same columns.
pub const CLUSTER_ROLE_BINDING: Printer = Printer {
    columns: || columns(CLUSTER_ROLE_BINDING_ROLE_REF),
    row: |v, now| {
        let b = decode::<ClusterRoleBinding>(v)?;
        Some(row(
            &b.metadata,
            &b.role_ref,
            b.subjects.as_deref().unwrap_or_default(),
            now,
        ))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;

    fn now() -> Timestamp {
        "2026-01-03T00:00:00Z".parse().expect("time")
    }

    fn binding() -> Value {
        json!({
            "metadata": {"name": "binding1", "namespace": "default"},
            "subjects": [
                {"kind": "User", "name": "system:kube-controller-manager"},
                {"kind": "ServiceAccount", "name": "default", "namespace": "kube-system"}
            ],
            "roleRef": {"kind": "Role", "name": "extension-apiserver-authentication-reader"}
        })
    }

    /// Upstream `TestPrintRoleBinding` (always the wide cells).
    #[test]
    fn role_bindings() {
        let cells = (ROLE_BINDING.row)(&binding(), now())
            .expect("decodes")
            .cells;
        assert_eq!(
            cells,
            vec![
                json!("binding1"),
                json!("Role/extension-apiserver-authentication-reader"),
                json!("<unknown>"),
                json!("system:kube-controller-manager"),
                json!(""),
                json!("kube-system/default")
            ]
        );
        let names: Vec<String> = (ROLE_BINDING.columns)()
            .iter()
            .map(|c| format!("{}:{}", c.name, c.priority))
            .collect();
        assert_eq!(
            names,
            [
                "Name:0",
                "Role:0",
                "Age:0",
                "Users:1",
                "Groups:1",
                "ServiceAccounts:1"
            ]
        );
    }

    /// Upstream `TestPrintClusterRoleBinding`.
    #[test]
    fn cluster_role_bindings() {
        let mut v = binding();
        v["roleRef"] = json!({"kind": "ClusterRole", "name": "system:controller"});
        v["metadata"]["creationTimestamp"] = json!("2026-01-02T23:00:00Z");
        v["subjects"] = json!([
            {"kind": "Group", "name": "a"}, {"kind": "Group", "name": "b"},
            {"kind": "User", "name": "u1"}, {"kind": "User", "name": "u2"}
        ]);
        let cells = (CLUSTER_ROLE_BINDING.row)(&v, now())
            .expect("decodes")
            .cells;
        assert_eq!(
            cells,
            vec![
                json!("binding1"),
                json!("ClusterRole/system:controller"),
                json!("60m"),
                json!("u1, u2"),
                json!("a, b"),
                json!("")
            ]
        );
    }
}
