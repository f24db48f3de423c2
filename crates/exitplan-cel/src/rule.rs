//! One compiled `x-kubernetes-validations` rule, and the texts kube-apiserver
//! builds from a rule: the rule as a bad value (Go's `%#v` of the internal
//! `apiextensions.ValidationRule`) and cel-go's rendering of compile issues.

use exitplan_api::field::go_quote;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::ValidationRule;
use kube_cel::cel::Program;

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
