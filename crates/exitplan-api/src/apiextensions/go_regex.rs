//! Go's `regexp` (RE2) patterns on the `regex` crate: the syntax is the
//! same, but Go's Perl classes are ASCII-only where `regex`'s are Unicode.
//! [`compile`] rewrites `\d \D \w \W \s \S \b \B` to their ASCII forms
//! before compiling, so `pattern: '^\d+$'` rejects `"٣"` as Go does.

/// Compiles a schema `pattern` with Go's class semantics.
pub fn compile(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::Regex::new(&translate(pattern))
}

/// The reason Go's `regexp.Compile` gives for a pattern that does not
/// compile (`error parsing regexp: missing closing ): `(``), for the
/// common syntax errors; other errors keep the `regex` crate's wording.
pub fn error_text(pattern: &str, err: &regex::Error) -> String {
    use regex_syntax::ast::ErrorKind as K;
    let parsed = regex_syntax::ast::parse::Parser::new().parse(pattern);
    let Err(e) = parsed else {
        return fallback(err);
    };
    let span = e.span();
    // An empty span points at the offending character.
    let at = |start: usize, end: usize| {
        let end = if end > start {
            end
        } else {
            start
                + pattern
                    .get(start..)
                    .and_then(|r| r.chars().next())
                    .map_or(0, char::len_utf8)
        };
        pattern.get(start..end).unwrap_or_default().to_owned()
    };
    let (code, expr) = match e.kind() {
        K::GroupUnclosed => ("missing closing )", pattern.to_owned()),
        K::GroupUnopened => ("unexpected )", pattern.to_owned()),
        K::ClassUnclosed => ("missing closing ]", at(span.start.offset, pattern.len())),
        K::RepetitionMissing => (
            "missing argument to repetition operator",
            at(span.start.offset, span.end.offset),
        ),
        K::EscapeUnrecognized | K::ClassEscapeInvalid => (
            "invalid escape sequence",
            at(span.start.offset, span.end.offset),
        ),
        K::EscapeUnexpectedEof => ("trailing backslash at end of expression", String::new()),
        K::ClassRangeInvalid => (
            "invalid character class range",
            at(span.start.offset, span.end.offset),
        ),
        K::RepetitionCountInvalid | K::RepetitionCountUnclosed | K::RepetitionCountDecimalEmpty => {
            (
                "invalid repeat count",
                at(span.start.offset, span.end.offset),
            )
        }
        _ => return fallback(err),
    };
    format!("error parsing regexp: {code}: `{expr}`")
}

fn fallback(err: &regex::Error) -> String {
    err.to_string()
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The pattern with Go's ASCII Perl classes spelled out.
pub fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    let mut class_start = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let rewritten = match (in_class, n) {
                    (false, 'd') => Some("[0-9]"),
                    (false, 'D') => Some("[^0-9]"),
                    (false, 'w') => Some("[0-9A-Za-z_]"),
                    (false, 'W') => Some("[^0-9A-Za-z_]"),
                    (false, 's') => Some("[\\t\\n\\f\\r ]"),
                    (false, 'S') => Some("[^\\t\\n\\f\\r ]"),
                    (false, 'b') => Some("(?-u:\\b)"),
                    (false, 'B') => Some("(?-u:\\B)"),
                    (true, 'd') => Some("0-9"),
                    (true, 'w') => Some("0-9A-Za-z_"),
                    (true, 's') => Some("\\t\\n\\f\\r "),
                    _ => None,
                };
                match rewritten {
                    Some(r) => out.push_str(r),
                    None => {
                        out.push('\\');
                        out.push(n);
                    }
                }
                class_start = false;
            }
            '[' if !in_class => {
                in_class = true;
                class_start = true;
                out.push(c);
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                continue;
            }
            ']' if in_class && !class_start => {
                in_class = false;
                out.push(c);
            }
            '[' if in_class && chars.peek() == Some(&':') => {
                // `[:alpha:]` inside a class: copy through to its `:]`.
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
                class_start = false;
            }
            '[' if in_class => {
                // A literal `[` in a Go class; `regex` would read a nested class.
                out.push_str("\\[");
                class_start = false;
            }
            _ => {
                out.push(c);
                class_start = false;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_error_texts() {
        let cases = [
            ("(", "error parsing regexp: missing closing ): `(`"),
            ("a)", "error parsing regexp: unexpected ): `a)`"),
            ("x[a", "error parsing regexp: missing closing ]: `[a`"),
            (
                "*",
                "error parsing regexp: missing argument to repetition operator: `*`",
            ),
            (
                r"\q",
                "error parsing regexp: invalid escape sequence: `\\q`",
            ),
        ];
        for (pattern, want) in cases {
            let err = compile(pattern).expect_err(pattern);
            assert_eq!(error_text(pattern, &err), want, "{pattern}");
        }
    }

    #[test]
    fn ascii_classes_as_go() {
        let cases = [
            (r"^\d+$", "123", true),
            (r"^\d+$", "٣", false),
            (r"^\w+$", "é", false),
            (r"^[\w-]+$", "a-b_c", true),
            (r"^[\d.]+$", "1.2", true),
            (r"^\s$", "\u{a0}", false),
            (r"^[^\d]$", "a", true),
            (r"^[]a]$", "]", true),
            (r"^[[:alpha:]]+$", "abc", true),
            (r"^[a[]$", "[", true),
            (r"^\.\\$", ".\\", true),
            (r"^\p{L}+$", "é", true),
        ];
        for (pattern, s, want) in cases {
            let re = compile(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            assert_eq!(
                re.is_match(s),
                want,
                "{pattern} on {s:?} ({})",
                translate(pattern)
            );
        }
    }
}
