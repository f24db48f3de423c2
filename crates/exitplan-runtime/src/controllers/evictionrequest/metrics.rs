//! The controller's gauges (eviction spec §9):
//!
//! * `evictionrequest_controller_responder_state{namespace, evictionrequest,
//!   target_name, target_type, responder, state}` = 1 for each responder's
//!   current state (the `evictionrequest` label carries the Eviction's name,
//!   as upstream);
//! * `evictionrequest_controller_target_responders{namespace,
//!   evictionrequest, target_name, target_type}` = number of target responders;
//! * `evictionrequest_controller_requester_intent{namespace, evictionrequest,
//!   target_name, target_type, requester, intent}` = 1 per EvictionRequest
//!   (its name), set on each request sync.
//!
//! Stale series are deleted, as §9 recommends: a responder's previous state
//! and a request's previous intent when they change, and all series of an
//! Eviction or EvictionRequest when it is deleted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::lifecycle::v1alpha1::EvictionRequest;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;

use exitplan_api::lifecycle::constants::TARGET_TYPE_POD;
use exitplan_control::evictionrequest::EvictionMetrics;

use crate::informer::ObjectKey;
use crate::metrics::Metrics;

/// Labels of `evictionrequest_controller_responder_state`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResponderStateLabels {
    namespace: String,
    evictionrequest: String,
    target_name: String,
    target_type: String,
    responder: String,
    state: String,
}

/// Labels of `evictionrequest_controller_target_responders`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TargetLabels {
    namespace: String,
    evictionrequest: String,
    target_name: String,
    target_type: String,
}

/// Labels of `evictionrequest_controller_requester_intent`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequesterIntentLabels {
    namespace: String,
    evictionrequest: String,
    target_name: String,
    target_type: String,
    requester: String,
    intent: String,
}

#[derive(Default)]
struct Series {
    /// Per Eviction: its responder-state and target-responders series.
    evictions: HashMap<ObjectKey, (Vec<ResponderStateLabels>, TargetLabels)>,
    /// Per EvictionRequest: its requester-intent series.
    requests: HashMap<ObjectKey, RequesterIntentLabels>,
}

/// The §9 gauges and which series each object currently has.
#[derive(Clone)]
pub(super) struct ControllerMetrics {
    responder_state: Family<ResponderStateLabels, Gauge>,
    target_responders: Family<TargetLabels, Gauge>,
    requester_intent: Family<RequesterIntentLabels, Gauge>,
    series: Arc<Mutex<Series>>,
}

impl ControllerMetrics {
    /// The gauges, registered into `metrics`.
    pub(super) fn register(metrics: &Metrics) -> Self {
        let m = ControllerMetrics {
            responder_state: Family::default(),
            target_responders: Family::default(),
            requester_intent: Family::default(),
            series: Arc::default(),
        };
        metrics.registry(|r| {
            r.register(
                "evictionrequest_controller_responder_state",
                "Current state of each responder of an Eviction (1 for the current state)",
                m.responder_state.clone(),
            );
            r.register(
                "evictionrequest_controller_target_responders",
                "Number of target responders of an Eviction",
                m.target_responders.clone(),
            );
            r.register(
                "evictionrequest_controller_requester_intent",
                "Intent of each EvictionRequest's requester (1 for the current intent)",
                m.requester_intent.clone(),
            );
        });
        m
    }

    /// Records what an Eviction sync at `key` observed.
    pub(super) fn observe_eviction(&self, key: &ObjectKey, seen: &EvictionMetrics) {
        let namespace = key.namespace.clone().unwrap_or_default();
        let target = TargetLabels {
            namespace: namespace.clone(),
            evictionrequest: key.name.clone(),
            target_name: seen.target_name.clone(),
            target_type: seen.target_type.to_owned(),
        };
        let states: Vec<ResponderStateLabels> = seen
            .responder_states
            .iter()
            .map(|(responder, state)| ResponderStateLabels {
                namespace: namespace.clone(),
                evictionrequest: key.name.clone(),
                target_name: seen.target_name.clone(),
                target_type: seen.target_type.to_owned(),
                responder: responder.clone(),
                state: state.clone(),
            })
            .collect();
        let Ok(mut series) = self.series.lock() else {
            return;
        };
        if let Some((old_states, old_target)) = series.evictions.get(key) {
            for old in old_states.iter().filter(|s| !states.contains(s)) {
                self.responder_state.remove(old);
            }
            if *old_target != target {
                self.target_responders.remove(old_target);
            }
        }
        for s in &states {
            self.responder_state.get_or_create(s).set(1);
        }
        self.target_responders
            .get_or_create(&target)
            .set(i64::try_from(seen.target_responders()).unwrap_or(i64::MAX));
        series.evictions.insert(key.clone(), (states, target));
    }

    /// Deletes the series of the Eviction at `key`.
    pub(super) fn forget_eviction(&self, key: &ObjectKey) {
        let Ok(mut series) = self.series.lock() else {
            return;
        };
        if let Some((states, target)) = series.evictions.remove(key) {
            for s in &states {
                self.responder_state.remove(s);
            }
            self.target_responders.remove(&target);
        }
    }

    /// Records the intent of `request` (at `key`).
    pub(super) fn observe_request(&self, key: &ObjectKey, request: &EvictionRequest) {
        let labels = RequesterIntentLabels {
            namespace: key.namespace.clone().unwrap_or_default(),
            evictionrequest: key.name.clone(),
            target_name: request
                .spec
                .target
                .pod
                .as_ref()
                .map(|p| p.name.clone())
                .unwrap_or_default(),
            target_type: if request.spec.target.pod.is_some() {
                TARGET_TYPE_POD.to_owned()
            } else {
                String::new()
            },
            requester: request.spec.requester.clone(),
            intent: request.spec.intent.clone(),
        };
        let Ok(mut series) = self.series.lock() else {
            return;
        };
        if let Some(old) = series.requests.get(key)
            && *old != labels
        {
            self.requester_intent.remove(old);
        }
        self.requester_intent.get_or_create(&labels).set(1);
        series.requests.insert(key.clone(), labels);
    }

    /// Deletes the series of the EvictionRequest at `key`.
    pub(super) fn forget_request(&self, key: &ObjectKey) {
        let Ok(mut series) = self.series.lock() else {
            return;
        };
        if let Some(old) = series.requests.remove(key) {
            self.requester_intent.remove(&old);
        }
    }
}
