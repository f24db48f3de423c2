//! core/v1 PodTemplate: validation (`ValidatePodTemplate`,
//! `ValidatePodTemplateUpdate`: metadata and the template through the Pod
//! rules) and the registry strategy (`pkg/registry/core/podtemplate`):
//! generation 1 on create, bumped when the template changes.

use k8s_openapi::api::core::v1::{PodTemplate, PodTemplateSpec};

use crate::apps::defaults::default_template;
use crate::batch::pod_template::validate_template_eviction_responders;
use crate::core::validation::PodValidationOptions;
use crate::core::validation::pod_spec::validate_pod_template_spec;
use crate::equality::semantic_eq;
use crate::field::{ErrorList, Path};
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, NameRule};
use crate::strategy::{Context, Strategy, next_generation};

fn template_of(pt: &PodTemplate) -> PodTemplateSpec {
    pt.template.clone().unwrap_or_default()
}

fn validate_template(pt: &PodTemplate) -> ErrorList {
    validate_pod_template_spec(
        &template_of(pt),
        &Path::new("template"),
        PodValidationOptions::default(),
    )
}

/// `ValidatePodTemplate`: metadata (name a DNS subdomain) and `template`.
pub fn validate_pod_template(pt: &PodTemplate) -> ErrorList {
    let mut errs = meta::validate_object_meta(&pt.metadata, true, NameRule::Subdomain);
    errs.append(validate_template(pt));
    errs
}

/// `ValidatePodTemplateUpdate`: metadata update rules and `template`.
pub fn validate_pod_template_update(new: &PodTemplate, old: &PodTemplate) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_template(new));
    errs
}

fn responders(new: &PodTemplate, old: Option<&PodTemplate>, ctx: &Context<'_>) -> ErrorList {
    let old_template = old.map(template_of);
    validate_template_eviction_responders(
        &template_of(new),
        old_template.as_ref(),
        &Path::new("template"),
        ctx.absent,
    )
}

/// Create and update rules of core/v1 PodTemplates (no status).
#[derive(Clone, Copy, Debug, Default)]
pub struct PodTemplateStrategy;

impl Strategy for PodTemplateStrategy {
    type Object = PodTemplate;

    /// The template's pod defaults (the template is a value upstream, so
    /// an absent one is defaulted too).
    fn default(obj: &mut PodTemplate) {
        default_template(obj.template.get_or_insert_with(Default::default));
    }

    fn prepare_for_create(obj: &mut PodTemplate) {
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &PodTemplate, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_pod_template(obj);
        errs.append(responders(obj, None, ctx));
        before_create(errs, &obj.metadata)
    }

    fn prepare_for_update(new: &mut PodTemplate, old: &PodTemplate) {
        new.metadata.generation = next_generation(
            old.metadata.generation,
            !semantic_eq(&new.template, &old.template),
        );
    }

    fn validate_update(new: &PodTemplate, old: &PodTemplate, ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_pod_template_update(new, old));
        errs.append(responders(new, Some(old), ctx));
        errs
    }

    fn validate_status_update(
        new: &PodTemplate,
        old: &PodTemplate,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_common_fields(&new.metadata, &old.metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::{admit_create, admit_update};
    use serde_json::{Value, json};

    fn run_create(v: Value) -> Result<PodTemplate, ErrorList> {
        let absent = Absent::default();
        let ctx = Context {
            now: jiff::Timestamp::UNIX_EPOCH,
            absent: &absent,
        };
        let mut pt: PodTemplate = serde_json::from_value(v).expect("pt");
        admit_create::<PodTemplateStrategy>(&mut pt, &ctx)
            .map(|()| {
                pt.metadata.resource_version = Some("1".into());
                pt
            })
            .map_err(|e| e.errors)
    }

    fn valid() -> Value {
        json!({"metadata": {"name": "t", "namespace": "ns"},
               "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}})
    }

    #[test]
    fn create_and_update() {
        let pt = run_create(valid()).expect("valid");
        assert_eq!(pt.metadata.generation, Some(1));
        let spec = pt.template.clone().and_then(|t| t.spec).expect("spec");
        assert_eq!(spec.restart_policy.as_deref(), Some("Always"));

        let mut bad = valid();
        bad["template"]["spec"]["containers"] = json!([]);
        assert_eq!(
            run_create(bad).expect_err("no containers").to_string(),
            "template.spec.containers: Required value"
        );
        let mut bad = valid();
        bad["template"]["metadata"]["labels"] = json!({"a": "-"});
        assert!(
            run_create(bad)
                .expect_err("label")
                .to_string()
                .starts_with("template.labels: Invalid value: \"-\"")
        );

        let absent = Absent::default();
        let ctx = Context {
            now: jiff::Timestamp::UNIX_EPOCH,
            absent: &absent,
        };
        let mut v = serde_json::to_value(&pt).expect("json");
        v["metadata"]["labels"] = json!({"x": "y"});
        let mut relabeled: PodTemplate = serde_json::from_value(v.clone()).expect("pt");
        admit_update::<PodTemplateStrategy>(&mut relabeled, &pt, &ctx).expect("labels");
        assert_eq!(relabeled.metadata.generation, Some(1));
        v["template"]["spec"]["containers"][0]["image"] = json!("j");
        let mut changed: PodTemplate = serde_json::from_value(v).expect("pt");
        admit_update::<PodTemplateStrategy>(&mut changed, &pt, &ctx).expect("image");
        assert_eq!(changed.metadata.generation, Some(2));
    }
}
