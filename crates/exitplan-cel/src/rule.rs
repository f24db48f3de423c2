//! One compiled `x-kubernetes-validations` rule, and the texts kube-apiserver
//! builds from a rule: the rule as a bad value (Go's `%#v` of the internal
//! `apiextensions.ValidationRule`) and cel-go's rendering of compile issues.

use exitplan_api::field::go_quote;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::ValidationRule;
use kube_cel::cel::common::ast::{CallExpr, Expr, IdedExpr, LiteralValue, SelectExpr};
use kube_cel::cel::parser::{Expression, Parser};
use kube_cel::cel::{Context, ParseErrors, ResolveResult, Value};

/// A parsed CEL expression, with the optional syntax (`self.?field`,
/// `[?x]`) that Kubernetes enables for CRD rules.
#[derive(Debug)]
pub(crate) struct Program(Expression);

impl Program {
    /// Parses `source`.
    pub fn compile(source: &str) -> Result<Program, ParseErrors> {
        let mut expr = Parser::new().enable_optional_syntax(true).parse(source)?;
        rewrite_optional_select(&mut expr);
        Ok(Program(expr))
    }

    /// Evaluates the expression in `ctx`.
    pub fn execute(&self, ctx: &Context<'_>) -> ResolveResult {
        Value::resolve(&self.0, ctx)
    }

    /// The parsed expression.
    pub fn expression(&self) -> &Expression {
        &self.0
    }

    /// Whether the expression refers to variable `name`.
    pub fn uses(&self, name: &str) -> bool {
        self.0.references().has_variable(name)
    }
}

/// The `reason` of a rule: which field error a failure becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    /// No reason: `FieldValueInvalid` with the schema type as the value.
    Unset,
    /// `FieldValueInvalid`.
    Invalid,
    /// `FieldValueForbidden`.
    Forbidden,
    /// `FieldValueRequired`.
    Required,
    /// `FieldValueDuplicate`.
    Duplicate,
}

/// Rewrites `a.?b` as `has(a.b) ? optional.of(a.b) : optional.none()`: the
/// interpreter's optional selection fails with "no such key" on an absent
/// field instead of giving `optional.none()`. A selection on an optional
/// (`a.?b.?c`) is left to the interpreter.
fn rewrite_optional_select(e: &mut IdedExpr) {
    if let Expr::Call(call) = &e.expr
        && call.func_name == "_?._"
        && let [operand, field] = call.args.as_slice()
        && let Expr::Literal(LiteralValue::String(field)) = &field.expr
        && !is_optional_producer(operand)
    {
        let id = e.id;
        let field = field.inner().to_string();
        let select = |test: bool| IdedExpr {
            id,
            expr: Expr::Select(SelectExpr {
                operand: Box::new(operand.clone()),
                field: field.clone(),
                test,
            }),
        };
        let optional = |name: &str, args: Vec<IdedExpr>| IdedExpr {
            id,
            expr: Expr::Call(CallExpr {
                func_name: name.to_owned(),
                target: Some(Box::new(IdedExpr {
                    id,
                    expr: Expr::Ident("optional".to_owned()),
                })),
                args,
            }),
        };
        e.expr = Expr::Call(CallExpr {
            func_name: "_?_:_".to_owned(),
            target: None,
            args: vec![
                select(true),
                optional("of", vec![select(false)]),
                optional("none", vec![]),
            ],
        });
    }
    match &mut e.expr {
        Expr::Call(call) => {
            if let Some(t) = call.target.as_deref_mut() {
                rewrite_optional_select(t);
            }
            call.args.iter_mut().for_each(rewrite_optional_select);
        }
        Expr::Select(s) => rewrite_optional_select(&mut s.operand),
        Expr::List(l) => l.elements.iter_mut().for_each(rewrite_optional_select),
        Expr::Comprehension(c) => {
            rewrite_optional_select(&mut c.iter_range);
            rewrite_optional_select(&mut c.accu_init);
            rewrite_optional_select(&mut c.loop_cond);
            rewrite_optional_select(&mut c.loop_step);
            rewrite_optional_select(&mut c.result);
        }
        _ => {}
    }
}

/// Whether `e` is an optional selection or index (its value is an optional).
fn is_optional_producer(e: &IdedExpr) -> bool {
    matches!(&e.expr, Expr::Call(c) if c.func_name == "_?._" || c.func_name == "_[?_]")
}

/// The reasons a rule may declare, sorted as `sets.List` returns them.
pub(crate) const SUPPORTED_REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

