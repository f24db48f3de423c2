//! Validation of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
//! (`pkg/apis/admissionregistration/validation`): failurePolicy, paramKind,
//! matchConstraints / matchResources, matchConditions, variables,
//! validations, auditAnnotations (every CEL expression compiled through
//! [`AdmissionCel`]), the policy status, and the binding's policyName,
//! paramRef and validationActions.

use std::collections::BTreeSet;

use k8s_openapi::api::admissionregistration::v1::{
    MatchResources, NamedRuleWithOperations, ParamKind, ParamRef, RuleWithOperations,
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicyBindingSpec, ValidatingAdmissionPolicySpec,
    ValidatingAdmissionPolicyStatus,
};

use crate::absent::Absent;
use crate::admissionregistration::cel::{AdmissionCel, Declarations, ResultType};
use crate::admissionregistration::webhook::{
    FAILURE_POLICIES, MATCH_POLICIES, Options, validate_match_conditions,
    validate_rule_with_operations,
};
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::generic::path_segment_name_errors;
use crate::meta::{self, NameRule};
use crate::{conditions, render, selector};

/// Most audit annotations a policy may have.
pub const MAX_AUDIT_ANNOTATIONS: usize = 20;
/// Longest audit annotation `valueExpression`, in bytes.
pub const MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH: usize = 5 * 1024;
/// `validationActions` values, sorted.
pub const VALIDATION_ACTIONS: [&str; 3] = ["Audit", "Deny", "Warn"];
/// `validations[].reason` values, sorted.
pub const VALIDATION_REASONS: [&str; 3] = ["Forbidden", "Invalid", "RequestEntityTooLarge"];
/// `paramRef.parameterNotFoundAction` values, in upstream's order.
pub const PARAMETER_NOT_FOUND_ACTIONS: [&str; 2] = ["Deny", "Allow"];

/// CEL's reserved words (cel-go's `reservedIds`): not identifiers, and
/// escaped as `__word__` in schema property names.
pub const CEL_RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// `isCELIdentifier`: `[_a-zA-Z][_a-zA-Z0-9]*` and not reserved.
pub fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !CEL_RESERVED.contains(&name)
}

/// Expressions already stored in the old policy (they compile in the
/// lenient environment).
#[derive(Clone, Debug, Default)]
pub struct Preexisting {
    /// `matchConditions[].expression`.
    pub match_conditions: BTreeSet<String>,
    /// `validations[].expression`.
    pub validations: BTreeSet<String>,
    /// `validations[].messageExpression`.
    pub message_expressions: BTreeSet<String>,
    /// `auditAnnotations[].valueExpression`.
    pub audit_annotation_values: BTreeSet<String>,
}

impl Preexisting {
    /// `findValidatingPolicyPreexistingExpressions`.
    pub fn of(spec: Option<&ValidatingAdmissionPolicySpec>) -> Self {
        let Some(spec) = spec else {
            return Preexisting::default();
        };
        let validations = spec.validations.iter().flatten();
        Preexisting {
            match_conditions: spec
                .match_conditions
                .iter()
                .flatten()
                .map(|m| m.expression.clone())
                .collect(),
            validations: validations.clone().map(|v| v.expression.clone()).collect(),
            message_expressions: validations
                .filter_map(|v| v.message_expression.clone())
                .filter(|m| !m.is_empty())
                .collect(),
            audit_annotation_values: spec
                .audit_annotations
                .iter()
                .flatten()
                .map(|a| a.value_expression.clone())
                .collect(),
        }
    }
}

fn parse_group_version(gv: &str) -> Result<(&str, &str), String> {
    if gv.is_empty() || gv == "/" {
        return Ok(("", ""));
    }
    match gv.matches('/').count() {
        0 => Ok(("", gv)),
        1 => Ok(gv.split_once('/').unwrap_or(("", gv))),
        _ => Err(format!("unexpected GroupVersion string: {gv}")),
    }
}

