//! One PodDisruptionBudget sync of the disruption controller (job-failure
//! spec §13): `trySync`, `updatePdbStatus` (write only if changed) and the
//! `failSafe` status on errors.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference, Time};

use exitplan_api::core::constants::{CONDITION_FALSE, CONDITION_TRUE};
use exitplan_api::policy::constants::{
    CONDITION_DISRUPTION_ALLOWED, REASON_INSUFFICIENT_PODS, REASON_SUFFICIENT_PODS,
    REASON_SYNC_FAILED,
};
use exitplan_api::selector;

use super::disrupted::{build_disrupted_pod_map, count_healthy};
use super::expected::expected_pod_count;
use super::plan::{EventTarget, EventType, PdbEvent, PdbPlan};
use super::scale::{ControllerScale, ScaleError};
use crate::conditions::{self, ConditionSpec};

/// Computes the status of `pdb` from the pods of its namespace (`pods`;
/// those its selector does not match are ignored) and the controllers'
/// scale (`scale_lookup`, e.g. [`Workloads::lookup`](super::Workloads::lookup)).
/// Any error yields the fail-safe plan instead.
pub fn sync_pdb(
    pdb: &PodDisruptionBudget,
    pods: &[Pod],
    scale_lookup: &impl Fn(&OwnerReference) -> Result<Option<ControllerScale>, ScaleError>,
    now: Timestamp,
) -> PdbPlan {
    let mut events = Vec::new();
    let sel = match selector::as_selector(pdb.spec.as_ref().and_then(|s| s.selector.as_ref())) {
        Ok(s) => s,
        Err(err) => {
            events.push(warning(
                EventTarget::Pdb,
                "NoPods",
                format!("Failed to get pods: {err}"),
            ));
            return fail_safe_plan(pdb, err.to_string(), events, now);
        }
    };
    let matching: Vec<&Pod> = pods
        .iter()
        .filter(|p| p.metadata.namespace == pdb.metadata.namespace)
        .filter(|p| sel.matches(p.metadata.labels.as_ref()))
        .collect();
    if matching.is_empty() {
        events.push(PdbEvent {
            target: EventTarget::Pdb,
            type_: EventType::Normal,
            reason: "NoPods",
            message: "No matching pods found".to_owned(),
        });
    }
    let expected = match expected_pod_count(pdb, &matching, scale_lookup) {
        Ok(e) => e,
        Err(err) => {
            events.push(warning(
                EventTarget::Pdb,
                "CalculateExpectedPodCountFailed",
                format!("Failed to calculate the number of expected pods: {err}"),
            ));
            return fail_safe_plan(pdb, err.to_string(), events, now);
        }
    };
    if !expected.unmanaged.is_empty() {
        let selector = pdb.spec.as_ref().and_then(|s| s.selector.as_ref());
        events.push(warning(
            EventTarget::Pdb,
            "UnmanagedPods",
            format!(
                "Pods selected by this PodDisruptionBudget (selector: {}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value.",
                go_selector_string(selector)
            ),
        ));
    }
    let disrupted = build_disrupted_pod_map(pdb, &matching, now);
    let namespace = pdb.metadata.namespace.as_deref().unwrap_or_default();
    for name in &disrupted.expired {
        events.push(warning(
            EventTarget::Pod(name.clone()),
            "NotDeleted",
            // Upstream prints the namespace twice.
            format!("Pod was expected by PDB {namespace}/{namespace} to be deleted but it wasn't"),
        ));
    }
    let current_healthy = count_healthy(&matching, &disrupted.kept, now);
    let (status, write) = update_status(
        pdb,
        current_healthy,
        expected.desired_healthy,
        expected.expected_pods,
        disrupted.kept,
        now,
    );
    PdbPlan {
        status,
        write,
        events,
        recheck_after: disrupted.recheck_at.map(|at| at.duration_since(now)),
        sync_error: None,
    }
}

fn warning(target: EventTarget, reason: &'static str, message: String) -> PdbEvent {
    PdbEvent {
        target,
        type_: EventType::Warning,
        reason,
        message,
    }
}

fn non_zero(n: i64) -> Option<i64> {
    (n != 0).then_some(n)
}

