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

/// A CEL compiler for admission expressions.
pub trait AdmissionCel {
    /// Compiles a `matchConditions[].expression` as kube-apiserver does
    /// (`validateMatchConditionsExpression`): variables `object`,
    /// `oldObject`, `request`, `authorizer` (and `params` when `has_params`),
    /// result type `bool`. `stored` says the expression was already in the
    /// stored object (upstream compiles those in the more lenient
    /// `StoredExpressions` environment).
    fn compile_match_condition(
        expression: &str,
        has_params: bool,
        stored: bool,
    ) -> Result<(), CelCompileError>;
}

/// No CEL engine: every expression compiles.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCel;

impl AdmissionCel for NoCel {
    fn compile_match_condition(
        _expression: &str,
        _has_params: bool,
        _stored: bool,
    ) -> Result<(), CelCompileError> {
        Ok(())
    }
}
