//! Apply bodies: YAML (JSON is YAML) decoded with `serde-saphyr`, the
//! project's YAML crate.

use serde_json::Value;

/// Decodes one YAML document; an empty document is `null`.
pub fn parse(bytes: &[u8]) -> Result<Value, String> {
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
