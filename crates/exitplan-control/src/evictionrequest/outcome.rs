//! The `Failed` / `TargetEvicted` condition pair the controller writes (§5.3).
//!
//! The controller always writes **both** conditions; each outcome names the
//! pair. `lastTransitionTime` follows [`crate::conditions::derive`].

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use exitplan_api::core::constants::{CONDITION_FALSE, CONDITION_TRUE};
use exitplan_api::lifecycle::constants::{
    CONDITION_FAILED, CONDITION_TARGET_EVICTED, MSG_NO_FURTHER_RESPONDER, MSG_NO_REQUESTERS,
    MSG_POD_DELETED, MSG_POD_TERMINAL, REASON_AWAITING_EVICTION, REASON_CANCELED_NO_REQUESTERS,
    REASON_EVICTION_FAILED, REASON_EVICTION_INVALID, REASON_NO_FURTHER_RESPONDER,
    REASON_POD_DELETED, REASON_POD_TERMINAL, REASON_SUCCEEDED,
};

use crate::conditions::{ConditionSpec, set};

/// Where an eviction stands, as the two conditions express it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome<'a> {
    /// In progress: both False/`AwaitingEviction` (also while waiting for the grace).
    Awaiting,
    /// `TargetEvicted=True/PodDeleted`, `Failed=False/Succeeded`.
    PodDeleted,
    /// `TargetEvicted=True/PodTerminal`, `Failed=False/Succeeded`.
    PodTerminal,
    /// `Failed=True/CanceledDueToNoRequesters`, `TargetEvicted=False/EvictionFailed`.
    Canceled,
    /// `Failed=True/NoFurtherResponder`, `TargetEvicted=False/EvictionFailed`.
    NoFurtherResponder,
    /// `Failed=True/EvictionInvalid` with this message, `TargetEvicted=False/EvictionFailed`.
    Invalid(&'a str),
}

fn spec<'a>(
    type_: &'a str,
    status: &'a str,
    reason: &'a str,
    message: &'a str,
) -> ConditionSpec<'a> {
    ConditionSpec {
        type_,
        status,
        reason,
        message,
        observed_generation: None,
    }
}

impl<'a> Outcome<'a> {
    /// The `(Failed, TargetEvicted)` condition specs of this outcome.
    pub fn conditions(self) -> [ConditionSpec<'a>; 2] {
        let failed_false = |reason| spec(CONDITION_FAILED, CONDITION_FALSE, reason, "");
        let evicted_failed = spec(
            CONDITION_TARGET_EVICTED,
            CONDITION_FALSE,
            REASON_EVICTION_FAILED,
            "",
        );
        match self {
            Outcome::Awaiting => [
                failed_false(REASON_AWAITING_EVICTION),
                spec(
                    CONDITION_TARGET_EVICTED,
                    CONDITION_FALSE,
                    REASON_AWAITING_EVICTION,
                    "",
                ),
            ],
            Outcome::PodDeleted => [
                failed_false(REASON_SUCCEEDED),
                spec(
                    CONDITION_TARGET_EVICTED,
                    CONDITION_TRUE,
                    REASON_POD_DELETED,
                    MSG_POD_DELETED,
                ),
            ],
            Outcome::PodTerminal => [
                failed_false(REASON_SUCCEEDED),
                spec(
                    CONDITION_TARGET_EVICTED,
                    CONDITION_TRUE,
                    REASON_POD_TERMINAL,
                    MSG_POD_TERMINAL,
                ),
            ],
            Outcome::Canceled => [
                spec(
                    CONDITION_FAILED,
                    CONDITION_TRUE,
                    REASON_CANCELED_NO_REQUESTERS,
                    MSG_NO_REQUESTERS,
                ),
                evicted_failed,
            ],
            Outcome::NoFurtherResponder => [
                spec(
                    CONDITION_FAILED,
                    CONDITION_TRUE,
                    REASON_NO_FURTHER_RESPONDER,
                    MSG_NO_FURTHER_RESPONDER,
                ),
                evicted_failed,
            ],
            Outcome::Invalid(message) => [
                spec(
                    CONDITION_FAILED,
                    CONDITION_TRUE,
                    REASON_EVICTION_INVALID,
                    message,
                ),
                evicted_failed,
            ],
        }
    }

    /// Whether the outcome is final (a condition becomes True).
    pub fn is_final(self) -> bool {
        self != Outcome::Awaiting
    }

    /// Sets both conditions in `conditions` (other types untouched); returns
    /// whether anything changed.
    pub fn apply(self, conditions: &mut Vec<Condition>, now: Timestamp) -> bool {
        let [failed, evicted] = self.conditions();
        let failed_changed = set(conditions, &failed, now);
        let evicted_changed = set(conditions, &evicted, now);
        failed_changed || evicted_changed
    }
}