/// `validateParamKind`.
pub fn validate_param_kind(pk: &ParamKind, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let api_version = pk.api_version.as_deref().unwrap_or_default();
    let av_path = path.child("apiVersion");
    if api_version.is_empty() {
        errs.push(Error::required(&av_path, ""));
    } else {
        match parse_group_version(api_version) {
            Err(e) => errs.push(Error::invalid(&av_path, api_version, e)),
            Ok((group, version)) => {
                if !group.is_empty() {
                    let g = formats::is_dns1123_subdomain(group);
                    if !g.is_empty() {
                        errs.push(Error::invalid(&av_path, group, g.join(",")));
                    }
                }
                if version.is_empty() {
                    errs.push(Error::invalid(
                        &av_path,
                        api_version,
                        "version must be specified",
                    ));
                } else {
                    let v = formats::is_dns1035_label(version);
                    if !v.is_empty() {
                        errs.push(Error::invalid(&av_path, version, v.join(",")));
                    }
                }
            }
        }
    }
    let kind = pk.kind.as_deref().unwrap_or_default();
    if kind.is_empty() {
        errs.push(Error::required(&path.child("kind"), ""));
    } else {
        let k = formats::is_dns1035_label(&kind.to_lowercase());
        if !k.is_empty() {
            errs.push(Error::invalid(
                &path.child("kind"),
                kind,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    k.join(",")
                ),
            ));
        }
    }
    errs
}

fn as_rule(n: &NamedRuleWithOperations) -> RuleWithOperations {
    RuleWithOperations {
        api_groups: n.api_groups.clone(),
        api_versions: n.api_versions.clone(),
        operations: n.operations.clone(),
        resources: n.resources.clone(),
        scope: n.scope.clone(),
    }
}

/// `validateNamedRuleWithOperations`: resource names are path segments,
/// unique; then the rule.
pub fn validate_named_rule(n: &NamedRuleWithOperations, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen = BTreeSet::new();
    for (i, name) in n.resource_names.iter().flatten().enumerate() {
        let p = path.child("resourceNames").index(i);
        for msg in path_segment_name_errors(name, false) {
            errs.push(Error::invalid(&p, name.as_str(), msg));
        }
        if !seen.insert(name.as_str()) {
            errs.push(Error::duplicate(&p, name.as_str()));
        }
    }
    errs.append(validate_rule_with_operations(&as_rule(n), path));
    errs
}

/// `validateMatchResources`: matchPolicy and both selectors required (they
/// are defaulted), selectors strict, every rule valid.
pub fn validate_match_resources(mr: Option<&MatchResources>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(mr) = mr else {
        return errs;
    };
    match mr.match_policy.as_deref() {
        None => errs.push(Error::required(&path.child("matchPolicy"), "")),
        Some(p) if !MATCH_POLICIES.contains(&p) => errs.push(Error::not_supported(
            &path.child("matchPolicy"),
            p,
            &MATCH_POLICIES,
        )),
        Some(_) => {}
    }
    for (field, sel) in [
        ("namespaceSelector", mr.namespace_selector.as_ref()),
        ("objectSelector", mr.object_selector.as_ref()),
    ] {
        match sel {
            None => errs.push(Error::required(&path.child(field), "")),
            Some(s) => errs.append(selector::validate_label_selector(
                Some(s),
                false,
                &path.child(field),
            )),
        }
    }
    for (i, r) in mr.resource_rules.iter().flatten().enumerate() {
        errs.append(validate_named_rule(
            r,
            &path.child("resourceRules").index(i),
        ));
    }
    for (i, r) in mr.exclude_resource_rules.iter().flatten().enumerate() {
        errs.append(validate_named_rule(
            r,
            &path.child("excludeResourceRules").index(i),
        ));
    }
    errs
}

fn compile<C: AdmissionCel>(
    expression: &str,
    shown: &str,
    decl: &Declarations,
    result: ResultType,
    stored: bool,
    path: &Path,
) -> Option<Error> {
    C::compile(expression, decl, result, stored)
        .err()
        .map(|e| e.to_field_error(path, shown))
}

fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// `validateValidatingAdmissionPolicySpec`.
pub fn validate_policy_spec<C: AdmissionCel>(
    name: &str,
    spec: &ValidatingAdmissionPolicySpec,
    ignore_match_conditions: bool,
    pre: &Preexisting,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    match spec.failure_policy.as_deref() {
        None => errs.push(Error::required(&path.child("failurePolicy"), "")),
        Some(p) if !FAILURE_POLICIES.contains(&p) => errs.push(Error::not_supported(
            &path.child("failurePolicy"),
            p,
            &FAILURE_POLICIES,
        )),
        Some(_) => {}
    }
    let has_params = spec.param_kind.is_some();
    if let Some(pk) = &spec.param_kind {
        errs.append(validate_param_kind(pk, &path.child("paramKind")));
    }
    match &spec.match_constraints {
        None => errs.push(Error::required(&path.child("matchConstraints"), "")),
        Some(mc) => {
            errs.append(validate_match_resources(
                Some(mc),
                &path.child("matchConstraints"),
            ));
            if mc.resource_rules.as_deref().unwrap_or_default().is_empty() {
                errs.push(Error::required(
                    &path.child("matchConstraints").child("resourceRules"),
                    "",
                ));
            }
        }
    }
    if !ignore_match_conditions {
        let opts = Options {
            preexisting_match_conditions: pre.match_conditions.clone(),
            ..Options::create()
        };
        errs.append(validate_match_conditions::<C>(
            spec.match_conditions.as_deref().unwrap_or_default(),
            &opts,
            has_params,
            &path.child("matchConditions"),
        ));
    }
    let variables = spec.variables.as_deref().unwrap_or_default();
    let composition = !variables.is_empty();
    let decl = |authorizer: bool| Declarations {
        params: has_params,
        authorizer,
        variables: composition,
    };
    for (i, v) in variables.iter().enumerate() {
        let p = path.child("variables").index(i);
        if v.name.trim().is_empty() {
            errs.push(Error::required(&p.child("name"), "name is not specified"));
        } else if !is_cel_identifier(&v.name) {
            errs.push(Error::invalid(
                &p.child("name"),
                v.name.as_str(),
                "name is not a valid CEL identifier",
            ));
        }
        if v.expression.trim().is_empty() {
            errs.push(Error::required(
                &p.child("expression"),
                "expression is not specified",
            ));
        } else {
            let stored = pre.validations.contains(&v.expression);
            errs.extend(compile::<C>(
                &v.expression,
                &v.expression,
                &decl(true),
                ResultType::Any,
                stored,
                &p.child("expression"),
            ));
        }
    }
    let validations = spec.validations.as_deref().unwrap_or_default();
    let audit = spec.audit_annotations.as_deref().unwrap_or_default();
    if validations.is_empty() && audit.is_empty() {
        let detail = "validations or auditAnnotations must contain at least one item";
        errs.push(Error::required(&path.child("validations"), detail));
        errs.push(Error::required(&path.child("auditAnnotations"), detail));
        return errs;
    }
    for (i, v) in validations.iter().enumerate() {
        let p = path.child("validations").index(i);
        if v.expression.trim().is_empty() {
            errs.push(Error::required(
                &p.child("expression"),
                "expression is not specified",
            ));
        } else {
            errs.extend(compile::<C>(
                &v.expression,
                &v.expression,
                &decl(true),
                ResultType::Bool,
                pre.validations.contains(&v.expression),
                &p.child("expression"),
            ));
        }
        let me = v.message_expression.as_deref().unwrap_or_default();
        if !me.is_empty() && me.trim().is_empty() {
            errs.push(Error::invalid(
                &p.child("messageExpression"),
                me,
                "must be non-empty if specified",
            ));
        } else if !me.trim().is_empty() {
            errs.extend(compile::<C>(
                me,
                me,
                &Declarations {
                    params: has_params,
                    authorizer: false,
                    variables: composition,
                },
                ResultType::String,
                pre.message_expressions.contains(me),
                &p.child("messageExpression"),
            ));
        }
        let msg = v.message.as_deref().unwrap_or_default();
        if !msg.is_empty() && msg.trim().is_empty() {
            errs.push(Error::invalid(
                &p.child("message"),
                msg,
                "message must be non-empty if specified",
            ));
        } else if has_newlines(msg.trim()) {
            errs.push(Error::invalid(
                &p.child("message"),
                msg,
                "message must not contain line breaks",
            ));
        }
        if let Some(r) = v.reason.as_deref()
            && !VALIDATION_REASONS.contains(&r)
        {
            errs.push(Error::not_supported(
                &p.child("reason"),
                r,
                &VALIDATION_REASONS,
            ));
        }
    }
    if spec.audit_annotations.is_some() {
        if audit.len() > MAX_AUDIT_ANNOTATIONS {
            errs.push(Error::invalid(
                &path.child("auditAnnotations"),
                BadValue::Json(render::json(&audit)),
                format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
            ));
        }
        let mut keys = BTreeSet::new();
        for (i, a) in audit.iter().enumerate() {
            let p = path.child("auditAnnotations").index(i);
            if name.is_empty() {
                errs.push(Error::invalid(
                    &p.child("key"),
                    a.key.as_str(),
                    "requires metadata.name be non-empty",
                ));
            } else {
                errs.append(formats::validate_qualified_name(
                    &p.child("key"),
                    &format!("{name}/{}", a.key),
                ));
            }
            let value = a.value_expression.trim();
            if value.is_empty() {
                errs.push(Error::required(
                    &p.child("valueExpression"),
                    "valueExpression is not specified",
                ));
            } else if value.len() > MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH {
                errs.push(Error::required(
                    &p.child("valueExpression"),
                    format!(
                        "must not exceed {MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH} bytes in length"
                    ),
                ));
            } else {
                errs.extend(compile::<C>(
                    value,
                    &a.value_expression,
                    &decl(true),
                    ResultType::StringOrNull,
                    pre.audit_annotation_values.contains(&a.value_expression),
                    &p.child("valueExpression"),
                ));
            }
            if !keys.insert(a.key.as_str()) {
                errs.push(Error::duplicate(&p.child("key"), a.key.as_str()));
            }
        }
    }
    errs
}

