//! What one responder sees of an Eviction: its TargetResponder state, its
//! ResponderStatus entry and whether the Eviction is final. Pure.

use jiff::Timestamp;
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, ResponderStatus};

use crate::names::{
    FINAL_CONDITIONS, STATE_ACTIVE, STATE_CANCELED, STATE_COMPLETED, STATE_INACTIVE,
    STATE_INTERRUPTED,
};

/// Why an [`ActiveEviction`](crate::ActiveEviction) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The controller marked the responder `Canceled`: no requester wants
    /// the eviction any more.
    Canceled,
    /// The controller marked the responder `Interrupted`: it was silent for
    /// 20 minutes, or the target went away before it reported completion.
    Interrupted,
    /// The responder is `Completed` (it reported `completionTime`).
    Completed,
    /// The Eviction is final (`TargetEvicted` or `Failed` is `True`).
    EvictionFinished,
    /// The Eviction was deleted (or no longer carries this responder's label).
    Deleted,
    /// The responder is in an unexpected state (`Inactive`, missing, or
    /// unknown); the value is the state seen.
    Unexpected(String),
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Canceled => f.write_str("the responder was canceled"),
            StopReason::Interrupted => f.write_str("the responder was interrupted"),
            StopReason::Completed => f.write_str("the responder has completed"),
            StopReason::EvictionFinished => f.write_str("the eviction has finished"),
            StopReason::Deleted => f.write_str("the eviction was deleted"),
            StopReason::Unexpected(s) => write!(f, "the responder is in state {s:?}"),
        }
    }
}

/// The pod an Eviction is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The pod's name (in the Eviction's namespace).
    pub name: String,
    /// The pod's UID.
    pub uid: String,
}

/// One responder's view of an Eviction.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct View {
    /// The responder's `TargetResponder.state`, if listed.
    pub state: Option<String>,
    /// The responder's `ResponderStatus` entry, if any.
    pub entry: Option<ResponderStatus>,
    /// `TargetEvicted` or `Failed` is `True`.
    pub is_final: bool,
    /// The target pod, if the target is a pod.
    pub target: Option<Target>,
}

impl View {
    /// The view of `responder` on `eviction`.
    pub fn of(eviction: &Eviction, responder: &str) -> View {
        let status = eviction.status.as_ref();
        let state = status
            .and_then(|s| s.target_responders.as_ref())
            .and_then(|l| l.iter().find(|t| t.name == responder))
            .map(|t| t.state.clone());
        let entry = status
            .and_then(|s| s.responders.as_ref())
            .and_then(|l| l.iter().find(|r| r.name == responder))
            .cloned();
        let is_final = status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| FINAL_CONDITIONS.contains(&c.type_.as_str()) && c.status == "True")
            });
        let target = eviction.spec.target.pod.as_ref().map(|p| Target {
            name: p.name.clone(),
            uid: p.uid.clone(),
        });
        View {
            state,
            entry,
            is_final,
            target,
        }
    }

    /// The `startTime` of the responder's entry.
    pub fn start_time(&self) -> Option<Timestamp> {
        self.entry
            .as_ref()
            .and_then(|e| e.start_time.as_ref())
            .map(|t| t.0)
    }

    /// Work may start: Active, the entry exists with a `startTime`, no
    /// `completionTime` yet, the Eviction is not final, the target is a pod.
    pub fn startable(&self) -> bool {
        self.state.as_deref() == Some(STATE_ACTIVE)
            && self.start_time().is_some()
            && self
                .entry
                .as_ref()
                .is_some_and(|e| e.completion_time.is_none())
            && !self.is_final
            && self.target.is_some()
    }

    /// Why work must stop, or `None` while the responder is Active on a
    /// non-final Eviction.
    pub fn stop_reason(&self) -> Option<StopReason> {
        let reason = match self.state.as_deref() {
            Some(STATE_ACTIVE) => None,
            Some(STATE_CANCELED) => Some(StopReason::Canceled),
            Some(STATE_INTERRUPTED) => Some(StopReason::Interrupted),
            Some(STATE_COMPLETED) => Some(StopReason::Completed),
            Some(other) => Some(StopReason::Unexpected(other.to_owned())),
            None => Some(StopReason::Unexpected(STATE_INACTIVE.to_owned())),
        };
        match reason {
            None if self.is_final => Some(StopReason::EvictionFinished),
            r => r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eviction(status: serde_json::Value) -> Eviction {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1",
            "kind": "Eviction",
            "metadata": {"name": "pod-1-web", "namespace": "default"},
            "spec": {"target": {"pod": {"name": "web", "uid": "u1"}}},
            "status": status,
        }))
        .expect("eviction")
    }

    const ME: &str = "example.com/migrator";

    #[test]
    fn active_with_entry_is_startable() {
        let e = eviction(serde_json::json!({
            "targetResponders": [{"name": ME, "priority": 10000, "state": "Active"}],
            "responders": [{"name": ME, "startTime": "2026-11-29T10:00:00Z"}],
        }));
        let v = View::of(&e, ME);
        assert!(v.startable());
        assert_eq!(v.stop_reason(), None);
        assert_eq!(
            v.target,
            Some(Target {
                name: "web".into(),
                uid: "u1".into()
            })
        );
    }

    #[test]
    fn not_startable_without_start_time_or_with_completion() {
        let e = eviction(serde_json::json!({
            "targetResponders": [{"name": ME, "priority": 10000, "state": "Active"}],
            "responders": [{"name": ME}],
        }));
        assert!(!View::of(&e, ME).startable());
        let e = eviction(serde_json::json!({
            "targetResponders": [{"name": ME, "priority": 10000, "state": "Active"}],
            "responders": [{"name": ME, "startTime": "2026-11-29T10:00:00Z",
                            "completionTime": "2026-11-29T10:05:00Z"}],
        }));
        assert!(!View::of(&e, ME).startable());
    }

    #[test]
    fn stop_reasons() {
        for (state, reason) in [
            ("Canceled", StopReason::Canceled),
            ("Interrupted", StopReason::Interrupted),
            ("Completed", StopReason::Completed),
            ("Inactive", StopReason::Unexpected("Inactive".into())),
        ] {
            let e = eviction(serde_json::json!({
                "targetResponders": [{"name": ME, "priority": 10000, "state": state}],
            }));
            assert_eq!(View::of(&e, ME).stop_reason(), Some(reason), "{state}");
        }
        let e = eviction(serde_json::json!({
            "targetResponders": [{"name": ME, "priority": 10000, "state": "Active"}],
            "conditions": [{"type": "Failed", "status": "True", "reason": "X", "message": "",
                            "lastTransitionTime": "2026-11-29T10:00:00Z"}],
        }));
        let v = View::of(&e, ME);
        assert_eq!(v.stop_reason(), Some(StopReason::EvictionFinished));
        assert!(!v.startable());
    }
}
