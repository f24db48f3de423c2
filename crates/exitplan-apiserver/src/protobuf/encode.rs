//! JSON → protobuf, one message at a time from the [`schema`] table.
//! A field is written when its JSON key is present and not `null` (so a
//! Go pointer set to zero stays set); fields in number order, map entries
//! by key, as gogo-protobuf writes them.

use serde_json::{Map, Value};

use super::EncodeError;
use super::schema::{self, Field, Message, Type, special};
use super::wire::Writer;

/// What to do with a JSON field that has no field number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Fail (the caller answers JSON instead).
    Strict,
    /// Leave it out.
    Lenient,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Whether `key` is a JSON field of `message` (directly or through an
/// inlined struct).
fn claims(message: &Message, key: &str) -> bool {
    message.fields.iter().any(|f| match f.json {
        Some(j) => j == key,
        None => f
            .message
            .and_then(schema::message)
            .is_some_and(|m| claims(m, key)),
    })
}

/// Writes `object` as message `name` into `w`.
pub fn message(
    w: &mut Writer,
    name: &str,
    msg: &Message,
    object: &Map<String, Value>,
    path: &str,
    mode: Mode,
) -> Result<(), EncodeError> {
    if mode == Mode::Strict {
        for key in object.keys() {
            // apiVersion/kind (TypeMeta) live in the envelope.
            let type_meta = matches!(key.as_str(), "apiVersion" | "kind");
            let allowed = type_meta && is_object(name);
            if !allowed && !claims(msg, key) {
                return Err(EncodeError::UnknownField(join(path, key)));
            }
        }
    }
    for f in &msg.fields {
        let Some(key) = f.json else {
            // An inlined struct: its fields are this object's.
            let nested = f.message.and_then(schema::message);
            if let (Some(mname), Some(m)) = (f.message, nested) {
                // Unknown keys were checked against this object, which claims
                // the inlined struct's fields.
                w.message(f.number, |w| {
                    message(w, mname, m, object, path, Mode::Lenient)
                })?;
            }
            continue;
        };
        let Some(value) = object.get(key).filter(|v| !v.is_null()) else {
            continue;
        };
        let path = join(path, key);
        field(w, f, value, &path, mode)?;
    }
    Ok(())
}

/// Every message that is a whole object has `metadata` (lists, objects)
/// or is a `meta.k8s.io` kind; TypeMeta is allowed on those.
fn is_object(name: &str) -> bool {
    schema::message(name).is_some_and(|m| m.fields.iter().any(|f| f.json == Some("metadata")))
        || name.starts_with("k8s.io.apimachinery.pkg.apis.meta.v1.")
}

fn field(
    w: &mut Writer,
    f: &Field,
    value: &Value,
    path: &str,
    mode: Mode,
) -> Result<(), EncodeError> {
    let mismatch = || EncodeError::Type(path.to_owned());
    match f.ty {
        Type::MapString | Type::MapBytes | Type::MapMessage => {
            let map = value.as_object().ok_or_else(mismatch)?;
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for k in keys {
                let v = &map[k];
                let path = format!("{path}[{k}]");
                w.message(f.number, |e| {
                    e.bytes(1, k.as_bytes());
                    match f.ty {
                        Type::MapString => {
                            e.bytes(
                                2,
                                v.as_str()
                                    .ok_or_else(|| EncodeError::Type(path.clone()))?
                                    .as_bytes(),
                            );
                        }
                        Type::MapBytes => e.bytes(2, &base64_bytes(v, &path)?),
                        _ => {
                            if !v.is_null() {
                                one(e, 2, Type::Message, f.message, v, &path, mode)?;
                            }
                        }
                    }
                    Ok(())
                })?;
            }
            Ok(())
        }
        _ if f.repeated => {
            let items = value.as_array().ok_or_else(mismatch)?;
            for (i, item) in items.iter().enumerate() {
                one(
                    w,
                    f.number,
                    f.ty,
                    f.message,
                    item,
                    &format!("{path}[{i}]"),
                    mode,
                )?;
            }
            Ok(())
        }
        _ => one(w, f.number, f.ty, f.message, value, path, mode),
    }
}

fn int(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e18)
            // Integral and in range: the cast is exact.
            .map(|f| f as i64)
    })
}

fn base64_bytes(value: &Value, path: &str) -> Result<Vec<u8>, EncodeError> {
    serde_json::from_value::<k8s_openapi::ByteString>(value.clone())
        .map(|b| b.0)
        .map_err(|_| EncodeError::Type(path.to_owned()))
}

/// One value of a field (an element, for repeated fields).
fn one(
    w: &mut Writer,
    number: u32,
    ty: Type,
    message_name: Option<&str>,
    value: &Value,
    path: &str,
    mode: Mode,
) -> Result<(), EncodeError> {
    let mismatch = || EncodeError::Type(path.to_owned());
    match ty {
        Type::String => w.bytes(number, value.as_str().ok_or_else(mismatch)?.as_bytes()),
        Type::Int32 => {
            let v = i32::try_from(int(value).ok_or_else(mismatch)?).map_err(|_| mismatch())?;
            // int32 is written sign-extended to 64 bits.
            w.varint_field(number, i64::from(v) as u64);
        }
        Type::Int64 => w.varint_field(number, int(value).ok_or_else(mismatch)? as u64),
        Type::Bool => w.varint_field(number, u64::from(value.as_bool().ok_or_else(mismatch)?)),
        Type::Double => w.double(number, value.as_f64().ok_or_else(mismatch)?),
        Type::Bytes => w.bytes(number, &base64_bytes(value, path)?),
        Type::Message => {
            let name = message_name.ok_or_else(mismatch)?;
            w.message(number, |w| special_or_message(w, name, value, path, mode))?;
        }
        Type::MapString | Type::MapBytes | Type::MapMessage => return Err(mismatch()),
    }
    Ok(())
}

fn special_or_message(
    w: &mut Writer,
    name: &str,
    value: &Value,
    path: &str,
    mode: Mode,
) -> Result<(), EncodeError> {
    let mismatch = || EncodeError::Type(path.to_owned());
    match name {
        special::TIME | special::MICRO_TIME => {
            let s = value.as_str().ok_or_else(mismatch)?;
            let t: jiff::Timestamp = s.parse().map_err(|_| mismatch())?;
            // Both written, as metav1.Timestamp's generated code does.
            w.varint_field(1, t.as_second() as u64);
            w.varint_field(2, i64::from(t.subsec_nanosecond()) as u64);
        }
        special::QUANTITY => {
            let s = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return Err(mismatch()),
            };
            w.bytes(1, s.as_bytes());
        }
        special::INT_OR_STRING => match value {
            Value::String(s) => {
                w.varint_field(1, 1);
                w.varint_field(2, 0);
                w.bytes(3, s.as_bytes());
            }
            v => {
                let n = i32::try_from(int(v).ok_or_else(mismatch)?).map_err(|_| mismatch())?;
                w.varint_field(1, 0);
                w.varint_field(2, i64::from(n) as u64);
                w.bytes(3, b"");
            }
        },
        special::RAW_EXTENSION | special::FIELDS_V1 => {
            let raw = serde_json::to_vec(value).map_err(|_| mismatch())?;
            w.bytes(1, &raw);
        }
        _ => {
            let m = schema::message(name).ok_or_else(mismatch)?;
            let object = value.as_object().ok_or_else(mismatch)?;
            message(w, name, m, object, path, mode)?;
        }
    }
    Ok(())
}
