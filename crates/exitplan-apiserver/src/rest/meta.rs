//! Object metadata the server assigns or reads: UIDs, generated names,
//! field managers, and JSON accessors for `metadata`.

use axum::http::HeaderMap;
use axum::http::header::USER_AGENT;
use exitplan_api::patch::TypeRef;
use exitplan_api::strategy::SystemFields;
use jiff::Timestamp;
use serde_json::Value;

use super::query::Query;
use crate::registry::ResourceDef;

/// Characters of a generated name suffix (`utilrand.String`: no vowels,
/// no confusable digits).
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of the `generateName` suffix.
const SUFFIX_LEN: usize = 5;

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    if getrandom::fill(&mut buf).is_err() {
        // Without an OS random source, fall back to the clock's nanoseconds.
        let nanos = Timestamp::now().as_nanosecond().to_le_bytes();
        for (i, b) in buf.iter_mut().enumerate() {
            *b = nanos[i % nanos.len()] ^ (i as u8).wrapping_mul(151);
        }
    }
    buf
}

/// A random (version 4) UUID.
pub fn new_uid() -> String {
    let mut b = random_bytes::<16>();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// A random `generateName` suffix.
pub fn name_suffix() -> String {
    random_bytes::<SUFFIX_LEN>()
        .iter()
        .map(|b| char::from(ALPHANUMS[usize::from(*b) % ALPHANUMS.len()]))
        .collect()
}

/// A secret of `n` random bytes, hex encoded; fails without an OS random
/// source (secrets never fall back to anything guessable).
pub fn random_hex(n: usize) -> Result<String, getrandom::Error> {
    let mut buf = vec![0u8; n];
    getrandom::fill(&mut buf)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// The system fields of a new object created at `now`.
pub fn system_fields(now: Timestamp) -> SystemFields {
    SystemFields {
        uid: new_uid(),
        creation_timestamp: now,
        generated_name_suffix: name_suffix(),
    }
}

/// The field manager of a write: `?fieldManager=`, else the user agent up
/// to its first `/` (upstream's `prefixFromUserAgent`).
pub fn field_manager(query: &Query, headers: &HeaderMap) -> String {
    if let Some(m) = query.non_empty("fieldManager") {
        return m.to_owned();
    }
    let ua = headers
        .get(USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let prefix = ua.split('/').next().unwrap_or_default();
    let prefix: String = prefix.chars().take(128).collect();
    if prefix.is_empty() {
        "unknown".to_owned()
    } else {
        prefix
    }
}

/// The patch schema reference of a resource.
/// What patches and apply of `def`'s objects work on: a built-in kind's
/// schema, or a custom resource's from its CRD version.
pub fn target(def: &ResourceDef) -> exitplan_api::patch::Target<'_> {
    match def.custom {
        Some(c) => exitplan_api::patch::Target::custom(def.group, def.kind, &c.patch_schema),
        None => exitplan_api::patch::Target::builtin(type_ref(def)),
    }
}

/// The kind of `def`'s objects.
pub fn type_ref(def: &ResourceDef) -> TypeRef<'static> {
    TypeRef {
        group: def.group,
        kind: def.kind,
    }
}

/// `metadata.<field>` as a string.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

/// `metadata.finalizers`.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata.deletionGracePeriodSeconds`.
pub fn deletion_grace(obj: &Value) -> Option<i64> {
    obj.pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64)
}

/// `metadata.deletionTimestamp` parsed.
pub fn deletion_timestamp(obj: &Value) -> Option<Timestamp> {
    meta_str(obj, "deletionTimestamp").and_then(|s| s.parse().ok())
}

/// The mutable `metadata` map, created if missing.
pub fn meta_mut(obj: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    let map = obj.as_object_mut()?;
    map.entry("metadata")
        .or_insert_with(|| Value::Object(Default::default()))
        .as_object_mut()
}

/// A stored object as `def` serves it: converted from the stored shape when
/// `def` is another view of it (`events.k8s.io` Events are stored as core
/// Events), with `def`'s `apiVersion` and `kind`.
pub fn served(def: &ResourceDef, stored: Value) -> Value {
    let mut value = match def.conversion {
        Some(c) => (c.from_storage)(&stored),
        None => stored,
    };
    set_type(&mut value, def);
    value
}

/// An object as `def` serves it → the object to store (400 when it does
/// not convert; unchanged for resources stored as they are served).
pub fn to_stored(def: &ResourceDef, object: Value) -> Result<Value, super::ApiError> {
    if def.conversion.is_none() && def.custom.is_none() {
        return Ok(object);
    }
    def.to_storage(&object).map_err(super::errors::bad_request)
}

/// Sets `apiVersion` and `kind` of an object of `def`.
pub fn set_type(obj: &mut Value, def: &ResourceDef) {
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), def.api_version().into());
        m.insert("kind".into(), def.kind.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_and_suffixes_are_random_and_well_formed() {
        let a = new_uid();
        let b = new_uid();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes()[14], b'4');
        let s = name_suffix();
        assert_eq!(s.len(), 5);
        assert!(s.bytes().all(|c| ALPHANUMS.contains(&c)));
        assert_eq!(random_hex(32).expect("random").len(), 64);
    }

    #[test]
    fn manager_from_user_agent() {
        let mut h = HeaderMap::new();
        h.insert(
            USER_AGENT,
            "kubectl/v1.32.4 (linux/amd64)".parse().expect("ua"),
        );
        assert_eq!(field_manager(&Query::default(), &h), "kubectl");
        assert_eq!(
            field_manager(&Query::parse(Some("fieldManager=me")), &h),
            "me"
        );
    }
}
