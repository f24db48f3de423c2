//! Namespace (`pkg/registry/core/namespace/strategy.go`,
//! `ValidateNamespace*` in `pkg/apis/core/validation`): cluster-scoped, the
//! name a DNS label, `spec.finalizers` always holding `kubernetes` on create,
//! `status.phase` `Active` on create and guarded on `/status`; the
//! `/finalize` subresource ([`NamespaceFinalizeStrategy`]) that changes
//! `spec.finalizers`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Namespace, NamespaceSpec, NamespaceStatus};

use crate::field::{Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, NameRule};
use crate::strategy::{Context, Strategy};

/// The finalizer kube-apiserver puts on every namespace.
pub const FINALIZER_KUBERNETES: &str = "kubernetes";
/// Finalizer names that need no domain prefix.
pub const STANDARD_FINALIZERS: &[&str] = &[FINALIZER_KUBERNETES, "orphan", "foregroundDeletion"];
/// `Active`.
pub const PHASE_ACTIVE: &str = "Active";
/// `Terminating`.
pub const PHASE_TERMINATING: &str = "Terminating";
/// The label every namespace carries with its own name.
pub const LABEL_METADATA_NAME: &str = "kubernetes.io/metadata.name";

/// `validateFinalizerName` of core validation (errors at the list's path).
fn validate_finalizer_name(value: &str, path: &Path) -> ErrorList {
    let mut errs: ErrorList = formats::is_qualified_name(value)
        .into_iter()
        .map(|m| Error::invalid(path, value, m))
        .collect();
    if !value.contains('/') && !STANDARD_FINALIZERS.contains(&value) {
        errs.push(Error::invalid(
            path,
            value,
            "name is neither a standard finalizer name nor is it fully qualified",
        ));
    }
    errs
}

/// `ValidateNamespace`.
pub fn validate_namespace(ns: &Namespace) -> ErrorList {
    let mut errs = meta::validate_object_meta(&ns.metadata, false, NameRule::Label);
    let path = Path::new("spec").child("finalizers");
    for f in ns
        .spec
        .as_ref()
        .and_then(|s| s.finalizers.as_deref())
        .unwrap_or_default()
    {
        errs.append(validate_finalizer_name(f, &path));
    }
    errs
}

fn phase(ns: &Namespace) -> &str {
    ns.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

/// `ValidateNamespaceStatusUpdate`.
pub fn validate_namespace_status_update(new: &Namespace, old: &Namespace) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    let path = Path::new("status").child("Phase");
    let phase = phase(new);
    if new.metadata.deletion_timestamp.is_none() {
        if phase != PHASE_ACTIVE {
            errs.push(Error::invalid(
                &path,
                phase,
                "may only be 'Active' if `deletionTimestamp` is empty",
            ));
        }
    } else if phase != PHASE_TERMINATING {
        errs.push(Error::invalid(
            &path,
            phase,
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        ));
    }
    errs
}

/// `ValidateNamespaceFinalizeUpdate`: metadata update rules, and each
/// finalizer a standard or qualified name (at `spec.finalizers[i]`).
pub fn validate_namespace_finalize_update(new: &Namespace, old: &Namespace) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    let path = Path::new("spec").child("finalizers");
    for (i, f) in new
        .spec
        .as_ref()
        .and_then(|s| s.finalizers.as_deref())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        errs.append(validate_finalizer_name(f, &path.index(i)));
    }
    errs
}

/// The `namespaces/<name>/finalize` strategy (`namespaceFinalizeStrategy`):
/// an update whose status is the stored one, validated by
/// [`validate_namespace_finalize_update`]; everything else is the
/// Namespace strategy's.
#[derive(Clone, Copy, Debug, Default)]
pub struct NamespaceFinalizeStrategy;

impl Strategy for NamespaceFinalizeStrategy {
    type Object = Namespace;
    const NAMESPACED: bool = false;

    fn default(obj: &mut Namespace) {
        <NamespaceStrategy as Strategy>::default(obj);
    }

    fn prepare_for_create(obj: &mut Namespace) {
        NamespaceStrategy::prepare_for_create(obj);
    }

