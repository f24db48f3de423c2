//! Cell formats several printers share, as upstream's printers write them:
//! names and ages, label selectors (`metav1.FormatLabelSelector`,
//! `labels.Selector.String`), label maps (`labels.FormatLabels`), container
//! names and images (`layoutContainerCells`), optional booleans
//! (`printBoolPtr`), `a,b,c + 2 more...` lists and quantities.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde_json::{Value, json};

use exitplan_api::core::validation::quantity::Quantity;
use exitplan_api::selector::{Operator, Selector, as_selector};

use super::{created, since};

/// Printers write `<none>` for an absent value.
pub const NONE: &str = "<none>";

/// The name cell.
pub fn name(meta: &ObjectMeta) -> Value {
    json!(meta.name.clone().unwrap_or_default())
}

/// The Age cell (`translateTimestampSince(obj.CreationTimestamp)`).
pub fn age(meta: &ObjectMeta, now: Timestamp) -> Value {
    json!(since(created(meta), now))
}

/// `s`, or `<none>` when empty.
pub fn or_none(s: &str) -> String {
    if s.is_empty() {
        NONE.to_owned()
    } else {
        s.to_owned()
    }
}

/// `labels.Selector.String()`: requirements sorted by key, `k=v`,
/// `k in (a,b)`, `k notin (a,b)`, `k`, `!k`; empty for nothing/everything.
pub fn selector_string(selector: &Selector) -> String {
    let Selector::Requirements(reqs) = selector else {
        return String::new();
    };
    let mut reqs: Vec<_> = reqs.iter().collect();
    reqs.sort_by(|a, b| a.key.cmp(&b.key));
    let text: Vec<String> = reqs
        .iter()
        .map(|r| {
            let mut values = r.values.clone();
            values.sort();
            let values = values.join(",");
            match r.operator {
                Operator::Equals => format!("{}={values}", r.key),
                Operator::In => format!("{} in ({values})", r.key),
                Operator::NotIn => format!("{} notin ({values})", r.key),
                Operator::Exists => r.key.clone(),
                Operator::DoesNotExist => format!("!{}", r.key),
            }
        })
        .collect();
    text.join(",")
}

/// `metav1.FormatLabelSelector`: the selector's string, `<none>` when it
/// is empty or unset, `<error>` when it does not convert.
pub fn label_selector(selector: Option<&LabelSelector>) -> String {
    match as_selector(selector) {
        Ok(s) => or_none(&selector_string(&s)),
        Err(_) => "<error>".to_owned(),
    }
}

/// `labels.FormatLabels`: sorted `k=v` pairs, `<none>` when empty.
pub fn labels(map: Option<&BTreeMap<String, String>>) -> String {
    let mut pairs: Vec<String> = map
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    pairs.sort();
    or_none(&pairs.join(","))
}

/// `layoutContainerCells` of a pod template: container names and images,
/// each comma-joined.
pub fn containers(template: Option<&PodTemplateSpec>) -> (String, String) {
    let containers = template
        .and_then(|t| t.spec.as_ref())
        .map(|s| s.containers.as_slice())
        .unwrap_or_default();
    let names: Vec<&str> = containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = containers
        .iter()
        .map(|c| c.image.as_deref().unwrap_or_default())
        .collect();
    (names.join(","), images.join(","))
}

/// `printBoolPtr`: `True`, `False`, or `<unset>`.
pub fn bool_ptr(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    }
}

/// `listWithMoreString`: the first `max` of `count` items, then
/// ` + N more...`; `<unset>` when there are none.
pub fn list_with_more(list: &[String], count: usize, max: usize) -> String {
    let shown = list.iter().take(max).cloned().collect::<Vec<_>>().join(",");
    if count > max {
        return format!("{shown} + {} more...", count - max);
    }
    if shown.is_empty() {
        "<unset>".to_owned()
    } else {
        shown
    }
}

/// `Quantity.String()`: the canonical form; `0` for an absent quantity
/// (Go's zero value), the text as stored if it does not parse.
pub fn quantity(q: Option<&WireQuantity>) -> String {
    match q {
        Some(q) => Quantity::parse(q.0.trim()).map_or_else(|_| q.0.clone(), |p| p.canonical()),
        None => "0".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selector(v: Value) -> LabelSelector {
        serde_json::from_value(v).expect("selector")
    }

    #[test]
    fn label_selectors_like_format_label_selector() {
        let cases = [
            (None, "<none>"),
            (Some(json!({})), "<none>"),
            (
                Some(json!({"matchLabels": {"b": "2", "a": "1"}})),
                "a=1,b=2",
            ),
            (
                Some(json!({"matchExpressions": [
                    {"key": "tier", "operator": "NotIn", "values": ["web", "db"]},
                    {"key": "env", "operator": "In", "values": ["prod"]},
                    {"key": "x", "operator": "Exists"},
                    {"key": "gone", "operator": "DoesNotExist"}
                ]})),
                "env in (prod),!gone,tier notin (db,web),x",
            ),
            (
                Some(
                    json!({"matchExpressions": [{"key": "a", "operator": "Near", "values": ["b"]}]}),
                ),
                "<error>",
            ),
            (
                Some(json!({"matchExpressions": [{"key": "a", "operator": "In"}]})),
                "<error>",
            ),
        ];
        for (sel, want) in cases {
            let sel = sel.map(selector);
            assert_eq!(label_selector(sel.as_ref()), want, "{sel:?}");
        }
    }

    #[test]
    fn label_maps_sort_their_pairs() {
        let map: BTreeMap<String, String> = [("a", "2"), ("a.b", "1"), ("c", "")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        // "a.b=1" sorts before "a=2" ('.' < '='), as Go sorts the pairs.
        assert_eq!(labels(Some(&map)), "a.b=1,a=2,c=");
        assert_eq!(labels(None), "<none>");
        assert_eq!(labels(Some(&BTreeMap::new())), "<none>");
    }

    #[test]
    fn lists_quantities_and_booleans() {
        let list: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        assert_eq!(list_with_more(&list[..2], 2, 3), "a,b");
        assert_eq!(list_with_more(&list, 5, 3), "a,b,c + 2 more...");
        assert_eq!(list_with_more(&[], 0, 3), "<unset>");
        assert_eq!(quantity(Some(&WireQuantity("1024Mi".into()))), "1Gi");
        assert_eq!(quantity(Some(&WireQuantity("1.5Gi".into()))), "1536Mi");
        assert_eq!(quantity(Some(&WireQuantity("bad".into()))), "bad");
        assert_eq!(quantity(None), "0");
        assert_eq!(
            (bool_ptr(Some(true)), bool_ptr(Some(false)), bool_ptr(None)),
            ("True", "False", "<unset>")
        );
    }
}
