//! Garbage collection of owner references (upstream `pkg/controller/garbagecollector`),
//! as decisions:
//!
//! * a dependent whose owners are **all** gone (absent, or replaced by an
//!   object with another UID) is deleted — an Eviction goes away once all its
//!   EvictionRequests are gone; references to gone owners are stripped while
//!   other owners remain;
//! * an owner being deleted with the `orphan` finalizer first releases its
//!   dependents (removes its reference from them), then loses the finalizer;
//! * an owner being deleted with the `foregroundDeletion` finalizer first
//!   has its dependents deleted, and loses the finalizer once none is left.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

/// Finalizer: release dependents before the owner goes.
pub const FINALIZER_ORPHAN: &str = "orphan";
/// Finalizer: delete dependents before the owner goes.
pub const FINALIZER_FOREGROUND: &str = "foregroundDeletion";

/// What the collector knows about one referenced owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerState {
    /// An object with the referenced kind, name and UID exists.
    Present,
    /// No such object (none of that name, or one with another UID).
    Gone,
}

/// What to do with a dependent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DependentAction {
    /// Nothing: it has a live owner (or no owners at all).
    Keep,
    /// Delete it with this propagation policy (`Background`, `Orphan`, `Foreground`).
    Delete {
        /// The propagation policy for its own dependents.
        propagation: &'static str,
    },
    /// Strip the references to these gone owners (by UID).
    RemoveOwnerReferences(Vec<String>),
}

/// Decides a dependent's fate from its owner references.
pub fn dependent_action(
    meta: &ObjectMeta,
    owner: impl Fn(&OwnerReference) -> OwnerState,
) -> DependentAction {
    let refs = meta.owner_references.as_deref().unwrap_or_default();
    if refs.is_empty() || meta.deletion_timestamp.is_some() {
        return DependentAction::Keep;
    }
    let gone: Vec<String> = refs
        .iter()
        .filter(|r| owner(r) == OwnerState::Gone)
        .map(|r| r.uid.clone())
        .collect();
    if gone.is_empty() {
        DependentAction::Keep
    } else if gone.len() == refs.len() {
        let finalizers = meta.finalizers.as_deref().unwrap_or_default();
        let propagation = if finalizers.iter().any(|f| f == FINALIZER_ORPHAN) {
            "Orphan"
        } else if finalizers.iter().any(|f| f == FINALIZER_FOREGROUND) {
            "Foreground"
        } else {
            "Background"
        };
        DependentAction::Delete { propagation }
    } else {
        DependentAction::RemoveOwnerReferences(gone)
    }
}

/// What an owner being deleted needs before its GC finalizer can go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnerPlan {
    /// Dependents (indexes into the given list) to strip the owner's reference from.
    pub release: Vec<usize>,
    /// Dependents (indexes) to delete (foreground deletion).
    pub delete: Vec<usize>,
    /// The finalizer to remove from the owner, once nothing else is pending.
    pub remove_finalizer: Option<&'static str>,
}

fn references(meta: &ObjectMeta, uid: &str) -> bool {
    meta.owner_references.iter().flatten().any(|r| r.uid == uid)
}

/// Decides the GC finalizers of an owner being deleted, given the objects
/// that may depend on it.
pub fn owner_plan(owner: &ObjectMeta, dependents: &[&ObjectMeta]) -> OwnerPlan {
    let Some(uid) = owner
        .uid
        .as_deref()
        .filter(|_| owner.deletion_timestamp.is_some())
    else {
        return OwnerPlan::default();
    };
    let finalizers = owner.finalizers.as_deref().unwrap_or_default();
    let mine: Vec<usize> = dependents
        .iter()
        .enumerate()
        .filter(|(_, d)| references(d, uid))
        .map(|(i, _)| i)
        .collect();
    if finalizers.iter().any(|f| f == FINALIZER_ORPHAN) {
        return if mine.is_empty() {
            OwnerPlan {
                remove_finalizer: Some(FINALIZER_ORPHAN),
                ..Default::default()
            }
        } else {
            OwnerPlan {
                release: mine,
                ..Default::default()
            }
        };
    }
    if finalizers.iter().any(|f| f == FINALIZER_FOREGROUND) {
        // Dependents already being deleted only need time; a blocking one keeps the owner.
        let delete: Vec<usize> = mine
            .iter()
            .copied()
            .filter(|&i| dependents[i].deletion_timestamp.is_none())
            .collect();
        let blocking = mine.iter().any(|&i| {
            dependents[i]
                .owner_references
                .iter()
                .flatten()
                .any(|r| r.uid == uid && r.block_owner_deletion == Some(true))
        });
        return OwnerPlan {
            delete,
            remove_finalizer: (!blocking).then_some(FINALIZER_FOREGROUND),
            ..Default::default()
        };
    }
    OwnerPlan::default()
}

/// Whether `meta` carries one of the collector's finalizers.
pub fn has_gc_finalizer(meta: &ObjectMeta) -> bool {
    meta.finalizers
        .iter()
        .flatten()
        .any(|f| f == FINALIZER_ORPHAN || f == FINALIZER_FOREGROUND)
}

