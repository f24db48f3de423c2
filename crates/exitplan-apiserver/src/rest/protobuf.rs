//! The HTTP edge of protobuf (`application/vnd.kubernetes.protobuf`, what
//! client-go's typed clients send): request bodies are transcoded to JSON
//! before any handler runs, and answers — objects, lists, `Status` errors,
//! watch streams — are transcoded from JSON when the `Accept` header
//! prefers protobuf ([`super::negotiate::prefers_protobuf`]). JSON stays
//! the stored form; the transcoder is [`crate::protobuf`]. An object with a
//! field protobuf has no number for (exitplan's own fields), or of a kind
//! with no message (`lifecycle.k8s.io`), is answered as JSON, which the
//! clients that ask for protobuf also accept.

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;

use super::errors::{ApiError, bad_request};
use crate::protobuf::{DecodeError, TypeMeta, decode_object, encode_object, encode_watch_event};
use crate::registry::ResourceDef;

/// The protobuf media type.
pub const PROTOBUF: &str = crate::protobuf::MEDIA_TYPE;

/// The kind a request body must decode into: the resource's, or the
/// subresource's own kind.
fn into_kind(def: &ResourceDef, subresource: Option<&str>, delete: bool) -> TypeMeta {
    let (api_version, kind) = match subresource {
        _ if delete => ("meta.k8s.io/v1".to_owned(), "DeleteOptions"),
        Some("eviction") => ("policy/v1".to_owned(), "Eviction"),
        Some("binding") => ("v1".to_owned(), "Binding"),
        Some("token") => ("authentication.k8s.io/v1".to_owned(), "TokenRequest"),
        Some("scale") => ("autoscaling/v1".to_owned(), "Scale"),
        _ => (def.api_version(), def.kind),
    };
    TypeMeta {
        api_version,
        kind: kind.to_owned(),
    }
}

/// apiserver's `summarizeData(body, 30)`: hex of the first 30 bytes.
fn summarize(body: &[u8]) -> String {
    if body.is_empty() {
        return "<empty>".to_owned();
    }
    let hex: String = body.iter().take(30).map(|b| format!("{b:02x}")).collect();
    if body.len() > 30 {
        format!("{hex} ...")
    } else {
        hex
    }
}

/// The JSON form of a protobuf request body for `def` (and `subresource`;
/// `delete`: a `DeleteOptions` body), or 400 worded as kube-apiserver's
/// `transformDecodeError` words it.
pub fn to_json(
    def: &ResourceDef,
    subresource: Option<&str>,
    delete: bool,
    body: &[u8],
) -> Result<Vec<u8>, ApiError> {
    decode_as(&into_kind(def, subresource, delete), body)
}

/// The JSON form of a protobuf request body that must decode into `into`
/// (errors as [`to_json`]'s).
pub fn decode_as(into: &TypeMeta, body: &[u8]) -> Result<Vec<u8>, ApiError> {
    match decode_object(body, into) {
        Ok((_, value)) => serde_json::to_vec(&value).map_err(super::errors::internal),
        Err(
            e @ (DecodeError::Empty
            | DecodeError::NoPrefix
            | DecodeError::EmptyBody
            | DecodeError::Envelope(_)),
        ) => Err(bad_request(format!(
            "the object provided is unrecognized (must be of type {}): {e} ({})",
            into.kind,
            summarize(body)
        ))),
        Err(e) => {
            let (kind, version) = match &e {
                DecodeError::NotRegistered { api_version, kind } => {
                    (kind.clone(), version_of(api_version))
                }
                _ => (into.kind.clone(), version_of(&into.api_version)),
            };
            Err(bad_request(format!(
                "{kind} in version {version:?} cannot be handled as a {}: {e}",
                into.kind
            )))
        }
    }
}

fn version_of(api_version: &str) -> String {
    api_version
        .rsplit_once('/')
        .map_or(api_version, |(_, v)| v)
        .to_owned()
}

/// The answer to a request whose `Accept` header prefers protobuf: `result`
/// (or its error `Status`) transcoded from JSON, a watch stream framed as
/// protobuf watch events; JSON when an object has no protobuf form.
pub async fn answer(result: Result<Response, ApiError>, watch: bool) -> Response {
    let response = result.unwrap_or_else(IntoResponse::into_response);
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t == "application/json");
    if !is_json {
        return response;
    }
    if watch && response.status().is_success() {
        return watch_stream(response);
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let encoded =
        serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|v| match encode_object(&v) {
                Ok(pb) => Some(pb),
                Err(e) => {
                    tracing::debug!(error = %e, "answering JSON: no protobuf form");
                    None
                }
            });
    match encoded {
        Some(pb) => {
            parts
                .headers
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROTOBUF));
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::from(pb))
        }
        None => Response::from_parts(parts, Body::from(bytes)),
    }
}

/// A JSON watch stream (one event a line) as protobuf frames.
fn watch_stream(response: Response) -> Response {
    use futures_util::StreamExt;
    let (mut parts, body) = response.into_parts();
    let frames = body
        .into_data_stream()
        .scan(Vec::<u8>::new(), |buf, chunk| {
            let out = chunk.map(|c| {
                buf.extend_from_slice(&c);
                let mut frames = Vec::new();
                while let Some(end) = buf.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=end).collect();
                    frames.extend(frame(&line));
                }
                Bytes::from(frames)
            });
            std::future::ready(Some(out))
        });
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(crate::protobuf::WATCH_MEDIA_TYPE),
    );
    Response::from_parts(parts, Body::from_stream(frames))
}

/// One JSON watch event line as a protobuf frame (nothing if it has none).
fn frame(line: &[u8]) -> Vec<u8> {
    let Ok(event) = serde_json::from_slice::<Value>(line) else {
        return Vec::new();
    };
    let ty = event
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let object = event.get("object").unwrap_or(&Value::Null);
    encode_watch_event(ty, object).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "watch event has no protobuf form");
        Vec::new()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undecodable_bodies_answer_400_as_kube_apiserver_words_it() {
        let pods = crate::registry::find("", "v1", "pods").expect("pods");
        let cases: &[(&[u8], &str)] = &[
            (
                b"nope",
                "the object provided is unrecognized (must be of type Pod): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (6e6f7065)",
            ),
            (
                b"",
                "the object provided is unrecognized (must be of type Pod): empty data (<empty>)",
            ),
            (
                b"k8s\0\x0a\x07\x0a\x02v1\x12\x01P\x12\x01\x0b",
                "P in version \"v1\" cannot be handled as a Pod: no kind \"P\" is registered for version \"v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
            ),
            (
                b"k8s\0\x0a\x09\x0a\x02v1\x12\x03Pod\x12\x01\x0b",
                "Pod in version \"v1\" cannot be handled as a Pod: proto: illegal wireType 3",
            ),
        ];
        for (body, want) in cases {
            let e = to_json(pods, None, false, body).expect_err("400");
            assert_eq!(e.code(), 400);
            assert_eq!(e.reason(), "BadRequest");
            assert_eq!(e.status.message.as_deref(), Some(*want));
        }
    }
}
