//! ServiceAccount (`ValidateServiceAccount*` in `pkg/apis/core/validation`,
//! `pkg/registry/core/serviceaccount/strategy.go`): metadata only, and
//! `secrets` references reduced to their names on create and update.

use k8s_openapi::api::core::v1::{ObjectReference, ServiceAccount};

use crate::field::ErrorList;
use crate::meta::{self, NameRule};
use crate::strategy::{Context, Strategy};

/// `cleanSecretReferences`: each `secrets` entry keeps only its name.
fn clean_secret_references(sa: &mut ServiceAccount) {
    for secret in sa.secrets.iter_mut().flatten() {
        *secret = ObjectReference {
            name: secret.name.take(),
            ..ObjectReference::default()
        };
    }
}

/// `ValidateServiceAccount`: the name is a DNS subdomain; nothing else.
pub fn validate_service_account(sa: &ServiceAccount) -> ErrorList {
    meta::validate_object_meta(&sa.metadata, true, NameRule::Subdomain)
}

/// `ValidateServiceAccountUpdate`.
pub fn validate_service_account_update(new: &ServiceAccount, old: &ServiceAccount) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_service_account(new));
    errs
}

/// The ServiceAccount registry strategy.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServiceAccountStrategy;

impl Strategy for ServiceAccountStrategy {
    type Object = ServiceAccount;

    fn prepare_for_create(obj: &mut ServiceAccount) {
        clean_secret_references(obj);
    }

    fn validate_create(obj: &ServiceAccount, _ctx: &Context<'_>) -> ErrorList {
        validate_service_account(obj)
    }

    fn prepare_for_update(new: &mut ServiceAccount, _old: &ServiceAccount) {
        clean_secret_references(new);
    }

    fn validate_update(
        new: &ServiceAccount,
        old: &ServiceAccount,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_service_account_update(new, old)
    }

    /// ServiceAccounts have no `/status`; a status write is a plain update.
    fn validate_status_update(
        new: &ServiceAccount,
        old: &ServiceAccount,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_service_account_update(new, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::admit_create;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    #[test]
    fn secrets_keep_only_names_and_names_are_subdomains() {
        let absent = Absent::default();
        let ctx = Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent: &absent,
        };
        let mut sa = ServiceAccount {
            metadata: ObjectMeta {
                name: Some("builder".into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            secrets: Some(vec![ObjectReference {
                name: Some("tok".into()),
                namespace: Some("other".into()),
                uid: Some("u".into()),
                ..Default::default()
            }]),
            ..Default::default()
        };
        admit_create::<ServiceAccountStrategy>(&mut sa, &ctx).expect("valid");
        assert_eq!(
            sa.secrets,
            Some(vec![ObjectReference {
                name: Some("tok".into()),
                ..Default::default()
            }])
        );
        let mut bad = sa.clone();
        bad.metadata.name = Some("Bad_Name".into());
        let err = admit_create::<ServiceAccountStrategy>(&mut bad, &ctx).expect_err("invalid");
        assert!(
            err.errors
                .to_string()
                .starts_with(r#"metadata.name: Invalid value: "Bad_Name""#),
            "{}",
            err.errors
        );
    }
}