/// `ValidateValidatingAdmissionPolicy`.
pub fn validate_policy<C: AdmissionCel>(p: &ValidatingAdmissionPolicy) -> ErrorList {
    validate_policy_with::<C>(p, false, &Preexisting::default())
}

fn validate_policy_with<C: AdmissionCel>(
    p: &ValidatingAdmissionPolicy,
    ignore_match_conditions: bool,
    pre: &Preexisting,
) -> ErrorList {
    let mut errs = meta::validate_object_meta(&p.metadata, false, NameRule::Subdomain);
    let spec = p.spec.clone().unwrap_or_default();
    errs.append(validate_policy_spec::<C>(
        p.metadata.name.as_deref().unwrap_or_default(),
        &spec,
        ignore_match_conditions,
        pre,
        &Path::new("spec"),
    ));
    errs
}

/// `ValidateValidatingAdmissionPolicyUpdate`: unchanged paramKind and
/// matchConditions are not revalidated; stored expressions compile leniently.
pub fn validate_policy_update<C: AdmissionCel>(
    new: &ValidatingAdmissionPolicy,
    old: &ValidatingAdmissionPolicy,
) -> ErrorList {
    let (ns, os) = (new.spec.as_ref(), old.spec.as_ref());
    let ignore = ns.and_then(|s| s.param_kind.as_ref()) == os.and_then(|s| s.param_kind.as_ref())
        && ns.and_then(|s| s.match_conditions.as_ref())
            == os.and_then(|s| s.match_conditions.as_ref());
    validate_policy_with::<C>(new, ignore, &Preexisting::of(os))
}