/// `updatePdbStatus`: the new status and the object to write, if anything
/// the controller owns changed (the condition's message is not compared).
fn update_status(
    pdb: &PodDisruptionBudget,
    current_healthy: i32,
    desired_healthy: i32,
    expected_pods: i32,
    disrupted_pods: BTreeMap<String, Time>,
    now: Timestamp,
) -> (PodDisruptionBudgetStatus, Option<PodDisruptionBudget>) {
    let mut allowed = current_healthy.saturating_sub(desired_healthy);
    if expected_pods <= 0 || allowed <= 0 {
        allowed = 0;
    }
    let old = pdb.status.clone().unwrap_or_default();
    let generation = pdb.metadata.generation.unwrap_or(0);
    let unchanged = old.current_healthy.unwrap_or(0) == current_healthy
        && old.desired_healthy.unwrap_or(0) == desired_healthy
        && old.expected_pods.unwrap_or(0) == expected_pods
        && old.disruptions_allowed.unwrap_or(0) == allowed
        && old.disrupted_pods.clone().unwrap_or_default() == disrupted_pods
        && old.observed_generation.unwrap_or(0) == generation
        && conditions_up_to_date(&old, generation);
    if unchanged {
        return (old, None);
    }
    let mut conditions = old.conditions.clone().unwrap_or_default();
    let (status, reason) = if allowed > 0 {
        (CONDITION_TRUE, REASON_SUFFICIENT_PODS)
    } else {
        (CONDITION_FALSE, REASON_INSUFFICIENT_PODS)
    };
    conditions::set(
        &mut conditions,
        &ConditionSpec {
            type_: CONDITION_DISRUPTION_ALLOWED,
            status,
            reason,
            message: "",
            observed_generation: non_zero(generation),
        },
        now,
    );
    let new = PodDisruptionBudgetStatus {
        conditions: Some(conditions),
        current_healthy: Some(current_healthy),
        desired_healthy: Some(desired_healthy),
        disrupted_pods: (!disrupted_pods.is_empty()).then_some(disrupted_pods),
        disruptions_allowed: Some(allowed),
        expected_pods: Some(expected_pods),
        observed_generation: non_zero(generation),
    };
    let mut written = pdb.clone();
    written.status = Some(new.clone());
    (new, Some(written))
}

/// `pdbhelper.ConditionsAreUpToDate`: `DisruptionAllowed` exists, the status
/// is observed at `generation` and status/reason fit `disruptionsAllowed`.
fn conditions_up_to_date(status: &PodDisruptionBudgetStatus, generation: i64) -> bool {
    let Some(cond) = status
        .conditions
        .as_deref()
        .and_then(|c| conditions::find(c, CONDITION_DISRUPTION_ALLOWED))
    else {
        return false;
    };
    if status.observed_generation.unwrap_or(0) != generation {
        return false;
    }
    if status.disruptions_allowed.unwrap_or(0) > 0 {
        cond.status == CONDITION_TRUE && cond.reason == REASON_SUFFICIENT_PODS
    } else {
        cond.status == CONDITION_FALSE && cond.reason == REASON_INSUFFICIENT_PODS
    }
}

/// `failSafe`: the stored status with only `disruptionsAllowed = 0` and
/// `DisruptionAllowed=False SyncFailed <error>` (condition observedGeneration
/// = the status' observedGeneration); everything else keeps its value.
/// Also what to write when the status write itself fails (other than 409).
pub fn fail_safe(pdb: &PodDisruptionBudget, error: &str, now: Timestamp) -> PodDisruptionBudget {
    let mut out = pdb.clone();
    let status = out.status.get_or_insert_with(Default::default);
    status.disruptions_allowed = Some(0);
    let observed = status.observed_generation.unwrap_or(0);
    conditions::set(
        status.conditions.get_or_insert_with(Vec::new),
        &ConditionSpec {
            type_: CONDITION_DISRUPTION_ALLOWED,
            status: CONDITION_FALSE,
            reason: REASON_SYNC_FAILED,
            message: error,
            observed_generation: non_zero(observed),
        },
        now,
    );
    out
}

fn fail_safe_plan(
    pdb: &PodDisruptionBudget,
    error: String,
    events: Vec<PdbEvent>,
    now: Timestamp,
) -> PdbPlan {
    let written = fail_safe(pdb, &error, now);
    PdbPlan {
        status: written.status.clone().unwrap_or_default(),
        write: Some(written),
        events,
        recheck_after: None,
        sync_error: Some(error),
    }
}

/// Go's `%v` of a `*metav1.LabelSelector` (its generated `String()`).
pub fn go_selector_string(selector: Option<&LabelSelector>) -> String {
    let Some(sel) = selector else {
        return "nil".to_owned();
    };
    let labels: String = sel
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}: {v},"))
        .collect();
    let exprs: String = sel
        .match_expressions
        .iter()
        .flatten()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                e.key,
                e.operator,
                e.values.as_deref().unwrap_or_default().join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
}
