//! Job `spec.successPolicy` (upstream `pkg/controller/job/success_policy.go`,
//! gate JobSuccessPolicy GA since 1.33).
//!
//! Data flow: the policy's rules + `spec.completions` + the Job's succeeded
//! indexes (`Intervals`, this sync's view) → one [`RuleEvaluation`] per rule
//! → the first matching rule, which the sync turns into
//! `SuccessCriteriaMet` (reason [`REASON_SUCCESS_POLICY`], message
//! `Matched rules at index N`); the Job completes once its remaining pods
//! are gone. A rule matches when
//! * `succeededIndexes` is set: every listed index (below `completions`)
//!   succeeded, or at least `succeededCount` of them did;
//! * only `succeededCount` is set: at least that many indexes succeeded.
//!
//! A rule whose `succeededIndexes` parses to nothing below `completions` is
//! skipped; nothing matches while no index has succeeded.

use k8s_openapi::api::batch::v1::{SuccessPolicy, SuccessPolicyRule};
use serde::Serialize;

use super::indexes::Intervals;

/// Reason of `SuccessCriteriaMet` / `Complete` set by a success policy
/// (`batch.JobReasonSuccessPolicy`).
pub const REASON_SUCCESS_POLICY: &str = "SuccessPolicy";
/// Start of the condition message; the matched rule's index follows.
pub const MESSAGE_RULES_MATCHED: &str = "Matched rules at index";

/// How one rule compares with the succeeded indexes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleEvaluation {
    /// 0-based position of the rule in `spec.successPolicy.rules`.
    pub rule_index: usize,
    /// The rule's `succeededIndexes`, as written.
    pub succeeded_indexes: Option<String>,
    /// The rule's `succeededCount`.
    pub succeeded_count: Option<i32>,
    /// How many indexes the rule needs: all of its (parsed) indexes, or
    /// `succeededCount` when set.
    pub needed: i64,
    /// How many of the indexes the rule looks at have succeeded (all
    /// succeeded indexes for a count-only rule).
    pub succeeded: i64,
    /// Whether the rule is satisfied.
    pub matched: bool,
    /// Why the rule can never match as written (its indexes parse to nothing
    /// below `completions`, or it sets neither field).
    pub skipped: Option<String>,
}

/// The outcome of matching a Job against its success policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SuccessPolicyMatch {
    /// 0-based position of the first matching rule.
    pub rule_index: usize,
    /// The condition message: `Matched rules at index N`.
    pub message: String,
}

/// The condition message for the rule at `rule_index`.
pub fn matched_message(rule_index: usize) -> String {
    format!("{MESSAGE_RULES_MATCHED} {rule_index}")
}

/// `matchSucceededIndexesRule`: every index of `rule` succeeded, or at least
/// `succeeded_count` of them did.
pub fn match_succeeded_indexes_rule(
    rule: &Intervals,
    succeeded: &Intervals,
    succeeded_count: Option<i32>,
) -> bool {
    let contained = rule.intersection_total(succeeded);
    contained == rule.total() || succeeded_count.is_some_and(|c| contained >= i64::from(c))
}

/// Evaluates one rule against the succeeded indexes.
pub fn evaluate_rule(
    rule_index: usize,
    rule: &SuccessPolicyRule,
    completions: i32,
    succeeded: &Intervals,
) -> RuleEvaluation {
    let mut out = RuleEvaluation {
        rule_index,
        succeeded_indexes: rule.succeeded_indexes.clone(),
        succeeded_count: rule.succeeded_count,
        needed: 0,
        succeeded: 0,
        matched: false,
        skipped: None,
    };
    if let Some(text) = &rule.succeeded_indexes {
        let required = Intervals::parse(text, completions);
        if required.is_empty() {
            out.skipped = Some(format!(
                "succeededIndexes {text:?} names no index below completions ({completions})"
            ));
            return out;
        }
        out.needed = rule
            .succeeded_count
            .map_or(required.total(), |c| i64::from(c).min(required.total()));
        out.succeeded = required.intersection_total(succeeded);
        out.matched = !succeeded.is_empty()
            && match_succeeded_indexes_rule(&required, succeeded, rule.succeeded_count);
    } else if let Some(count) = rule.succeeded_count {
        out.needed = i64::from(count);
        out.succeeded = succeeded.total();
        out.matched = !succeeded.is_empty() && out.succeeded >= out.needed;
    } else {
        out.skipped = Some("the rule sets neither succeededIndexes nor succeededCount".into());
    }
    out
}

/// Every rule of `policy`, evaluated (for explanations).
pub fn evaluate_rules(
    policy: &SuccessPolicy,
    completions: i32,
    succeeded: &Intervals,
) -> Vec<RuleEvaluation> {
    policy
        .rules
        .iter()
        .enumerate()
        .map(|(i, rule)| evaluate_rule(i, rule, completions, succeeded))
        .collect()
}

/// `matchSuccessPolicy`: the first rule of `policy` the Job's succeeded
/// indexes satisfy (`None` without a policy, or with no succeeded index).
pub fn match_success_policy(
    policy: Option<&SuccessPolicy>,
    completions: i32,
    succeeded: &Intervals,
) -> Option<SuccessPolicyMatch> {
    let policy = policy?;
    if succeeded.is_empty() {
        return None;
    }
    policy
        .rules
        .iter()
        .enumerate()
        .find(|(i, rule)| evaluate_rule(*i, rule, completions, succeeded).matched)
        .map(|(rule_index, _)| SuccessPolicyMatch {
            rule_index,
            message: matched_message(rule_index),
        })
}
