//! Where a resource's `scale` subresource (`autoscaling/v1` Scale) reads
//! and writes its replicas and selector — upstream's per-kind
//! `ScaleREST` (Deployments, ReplicaSets, StatefulSets,
//! ReplicationControllers), as data so custom resources can use the same
//! path with the paths their CRD names.

use serde_json::Value;

use exitplan_api::selector::as_selector;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// Where the selector of `Scale.status.selector` comes from.
#[derive(Clone, Copy, Debug)]
pub enum SelectorSource {
    /// A `metav1.LabelSelector` at this JSON pointer (apps/v1 kinds).
    LabelSelector(&'static str),
    /// A `map[string]string` selector at this JSON pointer
    /// (ReplicationController `spec.selector`).
    MatchLabels(&'static str),
    /// A selector already in string form at this JSON pointer (a CRD's
    /// `labelSelectorPath`).
    String(&'static str),
    /// No selector (a CRD scale without `labelSelectorPath`).
    None,
}

/// How the `scale` subresource maps onto an object.
#[derive(Debug)]
pub struct ScaleDef {
    /// JSON pointer of the desired replicas (`/spec/replicas`).
    pub spec_replicas: &'static str,
    /// JSON pointer of the observed replicas (`/status/replicas`).
    pub status_replicas: &'static str,
    /// The selector reported in `status.selector`.
    pub selector: SelectorSource,
}

/// The Scale of the built-in workloads whose selector is a LabelSelector.
pub static APPS_SCALE: ScaleDef = ScaleDef {
    spec_replicas: "/spec/replicas",
    status_replicas: "/status/replicas",
    selector: SelectorSource::LabelSelector("/spec/selector"),
};

/// The Scale of ReplicationControllers (a plain label map selector).
pub static RC_SCALE: ScaleDef = ScaleDef {
    spec_replicas: "/spec/replicas",
    status_replicas: "/status/replicas",
    selector: SelectorSource::MatchLabels("/spec/selector"),
};

fn int_at(object: &Value, pointer: &str) -> i32 {
    object
        .pointer(pointer)
        .and_then(Value::as_i64)
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(0)
}

impl ScaleDef {
    /// The desired replicas of `object` (0 when unset).
    pub fn spec_replicas(&self, object: &Value) -> i32 {
        int_at(object, self.spec_replicas)
    }

    /// The observed replicas of `object` (0 when unset).
    pub fn status_replicas(&self, object: &Value) -> i32 {
        int_at(object, self.status_replicas)
    }

    /// `status.selector`: the selector as `labels.Selector.String()`;
    /// empty for a selector that does not convert (upstream reports the
    /// conversion error; a stored workload's selector always converts).
    pub fn selector(&self, object: &Value) -> String {
        match self.selector {
            SelectorSource::LabelSelector(pointer) => {
                let selector: Option<LabelSelector> = object
                    .pointer(pointer)
                    .and_then(|v| serde_json::from_value(v.clone()).ok());
                as_selector(selector.as_ref())
                    .map(|s| s.to_string())
                    .unwrap_or_default()
            }
            SelectorSource::MatchLabels(pointer) => {
                let Some(map) = object.pointer(pointer).and_then(Value::as_object) else {
                    return String::new();
                };
                // A map iterates in key order: `labels.SelectorFromSet`'s order.
                map.iter()
                    .filter_map(|(k, v)| Some(format!("{k}={}", v.as_str()?)))
                    .collect::<Vec<_>>()
                    .join(",")
            }
            SelectorSource::String(pointer) => object
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            SelectorSource::None => String::new(),
        }
    }

    /// Sets the desired replicas of `object`, creating the path's parents.
    pub fn set_spec_replicas(&self, object: &mut Value, replicas: i32) {
        let mut at = object;
        let mut segments = self.spec_replicas.split('/').skip(1).peekable();
        while let Some(segment) = segments.next() {
            let Some(map) = at.as_object_mut() else {
                return;
            };
            if segments.peek().is_none() {
                map.insert(segment.to_owned(), replicas.into());
                return;
            }
            at = map
                .entry(segment)
                .or_insert_with(|| Value::Object(Default::default()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_and_writes_replicas_and_selectors() {
        let mut deploy = json!({
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web", "tier": "fe"}}},
            "status": {"replicas": 2}
        });
        assert_eq!(APPS_SCALE.spec_replicas(&deploy), 3);
        assert_eq!(APPS_SCALE.status_replicas(&deploy), 2);
        assert_eq!(APPS_SCALE.selector(&deploy), "app=web,tier=fe");
        APPS_SCALE.set_spec_replicas(&mut deploy, 5);
        assert_eq!(deploy["spec"]["replicas"], 5);

        let mut rc = json!({"spec": {"selector": {"b": "2", "a": "1"}}});
        assert_eq!(RC_SCALE.status_replicas(&rc), 0);
        assert_eq!(RC_SCALE.selector(&rc), "a=1,b=2");
        let mut bare = json!({});
        RC_SCALE.set_spec_replicas(&mut bare, 0);
        assert_eq!(bare, json!({"spec": {"replicas": 0}}));
        RC_SCALE.set_spec_replicas(&mut rc, 1);
        assert_eq!(rc["spec"]["replicas"], 1);
    }
}
