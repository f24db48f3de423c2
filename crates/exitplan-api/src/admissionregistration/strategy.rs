//! Registry strategies of the admissionregistration kinds
//! (`pkg/registry/admissionregistration/*`): cluster-scoped, generation 1 on
//! create and bumped when `webhooks` / `spec` change. Webhook configurations
//! and bindings have no status; a ValidatingAdmissionPolicy has `/status`.
//! `C` compiles CEL expressions (see [`crate::admissionregistration::cel`]).

use std::marker::PhantomData;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingWebhookConfiguration,
};

use crate::admissionregistration::cel::{AdmissionCel, NoCel};
use crate::admissionregistration::{defaults, policy, webhook};
use crate::equality::semantic_eq;
use crate::field::ErrorList;
use crate::meta::generic::{before_create_scoped, validate_common_fields_scoped};
use crate::strategy::{Context, Strategy, next_generation, reset_metadata_for_status};

/// Webhook configurations hold no quantities.
impl crate::quantities::Quantities for ValidatingWebhookConfiguration {}
/// Webhook configurations hold no quantities.
impl crate::quantities::Quantities for MutatingWebhookConfiguration {}
/// Policies hold no quantities.
impl crate::quantities::Quantities for ValidatingAdmissionPolicy {}
/// Bindings hold no quantities.
impl crate::quantities::Quantities for ValidatingAdmissionPolicyBinding {}

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

/// Create, update and `/status` rules of ValidatingAdmissionPolicies.
#[derive(Debug)]
pub struct ValidatingAdmissionPolicyStrategy<C = NoCel>(PhantomData<fn() -> C>);

impl<C: AdmissionCel> Strategy for ValidatingAdmissionPolicyStrategy<C> {
    type Object = ValidatingAdmissionPolicy;
    const NAMESPACED: bool = false;

    fn default(obj: &mut ValidatingAdmissionPolicy) {
        defaults::validating_admission_policy(obj);
    }

    /// `PrepareForCreate`: no status, generation 1.
    fn prepare_for_create(obj: &mut ValidatingAdmissionPolicy) {
        obj.status = None;
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &ValidatingAdmissionPolicy, _ctx: &Context<'_>) -> ErrorList {
        before_create_scoped(policy::validate_policy::<C>(obj), &obj.metadata, false)
    }

    /// `PrepareForUpdate`: the status is kept; the generation grows when the
    /// spec changes.
    fn prepare_for_update(new: &mut ValidatingAdmissionPolicy, old: &ValidatingAdmissionPolicy) {
        new.status.clone_from(&old.status);
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
    }

    fn validate_update(
        new: &ValidatingAdmissionPolicy,
        old: &ValidatingAdmissionPolicy,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, false);
        errs.append(policy::validate_policy_update::<C>(new, old));
        errs
    }

    /// `/status` changes only the status (`ResetObjectMetaForStatus`).
    fn prepare_for_status_update(
        new: &mut ValidatingAdmissionPolicy,
        old: &ValidatingAdmissionPolicy,
    ) {
        new.spec.clone_from(&old.spec);
        reset_metadata_for_status(&mut new.metadata, &old.metadata);
    }

    fn validate_status_update(
        new: &ValidatingAdmissionPolicy,
        old: &ValidatingAdmissionPolicy,
        ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, false);
        errs.append(policy::validate_policy_status(
            new.status.as_ref(),
            ctx.absent,
        ));
        errs
    }
}

/// Create and update rules of ValidatingAdmissionPolicyBindings.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidatingAdmissionPolicyBindingStrategy;

impl Strategy for ValidatingAdmissionPolicyBindingStrategy {
    type Object = ValidatingAdmissionPolicyBinding;
    const NAMESPACED: bool = false;

    fn default(obj: &mut ValidatingAdmissionPolicyBinding) {
        defaults::validating_admission_policy_binding(obj);
    }

    /// `PrepareForCreate`: generation 1.
    fn prepare_for_create(obj: &mut ValidatingAdmissionPolicyBinding) {
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &ValidatingAdmissionPolicyBinding, _ctx: &Context<'_>) -> ErrorList {
        before_create_scoped(policy::validate_binding(obj), &obj.metadata, false)
    }

    /// `PrepareForUpdate`: the generation grows when the spec changes.
    fn prepare_for_update(
        new: &mut ValidatingAdmissionPolicyBinding,
        old: &ValidatingAdmissionPolicyBinding,
    ) {
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
    }

    fn validate_update(
        new: &ValidatingAdmissionPolicyBinding,
        old: &ValidatingAdmissionPolicyBinding,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, false);
        errs.append(policy::validate_binding(new));
        errs
    }

    /// No `/status`: the stored object is kept.
    fn prepare_for_status_update(
        new: &mut ValidatingAdmissionPolicyBinding,
        old: &ValidatingAdmissionPolicyBinding,
    ) {
        *new = old.clone();
    }

    fn validate_status_update(
        new: &ValidatingAdmissionPolicyBinding,
        old: &ValidatingAdmissionPolicyBinding,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_common_fields_scoped(&new.metadata, &old.metadata, false)
    }
}
