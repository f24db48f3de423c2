//! Compiling a CRD schema's `x-kubernetes-validations`: the schema tree with
//! each node's rules parsed and checked, and the CRD validation errors
//! kube-apiserver returns for rules that do not compile
//! (apiextensions `validation.go`'s `x-kubernetes-validations` block and
//! `cel/compilation.go`).

use exitplan_api::field::{BadValue, Error, ErrorList, Path};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, ValidationRule,
};
use kube_cel::cel::ParseErrors;

use crate::check::{Ty, check, node_ty};
use crate::field_path::valid_field_path;
use crate::rule::{
    CompiledRule, Located, Program, Reason, SUPPORTED_REASONS, go_rule_value, locate, render_issues,
};
use crate::schema::Node;

/// Errors found while compiling, kept apart as upstream keeps them: every
/// schema error of the tree is listed before every CEL error.
#[derive(Default)]
pub(crate) struct Errors {
    /// Malformed rules (`rule is not specified`, bad `reason`, …).
    pub schema: ErrorList,
    /// Rules that do not compile, and misused `oldSelf`/`optionalOldSelf`.
    pub cel: ErrorList,
}

/// Builds the node for `schema` at `path`; `forbid_old_self` is the path of the
/// nearest uncorrelatable ancestor (an atomic/set list or an uncorrelatable map).
pub(crate) fn build(
    schema: &JSONSchemaProps,
    path: &Path,
    resource_root: bool,
    forbid_old_self: Option<&Path>,
    errs: &mut Errors,
) -> Node {
    let schema_errs_before = errs.schema.len();
    let mut node = Node {
        ty: schema.type_.clone().unwrap_or_default(),
        format: schema.format.clone().unwrap_or_default(),
        int_or_string: schema.x_kubernetes_int_or_string == Some(true),
        preserve_unknown: schema.x_kubernetes_preserve_unknown_fields == Some(true),
        resource_root,
        list_type: schema.x_kubernetes_list_type.clone(),
        list_map_keys: schema
            .x_kubernetes_list_map_keys
            .clone()
            .unwrap_or_default(),
        map_type: schema.x_kubernetes_map_type.clone(),
        ..Node::default()
    };
    let embedded = |s: &JSONSchemaProps| s.x_kubernetes_embedded_resource == Some(true);

    if let Some(props) = &schema.properties {
        let props_path = path.child("properties");
        for (name, prop) in props {
            let child = build(
                prop,
                &props_path.key(name),
                embedded(prop),
                forbid_old_self,
                errs,
            );
            node.properties.insert(name.clone(), child);
        }
    }
    if let Some(JSONSchemaPropsOrBool::Schema(add)) = &schema.additional_properties {
        let forbid = match forbid_old_self {
            Some(p) => Some(p.clone()),
            None if !node.map_correlatable() => Some(path.clone()),
            None => None,
        };
        let child = build(
            add,
            &path.child("additionalProperties"),
            embedded(add),
            forbid.as_ref(),
            errs,
        );
        node.additional = Some(Box::new(child));
    }
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = &schema.items {
        let forbid = match forbid_old_self {
            Some(p) => Some(p.clone()),
            None if node.list_type.as_deref() != Some("map") => Some(path.clone()),
            None => None,
        };
        let child = build(
            items,
            &path.child("items"),
            embedded(items),
            forbid.as_ref(),
            errs,
        );
        node.items = Some(Box::new(child));
    }

    let mut rules = Vec::new();
    if let Some(all_of) = &schema.all_of {
        // Rules in allOf branches apply to this node's value; they are checked
        // against this node's type.
        for (i, branch) in all_of.iter().enumerate() {
            if let Some(vs) = &branch.x_kubernetes_validations {
                let p = path.child("allOf").index(i);
                rules.push((p, vs));
            }
        }
    }
    let mut compiled = Vec::new();
    if let Some(vs) = &schema.x_kubernetes_validations {
        compiled.extend(compile_rules(
            vs,
            &node,
            path,
            forbid_old_self,
            schema_errs_before,
            errs,
        ));
    }
    for (p, vs) in rules {
        let branch = compile_rules(vs, &node, &p, forbid_old_self, schema_errs_before, errs);
        compiled.extend(branch.into_iter().map(|mut r| {
            r.from_all_of = true;
            r
        }));
    }
    node.rules = compiled;
    node.has_rules = !node.rules.is_empty()
        || node.properties.values().any(|p| p.has_rules)
        || node.additional.as_ref().is_some_and(|a| a.has_rules)
        || node.items.as_ref().is_some_and(|i| i.has_rules);
    node
}

