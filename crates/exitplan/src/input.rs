//! Reading Kubernetes objects from files or stdin (YAML or JSON) and telling
//! which served kind they are.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

/// Why an input could not be turned into an object of a supported kind.
/// The CLI prints it on one line and exits with status 2.
#[derive(Debug)]
pub enum InputError {
    /// The file (or stdin) could not be read.
    Read(String, std::io::Error),
    /// The text is neither YAML nor JSON.
    Parse(String, ParseError),
    /// The file holds no object, or more than one.
    Count(String, usize),
    /// The document is not a Kubernetes object (no apiVersion/kind).
    NotAnObject(String),
    /// A Kubernetes object of a kind this command does not handle.
    Unsupported(String, String, String),
    /// The object does not decode into its kind's schema.
    Decode(String, String),
    /// Two inputs that must agree do not.
    Mismatch(String),
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::Read(src, e) => write!(f, "{src}: cannot read: {}", io_cause(e)),
            InputError::Parse(
                src,
                ParseError {
                    at: Some((line, column)),
                    message,
                },
            ) => {
                write!(
                    f,
                    "{src}:{line}:{column}: not valid YAML or JSON: {message}"
                )
            }
            InputError::Parse(src, ParseError { at: None, message }) => {
                write!(f, "{src}: not valid YAML or JSON: {message}")
            }
            InputError::Count(src, 0) => write!(f, "{src}: no object found"),
            InputError::Count(src, n) => {
                write!(f, "{src}: expected one object, found {n} documents")
            }
            InputError::NotAnObject(src) => {
                write!(
                    f,
                    "{src}: not a Kubernetes object (apiVersion and kind are required)"
                )
            }
            InputError::Unsupported(src, api_version, kind) => write!(
                f,
                "{src}: unsupported kind {kind} ({api_version}); supported: {}",
                crate::kinds::SUPPORTED.join(", ")
            ),
            InputError::Decode(src, e) => write!(f, "{src}: {e}"),
            InputError::Mismatch(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for InputError {}

/// An IO error as a user reads it: `No such file or directory`, without
/// the `(os error 2)` the standard library appends.
pub fn io_cause(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_owned(),
        _ => text,
    }
}

/// Reads every document from `path` (`-` is stdin) as JSON values.
pub fn read_all(path: &Path) -> Result<(String, Vec<Value>), InputError> {
    let stdin = path == Path::new("-");
    let src = if stdin {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    };
    let text = if stdin {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| InputError::Read(src.clone(), e))?;
        s
    } else {
        std::fs::read_to_string(path).map_err(|e| InputError::Read(src.clone(), e))?
    };
    let docs = parse_documents(&text).map_err(|e| InputError::Parse(src.clone(), e))?;
    Ok((src, docs))
}

/// Reads exactly one document from `path` (`-` is stdin).
pub fn read_one(path: &Path) -> Result<(String, Value), InputError> {
    let (src, mut docs) = read_all(path)?;
    if docs.len() != 1 {
        return Err(InputError::Count(src, docs.len()));
    }
    let doc = docs.remove(0);
    Ok((src, doc))
}

/// Expands `kind: List` (and `*List`) documents into their items, as kubectl
/// does for `kubectl get … -o yaml` output.
pub fn flatten_lists(docs: Vec<Value>) -> Vec<Value> {
    let mut out = Vec::new();
    for doc in docs {
        let is_list =
            type_meta(&doc).is_some_and(|(_, kind)| kind == "List" || kind.ends_with("List"));
        match (is_list, doc.get("items").and_then(Value::as_array)) {
            (true, Some(items)) => out.extend(items.iter().cloned()),
            _ => out.push(doc),
        }
    }
    out
}

/// Why a text is neither YAML nor JSON: where (1-based line and column,
/// when the parser knows) and what, on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// `(line, column)` of the offending character.
    pub at: Option<(u64, u64)>,
    /// The parser's message, without its position and source snippet.
    pub message: String,
}

/// Parses YAML (JSON is YAML) into documents, dropping empty ones.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, ParseError> {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(text).map_err(|e| parse_documents_error(&e))?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// The parser's error without the source snippet it draws under its
/// message (over several lines), and without the position it appends to
/// the message (kept apart in [`ParseError::at`]).
pub fn parse_documents_error(e: &serde_saphyr::Error) -> ParseError {
    let mut message = e.without_snippet().to_string();
    let at = e.location().map(|l| (l.line(), l.column()));
    if let Some((line, column)) = at
        && let Some(m) = message.strip_suffix(&format!(" at line {line}, column {column}"))
    {
        message = m.to_owned();
    }
    // Advice about the parser's own API means nothing to a user.
    if let Some(m) = message.strip_suffix(", set DuplicateKeyPolicy in Options if acceptable") {
        message = m.to_owned();
    }
    // Whatever else the message holds stays on one line.
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    ParseError { at, message }
}

/// `(apiVersion, kind)` of a document, if it looks like a Kubernetes object.
pub fn type_meta(doc: &Value) -> Option<(&str, &str)> {
    let api_version = doc.get("apiVersion")?.as_str()?;
    let kind = doc.get("kind")?.as_str()?;
    Some((api_version, kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_are_one_line_with_their_position() {
        let cases = [
            (
                "a: 1\n  b: 2\n",
                Some((2, 4)),
                "mapping values are not allowed in this context",
            ),
            ("{\"a\": 1,", Some((1, 1)), "unclosed bracket '{'"),
            ("a: 1\na: 2\n", Some((2, 1)), "duplicate mapping key: a"),
        ];
        for (text, at, message) in cases {
            let e = parse_documents(text).expect_err(text);
            assert_eq!(
                e,
                ParseError {
                    at,
                    message: message.to_owned()
                },
                "{text:?}"
            );
        }
    }
}
