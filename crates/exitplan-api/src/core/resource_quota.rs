//! core/v1 ResourceQuota: validation (`ValidateResourceQuota*` of
//! `pkg/apis/core/validation`, with the quota helpers of
//! `pkg/apis/core/helper`) and the registry strategy
//! (`pkg/registry/core/resourcequota`): `hard` names and quantities, scopes
//! (supported, valid for the limited resources, not conflicting, immutable)
//! and scope selectors.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{ResourceQuota, ResourceQuotaSpec, ResourceQuotaStatus};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;

use super::persistent_volume::quantity;
use super::validation::resources::{is_huge_page, validate_quantity_value, validate_resource_name};
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, FIELD_IMMUTABLE, NameRule};
use crate::render;
use crate::strategy::{Context, Strategy};

/// `isInvalidQuotaResource`.
pub const INVALID_QUOTA_RESOURCE: &str = "must be a standard resource for quota";

/// `standardQuotaResources`.
const STANDARD_QUOTA_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

/// The scopes a quota may name (`standardResourceQuotaScopes`).
pub const STANDARD_SCOPES: &[&str] = &[
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
];

const POD_COMPUTE: &[&str] = &[
    "cpu",
    "limits.cpu",
    "limits.memory",
    "memory",
    "requests.cpu",
    "requests.memory",
];

/// `IsStandardQuotaResourceName`.
pub fn is_standard_quota_resource_name(name: &str) -> bool {
    STANDARD_QUOTA_RESOURCES.contains(&name)
        || is_huge_page(name)
        || name.starts_with("requests.hugepages-")
}

/// `IsResourceQuotaScopeValidForResource`.
pub fn is_scope_valid_for_resource(scope: &str, resource: &str) -> bool {
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => resource == "pods" || POD_COMPUTE.contains(&resource),
        "BestEffort" => resource == "pods",
        "VolumeAttributesClass" => {
            resource == "persistentvolumeclaims" || resource == "requests.storage"
        }
        _ => true,
    }
}

/// `ValidateResourceQuotaResourceName`.
pub fn validate_quota_resource_name(name: &str, path: &Path) -> ErrorList {
    let mut errs = validate_resource_name(name, path);
    if !name.contains('/') && !is_standard_quota_resource_name(name) {
        errs.push(Error::invalid(path, name, INVALID_QUOTA_RESOURCE));
    }
    errs
}

fn validate_list(list: Option<&BTreeMap<String, WireQuantity>>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (k, v) in list.into_iter().flatten() {
        let p = path.key(k);
        errs.append(validate_quota_resource_name(k, &p));
        errs.append(validate_quantity_value(k, &quantity(v), &p));
    }
    errs
}

const CONFLICTING: [[&str; 2]; 2] = [
    ["BestEffort", "NotBestEffort"],
    ["Terminating", "NotTerminating"],
];

fn conflicting(scopes: &BTreeSet<&str>) -> usize {
    CONFLICTING
        .iter()
        .filter(|pair| pair.iter().all(|s| scopes.contains(s)))
        .count()
}

fn scopes_value(scopes: Option<&Vec<String>>) -> BadValue {
    scopes.map_or(BadValue::Null, |s| BadValue::Json(render::strings(s)))
}

/// `validateResourceQuotaScopes`.
fn validate_scopes(spec: &ResourceQuotaSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let scopes = spec.scopes.as_deref().unwrap_or_default();
    if scopes.is_empty() {
        return errs;
    }
    let p = path.child("scopes");
    let hard: Vec<&String> = spec.hard.iter().flat_map(BTreeMap::keys).collect();
    let mut set = BTreeSet::new();
    for scope in scopes {
        if !STANDARD_SCOPES.contains(&scope.as_str()) {
            errs.push(Error::invalid(
                &p,
                scopes_value(spec.scopes.as_ref()),
                "unsupported scope",
            ));
        }
        for k in &hard {
            if is_standard_quota_resource_name(k) && !is_scope_valid_for_resource(scope, k) {
                errs.push(Error::invalid(
                    &p,
                    scopes_value(spec.scopes.as_ref()),
                    "unsupported scope applied to resource",
                ));
            }
        }
        set.insert(scope.as_str());
    }
    for _ in 0..conflicting(&set) {
        errs.push(Error::invalid(
            &p,
            scopes_value(spec.scopes.as_ref()),
            "conflicting scopes",
        ));
    }
    errs
}

