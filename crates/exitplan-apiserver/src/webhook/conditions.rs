//! `matchConditions`: CEL expressions over `object`, `oldObject`, `request`
//! that must all be true for a webhook to be called.

use k8s_openapi::api::admissionregistration::v1::MatchCondition;
use serde_json::Value;

/// The compiled conditions of one webhook.
#[derive(Debug)]
pub struct Compiled {
    conditions: Vec<(String, exitplan_cel::Expression)>,
}

impl Compiled {
    /// Compiles `conditions` (an error names the first that does not parse).
    pub fn new(conditions: &[MatchCondition]) -> Result<Compiled, String> {
        let mut out = Vec::with_capacity(conditions.len());
        for c in conditions {
            let expr = exitplan_cel::Expression::compile(&c.expression).map_err(|e| {
                format!("compilation failed for expression '{}': {e}", c.expression)
            })?;
            out.push((c.expression.clone(), expr));
        }
        Ok(Compiled { conditions: out })
    }

    /// Whether the conditions hold (`matchconditions.Matcher.Match`): any
    /// false condition is a no-match, even if another errs; otherwise the
    /// first error is the answer.
    pub fn matches(&self, vars: &[(&str, &Value)]) -> Result<bool, String> {
        let mut first_error = None;
        for (source, expr) in &self.conditions {
            match expr.eval_bool(vars) {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) => {
                    first_error.get_or_insert_with(|| {
                        format!("expression '{source}' resulted in error: {e}")
                    });
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(true),
        }
    }

    /// Whether there are no conditions.
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }
}
