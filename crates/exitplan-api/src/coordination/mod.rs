//! `coordination.k8s.io/v1` Lease (`ValidateLease*` in
//! `pkg/apis/coordination/validation`): durations positive, transitions
//! non-negative, `strategy` a known or domain-qualified name, a preferred
//! holder only with a strategy.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};

use crate::field::{Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, NameRule};
use crate::strategy::{Context, Strategy};

/// The Kubernetes-defined coordinated lease strategies.
pub const LEASE_STRATEGIES: &[&str] = &["OldestEmulationVersion"];

/// `ValidateCoordinatedLeaseStrategy` (which, upstream, appends `strategy`
/// to the path it is given).
fn validate_strategy(strategy: &str, path: &Path) -> ErrorList {
    let path = path.child("strategy");
    if !strategy.contains('/') {
        if LEASE_STRATEGIES.contains(&strategy) {
            return ErrorList::new();
        }
        return ErrorList::from(vec![Error::not_supported(
            &path,
            strategy,
            LEASE_STRATEGIES,
        )]);
    }
    formats::is_qualified_name(strategy)
        .into_iter()
        .map(|m| Error::invalid(&path, strategy, m))
        .collect()
}

/// `ValidateLeaseSpec`.
pub fn validate_lease_spec(spec: &LeaseSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(d) = spec.lease_duration_seconds.filter(|d| *d <= 0) {
        errs.push(Error::invalid(
            &path.child("leaseDurationSeconds"),
            d,
            "must be greater than 0",
        ));
    }
    if let Some(t) = spec.lease_transitions.filter(|t| *t < 0) {
        errs.push(Error::invalid(
            &path.child("leaseTransitions"),
            t,
            "must be greater than or equal to 0",
        ));
    }
    if let Some(s) = &spec.strategy {
        errs.append(validate_strategy(s, &path.child("strategy")));
    }
    let has_strategy = spec.strategy.as_deref().is_some_and(|s| !s.is_empty());
    if spec
        .preferred_holder
        .as_deref()
        .is_some_and(|h| !h.is_empty())
        && !has_strategy
    {
        errs.push(Error::forbidden(
            &path.child("preferredHolder"),
            "may only be specified if `strategy` is defined",
        ));
    }
    errs
}

fn spec_errors(lease: &Lease) -> ErrorList {
    validate_lease_spec(&lease.spec.clone().unwrap_or_default(), &Path::new("spec"))
}

/// The Lease registry strategy (no status subresource).
#[derive(Clone, Copy, Debug, Default)]
pub struct LeaseStrategy;

impl Strategy for LeaseStrategy {
    type Object = Lease;

    fn validate_create(obj: &Lease, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = meta::validate_object_meta(&obj.metadata, true, NameRule::Subdomain);
        errs.append(spec_errors(obj));
        errs
    }

    fn validate_update(new: &Lease, old: &Lease, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
        errs.append(spec_errors(new));
        errs
    }

    fn validate_status_update(new: &Lease, old: &Lease, ctx: &Context<'_>) -> ErrorList {
        Self::validate_update(new, old, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_rules() {
        let spec = LeaseSpec {
            lease_duration_seconds: Some(0),
            lease_transitions: Some(-1),
            preferred_holder: Some("h".into()),
            ..Default::default()
        };
        assert_eq!(
            validate_lease_spec(&spec, &Path::new("spec")).to_string(),
            "[spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0, spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined]"
        );
        let spec = LeaseSpec {
            strategy: Some("Newest".into()),
            ..Default::default()
        };
        assert_eq!(
            validate_lease_spec(&spec, &Path::new("spec")).to_string(),
            r#"spec.strategy.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion""#
        );
        let ok = LeaseSpec {
            holder_identity: Some("me".into()),
            lease_duration_seconds: Some(15),
            strategy: Some("OldestEmulationVersion".into()),
            preferred_holder: Some("you".into()),
            ..Default::default()
        };
        assert!(validate_lease_spec(&ok, &Path::new("spec")).is_empty());
    }
}