    fn validate_create(obj: &Namespace, ctx: &Context<'_>) -> ErrorList {
        NamespaceStrategy::validate_create(obj, ctx)
    }

    /// The status is the stored one.
    fn prepare_for_update(new: &mut Namespace, old: &Namespace) {
        new.status.clone_from(&old.status);
    }

    fn validate_update(new: &Namespace, old: &Namespace, _ctx: &Context<'_>) -> ErrorList {
        validate_namespace_finalize_update(new, old)
    }

    fn prepare_for_status_update(new: &mut Namespace, old: &Namespace) {
        NamespaceStrategy::prepare_for_status_update(new, old);
    }

    fn validate_status_update(new: &Namespace, old: &Namespace, ctx: &Context<'_>) -> ErrorList {
        NamespaceStrategy::validate_status_update(new, old, ctx)
    }
}

/// The Namespace registry strategy.
#[derive(Clone, Copy, Debug, Default)]
pub struct NamespaceStrategy;

impl Strategy for NamespaceStrategy {
    type Object = Namespace;
    const NAMESPACED: bool = false;

    /// `SetDefaults_Namespace` (the name label) and
    /// `SetDefaults_NamespaceStatus` (phase `Active` when empty).
    fn default(obj: &mut Namespace) {
        if let Some(name) = obj.metadata.name.clone().filter(|n| !n.is_empty()) {
            obj.metadata
                .labels
                .get_or_insert_with(BTreeMap::new)
                .insert(LABEL_METADATA_NAME.to_owned(), name);
        }
        if let Some(status) = obj
            .status
            .as_mut()
            .filter(|s| s.phase.as_deref().unwrap_or_default().is_empty())
        {
            status.phase = Some(PHASE_ACTIVE.to_owned());
        }
    }

