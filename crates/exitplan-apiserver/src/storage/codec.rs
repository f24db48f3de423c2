//! On-disk encoding of log records (format 2).
//!
//! Object record: revision (u64 LE) · attrs length (u32 LE) · attrs JSON · object JSON.
//! Log record: type byte (`A`/`M`/`D`) · key length (u32 LE) · key ·
//! previous revision (u64 LE; the version the change replaced, 0 for `A`) ·
//! object record (for `D`: the last state, stamped with the deletion's revision).
//!
//! Each object version is stored once, in the log record that wrote it; the
//! `current` table maps keys to the revision of their live version.

use std::sync::Arc;

use bytes::Bytes;

use super::{Attrs, Event, EventType, Key, Record, StorageError, StoredObject};

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt(what.to_owned())
}

fn u64_at(bytes: &[u8], at: usize, what: &str) -> Result<u64, StorageError> {
    let raw = bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| corrupt(what))?;
    Ok(u64::from_le_bytes(raw))
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

/// Encodes a log record.
pub fn encode_record(r: &Record) -> Vec<u8> {
    let kind = match r.event.event_type {
        EventType::Added => b'A',
        EventType::Modified => b'M',
        EventType::Deleted => b'D',
    };
    let o = &r.event.object;
    let key = o.key.as_str().as_bytes();
    // Maps of strings always serialize.
    let attrs = serde_json::to_vec(&o.attrs).unwrap_or_default();
    let mut out = Vec::with_capacity(1 + 4 + key.len() + 8 + 12 + attrs.len() + o.json.len());
    out.push(kind);
    put_len(&mut out, key.len());
    out.extend_from_slice(key);
    out.extend_from_slice(&r.prev.as_ref().map_or(0, |p| p.revision).to_le_bytes());
    out.extend_from_slice(&o.revision.to_le_bytes());
    put_len(&mut out, attrs.len());
    out.extend_from_slice(&attrs);
    out.extend_from_slice(&o.json);
    out
}

/// What a log record says without its object: enough to filter by key and
/// to follow the chain of versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header<'a> {
    /// The kind of change.
    pub event_type: EventType,
    /// The key changed.
    pub key: &'a str,
    /// The revision of the version the change replaced (0: none).
    pub prev: u64,
    /// Where the object record starts.
    object_at: usize,
}

/// Decodes a log record's header.
pub fn header(bytes: &[u8]) -> Result<Header<'_>, StorageError> {
    let event_type = match bytes.first() {
        Some(b'A') => EventType::Added,
        Some(b'M') => EventType::Modified,
        Some(b'D') => EventType::Deleted,
        _ => return Err(corrupt("event type")),
    };
    let key_end = 5 + u32_at(bytes, 1, "key length")?;
    let key = std::str::from_utf8(bytes.get(5..key_end).ok_or_else(|| corrupt("key"))?)
        .map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let prev = u64_at(bytes, key_end, "previous revision")?;
    Ok(Header {
        event_type,
        key,
        prev,
        object_at: key_end + 8,
    })
}

/// Decodes a log record's event.
pub fn decode_event(bytes: &[u8]) -> Result<Event, StorageError> {
    let header = header(bytes)?;
    let record = bytes
        .get(header.object_at..)
        .ok_or_else(|| corrupt("object"))?;
    let revision = u64_at(record, 0, "revision")?;
    let attrs_end = 12 + u32_at(record, 8, "attrs length")?;
    let attrs: Attrs =
        serde_json::from_slice(record.get(12..attrs_end).ok_or_else(|| corrupt("attrs"))?)
            .map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let json = Bytes::copy_from_slice(record.get(attrs_end..).ok_or_else(|| corrupt("object"))?);
    Ok(Event {
        event_type: header.event_type,
        object: Arc::new(StoredObject {
            key: Key::from_stored(header.key),
            revision,
            json,
            attrs,
        }),
    })
}

/// Decodes the object version a log record wrote, checking it is one that
/// lives on (not a deletion) and is the one expected at `revision`.
pub fn decode_version(bytes: &[u8], revision: u64) -> Result<Arc<StoredObject>, StorageError> {
    let event = decode_event(bytes)?;
    if event.event_type == EventType::Deleted || event.object.revision != revision {
        return Err(StorageError::Corrupt(format!(
            "revision {revision} is not a stored version"
        )));
    }
    Ok(event.object)
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

    fn record(event_type: EventType, object: Arc<StoredObject>, prev: Option<u64>) -> Record {
        Record {
            event: Event { event_type, object },
            prev: prev.map(object_at),
        }
    }

    fn object_at(revision: u64) -> Arc<StoredObject> {
        object("pods/ns/a", revision, "{}")
    }

    #[test]
    fn records_round_trip_and_point_to_the_version_they_replaced() {
        let r = record(
            EventType::Modified,
            object("pods/ns/a", 7, r#"{"v":2}"#),
            Some(3),
        );
        let bytes = encode_record(&r);
        let h = header(&bytes).expect("header");
        assert_eq!(
            (h.event_type, h.key, h.prev),
            (EventType::Modified, "pods/ns/a", 3)
        );
        assert_eq!(decode_event(&bytes).expect("event"), r.event);
        assert_eq!(decode_version(&bytes, 7).expect("version"), r.event.object);
    }

    #[test]
    fn a_creation_replaces_nothing_and_a_deletion_is_no_version() {
        let added = encode_record(&record(EventType::Added, object_at(1), None));
        assert_eq!(header(&added).expect("header").prev, 0);
        let deleted = encode_record(&record(EventType::Deleted, object_at(2), Some(1)));
        assert!(decode_version(&deleted, 2).is_err());
        assert!(decode_version(&added, 5).is_err(), "wrong revision");
    }

    #[test]
    fn truncated_records_are_corrupt_not_panics() {
        let bytes = encode_record(&record(EventType::Deleted, object_at(2), Some(1)));
        // Only the object's JSON (the last two bytes) has no length.
        for len in 0..bytes.len() - 2 {
            assert!(decode_event(&bytes[..len]).is_err(), "cut at {len}");
        }
    }
}
