//! Protobuf → JSON, one message at a time from the [`schema`] table.
//! gogo-protobuf writes every non-pointer field, zero or not; Go's JSON
//! leaves the zero of an `omitempty` field out, so decoding does too
//! (keeping it for required fields and the Go pointers the table marks).

use serde_json::{Map, Value};

use super::schema::{self, Field, Message, Type, special};
use super::wire::{FIXED64, LEN, Reader, VARINT, Wire};
use super::{DecodeError, WireError};

/// `time.Time{}.Unix()`: how gogo's older encoders wrote a zero time.
const ZERO_TIME_SECONDS: i64 = -62_135_596_800;

fn wire_type(w: &Wire<'_>) -> u8 {
    match w {
        Wire::Varint(_) => VARINT,
        Wire::Fixed64(_) => FIXED64,
        Wire::Bytes(_) => LEN,
        Wire::Fixed32(_) => super::wire::FIXED32,
    }
}

/// Decodes `bytes` as message `msg` into a JSON object.
pub fn message(msg: &Message, bytes: &[u8]) -> Result<Map<String, Value>, DecodeError> {
    let mut out = Map::new();
    let mut r = Reader::new(bytes);
    while let Some((number, value)) = r.field().map_err(DecodeError::Object)? {
        let Some(f) = msg.by_number(number) else {
            // Unknown fields are skipped, as gogo-protobuf skips them.
            continue;
        };
        field(&mut out, f, value)?;
    }
    Ok(out)
}

fn wrong(f: &Field, w: &Wire<'_>) -> DecodeError {
    DecodeError::Object(WireError::WrongWireType(
        wire_type(w),
        f.json.unwrap_or("inline"),
    ))
}

fn field(out: &mut Map<String, Value>, f: &Field, w: Wire<'_>) -> Result<(), DecodeError> {
    let Some(key) = f.json else {
        // An inlined struct: its fields join this object.
        let Wire::Bytes(b) = w else {
            return Err(wrong(f, &w));
        };
        let Some(m) = f.message.and_then(schema::message) else {
            return Ok(());
        };
        let mut nested = message(m, b)?;
        out.append(&mut nested);
        return Ok(());
    };
    match f.ty {
        Type::MapString | Type::MapBytes | Type::MapMessage => {
            let Wire::Bytes(b) = w else {
                return Err(wrong(f, &w));
            };
            let (k, v) = map_entry(f, b)?;
            let map = out.entry(key).or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(m) = map {
                m.insert(k, v);
            }
        }
        _ if f.repeated => {
            let items = out.entry(key).or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(items) = items else {
                return Ok(());
            };
            match (f.ty, w) {
                // A packed run of scalars.
                (Type::Int32 | Type::Int64 | Type::Bool, Wire::Bytes(b)) => {
                    let mut r = Reader::new(b);
                    while !r.is_empty() {
                        let v = r.varint().map_err(DecodeError::Object)?;
                        items.push(scalar(f, Wire::Varint(v))?);
                    }
                }
                _ => items.push(one(f, w)?),
            }
        }
        _ => {
            let v = one(f, w)?;
            if f.keep_zero || !is_zero(&v) || f.ty == Type::Message {
                out.insert(key.to_owned(), v);
            } else {
                out.remove(key);
            }
        }
    }
    Ok(())
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Null => true,
        _ => false,
    }
}

fn map_entry(f: &Field, b: &[u8]) -> Result<(String, Value), DecodeError> {
    let mut key = String::new();
    let mut value = match f.ty {
        Type::MapMessage => Value::Null,
        Type::MapBytes => Value::String(String::new()),
        _ => Value::String(String::new()),
    };
    let mut r = Reader::new(b);
    while let Some((n, w)) = r.field().map_err(DecodeError::Object)? {
        match (n, w) {
            (1, Wire::Bytes(k)) => key = String::from_utf8_lossy(k).into_owned(),
            (2, Wire::Bytes(v)) => {
                value = match f.ty {
                    Type::MapString => Value::String(String::from_utf8_lossy(v).into_owned()),
                    Type::MapBytes => base64(v),
                    _ => message_value(f.message.unwrap_or_default(), v)?,
                };
            }
            (1 | 2, w) => return Err(wrong(f, &w)),
            _ => {}
        }
    }
    if value.is_null()
        && let Some(name) = f.message
    {
        value = message_value(name, &[])?;
    }
    Ok((key, value))
}

