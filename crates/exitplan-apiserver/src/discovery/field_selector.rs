//! The `fieldSelector` query parameter: apimachinery's `fields.ParseSelector`
//! (comma-separated `field=value`, `field==value`, `field!=value` terms,
//! `\`-escapes in values) followed by the kind's field label conversion, with
//! upstream's error texts.

use crate::registry::{FieldLabels, ResourceDef};

/// One term after conversion: the attribute it reads, the value, and whether
/// it must equal (`=`, `==`) or differ (`!=`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// The attribute (`storage::Attrs::fields` key) compared.
    pub field: String,
    /// The value compared with.
    pub value: String,
    /// `!=` rather than `=`/`==`.
    pub negated: bool,
}

/// `splitTerms`: commas split terms unless escaped (the `\` stays).
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in selector.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// `splitTerm`: the first `!=`, `==` or `=`, in that order of preference at
/// each position.
fn split_term(term: &str) -> Option<(&str, &str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for op in ["!=", "==", "="] {
            if let Some(rhs) = rest.strip_prefix(op) {
                return Some((&term[..i], op, rhs));
            }
        }
    }
    None
}

/// `UnescapeValue`.
fn unescape(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_owned());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => out.push(c),
                _ => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{c}"
                    ));
                }
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Go prints the rune with %v: its code point.
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescapedRune character in value: {}",
                    u32::from(c)
                ));
            }
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_owned());
    }
    Ok(out)
}

/// The kind's field label conversion (`Scheme.ConvertFieldLabel`): the
/// attribute a label reads, or upstream's error.
fn convert_label(def: &ResourceDef, label: &str) -> Result<String, String> {
    match def.field_labels {
        FieldLabels::Default => match label {
            "metadata.name" | "metadata.namespace" => Ok(label.to_owned()),
            _ => Err(format!(
                "\"{label}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            )),
        },
        FieldLabels::Convert(table) => table
            .iter()
            .find(|(l, _)| *l == label)
            .map(|(_, attr)| (*attr).to_owned())
            .ok_or_else(|| format!("field label not supported: {label}")),
    }
}

/// `fields.ParseAndTransformSelector` with the kind's conversion: terms in
/// sorted order, or the first error upstream reports.
pub fn parse(selector: &str, def: &ResourceDef) -> Result<Vec<Term>, String> {
    let mut parts = split_terms(selector);
    parts.sort_unstable();
    let mut raw = Vec::new();
    for part in parts {
        if part.is_empty() {
            continue;
        }
        let Some((lhs, op, rhs)) = split_term(part) else {
            return Err(format!(
                "invalid selector: '{selector}'; can't understand '{part}'"
            ));
        };
        raw.push((lhs, op == "!=", unescape(rhs)?));
    }
    raw.into_iter()
        .map(|(lhs, negated, value)| {
            Ok(Term {
                field: convert_label(def, lhs)?,
                value,
                negated,
            })
        })
        .collect()
}

/// The name a selector pins, as upstream's `RequiresExactMatch("metadata.name")`
/// on a parsed selector: `None` when the selector does not parse or has no
/// `metadata.name=`/`==` term. Request attributes use it, so a list or watch
/// of one object by name can be authorized by `resourceNames`.
pub fn exact_name(selector: &str) -> Option<String> {
    let mut parts = split_terms(selector);
    parts.sort_unstable();
    let mut found = None;
    for part in parts {
        if part.is_empty() {
            continue;
        }
        let (lhs, op, rhs) = split_term(part)?;
        let value = unescape(rhs).ok()?;
        if lhs == "metadata.name" && op != "!=" && found.is_none() {
            found = Some(value);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    fn pods() -> &'static ResourceDef {
        find("", "v1", "pods").expect("pods")
    }

    #[test]
    fn parses_terms_in_sorted_order() {
        let terms = parse(
            "status.phase!=Running,spec.nodeName==n1,metadata.name=a",
            pods(),
        )
        .expect("parses");
        assert_eq!(
            terms,
            vec![
                Term {
                    field: "metadata.name".into(),
                    value: "a".into(),
                    negated: false
                },
                Term {
                    field: "spec.nodeName".into(),
                    value: "n1".into(),
                    negated: false
                },
                Term {
                    field: "status.phase".into(),
                    value: "Running".into(),
                    negated: true
                },
            ]
        );
        assert_eq!(parse("", pods()).expect("empty"), vec![]);
        assert_eq!(
            parse("spec.host=n\\,1", pods()).expect("alias and escape"),
            vec![Term {
                field: "spec.nodeName".into(),
                value: "n,1".into(),
                negated: false
            }]
        );
    }

    #[test]
    fn errors_are_upstreams() {
        let cases = [
            ("a", "invalid selector: 'a'; can't understand 'a'"),
            (
                "spec.nodeName=a=b",
                "invalid field selector: unescapedRune character in value: 61",
            ),
            (
                "spec.nodeName=a\\b",
                "invalid field selector: invalid escape sequence: \\b",
            ),
            (
                "spec.nodeName=a\\",
                "invalid field selector: invalid escape sequence: \\",
            ),
            ("spec.foo=a", "field label not supported: spec.foo"),
        ];
        for (input, want) in cases {
            assert_eq!(
                parse(input, pods()).expect_err(input),
                want,
                "input {input:?}"
            );
        }
        let pdbs = find("policy", "v1", "poddisruptionbudgets").expect("pdbs");
        assert_eq!(
            parse("spec.minAvailable=1", pdbs).expect_err("default conversion"),
            "\"spec.minAvailable\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
        let nodes = find("", "v1", "nodes").expect("nodes");
        assert_eq!(
            parse("metadata.namespace=x", nodes).expect_err("nodes have no namespace label"),
            "field label not supported: metadata.namespace"
        );
    }
}
