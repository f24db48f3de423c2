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
    Parse(String, String),
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
            InputError::Read(src, e) => write!(f, "{src}: cannot read: {e}"),
            InputError::Parse(src, e) => write!(f, "{src}: not valid YAML or JSON: {e}"),
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

/// Parses YAML (JSON is YAML) into documents, dropping empty ones.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, String> {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(text).map_err(|e| one_line(&e.to_string()))?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// Collapses a multi-line parser message into one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `(apiVersion, kind)` of a document, if it looks like a Kubernetes object.
pub fn type_meta(doc: &Value) -> Option<(&str, &str)> {
    let api_version = doc.get("apiVersion")?.as_str()?;
    let kind = doc.get("kind")?.as_str()?;
    Some((api_version, kind))
}