/// `validateScopedResourceSelectorRequirement` (when a scopeSelector is set).
fn validate_scope_selector(spec: &ResourceQuotaSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(selector) = &spec.scope_selector else {
        return errs;
    };
    let p = path.child("scopeSelector").child("matchExpressions");
    let hard: Vec<&String> = spec.hard.iter().flat_map(BTreeMap::keys).collect();
    let mut set = BTreeSet::new();
    for req in selector.match_expressions.iter().flatten() {
        let scope = req.scope_name.as_str();
        if !STANDARD_SCOPES.contains(&scope) {
            errs.push(Error::invalid(
                &p.child("scopeName"),
                scope,
                "unsupported scope",
            ));
        }
        for k in &hard {
            if is_standard_quota_resource_name(k) && !is_scope_valid_for_resource(scope, k) {
                errs.push(Error::invalid(
                    &p,
                    BadValue::Json(render::json(selector)),
                    "unsupported scope applied to resource",
                ));
            }
        }
        let op = req.operator.as_str();
        if matches!(
            scope,
            "BestEffort"
                | "NotBestEffort"
                | "Terminating"
                | "NotTerminating"
                | "CrossNamespacePodAffinity"
        ) && op != "Exists"
        {
            errs.push(Error::invalid(
                &p.child("operator"),
                op,
                "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ));
        }
        let values = req.values.as_deref().unwrap_or_default();
        match op {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(Error::required(
                        &p.child("values"),
                        "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(Error::invalid(
                        &p.child("values"),
                        BadValue::Json(render::strings(values)),
                        "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                    ));
                }
            }
            _ => errs.push(Error::invalid(
                &p.child("operator"),
                op,
                "not a valid selector operator",
            )),
        }
        set.insert(scope);
    }
    for _ in 0..conflicting(&set) {
        errs.push(Error::invalid(
            &p,
            scopes_value(spec.scopes.as_ref()),
            "conflicting scopes",
        ));
    }
    errs
}

/// `ValidateResourceQuotaSpec`: hard names and quantities, scopes and the
/// scope selector.
pub fn validate_resource_quota_spec(spec: &ResourceQuotaSpec, path: &Path) -> ErrorList {
    let mut errs = validate_list(spec.hard.as_ref(), &path.child("hard"));
    errs.append(validate_scopes(spec, path));
    errs.append(validate_scope_selector(spec, path));
    errs
}

/// `ValidateResourceQuotaStatus`: `hard` and `used` names and quantities.
pub fn validate_resource_quota_status(status: &ResourceQuotaStatus, path: &Path) -> ErrorList {
    let mut errs = validate_list(status.hard.as_ref(), &path.child("hard"));
    errs.append(validate_list(status.used.as_ref(), &path.child("used")));
    errs
}

/// `ValidateResourceQuota`.
pub fn validate_resource_quota(rq: &ResourceQuota) -> ErrorList {
    let mut errs = meta::validate_object_meta(&rq.metadata, true, NameRule::Subdomain);
    errs.append(validate_resource_quota_spec(
        &rq.spec.clone().unwrap_or_default(),
        &Path::new("spec"),
    ));
    errs.append(validate_resource_quota_status(
        &rq.status.clone().unwrap_or_default(),
        &Path::new("status"),
    ));
    errs
}

/// `ValidateResourceQuotaUpdate`: metadata update rules, the new spec, and
/// scopes that may not change.
pub fn validate_resource_quota_update(new: &ResourceQuota, old: &ResourceQuota) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    let spec = new.spec.clone().unwrap_or_default();
    errs.append(validate_resource_quota_spec(&spec, &Path::new("spec")));
    let scopes = |rq: &ResourceQuota| -> BTreeSet<String> {
        rq.spec
            .iter()
            .flat_map(|s| s.scopes.iter().flatten().cloned())
            .collect()
    };
    if scopes(new) != scopes(old) {
        errs.push(Error::invalid(
            &Path::new("spec").child("scopes"),
            scopes_value(spec.scopes.as_ref()),
            FIELD_IMMUTABLE,
        ));
    }
    errs
}

/// `ValidateResourceQuotaStatusUpdate`.
pub fn validate_resource_quota_status_update(
    new: &ResourceQuota,
    old: &ResourceQuota,
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
    errs.append(validate_resource_quota_status(
        &new.status.clone().unwrap_or_default(),
        &Path::new("status"),
    ));
    errs
}

impl crate::quantities::Quantities for ResourceQuota {
    fn visit_quantities<'a>(&'a self, f: &mut dyn FnMut(&'a WireQuantity)) {
        let spec = self
            .spec
            .iter()
            .flat_map(|s| s.hard.iter().flat_map(BTreeMap::values));
        let status = self.status.iter().flat_map(|s| {
            s.hard
                .iter()
                .flat_map(BTreeMap::values)
                .chain(s.used.iter().flat_map(BTreeMap::values))
        });
        for q in spec.chain(status) {
            f(q);
        }
    }
}

/// Create, update and status-update rules of core/v1 ResourceQuotas.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceQuotaStrategy;

impl Strategy for ResourceQuotaStrategy {
    type Object = ResourceQuota;

    /// Status cleared (the quota controller fills it).
    fn prepare_for_create(obj: &mut ResourceQuota) {
        obj.status = Some(ResourceQuotaStatus::default());
    }

    fn validate_create(obj: &ResourceQuota, _ctx: &Context<'_>) -> ErrorList {
        before_create(validate_resource_quota(obj), &obj.metadata)
    }

    /// Status kept.
    fn prepare_for_update(new: &mut ResourceQuota, old: &ResourceQuota) {
        new.status.clone_from(&old.status);
    }

    fn validate_update(new: &ResourceQuota, old: &ResourceQuota, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_resource_quota_update(new, old));
        errs
    }

    /// Spec kept.
    fn prepare_for_status_update(new: &mut ResourceQuota, old: &ResourceQuota) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(
        new: &ResourceQuota,
        old: &ResourceQuota,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_resource_quota_status_update(new, old));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::{admit_create, admit_status_update};
    use serde_json::{Value, json};

    fn rq(spec: Value) -> ResourceQuota {
        serde_json::from_value(json!({
            "metadata": {"name": "abc", "namespace": "foo", "resourceVersion": "1"},
            "spec": spec,
        }))
        .expect("quota")
    }

    fn compute() -> Value {
        json!({"cpu": "100", "memory": "10000", "requests.cpu": "100", "requests.memory": "10000", "limits.cpu": "100", "limits.memory": "10000"})
    }

    /// `TestValidateResourceQuota` of upstream's validation_test.go.
    #[test]
    fn validate_resource_quota_table() {
        let ok = [
            (
                "non-best-effort",
                json!({"hard": compute(), "scopes": ["NotBestEffort"]}),
            ),
            (
                "fractional compute",
                json!({"hard": {"cpu": "100m", "memory": "10000", "requests.storage": "10G", "pods": "5", "services": "10", "persistentvolumeclaims": "10", "count/deployments.apps": "4", "hugepages-2Mi": "4Mi", "requests.hugepages-2Mi": "4Mi"}}),
            ),
            (
                "best-effort",
                json!({"hard": {"pods": "5"}, "scopes": ["BestEffort"]}),
            ),
            (
                "scope selector",
                json!({"hard": compute(), "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["cluster-services"]}]}}),
            ),
            (
                "cross-namespace pod affinity",
                json!({"hard": {"pods": "5"}, "scopeSelector": {"matchExpressions": [{"scopeName": "CrossNamespacePodAffinity", "operator": "Exists"}]}}),
            ),
            (
                "volume attributes class",
                json!({"hard": {"persistentvolumeclaims": "5", "requests.storage": "10Gi"}, "scopeSelector": {"matchExpressions": [{"scopeName": "VolumeAttributesClass", "operator": "In", "values": ["gold"]}]}}),
            ),
        ];
        for (name, spec) in ok {
            let errs = validate_resource_quota(&rq(spec));
            assert!(errs.is_empty(), "{name}: {errs}");
        }
        let mut bad_name = rq(json!({"hard": compute()}));
        bad_name.metadata.name = Some("!@#$%^".into());
        let mut bad_ns = rq(json!({"hard": compute()}));
        bad_ns.metadata.namespace = Some("^Invalid".into());
        let cases: Vec<(&str, ResourceQuota, &str)> = vec![
            (
                "negative-limits",
                rq(json!({"hard": {"cpu": "-100"}})),
                r#"spec.hard[cpu]: Invalid value: "-100": must be greater than or equal to 0"#,
            ),
            (
                "fractional-api-resource",
                rq(json!({"hard": {"pods": "0.5"}})),
                r#"spec.hard[pods]: Invalid value: "500m": must be an integer"#,
            ),
            (
                "invalid-quota-resource",
                rq(json!({"hard": {"storage": "10G"}})),
                r#"spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota"#,
            ),
            (
                "non-standard resource",
                rq(json!({"hard": {"foo": "1"}})),
                r#"[spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified, spec.hard[foo]: Invalid value: "foo": must be a standard resource for quota]"#,
            ),
            (
                "invalid-quota-terminating-pair",
                rq(json!({"hard": compute(), "scopes": ["Terminating", "NotTerminating"]})),
                r#"spec.scopes: Invalid value: ["Terminating","NotTerminating"]: conflicting scopes"#,
            ),
            (
                "invalid-quota-besteffort",
                rq(json!({"hard": {"pods": "5", "cpu": "1"}, "scopes": ["BestEffort"]})),
                r#"spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource"#,
            ),
            (
                "invalid-quota-scope-name",
                rq(json!({"hard": {"pods": "5"}, "scopes": ["foo"]})),
                r#"spec.scopes: Invalid value: ["foo"]: unsupported scope"#,
            ),
            (
                "invalid-cross-namespace-affinity operator",
                rq(
                    json!({"hard": {"pods": "5"}, "scopeSelector": {"matchExpressions": [{"scopeName": "CrossNamespacePodAffinity", "operator": "In", "values": ["x"]}]}}),
                ),
                "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ),
            (
                "scope selector In without values",
                rq(
                    json!({"hard": {"pods": "5"}, "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In"}]}}),
                ),
                "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            ),
            (
                "scope selector Exists with values",
                rq(
                    json!({"hard": {"pods": "5"}, "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "Exists", "values": ["a"]}]}}),
                ),
                r#"spec.scopeSelector.matchExpressions.values: Invalid value: ["a"]: must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"#,
            ),
            (
                "scope selector bad operator",
                rq(
                    json!({"hard": {"pods": "5"}, "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "Bogus", "values": ["a"]}]}}),
                ),
                r#"spec.scopeSelector.matchExpressions.operator: Invalid value: "Bogus": not a valid selector operator"#,
            ),
            (
                "invalid-name",
                bad_name,
                r#"metadata.name: Invalid value: "!@#$%^": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ),
            (
                "invalid-namespace",
                bad_ns,
                r#"metadata.namespace: Invalid value: "^Invalid": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"#,
            ),
        ];
        for (name, q, want) in cases {
            assert_eq!(validate_resource_quota(&q).to_string(), want, "{name}");
        }
    }

    #[test]
    fn scopes_are_immutable() {
        let old = rq(json!({"hard": {"pods": "5"}, "scopes": ["BestEffort"]}));
        let same = rq(json!({"hard": {"pods": "10"}, "scopes": ["BestEffort"]}));
        assert!(validate_resource_quota_update(&same, &old).is_empty());
        let changed = rq(json!({"hard": {"pods": "5"}, "scopes": ["NotBestEffort"]}));
        assert_eq!(
            validate_resource_quota_update(&changed, &old).to_string(),
            r#"spec.scopes: Invalid value: ["NotBestEffort"]: field is immutable"#
        );
    }

    #[test]
    fn strategy_clears_status_and_guards_status_updates() {
        let absent = Absent::default();
        let ctx = Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent: &absent,
        };
        let mut q = rq(json!({"hard": {"pods": "5"}}));
        q.status = Some(ResourceQuotaStatus {
            used: Some([("pods".to_owned(), WireQuantity("-1".into()))].into()),
            ..Default::default()
        });
        admit_create::<ResourceQuotaStrategy>(&mut q, &ctx).expect("status cleared");
        assert_eq!(q.status, Some(ResourceQuotaStatus::default()));
        let mut new = q.clone();
        new.status = Some(ResourceQuotaStatus {
            used: Some([("pods".to_owned(), WireQuantity("-1".into()))].into()),
            ..Default::default()
        });
        let err =
            admit_status_update::<ResourceQuotaStrategy>(&mut new, &q, &ctx).expect_err("negative");
        assert_eq!(
            err.errors.to_string(),
            r#"status.used[pods]: Invalid value: "-1": must be greater than or equal to 0"#
        );
    }
}