/// Whether a kind the collector watches without a full cache (namespaces,
/// leases, events) must remember this object: it may be a dependent (it has
/// owner references) or it is an owner waiting for the collector (being
/// deleted with one of its finalizers). Anything else is forgotten.
pub fn needs_tracking(meta: &ObjectMeta) -> bool {
    meta.owner_references
        .as_ref()
        .is_some_and(|r| !r.is_empty())
        || (meta.deletion_timestamp.is_some() && has_gc_finalizer(meta))
}

/// The part of `meta` the collector reads (identity, owners, finalizers,
/// deletion): what a light watch keeps of an object.
pub fn gc_meta(meta: &ObjectMeta) -> ObjectMeta {
    ObjectMeta {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        owner_references: meta.owner_references.clone(),
        finalizers: meta.finalizers.clone(),
        deletion_timestamp: meta.deletion_timestamp.clone(),
        ..ObjectMeta::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn owner_ref(uid: &str, block: bool) -> OwnerReference {
        OwnerReference {
            api_version: "lifecycle.k8s.io/v1alpha1".into(),
            kind: "EvictionRequest".into(),
            name: format!("er-{uid}"),
            uid: uid.into(),
            block_owner_deletion: Some(block),
            controller: None,
        }
    }

    fn meta(refs: &[OwnerReference], finalizers: &[&str], deleting: bool) -> ObjectMeta {
        ObjectMeta {
            uid: Some("self".into()),
            owner_references: Some(refs.to_vec()),
            finalizers: Some(finalizers.iter().map(|f| (*f).to_owned()).collect()),
            deletion_timestamp: deleting
                .then(|| Time("2026-01-01T00:00:00Z".parse().expect("time"))),
            ..Default::default()
        }
    }

    #[test]
    fn an_eviction_goes_once_all_its_requests_are_gone() {
        let ev = meta(&[owner_ref("a", false), owner_ref("b", false)], &[], false);
        let live = |live: &'static [&'static str]| {
            move |r: &OwnerReference| {
                if live.contains(&r.uid.as_str()) {
                    OwnerState::Present
                } else {
                    OwnerState::Gone
                }
            }
        };
        assert_eq!(
            dependent_action(&ev, live(&["a", "b"])),
            DependentAction::Keep
        );
        assert_eq!(
            dependent_action(&ev, live(&["b"])),
            DependentAction::RemoveOwnerReferences(vec!["a".into()])
        );
        assert_eq!(
            dependent_action(&ev, live(&[])),
            DependentAction::Delete {
                propagation: "Background"
            }
        );
        assert_eq!(
            dependent_action(&meta(&[], &[], false), live(&[])),
            DependentAction::Keep,
            "no owners: never collected"
        );
        let orphaning = meta(&[owner_ref("a", false)], &[FINALIZER_ORPHAN], false);
        assert_eq!(
            dependent_action(&orphaning, live(&[])),
            DependentAction::Delete {
                propagation: "Orphan"
            }
        );
    }

    #[test]
    fn owner_finalizers() {
        let mut owner = meta(&[], &[FINALIZER_ORPHAN], true);
        owner.uid = Some("o".into());
        let dep = meta(&[owner_ref("o", true)], &[], false);
        let other = meta(&[owner_ref("x", true)], &[], false);
        assert_eq!(owner_plan(&owner, &[&other, &dep]).release, vec![1]);
        assert_eq!(
            owner_plan(&owner, &[&other]).remove_finalizer,
            Some(FINALIZER_ORPHAN)
        );
        owner.finalizers = Some(vec![FINALIZER_FOREGROUND.into()]);
        let plan = owner_plan(&owner, &[&dep]);
        assert_eq!(
            (plan.delete, plan.remove_finalizer),
            (vec![0], None),
            "blocked until the dependent is gone"
        );
        assert_eq!(
            owner_plan(&owner, &[]).remove_finalizer,
            Some(FINALIZER_FOREGROUND)
        );
    }

    #[test]
    fn what_a_light_watch_keeps() {
        let plain = meta(&[], &[], false);
        assert!(!needs_tracking(&plain));
        assert!(!needs_tracking(&meta(&[], &["acme.io/x"], true)));
        assert!(!needs_tracking(&meta(&[], &[FINALIZER_FOREGROUND], false)));
        assert!(needs_tracking(&meta(&[], &[FINALIZER_FOREGROUND], true)));
        assert!(needs_tracking(&meta(&[], &[FINALIZER_ORPHAN], true)));
        assert!(needs_tracking(&meta(&[owner_ref("o", false)], &[], false)));
        let mut full = meta(&[owner_ref("o", false)], &[FINALIZER_ORPHAN], true);
        full.labels = Some([("a".to_owned(), "b".to_owned())].into());
        full.annotations = full.labels.clone();
        let kept = gc_meta(&full);
        assert_eq!((kept.labels, kept.annotations), (None, None));
        assert_eq!(kept.owner_references, full.owner_references);
        assert_eq!(kept.finalizers, full.finalizers);
        assert_eq!(kept.deletion_timestamp, full.deletion_timestamp);
        assert_eq!(kept.uid, full.uid);
    }
}
