//! core/v1 Event: upstream's `ValidateEventCreate` / `ValidateEventUpdate`
//! (`pkg/apis/core/validation/events.go`) on the core shape, for both API
//! versions that serve Events — lenient (`legacyValidateEvent`) for `v1`,
//! strict for `events.k8s.io/v1` — and the core registry strategy.

use k8s_openapi::api::core::v1::Event;

use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, generic};
use crate::render;
use crate::strategy::{Context, Strategy};

/// Longest `reportingInstance`.
pub const REPORTING_INSTANCE_LENGTH_LIMIT: usize = 128;
/// Longest `action`.
pub const ACTION_LENGTH_LIMIT: usize = 128;
/// Longest `reason`.
pub const REASON_LENGTH_LIMIT: usize = 128;
/// Longest `message` (`note`).
pub const NOTE_LENGTH_LIMIT: usize = 1024;
/// `Normal`.
pub const EVENT_TYPE_NORMAL: &str = "Normal";
/// `Warning`.
pub const EVENT_TYPE_WARNING: &str = "Warning";

/// Which API a write came through: the rules differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventApi {
    /// `v1` (core): legacy rules only.
    CoreV1,
    /// `events.k8s.io/v1`: legacy plus strict rules.
    EventsV1,
}

fn s(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or_default()
}

fn too_long(errs: &mut ErrorList, path: &str, value: &str, limit: usize) {
    if value.len() > limit {
        errs.push(Error::invalid(
            &Path::new(path),
            "",
            format!("can have at most {limit} characters"),
        ));
    }
}

/// `legacyValidateEvent`.
fn validate_legacy(event: &Event, api: EventApi) -> ErrorList {
    let mut errs = ErrorList::new();
    let reporting_field = match api {
        EventApi::CoreV1 => "reportingComponent",
        EventApi::EventsV1 => "reportingController",
    };
    let namespace = s(&event.metadata.namespace);
    let involved_ns = s(&event.involved_object.namespace);
    let ns_path = Path::new("involvedObject").child("namespace");
    if event.event_time.is_none() {
        let mismatch = if involved_ns.is_empty() {
            !namespace.is_empty() && namespace != "default"
        } else {
            namespace != involved_ns
        };
        if mismatch {
            errs.push(Error::invalid(
                &ns_path,
                involved_ns,
                "does not match event.namespace",
            ));
        }
    } else {
        if involved_ns.is_empty() && namespace != "default" && namespace != "kube-system" {
            errs.push(Error::invalid(
                &ns_path,
                involved_ns,
                "does not match event.namespace",
            ));
        }
        let controller = s(&event.reporting_component);
        if controller.is_empty() {
            errs.push(Error::required(&Path::new(reporting_field), ""));
        }
        errs.append(formats::validate_qualified_name(
            &Path::new(reporting_field),
            controller,
        ));
        let instance = s(&event.reporting_instance);
        if instance.is_empty() {
            errs.push(Error::required(&Path::new("reportingInstance"), ""));
        }
        too_long(
            &mut errs,
            "reportingInstance",
            instance,
            REPORTING_INSTANCE_LENGTH_LIMIT,
        );
        let action = s(&event.action);
        if action.is_empty() {
            errs.push(Error::required(&Path::new("action"), ""));
        }
        too_long(&mut errs, "action", action, ACTION_LENGTH_LIMIT);
        let reason = s(&event.reason);
        if reason.is_empty() {
            errs.push(Error::required(&Path::new("reason"), ""));
        }
        too_long(&mut errs, "reason", reason, REASON_LENGTH_LIMIT);
        too_long(&mut errs, "message", s(&event.message), NOTE_LENGTH_LIMIT);
    }
    for msg in formats::is_dns1123_subdomain(namespace) {
        errs.push(Error::invalid(&Path::new("namespace"), namespace, msg));
    }
    errs
}

/// `validateV1EventSeries`.
fn validate_series(event: &Event) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(series) = &event.series {
        if series.count.unwrap_or(0) < 2 {
            errs.push(Error::invalid(
                &Path::new("series.count"),
                "",
                "should be at least 2",
            ));
        }
        if series.last_observed_time.is_none() {
            errs.push(Error::required(&Path::new("series.lastObservedTime"), ""));
        }
    }
    errs
}

/// `ValidateEventCreate` for a write through `api`.
pub fn validate_event_create(event: &Event, api: EventApi) -> ErrorList {
    let mut errs = validate_legacy(event, api);
    if api == EventApi::CoreV1 {
        return errs;
    }
    errs.append(meta::validate_object_meta(
        &event.metadata,
        true,
        meta::NameRule::Subdomain,
    ));
    errs.append(validate_series(event));
    if event.event_time.is_none() {
        errs.push(Error::required(&Path::new("eventTime"), ""));
    }
    let ty = s(&event.type_);
    if ty != EVENT_TYPE_NORMAL && ty != EVENT_TYPE_WARNING {
        errs.push(Error::invalid(
            &Path::new("type"),
            "",
            format!("has invalid value: {ty}"),
        ));
    }
    if event.first_timestamp.is_some() {
        errs.push(Error::invalid(
            &Path::new("deprecatedFirstTimestamp"),
            "",
            "needs to be unset",
        ));
    }
    if event.last_timestamp.is_some() {
        errs.push(Error::invalid(
            &Path::new("deprecatedLastTimestamp"),
            "",
            "needs to be unset",
        ));
    }
    if event.count.unwrap_or(0) != 0 {
        errs.push(Error::invalid(
            &Path::new("deprecatedCount"),
            "",
            "needs to be unset",
        ));
    }
    let source = event.source.clone().unwrap_or_default();
    if !s(&source.component).is_empty() || !s(&source.host).is_empty() {
        errs.push(Error::invalid(
            &Path::new("deprecatedSource"),
            "",
            "needs to be unset",
        ));
    }
    errs
}

