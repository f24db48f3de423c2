//! The message table: each `generated.proto` message the server speaks,
//! with its fields' numbers, JSON names and types, parsed once from
//! `schema.txt` (written by `exitplan-proto-gen`).

use std::collections::HashMap;
use std::sync::LazyLock;

/// A field's type on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// `string`.
    String,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `bool`.
    Bool,
    /// `bytes` (base64 in JSON).
    Bytes,
    /// `double`.
    Double,
    /// A message (named in [`Field::message`]).
    Message,
    /// `map<string, string>`.
    MapString,
    /// `map<string, bytes>`.
    MapBytes,
    /// `map<string, message>`.
    MapMessage,
}

/// One field of a message.
#[derive(Debug, Clone)]
pub struct Field {
    /// The field number.
    pub number: u32,
    /// The JSON name; `None` for a Go struct embedded `json:",inline"`,
    /// whose fields are the parent's in JSON.
    pub json: Option<&'static str>,
    /// The wire type.
    pub ty: Type,
    /// The message (or map value message) type's full name.
    pub message: Option<&'static str>,
    /// `repeated`.
    pub repeated: bool,
    /// Whether a zero value is kept when decoding: the JSON field is not
    /// `omitempty` (required) or is a Go pointer.
    pub keep_zero: bool,
}

/// One message.
#[derive(Debug, Clone, Default)]
pub struct Message {
    /// Fields in number order (the order gogo-protobuf writes them).
    pub fields: Vec<Field>,
}

impl Message {
    /// The field with `number`.
    pub fn by_number(&self, number: u32) -> Option<&Field> {
        self.fields
            .binary_search_by_key(&number, |f| f.number)
            .ok()
            .and_then(|i| self.fields.get(i))
    }
}

/// Full names of the messages with a JSON form of their own.
pub mod special {
    /// `metav1.Time`: an RFC 3339 string.
    pub const TIME: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.Time";
    /// `metav1.MicroTime`: RFC 3339 with microseconds.
    pub const MICRO_TIME: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime";
    /// `resource.Quantity`: a string.
    pub const QUANTITY: &str = "k8s.io.apimachinery.pkg.api.resource.Quantity";
    /// `intstr.IntOrString`: a number or a string.
    pub const INT_OR_STRING: &str = "k8s.io.apimachinery.pkg.util.intstr.IntOrString";
    /// `runtime.RawExtension`: embedded JSON.
    pub const RAW_EXTENSION: &str = "k8s.io.apimachinery.pkg.runtime.RawExtension";
    /// `metav1.FieldsV1`: embedded JSON.
    pub const FIELDS_V1: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1";
    /// `metav1.Duration`: a Go duration string.
    pub const DURATION: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.Duration";
}

/// The table, by full message name.
pub static SCHEMA: LazyLock<HashMap<&'static str, Message>> =
    LazyLock::new(|| parse(include_str!("schema.txt")));

fn parse(text: &'static str) -> HashMap<&'static str, Message> {
    let mut out: HashMap<&'static str, Message> = HashMap::new();
    let mut current: Option<(&'static str, Message)> = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("message ") {
            if let Some((n, m)) = current.take() {
                out.insert(n, m);
            }
            current = Some((name.trim(), Message::default()));
            continue;
        }
        let Some((_, message)) = current.as_mut() else {
            continue;
        };
        if let Some(f) = field(line) {
            message.fields.push(f);
        }
    }
    if let Some((n, m)) = current.take() {
        out.insert(n, m);
    }
    for m in out.values_mut() {
        m.fields.sort_by_key(|f| f.number);
    }
    out
}

fn field(line: &'static str) -> Option<Field> {
    let mut words = line.split_whitespace();
    let number = words.next()?.parse().ok()?;
    let json = words.next()?;
    let ty = match words.next()? {
        "string" => Type::String,
        "int32" => Type::Int32,
        "int64" => Type::Int64,
        "bool" => Type::Bool,
        "bytes" => Type::Bytes,
        "double" => Type::Double,
        "message" => Type::Message,
        "map_string" => Type::MapString,
        "map_bytes" => Type::MapBytes,
        "map_message" => Type::MapMessage,
        _ => return None,
    };
    let mut f = Field {
        number,
        json: (json != "-").then_some(json),
        ty,
        message: None,
        repeated: false,
        keep_zero: false,
    };
    for w in words {
        match w {
            "repeated" => f.repeated = true,
            "required" | "pointer" => f.keep_zero = true,
            name => f.message = Some(name),
        }
    }
    Some(f)
}

/// The message of an object of `api_version`/`kind`, as the protobuf
/// serializer finds it: `k8s.io.api.<group>.<version>.<Kind>` (`core` for
/// the legacy group, else the group's first label: `rbac` for
/// `rbac.authorization.k8s.io`, `events` for `events.k8s.io`), then the
/// `meta.k8s.io` kinds every group version serves (`Status`,
/// `DeleteOptions`, …).
pub fn message_for(api_version: &str, kind: &str) -> Option<(&'static str, &'static Message)> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let group = match group {
        "" => "core",
        g => g.split('.').next().unwrap_or(g),
    };
    let candidates = [
        format!("k8s.io.api.{group}.{version}.{kind}"),
        format!("k8s.io.apimachinery.pkg.apis.meta.v1.{kind}"),
    ];
    let candidates = if group == "meta" {
        &candidates[1..]
    } else {
        &candidates[..]
    };
    candidates
        .iter()
        .find_map(|name| SCHEMA.get_key_value(name.as_str()))
        .map(|(k, v)| (*k, v))
}

/// The message named `name`.
pub fn message(name: &str) -> Option<&'static Message> {
    SCHEMA.get(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_served_kind_has_a_message_and_every_reference_resolves() {
        for (name, m) in SCHEMA.iter() {
            for f in &m.fields {
                if let Some(r) = f.message {
                    assert!(SCHEMA.contains_key(r), "{name}.{}: {r}", f.number);
                }
            }
        }
        for (v, k) in [
            ("v1", "Pod"),
            ("v1", "PodList"),
            ("v1", "Status"),
            ("apps/v1", "Deployment"),
            ("policy/v1", "PodDisruptionBudget"),
            ("coordination.k8s.io/v1", "Lease"),
            ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
            ("events.k8s.io/v1", "Event"),
            ("meta.k8s.io/v1", "DeleteOptions"),
            ("autoscaling/v1", "Scale"),
        ] {
            assert!(message_for(v, k).is_some(), "{v} {k}");
        }
        assert!(message_for("lifecycle.k8s.io/v1alpha1", "Eviction").is_none());
        assert!(message_for("meta.k8s.io/v1", "Pod").is_none());
    }
}
