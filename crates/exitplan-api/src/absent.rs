//! Required fields that k8s-openapi cannot represent as missing.
//!
//! Upstream declares some required scalars as pointers (`*int32 priority`),
//! so "absent" and "zero" differ and validation says `Required value` for the
//! former. k8s-openapi models them as plain values and fills in a default when
//! the JSON lacks them. [`find_absent`] looks at the submitted JSON once, at
//! decode time, and records which of those fields were missing so validators
//! can report them exactly as upstream does.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::field::Path;

/// Field paths (rendered like [`Path`]) of required scalars missing from the
/// submitted JSON. Objects built in code have none: use `Absent::default()`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Absent(BTreeSet<String>);

impl Absent {
    /// Whether the field at `path` was missing (or `null`).
    pub fn contains(&self, path: &Path) -> bool {
        self.0.contains(path.as_str())
    }

    /// Records `path` as missing.
    pub fn insert(&mut self, path: &Path) {
        self.0.insert(path.to_string());
    }

    /// Whether nothing was missing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Required non-pointer fields, as list patterns: `(path to list, key in each item)`.
const PATTERNS: &[(&[&str], &str)] = &[
    (&["spec", "evictionResponders"], "priority"),
    (
        &["spec", "template", "spec", "evictionResponders"],
        "priority",
    ),
    (
        &[
            "spec",
            "jobTemplate",
            "spec",
            "template",
            "spec",
            "evictionResponders",
        ],
        "priority",
    ),
    (&["status", "targetResponders"], "priority"),
    (&["status", "conditions"], "lastTransitionTime"),
    (&["webhooks"], "sideEffects"),
];

/// Required non-pointer object fields (a missing one reads as `{}` in
/// k8s-openapi, as Go's `nil` upstream): the workloads' `spec.selector`
/// and ControllerRevision `data`.
const FIELDS: &[&[&str]] = &[&["spec", "selector"], &["data"]];

/// Scans a submitted object for required fields that were left out.
pub fn find_absent(object: &Value) -> Absent {
    let mut absent = Absent::default();
    for field in FIELDS {
        let value = field.iter().try_fold(object, |node, seg| node.get(seg));
        if value.is_none_or(Value::is_null) {
            let path = field
                .iter()
                .fold(Path::default(), |path, seg| path.child(seg));
            absent.insert(&path);
        }
    }
    for (list_path, key) in PATTERNS {
        let mut node = object;
        let mut path = Path::default();
        let mut found = true;
        for seg in *list_path {
            match node.get(seg) {
                Some(next) => {
                    node = next;
                    path = path.child(seg);
                }
                None => {
                    found = false;
                    break;
                }
            }
        }
        let Some(items) = node.as_array().filter(|_| found) else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            if item.is_object() && item.get(key).is_none_or(Value::is_null) {
                absent.insert(&path.index(i).child(key));
            }
        }
    }
    absent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_missing_priorities() {
        let pod = serde_json::json!({"spec": {"evictionResponders": [
            {"name": "a.io/x", "priority": 1000}, {"name": "b.io/y"}, {"name": "c.io/z", "priority": null}
        ]}});
        let a = find_absent(&pod);
        assert!(
            !a.contains(
                &Path::new("spec")
                    .child("evictionResponders")
                    .index(0)
                    .child("priority")
            )
        );
        assert!(
            a.contains(
                &Path::new("spec")
                    .child("evictionResponders")
                    .index(1)
                    .child("priority")
            )
        );
        assert!(
            a.contains(
                &Path::new("spec")
                    .child("evictionResponders")
                    .index(2)
                    .child("priority")
            )
        );
    }
}