/// `ValidateImmutableField`: the new value, rendered like upstream's error values.
fn immutable<T: PartialEq + serde::Serialize>(errs: &mut ErrorList, new: &T, old: &T, path: &str) {
    if new == old {
        return;
    }
    let value = match serde_json::to_value(new) {
        Ok(serde_json::Value::String(s)) => BadValue::Str(s),
        Ok(serde_json::Value::Null) => BadValue::Str(String::new()),
        Ok(serde_json::Value::Number(n)) => BadValue::Int(n.as_i64().unwrap_or_default()),
        _ => BadValue::Json(render::json(new)),
    };
    errs.push(
        Error::invalid(&Path::new(path), value, meta::FIELD_IMMUTABLE).with_origin("immutable"),
    );
}

/// `ValidateEventUpdate` for a write through `api`.
pub fn validate_event_update(new: &Event, old: &Event, api: EventApi) -> ErrorList {
    let mut errs = validate_legacy(new, api);
    if api == EventApi::CoreV1 {
        return errs;
    }
    errs.append(meta::validate_object_meta_update(
        &new.metadata,
        &old.metadata,
    ));
    if new.series != old.series {
        errs.append(validate_series(new));
    }
    immutable(
        &mut errs,
        &new.involved_object,
        &old.involved_object,
        "involvedObject",
    );
    immutable(&mut errs, &new.reason, &old.reason, "reason");
    immutable(&mut errs, &new.message, &old.message, "message");
    immutable(&mut errs, &new.source, &old.source, "source");
    immutable(
        &mut errs,
        &new.first_timestamp,
        &old.first_timestamp,
        "firstTimestamp",
    );
    immutable(
        &mut errs,
        &new.last_timestamp,
        &old.last_timestamp,
        "lastTimestamp",
    );
    immutable(&mut errs, &new.count, &old.count, "count");
    immutable(&mut errs, &new.type_, &old.type_, "type");
    immutable(&mut errs, &new.event_time, &old.event_time, "eventTime");
    immutable(&mut errs, &new.action, &old.action, "action");
    immutable(&mut errs, &new.related, &old.related, "related");
    immutable(
        &mut errs,
        &new.reporting_component,
        &old.reporting_component,
        "reportingController",
    );
    immutable(
        &mut errs,
        &new.reporting_instance,
        &old.reporting_instance,
        "reportingInstance",
    );
    errs
}

/// The registry strategy of core/v1 Events (`pkg/registry/core/event`):
/// no status, no generation; the generic registry's metadata checks follow
/// the lenient event rules.
#[derive(Clone, Copy, Debug, Default)]
pub struct EventStrategy;

impl Strategy for EventStrategy {
    type Object = Event;

    fn validate_create(obj: &Event, _ctx: &Context<'_>) -> ErrorList {
        generic::before_create(validate_event_create(obj, EventApi::CoreV1), &obj.metadata)
    }

    /// `BeforeUpdate` order: the generic registry's metadata checks, then
    /// the lenient event rules.
    fn validate_update(new: &Event, old: &Event, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = generic::validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_event_update(new, old, EventApi::CoreV1));
        errs
    }

    fn validate_status_update(new: &Event, old: &Event, ctx: &Context<'_>) -> ErrorList {
        Self::validate_update(new, old, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ObjectReference;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};

    fn event(ns: &str) -> Event {
        Event {
            metadata: ObjectMeta {
                name: Some("e".into()),
                namespace: Some(ns.into()),
                ..Default::default()
            },
            involved_object: ObjectReference {
                namespace: Some(ns.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn legacy_events_need_matching_namespaces_only() {
        assert!(validate_event_create(&event("a"), EventApi::CoreV1).is_empty());
        let mut e = event("a");
        e.involved_object.namespace = Some("b".into());
        assert_eq!(
            validate_event_create(&e, EventApi::CoreV1).to_string(),
            r#"involvedObject.namespace: Invalid value: "b": does not match event.namespace"#
        );
    }

    #[test]
    fn new_style_events_need_reporting_fields() {
        let mut e = event("a");
        e.event_time = Some(MicroTime("2026-01-01T00:00:00Z".parse().expect("time")));
        e.type_ = Some("Normal".into());
        let got = validate_event_create(&e, EventApi::EventsV1).to_string();
        assert!(got.contains("reportingController: Required value"), "{got}");
        assert!(got.contains("reportingInstance: Required value"), "{got}");
        assert!(got.contains("action: Required value"), "{got}");
        assert!(got.contains("reason: Required value"), "{got}");
        let core = validate_event_create(&e, EventApi::CoreV1).to_string();
        assert!(
            core.contains("reportingComponent: Required value"),
            "{core}"
        );
        e.reporting_component = Some("acme.io/ctl".into());
        e.reporting_instance = Some("i".into());
        e.action = Some("Drain".into());
        e.reason = Some("Evicted".into());
        assert!(validate_event_create(&e, EventApi::EventsV1).is_empty());
        e.type_ = Some("Odd".into());
        e.count = Some(3);
        assert_eq!(
            validate_event_create(&e, EventApi::EventsV1).to_string(),
            r#"[type: Invalid value: "": has invalid value: Odd, deprecatedCount: Invalid value: "": needs to be unset]"#
        );
    }
}
