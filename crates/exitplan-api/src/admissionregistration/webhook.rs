//! Validation of ValidatingWebhookConfiguration and
//! MutatingWebhookConfiguration (`pkg/apis/admissionregistration/validation`):
//! webhook names, rules, policies, timeouts, selectors, client config,
//! `admissionReviewVersions` and `matchConditions`, and the update rules that
//! keep a stored configuration updatable when it predates a rule.

use std::collections::BTreeSet;

use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations,
    ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::absent::Absent;
use crate::admissionregistration::cel::AdmissionCel;
use crate::apiextensions::webhook::{validate_webhook_service_path, validate_webhook_url};
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, NameRule};
use crate::{render, selector};

/// `failurePolicy` values, sorted.
pub const FAILURE_POLICIES: [&str; 2] = ["Fail", "Ignore"];
/// `matchPolicy` values, sorted.
pub const MATCH_POLICIES: [&str; 2] = ["Equivalent", "Exact"];
/// Every `sideEffects` class, sorted (`supportedSideEffectClasses`).
pub const SIDE_EFFECT_CLASSES: [&str; 4] = ["None", "NoneOnDryRun", "Some", "Unknown"];
/// The classes a v1 webhook may declare (`noSideEffectClasses`).
pub const NO_SIDE_EFFECT_CLASSES: [&str; 2] = ["None", "NoneOnDryRun"];
/// Rule operations, sorted (`supportedOperations`).
pub const OPERATIONS: [&str; 5] = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
/// `reinvocationPolicy` values, sorted.
pub const REINVOCATION_POLICIES: [&str; 2] = ["IfNeeded", "Never"];
/// Rule scopes, sorted (`validScopes`).
pub const SCOPES: [&str; 3] = ["*", "Cluster", "Namespaced"];
/// AdmissionReview versions the server understands (`AcceptedAdmissionReviewVersions`).
pub const ACCEPTED_ADMISSION_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];
/// Most `matchConditions` a webhook may have.
pub const MAX_MATCH_CONDITIONS: usize = 64;

/// The fields validation reads, shared by validating and mutating webhooks.
#[derive(Clone, Copy, Debug)]
pub struct Hook<'a> {
    /// `name`.
    pub name: &'a str,
    /// `clientConfig`.
    pub client_config: &'a WebhookClientConfig,
    /// `rules`.
    pub rules: &'a [RuleWithOperations],
    /// `failurePolicy`.
    pub failure_policy: Option<&'a str>,
    /// `matchPolicy`.
    pub match_policy: Option<&'a str>,
    /// `sideEffects` (`None` when absent from the submitted object).
    pub side_effects: Option<&'a str>,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<i32>,
    /// `namespaceSelector`.
    pub namespace_selector: Option<&'a LabelSelector>,
    /// `objectSelector`.
    pub object_selector: Option<&'a LabelSelector>,
    /// `reinvocationPolicy` (mutating webhooks only).
    pub reinvocation_policy: Option<&'a str>,
    /// `matchConditions`.
    pub match_conditions: Option<&'a [MatchCondition]>,
    /// `admissionReviewVersions`.
    pub admission_review_versions: &'a [String],
}

impl<'a> Hook<'a> {
    /// The view of a validating webhook; `side_effects_absent` says the
    /// submitted object had no `sideEffects`.
    pub fn validating(h: &'a ValidatingWebhook, side_effects_absent: bool) -> Self {
        Hook {
            name: &h.name,
            client_config: &h.client_config,
            rules: h.rules.as_deref().unwrap_or_default(),
            failure_policy: h.failure_policy.as_deref(),
            match_policy: h.match_policy.as_deref(),
            side_effects: (!side_effects_absent).then_some(h.side_effects.as_str()),
            timeout_seconds: h.timeout_seconds,
            namespace_selector: h.namespace_selector.as_ref(),
            object_selector: h.object_selector.as_ref(),
            reinvocation_policy: None,
            match_conditions: h.match_conditions.as_deref(),
            admission_review_versions: &h.admission_review_versions,
        }
    }