impl Reason {
    /// The reason named by `reason`, `None` when it is not supported.
    pub fn parse(reason: Option<&str>) -> Option<Reason> {
        Some(match reason {
            None => Reason::Unset,
            Some("FieldValueInvalid") => Reason::Invalid,
            Some("FieldValueForbidden") => Reason::Forbidden,
            Some("FieldValueRequired") => Reason::Required,
            Some("FieldValueDuplicate") => Reason::Duplicate,
            Some(_) => return None,
        })
    }
}

/// A rule ready to evaluate.
#[derive(Debug)]
pub(crate) struct CompiledRule {
    /// The rule text, trimmed (`ruleErrorString` when there is no message).
    pub rule: String,
    /// The trimmed `message`, when non-empty.
    pub message: Option<String>,
    /// The parsed rule.
    pub program: Program,
    /// The parsed `messageExpression`.
    pub message_expression: Option<Program>,
    /// The rule refers to `oldSelf` (a transition rule).
    pub uses_old_self: bool,
    /// `optionalOldSelf: true`: evaluated on create too, `oldSelf` an optional.
    pub optional_old_self: bool,
    /// The normalized `fieldPath` (`.spec.x` → `spec.x`), appended to the node's path.
    pub field_path: Option<String>,
    /// The field error a failure becomes.
    pub reason: Reason,
    /// Declared in an `allOf` branch: ratcheted only by the parent's correlation.
    pub from_all_of: bool,
}

impl CompiledRule {
    /// `ruleErrorString`: the message when there is one, else the rule.
    pub fn error_string(&self) -> &str {
        self.message.as_deref().unwrap_or(&self.rule)
    }

    /// `ruleMessageOrDefault`.
    pub fn message_or_default(&self) -> String {
        match &self.message {
            Some(m) => m.clone(),
            None => format!("failed rule: {}", self.rule),
        }
    }
}

/// Go's `%#v` of the internal `apiextensions.ValidationRule`, the bad value of
/// rule compile errors. A set `reason`/`optionalOldSelf` is a pointer that Go
/// prints as an address; a fixed one stands in for it.
pub(crate) fn go_rule_value(r: &ValidationRule) -> String {
    let ptr = |set: bool, ty: &str| {
        if set {
            format!("(*{ty})(0xc000000000)")
        } else {
            format!("(*{ty})(nil)")
        }
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
        go_quote(&r.rule),
        go_quote(r.message.as_deref().unwrap_or("")),
        go_quote(r.message_expression.as_deref().unwrap_or("")),
        ptr(r.reason.is_some(), "apiextensions.FieldValueErrorReason"),
        go_quote(r.field_path.as_deref().unwrap_or("")),
        ptr(r.optional_old_self.is_some(), "bool"),
    )
}

/// One compile issue at a 1-based line and 0-based column (in characters).
pub(crate) struct Located {
    /// 1-based line.
    pub line: usize,
    /// 0-based column, in characters.
    pub column: usize,
    /// The message.
    pub message: String,
}

/// The line and column of byte `offset` of `source`.
pub(crate) fn locate(source: &str, offset: usize, message: String) -> Located {
    let mut line = 1;
    let mut line_start = 0;
    for (i, c) in source.char_indices() {
        if i >= offset {
            break;
        }
        if c == '\n' {
            line += 1;
            line_start = i + 1;
        }
    }
    let column = source
        .get(line_start..offset.min(source.len()))
        .map_or(0, |s| s.chars().count());
    Located {
        line,
        column,
        message,
    }
}

/// cel-go's `Issues.String()`: each issue as `ERROR: <input>:L:C: msg`
/// followed by the source line and a caret under the column.
pub(crate) fn render_issues(source: &str, issues: &[Located]) -> String {
    let mut out = Vec::new();
    for issue in issues {
        let mut s = format!(
            "ERROR: <input>:{}:{}: {}",
            issue.line,
            issue.column + 1,
            issue.message
        );
        if let Some(snippet) = source.split('\n').nth(issue.line.saturating_sub(1)) {
            let snippet = snippet.replace('\t', " ");
            s.push_str("\n | ");
            s.push_str(&snippet);
            s.push_str("\n | ");
            let mut chars = snippet.chars();
            for _ in 0..issue.column {
                match chars.next() {
                    Some(c) if c.len_utf8() > 1 => s.push('\u{FF0E}'),
                    Some(_) => s.push('.'),
                    None => break,
                }
            }
            match chars.next() {
                Some(c) if c.len_utf8() > 1 => s.push('\u{FF3E}'),
                _ => s.push('^'),
            }
        }
        out.push(s);
    }
    out.join("\n")
}