/// `validateValidatingAdmissionPolicyStatus`: expression warnings name a
/// field and say something; conditions are valid `metav1.Condition`s.
pub fn validate_policy_status(
    status: Option<&ValidatingAdmissionPolicyStatus>,
    absent: &Absent,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(status) = status else {
        return errs;
    };
    let path = Path::new("status");
    let warnings = status
        .type_checking
        .as_ref()
        .and_then(|t| t.expression_warnings.as_deref())
        .unwrap_or_default();
    for (i, w) in warnings.iter().enumerate() {
        let p = path
            .child("typeChecking")
            .child("expressionWarnings")
            .index(i);
        if w.warning.is_empty() {
            errs.push(Error::required(&p.child("warning"), ""));
        }
        if w.field_ref.trim().is_empty() {
            errs.push(Error::required(&p.child("fieldRef"), ""));
        }
    }
    errs.append(conditions::validate_conditions(
        status.conditions.as_deref().unwrap_or_default(),
        &path.child("conditions"),
        absent,
    ));
    errs
}

/// `validateParamRef`.
pub fn validate_param_ref(pr: Option<&ParamRef>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(pr) = pr else {
        return errs;
    };
    let name = pr.name.as_deref().unwrap_or_default();
    let exclusive = "name and selector are mutually exclusive";
    if !name.is_empty() {
        for msg in path_segment_name_errors(name, false) {
            errs.push(Error::invalid(&path.child("name"), name, msg));
        }
        if pr.selector.is_some() {
            errs.push(Error::forbidden(&path.child("name"), exclusive));
        }
    }
    if let Some(sel) = &pr.selector {
        errs.append(selector::validate_label_selector(
            Some(sel),
            false,
            &path.child("selector"),
        ));
        if !name.is_empty() {
            errs.push(Error::forbidden(&path.child("selector"), exclusive));
        }
    }
    if name.is_empty() && pr.selector.is_none() {
        errs.push(Error::required(
            path,
            "one of name or selector must be specified",
        ));
    }
    match pr.parameter_not_found_action.as_deref() {
        None | Some("") => errs.push(Error::required(&path.child("parameterNotFoundAction"), "")),
        Some(a) if !PARAMETER_NOT_FOUND_ACTIONS.contains(&a) => errs.push(Error::not_supported(
            &path.child("parameterNotFoundAction"),
            a,
            &PARAMETER_NOT_FOUND_ACTIONS,
        )),
        Some(_) => {}
    }
    errs
}

/// `validateValidationActions`: known, unique, not both Deny and Warn, at
/// least one.
pub fn validate_validation_actions(actions: &[String], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen = BTreeSet::new();
    for (i, a) in actions.iter().enumerate() {
        if !VALIDATION_ACTIONS.contains(&a.as_str()) {
            errs.push(Error::not_supported(
                &path.index(i),
                a.as_str(),
                &VALIDATION_ACTIONS,
            ));
        }
        if !seen.insert(a.as_str()) {
            errs.push(Error::duplicate(&path.index(i), a.as_str()));
        }
    }
    if seen.contains("Deny") && seen.contains("Warn") {
        errs.push(Error::invalid(
            path,
            BadValue::Json(render::strings(actions)),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(Error::required(
            path,
            "at least one validation action is required",
        ));
    }
    errs
}

/// `validateValidatingAdmissionPolicyBindingSpec` (upstream reports
/// matchResources errors under its misspelled `matchResouces`).
pub fn validate_binding_spec(
    spec: &ValidatingAdmissionPolicyBindingSpec,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if spec.policy_name.is_empty() {
        errs.push(Error::required(&path.child("policyName"), ""));
    } else {
        for msg in formats::is_dns1123_subdomain(&spec.policy_name) {
            errs.push(Error::invalid(
                &path.child("policyName"),
                spec.policy_name.as_str(),
                msg,
            ));
        }
    }
    errs.append(validate_param_ref(
        spec.param_ref.as_ref(),
        &path.child("paramRef"),
    ));
    errs.append(validate_match_resources(
        spec.match_resources.as_ref(),
        &path.child("matchResouces"),
    ));
    errs.append(validate_validation_actions(
        &spec.validation_actions,
        &path.child("validationActions"),
    ));
    errs
}

/// `ValidateValidatingAdmissionPolicyBinding` (also its update).
pub fn validate_binding(b: &ValidatingAdmissionPolicyBinding) -> ErrorList {
    let mut errs = meta::validate_object_meta(&b.metadata, false, NameRule::Subdomain);
    errs.append(validate_binding_spec(&b.spec, &Path::new("spec")));
    errs
}
