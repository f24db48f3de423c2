//! The syntax errors of Go's `encoding/json` (and of `sigs.k8s.io/json`, its
//! fork that kube-apiserver decodes patches with), byte for byte:
//! `invalid character 'g' looking for beginning of value`, `unexpected end
//! of JSON input`, … Go checks the whole input before decoding, so a syntax
//! error anywhere wins over a type error; callers ask [`syntax_error`] first
//! and decode only input it accepts.

/// Where the scanner is (the states of Go's `scanner.go`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    /// Inside `\u`: how many hex digits are still expected.
    InStringEscU(u8),
    Neg,
    Digits,
    Zero,
    Dot,
    DotDigits,
    E,
    ESign,
    EDigits,
    /// Inside a literal: the rest of it to read, and its name.
    Literal(&'static [u8], &'static str),
}

/// What an open container expects next (`parseObjectKey`, …).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parse {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

/// `maxNestingDepth`.
const MAX_DEPTH: usize = 10000;

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// Go's `quoteChar`: the byte as a one-character quoted literal.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_owned(),
        b'"' => "'\"'".to_owned(),
        // Not printable for Go's `strconv.IsPrint` (no-break space, soft hyphen).
        0xa0 | 0xad => format!("'\\u{c:04x}'"),
        _ => {
            // `strconv.Quote(string(c))` of the byte as a rune (U+0000–U+00FF).
            let q = super::gofmt::quote(&char::from(c).to_string());
            let inner = q
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .unwrap_or(&q);
            format!("'{inner}'")
        }
    }
}

fn invalid(c: u8, context: &str) -> String {
    format!("invalid character {} {context}", quote_char(c))
}

/// The error Go's `json.Unmarshal` reports for `data` before decoding
/// anything, if `data` is not valid JSON.
pub fn syntax_error(data: &[u8]) -> Option<String> {
    let mut stack: Vec<Parse> = Vec::new();
    let mut state = State::BeginValue;
    for &c in data {
        // A byte may end a number and then be read again as what follows.
        let mut again = true;
        while again {
            again = false;
            state = match state {
                State::BeginValue | State::BeginValueOrEmpty => {
                    if is_space(c) {
                        state
                    } else if c == b']' && state == State::BeginValueOrEmpty {
                        stack.pop();
                        State::EndValue
                    } else {
                        match c {
                            b'{' | b'[' if stack.len() >= MAX_DEPTH => {
                                return Some(invalid(c, "exceeded max depth"));
                            }
                            b'{' => {
                                stack.push(Parse::ObjectKey);
                                State::BeginStringOrEmpty
                            }
                            b'[' => {
                                stack.push(Parse::ArrayValue);
                                State::BeginValueOrEmpty
                            }
                            b'"' => State::InString,
                            b'-' => State::Neg,
                            b'0' => State::Zero,
                            b'1'..=b'9' => State::Digits,
                            b't' => State::Literal(b"rue", "true"),
                            b'f' => State::Literal(b"alse", "false"),
                            b'n' => State::Literal(b"ull", "null"),
                            _ => return Some(invalid(c, "looking for beginning of value")),
                        }
                    }
                }
                State::BeginStringOrEmpty | State::BeginString => {
                    if is_space(c) {
                        state
                    } else if c == b'}' && state == State::BeginStringOrEmpty {
                        stack.pop();
                        State::EndValue
                    } else if c == b'"' {
                        State::InString
                    } else {
                        return Some(invalid(c, "looking for beginning of object key string"));
                    }
                }
                State::EndValue => match stack.last().copied() {
                    None => {
                        again = true;
                        State::EndTop
                    }
                    Some(_) if is_space(c) => State::EndValue,
                    Some(Parse::ObjectKey) => {
                        if c != b':' {
                            return Some(invalid(c, "after object key"));
                        }
                        if let Some(top) = stack.last_mut() {
                            *top = Parse::ObjectValue;
                        }
                        State::BeginValue
                    }
                    Some(Parse::ObjectValue) => match c {
                        b',' => {
                            if let Some(top) = stack.last_mut() {
                                *top = Parse::ObjectKey;
                            }
                            State::BeginString
                        }
                        b'}' => {
                            stack.pop();
                            State::EndValue
                        }
                        _ => return Some(invalid(c, "after object key:value pair")),
                    },
                    Some(Parse::ArrayValue) => match c {
                        b',' => State::BeginValue,
                        b']' => {
                            stack.pop();
                            State::EndValue
                        }
                        _ => return Some(invalid(c, "after array element")),
                    },
                },
                State::EndTop => {
                    if !is_space(c) {
                        return Some(invalid(c, "after top-level value"));
                    }
                    State::EndTop
                }
                State::InString => match c {
                    b'"' => State::EndValue,
                    b'\\' => State::InStringEsc,
                    c if c < 0x20 => return Some(invalid(c, "in string literal")),
                    _ => State::InString,
                },
                State::InStringEsc => match c {
                    b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => State::InString,
                    b'u' => State::InStringEscU(4),
                    _ => return Some(invalid(c, "in string escape code")),
                },
                State::InStringEscU(left) => {
                    if !c.is_ascii_hexdigit() {
                        return Some(invalid(c, "in \\u hexadecimal character escape"));
                    }
                    if left > 1 {
                        State::InStringEscU(left - 1)
                    } else {
                        State::InString
                    }
                }
                State::Neg => match c {
                    b'0' => State::Zero,
                    b'1'..=b'9' => State::Digits,
                    _ => return Some(invalid(c, "in numeric literal")),
                },
                State::Digits | State::Zero => match c {
                    b'0'..=b'9' if state == State::Digits => State::Digits,
                    b'.' => State::Dot,
                    b'e' | b'E' => State::E,
                    _ => {
                        again = true;
                        State::EndValue
                    }
                },
                State::Dot => {
                    if !c.is_ascii_digit() {
                        return Some(invalid(c, "after decimal point in numeric literal"));
                    }
                    State::DotDigits
                }
                State::DotDigits => match c {
                    b'0'..=b'9' => State::DotDigits,
                    b'e' | b'E' => State::E,
                    _ => {
                        again = true;
                        State::EndValue
                    }
                },
                State::E | State::ESign => {
                    if state == State::E && (c == b'+' || c == b'-') {
                        State::ESign
                    } else if c.is_ascii_digit() {
                        State::EDigits
                    } else {
                        return Some(invalid(c, "in exponent of numeric literal"));
                    }
                }
                State::EDigits => {
                    if c.is_ascii_digit() {
                        State::EDigits
                    } else {
                        again = true;
                        State::EndValue
                    }
                }
                State::Literal(rest, name) => match rest.split_first() {
                    Some((&want, tail)) if want == c => {
                        if tail.is_empty() {
                            State::EndValue
                        } else {
                            State::Literal(tail, name)
                        }
                    }
                    Some((&want, _)) => {
                        return Some(invalid(
                            c,
                            &format!("in literal {name} (expecting {})", quote_char(want)),
                        ));
                    }
                    None => {
                        again = true;
                        State::EndValue
                    }
                },
            };
        }
    }
    // `eof`: a complete top-level value (a number may end at the input's end).
    let complete = stack.is_empty()
        && matches!(
            state,
            State::EndValue
                | State::EndTop
                | State::Digits
                | State::Zero
                | State::DotDigits
                | State::EDigits
        );
    (!complete).then(|| "unexpected end of JSON input".to_owned())
}

