//! A rule's `fieldPath`: a JSON path of field (`.name`) and map-key
//! (`['key']`) accessors that must resolve in the schema
//! (apiextensions `cel.ValidFieldPath`), normalized to a field-path string.

use crate::schema::Node;

/// The normalized path of `json_path` below `node` (`.spec['a.b']` →
/// `spec.a.b`, a map key → `[key]`), or why it is invalid.
pub(crate) fn valid_field_path(json_path: &str, node: &Node) -> Result<String, String> {
    let tokens = tokenize(json_path);
    let mut out = String::new();
    let mut node = node;
    let mut i = 0;
    let step = |name: &str, out: &mut String, node: &mut &Node| -> Result<(), String> {
        if !node.properties.is_empty() {
            let Some(child) = node.properties.get(name) else {
                return Err("does not refer to a valid field".to_owned());
            };
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(name);
            *node = child;
        } else if let Some(add) = &node.additional {
            out.push('[');
            out.push_str(name);
            out.push(']');
            *node = add;
        } else {
            return Err("does not refer to a valid field".to_owned());
        }
        Ok(())
    };
    while i < tokens.len() {
        match tokens[i].as_str() {
            "[" => {
                let Some(tok) = tokens.get(i + 1) else {
                    return Err("unexpected end of JSON path".to_owned());
                };
                if tok.len() < 2 || !tok.starts_with('\'') || !tok.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {tok}"));
                }
                let name = unescape_single_quote(&tok[1..tok.len() - 1])
                    .map_err(|e| format!("invalid string literal: {e}"))?;
                step(&name, &mut out, &mut node)?;
                match tokens.get(i + 2).map(String::as_str) {
                    None => return Err("unexpected end of JSON path".to_owned()),
                    Some("]") => {}
                    Some(t) => return Err(format!("expected ] but got {t}")),
                }
                i += 3;
            }
            "." => {
                let Some(tok) = tokens.get(i + 1) else {
                    return Err("unexpected end of JSON path".to_owned());
                };
                step(tok, &mut out, &mut node)?;
                i += 2;
            }
            t => return Err(format!("expected [ or . but got: {t}")),
        }
    }
    Ok(out)
}

/// Splits into `.`, `[`, `]` and the text between them; a single-quoted
/// string is one token.
fn tokenize(s: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let bytes = s.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        if bytes[start] == b'\'' {
            let mut end = start + 1;
            while end < bytes.len() && !(bytes[end] == b'\'' && bytes[end - 1] != b'\\') {
                end += 1;
            }
            let stop = (end + 1).min(bytes.len());
            tokens.push(String::from_utf8_lossy(&bytes[start..stop]).into_owned());
            start = stop;
            continue;
        }
        if matches!(bytes[start], b'.' | b'[' | b']') {
            tokens.push(String::from_utf8_lossy(&bytes[start..=start]).into_owned());
            start += 1;
            continue;
        }
        let mut end = start;
        while end < bytes.len() && !matches!(bytes[end], b'.' | b'[' | b']') {
            end += 1;
        }
        tokens.push(String::from_utf8_lossy(&bytes[start..end]).into_owned());
        start = end;
    }
    tokens
}

fn unescape_single_quote(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('v') => out.push('\u{b}'),
            Some('\'') => out.push('\''),
            Some('\\') => out.push('\\'),
            Some(other) => return Err(format!("invalid escape char \\{other}")),
            None => out.push('\\'),
        }
    }
    Ok(out)
}