    /// The view of a mutating webhook.
    pub fn mutating(h: &'a MutatingWebhook, side_effects_absent: bool) -> Self {
        Hook {
            name: &h.name,
            client_config: &h.client_config,
            rules: h.rules.as_deref().unwrap_or_default(),
            failure_policy: h.failure_policy.as_deref(),
            match_policy: h.match_policy.as_deref(),
            side_effects: (!side_effects_absent).then_some(h.side_effects.as_str()),
            timeout_seconds: h.timeout_seconds,
            namespace_selector: h.namespace_selector.as_ref(),
            object_selector: h.object_selector.as_ref(),
            reinvocation_policy: h.reinvocation_policy.as_deref(),
            match_conditions: h.match_conditions.as_deref(),
            admission_review_versions: &h.admission_review_versions,
        }
    }
}

/// Upstream's `validationOptions` for webhook configurations.
#[derive(Clone, Debug)]
pub struct Options {
    /// Skip `matchConditions` (an update that left them unchanged).
    pub ignore_match_conditions: bool,
    /// `sideEffects` must be `None` or `NoneOnDryRun`.
    pub require_no_side_effects: bool,
    /// `admissionReviewVersions` must include `v1` or `v1beta1`.
    pub require_recognized_admission_review_version: bool,
    /// Webhook names must be unique.
    pub require_unique_webhook_names: bool,
    /// Selectors may keep invalid label values.
    pub allow_invalid_label_value_in_selector: bool,
    /// Match condition expressions already stored.
    pub preexisting_match_conditions: BTreeSet<String>,
}

impl Options {
    /// The options of a create: every rule enforced.
    pub fn create() -> Self {
        Options {
            ignore_match_conditions: false,
            require_no_side_effects: true,
            require_recognized_admission_review_version: true,
            require_unique_webhook_names: true,
            allow_invalid_label_value_in_selector: false,
            preexisting_match_conditions: BTreeSet::new(),
        }
    }

    /// The options of an update from `old` to `new`: a rule the stored
    /// object already broke is not enforced
    /// (`Validate*WebhookConfigurationUpdate`).
    pub fn update(new: &[Hook<'_>], old: &[Hook<'_>]) -> Self {
        let mut names = BTreeSet::new();
        Options {
            ignore_match_conditions: new.len() == old.len()
                && new
                    .iter()
                    .zip(old)
                    .all(|(n, o)| n.match_conditions == o.match_conditions),
            require_no_side_effects: old.iter().all(|h| {
                h.side_effects
                    .is_some_and(|s| NO_SIDE_EFFECT_CLASSES.contains(&s))
            }),
            require_recognized_admission_review_version: old.iter().all(|h| {
                h.admission_review_versions.is_empty()
                    || h.admission_review_versions
                        .iter()
                        .any(|v| ACCEPTED_ADMISSION_REVIEW_VERSIONS.contains(&v.as_str()))
            }),
            require_unique_webhook_names: old.iter().all(|h| names.insert(h.name)),
            allow_invalid_label_value_in_selector: old.iter().any(|h| {
                [h.namespace_selector, h.object_selector]
                    .into_iter()
                    .flatten()
                    .any(|s| {
                        !selector::validate_label_selector(Some(s), false, &Path::default())
                            .is_empty()
                    })
            }),
            preexisting_match_conditions: old
                .iter()
                .flat_map(|h| h.match_conditions.unwrap_or_default())
                .map(|mc| mc.expression.clone())
                .collect(),
        }
    }
}

fn has_wildcard(items: &[String]) -> bool {
    items.iter().any(|s| s == "*")
}

fn strings_value(items: &[String]) -> BadValue {
    BadValue::Json(render::strings(items))
}