#[cfg(test)]
mod tests {
    use super::syntax_error;

    /// Inputs and what Go's `json.Unmarshal` says of them (`None`: valid).
    #[test]
    fn go_syntax_errors() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "barbaz",
                Some("invalid character 'b' looking for beginning of value"),
            ),
            (
                "invalid json patch",
                Some("invalid character 'i' looking for beginning of value"),
            ),
            ("", Some("unexpected end of JSON input")),
            ("   ", Some("unexpected end of JSON input")),
            ("{\"a\":1", Some("unexpected end of JSON input")),
            ("[1,2", Some("unexpected end of JSON input")),
            ("{\"a\" 1}", Some("invalid character '1' after object key")),
            (
                "{\"a\":1 \"b\":2}",
                Some("invalid character '\"' after object key:value pair"),
            ),
            ("[1 2]", Some("invalid character '2' after array element")),
            (
                "{a:1}",
                Some("invalid character 'a' looking for beginning of object key string"),
            ),
            (
                "{\"a\":1,}",
                Some("invalid character '}' looking for beginning of object key string"),
            ),
            (
                "[1,]",
                Some("invalid character ']' looking for beginning of value"),
            ),
            ("{} x", Some("invalid character 'x' after top-level value")),
            (
                "123abc",
                Some("invalid character 'a' after top-level value"),
            ),
            ("tru", Some("unexpected end of JSON input")),
            (
                "trux",
                Some("invalid character 'x' in literal true (expecting 'e')"),
            ),
            (
                "nul1",
                Some("invalid character '1' in literal null (expecting 'l')"),
            ),
            ("fals", Some("unexpected end of JSON input")),
            ("-x", Some("invalid character 'x' in numeric literal")),
            (
                "1.x",
                Some("invalid character 'x' after decimal point in numeric literal"),
            ),
            (
                "1ex",
                Some("invalid character 'x' in exponent of numeric literal"),
            ),
            (
                "\"a\\x\"",
                Some("invalid character 'x' in string escape code"),
            ),
            (
                "\"\\u12g4\"",
                Some("invalid character 'g' in \\u hexadecimal character escape"),
            ),
            (
                "\"a\nb\"",
                Some("invalid character '\\n' in string literal"),
            ),
            (
                "'a'",
                Some("invalid character '\\'' looking for beginning of value"),
            ),
            ("{\"a\":[1,{\"b\":null}],\"c\":-0.5e+3}", None),
            ("  [ ]  ", None),
            ("0", None),
            ("12", None),
            ("1.5", None),
            ("2e10", None),
            ("\"\\u00e9\"", None),
            ("null", None),
        ];
        for (input, want) in cases {
            assert_eq!(
                syntax_error(input.as_bytes()).as_deref(),
                *want,
                "input {input:?}"
            );
        }
        assert_eq!(
            syntax_error(&[b'['; 10001]).as_deref(),
            Some("invalid character '[' exceeded max depth")
        );
        assert_eq!(
            syntax_error(b"\xa0").as_deref(),
            Some("invalid character '\\u00a0' looking for beginning of value")
        );
        // A byte above 0x7f prints as the rune of its value.
        assert_eq!(
            syntax_error(b"\xc3").as_deref(),
            Some("invalid character '\u{c3}' looking for beginning of value")
        );
    }
}
