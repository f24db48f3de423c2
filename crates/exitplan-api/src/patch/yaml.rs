//! Apply bodies: YAML (JSON is YAML) decoded with `serde-saphyr`, the
//! project's YAML crate.
//!
//! Clients (kube-rs, client-go) send apply bodies as JSON, and a YAML parse
//! of JSON costs several times a JSON parse; so a body that is plain JSON
//! whose YAML reading cannot differ from its JSON reading is parsed as JSON
//! ([`parse_plain_json`]), and everything else by the YAML parser.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Decodes one YAML document; an empty document is `null`.
pub fn parse(bytes: &[u8]) -> Result<Value, String> {
    if let Some(v) = parse_plain_json(bytes) {
        return Ok(v);
    }
    parse_yaml(bytes)
}

/// The YAML parser's reading of `bytes`.
fn parse_yaml(bytes: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_saphyr::from_str::<Value>(text).map_err(|e| {
        e.to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// `bytes` as JSON, when they are JSON that any YAML 1.2 parser reads as
/// the same value: an object, ASCII only (no characters YAML treats
/// specially), no `\u` surrogate escapes, no floating-point numbers (whose
/// rounding or `-0` may differ), no duplicate keys and no `<<` (merge) key.
/// `None` sends the body to the YAML parser, whose reading (or error) is
/// then the answer.
pub(super) fn parse_plain_json(bytes: &[u8]) -> Option<Value> {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    if bytes.get(start) != Some(&b'{') || !bytes.is_ascii() {
        return None;
    }
    let surrogate = bytes
        .windows(3)
        .any(|w| w[0] == b'\\' && w[1] == b'u' && matches!(w[2], b'd' | b'D'));
    if surrogate {
        return None;
    }
    serde_json::from_slice::<Plain>(bytes).ok().map(|p| p.0)
}

/// A JSON value read by [`parse_plain_json`]'s rules.
struct Plain(Value);

impl<'de> Deserialize<'de> for Plain {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PlainVisitor).map(Plain)
    }
}

struct PlainVisitor;

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("plain JSON")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Value, E> {
        Err(E::custom("floating-point number"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Plain(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "<<" {
                return Err(de::Error::custom("merge key"));
            }
            let Plain(v) = map.next_value()?;
            if out.insert(key, v).is_some() {
                return Err(de::Error::custom("duplicate key"));
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn json_bodies_take_the_fast_path_only_when_yaml_agrees() {
        let plain = br#" {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"\n\t\"x\u00e9"}},"spec":{"n":-3,"big":18446744073709551615,"l":[true,null,{}]}}"#;
        let fast = parse_plain_json(plain).expect("plain JSON");
        assert_eq!(Ok(fast), parse_yaml(plain));
        for not_plain in [
            &br#"{"a": 1.5}"#[..],
            br#"{"a": -0}"#,
            br#"{"a": 1e3}"#,
            br#"{"a": 1, "a": 2}"#,
            br#"{"<<": {"a": 1}}"#,
            "{\"a\": \"\u{e9}\"}".as_bytes(),
            br#"{"a": "\ud83d\ude00"}"#,
            br#"[1]"#,
            b"a: 1",
            br#"{"a": 1} # comment"#,
            b"",
        ] {
            assert_eq!(
                parse_plain_json(not_plain),
                None,
                "{}",
                String::from_utf8_lossy(not_plain)
            );
        }
    }

    fn plain_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            "[ -~]{0,8}".prop_map(Value::String),
            "[a-z\\\\\"/\n\t\u{0}-\u{1f}]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map("[ -~]{0,6}", inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever the fast path accepts, the YAML parser reads the same.
        #[test]
        fn the_fast_path_agrees_with_the_yaml_parser(
            fields in prop::collection::btree_map("[ -~]{0,6}", plain_value(), 0..6),
            pretty in any::<bool>(),
        ) {
            let value = Value::Object(fields.into_iter().collect());
            let bytes = if pretty {
                serde_json::to_vec_pretty(&value)
            } else {
                serde_json::to_vec(&value)
            }.expect("encode");
            if let Some(fast) = parse_plain_json(&bytes) {
                prop_assert_eq!(Ok(fast), parse_yaml(&bytes));
            }
        }
    }
}
