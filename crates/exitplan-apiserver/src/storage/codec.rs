//! On-disk encoding of log records (format 3).
//!
//! Every record starts with the CRC-32 (IEEE, u32 LE) of the rest, so damage
//! to a stored object (a flipped byte) is detected when it is read instead of
//! being served. Format 2 wrote the same records without the checksum; a
//! format-2 database is migrated once, when opened ([`migrate_v2`]).
//!
//! The rest — object record: revision (u64 LE) · attrs length (u32 LE) · attrs JSON · object JSON.
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

/// CRC-32 (IEEE 802.3, reflected, as zlib and Go's `crc32.ChecksumIEEE`).
fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    !bytes
        .iter()
        .fold(!0u32, |c, &b| TABLE[usize::from((c as u8) ^ b)] ^ (c >> 8))
}

/// The record without its checksum, if the checksum matches.
fn verified(bytes: &[u8]) -> Result<&[u8], StorageError> {
    let stored = bytes
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or_else(|| corrupt("checksum"))?;
    let body = &bytes[4..];
    if crc32(body) != stored {
        return Err(corrupt("checksum mismatch: the stored record was damaged"));
    }
    Ok(body)
}

fn with_checksum(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&crc32(body).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// A record's header read without checking its checksum: what a damaged
/// record most likely was (any part of it may be damaged, so callers
/// cross-check what they act on).
pub fn header_hint(bytes: &[u8]) -> Option<Header<'_>> {
    header_of(bytes.get(4..)?).ok()
}

/// Re-encodes a format-2 record (no checksum) as format 3. A record that
/// does not decode, or whose object is not JSON, keeps a checksum that does
/// not match, so it reads as damaged rather than as whole.
pub fn migrate_v2(old: &[u8]) -> Vec<u8> {
    let mut out = with_checksum(old);
    let whole = decode_body(old)
        .is_ok_and(|e| serde_json::from_slice::<serde::de::IgnoredAny>(&e.object.json).is_ok());
    if !whole {
        out[0] ^= 0xff;
    }
    out
}

/// Encodes a log record.
pub fn encode_record(r: &Record) -> Vec<u8> {
    let mut out = vec![0; 4];
    encode_body_into(r, &mut out);
    let crc = crc32(&out[4..]);
    out[..4].copy_from_slice(&crc.to_le_bytes());
    out
}

/// A record as format 2 wrote it (no checksum).
#[cfg(test)]
fn encode_body(r: &Record) -> Vec<u8> {
    let mut out = Vec::new();
    encode_body_into(r, &mut out);
    out
}

fn encode_body_into(r: &Record, out: &mut Vec<u8>) {
    let kind = match r.event.event_type {
        EventType::Added => b'A',
        EventType::Modified => b'M',
        EventType::Deleted => b'D',
    };
    let o = &r.event.object;
    let key = o.key.as_str().as_bytes();
    // Maps of strings always serialize.
    let attrs = serde_json::to_vec(&o.attrs).unwrap_or_default();
    out.reserve(1 + 4 + key.len() + 8 + 12 + attrs.len() + o.json.len());
    out.push(kind);
    put_len(out, key.len());
    out.extend_from_slice(key);
    out.extend_from_slice(&r.prev.as_ref().map_or(0, |p| p.revision).to_le_bytes());
    out.extend_from_slice(&o.revision.to_le_bytes());
    put_len(out, attrs.len());
    out.extend_from_slice(&attrs);
    out.extend_from_slice(&o.json);
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

/// Decodes a log record's header, checking the record's checksum.
pub fn header(bytes: &[u8]) -> Result<Header<'_>, StorageError> {
    header_of(verified(bytes)?)
}

fn header_of(bytes: &[u8]) -> Result<Header<'_>, StorageError> {
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

/// Decodes a log record's event, checking the record's checksum.
pub fn decode_event(bytes: &[u8]) -> Result<Event, StorageError> {
    decode_body(verified(bytes)?)
}

fn decode_body(bytes: &[u8]) -> Result<Event, StorageError> {
    let header = header_of(bytes)?;
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
    fn a_flipped_bit_anywhere_is_detected() {
        let bytes = encode_record(&record(
            EventType::Modified,
            object("pods/ns/a", 7, r#"{"v":2}"#),
            Some(3),
        ));
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut damaged = bytes.clone();
                damaged[at] ^= 1 << bit;
                assert!(header(&damaged).is_err(), "byte {at} bit {bit}");
                assert!(decode_event(&damaged).is_err(), "byte {at} bit {bit}");
            }
        }
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926, "the standard check value");
    }

    #[test]
    fn format_2_records_migrate_and_damaged_ones_stay_damaged() {
        let r = record(EventType::Added, object("pods/ns/a", 1, r#"{"v":1}"#), None);
        let old = encode_body(&r);
        assert_eq!(decode_event(&migrate_v2(&old)).expect("migrated"), r.event);
        let mut bad = old.clone();
        let last = bad.len() - 1;
        bad[last] = 0xff; // the object's JSON is no longer JSON
        let migrated = migrate_v2(&bad);
        assert!(decode_event(&migrated).is_err());
        assert_eq!(header_hint(&migrated).map(|h| h.key), Some("pods/ns/a"));
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
