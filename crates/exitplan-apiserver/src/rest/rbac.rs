//! RBAC inside the server: the policy snapshot every request is authorized
//! against (rebuilt when a Role, ClusterRole or binding changes), the
//! default roles and bindings reconciled at start-up (kube-apiserver's
//! `rbac/bootstrap-roles` post-start hook), and ClusterRole aggregation
//! (kube-controller-manager's clusterrole-aggregation controller, run here
//! after every ClusterRole write so a server without controllers — the
//! in-process test server — has `admin`, `edit` and `view` filled in).

use std::sync::{Arc, RwLock};

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use serde::de::DeserializeOwned;
use serde_json::Value;

use exitplan_authz::rbac::escalation::{
    check_binding_write, check_role_write, is_only_mutating_gc_fields,
};
use exitplan_authz::rbac::reconcile::{
    Operation, Reconciled, reconcile_cluster_role, reconcile_cluster_role_binding,
};
use exitplan_authz::rbac::{Policy, aggregation, bootstrap, controller_roles};
use exitplan_authz::{Attributes, Decision, Forbidden, UserInfo, groups};

use super::state::State;
use crate::registry::{ResourceDef, find};
use crate::storage::{Precondition, Store};

/// The RBAC group.
const GROUP: &str = "rbac.authorization.k8s.io";
/// The four RBAC resources, in the order the fingerprint lists them.
const RESOURCES: [&str; 4] = [
    "roles",
    "rolebindings",
    "clusterroles",
    "clusterrolebindings",
];
/// The field manager of the server's own RBAC writes.
const MANAGER: &str = "kube-apiserver";

/// The four RBAC resources' definitions (`None` if RBAC is not served).
fn defs() -> Option<[&'static ResourceDef; 4]> {
    let [a, b, c, d] = RESOURCES.map(|r| find(GROUP, "v1", r));
    Some([a?, b?, c?, d?])
}

type Fingerprint = [(usize, u64); 4];

/// The current policy snapshot and what it was built from.
#[derive(Debug, Default)]
pub struct RbacCache {
    current: RwLock<Option<(Fingerprint, Arc<Policy>)>>,
}

/// Every object under `def`'s storage, decoded; undecodable ones are
/// logged and skipped (they grant nothing).
fn objects<T: DeserializeOwned>(store: &Store, def: &ResourceDef) -> Vec<T> {
    let (items, _) = store.list(&def.prefix(None));
    items
        .iter()
        .filter_map(|o| {
            let decoded = o
                .value()
                .map_err(|e| e.to_string())
                .and_then(|v| serde_json::from_value(v).map_err(|e| e.to_string()));
            decoded
                .map_err(
                    |e| tracing::warn!(key = o.key.as_str(), error = %e, "RBAC object skipped"),
                )
                .ok()
        })
        .collect()
}

impl RbacCache {
    /// The policy as stored now: the cached snapshot while no RBAC object
    /// changed, else a new one.
    pub fn policy(&self, store: &Store) -> Arc<Policy> {
        let Some(defs) = defs() else {
            return Arc::new(Policy::new(vec![], vec![], vec![], vec![]));
        };
        let fingerprint: Fingerprint = defs.map(|d| store.fingerprint(&d.prefix(None)));
        if let Ok(guard) = self.current.read()
            && let Some((f, policy)) = guard.as_ref()
            && *f == fingerprint
        {
            return policy.clone();
        }
        let [roles, bindings, cluster_roles, cluster_bindings] = defs;
        let policy = Arc::new(Policy::new(
            objects::<Role>(store, roles),
            objects::<RoleBinding>(store, bindings),
            objects::<ClusterRole>(store, cluster_roles),
            objects::<ClusterRoleBinding>(store, cluster_bindings),
        ));
        if let Ok(mut guard) = self.current.write() {
            *guard = Some((fingerprint, policy.clone()));
        }
        policy
    }
}

/// kube-apiserver's authorizer chain: members of `system:masters` may do
/// anything (the privileged-groups authorizer, answering with no reason),
/// everyone else what RBAC allows. RBAC never denies, it only has no
/// opinion, so a request nobody allowed is forbidden.
#[derive(Clone, Copy, Debug, Default)]
pub struct RbacAuthorizer;

