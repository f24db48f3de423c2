//! Go formatting that upstream error texts embed: `%v` of decoded JSON
//! (`map[a:1 b:[x y]]`), `%q` quoting and `strconv.Atoi`.

use serde_json::Value;
use std::fmt::Write;

/// `fmt.Sprintf("%v", v)` of a value decoded by `encoding/json` into
/// `interface{}` (maps print with sorted keys, `nil` as `<nil>`).
pub fn v(value: &Value) -> String {
    let mut out = String::new();
    write_v(&mut out, value);
    out
}

fn write_v(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => out.push_str(s),
        Value::Array(_) | Value::Object(_) => write_composite(out, value, write_v),
    }
}

/// Go's `[a b]` and `map[k:v]` forms, each element written by `elem` (the
/// verb's own formatting, which only differs for scalars).
fn write_composite(out: &mut String, value: &Value, elem: fn(&mut String, &Value)) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                elem(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push_str("map[");
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                elem(out, item);
            }
            out.push(']');
        }
        _ => elem(out, value),
    }
}

/// `fmt.Sprintf("%s", v)` of a value decoded into `interface{}`: strings
/// as they are, maps and slices element by element, anything else Go's
/// bad-verb form (`%!s(int64=1)`, `%!s(bool=true)`, `%!s(<nil>)`).
pub fn s(value: &Value) -> String {
    let mut out = String::new();
    write_s(&mut out, value);
    out
}

fn write_s(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("%!s(<nil>)"),
        Value::Bool(_) => {
            let _ = write!(out, "%!s(bool={})", v(value));
        }
        Value::Number(n) => {
            let ty = if n.is_f64() { "float64" } else { "int64" };
            let _ = write!(out, "%!s({ty}={})", number(n));
        }
        Value::String(s) => out.push_str(s),
        Value::Array(_) | Value::Object(_) => write_composite(out, value, write_s),
    }
}

/// A JSON number as Go prints the `int64` or `float64` it decodes to
/// (`%v` of a float is `%g`: `1.5`, `1e+21`).
pub fn number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or_default();
    go_g(f)
}

/// Go's `%g` (shortest representation, exponent when it is < -4 or >= 21).
fn go_g(f: f64) -> String {
    if f == 0.0 {
        return "0".to_owned();
    }
    let exp = f.abs().log10().floor() as i32;
    if (-4..21).contains(&exp) {
        format!("{f}")
    } else {
        let s = format!("{f:e}");
        // Rust: 1e21, 1.5e-7 → Go: 1e+21, 1.5e-07.
        match s.split_once('e') {
            Some((mant, e)) => {
                let (sign, digits) = match e.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', e),
                };
                format!("{mant}e{sign}{digits:0>2}")
            }
            None => s,
        }
    }
}

/// `strconv.Quote` (`%q`): double-quoted with Go escapes.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `strconv.Atoi`: an optional sign and decimal digits fitting an `int`.
pub fn atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            quote(s)
        ));
    }
    s.strip_prefix('+')
        .unwrap_or(s)
        .parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", quote(s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn formats_like_go() {
        assert_eq!(
            v(&json!({"b": [1, "x"], "a": null})),
            "map[a:<nil> b:[1 x]]"
        );
        assert_eq!(v(&json!(1.5)), "1.5");
        assert_eq!(
            s(&json!({"a": [1, "x", null, true, 1.5]})),
            "map[a:[%!s(int64=1) x %!s(<nil>) %!s(bool=true) %!s(float64=1.5)]]"
        );
        assert_eq!(s(&json!(null)), "%!s(<nil>)");
        assert_eq!(v(&json!(1e21)), "1e+21");
        assert_eq!(quote("a\"b\n"), "\"a\\\"b\\n\"");
        assert_eq!(atoi("+7"), Ok(7));
        assert_eq!(
            atoi("x"),
            Err("strconv.Atoi: parsing \"x\": invalid syntax".to_owned())
        );
    }
}
