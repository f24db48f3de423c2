//! CEL of admission configuration (`k8s.io/apiserver/pkg/admission/plugin/cel`):
//! compiling a webhook's `matchConditions[].expression` as kube-apiserver's
//! validation does, for [`exitplan_api::admissionregistration`].
//!
//! The declared variables are `object`, `oldObject`, `namespaceObject`,
//! `request` and `authorizer` (plus `params` where a policy has a
//! `paramKind`), all `dyn` to the static check: an undeclared reference, a
//! syntax error or a result that is certainly not a `bool` fails, as
//! upstream; a result the check cannot type (`object.spec.enabled`) passes,
//! where cel-go's checker would refuse a `dyn` result.

use exitplan_api::admissionregistration::cel::{
    AdmissionCel, CelCompileError, Declarations, ResultType,
};

use crate::check::{Ty, check_in_scope};
use crate::compile::parse_issues;
use crate::rule::{Located, Program, locate, render_issues};

/// The CEL engine for admission configuration validation.
#[derive(Clone, Copy, Debug, Default)]
pub struct AdmissionCompiler;

/// The variables every admission expression may use.
const VARIABLES: [&str; 4] = ["object", "oldObject", "namespaceObject", "request"];

/// Compiles `expression` with the admission variables and those `decl`
/// adds, expecting `result` (`CompileCELExpression`).
pub fn compile_expression(
    expression: &str,
    decl: &Declarations,
    result: ResultType,
) -> Result<(), CelCompileError> {
    let program = Program::compile(expression).map_err(|e| {
        CelCompileError::Invalid(format!(
            "compilation failed: {}",
            render_issues(expression, &parse_issues(&e))
        ))
    })?;
    let mut scope: Vec<(String, Ty<'_>)> = VARIABLES
        .iter()
        .map(|v| ((*v).to_owned(), Ty::Dyn))
        .collect();
    for (declared, name) in [
        (decl.params, "params"),
        (decl.authorizer, "authorizer"),
        (decl.variables, "variables"),
    ] {
        if declared {
            scope.push((name.to_owned(), Ty::Dyn));
        }
    }
    let (ty, issues) = check_in_scope(expression, program.expression(), scope);
    if !issues.is_empty() {
        let located: Vec<Located> = issues
            .into_iter()
            .map(|i| locate(expression, i.offset, i.message))
            .collect();
        return Err(CelCompileError::Invalid(format!(
            "compilation failed: {}",
            render_issues(expression, &located)
        )));
    }
    let ok = match result {
        ResultType::Any => true,
        ResultType::Bool => matches!(ty, Ty::Bool | Ty::Dyn),
        ResultType::String => matches!(ty, Ty::String | Ty::Dyn),
        ResultType::StringOrNull => matches!(ty, Ty::String | Ty::Null | Ty::Dyn),
    };
    if ok {
        return Ok(());
    }
    Err(CelCompileError::Invalid(
        match result {
            ResultType::Bool => "must evaluate to bool",
            ResultType::String => "must evaluate to string",
            _ => "must evaluate to one of [string null_type]",
        }
        .to_owned(),
    ))
}

/// [`compile_expression`] for a match condition: `authorizer` declared,
/// `params` when `has_params`, result `bool`.
pub fn compile_bool_expression(expression: &str, has_params: bool) -> Result<(), CelCompileError> {
    let decl = Declarations {
        params: has_params,
        authorizer: true,
        variables: false,
    };
    compile_expression(expression, &decl, ResultType::Bool)
}

impl AdmissionCel for AdmissionCompiler {
    /// Stored and new expressions compile in the same environment here (the
    /// libraries exitplan offers do not change between the two).
    fn compile(
        expression: &str,
        decl: &Declarations,
        result: ResultType,
        _stored: bool,
    ) -> Result<(), CelCompileError> {
        compile_expression(expression, decl, result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CEL cases of upstream's `TestValidateValidatingWebhookConfiguration`
    /// and `TestValidateMatchConditions`-style expressions.
    #[test]
    fn match_condition_compile_table() {
        let cases: &[(&str, bool, Result<(), CelCompileError>)] = &[
            ("true", false, Ok(())),
            ("object.metadata.name == 'x'", false, Ok(())),
            (
                "request.userInfo.username.startsWith('system:')",
                false,
                Ok(()),
            ),
            (
                "authorizer.group('').resource('pods').check('get').allowed()",
                false,
                Ok(()),
            ),
            ("has(object.spec) && oldObject == null", false, Ok(())),
            (
                "object.x in [1, 2,",
                false,
                Err(CelCompileError::Invalid(
                    "compilation failed: ERROR: <input>:1:19: Syntax error: missing ']' at '<EOF>'\n | object.x in [1, 2,\n | ..................^".into(),
                )),
            ),
            (
                "6",
                false,
                Err(CelCompileError::Invalid("must evaluate to bool".into())),
            ),
            (
                "'a' + 'b'",
                false,
                Err(CelCompileError::Invalid("must evaluate to bool".into())),
            ),
            (
                "params.x == 1",
                false,
                Err(CelCompileError::Invalid(
                    "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^".into(),
                )),
            ),
            ("params.x == 1", true, Ok(())),
        ];
        for (expr, params, want) in cases {
            assert_eq!(&compile_bool_expression(expr, *params), want, "{expr}");
        }
    }
}