fn base64(bytes: &[u8]) -> Value {
    Value::String(crate::kubeconfig::base64(bytes))
}

/// One value of a field (an element, for repeated fields).
fn one(f: &Field, w: Wire<'_>) -> Result<Value, DecodeError> {
    match f.ty {
        Type::Message => {
            let Wire::Bytes(b) = w else {
                return Err(wrong(f, &w));
            };
            message_value(f.message.unwrap_or_default(), b)
        }
        _ => scalar(f, w),
    }
}

fn scalar(f: &Field, w: Wire<'_>) -> Result<Value, DecodeError> {
    Ok(match (f.ty, w) {
        (Type::String, Wire::Bytes(b)) => Value::String(String::from_utf8_lossy(b).into_owned()),
        (Type::Bytes, Wire::Bytes(b)) => base64(b),
        // Truncation to 32 bits is how int32 is read.
        (Type::Int32, Wire::Varint(v)) => Value::from(v as i32),
        (Type::Int64, Wire::Varint(v)) => Value::from(v as i64),
        (Type::Bool, Wire::Varint(v)) => Value::Bool(v != 0),
        (Type::Double, Wire::Fixed64(v)) => {
            serde_json::Number::from_f64(f64::from_bits(v)).map_or(Value::Null, Value::Number)
        }
        (_, w) => return Err(wrong(f, &w)),
    })
}

/// A message's JSON value: the special forms, or an object.
fn message_value(name: &str, b: &[u8]) -> Result<Value, DecodeError> {
    let fields = || -> Result<Vec<(u32, Wire<'_>)>, DecodeError> {
        let mut r = Reader::new(b);
        let mut out = Vec::new();
        while let Some(f) = r.field().map_err(DecodeError::Object)? {
            out.push(f);
        }
        Ok(out)
    };
    let varint = |fs: &[(u32, Wire<'_>)], n: u32| {
        fs.iter().rev().find_map(|(k, w)| match w {
            Wire::Varint(v) if *k == n => Some(*v),
            _ => None,
        })
    };
    let bytes = |fs: &[(u32, Wire<'_>)], n: u32| -> Option<Vec<u8>> {
        fs.iter().rev().find_map(|(k, w)| match w {
            Wire::Bytes(v) if *k == n => Some(v.to_vec()),
            _ => None,
        })
    };
    Ok(match name {
        special::TIME | special::MICRO_TIME => {
            let fs = fields()?;
            let seconds = varint(&fs, 1).unwrap_or(0) as i64;
            let nanos = varint(&fs, 2).unwrap_or(0) as i32;
            if nanos == 0 && (seconds == 0 || seconds == ZERO_TIME_SECONDS) {
                return Ok(Value::Null);
            }
            let t = jiff::Timestamp::new(seconds, if name == special::TIME { 0 } else { nanos })
                .map_err(|_| DecodeError::Object(WireError::Overflow))?;
            let format = if name == special::TIME {
                "%Y-%m-%dT%H:%M:%SZ"
            } else {
                "%Y-%m-%dT%H:%M:%S.%6fZ"
            };
            Value::String(t.strftime(format).to_string())
        }
        special::QUANTITY => {
            let fs = fields()?;
            let s = bytes(&fs, 1).unwrap_or_default();
            let s = String::from_utf8_lossy(&s).into_owned();
            Value::String(if s.is_empty() { "0".to_owned() } else { s })
        }
        special::INT_OR_STRING => {
            let fs = fields()?;
            if varint(&fs, 1) == Some(1) {
                let s = bytes(&fs, 3).unwrap_or_default();
                Value::String(String::from_utf8_lossy(&s).into_owned())
            } else {
                Value::from(varint(&fs, 2).unwrap_or(0) as i32)
            }
        }
        special::RAW_EXTENSION | special::FIELDS_V1 => {
            let fs = fields()?;
            match bytes(&fs, 1) {
                Some(raw) if !raw.is_empty() => serde_json::from_slice(&raw)
                    .map_err(|e| DecodeError::EmbeddedJson(e.to_string()))?,
                _ => Value::Null,
            }
        }
        _ => match schema::message(name) {
            Some(m) => Value::Object(message(m, b)?),
            None => Value::Object(Map::new()),
        },
    })
}
