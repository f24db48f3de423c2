//! On-disk encoding of stored objects and log records.
//!
//! Object record: revision (u64 LE) · attrs length (u32 LE) · attrs JSON · object JSON.
//! Log record: type byte (`A`/`M`/`D`) · key length (u32 LE) · key ·
//! object record length (u32 LE) · object record · [object record of the
//! version the change replaced — present for `M` and `D`].

use std::sync::Arc;

use bytes::Bytes;

use super::{Attrs, Event, EventType, Key, Record, StorageError, StoredObject};

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt(what.to_owned())
}

fn u32_at(bytes: &[u8], at: usize, what: &str) -> Result<usize, StorageError> {
    let raw = bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| corrupt(what))?;
    usize::try_from(u32::from_le_bytes(raw)).map_err(|_| corrupt(what))
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    out.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_le_bytes());
}

/// Appends an object record.
fn put_object(out: &mut Vec<u8>, o: &StoredObject) {
    // Maps of strings always serialize.
    let attrs = serde_json::to_vec(&o.attrs).unwrap_or_default();
    out.reserve(12 + attrs.len() + o.json.len());
    out.extend_from_slice(&o.revision.to_le_bytes());
    put_len(out, attrs.len());
    out.extend_from_slice(&attrs);
    out.extend_from_slice(&o.json);
}

/// Encodes an object record.
pub fn encode_object(o: &StoredObject) -> Vec<u8> {
    let mut out = Vec::new();
    put_object(&mut out, o);
    out
}

/// Decodes an object record stored under `key`.
pub fn decode_object(key: Key, bytes: &[u8]) -> Result<StoredObject, StorageError> {
    let revision = u64::from_le_bytes(
        bytes
            .get(0..8)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| corrupt("revision"))?,
    );
    let end = 12 + u32_at(bytes, 8, "attrs length")?;
    let attrs: Attrs = serde_json::from_slice(bytes.get(12..end).ok_or_else(|| corrupt("attrs"))?)
        .map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let json = Bytes::copy_from_slice(bytes.get(end..).ok_or_else(|| corrupt("object"))?);
    Ok(StoredObject {
        key,
        revision,
        json,
        attrs,
    })
}

/// Encodes a log record.
pub fn encode_record(r: &Record) -> Vec<u8> {
    let kind = match r.event.event_type {
        EventType::Added => b'A',
        EventType::Modified => b'M',
        EventType::Deleted => b'D',
    };
    let key = r.key().as_str().as_bytes();
    let mut out = vec![kind];
    put_len(&mut out, key.len());
    out.extend_from_slice(key);
    let object = encode_object(&r.event.object);
    put_len(&mut out, object.len());
    out.extend_from_slice(&object);
    if let Some(prev) = &r.prev {
        put_object(&mut out, prev);
    }
    out
}

/// The parts of a log record.
struct Parts<'a> {
    event_type: EventType,
    key: &'a str,
    /// The object record.
    object: &'a [u8],
    /// The previous version's object record (empty for a creation).
    prev: &'a [u8],
}

fn split(bytes: &[u8]) -> Result<Parts<'_>, StorageError> {
    let event_type = match bytes.first() {
        Some(b'A') => EventType::Added,
        Some(b'M') => EventType::Modified,
        Some(b'D') => EventType::Deleted,
        _ => return Err(corrupt("event type")),
    };
    let key_end = 5 + u32_at(bytes, 1, "key length")?;
    let key = std::str::from_utf8(bytes.get(5..key_end).ok_or_else(|| corrupt("key"))?)
        .map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let object_end = key_end + 4 + u32_at(bytes, key_end, "object length")?;
    let object = bytes
        .get(key_end + 4..object_end)
        .ok_or_else(|| corrupt("object"))?;
    let prev = bytes.get(object_end..).ok_or_else(|| corrupt("previous"))?;
    Ok(Parts {
        event_type,
        key,
        object,
        prev,
    })
}

/// The key a log record is about, without decoding the rest.
pub fn event_key(bytes: &[u8]) -> Result<&str, StorageError> {
    split(bytes).map(|p| p.key)
}

/// Decodes a log record's event.
pub fn decode_event(bytes: &[u8]) -> Result<Event, StorageError> {
    let parts = split(bytes)?;
    Ok(Event {
        event_type: parts.event_type,
        object: Arc::new(decode_object(Key::from_stored(parts.key), parts.object)?),
    })
}

/// Decodes what a log record says the object was before its change: its key
/// and previous version (`None` for a creation).
pub fn decode_before(bytes: &[u8]) -> Result<(Key, Option<Arc<StoredObject>>), StorageError> {
    let parts = split(bytes)?;
    let key = Key::from_stored(parts.key);
    let prev = match parts.event_type {
        EventType::Added => None,
        EventType::Modified | EventType::Deleted => {
            Some(Arc::new(decode_object(key.clone(), parts.prev)?))
        }
    };
    Ok((key, prev))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(key: &str, revision: u64, json: &str) -> Arc<StoredObject> {
        Arc::new(StoredObject {
            key: Key::from_stored(key),
            revision,
            json: Bytes::copy_from_slice(json.as_bytes()),
            attrs: Attrs {
                labels: [("app".to_owned(), "web".to_owned())].into(),
                fields: Default::default(),
            },
        })
    }

    #[test]
    fn records_round_trip_with_their_previous_version() {
        let prev = object("pods/ns/a", 3, r#"{"v":1}"#);
        let record = Record {
            event: Event {
                event_type: EventType::Modified,
                object: object("pods/ns/a", 7, r#"{"v":2}"#),
            },
            prev: Some(prev.clone()),
        };
        let bytes = encode_record(&record);
        assert_eq!(event_key(&bytes).expect("key"), "pods/ns/a");
        assert_eq!(decode_event(&bytes).expect("event"), record.event);
        let (key, before) = decode_before(&bytes).expect("before");
        assert_eq!((key.as_str(), before), ("pods/ns/a", Some(prev)));
    }

    #[test]
    fn a_creation_has_no_previous_version() {
        let record = Record {
            event: Event {
                event_type: EventType::Added,
                object: object("pods/ns/a", 1, "{}"),
            },
            prev: None,
        };
        let (_, before) = decode_before(&encode_record(&record)).expect("before");
        assert_eq!(before, None);
    }

    #[test]
    fn truncated_records_are_corrupt_not_panics() {
        let record = Record {
            event: Event {
                event_type: EventType::Deleted,
                object: object("pods/ns/a", 2, "{}"),
            },
            prev: Some(object("pods/ns/a", 1, "{}")),
        };
        let bytes = encode_record(&record);
        // Only the previous version's JSON (the last two bytes) has no length.
        for len in 0..bytes.len() - 2 {
            assert!(decode_before(&bytes[..len]).is_err(), "cut at {len}");
        }
    }
}
