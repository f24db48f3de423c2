//! On-disk encoding of stored objects and log events.
//!
//! Object record: revision (u64 LE) · attrs length (u32 LE) · attrs JSON · object JSON.
//! Event record: type byte (`A`/`M`/`D`) · key length (u32 LE) · key · object record.

use bytes::Bytes;

use super::{Attrs, Event, EventType, Key, StorageError, StoredObject};

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt(what.to_owned())
}

/// Encodes an object record.
pub fn encode_object(o: &StoredObject) -> Vec<u8> {
    let attrs = serde_json::to_vec(&o.attrs).unwrap_or_default();
    let mut out = Vec::with_capacity(12 + attrs.len() + o.json.len());
    out.extend_from_slice(&o.revision.to_le_bytes());
    out.extend_from_slice(&u32::try_from(attrs.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(&attrs);
    out.extend_from_slice(&o.json);
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
    let len = u32::from_le_bytes(
        bytes
            .get(8..12)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| corrupt("attrs length"))?,
    );
    let end = 12 + usize::try_from(len).map_err(|_| corrupt("attrs length"))?;
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

/// Encodes a log event.
pub fn encode_event(e: &Event) -> Vec<u8> {
    let kind = match e.event_type {
        EventType::Added => b'A',
        EventType::Modified => b'M',
        EventType::Deleted => b'D',
    };
    let key = e.object.key.as_str().as_bytes();
    let mut out = vec![kind];
    out.extend_from_slice(&u32::try_from(key.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&encode_object(&e.object));
    out
}

/// Decodes a log event.
pub fn decode_event(bytes: &[u8]) -> Result<Event, StorageError> {
    let event_type = match bytes.first() {
        Some(b'A') => EventType::Added,
        Some(b'M') => EventType::Modified,
        Some(b'D') => EventType::Deleted,
        _ => return Err(corrupt("event type")),
    };
    let len = u32::from_le_bytes(
        bytes
            .get(1..5)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| corrupt("key length"))?,
    );
    let end = 5 + usize::try_from(len).map_err(|_| corrupt("key length"))?;
    let key = std::str::from_utf8(bytes.get(5..end).ok_or_else(|| corrupt("key"))?)
        .map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let object = decode_object(
        Key::from_stored(key),
        bytes.get(end..).ok_or_else(|| corrupt("object"))?,
    )?;
    Ok(Event {
        event_type,
        object: std::sync::Arc::new(object),
    })
}
