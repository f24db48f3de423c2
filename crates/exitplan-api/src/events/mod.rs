//! `events.k8s.io/v1` Event: a second view of core/v1 Events (upstream
//! stores one object and converts, `pkg/apis/events/v1/conversion.go`).
//! Conversion both ways ([`to_core`], [`from_core`], and JSON wrappers for
//! the API server's storage hook) and the strategy, which validates the core
//! shape with the strict `events.k8s.io` rules.

use k8s_openapi::api::core::v1::{Event as CoreEvent, EventSeries as CoreSeries};
use k8s_openapi::api::events::v1::{Event, EventSeries};
use serde_json::Value;

use crate::core::event::{EventApi, validate_event_create, validate_event_update};
use crate::field::ErrorList;
use crate::meta::generic;
use crate::strategy::{Context, Strategy};

/// The core shape of an `events.k8s.io/v1` Event.
pub fn to_core(e: &Event) -> CoreEvent {
    CoreEvent {
        action: e.action.clone(),
        count: e.deprecated_count,
        event_time: e.event_time.clone(),
        first_timestamp: e.deprecated_first_timestamp.clone(),
        involved_object: e.regarding.clone().unwrap_or_default(),
        last_timestamp: e.deprecated_last_timestamp.clone(),
        message: e.note.clone(),
        metadata: e.metadata.clone(),
        reason: e.reason.clone(),
        related: e.related.clone(),
        reporting_component: e.reporting_controller.clone(),
        reporting_instance: e.reporting_instance.clone(),
        series: e.series.as_ref().map(|s| CoreSeries {
            count: Some(s.count),
            last_observed_time: Some(s.last_observed_time.clone()),
        }),
        source: e.deprecated_source.clone(),
        type_: e.type_.clone(),
    }
}

/// The `events.k8s.io/v1` shape of a core Event.
pub fn from_core(e: &CoreEvent) -> Event {
    Event {
        action: e.action.clone(),
        deprecated_count: e.count,
        deprecated_first_timestamp: e.first_timestamp.clone(),
        deprecated_last_timestamp: e.last_timestamp.clone(),
        deprecated_source: e.source.clone(),
        event_time: e.event_time.clone(),
        metadata: e.metadata.clone(),
        note: e.message.clone(),
        reason: e.reason.clone(),
        regarding: Some(e.involved_object.clone()),
        related: e.related.clone(),
        reporting_controller: e.reporting_component.clone(),
        reporting_instance: e.reporting_instance.clone(),
        series: e.series.as_ref().and_then(|s| {
            Some(EventSeries {
                count: s.count?,
                last_observed_time: s.last_observed_time.clone()?,
            })
        }),
        type_: e.type_.clone(),
    }
}

/// The JSON keys that differ: (`events.k8s.io/v1`, core/v1).
const RENAMED: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
    ("reportingController", "reportingComponent"),
];

fn rename(value: &Value, api_version: &str, from_events: bool) -> Value {
    let mut out = serde_json::Map::new();
    if let Value::Object(m) = value {
        for (k, v) in m {
            let key = RENAMED
                .iter()
                .find_map(|(ev, core)| {
                    let (from, to) = if from_events { (ev, core) } else { (core, ev) };
                    (k == from).then_some(*to)
                })
                .unwrap_or(k.as_str());
            out.insert(key.to_owned(), v.clone());
        }
    }
    out.insert("apiVersion".into(), Value::String(api_version.to_owned()));
    out.insert("kind".into(), Value::String("Event".to_owned()));
    Value::Object(out)
}

/// An `events.k8s.io/v1` Event as JSON → the stored core/v1 JSON (keys
/// renamed; unknown keys kept, as decoding drops them anyway).
pub fn to_core_json(value: &Value) -> Result<Value, String> {
    if !value.is_object() {
        return Err("an Event must be a JSON object".to_owned());
    }
    let mut core = rename(value, "v1", true);
    if let Some(m) = core.as_object_mut() {
        m.entry("involvedObject")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    Ok(core)
}

/// A stored core/v1 Event as JSON → its `events.k8s.io/v1` JSON.
pub fn from_core_json(value: &Value) -> Value {
    rename(value, "events.k8s.io/v1", false)
}

/// The registry strategy of `events.k8s.io/v1` Events: the same object as a
/// core Event, validated with the strict rules (error paths are the core
/// field names, as upstream reports them, except the renamed ones its
/// validation names explicitly).
#[derive(Clone, Copy, Debug, Default)]
pub struct EventsEventStrategy;

impl Strategy for EventsEventStrategy {
    type Object = Event;

    fn validate_create(obj: &Event, _ctx: &Context<'_>) -> ErrorList {
        generic::before_create(
            validate_event_create(&to_core(obj), EventApi::EventsV1),
            &obj.metadata,
        )
    }

    /// `BeforeUpdate` order: the generic registry's metadata checks, then
    /// the strict event rules (which repeat the metadata update checks, as
    /// upstream's do).
    fn validate_update(new: &Event, old: &Event, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = generic::validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_event_update(
            &to_core(new),
            &to_core(old),
            EventApi::EventsV1,
        ));
        errs
    }

    fn validate_status_update(new: &Event, old: &Event, ctx: &Context<'_>) -> ErrorList {
        Self::validate_update(new, old, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_renames_keys() {
        let ev = serde_json::json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "d"},
            "regarding": {"kind": "Pod", "name": "p"},
            "note": "hi", "reportingController": "acme.io/c", "deprecatedCount": 2
        });
        let core = to_core_json(&ev).expect("object");
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core["involvedObject"]["name"], "p");
        assert_eq!(core["message"], "hi");
        assert_eq!(core["reportingComponent"], "acme.io/c");
        assert_eq!(core["count"], 2);
        let typed: CoreEvent = serde_json::from_value(core.clone()).expect("core event");
        assert_eq!(typed.message.as_deref(), Some("hi"));
        assert_eq!(from_core_json(&core), ev);
        let back = from_core(&typed);
        assert_eq!(to_core(&back), typed);
    }
}