    /// Status `Active`; `kubernetes` appended to `spec.finalizers` when missing.
    fn prepare_for_create(obj: &mut Namespace) {
        obj.status = Some(NamespaceStatus {
            phase: Some(PHASE_ACTIVE.to_owned()),
            ..NamespaceStatus::default()
        });
        let finalizers = obj
            .spec
            .get_or_insert_with(NamespaceSpec::default)
            .finalizers
            .get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == FINALIZER_KUBERNETES) {
            finalizers.push(FINALIZER_KUBERNETES.to_owned());
        }
    }

    fn validate_create(obj: &Namespace, _ctx: &Context<'_>) -> ErrorList {
        validate_namespace(obj)
    }

    /// `spec.finalizers` and the status are the stored ones (the
    /// `/finalize` and `/status` subresources change them).
    fn prepare_for_update(new: &mut Namespace, old: &Namespace) {
        let finalizers = old.spec.as_ref().and_then(|s| s.finalizers.clone());
        new.spec
            .get_or_insert_with(NamespaceSpec::default)
            .finalizers = finalizers;
        new.status.clone_from(&old.status);
    }

    fn validate_update(new: &Namespace, old: &Namespace, _ctx: &Context<'_>) -> ErrorList {
        meta::validate_object_meta_update(&new.metadata, &old.metadata)
    }

    fn prepare_for_status_update(new: &mut Namespace, old: &Namespace) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(new: &Namespace, old: &Namespace, _ctx: &Context<'_>) -> ErrorList {
        validate_namespace_status_update(new, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::admit_create;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn ctx(absent: &Absent) -> Context<'_> {
        Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent,
        }
    }

    #[test]
    fn create_sets_phase_finalizer_and_name_label() {
        let absent = Absent::default();
        let mut ns = Namespace {
            metadata: ObjectMeta {
                name: Some("team-a".into()),
                ..Default::default()
            },
            spec: Some(NamespaceSpec {
                finalizers: Some(vec!["acme.io/cleanup".into()]),
            }),
            ..Default::default()
        };
        admit_create::<NamespaceStrategy>(&mut ns, &ctx(&absent)).expect("valid");
        assert_eq!(
            ns.spec.and_then(|s| s.finalizers),
            Some(vec!["acme.io/cleanup".to_owned(), "kubernetes".to_owned()])
        );
        assert_eq!(ns.status.and_then(|s| s.phase).as_deref(), Some("Active"));
        assert_eq!(
            ns.metadata
                .labels
                .and_then(|l| l.get(LABEL_METADATA_NAME).cloned())
                .as_deref(),
            Some("team-a")
        );
    }

    #[test]
    fn invalid_names_and_finalizers() {
        let absent = Absent::default();
        let mut ns = Namespace {
            metadata: ObjectMeta {
                name: Some("a.b".into()),
                ..Default::default()
            },
            spec: Some(NamespaceSpec {
                finalizers: Some(vec!["cleanup".into()]),
            }),
            ..Default::default()
        };
        let err = admit_create::<NamespaceStrategy>(&mut ns, &ctx(&absent)).expect_err("invalid");
        assert_eq!(
            err.errors.to_string(),
            r#"[metadata.name: Invalid value: "a.b": must not contain dots, spec.finalizers: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified]"#
        );
    }

    fn finalize_case(old: &[&str], new: &[&str]) -> (Namespace, Namespace) {
        let ns = |finalizers: &[&str]| Namespace {
            metadata: ObjectMeta {
                name: Some("foo".into()),
                resource_version: Some("1".into()),
                ..Default::default()
            },
            spec: Some(NamespaceSpec {
                finalizers: Some(finalizers.iter().map(|f| (*f).to_owned()).collect()),
            }),
            ..Default::default()
        };
        (ns(new), ns(old))
    }

    /// Upstream's `TestValidateNamespaceFinalizeUpdate`, with the messages.
    #[test]
    fn finalize_update_table() {
        let cases: [(&str, &[&str], &[&str], &str); 5] = [
            ("empty", &[], &[], ""),
            (
                "not qualified",
                &[],
                &["Foo"],
                r#"spec.finalizers[0]: Invalid value: "Foo": name is neither a standard finalizer name nor is it fully qualified"#,
            ),
            (
                "added",
                &["foo.com/bar"],
                &["foo.com/bar", "what.com/bar"],
                "",
            ),
            (
                "fooemptyfinalizer",
                &["foo.com/bar"],
                &["", "foo.com/bar", "what.com/bar"],
                r#"[spec.finalizers[0]: Invalid value: "": name part must be non-empty, spec.finalizers[0]: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.finalizers[0]: Invalid value: "": name is neither a standard finalizer name nor is it fully qualified]"#,
            ),
            ("kubernetes removed", &["kubernetes"], &[], ""),
        ];
        for (name, old, new, want) in cases {
            let (new, old) = finalize_case(old, new);
            assert_eq!(
                validate_namespace_finalize_update(&new, &old).to_string(),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn finalize_keeps_the_stored_status() {
        let absent = Absent::default();
        let (mut new, mut old) = finalize_case(&["kubernetes"], &[]);
        old.status = Some(NamespaceStatus {
            phase: Some(PHASE_TERMINATING.into()),
            ..Default::default()
        });
        new.status = Some(NamespaceStatus {
            phase: Some(PHASE_ACTIVE.into()),
            ..Default::default()
        });
        new.metadata.labels = Some([("a".to_owned(), "b".to_owned())].into());
        crate::strategy::admit_update::<NamespaceFinalizeStrategy>(&mut new, &old, &ctx(&absent))
            .expect("valid");
        assert_eq!(new.status, old.status);
        assert_eq!(new.spec.and_then(|s| s.finalizers), Some(vec![]));
        assert_eq!(
            new.metadata
                .labels
                .and_then(|l| l.get("a").cloned())
                .as_deref(),
            Some("b"),
            "upstream's finalize strategy resets the status only"
        );
    }

    #[test]
    fn status_phase_follows_deletion() {
        let old = Namespace {
            metadata: ObjectMeta {
                name: Some("n".into()),
                resource_version: Some("1".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut new = old.clone();
        new.status = Some(NamespaceStatus {
            phase: Some(PHASE_TERMINATING.into()),
            ..Default::default()
        });
        assert_eq!(
            validate_namespace_status_update(&new, &old).to_string(),
            r#"status.Phase: Invalid value: "Terminating": may only be 'Active' if `deletionTimestamp` is empty"#
        );
    }
}
