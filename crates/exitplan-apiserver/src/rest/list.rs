//! LIST: label and field selectors, `limit`/`continue` paging and the
//! `resourceVersion`/`resourceVersionMatch` semantics of kube-apiserver.

use std::sync::Arc;

use axum::response::Response;
use serde_json::{Value, json};

use super::errors::{ApiError, bad_request, failure, invalid_options, too_large_resource_version};
use super::meta::set_type;
use super::negotiate::{Output, output};
use super::respond;
use super::state::Call;
use crate::discovery::{self, FieldSelector, LabelSelector};
use crate::registry::ResourceDef;
use crate::storage::StoredObject;

/// Label and field selectors of a list, watch or deletecollection.
#[derive(Debug, Default)]
pub struct Selectors {
    /// `labelSelector`.
    pub label: Option<LabelSelector>,
    /// `fieldSelector`.
    pub field: Option<FieldSelector>,
}

impl Selectors {
    /// Parses the selectors of `call` (400 on syntax errors).
    pub fn of(call: &Call) -> Result<Selectors, ApiError> {
        let label = call
            .query
            .non_empty("labelSelector")
            .map(LabelSelector::parse)
            .transpose()
            .map_err(bad_request)?;
        let field = call
            .query
            .non_empty("fieldSelector")
            .map(|t| FieldSelector::parse(t, call.def))
            .transpose()
            .map_err(bad_request)?;
        Ok(Selectors { label, field })
    }

    /// Whether any selector is set.
    pub fn is_empty(&self) -> bool {
        self.label.is_none() && self.field.is_none()
    }

    /// Whether `object` is selected.
    pub fn matches(&self, object: &StoredObject) -> bool {
        self.label.as_ref().is_none_or(|s| s.matches(&object.attrs))
            && self.field.as_ref().is_none_or(|s| s.matches(&object.attrs))
    }
}

/// How a list or watch reads `resourceVersion`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadAt {
    /// Unset: the most recent state.
    Latest,
    /// `"0"`: any state the server has (served from the latest).
    Any,
    /// At least this revision (`NotOlderThan`, the default for a non-zero value).
    NotOlderThan(u64),
    /// Exactly this revision (`resourceVersionMatch=Exact`).
    Exact(u64),
}

/// Parses a resourceVersion value (400 if not a number, like upstream's
/// `Invalid value … must be a number`).
pub fn parse_rv(text: &str) -> Result<u64, ApiError> {
    text.parse()
        .map_err(|_| bad_request(format!("invalid resource version: {text:?}")))
}

