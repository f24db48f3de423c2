//! Extracting what selectors need from an object, once per write.

use serde_json::Value;

use crate::storage::Attrs;

/// The value at a dotted path, rendered as field selectors compare it
/// (strings as is, booleans and numbers in JSON form, absent as `""`).
fn field(object: &Value, path: &str) -> String {
    let mut node = object;
    for seg in path.split('.') {
        match node.get(seg) {
            Some(next) => node = next,
            None => return String::new(),
        }
    }
    match node {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Labels, `metadata.name`, `metadata.namespace` (namespaced kinds) and the
/// resource's selectable fields of `object`.
pub fn attrs_of(object: &Value, namespaced: bool, selectable: &[&str]) -> Attrs {
    let labels = object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    let mut fields = std::collections::BTreeMap::new();
    fields.insert("metadata.name".to_owned(), field(object, "metadata.name"));
    if namespaced {
        fields.insert(
            "metadata.namespace".to_owned(),
            field(object, "metadata.namespace"),
        );
    }
    for path in selectable {
        fields.insert((*path).to_owned(), field(object, path));
    }
    Attrs { labels, fields }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_labels_and_fields() {
        let pod = serde_json::json!({
            "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "web"}},
            "spec": {"nodeName": "n1", "hostNetwork": true},
            "status": {}
        });
        let a = attrs_of(
            &pod,
            true,
            &["spec.nodeName", "spec.hostNetwork", "status.phase"],
        );
        assert_eq!(a.labels.get("app").map(String::as_str), Some("web"));
        assert_eq!(
            a.fields.get("spec.nodeName").map(String::as_str),
            Some("n1")
        );
        assert_eq!(
            a.fields.get("spec.hostNetwork").map(String::as_str),
            Some("true")
        );
        assert_eq!(a.fields.get("status.phase").map(String::as_str), Some(""));
        assert_eq!(
            a.fields.get("metadata.namespace").map(String::as_str),
            Some("ns")
        );
    }
}
