//! Registry strategies of ValidatingWebhookConfiguration and
//! MutatingWebhookConfiguration (`pkg/registry/admissionregistration/*`):
//! cluster-scoped, no status, generation 1 on create and bumped when
//! `webhooks` change. `C` compiles `matchConditions` (see
//! [`crate::admissionregistration::cel`]).

use std::marker::PhantomData;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};

use crate::admissionregistration::cel::{AdmissionCel, NoCel};
use crate::admissionregistration::{defaults, webhook};
use crate::equality::semantic_eq;
use crate::field::ErrorList;
use crate::meta::generic::{before_create_scoped, validate_common_fields_scoped};
use crate::strategy::{Context, Strategy, next_generation};

/// Webhook configurations hold no quantities.
impl crate::quantities::Quantities for ValidatingWebhookConfiguration {}
/// Webhook configurations hold no quantities.
impl crate::quantities::Quantities for MutatingWebhookConfiguration {}

/// Create and update rules of ValidatingWebhookConfigurations.
#[derive(Debug)]
pub struct ValidatingWebhookConfigurationStrategy<C = NoCel>(PhantomData<fn() -> C>);

/// Create and update rules of MutatingWebhookConfigurations.
#[derive(Debug)]
pub struct MutatingWebhookConfigurationStrategy<C = NoCel>(PhantomData<fn() -> C>);

impl<C: AdmissionCel> Strategy for ValidatingWebhookConfigurationStrategy<C> {
    type Object = ValidatingWebhookConfiguration;
    const NAMESPACED: bool = false;

    fn default(obj: &mut ValidatingWebhookConfiguration) {
        defaults::validating_webhook_configuration(obj);
    }

    /// `PrepareForCreate`: generation 1.
    fn prepare_for_create(obj: &mut ValidatingWebhookConfiguration) {
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &ValidatingWebhookConfiguration, ctx: &Context<'_>) -> ErrorList {
        before_create_scoped(
            webhook::validate_validating_webhook_configuration::<C>(obj, ctx.absent),
            &obj.metadata,
            false,
        )
    }

    /// `PrepareForUpdate`: the generation grows when `webhooks` change.
    fn prepare_for_update(
        new: &mut ValidatingWebhookConfiguration,
        old: &ValidatingWebhookConfiguration,
    ) {
        new.metadata.generation = next_generation(
            old.metadata.generation,
            !semantic_eq(&new.webhooks, &old.webhooks),
        );
    }

    fn validate_update(
        new: &ValidatingWebhookConfiguration,
        old: &ValidatingWebhookConfiguration,
        ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, false);
        errs.append(
            webhook::validate_validating_webhook_configuration_update::<C>(new, old, ctx.absent),
        );
        errs
    }

    /// No `/status`: the stored object is kept.
    fn prepare_for_status_update(
        new: &mut ValidatingWebhookConfiguration,
        old: &ValidatingWebhookConfiguration,
    ) {
        *new = old.clone();
    }

    fn validate_status_update(
        new: &ValidatingWebhookConfiguration,
        old: &ValidatingWebhookConfiguration,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_common_fields_scoped(&new.metadata, &old.metadata, false)
    }
}

impl<C: AdmissionCel> Strategy for MutatingWebhookConfigurationStrategy<C> {
    type Object = MutatingWebhookConfiguration;
    const NAMESPACED: bool = false;

    fn default(obj: &mut MutatingWebhookConfiguration) {
        defaults::mutating_webhook_configuration(obj);
    }

    /// `PrepareForCreate`: generation 1.
    fn prepare_for_create(obj: &mut MutatingWebhookConfiguration) {
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &MutatingWebhookConfiguration, ctx: &Context<'_>) -> ErrorList {
        before_create_scoped(
            webhook::validate_mutating_webhook_configuration::<C>(obj, ctx.absent),
            &obj.metadata,
            false,
        )
    }

    /// `PrepareForUpdate`: the generation grows when `webhooks` change.
    fn prepare_for_update(
        new: &mut MutatingWebhookConfiguration,
        old: &MutatingWebhookConfiguration,
    ) {
        new.metadata.generation = next_generation(
            old.metadata.generation,
            !semantic_eq(&new.webhooks, &old.webhooks),
        );
    }

    fn validate_update(
        new: &MutatingWebhookConfiguration,
        old: &MutatingWebhookConfiguration,
        ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, false);
        errs.append(
            webhook::validate_mutating_webhook_configuration_update::<C>(new, old, ctx.absent),
        );
        errs
    }

    /// No `/status`: the stored object is kept.
    fn prepare_for_status_update(
        new: &mut MutatingWebhookConfiguration,
        old: &MutatingWebhookConfiguration,
    ) {
        *new = old.clone();
    }

    fn validate_status_update(
        new: &MutatingWebhookConfiguration,
        old: &MutatingWebhookConfiguration,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_common_fields_scoped(&new.metadata, &old.metadata, false)
    }
}