/// Whether `s` holds a line break (`[\n\r]+`).
fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

fn compile_rules(
    rules: &[ValidationRule],
    node: &Node,
    path: &Path,
    forbid_old_self: Option<&Path>,
    schema_errs_before: usize,
    errs: &mut Errors,
) -> Vec<CompiledRule> {
    let xv = path.child("x-kubernetes-validations");
    for (i, rule) in rules.iter().enumerate() {
        let p = xv.index(i);
        let trimmed_rule = rule.rule.trim();
        let message = rule.message.as_deref().unwrap_or("");
        let trimmed_msg = message.trim();
        if trimmed_rule.is_empty() {
            errs.schema
                .push(Error::required(&p.child("rule"), "rule is not specified"));
        } else if !message.is_empty() && trimmed_msg.is_empty() {
            errs.schema.push(Error::invalid(
                &p.child("message"),
                message,
                "message must be non-empty if specified",
            ));
        } else if has_newlines(trimmed_msg) {
            errs.schema.push(Error::invalid(
                &p.child("message"),
                message,
                "message must not contain line breaks",
            ));
        } else if has_newlines(trimmed_rule) && trimmed_msg.is_empty() {
            errs.schema.push(Error::required(
                &p.child("message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        if let Some(me) = &rule.message_expression
            && !me.is_empty()
            && me.trim().is_empty()
        {
            errs.schema.push(Error::required(
                &p.child("messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = &rule.reason
            && Reason::parse(Some(reason)).is_none()
        {
            errs.schema.push(Error::not_supported(
                &p.child("reason"),
                reason.as_str(),
                SUPPORTED_REASONS,
            ));
        }
        if let Some(fp) = &rule.field_path {
            if !fp.is_empty() && fp.trim().is_empty() {
                errs.schema.push(Error::invalid(
                    &p.child("fieldPath"),
                    fp.as_str(),
                    "fieldPath must be non-empty if specified",
                ));
            }
            if has_newlines(fp) {
                errs.schema.push(Error::invalid(
                    &p.child("fieldPath"),
                    fp.as_str(),
                    "fieldPath must not contain line breaks",
                ));
            }
            if !fp.is_empty() && valid_field_path(fp, node).is_err() {
                errs.schema.push(Error::invalid(
                    &p.child("fieldPath"),
                    fp.as_str(),
                    "fieldPath must be a valid path",
                ));
            }
        }
    }
    // Upstream skips compiling when this node or a node below it has schema errors.
    if errs.schema.len() != schema_errs_before {
        return Vec::new();
    }

    let mut out = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let p = xv.index(i);
        let bad = || BadValue::Json(go_rule_value(rule));
        let Some(compiled) = compile_rule(rule, node) else {
            continue; // an empty rule compiles to nothing
        };
        match compiled {
            Err(e) => {
                let (field, detail) = e;
                errs.cel
                    .push(Error::invalid(&p.child(field), bad(), detail));
            }
            Ok(c) => {
                if c.uses_old_self {
                    if let Some(within) = forbid_old_self {
                        errs.cel.push(Error::invalid(
                            &p.child("rule"),
                            rule.rule.as_str(),
                            format!(
                                "oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"
                            ),
                        ));
                    }
                } else if let Some(v) = rule.optional_old_self {
                    errs.cel.push(Error::invalid(
                        &p.child("optionalOldSelf"),
                        v,
                        "may not be set if oldSelf is not used in rule",
                    ));
                }
                out.push(c);
            }
        }
    }
    out
}

/// The located issues of a parse failure.
pub(crate) fn parse_issues(e: &ParseErrors) -> Vec<Located> {
    e.errors
        .iter()
        .map(|pe| Located {
            line: usize::try_from(pe.pos.0).unwrap_or(1).max(1),
            column: usize::try_from(pe.pos.1 - 1).unwrap_or(0),
            message: go_syntax_message(&pe.msg),
        })
        .collect()
}

/// cel-go's ANTLR runtime reports a complete expression followed by more
/// input as `expecting <EOF>`; the Rust runtime lists every token that could
/// have continued the expression. Keep cel-go's wording.
fn go_syntax_message(msg: &str) -> String {
    if let Some(i) = msg.find(" expecting {<EOF>, ")
        && msg.starts_with("Syntax error: mismatched input ")
        && msg.ends_with('}')
    {
        return format!("{} expecting <EOF>", &msg[..i]);
    }
    msg.to_owned()
}

/// Compiles one rule against `node`; `None` for an empty rule, `Err` with the
/// failing field (`rule` or `messageExpression`) and the detail.
fn compile_rule(
    rule: &ValidationRule,
    node: &Node,
) -> Option<Result<CompiledRule, (&'static str, String)>> {
    if rule.rule.trim().is_empty() {
        return None;
    }
    Some(compile_nonempty(rule, node))
}

fn compile_nonempty(
    rule: &ValidationRule,
    node: &Node,
) -> Result<CompiledRule, (&'static str, String)> {
    let src = rule.rule.as_str();
    let program = Program::compile(src).map_err(|e| {
        (
            "rule",
            format!(
                "compilation failed: {}",
                render_issues(src, &parse_issues(&e))
            ),
        )
    })?;
    let optional_old_self = rule.optional_old_self == Some(true);
    let self_ty = node_ty(node);
    let old_ty = if optional_old_self {
        Ty::Optional(Box::new(self_ty.clone()))
    } else {
        self_ty.clone()
    };
    let (ty, issues) = check(src, program.expression(), self_ty.clone(), old_ty.clone());
    if !issues.is_empty() {
        let located: Vec<Located> = issues
            .into_iter()
            .map(|i| locate(src, i.offset, i.message))
            .collect();
        return Err((
            "rule",
            format!("compilation failed: {}", render_issues(src, &located)),
        ));
    }
    if !matches!(ty, Ty::Bool | Ty::Dyn) {
        return Err(("rule", "cel expression must evaluate to a bool".to_owned()));
    }
    let uses_old_self = program.uses("oldSelf");

    let me_src = rule.message_expression.clone().unwrap_or_default();
    let message_expression = if me_src.is_empty() {
        None
    } else {
        let me = Program::compile(&me_src).map_err(|e| {
            (
                "messageExpression",
                format!(
                    "messageExpression compilation failed: {}",
                    render_issues(&me_src, &parse_issues(&e))
                ),
            )
        })?;
        let (ty, issues) = check(&me_src, me.expression(), self_ty, old_ty);
        if !issues.is_empty() {
            let located: Vec<Located> = issues
                .into_iter()
                .map(|i| locate(&me_src, i.offset, i.message))
                .collect();
            return Err((
                "messageExpression",
                format!(
                    "messageExpression compilation failed: {}",
                    render_issues(&me_src, &located)
                ),
            ));
        }
        if !matches!(ty, Ty::String | Ty::Dyn) {
            return Err((
                "messageExpression",
                "messageExpression must evaluate to a string".to_owned(),
            ));
        }
        Some(me)
    };

    let field_path = rule
        .field_path
        .as_deref()
        .filter(|f| !f.is_empty())
        .and_then(|f| valid_field_path(f, node).ok())
        .filter(|f| !f.is_empty());
    let message = rule
        .message
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_owned);
    Ok(CompiledRule {
        rule: src.trim().to_owned(),
        message,
        program,
        message_expression,
        uses_old_self,
        optional_old_self,
        field_path,
        reason: Reason::parse(rule.reason.as_deref()).unwrap_or(Reason::Unset),
        from_all_of: false,
    })
}
