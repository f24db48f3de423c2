//! CEL field-name escaping for schema property names (apiserver `cel.Escape`).
//!
//! A property whose name is not a CEL identifier is reachable from a rule only
//! under its escaped name (`foo-bar` → `foo__dash__bar`); a name that cannot be
//! escaped (it starts with a digit, or holds a character outside
//! `[a-zA-Z0-9_./-]`) is not reachable at all.

/// CEL's reserved words, escaped as `__word__`.
const RESERVED: &[&str] = &exitplan_api::admissionregistration::policy::CEL_RESERVED;

/// The name a rule uses for property `ident`, or `None` when it cannot be escaped.
pub fn escape(ident: &str) -> Option<String> {
    let first = ident.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&ident) {
        return Some(format!("__{ident}__"));
    }
    let mut out = String::with_capacity(ident.len());
    let mut chars = ident.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '_' if chars.peek() == Some(&'_') => {
                chars.next();
                out.push_str("__underscores__");
            }
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_like_the_apiserver() {
        // From apiserver pkg/cel escaping_test.go.
        let cases: &[(&str, Option<&str>)] = &[
            ("self", Some("self")),
            ("_if", Some("_if")),
            ("_has", Some("_has")),
            ("if", Some("__if__")),
            ("namespace", Some("__namespace__")),
            ("foo.bar", Some("foo__dot__bar")),
            ("foo-bar", Some("foo__dash__bar")),
            ("foo/bar", Some("foo__slash__bar")),
            ("foo__bar", Some("foo__underscores__bar")),
            ("foo___bar", Some("foo__underscores___bar")),
            ("a.-/b", Some("a__dot____dash____slash__b")),
            ("0leading", None),
            ("a b", None),
            ("ü", None),
            ("", None),
        ];
        for (name, want) in cases {
            assert_eq!(escape(name).as_deref(), *want, "{name}");
        }
    }
}
