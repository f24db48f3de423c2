//! networking.k8s.io/v1 IngressClass: defaulting (`SetDefaults_IngressClass`),
//! validation (`ValidateIngressClass*` of `pkg/apis/networking/validation`)
//! and the registry strategy (`pkg/registry/networking/ingressclass`): a
//! domain-prefixed, immutable `controller` and a well-formed `parameters`
//! reference.

use k8s_openapi::api::networking::v1::{IngressClass, IngressClassParametersReference};

use super::formats::validate_domain_prefixed_path;
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats::{is_dns1123_label, is_dns1123_subdomain};
use crate::meta::generic::{
    before_create_scoped, path_segment_name_errors, validate_common_fields_scoped,
};
use crate::meta::{self, FIELD_IMMUTABLE, NameRule};
use crate::strategy::{Context, Strategy, next_generation};

/// The longest `spec.controller` (`maxLenIngressClassController`).
pub const MAX_CONTROLLER_LEN: usize = 250;
/// The annotation marking the default IngressClass.
pub const ANNOTATION_IS_DEFAULT_CLASS: &str = "ingressclass.kubernetes.io/is-default-class";
/// Parameter reference scopes, sorted.
pub const SCOPES: [&str; 2] = ["Cluster", "Namespace"];

/// `validateIngressClassParametersReference`.
pub fn validate_parameters(params: &IngressClassParametersReference, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(g) = &params.api_group {
        for m in is_dns1123_subdomain(g) {
            errs.push(Error::invalid(&path.child("apiGroup"), g.as_str(), m));
        }
    }
    for (name, value) in [("kind", &params.kind), ("name", &params.name)] {
        if value.is_empty() {
            errs.push(Error::required(&path.child(name), ""));
        } else {
            for m in path_segment_name_errors(value, false) {
                errs.push(Error::invalid(&path.child(name), value.as_str(), m));
            }
        }
    }
    let Some(scope) = params.scope.as_deref() else {
        errs.push(Error::required(&path.child("scope"), ""));
        return errs;
    };
    let ns_path = path.child("namespace");
    match scope {
        "Namespace" => match params.namespace.as_deref() {
            None => errs.push(Error::required(
                &ns_path,
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some(ns) => {
                for m in is_dns1123_label(ns) {
                    errs.push(Error::invalid(&ns_path, ns, m));
                }
            }
        },
        "Cluster" => {
            if params.namespace.is_some() {
                errs.push(Error::forbidden(
                    &ns_path,
                    "`parameters.scope` is set to 'Cluster'",
                ));
            }
        }
        other => errs.push(Error::not_supported(&path.child("scope"), other, &SCOPES)),
    }
    errs
}

/// `ValidateIngressClass`: metadata (cluster-scoped, a DNS subdomain), a
/// required domain-prefixed controller of at most 250 bytes, parameters.
pub fn validate_ingress_class(ic: &IngressClass) -> ErrorList {
    let mut errs = meta::validate_object_meta(&ic.metadata, false, NameRule::Subdomain);
    let spec = ic.spec.clone().unwrap_or_default();
    let path = Path::new("spec");
    let controller = spec.controller.as_deref().unwrap_or_default();
    let cpath = path.child("controller");
    if controller.is_empty() {
        errs.push(Error::required(&cpath, ""));
    } else {
        if controller.len() > MAX_CONTROLLER_LEN {
            errs.push(Error::too_long(&cpath, MAX_CONTROLLER_LEN).with_origin("maxBytes"));
        }
        errs.append(validate_domain_prefixed_path(&cpath, controller));
    }
    if let Some(p) = &spec.parameters {
        errs.append(validate_parameters(p, &path.child("parameters")));
    }
    errs
}

/// `ValidateIngressClassUpdate`: metadata update rules, an immutable
/// controller, then the new class's rules.
pub fn validate_ingress_class_update(new: &IngressClass, old: &IngressClass) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    let controller = |ic: &IngressClass| ic.spec.as_ref().and_then(|s| s.controller.clone());
    let (n, o) = (controller(new), controller(old));
    if n.as_deref().unwrap_or_default() != o.as_deref().unwrap_or_default() {
        errs.push(
            Error::invalid(
                &Path::new("spec").child("controller"),
                BadValue::Str(n.unwrap_or_default()),
                FIELD_IMMUTABLE,
            )
            .with_origin("immutable"),
        );
    }
    errs.append(validate_ingress_class(new));
    errs
}

/// `getDefaultClass`: the newest IngressClass annotated as the default.
pub fn default_ingress_class(classes: &[IngressClass]) -> Option<&IngressClass> {
    crate::default_class::newest_default(classes, &[ANNOTATION_IS_DEFAULT_CLASS])
}

/// The `DefaultIngressClass` admission plugin, for an Ingress being
/// created: one with neither `spec.ingressClassName` nor the
/// `kubernetes.io/ingress.class` annotation gets the default class. Call it
/// before [`crate::strategy::admit_create`]; returns whether it set one.
pub fn set_default_ingress_class(
    ingress: &mut k8s_openapi::api::networking::v1::Ingress,
    classes: &[IngressClass],
) -> bool {
    let annotated = ingress
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(super::ingress::ANNOTATION_INGRESS_CLASS));
    let spec = ingress.spec.get_or_insert_with(Default::default);
    if annotated || spec.ingress_class_name.is_some() {
        return false;
    }
    let Some(name) = default_ingress_class(classes).and_then(|c| c.metadata.name.clone()) else {
        return false;
    };
    spec.ingress_class_name = Some(name);
    true
}

