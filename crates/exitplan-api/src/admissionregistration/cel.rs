//! The seam between admission configuration validation and a CEL engine.
//!
//! Upstream's validation compiles every `matchConditions[].expression` and
//! reports compile errors in the same field error list. The CEL engine
//! (`exitplan-cel`) depends on this crate, so validation here is generic
//! over [`AdmissionCel`]: the API server passes the engine, code without one
//! passes [`NoCel`] (which accepts every non-empty expression).

use crate::field::{Error, Path};

/// How an expression failed to compile (`apiserver/pkg/cel.Error`'s types).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CelCompileError {
    /// `ErrorTypeRequired`: reported as `Required value: <detail>`.
    #[error("{0}")]
    Required(String),
    /// `ErrorTypeInvalid`: reported as `Invalid value: "<expression>": <detail>`
    /// (e.g. `compilation failed: ERROR: <input>:1:19: Syntax error: …`).
    #[error("{0}")]
    Invalid(String),
    /// `ErrorTypeInternal`: reported as `Internal error: <detail>`.
    #[error("{0}")]
    Internal(String),
}

impl CelCompileError {
    /// `convertCELErrorToValidationError`: the field error at `path` for
    /// `expression` (the expression as it was compiled).
    pub fn to_field_error(&self, path: &Path, expression: &str) -> Error {
        match self {
            CelCompileError::Required(d) => Error::required(path, d.as_str()),
            CelCompileError::Invalid(d) => Error::invalid(path, expression, d.as_str()),
            CelCompileError::Internal(d) => Error::internal(path, d.as_str()),
        }
    }
}

/// The variables an admission expression may use besides `object`,
/// `oldObject`, `namespaceObject` and `request`
/// (`OptionalVariableDeclarations`, plus variable composition).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Declarations {
    /// `params` (a policy with a `paramKind`).
    pub params: bool,
    /// `authorizer` and `authorizer.requestResource`.
    pub authorizer: bool,
    /// `variables` (a policy with `spec.variables`).
    pub variables: bool,
}

/// The result type an expression must have (`ReturnTypes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultType {
    /// `bool` (match conditions, validations): `must evaluate to bool`.
    Bool,
    /// `string` (message expressions): `must evaluate to string`.
    String,
    /// `string` or `null` (audit annotation values).
    StringOrNull,
    /// Anything (variables).
    Any,
}

/// A CEL compiler for admission expressions.
pub trait AdmissionCel {
    /// Compiles `expression` as kube-apiserver's `CompileCELExpression`
    /// does: `decl` says which optional variables are declared, `result` the
    /// required result type; `stored` says the expression was already in the
    /// stored object (upstream compiles those in the more lenient
    /// `StoredExpressions` environment).
    fn compile(
        expression: &str,
        decl: &Declarations,
        result: ResultType,
        stored: bool,
    ) -> Result<(), CelCompileError>;

    /// A `matchConditions[].expression` (`validateMatchConditionsExpression`):
    /// `authorizer` declared, `params` when `has_params`, result `bool`.
    fn compile_match_condition(
        expression: &str,
        has_params: bool,
        stored: bool,
    ) -> Result<(), CelCompileError> {
        let decl = Declarations {
            params: has_params,
            authorizer: true,
            variables: false,
        };
        Self::compile(expression, &decl, ResultType::Bool, stored)
    }
}

/// No CEL engine: every expression compiles.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCel;

impl AdmissionCel for NoCel {
    fn compile(
        _expression: &str,
        _decl: &Declarations,
        _result: ResultType,
        _stored: bool,
    ) -> Result<(), CelCompileError> {
        Ok(())
    }
}
