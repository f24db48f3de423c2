//! The metadata checks kube-apiserver's generic registry runs around every
//! strategy (`k8s.io/apiserver/pkg/registry/rest`):
//!
//! * `BeforeCreate` runs `ValidateObjectMetaAccessor` with the weak
//!   path-segment name rule **after** the strategy's `Validate`, and only
//!   when that returned no errors;
//! * `BeforeUpdate` runs `validateCommonFields` (the same accessor check
//!   plus `ValidateObjectMetaAccessorUpdate`) **before** the strategy's
//!   `ValidateUpdate` and reports both lists together.
//!
//! The Job and PodDisruptionBudget strategies call these so their error
//! lists are the ones kube-apiserver answers with. The EvictionRequest,
//! Eviction and Pod strategies validate metadata with the strict rules of
//! [`super`] only: for them the generic checks add nothing new (a DNS
//! subdomain is a valid path segment) and their error lists stay as they are.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{NameRule, validate_object_meta, validate_object_meta_update};
use crate::field::{Error, ErrorList, ErrorType, Path};

/// `IsValidPathSegmentName` (or `IsValidPathSegmentPrefix` for a
/// generateName prefix): no `.`/`..`, no `/` or `%`.
pub fn path_segment_name_errors(name: &str, prefix: bool) -> Vec<String> {
    if !prefix {
        for illegal in [".", ".."] {
            if name == illegal {
                return vec![format!("may not be '{illegal}'")];
            }
        }
    }
    ["/", "%"]
        .into_iter()
        .filter(|c| name.contains(c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

/// `ValidateObjectMetaAccessor(meta, namespaced=true, ValidatePathSegmentName)`.
pub fn validate_object_meta_generic(m: &ObjectMeta) -> ErrorList {
    validate_object_meta_generic_scoped(m, true)
}

/// `ValidateObjectMetaAccessor(meta, namespaced, ValidatePathSegmentName)`;
/// for a cluster-scoped kind the registry clears the namespace first.
pub fn validate_object_meta_generic_scoped(m: &ObjectMeta, namespaced: bool) -> ErrorList {
    let path = Path::new("metadata");
    let name_path = path.child("name");
    let gen_path = path.child("generateName");
    let mut errs = ErrorList::new();
    if let Some(g) = m.generate_name.as_deref().filter(|g| !g.is_empty()) {
        for msg in path_segment_name_errors(g, true) {
            errs.push(Error::invalid(&gen_path, g, msg));
        }
    }
    match m.name.as_deref().filter(|n| !n.is_empty()) {
        None => errs.push(Error::required(
            &name_path,
            "name or generateName is required",
        )),
        Some(n) => {
            for msg in path_segment_name_errors(n, false) {
                errs.push(Error::invalid(&name_path, n, msg));
            }
        }
    }
    // Everything after the name rules is shared with the strict check; its
    // own name errors (DNS subdomain) do not apply here.
    let cleared;
    let m = if namespaced {
        m
    } else {
        cleared = ObjectMeta {
            namespace: None,
            ..m.clone()
        };
        &cleared
    };
    let rest = validate_object_meta(m, namespaced, NameRule::Subdomain)
        .into_iter()
        .filter(|e| {
            let about_name = e.field == name_path.as_str() || e.field == gen_path.as_str();
            !(about_name && matches!(e.error_type, ErrorType::Invalid | ErrorType::Required))
        });
    errs.extend(rest);
    errs
}

/// `BeforeCreate`'s order: the strategy's `Validate` errors, or — only when
/// there are none — [`validate_object_meta_generic`].
pub fn before_create(strategy_errs: ErrorList, m: &ObjectMeta) -> ErrorList {
    if strategy_errs.is_empty() {
        validate_object_meta_generic(m)
    } else {
        strategy_errs
    }
}

/// [`before_create`] for a namespaced or a cluster-scoped kind.
pub fn before_create_scoped(
    strategy_errs: ErrorList,
    m: &ObjectMeta,
    namespaced: bool,
) -> ErrorList {
    if strategy_errs.is_empty() {
        validate_object_meta_generic_scoped(m, namespaced)
    } else {
        strategy_errs
    }
}

/// `validateCommonFields` of `BeforeUpdate`.
pub fn validate_common_fields(new: &ObjectMeta, old: &ObjectMeta) -> ErrorList {
    validate_common_fields_scoped(new, old, true)
}

/// `validateCommonFields` of `BeforeUpdate` for a namespaced or a
/// cluster-scoped kind (whose namespace the registry clears first).
pub fn validate_common_fields_scoped(
    new: &ObjectMeta,
    old: &ObjectMeta,
    namespaced: bool,
) -> ErrorList {
    let mut errs = validate_object_meta_generic_scoped(new, namespaced);
    if namespaced {
        errs.append(validate_object_meta_update(new, old));
    } else {
        let cleared = ObjectMeta {
            namespace: None,
            ..new.clone()
        };
        errs.append(validate_object_meta_update(&cleared, old));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weak_name_rule() {
        let m = ObjectMeta {
            name: Some("Not_A_DNS.Name".into()),
            namespace: Some("default".into()),
            ..Default::default()
        };
        assert!(validate_object_meta_generic(&m).is_empty());
        let m = ObjectMeta {
            name: Some("a/b%".into()),
            namespace: None,
            ..Default::default()
        };
        assert_eq!(
            validate_object_meta_generic(&m).to_string(),
            r#"[metadata.name: Invalid value: "a/b%": may not contain '/', metadata.name: Invalid value: "a/b%": may not contain '%', metadata.namespace: Required value]"#
        );
        let m = ObjectMeta {
            name: Some("..".into()),
            namespace: Some("ns".into()),
            ..Default::default()
        };
        assert_eq!(
            validate_object_meta_generic(&m).to_string(),
            r#"metadata.name: Invalid value: "..": may not be '..'"#
        );
    }
}
