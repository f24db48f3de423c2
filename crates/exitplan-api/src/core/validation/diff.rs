//! The spec diff that upstream appends to "pod updates may not change
//! fields other than …", rendered in go-cmp's report style:
//!
//! ```text
//!   core.PodSpec{
//!   →   ... // 3 identical fields
//!   →   Containers: []core.Container{
//!   →   →   {
//! - →   →   →   Name:  "nginx",
//! + →   →   →   Name:  "other",
//!   →   →   →   Image: "nginx",
//!   →   →   },
//!   →   },
//!   →   DNSPolicy: "ClusterFirst",
//!   →   ... // 2 identical fields
//!   }
//! ```
//!
//! (`→` marks a tab.) Fields are those of the submitted v1 object (set fields only, in
//! k8s-openapi's order) under Go's field names; upstream walks every field
//! of the internal struct, so the collapsed counts and the surrounding
//! context can differ. The changed lines name the same fields with the same
//! values.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::field::go_quote;

/// Identical fields shown next to a change before the rest is collapsed.
const CONTEXT: usize = 2;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    Same,
    Old,
    New,
}

struct Line {
    mark: Mark,
    depth: usize,
    text: String,
}

/// Go's field name for a JSON field name.
fn go_name(json: &str) -> String {
    const SPECIAL: &[(&str, &str)] = &[
        ("apiVersion", "APIVersion"),
        ("cephfs", "CephFS"),
        ("csi", "CSI"),
        ("dnsConfig", "DNSConfig"),
        ("dnsPolicy", "DNSPolicy"),
        ("fc", "FC"),
        ("fsGroup", "FSGroup"),
        ("fsGroupChangePolicy", "FSGroupChangePolicy"),
        ("grpc", "GRPC"),
        ("hostIPC", "HostIPC"),
        ("hostPID", "HostPID"),
        ("httpGet", "HTTPGet"),
        ("httpHeaders", "HTTPHeaders"),
        ("iscsi", "ISCSI"),
        ("nfs", "NFS"),
        ("os", "OS"),
        ("rbd", "RBD"),
        ("seLinuxOptions", "SELinuxOptions"),
        ("tcpSocket", "TCPSocket"),
        ("tty", "TTY"),
        ("uid", "UID"),
    ];
    if let Some((_, go)) = SPECIAL.iter().find(|(j, _)| *j == json) {
        return (*go).to_owned();
    }
    let mut c = json.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The Go type shown before a nested value of field `json`.
fn go_type(json: &str, v: &Value) -> &'static str {
    match (json, v) {
        ("containers" | "initContainers", _) => "[]core.Container",
        ("ephemeralContainers", _) => "[]core.EphemeralContainer",
        ("volumes", _) => "[]core.Volume",
        ("tolerations", _) => "[]core.Toleration",
        ("ports", _) => "[]core.ContainerPort",
        ("env", _) => "[]core.EnvVar",
        ("volumeMounts", _) => "[]core.VolumeMount",
        ("command" | "args", _) => "[]string",
        ("resources", _) => "core.ResourceRequirements",
        ("limits" | "requests" | "overhead", _) => "core.ResourceList",
        ("nodeSelector", _) => "map[string]string",
        ("affinity", _) => "&core.Affinity",
        (_, Value::Array(_)) => "",
        (_, Value::Object(_)) => "&",
        _ => "",
    }
}

