//! A standalone CEL expression over plain JSON variables (no schema): what
//! admission `matchConditions` evaluate, with `object`, `oldObject` and
//! `request` bound.

use kube_cel::cel::Value;

use crate::rule::Program;

/// A parsed expression.
#[derive(Debug)]
pub struct Expression(Program);

impl Expression {
    /// Parses `source` (the error is the parser's rendering).
    pub fn compile(source: &str) -> Result<Expression, String> {
        Program::compile(source)
            .map(Expression)
            .map_err(|e| e.to_string())
    }

    /// Evaluates the expression with `vars` bound (JSON converted as
    /// untyped values); an error unless the result is a bool.
    pub fn eval_bool(&self, vars: &[(&str, &serde_json::Value)]) -> Result<bool, String> {
        let env = crate::env();
        let mut scope = env.ctx.new_inner_scope();
        for (name, value) in vars {
            scope.add_variable_from_value(*name, env.to_cel(value, None));
        }
        match self.0.execute(&scope) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(other) => Err(format!(
                "cel expression must evaluate to a bool, got {other:?}"
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_over_json_variables() {
        let obj = serde_json::json!({"metadata": {"name": "a", "labels": {"x": "y"}}});
        let req = serde_json::json!({"operation": "CREATE"});
        let vars = [("object", &obj), ("request", &req)];
        let cases = [
            ("object.metadata.name == 'a'", Ok(true)),
            ("request.operation == 'UPDATE'", Ok(false)),
            ("'x' in object.metadata.labels", Ok(true)),
            ("has(object.spec)", Ok(false)),
        ];
        for (src, want) in cases {
            let e = Expression::compile(src).expect("compiles");
            assert_eq!(e.eval_bool(&vars), want, "{src}");
        }
        let e = Expression::compile("object.metadata.name").expect("compiles");
        assert!(e.eval_bool(&vars).is_err());
        let e = Expression::compile("object.nope == 1").expect("compiles");
        assert!(e.eval_bool(&vars).is_err());
        assert!(Expression::compile("object.(").is_err());
    }
}