/// Parses `resourceVersion` and `resourceVersionMatch`.
pub fn read_at(call: &Call) -> Result<ReadAt, ApiError> {
    let rv = call.query.non_empty("resourceVersion");
    let matching = call.query.non_empty("resourceVersionMatch");
    match (rv, matching) {
        (None, None) => Ok(ReadAt::Latest),
        (None, Some(_)) => Err(invalid_options(
            "ListOptions",
            "resourceVersionMatch",
            "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        )),
        (Some("0"), None | Some("NotOlderThan")) => Ok(ReadAt::Any),
        (Some("0"), Some("Exact")) => Err(invalid_options(
            "ListOptions",
            "resourceVersionMatch",
            "FieldValueForbidden",
            "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        )),
        (Some(v), None | Some("NotOlderThan")) => Ok(ReadAt::NotOlderThan(parse_rv(v)?)),
        (Some(v), Some("Exact")) => Ok(ReadAt::Exact(parse_rv(v)?)),
        (Some(_), Some(other)) => Err(invalid_options(
            "ListOptions",
            "resourceVersionMatch",
            "FieldValueNotSupported",
            &format!(
                "Unsupported value: {}: supported values: \"Exact\", \"NotOlderThan\", \"\"",
                exitplan_api::field::go_quote(other)
            ),
        )),
    }
}

/// A `continue` token: the list's revision and the last key returned.
#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Continue {
    v: String,
    rv: u64,
    start: String,
}

fn encode_continue(rv: u64, last_key: &str) -> String {
    let token = Continue {
        v: "meta.k8s.io/v1".into(),
        rv,
        start: last_key.to_owned(),
    };
    let bytes = serde_json::to_vec(&token).unwrap_or_default();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn decode_continue(text: &str) -> Result<Continue, ApiError> {
    let invalid = || {
        bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        )
    };
    if !text.len().is_multiple_of(2) {
        return Err(invalid());
    }
    let bytes = (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2).unwrap_or("zz"), 16))
        .collect::<Result<Vec<u8>, _>>()
        .map_err(|_| invalid())?;
    serde_json::from_slice(&bytes).map_err(|_| invalid())
}

/// One page of selected objects and the list's metadata.
#[derive(Debug)]
pub struct Page {
    /// The objects, with `apiVersion` and `kind`.
    pub items: Vec<Value>,
    /// The stored versions of `items`.
    pub stored: Vec<Arc<StoredObject>>,
    /// The revision the list is consistent with.
    pub revision: u64,
    /// `metadata` of the list (resourceVersion, continue, remainingItemCount).
    pub meta: Value,
}

/// Reads the selected objects of the collection `call` addresses.
pub fn select(call: &Call, selectors: &Selectors) -> Result<Page, ApiError> {
    let at = read_at(call)?;
    let limit = call.query.int("limit")?.filter(|l| *l > 0);
    let cont = call
        .query
        .non_empty("continue")
        .map(decode_continue)
        .transpose()?;
    if cont.is_some() && !matches!(at, ReadAt::Latest) {
        return Err(invalid_options(
            "ListOptions",
            "resourceVersion",
            "FieldValueForbidden",
            "Forbidden: specifying resource version is not allowed when using continue",
        ));
    }
    let store = &call.state.store;
    let (all, revision) = store.list(&call.def.prefix(call.ns()));
    match at {
        ReadAt::NotOlderThan(rv) if rv > revision => {
            return Err(too_large_resource_version(rv, revision));
        }
        ReadAt::Exact(rv) if rv > revision => {
            return Err(too_large_resource_version(rv, revision));
        }
        // Reads at an older revision need the store's history reads
        // (`list_at`); until then an exact read of the past is expired.
        ReadAt::Exact(rv) if rv < revision => {
            return Err(failure(
                410,
                "Expired",
                format!("too old resource version: {rv} ({revision})"),
                None,
            ));
        }
        _ => {}
    }
    let start = cont.as_ref().map(|c| c.start.as_str());
    let mut selected: Vec<Arc<StoredObject>> = all
        .into_iter()
        .filter(|o| start.is_none_or(|s| o.key.as_str() > s))
        .filter(|o| selectors.matches(o))
        .collect();
    let list_rv = cont.as_ref().map_or(revision, |c| c.rv);
    let mut meta = json!({"resourceVersion": list_rv.to_string()});
    if let Some(limit) = limit.and_then(|l| usize::try_from(l).ok())
        && selected.len() > limit
    {
        let remaining = selected.len() - limit;
        selected.truncate(limit);
        if let (Some(last), Some(m)) = (selected.last(), meta.as_object_mut()) {
            m.insert(
                "continue".into(),
                encode_continue(list_rv, last.key.as_str()).into(),
            );
            if selectors.is_empty() {
                m.insert("remainingItemCount".into(), remaining.into());
            }
        }
    }
    let items = selected
        .iter()
        .map(|o| {
            let mut v = o.value()?;
            set_type(&mut v, call.def);
            Ok(v)
        })
        .collect::<Result<Vec<Value>, crate::storage::StorageError>>()?;
    Ok(Page {
        items,
        stored: selected,
        revision,
        meta,
    })
}

/// The `<Kind>List` of `items`.
pub fn list_object(def: &ResourceDef, meta: Value, items: Vec<Value>) -> Value {
    json!({
        "kind": def.list_kind(),
        "apiVersion": def.api_version(),
        "metadata": meta,
        "items": items,
    })
}

/// `GET` of a collection.
pub async fn list(call: &Call) -> Result<Response, ApiError> {
    let out = output(&call.headers, &call.query)?;
    let selectors = Selectors::of(call)?;
    let page = select(call, &selectors)?;
    let body = match out {
        Output::Json => list_object(call.def, page.meta, page.items),
        Output::Table(include) => discovery::table(
            call.def,
            &page.items,
            page.meta,
            include,
            call.state.clock.now(),
        ),
    };
    Ok(respond::json(200, &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip() {
        let t = encode_continue(7, "pods/default/b");
        let c = decode_continue(&t).expect("decodes");
        assert_eq!((c.rv, c.start.as_str()), (7, "pods/default/b"));
        assert_eq!(decode_continue("xyz").expect_err("bad").code(), 400);
    }
}