/// A value as a Go literal on one line.
fn literal(v: &Value) -> String {
    match v {
        Value::Null => "nil".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => go_quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(literal).collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", go_name(k), literal(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

/// The zero value shown for a field missing on one side.
fn zero_like(other: &Value) -> Value {
    match other {
        Value::String(_) => Value::String(String::new()),
        Value::Number(_) => Value::from(0),
        Value::Bool(_) => Value::Bool(false),
        _ => Value::Null,
    }
}

fn push_collapsed(out: &mut Vec<Line>, depth: usize, n: usize, what: &str) {
    if n > 0 {
        out.push(Line {
            mark: Mark::Same,
            depth,
            text: format!("... // {n} identical {what}"),
        });
    }
}

/// The lines of the members of two objects at `depth`.
fn diff_object(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    depth: usize,
    out: &mut Vec<Line>,
) {
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    let changed: Vec<bool> = keys.iter().map(|k| old.get(*k) != new.get(*k)).collect();
    let shown: Vec<bool> = (0..keys.len())
        .map(|i| {
            let lo = i.saturating_sub(CONTEXT);
            let hi = (i + CONTEXT).min(keys.len().saturating_sub(1));
            changed[lo..=hi].iter().any(|c| *c)
        })
        .collect();
    let width = keys
        .iter()
        .zip(&shown)
        .filter(|(_, s)| **s)
        .map(|(k, _)| go_name(k).len())
        .max()
        .unwrap_or(0);
    let field = |k: &str| {
        let name = go_name(k);
        format!("{name}:{} ", " ".repeat(width - name.len()))
    };
    let mut hidden = 0;
    for (i, k) in keys.iter().enumerate() {
        if !shown[i] {
            hidden += 1;
            continue;
        }
        push_collapsed(out, depth, hidden, "fields");
        hidden = 0;
        let (o, n) = (old.get(*k), new.get(*k));
        match (o, n) {
            (Some(o), Some(n)) if o == n => out.push(Line {
                mark: Mark::Same,
                depth,
                text: format!("{}{},", field(k), literal(o)),
            }),
            (Some(o @ Value::Object(_)), Some(n @ Value::Object(_)))
            | (Some(o @ Value::Array(_)), Some(n @ Value::Array(_))) => {
                out.push(Line {
                    mark: Mark::Same,
                    depth,
                    text: format!("{}{}{{", field(k), go_type(k, n)),
                });
                diff_value(o, n, depth + 1, out);
                out.push(Line {
                    mark: Mark::Same,
                    depth,
                    text: "},".into(),
                });
            }
            _ => {
                let o = o
                    .cloned()
                    .unwrap_or_else(|| n.map(zero_like).unwrap_or(Value::Null));
                let n = n.cloned().unwrap_or_else(|| zero_like(&o));
                out.push(Line {
                    mark: Mark::Old,
                    depth,
                    text: format!("{}{},", field(k), literal(&o)),
                });
                out.push(Line {
                    mark: Mark::New,
                    depth,
                    text: format!("{}{},", field(k), literal(&n)),
                });
            }
        }
    }
    push_collapsed(out, depth, hidden, "fields");
}

fn diff_array(old: &[Value], new: &[Value], depth: usize, out: &mut Vec<Line>) {
    let mut same = 0;
    for i in 0..old.len().max(new.len()) {
        match (old.get(i), new.get(i)) {
            (Some(o), Some(n)) if o == n => same += 1,
            (Some(o @ Value::Object(_)), Some(n @ Value::Object(_))) => {
                push_collapsed(out, depth, same, "elements");
                same = 0;
                out.push(Line {
                    mark: Mark::Same,
                    depth,
                    text: "{".into(),
                });
                diff_value(o, n, depth + 1, out);
                out.push(Line {
                    mark: Mark::Same,
                    depth,
                    text: "},".into(),
                });
            }
            (o, n) => {
                push_collapsed(out, depth, same, "elements");
                same = 0;
                if let Some(o) = o {
                    out.push(Line {
                        mark: Mark::Old,
                        depth,
                        text: format!("{},", literal(o)),
                    });
                }
                if let Some(n) = n {
                    out.push(Line {
                        mark: Mark::New,
                        depth,
                        text: format!("{},", literal(n)),
                    });
                }
            }
        }
    }
    push_collapsed(out, depth, same, "elements");
}

fn diff_value(old: &Value, new: &Value, depth: usize, out: &mut Vec<Line>) {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => diff_object(o, n, depth, out),
        (Value::Array(o), Value::Array(n)) => diff_array(o, n, depth, out),
        _ => {}
    }
}

fn render(lines: &[Line]) -> String {
    let mut s = String::new();
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        s.push_str(match l.mark {
            Mark::Same => "  ",
            Mark::Old => "- ",
            Mark::New => "+ ",
        });
        s.push_str(&"\t".repeat(l.depth));
        s.push_str(&l.text);
    }
    s
}

/// `cmp.Diff(old, new)` of two values shown as the Go type `type_name`
/// (`core.PodSpec`); empty when they are equal.
pub fn diff<T: Serialize>(type_name: &str, old: &T, new: &T) -> String {
    let (Ok(o), Ok(n)) = (serde_json::to_value(old), serde_json::to_value(new)) else {
        return String::new();
    };
    if o == n {
        return String::new();
    }
    let mut lines = vec![Line {
        mark: Mark::Same,
        depth: 0,
        text: format!("{type_name}{{"),
    }];
    diff_value(&o, &n, 1, &mut lines);
    lines.push(Line {
        mark: Mark::Same,
        depth: 0,
        text: "}".into(),
    });
    let mut s = render(&lines);
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changed_field_with_context() {
        let old = json!({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "nodeName": "", "z": 1});
        let new = json!({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "nodeName": "n1", "z": 1});
        assert_eq!(
            diff("core.PodSpec", &old, &new),
            "  core.PodSpec{\n  \t... // 3 identical fields\n  \tD:        4,\n  \tE:        5,\n- \tNodeName: \"\",\n+ \tNodeName: \"n1\",\n  \tZ:        1,\n  }\n"
        );
    }

    #[test]
    fn added_list_element() {
        let old = json!({"containers": [{"name": "a"}]});
        let new = json!({"containers": [{"name": "a"}, {"name": "b"}]});
        assert_eq!(
            diff("core.PodSpec", &old, &new),
            "  core.PodSpec{\n  \tContainers: []core.Container{\n  \t\t... // 1 identical elements\n+ \t\t{Name: \"b\"},\n  \t},\n  }\n"
        );
    }
}