/// IngressClasses hold no quantities.
impl crate::quantities::Quantities for IngressClass {}

/// Create and update rules of networking.k8s.io/v1 IngressClasses
/// (cluster-scoped, no status).
#[derive(Clone, Copy, Debug, Default)]
pub struct IngressClassStrategy;

impl Strategy for IngressClassStrategy {
    type Object = IngressClass;
    const NAMESPACED: bool = false;

    /// `SetDefaults_IngressClass`: a parameters reference without a scope
    /// is `Cluster`-scoped.
    fn default(obj: &mut IngressClass) {
        if let Some(p) = obj.spec.as_mut().and_then(|s| s.parameters.as_mut()) {
            p.scope.get_or_insert_with(|| "Cluster".to_owned());
        }
    }

    /// Generation 1.
    fn prepare_for_create(obj: &mut IngressClass) {
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &IngressClass, _ctx: &Context<'_>) -> ErrorList {
        before_create_scoped(validate_ingress_class(obj), &obj.metadata, false)
    }

    /// Generation bumped when the spec changed.
    fn prepare_for_update(new: &mut IngressClass, old: &IngressClass) {
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
    }

    fn validate_update(new: &IngressClass, old: &IngressClass, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, false);
        errs.append(validate_ingress_class_update(new, old));
        errs
    }

    /// IngressClasses have no `/status`; the stored object is kept.
    fn prepare_for_status_update(new: &mut IngressClass, old: &IngressClass) {
        *new = old.clone();
    }

    fn validate_status_update(
        new: &IngressClass,
        old: &IngressClass,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_common_fields_scoped(&new.metadata, &old.metadata, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::admit_create;
    use serde_json::{Value, json};

    fn class(spec: Value) -> IngressClass {
        serde_json::from_value(json!({
            "metadata": {"name": "test123", "resourceVersion": "2"},
            "spec": spec,
        }))
        .expect("ingress class")
    }

    /// `TestValidateIngressClass` of upstream's validation_test.go.
    #[test]
    fn validate_ingress_class_table() {
        let ok = [
            json!({"controller": "foo.co/bar"}),
            json!({"controller": "foo.co/bar", "parameters": {"apiGroup": "example.com", "kind": "foo", "name": "bar", "scope": "Cluster"}}),
            json!({"controller": "foo.co/bar", "parameters": {"kind": "foo", "name": "bar", "scope": "Namespace", "namespace": "foo-ns"}}),
        ];
        for spec in ok {
            let errs = validate_ingress_class(&class(spec.clone()));
            assert!(errs.is_empty(), "{spec}: {errs}");
        }
        let long = format!("foo.co/{}", "a".repeat(MAX_CONTROLLER_LEN));
        let cases: Vec<(&str, Value, String)> = vec![
            (
                "empty controller",
                json!({"controller": ""}),
                "spec.controller: Required value".into(),
            ),
            (
                "invalid controller",
                json!({"controller": "foo.co"}),
                r#"spec.controller: Invalid value: "foo.co": must be a domain-prefixed path (such as "acme.io/foo")"#.into(),
            ),
            (
                "controller too long",
                json!({"controller": long}),
                "spec.controller: Too long: may not be more than 250 bytes".into(),
            ),
            (
                "parameters without kind and name",
                json!({"controller": "foo.co/bar", "parameters": {"kind": "", "name": "", "scope": "Cluster"}}),
                "[spec.parameters.kind: Required value, spec.parameters.name: Required value]".into(),
            ),
            (
                "parameters with invalid kind",
                json!({"controller": "foo.co/bar", "parameters": {"kind": "foo/", "name": "bar", "scope": "Cluster"}}),
                r#"spec.parameters.kind: Invalid value: "foo/": may not contain '/'"#.into(),
            ),
            (
                "parameters without scope",
                json!({"controller": "foo.co/bar", "parameters": {"kind": "foo", "name": "bar"}}),
                "spec.parameters.scope: Required value".into(),
            ),
            (
                "namespace-scoped parameters without namespace",
                json!({"controller": "foo.co/bar", "parameters": {"kind": "foo", "name": "bar", "scope": "Namespace"}}),
                "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'".into(),
            ),
            (
                "cluster-scoped parameters with namespace",
                json!({"controller": "foo.co/bar", "parameters": {"kind": "foo", "name": "bar", "scope": "Cluster", "namespace": "foo-ns"}}),
                "spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'".into(),
            ),
            (
                "unsupported scope",
                json!({"controller": "foo.co/bar", "parameters": {"kind": "foo", "name": "bar", "scope": "foo"}}),
                r#"spec.parameters.scope: Unsupported value: "foo": supported values: "Cluster", "Namespace""#.into(),
            ),
        ];
        for (name, spec, want) in cases {
            assert_eq!(
                validate_ingress_class(&class(spec)).to_string(),
                want,
                "{name}"
            );
        }
    }

    /// `TestValidateIngressClassUpdate` of upstream's validation_test.go.
    #[test]
    fn controller_is_immutable() {
        let old = class(json!({"controller": "foo.co/bar"}));
        let with_params = class(
            json!({"controller": "foo.co/bar", "parameters": {"kind": "foo", "name": "bar", "scope": "Cluster"}}),
        );
        assert!(validate_ingress_class_update(&with_params, &old).is_empty());
        let changed = class(json!({"controller": "foo.co/bar2"}));
        assert_eq!(
            validate_ingress_class_update(&changed, &old).to_string(),
            r#"spec.controller: Invalid value: "foo.co/bar2": field is immutable"#
        );
    }

    /// `TestAdmission` of upstream's defaultingressclass admission plugin.
    #[test]
    fn default_class_for_ingresses() {
        let mark = |name: &str, value: &str, created: &str| {
            let mut c = class(json!({"controller": "example.com/c"}));
            c.metadata.name = Some(name.into());
            c.metadata.annotations =
                Some([(ANNOTATION_IS_DEFAULT_CLASS.to_owned(), value.to_owned())].into());
            c.metadata.creation_timestamp =
                Some(crate::time::mtime(created.parse().expect("time")));
            c
        };
        let classes = [
            mark("old", "true", "2026-01-01T00:00:00Z"),
            mark("new", "true", "2026-01-02T00:00:00Z"),
            mark("off", "false", "2026-01-03T00:00:00Z"),
        ];
        let mut ing = k8s_openapi::api::networking::v1::Ingress::default();
        assert!(set_default_ingress_class(&mut ing, &classes));
        assert_eq!(
            ing.spec.and_then(|s| s.ingress_class_name).as_deref(),
            Some("new")
        );
        let mut annotated = k8s_openapi::api::networking::v1::Ingress::default();
        annotated.metadata.annotations = Some(
            [(
                super::super::ingress::ANNOTATION_INGRESS_CLASS.to_owned(),
                "x".to_owned(),
            )]
            .into(),
        );
        assert!(!set_default_ingress_class(&mut annotated, &classes));
        let mut none = k8s_openapi::api::networking::v1::Ingress::default();
        assert!(!set_default_ingress_class(&mut none, &classes[2..]));
    }

    #[test]
    fn parameters_scope_defaults_to_cluster() {
        let absent = Absent::default();
        let ctx = Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent: &absent,
        };
        let mut ic = class(
            json!({"controller": "example.com/ingress-nginx", "parameters": {"kind": "foo", "name": "bar"}}),
        );
        admit_create::<IngressClassStrategy>(&mut ic, &ctx).expect("valid");
        assert_eq!(
            ic.spec
                .and_then(|s| s.parameters)
                .and_then(|p| p.scope)
                .as_deref(),
            Some("Cluster")
        );
        assert_eq!(ic.metadata.generation, Some(1));
    }
}
