//! `x-kubernetes-validations` CEL rules of CustomResourceDefinitions, as
//! kube-apiserver compiles and evaluates them (apiextensions-apiserver
//! `pkg/apiserver/schema/cel` and the rule checks of CRD validation).
//!
//! ```text
//! CRD create/update ──► CompiledRules::compile(schema, base path)
//!                         ├─ Err(ErrorList)  422: rule/messageExpression compile errors
//!                         └─ Ok(rules)       keep per served version
//! CR create/update  ──► default ─► prune ─► schema validation ─► rules.validate(new, old)
//!                                                                 └─ Outcome { errors, warnings }
//! ```
//!
//! Rules run on the `cel` interpreter with the Kubernetes libraries of
//! `kube-cel`. `cel` has no type checker and no cost tracking: a static check
//! of each rule against its node's schema stands in for the type checks that
//! decide most compile errors (undeclared references, undefined fields,
//! mismatched overloads, result types), and the estimated-cost and runtime
//! cost limits (`PerCallLimit`, `RuntimeCELCostBudget`) are not enforced.
//!
//! [`admission`] compiles the expressions of admission configuration
//! (webhook `matchConditions`, ValidatingAdmissionPolicy validations,
//! message expressions, variables and audit annotations) for
//! `exitplan_api::admissionregistration`, with the same parser and check.
//!
//! Pure: no IO, no clock.

pub mod admission;
mod check;
mod compile;
mod escape;
mod expression;
mod field_path;
mod rule;
mod schema;
mod time;
mod validate;
mod value;

use std::sync::OnceLock;

use exitplan_api::field::{ErrorList, Path};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

pub use expression::Expression;
pub use validate::Outcome;

/// The functions every rule may call, registered once per process.
fn env() -> &'static value::Env {
    static ENV: OnceLock<value::Env> = OnceLock::new();
    ENV.get_or_init(value::Env::new)
}

/// The compiled `x-kubernetes-validations` rules of one version's schema.
#[derive(Debug)]
pub struct CompiledRules {
    root: schema::Node,
}

impl CompiledRules {
    /// Compiles every rule of `schema` (the `openAPIV3Schema` of one version;
    /// its root is the resource root). `base` is where that schema sits in
    /// the CRD (`spec.validation.openAPIV3Schema`,
    /// `spec.versions[0].schema.openAPIV3Schema`); errors are the CRD
    /// validation errors kube-apiserver returns for the rules: malformed rules
    /// first, then rules that do not compile.
    pub fn compile(schema: &JSONSchemaProps, base: &Path) -> Result<CompiledRules, ErrorList> {
        let mut errs = compile::Errors::default();
        let root = compile::build(schema, base, true, None, &mut errs);
        let mut all = errs.schema;
        all.append(errs.cel);
        if all.is_empty() {
            Ok(CompiledRules { root })
        } else {
            Err(all)
        }
    }

    /// Whether any rule was declared (a schema without rules needs no validate call).
    pub fn is_empty(&self) -> bool {
        !self.root.has_rules
    }

    /// Evaluates every rule on `new`, a custom resource after defaulting,
    /// pruning and schema validation; `old` is the stored object on update
    /// (transition rules run only then, and failures of unchanged values
    /// become warnings).
    pub fn validate(&self, new: &serde_json::Value, old: Option<&serde_json::Value>) -> Outcome {
        validate::validate(env(), &self.root, new, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_rules_are_shareable_across_threads() {
        fn shareable<T: Send + Sync + 'static>() {}
        shareable::<CompiledRules>();
        shareable::<Outcome>();
    }
}
