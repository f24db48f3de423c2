//! Kubernetes' protobuf serialization (`application/vnd.kubernetes.protobuf`,
//! apimachinery's `runtime/serializer/protobuf`), transcoded to and from
//! the JSON the server stores, driven by one table of upstream's
//! `generated.proto` messages ([`schema`]) — no code per kind.
//!
//! ```text
//!  body:  "k8s\0" + runtime.Unknown{typeMeta{apiVersion, kind}, raw: <object>}
//!  watch: 4-byte big-endian length + metav1.WatchEvent{type,
//!           object: RawExtension{raw: "k8s\0" + Unknown{…}}}   (stream=watch)
//! ```
//!
//! * [`wire`] — the wire format; [`schema`] — the message table;
//!   [`encode`] — JSON → protobuf; [`decode`] — protobuf → JSON.
//! * JSON forms of the special messages: `Time`/`MicroTime` (RFC 3339),
//!   `Quantity` (string), `IntOrString`, `RawExtension`/`FieldsV1`
//!   (embedded JSON), `bytes` (base64), maps (entry messages).
//! * A JSON field without a field number (exitplan's own fields) cannot
//!   be encoded: [`encode_object`] fails and the caller answers JSON.
//! * Decoding drops zero scalars of `omitempty` fields, as Go's JSON
//!   would (gogo writes every non-pointer field), and keeps the zero of
//!   required fields and of the Go pointers the table marks.

pub mod decode;
pub mod encode;
pub mod schema;
pub mod wire;

use serde_json::Value;

/// The protobuf media type.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
/// The media type of a protobuf watch stream.
pub const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";
/// The prefix of every protobuf-encoded object.
pub const MAGIC: &[u8] = b"k8s\0";

const UNKNOWN_TYPE_META: u32 = 1;
const UNKNOWN_RAW: u32 = 2;
const TYPE_META_API_VERSION: u32 = 1;
const TYPE_META_KIND: u32 = 2;

/// A malformed protobuf message (gogo-protobuf's error texts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The message ends inside a field.
    #[error("unexpected EOF")]
    UnexpectedEof,
    /// A varint longer than 64 bits.
    #[error("proto: integer overflow")]
    Overflow,
    /// A length that does not fit.
    #[error("proto: negative length found during unmarshaling")]
    NegativeLength,
    /// Field number 0.
    #[error("proto: illegal tag 0 (wire type 0)")]
    IllegalTag,
    /// Wire types 3, 4, 6, 7 (groups are not used by Kubernetes).
    #[error("proto: illegal wireType {0}")]
    IllegalWireType(u8),
    /// A field whose wire type is not its declared type's.
    #[error("proto: wrong wireType = {0} for field {1}")]
    WrongWireType(u8, &'static str),
}

/// Why a protobuf body does not decode, worded as apimachinery's
/// serializer words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// No bytes at all.
    #[error("empty data")]
    Empty,
    /// Not `k8s\0`-prefixed.
    #[error(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )]
    NoPrefix,
    /// Only the prefix.
    #[error("empty body")]
    EmptyBody,
    /// The `runtime.Unknown` envelope is malformed.
    #[error("{0}")]
    Envelope(WireError),
    /// The envelope names a kind this server has no message for.
    #[error(
        "no kind {kind:?} is registered for version {api_version:?} in scheme \"pkg/api/legacyscheme/scheme.go:30\""
    )]
    NotRegistered {
        /// `typeMeta.apiVersion`.
        api_version: String,
        /// `typeMeta.kind`.
        kind: String,
    },
    /// The object inside the envelope is malformed.
    #[error("{0}")]
    Object(WireError),
    /// Embedded JSON (`RawExtension`, `FieldsV1`) that is not JSON.
    #[error("invalid embedded JSON: {0}")]
    EmbeddedJson(String),
}

/// Why a JSON object has no protobuf form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// No message for the object's `apiVersion`/`kind`.
    #[error("no protobuf message for {api_version} {kind}")]
    NoMessage {
        /// The object's `apiVersion`.
        api_version: String,
        /// The object's `kind`.
        kind: String,
    },
    /// A JSON field with no field number.
    #[error("{0}: field has no protobuf number")]
    UnknownField(String),
    /// A JSON value of the wrong type for its field.
    #[error("{0}: value does not fit the field's type")]
    Type(String),
}

/// The `apiVersion` and `kind` an envelope carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeMeta {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
}

