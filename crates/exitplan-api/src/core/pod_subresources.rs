//! The strategies of the writable pod subresources besides `status`
//! (upstream's `podEphemeralContainersStrategy` and `podResizeStrategy`):
//! each keeps everything of the stored pod but the fields its subresource
//! writes, then runs its own validation
//! ([`validation::pod_subresources`](super::validation::pod_subresources)).

use k8s_openapi::api::core::v1::{Container, Pod};

use super::pod::PodStrategy;
use super::validation::PodValidationOptions;
use super::validation::pod_subresources::{
    validate_pod_ephemeral_containers_update, validate_pod_resize,
};
use crate::field::ErrorList;
use crate::strategy::{Context, Strategy, next_generation, reset_metadata_for_status};

fn opts() -> PodValidationOptions {
    PodValidationOptions {
        allow_invalid_label_value_in_selector: true,
        ..PodValidationOptions::default()
    }
}

/// Whether the spec changed (`updatePodGeneration` bumps the generation).
fn bump_generation(new: &mut Pod, old: &Pod) {
    let changed = !crate::equality::semantic_eq(&new.spec, &old.spec);
    new.metadata.generation = next_generation(old.metadata.generation, changed);
}

/// `pods/ephemeralcontainers`: only `spec.ephemeralContainers` is taken
/// from the request (`dropNonEphemeralContainerUpdates`); status and the
/// metadata a status write may not change are the stored ones.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodEphemeralContainersStrategy;

impl Strategy for PodEphemeralContainersStrategy {
    type Object = Pod;

    fn default(obj: &mut Pod) {
        <PodStrategy as Strategy>::default(obj);
    }

    fn validate_create(obj: &Pod, ctx: &Context<'_>) -> ErrorList {
        PodStrategy::validate_create(obj, ctx)
    }

    fn prepare_for_update(new: &mut Pod, old: &Pod) {
        let ephemeral = new
            .spec
            .as_ref()
            .and_then(|s| s.ephemeral_containers.clone());
        new.spec.clone_from(&old.spec);
        new.spec
            .get_or_insert_with(Default::default)
            .ephemeral_containers = ephemeral;
        new.status.clone_from(&old.status);
        reset_metadata_for_status(&mut new.metadata, &old.metadata);
        bump_generation(new, old);
    }

    fn validate_update(new: &Pod, old: &Pod, _ctx: &Context<'_>) -> ErrorList {
        validate_pod_ephemeral_containers_update(new, old, opts())
    }

    fn validate_status_update(new: &Pod, old: &Pod, ctx: &Context<'_>) -> ErrorList {
        PodStrategy::validate_status_update(new, old, ctx)
    }
}

/// `dropNonResizeUpdatesForContainers`: the stored containers with the
/// requested `resources` and `resizePolicy`; `None` when a container was
/// added, removed, renamed or moved (validation then refuses the change).
fn resize_containers(new: &[Container], old: &[Container]) -> Option<Vec<Container>> {
    if new.len() != old.len() {
        return None;
    }
    new.iter()
        .zip(old)
        .map(|(n, o)| {
            (n.name == o.name).then(|| Container {
                resources: n.resources.clone(),
                resize_policy: n.resize_policy.clone(),
                ..o.clone()
            })
        })
        .collect()
}

/// `pods/resize`: only container (and init container) `resources` and
/// `resizePolicy` are taken from the request (`dropNonResizeUpdates`;
/// pod-level resources are not resizable); status and the metadata a status
/// write may not change are the stored ones.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodResizeStrategy;

impl Strategy for PodResizeStrategy {
    type Object = Pod;

    fn default(obj: &mut Pod) {
        <PodStrategy as Strategy>::default(obj);
    }

    fn validate_create(obj: &Pod, ctx: &Context<'_>) -> ErrorList {
        PodStrategy::validate_create(obj, ctx)
    }

    fn prepare_for_update(new: &mut Pod, old: &Pod) {
        let new_spec = new.spec.clone().unwrap_or_default();
        let old_spec = old.spec.clone().unwrap_or_default();
        let empty = Vec::new();
        let containers = resize_containers(&new_spec.containers, &old_spec.containers);
        let init = resize_containers(
            new_spec.init_containers.as_ref().unwrap_or(&empty),
            old_spec.init_containers.as_ref().unwrap_or(&empty),
        );
        // A changed container list is left as sent, for validation to refuse.
        if let (Some(containers), Some(init)) = (containers, init) {
            let mut spec = old_spec;
            spec.containers = containers;
            if spec.init_containers.is_some() || !init.is_empty() {
                spec.init_containers = Some(init);
            }
            new.spec = Some(spec);
            new.status.clone_from(&old.status);
            reset_metadata_for_status(&mut new.metadata, &old.metadata);
        }
        bump_generation(new, old);
    }

    fn validate_update(new: &Pod, old: &Pod, _ctx: &Context<'_>) -> ErrorList {
        validate_pod_resize(new, old, opts())
    }

    fn validate_status_update(new: &Pod, old: &Pod, ctx: &Context<'_>) -> ErrorList {
        PodStrategy::validate_status_update(new, old, ctx)
    }
}