impl crate::authn::Authorize for RbacAuthorizer {
    fn authorize(&self, state: &State, attrs: &Attributes) -> Decision {
        if attrs.user.in_group(groups::SYSTEM_MASTERS) {
            return Decision::Allow(String::new());
        }
        state.rbac.policy(&state.store).authorize(attrs)
    }
}

/// The stored object `name` of `def`, decoded.
fn stored<T: DeserializeOwned>(state: &State, def: &ResourceDef, name: &str) -> Option<T> {
    let value = state.store.get(&def.key(None, name))?.value().ok()?;
    serde_json::from_value(value).ok()
}

/// Writes a reconciled object: creates, updates or recreates it.
async fn write<T: serde::Serialize>(
    state: &State,
    def: &'static ResourceDef,
    name: &str,
    r: Reconciled<T>,
) -> Result<(), String> {
    if r.protected || r.operation == Operation::None {
        return Ok(());
    }
    let object = serde_json::to_value(&r.object).map_err(|e| e.to_string())?;
    match r.operation {
        Operation::None => Ok(()),
        Operation::Create => create(state, def, object).await,
        Operation::Update => update(state, def, name, object).await,
        Operation::Recreate => {
            let key = def.key(None, name);
            state
                .store
                .delete(&key, Precondition::None)
                .await
                .map_err(|e| e.to_string())?;
            create(state, def, object).await
        }
    }
}