/// `IsFullyQualifiedName`: required, a DNS-1123 subdomain with at least
/// three dot-separated segments.
pub fn validate_fully_qualified_name(path: &Path, name: &str) -> ErrorList {
    if name.is_empty() {
        return ErrorList(vec![Error::required(path, "")]);
    }
    let errs = formats::is_dns1123_subdomain(name);
    if !errs.is_empty() {
        return ErrorList(vec![Error::invalid(path, name, errs.join(","))]);
    }
    if name.split('.').count() < 3 {
        return ErrorList(vec![Error::invalid(
            path,
            name,
            "should be a domain with at least three segments separated by dots",
        )]);
    }
    ErrorList::new()
}

/// `validateResources`: resources with subresource forms (`a/b`, `a/*`,
/// `*/b`, `*/*`, `*`) that must not overlap.
pub fn validate_resources(resources: &[String], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if resources.is_empty() {
        errs.push(Error::required(path, ""));
    }
    let mut with_wildcard_sub: BTreeSet<&str> = BTreeSet::new();
    let mut sub_with_wildcard_res: BTreeSet<&str> = BTreeSet::new();
    let mut has_double_wildcard = false;
    let mut has_single_wildcard = false;
    let mut has_resource_without_subresource = false;
    for (i, res_sub) in resources.iter().enumerate() {
        if res_sub.is_empty() {
            errs.push(Error::required(&path.index(i), ""));
            continue;
        }
        if res_sub == "*/*" {
            has_double_wildcard = true;
        }
        if res_sub == "*" {
            has_single_wildcard = true;
        }
        let Some((res, sub)) = res_sub.split_once('/') else {
            // As upstream: the last resource without a subresource decides.
            has_resource_without_subresource = res_sub != "*";
            continue;
        };
        if with_wildcard_sub.contains(res) {
            errs.push(Error::invalid(
                &path.index(i),
                res_sub.as_str(),
                format!("if '{res}/*' is present, must not specify {res_sub}"),
            ));
        }
        if sub_with_wildcard_res.contains(sub) {
            errs.push(Error::invalid(
                &path.index(i),
                res_sub.as_str(),
                format!("if '*/{sub}' is present, must not specify {res_sub}"),
            ));
        }
        if sub == "*" {
            with_wildcard_sub.insert(res);
        }
        if res == "*" {
            sub_with_wildcard_res.insert(sub);
        }
    }
    if resources.len() > 1 && has_double_wildcard {
        errs.push(Error::invalid(
            path,
            strings_value(resources),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if has_single_wildcard && has_resource_without_subresource {
        errs.push(Error::invalid(
            path,
            strings_value(resources),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errs
}

/// `validateResourcesNoSubResources` (policies' rules without subresources).
pub fn validate_resources_no_subresources(resources: &[String], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if resources.is_empty() {
        errs.push(Error::required(path, ""));
    }
    for (i, r) in resources.iter().enumerate() {
        if r.is_empty() {
            errs.push(Error::required(&path.index(i), ""));
        }
        if r.contains('/') {
            errs.push(Error::invalid(
                &path.index(i),
                r.as_str(),
                "must not specify subresources",
            ));
        }
    }
    if resources.len() > 1 && has_wildcard(resources) {
        errs.push(Error::invalid(
            path,
            strings_value(resources),
            "if '*' is present, must not specify other resources",
        ));
    }
    errs
}

/// `validateRule`: groups, versions, resources and scope of a rule at `path`.
pub fn validate_rule(rule: &RuleWithOperations, path: &Path, allow_subresource: bool) -> ErrorList {
    let mut errs = ErrorList::new();
    let groups = rule.api_groups.as_deref().unwrap_or_default();
    if groups.is_empty() {
        errs.push(Error::required(&path.child("apiGroups"), ""));
    }
    if groups.len() > 1 && has_wildcard(groups) {
        errs.push(Error::invalid(
            &path.child("apiGroups"),
            strings_value(groups),
            "if '*' is present, must not specify other API groups",
        ));
    }
    let versions = rule.api_versions.as_deref().unwrap_or_default();
    if versions.is_empty() {
        errs.push(Error::required(&path.child("apiVersions"), ""));
    }
    if versions.len() > 1 && has_wildcard(versions) {
        errs.push(Error::invalid(
            &path.child("apiVersions"),
            strings_value(versions),
            "if '*' is present, must not specify other API versions",
        ));
    }
    for (i, v) in versions.iter().enumerate() {
        if v.is_empty() {
            errs.push(Error::required(&path.child("apiVersions").index(i), ""));
        }
    }
    let resources = rule.resources.as_deref().unwrap_or_default();
    if allow_subresource {
        errs.append(validate_resources(resources, &path.child("resources")));
    } else {
        errs.append(validate_resources_no_subresources(
            resources,
            &path.child("resources"),
        ));
    }
    if let Some(scope) = rule.scope.as_deref()
        && !SCOPES.contains(&scope)
    {
        errs.push(Error::not_supported(&path.child("scope"), scope, &SCOPES));
    }
    errs
}

/// `validateRuleWithOperations`: operations, then the rule.
pub fn validate_rule_with_operations(rule: &RuleWithOperations, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let ops = rule.operations.as_deref().unwrap_or_default();
    let ops_path = path.child("operations");
    if ops.is_empty() {
        errs.push(Error::required(&ops_path, ""));
    }
    if ops.len() > 1 && has_wildcard(ops) {
        errs.push(Error::invalid(
            &ops_path,
            strings_value(ops),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in ops.iter().enumerate() {
        if !OPERATIONS.contains(&op.as_str()) {
            errs.push(Error::not_supported(
                &ops_path.index(i),
                op.as_str(),
                &OPERATIONS,
            ));
        }
    }
    errs.append(validate_rule(rule, path, true));
    errs
}

/// `validateAdmissionReviewVersions`.
pub fn validate_admission_review_versions(
    versions: &[String],
    require_recognized: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let accepted = ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(", ");
    if versions.is_empty() {
        errs.push(Error::required(
            path,
            format!("must specify one of {accepted}"),
        ));
        return errs;
    }
    let mut seen = BTreeSet::new();
    let mut has_accepted = false;
    for (i, v) in versions.iter().enumerate() {
        if !seen.insert(v.as_str()) {
            errs.push(Error::invalid(
                &path.index(i),
                v.as_str(),
                "duplicate version",
            ));
            continue;
        }
        for msg in formats::is_dns1035_label(v) {
            errs.push(Error::invalid(&path.index(i), v.as_str(), msg));
        }
        if ACCEPTED_ADMISSION_REVIEW_VERSIONS.contains(&v.as_str()) {
            has_accepted = true;
        }
    }
    if require_recognized && !has_accepted {
        errs.push(Error::invalid(
            path,
            strings_value(versions),
            format!("must include at least one of {accepted}"),
        ));
    }
    errs
}

/// `webhook.ValidateWebhookService` as the webhook configurations call it.
/// Upstream passes the service's name as the `namespace` parameter and its
/// namespace as `name` (kubernetes#141353), so a missing name is reported
/// at `namespace` and the other way round; exitplan keeps that.
pub fn validate_service(
    path: &Path,
    name: &str,
    namespace: &str,
    url_path: Option<&str>,
    port: i32,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if namespace.is_empty() {
        errs.push(Error::required(&path.child("name"), ""));
    }
    if name.is_empty() {
        errs.push(Error::required(&path.child("namespace"), ""));
    }
    if !(1..=65535).contains(&port) {
        errs.push(Error::invalid(
            &path.child("port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    if let Some(p) = url_path {
        errs.append(validate_webhook_service_path(&path.child("path"), p));
    }
    errs
}

/// The `clientConfig` of a webhook: exactly one of `url` (https, a host, no
/// user, fragment or query) and `service`.
pub fn validate_client_config(cc: &WebhookClientConfig, path: &Path) -> ErrorList {
    match (&cc.url, &cc.service) {
        (Some(url), None) => validate_webhook_url(&path.child("url"), url),
        (None, Some(svc)) => validate_service(
            &path.child("service"),
            &svc.name,
            &svc.namespace,
            svc.path.as_deref(),
            svc.port.unwrap_or(443),
        ),
        _ => ErrorList(vec![Error::required(
            path,
            "exactly one of url or service is required",
        )]),
    }
}

/// `validateMatchConditions`: at most 64, each named (a qualified name,
/// unique) with an expression that compiles.
pub fn validate_match_conditions<C: AdmissionCel>(
    conditions: &[MatchCondition],
    opts: &Options,
    allow_params: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errs.push(Error::too_many(
            path,
            conditions.len(),
            MAX_MATCH_CONDITIONS,
        ));
    }
    let mut names = BTreeSet::new();
    for (i, mc) in conditions.iter().enumerate() {
        let p = path.index(i);
        let expression = mc.expression.trim();
        if expression.is_empty() {
            errs.push(Error::required(&p.child("expression"), ""));
        } else {
            let stored = opts.preexisting_match_conditions.contains(expression);
            if let Err(e) = C::compile_match_condition(expression, allow_params, stored) {
                errs.push(e.to_field_error(&p.child("expression"), expression));
            }
        }
        if mc.name.is_empty() {
            errs.push(Error::required(&p.child("name"), ""));
        } else {
            errs.append(formats::validate_qualified_name(&p.child("name"), &mc.name));
        }
        if !mc.name.is_empty() && !names.insert(mc.name.as_str()) {
            errs.push(Error::duplicate(&p.child("name"), mc.name.as_str()));
        }
    }
    errs
}

/// `validateValidatingWebhook` / `validateMutatingWebhook`.
pub fn validate_hook<C: AdmissionCel>(hook: &Hook<'_>, opts: &Options, path: &Path) -> ErrorList {
    let mut errs = validate_fully_qualified_name(&path.child("name"), hook.name);
    for (i, rule) in hook.rules.iter().enumerate() {
        errs.append(validate_rule_with_operations(
            rule,
            &path.child("rules").index(i),
        ));
    }
    if let Some(fp) = hook.failure_policy
        && !FAILURE_POLICIES.contains(&fp)
    {
        errs.push(Error::not_supported(
            &path.child("failurePolicy"),
            fp,
            &FAILURE_POLICIES,
        ));
    }
    if let Some(mp) = hook.match_policy
        && !MATCH_POLICIES.contains(&mp)
    {
        errs.push(Error::not_supported(
            &path.child("matchPolicy"),
            mp,
            &MATCH_POLICIES,
        ));
    }
    let allowed: &[&str] = if opts.require_no_side_effects {
        &NO_SIDE_EFFECT_CLASSES
    } else {
        &SIDE_EFFECT_CLASSES
    };
    match hook.side_effects {
        None => errs.push(Error::required(
            &path.child("sideEffects"),
            format!("must specify one of {}", allowed.join(", ")),
        )),
        Some(s) if !allowed.contains(&s) => {
            errs.push(Error::not_supported(&path.child("sideEffects"), s, allowed));
        }
        Some(_) => {}
    }
    if let Some(t) = hook.timeout_seconds
        && !(1..=30).contains(&t)
    {
        errs.push(Error::invalid(
            &path.child("timeoutSeconds"),
            t,
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    let allow_invalid = opts.allow_invalid_label_value_in_selector;
    errs.append(selector::validate_label_selector(
        hook.namespace_selector,
        allow_invalid,
        &path.child("namespaceSelector"),
    ));
    errs.append(selector::validate_label_selector(
        hook.object_selector,
        allow_invalid,
        &path.child("objectSelector"),
    ));
    if let Some(rp) = hook.reinvocation_policy
        && !REINVOCATION_POLICIES.contains(&rp)
    {
        errs.push(Error::not_supported(
            &path.child("reinvocationPolicy"),
            rp,
            &REINVOCATION_POLICIES,
        ));
    }
    errs.append(validate_client_config(
        hook.client_config,
        &path.child("clientConfig"),
    ));
    if !opts.ignore_match_conditions {
        errs.append(validate_match_conditions::<C>(
            hook.match_conditions.unwrap_or_default(),
            opts,
            false,
            &path.child("matchConditions"),
        ));
    }
    errs
}

/// `validate{Validating,Mutating}WebhookConfiguration`: the metadata, then
/// each webhook, its review versions and the uniqueness of its name.
pub fn validate_hooks<C: AdmissionCel>(hooks: &[Hook<'_>], opts: &Options) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut names = BTreeSet::new();
    for (i, hook) in hooks.iter().enumerate() {
        let p = Path::new("webhooks").index(i);
        errs.append(validate_hook::<C>(hook, opts, &p));
        errs.append(validate_admission_review_versions(
            hook.admission_review_versions,
            opts.require_recognized_admission_review_version,
            &p.child("admissionReviewVersions"),
        ));
        if opts.require_unique_webhook_names && !hook.name.is_empty() && !names.insert(hook.name) {
            errs.push(Error::duplicate(&p.child("name"), hook.name));
        }
    }
    errs
}

fn side_effects_absent(absent: &Absent, i: usize) -> bool {
    absent.contains(&Path::new("webhooks").index(i).child("sideEffects"))
}

/// The webhooks of a validating configuration as validation reads them.
pub fn validating_hooks<'a>(
    c: &'a ValidatingWebhookConfiguration,
    absent: &Absent,
) -> Vec<Hook<'a>> {
    c.webhooks
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, h)| Hook::validating(h, side_effects_absent(absent, i)))
        .collect()
}

/// The webhooks of a mutating configuration as validation reads them.
pub fn mutating_hooks<'a>(c: &'a MutatingWebhookConfiguration, absent: &Absent) -> Vec<Hook<'a>> {
    c.webhooks
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, h)| Hook::mutating(h, side_effects_absent(absent, i)))
        .collect()
}

/// `ValidateValidatingWebhookConfiguration` (`absent`: required fields
/// missing from the submitted object).
pub fn validate_validating_webhook_configuration<C: AdmissionCel>(
    c: &ValidatingWebhookConfiguration,
    absent: &Absent,
) -> ErrorList {
    let mut errs = meta::validate_object_meta(&c.metadata, false, NameRule::Subdomain);
    errs.append(validate_hooks::<C>(
        &validating_hooks(c, absent),
        &Options::create(),
    ));
    errs
}

/// `ValidateValidatingWebhookConfigurationUpdate`.
pub fn validate_validating_webhook_configuration_update<C: AdmissionCel>(
    new: &ValidatingWebhookConfiguration,
    old: &ValidatingWebhookConfiguration,
    absent: &Absent,
) -> ErrorList {
    let new_hooks = validating_hooks(new, absent);
    let opts = Options::update(&new_hooks, &validating_hooks(old, &Absent::default()));
    let mut errs = meta::validate_object_meta(&new.metadata, false, NameRule::Subdomain);
    errs.append(validate_hooks::<C>(&new_hooks, &opts));
    errs
}

/// `ValidateMutatingWebhookConfiguration`.
pub fn validate_mutating_webhook_configuration<C: AdmissionCel>(
    c: &MutatingWebhookConfiguration,
    absent: &Absent,
) -> ErrorList {
    let mut errs = meta::validate_object_meta(&c.metadata, false, NameRule::Subdomain);
    errs.append(validate_hooks::<C>(
        &mutating_hooks(c, absent),
        &Options::create(),
    ));
    errs
}

/// `ValidateMutatingWebhookConfigurationUpdate`.
pub fn validate_mutating_webhook_configuration_update<C: AdmissionCel>(
    new: &MutatingWebhookConfiguration,
    old: &MutatingWebhookConfiguration,
    absent: &Absent,
) -> ErrorList {
    let new_hooks = mutating_hooks(new, absent);
    let opts = Options::update(&new_hooks, &mutating_hooks(old, &Absent::default()));
    let mut errs = meta::validate_object_meta(&new.metadata, false, NameRule::Subdomain);
    errs.append(validate_hooks::<C>(&new_hooks, &opts));
    errs
}