/// Decodes a `k8s\0`-prefixed object to its JSON form (with `apiVersion`
/// and `kind`); an envelope without them takes `default`'s, as the
/// serializer's `copyKindDefaults` does.
pub fn decode_object(body: &[u8], default: &TypeMeta) -> Result<(TypeMeta, Value), DecodeError> {
    if body.is_empty() {
        return Err(DecodeError::Empty);
    }
    let unknown = body.strip_prefix(MAGIC).ok_or(DecodeError::NoPrefix)?;
    if unknown.is_empty() {
        return Err(DecodeError::EmptyBody);
    }
    let (mut tm, raw) = envelope(unknown).map_err(DecodeError::Envelope)?;
    if tm.api_version.is_empty() {
        tm.api_version.clone_from(&default.api_version);
    }
    if tm.kind.is_empty() {
        tm.kind.clone_from(&default.kind);
    }
    let (_, message) = schema::message_for(&tm.api_version, &tm.kind).ok_or_else(|| {
        DecodeError::NotRegistered {
            api_version: tm.api_version.clone(),
            kind: tm.kind.clone(),
        }
    })?;
    let mut object = decode::message(message, raw)?;
    let mut typed = serde_json::Map::new();
    typed.insert("apiVersion".into(), tm.api_version.clone().into());
    typed.insert("kind".into(), tm.kind.clone().into());
    typed.append(&mut object);
    Ok((tm, Value::Object(typed)))
}

fn envelope(unknown: &[u8]) -> Result<(TypeMeta, &[u8]), WireError> {
    let mut tm = TypeMeta::default();
    let mut raw: &[u8] = &[];
    let mut r = wire::Reader::new(unknown);
    while let Some((n, v)) = r.field()? {
        match (n, v) {
            (UNKNOWN_TYPE_META, wire::Wire::Bytes(b)) => {
                let mut r = wire::Reader::new(b);
                while let Some((n, v)) = r.field()? {
                    match (n, v) {
                        (TYPE_META_API_VERSION, wire::Wire::Bytes(s)) => {
                            tm.api_version = String::from_utf8_lossy(s).into_owned();
                        }
                        (TYPE_META_KIND, wire::Wire::Bytes(s)) => {
                            tm.kind = String::from_utf8_lossy(s).into_owned();
                        }
                        _ => {}
                    }
                }
            }
            (UNKNOWN_RAW, wire::Wire::Bytes(b)) => raw = b,
            _ => {}
        }
    }
    Ok((tm, raw))
}

/// Encodes a JSON object (its `apiVersion` and `kind` pick the message)
/// as `k8s\0` + `runtime.Unknown`. Fails for a field with no number, so
/// the caller can answer JSON instead.
pub fn encode_object(object: &Value) -> Result<Vec<u8>, EncodeError> {
    encode_object_with(object, encode::Mode::Strict)
}

fn encode_object_with(object: &Value, mode: encode::Mode) -> Result<Vec<u8>, EncodeError> {
    let field = |k: &str| object.get(k).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    let no_message = || EncodeError::NoMessage {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
    };
    let (name, message) = schema::message_for(api_version, kind).ok_or_else(no_message)?;
    let map = object.as_object().ok_or_else(no_message)?;
    let mut raw = wire::Writer::default();
    encode::message(&mut raw, name, message, map, "", mode)?;
    let mut out = wire::Writer {
        buf: MAGIC.to_vec(),
    };
    let mut tm = wire::Writer::default();
    tm.bytes(TYPE_META_API_VERSION, api_version.as_bytes());
    tm.bytes(TYPE_META_KIND, kind.as_bytes());
    out.bytes(UNKNOWN_TYPE_META, &tm.buf);
    out.bytes(UNKNOWN_RAW, &raw.buf);
    // contentEncoding and contentType: empty, written as gogo writes them.
    out.bytes(3, b"");
    out.bytes(4, b"");
    Ok(out.buf)
}

/// One frame of a protobuf watch: the 4-byte big-endian length, then
/// `metav1.WatchEvent{type, object: RawExtension{raw: <object as
/// encode_object writes it>}}`. Fields with no number are left out (a
/// stream cannot change format halfway).
pub fn encode_watch_event(event_type: &str, object: &Value) -> Result<Vec<u8>, EncodeError> {
    let raw = encode_object_with(object, encode::Mode::Lenient)?;
    let mut ext = wire::Writer::default();
    ext.bytes(1, &raw);
    let mut event = wire::Writer::default();
    event.bytes(1, event_type.as_bytes());
    event.bytes(2, &ext.buf);
    let len = u32::try_from(event.buf.len()).map_err(|_| EncodeError::Type("frame".into()))?;
    let mut out = Vec::with_capacity(event.buf.len() + 4);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&event.buf);
    Ok(out)
}

#[cfg(test)]
mod tests;