async fn create(state: &State, def: &'static ResourceDef, object: Value) -> Result<(), String> {
    match super::create::create_object(state, def, object, MANAGER, false, true, None).await {
        Ok(_) => Ok(()),
        Err(e) if e.reason() == "AlreadyExists" => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

async fn update(
    state: &State,
    def: &'static ResourceDef,
    name: &str,
    mut object: Value,
) -> Result<(), String> {
    let Some(current) = state.store.get(&def.key(None, name)) else {
        return create(state, def, object).await;
    };
    if let Some(meta) = object
        .pointer_mut("/metadata")
        .and_then(Value::as_object_mut)
    {
        meta.insert(
            "resourceVersion".into(),
            current.revision.to_string().into(),
        );
    }
    super::update::update_object(
        state,
        super::update::Update {
            def,
            current,
            old: None,
            new: object,
            subresource: None,
            manager: MANAGER,
            dry_run: false,
            record: true,
            caller: None,
        },
    )
    .await
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// Reconciles the default ClusterRoles and ClusterRoleBindings (created if
/// missing, missing permissions, labels and annotations added, unless the
/// stored one says `rbac.authorization.kubernetes.io/autoupdate: "false"`),
/// then aggregates. Errors are logged: the next start retries.
pub async fn bootstrap(state: &State) {
    let Some([_, _, roles_def, bindings_def]) = defs() else {
        return;
    };
    let roles = bootstrap::cluster_roles()
        .into_iter()
        .chain(controller_roles::controller_roles());
    for expected in roles {
        let name = expected.metadata.name.clone().unwrap_or_default();
        let existing: Option<ClusterRole> = stored(state, roles_def, &name);
        let r = reconcile_cluster_role(existing.as_ref(), &expected, false);
        if let Err(e) = write(state, roles_def, &name, r).await {
            tracing::warn!(cluster_role = %name, error = %e, "default ClusterRole not reconciled");
        }
    }
    let bindings = bootstrap::cluster_role_bindings()
        .into_iter()
        .chain(controller_roles::controller_role_bindings());
    for expected in bindings {
        let name = expected.metadata.name.clone().unwrap_or_default();
        let existing: Option<ClusterRoleBinding> = stored(state, bindings_def, &name);
        let r = reconcile_cluster_role_binding(existing.as_ref(), &expected, false);
        if let Err(e) = write(state, bindings_def, &name, r).await {
            tracing::warn!(binding = %name, error = %e, "default ClusterRoleBinding not reconciled");
        }
    }
    aggregate(state).await;
}

/// Whether a write to `def` may change what aggregation computes.
pub fn writes_cluster_roles(def: &ResourceDef) -> bool {
    def.group == GROUP && def.plural == "clusterroles"
}

/// Fills in the rules of every ClusterRole with an `aggregationRule` from
/// the ClusterRoles its selectors match, writing those that changed.
pub async fn aggregate(state: &State) {
    let Some([_, _, roles_def, _]) = defs() else {
        return;
    };
    let _one_at_a_time = state.rbac_aggregation.lock().await;
    let roles: Vec<ClusterRole> = objects(&state.store, roles_def);
    for (name, rules) in aggregation::aggregate(&roles) {
        let Some(mut role) = roles
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(name.as_str()))
            .cloned()
        else {
            continue;
        };
        role.rules = Some(rules);
        let result = match serde_json::to_value(&role) {
            Ok(object) => update(state, roles_def, &name, object).await,
            Err(e) => Err(e.to_string()),
        };
        match result {
            Ok(()) => tracing::debug!(cluster_role = %name, "aggregated"),
            Err(e) => tracing::warn!(cluster_role = %name, error = %e, "aggregation not written"),
        }
    }
}

/// Decodes a role or binding for the escalation check; an object that does
/// not decode is left to validation (which refuses it).
fn typed<T: DeserializeOwned>(v: &Value) -> Option<T> {
    serde_json::from_value(v.clone()).ok()
}

/// kube-apiserver's RBAC escalation prevention (the `policybased` role and
/// binding storages), run on creates and updates of the four RBAC kinds
/// after mutating admission: a Role or ClusterRole may grant only what the
/// writer holds (unless it may `escalate` the role; an `aggregationRule`
/// needs every permission), a binding may reference only a role whose
/// rules the writer holds (unless it may `bind` it). `name` is the URL's
/// name (empty on create); `old` the stored object on update, whose
/// GC-only changes (owner references, finalizers) are not checked.
#[allow(clippy::too_many_arguments)]
pub fn check_escalation(
    state: &State,
    def: &ResourceDef,
    user: &UserInfo,
    namespace: &str,
    name: &str,
    new: &Value,
    old: Option<&Value>,
) -> Result<(), super::errors::ApiError> {
    if def.group != GROUP || user.in_group(groups::SYSTEM_MASTERS) {
        return Ok(());
    }
    let ns = if def.namespaced { namespace } else { "" };
    let refused = |e: exitplan_authz::rbac::escalation::WriteError| {
        let object = new
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or(name);
        let f = Forbidden::new(def.group, def.plural, object, e);
        super::errors::forbidden(&f.group, &f.resource, &f.name, &f.detail)
    };
    let policy = state.rbac.policy(&state.store);
    match def.plural {
        "roles" | "clusterroles" => {
            let request = Attributes {
                user: user.clone(),
                verb: if old.is_some() { "update" } else { "create" }.into(),
                resource_request: true,
                namespace: ns.to_owned(),
                api_group: GROUP.into(),
                api_version: "v1".into(),
                resource: def.plural.into(),
                subresource: String::new(),
                name: name.to_owned(),
                path: String::new(),
            };
            let (rules, aggregation) = if def.plural == "roles" {
                let Some(role) = typed::<Role>(new) else {
                    return Ok(());
                };
                if let Some(old) = old.and_then(typed::<Role>)
                    && is_only_mutating_gc_fields(&role, &old)
                {
                    return Ok(());
                }
                (role.rules.unwrap_or_default(), false)
            } else {
                let Some(role) = typed::<ClusterRole>(new) else {
                    return Ok(());
                };
                let old = old.and_then(typed::<ClusterRole>);
                if let Some(old) = &old
                    && is_only_mutating_gc_fields(&role, old)
                {
                    return Ok(());
                }
                let aggregation = role.aggregation_rule.is_some()
                    || old.as_ref().is_some_and(|o| o.aggregation_rule.is_some());
                (role.rules.unwrap_or_default(), aggregation)
            };
            check_role_write(&policy, &request, &rules, aggregation).map_err(refused)
        }
        "rolebindings" => {
            let Some(binding) = typed::<RoleBinding>(new) else {
                return Ok(());
            };
            if let Some(old) = old.and_then(typed::<RoleBinding>)
                && is_only_mutating_gc_fields(&binding, &old)
            {
                return Ok(());
            }
            check_binding_write(&policy, user, &binding.role_ref, ns).map_err(refused)
        }
        "clusterrolebindings" => {
            let Some(binding) = typed::<ClusterRoleBinding>(new) else {
                return Ok(());
            };
            if let Some(old) = old.and_then(typed::<ClusterRoleBinding>)
                && is_only_mutating_gc_fields(&binding, &old)
            {
                return Ok(());
            }
            check_binding_write(&policy, user, &binding.role_ref, "").map_err(refused)
        }
        _ => Ok(()),
    }
}
