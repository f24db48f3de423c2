//! LIST: label and field selectors, `limit`/`continue` paging and the
//! `resourceVersion`/`resourceVersionMatch` semantics of kube-apiserver.
//!
//! A JSON list is spliced from the stored bytes; a Table is streamed, its
//! rows made as the client reads them ([`TableBody`]), so neither holds a
//! parsed copy of the whole collection.

use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::errors::{ApiError, bad_request, failure, too_large_resource_version};
use super::get::is_typed;
use super::meta::served;
use super::negotiate::{Output, output};
use super::resourceversion::{
    EXACT, list_is_delegated, parse_cached, parse_delegated, validate_list_options,
};
use super::respond;
use super::state::Call;
use crate::discovery::table::{Rows, TABLE_END};
use crate::discovery::{FieldSelector, IncludeObject, LabelSelector};
use crate::registry::ResourceDef;
use crate::storage::{Key, StorageError, StoredObject};

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

/// Parses `resourceVersion` and `resourceVersionMatch` of a list whose
/// options passed [`validate_list_options`] (so a match is only given with a
/// resourceVersion, and `Exact` never with `"0"`). A resourceVersion that is
/// not a number is refused as the path the list takes upstream refuses it
/// (see [`super::resourceversion`]); `delegated` tells which.
pub fn read_at(call: &Call, delegated: bool) -> Result<ReadAt, ApiError> {
    let rv = call.query.non_empty("resourceVersion");
    let parse = |v: &str| {
        if delegated {
            parse_delegated(v)
        } else {
            parse_cached(v)
        }
    };
    match (rv, call.query.non_empty("resourceVersionMatch")) {
        (None, _) => Ok(ReadAt::Latest),
        (Some(v), Some(EXACT)) => Ok(ReadAt::Exact(parse(v)?)),
        (Some(v), _) => match parse(v)? {
            0 => Ok(ReadAt::Any),
            n => Ok(ReadAt::NotOlderThan(n)),
        },
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
            "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
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

/// Upstream's `expired` text (etcd3 store): a list at a compacted revision.
pub const LIST_EXPIRED: &str = "The resourceVersion for the provided list is too old.";
/// Upstream's `continueExpired` text: a `continue` token of a compacted revision.
pub const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.";

/// 410 `Expired` for a list (`errors.NewResourceExpired`).
fn list_expired(message: &str) -> ApiError {
    failure(410, "Expired", message, None)
}

/// One page of selected objects and the list's metadata.
#[derive(Debug)]
pub struct Page {
    /// The stored versions of the selected objects, in key order.
    pub stored: Vec<Arc<StoredObject>>,
    /// The revision the list is consistent with.
    pub revision: u64,
    /// `metadata` of the list (resourceVersion, continue, remainingItemCount).
    pub meta: Value,
}

impl Page {
    /// The objects parsed, with `apiVersion` and `kind` (what a Table or a
    /// caller working on values needs; a JSON list splices the stored bytes).
    pub fn values(&self, def: &ResourceDef) -> Result<Vec<Value>, StorageError> {
        self.stored
            .iter()
            .map(|o| Ok(served(def, o.value()?)))
            .collect()
    }
}

/// Reads the selected objects of the collection `call` addresses.
pub fn select(call: &Call, selectors: &Selectors) -> Result<Page, ApiError> {
    validate_list_options(&call.query, false)?;
    let limit = call.query.int("limit")?.filter(|l| *l > 0);
    let delegated = list_is_delegated(&call.query, limit.unwrap_or(0));
    // A delegated list reads its `continue` token before its resourceVersion
    // (etcd3 store's `ValidateListOptions`).
    let cont = call
        .query
        .non_empty("continue")
        .map(decode_continue)
        .transpose()?;
    if cont.is_some()
        && call
            .query
            .non_empty("resourceVersion")
            .is_some_and(|v| v != "0")
    {
        return Err(bad_request(
            "specifying resource version is not allowed when using continue",
        ));
    }
    let store = &call.state.store;
    let current = store.revision();
    let at = match read_at(call, delegated)? {
        // A legacy exact list: `limit` with a non-zero resourceVersion and no
        // match reads the objects as they were at it (etcd3's GetList).
        ReadAt::NotOlderThan(rv) if delegated && rv <= current => ReadAt::Exact(rv),
        at => at,
    };
    // Every page of a paged list shows the revision of its first page.
    let revision = match (at, cont.as_ref()) {
        (_, Some(c)) => c.rv,
        (ReadAt::Exact(rv), None) => rv,
        (ReadAt::NotOlderThan(rv), None) if rv > current => {
            return Err(too_large_resource_version(rv, current));
        }
        _ => current,
    };
    let start = cont.as_ref().map(|c| Key::from_stored(&c.start));
    let limit = limit.and_then(|l| usize::try_from(l).ok()).unwrap_or(0);
    let page = store
        .list_page_where(
            &call.def.prefix(call.ns()),
            revision,
            start.as_ref(),
            limit,
            |o| selectors.matches(o),
        )
        .map_err(|e| match e {
            StorageError::Expired { .. } if cont.is_some() => list_expired(CONTINUE_EXPIRED),
            StorageError::Expired { .. } => list_expired(LIST_EXPIRED),
            other => other.into(),
        })?;
    let mut meta = json!({"resourceVersion": page.revision.to_string()});
    if let (Some(next), Some(m)) = (page.next.as_ref(), meta.as_object_mut()) {
        m.insert(
            "continue".into(),
            encode_continue(page.revision, next.as_str()).into(),
        );
        if selectors.is_empty() {
            let rest =
                store.list_page(&call.def.prefix(call.ns()), page.revision, Some(next), 0)?;
            m.insert("remainingItemCount".into(), rest.items.len().into());
        }
    }
    Ok(Page {
        stored: page.items,
        revision: page.revision,
        meta,
    })
}

/// The JSON `<Kind>List` of `stored`, written straight from the stored
/// bytes: each stored object already is its JSON (resourceVersion included,
/// and, as every write path sets them, `apiVersion` and `kind` first, keys
/// being sorted). An object stored without them is parsed and typed, so the
/// answer is the same as serializing [`list_object`] of [`Page::values`].
pub fn list_json(
    def: &ResourceDef,
    meta: &Value,
    stored: &[Arc<StoredObject>],
) -> Result<Vec<u8>, StorageError> {
    let encode = |e: serde_json::Error| StorageError::Corrupt(e.to_string());
    let size: usize = stored.iter().map(|o| o.json.len() + 1).sum();
    let mut out = Vec::with_capacity(size + 256);
    // Keys in serde_json's (sorted) order, as `list_object` serializes.
    out.extend_from_slice(b"{\"apiVersion\":");
    serde_json::to_writer(&mut out, &def.api_version()).map_err(encode)?;
    out.extend_from_slice(b",\"items\":[");
    for (i, object) in stored.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if is_typed(def, &object.json) {
            out.extend_from_slice(&object.json);
        } else {
            let v = served(def, object.value()?);
            serde_json::to_writer(&mut out, &v).map_err(encode)?;
        }
    }
    out.extend_from_slice(b"],\"kind\":");
    serde_json::to_writer(&mut out, &def.list_kind()).map_err(encode)?;
    out.extend_from_slice(b",\"metadata\":");
    serde_json::to_writer(&mut out, meta).map_err(encode)?;
    out.push(b'}');
    Ok(out)
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

/// How many bytes of Table rows [`TableBody`] makes at a time.
pub const TABLE_CHUNK: usize = 64 * 1024;

/// The Table of a list's objects, written a chunk of rows at a time with
/// the bytes serializing [`crate::discovery::table`] of [`Page::values`] gives.
pub struct TableBody {
    def: &'static ResourceDef,
    rows: Rows,
    head: Option<Vec<u8>>,
    stored: std::vec::IntoIter<Arc<StoredObject>>,
    first: bool,
    done: bool,
}

impl TableBody {
    /// The Table of `stored` with list metadata `meta`.
    pub fn new(
        def: &'static ResourceDef,
        meta: Value,
        stored: Vec<Arc<StoredObject>>,
        include: IncludeObject,
        now: jiff::Timestamp,
    ) -> Result<Self, StorageError> {
        let rows = Rows::new(def, include, now);
        let head = rows
            .head(meta)
            .map_err(|e| StorageError::Corrupt(e.to_string()))?;
        Ok(TableBody {
            def,
            rows,
            head: Some(head),
            stored: stored.into_iter(),
            first: true,
            done: false,
        })
    }

    /// The next chunk of at least [`TABLE_CHUNK`] bytes (but the last);
    /// `None` after the end.
    pub fn next_chunk(&mut self) -> Result<Option<Bytes>, StorageError> {
        if self.done {
            return Ok(None);
        }
        let mut out = self.head.take().unwrap_or_default();
        while out.len() < TABLE_CHUNK {
            let Some(object) = self.stored.next() else {
                out.extend_from_slice(TABLE_END);
                self.done = true;
                break;
            };
            if !std::mem::take(&mut self.first) {
                out.push(b',');
            }
            let value = served(self.def, object.value()?);
            self.rows
                .write(&mut out, &value)
                .map_err(|e| StorageError::Corrupt(e.to_string()))?;
        }
        Ok(Some(Bytes::from(out)))
    }

    /// The response: the first chunk made now (so a failure is still an
    /// error status), the others as the client reads. A later failure
    /// (an object that no longer decodes) cuts the body short.
    pub fn into_response(mut self) -> Result<Response, ApiError> {
        let first = self.next_chunk()?;
        let rest = futures_util::stream::unfold(self, |mut body| async move {
            match body.next_chunk() {
                Ok(Some(chunk)) => Some((Ok(chunk), body)),
                Ok(None) => None,
                Err(e) => {
                    tracing::warn!(error = %e, "Table list cut short");
                    body.done = true;
                    Some((Err(e), body))
                }
            }
        });
        let stream = futures_util::stream::iter(first.map(Ok)).chain(rest);
        Ok(respond::json_bytes(200, Body::from_stream(stream)))
    }
}

/// `GET` of a collection.
pub async fn list(call: &Call) -> Result<Response, ApiError> {
    let out = output(&call.headers, &call.query)?;
    let selectors = Selectors::of(call)?;
    let page = select(call, &selectors)?;
    match out {
        Output::Json => Ok(respond::json_bytes(
            200,
            list_json(call.def, &page.meta, &page.stored)?,
        )),
        Output::Table(include) => TableBody::new(
            call.def,
            page.meta,
            page.stored,
            include,
            call.state.clock.now(),
        )?
        .into_response(),
    }
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

    fn stored(name: &str, json: Value) -> Arc<StoredObject> {
        Arc::new(StoredObject {
            key: Key::new("pods", "default", name),
            revision: 3,
            json: serde_json::to_vec(&json).expect("encodes").into(),
            attrs: Default::default(),
        })
    }

    /// A pod in `phase` with a container status, `pad` bytes of annotation.
    fn pod_json(name: &str, phase: &str, pad: usize) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": "2",
                         "creationTimestamp": "2026-01-01T00:00:00Z",
                         "annotations": {"pad": "é".repeat(pad)}},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": phase, "podIP": "10.0.0.1",
                       "containerStatuses": [{"name": "c", "image": "i", "imageID": "", "ready": true,
                                              "restartCount": 2, "state": {"running": {}}}]}})
    }

    #[test]
    fn streamed_tables_are_the_whole_built_tables() {
        let now: jiff::Timestamp = "2026-01-02T00:00:00Z".parse().expect("time");
        let pods = crate::registry::find("", "v1", "pods").expect("served");
        let many: Vec<Arc<StoredObject>> = (0..300)
            .map(|i| {
                let phase = ["Running", "Succeeded", "Failed"][i % 3];
                stored(&format!("p{i:03}"), pod_json(&format!("p{i:03}"), phase, i))
            })
            .collect();
        let odd = vec![
            // Untyped, undecodable as a Pod (fallback row), empty.
            stored("x", json!({"metadata": {"name": "x"}})),
            stored(
                "y",
                json!({"metadata": {"name": "y"}, "spec": {"containers": 3}}),
            ),
        ];
        let meta = json!({"resourceVersion": "9", "continue": "ab", "remainingItemCount": 4});
        for (stored, include) in [
            (many.clone(), IncludeObject::Metadata),
            (many, IncludeObject::Object),
            (odd.clone(), IncludeObject::None),
            (odd, IncludeObject::Metadata),
            (Vec::new(), IncludeObject::Metadata),
        ] {
            let page = Page {
                stored,
                revision: 9,
                meta: meta.clone(),
            };
            let whole = serde_json::to_vec(&crate::discovery::table(
                pods,
                &page.values(pods).expect("values"),
                page.meta.clone(),
                include,
                now,
            ))
            .expect("encodes");
            let mut body =
                TableBody::new(pods, page.meta, page.stored, include, now).expect("body");
            let mut streamed = Vec::new();
            let mut chunks = 0;
            while let Some(chunk) = body.next_chunk().expect("chunk") {
                streamed.extend_from_slice(&chunk);
                chunks += 1;
            }
            assert_eq!(
                String::from_utf8(streamed).expect("utf-8"),
                String::from_utf8(whole.clone()).expect("utf-8"),
                "{include:?}"
            );
            assert_eq!(
                chunks,
                whole.len().div_ceil(TABLE_CHUNK).max(1),
                "{include:?}"
            );
        }
    }

    #[test]
    fn spliced_lists_are_the_serialized_list_objects() {
        let def = crate::registry::find("", "v1", "pods").expect("served");
        let page = Page {
            stored: vec![
                // As every write path stores it: typed.
                stored(
                    "a",
                    json!({"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": "a", "resourceVersion": "2"}, "spec": {"x": "é\"\n"}}),
                ),
                // Untyped, or typed as another version: parsed and typed.
                stored("b", json!({"metadata": {"name": "b"}})),
                stored(
                    "c",
                    json!({"apiVersion": "v2", "kind": "Pod", "metadata": {"name": "c"}}),
                ),
            ],
            revision: 3,
            meta: json!({"resourceVersion": "3", "continue": "ab"}),
        };
        let spliced = list_json(def, &page.meta, &page.stored).expect("spliced");
        let items = page.values(def).expect("values");
        let expected =
            serde_json::to_vec(&list_object(def, page.meta.clone(), items)).expect("encodes");
        assert_eq!(
            String::from_utf8(spliced).expect("utf-8"),
            String::from_utf8(expected).expect("utf-8")
        );
        assert!(is_typed(def, &page.stored[0].json));
        assert!(!is_typed(def, &page.stored[2].json));
        let empty = list_json(def, &page.meta, &[]).expect("empty");
        let expected =
            serde_json::to_vec(&list_object(def, page.meta.clone(), Vec::new())).expect("encodes");
        assert_eq!(empty, expected);
    }
}
