//! `fieldValidation` (`Strict`, `Warn` — the default — and `Ignore`): what
//! kube-apiserver's strict decoders report about a request body, as errors
//! (`Strict`: 400) or `Warning` headers (`Warn`):
//!
//! * fields the kind's schema does not know, found by a round trip through
//!   the k8s-openapi type (what decodes and encodes back is known);
//! * keys repeated within one JSON object, found in the raw bytes
//!   ([`super::duplicates`]; the parsed value keeps the last one, as Go's
//!   decoder does).
//!
//! Per request kind, as upstream:
//!
//! * create and update bodies ([`check`]): both, in document order (a field
//!   both unknown and repeated is reported once, as unknown); `Strict`
//!   answers `Pod in version "v1" cannot be handled as a Pod: strict decoding
//!   error: duplicate field "metadata.name", unknown field "spec.foo"`;
//! * merge and strategic merge patches: the patch's repeated keys, then the
//!   patched object's unknown fields (sorted by path); JSON patches: the
//!   operations' own unknown (`json patch unknown field "[0].foo"`) and
//!   repeated fields, then the patched object's unknown fields; `Strict`
//!   answers `strict decoding error: …` ([`PatchCheck`]);
//! * apply patches (YAML): repeated keys only, as the YAML decoder words them
//!   (`line 10: key "paused" already set in map`); `Strict` answers `error
//!   strict decoding YAML: error converting YAML to JSON: yaml: unmarshal
//!   errors:` followed by one indented line per key.

use std::borrow::Cow;

use axum::http::HeaderValue;
use axum::response::Response;
use serde_json::Value;

use exitplan_api::field::go_quote;
use exitplan_api::patch::PatchType;

use super::duplicates;
use super::errors::{ApiError, bad_request};
use super::query::Query;
use crate::registry::ResourceDef;

/// At most this many strict errors are kept (sigs.k8s.io/json's bound).
const MAX_ERRORS: usize = 100;

/// The requested directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Directive {
    /// Reject unknown fields.
    Strict,
    /// Accept, with a warning per unknown field (the default).
    Warn,
    /// Accept silently.
    Ignore,
}

/// The `fieldValidation` directive (`Warn` when unset). Other values never
/// get here: they fail the write options
/// ([`super::query::Query::validate_write_options`]).
pub fn directive(query: &Query) -> Directive {
    match query.non_empty("fieldValidation") {
        Some("Strict") => Directive::Strict,
        Some("Ignore") => Directive::Ignore,
        _ => Directive::Warn,
    }
}

fn walk(given: &Value, known: &Value, path: &str, out: &mut Vec<String>) {
    match (given, known) {
        (Value::Object(g), Value::Object(k)) => {
            for (key, v) in g {
                if v.is_null() {
                    continue;
                }
                let p = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match k.get(key) {
                    Some(kv) => walk(v, kv, &p, out),
                    None => out.push(p),
                }
            }
        }
        (Value::Array(g), Value::Array(k)) => {
            for (i, (gv, kv)) in g.iter().zip(k).enumerate() {
                walk(gv, kv, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Paths of `value`'s fields that `def`'s schema does not know, in upstream's
/// `spec.containers[0].foo` form. Free-form maps (labels, annotations, …)
/// survive the round trip, so they are never reported.
pub fn unknown_fields(def: &ResourceDef, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(k) = def.admission.round_trip(value) {
        walk(value, &k, "", &mut out);
    }
    out
}

/// `errors` without repeats, at most [`MAX_ERRORS`] of them.
fn dedupe(errors: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in errors {
        if out.len() == MAX_ERRORS {
            break;
        }
        if !out.contains(&e) {
            out.push(e);
        }
    }
    out
}

fn unknown(path: &str) -> String {
    format!("unknown field {}", go_quote(path))
}

fn duplicate(path: &str) -> String {
    format!("duplicate field {}", go_quote(path))
}

/// Whether `path` lies inside the field at `outer`.
fn is_inside(path: &str, outer: &str) -> bool {
    path.strip_prefix(outer)
        .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// The strict errors of a create or update body: its unknown fields and
/// repeated keys in document order, as sigs.k8s.io/json finds them while
/// decoding into the typed object (the inside of an unknown field is
/// skipped, never checked).
pub fn body_errors(def: &ResourceDef, raw: &[u8], value: &Value) -> Vec<String> {
    let unknown_paths = unknown_fields(def, value);
    let mut errors = Vec::new();
    for key in duplicates::keys(raw) {
        if unknown_paths.contains(&key.path) {
            errors.push(unknown(&key.path));
        } else if unknown_paths.iter().any(|u| is_inside(&key.path, u)) {
            continue;
        } else if key.duplicate {
            errors.push(duplicate(&key.path));
        }
    }
    // Every unknown field was met in the body; kept should it not have been.
    errors.extend(unknown_paths.iter().map(|p| unknown(p)));
    dedupe(errors)
}

/// Applies the directive to a create or update body (`raw`, decoded as
/// `value`): `Err` for `Strict` with strict errors, else the warnings to send.
pub fn check(
    directive: Directive,
    def: &ResourceDef,
    raw: &[u8],
    value: &Value,
) -> Result<Vec<String>, ApiError> {
    if directive == Directive::Ignore {
        return Ok(Vec::new());
    }
    let errors = body_errors(def, raw, value);
    if directive == Directive::Strict && !errors.is_empty() {
        // The create and update handlers report a body's decoding error
        // through `transformDecodeError`, naming the kind and version.
        return Err(bad_request(format!(
            "{kind} in version {version} cannot be handled as a {kind}: strict decoding error: {}",
            errors.join(", "),
            kind = def.kind,
            version = go_quote(def.version),
        )));
    }
    Ok(errors)
}

/// The `fieldValidation` checks of one patch request: what the patch body
/// itself shows (found once), and the patched object's unknown fields.
#[derive(Debug)]
pub struct PatchCheck {
    directive: Directive,
    ty: PatchType,
    /// The body's own strict errors, in document order.
    body: Vec<String>,
}

/// The keys a JSON patch operation may have (`jsonPatchOp`).
const JSON_PATCH_OP_FIELDS: &[&str] = &["op", "path", "from", "value"];

impl PatchCheck {
    /// Reads the directive and scans the patch body.
    pub fn new(query: &Query, ty: PatchType, body: &[u8]) -> Self {
        let directive = directive(query);
        // Apply bodies are always scanned: accepted repeated keys are
        // resolved before the YAML parser sees them.
        let body = if directive == Directive::Ignore && ty != PatchType::Apply {
            Vec::new()
        } else {
            match ty {
                PatchType::Merge | PatchType::Strategic => duplicates::duplicates(body)
                    .iter()
                    .map(|k| duplicate(&k.path))
                    .collect(),
                PatchType::Json => json_patch_errors(body),
                PatchType::Apply => duplicates::duplicates(body)
                    .iter()
                    .map(|k| {
                        format!(
                            "line {}: key {} already set in map",
                            k.line,
                            go_quote(&k.key)
                        )
                    })
                    .collect(),
            }
        };
        PatchCheck {
            directive,
            ty,
            body: dedupe(body),
        }
    }

    /// The apply body to decode: the body itself, or — when it repeats keys
    /// and the directive accepts that — the body with each repeated key's
    /// last value only (what the YAML decoder keeps upstream; the YAML
    /// parser here refuses repeated keys). `Strict` refuses such a body
    /// with upstream's YAML error.
    pub fn apply_body<'a>(&self, body: &'a [u8]) -> Result<Cow<'a, [u8]>, ApiError> {
        if self.ty != PatchType::Apply || self.body.is_empty() {
            return Ok(Cow::Borrowed(body));
        }
        if self.directive == Directive::Strict {
            return Err(bad_request(format!(
                "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  {}",
                self.body.join("\n  ")
            )));
        }
        match serde_json::from_slice::<Value>(body) {
            Ok(last_wins) => serde_json::to_vec(&last_wins)
                .map(Cow::Owned)
                .map_err(super::errors::internal),
            Err(_) => Ok(Cow::Borrowed(body)),
        }
    }

    /// The patched object checked: `Err` for `Strict` with strict errors,
    /// else the warnings to send. Apply patches report their body only.
    pub fn check(&self, def: &ResourceDef, patched: &Value) -> Result<Vec<String>, ApiError> {
        if self.directive == Directive::Ignore {
            return Ok(Vec::new());
        }
        if self.ty == PatchType::Apply {
            return Ok(self.body.clone());
        }
        let errors = dedupe(
            self.body
                .iter()
                .cloned()
                .chain(unknown_fields(def, patched).iter().map(|p| unknown(p))),
        );
        if self.directive == Directive::Strict && !errors.is_empty() {
            return Err(bad_request(format!(
                "strict decoding error: {}",
                errors.join(", ")
            )));
        }
        Ok(errors)
    }
}

/// The strict errors of a JSON patch's operations (decoded upstream into
/// `{op, path, from, value}` with `value` free-form): unknown operation
/// fields and repeated keys, prefixed `json patch`.
fn json_patch_errors(body: &[u8]) -> Vec<String> {
    let keys = duplicates::keys(body);
    let unknown_ops: Vec<&str> = keys
        .iter()
        .filter(|k| is_op_field(&k.path) && !JSON_PATCH_OP_FIELDS.contains(&k.key.as_str()))
        .map(|k| k.path.as_str())
        .collect();
    let mut errors = Vec::new();
    for k in &keys {
        if unknown_ops.contains(&k.path.as_str()) {
            errors.push(format!("json patch {}", unknown(&k.path)));
        } else if unknown_ops.iter().any(|u| is_inside(&k.path, u)) {
            continue;
        } else if k.duplicate {
            errors.push(format!("json patch {}", duplicate(&k.path)));
        }
    }
    errors
}

/// Whether `path` names a field of an operation: `[3].op`.
fn is_op_field(path: &str) -> bool {
    path.strip_prefix('[')
        .and_then(|rest| rest.split_once("]."))
        .is_some_and(|(index, field)| {
            index.bytes().all(|b| b.is_ascii_digit()) && !field.contains(['.', '['])
        })
}

/// Adds one `Warning: 299 - "<text>"` header per warning.
pub fn warn(mut response: Response, warnings: &[String]) -> Response {
    for w in warnings {
        let text = format!("299 - {}", exitplan_api::field::go_quote(w));
        if let Ok(v) = HeaderValue::from_str(&text) {
            response
                .headers_mut()
                .append(axum::http::header::WARNING, v);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    fn pods() -> &'static ResourceDef {
        find("", "v1", "pods").expect("pods")
    }

    fn parsed(raw: &str) -> Value {
        serde_json::from_str(raw).expect("json")
    }

    #[test]
    fn finds_unknown_fields_only() {
        let pod = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"any": "thing"}, "bogus": 1},
            "spec": {"containers": [{"name": "c", "image": "i", "imagePullPolcy": "Always"}]}
        });
        assert_eq!(
            unknown_fields(pods(), &pod),
            ["metadata.bogus", "spec.containers[0].imagePullPolcy"]
        );
        let raw = pod.to_string();
        let e = check(Directive::Strict, pods(), raw.as_bytes(), &pod).expect_err("strict");
        assert_eq!(
            e.status.message.as_deref(),
            Some(
                "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"metadata.bogus\", unknown field \"spec.containers[0].imagePullPolcy\""
            )
        );
        assert_eq!(
            check(Directive::Warn, pods(), raw.as_bytes(), &pod)
                .map(|w| w.len())
                .ok(),
            Some(2)
        );
        assert!(
            check(Directive::Ignore, pods(), raw.as_bytes(), &pod)
                .expect("ignore")
                .is_empty()
        );
    }

    /// Upstream's `invalidBodyJSON` (test/integration/apiserver/
    /// field_validation_test.go), as a Pod: unknown and repeated fields in
    /// document order, a field both unknown and repeated reported once.
    const INVALID_POD: &str = include_str!("../../tests/fixtures/invalid_pod.json");

    /// The errors upstream reports for [`INVALID_POD`], in order.
    fn invalid_pod_errors() -> Vec<&'static str> {
        include_str!("../../tests/fixtures/invalid_pod.errors")
            .lines()
            .collect()
    }

    #[test]
    fn create_and_update_bodies_report_unknown_and_repeated_fields_in_document_order() {
        let value = parsed(INVALID_POD);
        assert_eq!(
            body_errors(pods(), INVALID_POD.as_bytes(), &value),
            invalid_pod_errors()
        );
        // The last value wins, as in Go.
        assert_eq!(value["metadata"]["name"], "p");
        assert_eq!(value["spec"]["hostNetwork"], false);
        let e =
            check(Directive::Strict, pods(), INVALID_POD.as_bytes(), &value).expect_err("strict");
        assert_eq!((e.code(), e.reason()), (400, "BadRequest"));
        assert_eq!(
            e.status.message.as_deref(),
            Some(
                format!(
                    "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: {}",
                    invalid_pod_errors().join(", ")
                )
                .as_str()
            )
        );
        assert_eq!(
            check(Directive::Warn, pods(), INVALID_POD.as_bytes(), &value).ok(),
            Some(
                invalid_pod_errors()
                    .iter()
                    .map(|s| (*s).to_owned())
                    .collect()
            )
        );
        assert_eq!(
            check(Directive::Ignore, pods(), INVALID_POD.as_bytes(), &value).ok(),
            Some(Vec::new())
        );
    }

    #[test]
    fn keys_inside_unknown_fields_are_not_checked() {
        let raw = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
            "spec":{"extra":{"a":1,"a":2},"containers":[{"name":"c","image":"i"}]},
            "metadata":{"name":"p"}}"#;
        assert_eq!(
            body_errors(pods(), raw.as_bytes(), &parsed(raw)),
            [
                r#"unknown field "spec.extra""#,
                r#"duplicate field "metadata""#
            ]
        );
        // Repeated label keys are repeated map keys (Go checks maps too).
        let raw = r#"{"metadata":{"name":"p","labels":{"a":"1","a":"2"}}}"#;
        assert_eq!(
            body_errors(pods(), raw.as_bytes(), &parsed(raw)),
            [r#"duplicate field "metadata.labels.a""#]
        );
    }

    /// Upstream's merge and strategic merge patch cases: the patch's
    /// repeated keys first, then the patched object's unknown fields.
    #[test]
    fn merge_patches_report_their_repeated_keys_then_the_unknown_fields() {
        let patch = r#"{"spec": {
            "unknown1": "val1",
            "unknownDupe": "valDupe",
            "unknownDupe": "valDupe2",
            "hostNetwork": true,
            "hostNetwork": false,
            "containers": [{"name": "nginx", "image": "nginx:latest", "unknownNested": "val1",
                            "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}"#;
        let patched = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"unknown1": "val1", "unknownDupe": "valDupe2", "hostNetwork": false,
                     "containers": [{"name": "nginx", "image": "nginx:latest",
                                     "unknownNested": "val1", "imagePullPolicy": "Never"}]}
        });
        let want = [
            r#"duplicate field "spec.unknownDupe""#,
            r#"duplicate field "spec.hostNetwork""#,
            r#"duplicate field "spec.containers[0].imagePullPolicy""#,
            r#"unknown field "spec.containers[0].unknownNested""#,
            r#"unknown field "spec.unknown1""#,
            r#"unknown field "spec.unknownDupe""#,
        ];
        for ty in [PatchType::Merge, PatchType::Strategic] {
            let q = Query::parse(Some("fieldValidation=Strict"));
            let c = PatchCheck::new(&q, ty, patch.as_bytes());
            let e = c.check(pods(), &patched).expect_err("strict");
            assert_eq!((e.code(), e.reason()), (400, "BadRequest"));
            assert_eq!(
                e.status.message.as_deref(),
                Some(format!("strict decoding error: {}", want.join(", ")).as_str())
            );
            let c = PatchCheck::new(&Query::default(), ty, patch.as_bytes());
            assert_eq!(
                c.check(pods(), &patched).ok(),
                Some(want.map(str::to_owned).to_vec())
            );
            let q = Query::parse(Some("fieldValidation=Ignore"));
            let c = PatchCheck::new(&q, ty, patch.as_bytes());
            assert_eq!(c.check(pods(), &patched).ok(), Some(Vec::new()));
        }
    }

    /// Upstream's JSON patch case: the operations' own unknown and repeated
    /// fields (`json patch …`), then the patched object's unknown fields.
    #[test]
    fn json_patches_report_their_operations_then_the_unknown_fields() {
        let patch = r#"[
            {"op": "add", "path": "/spec/unknown1", "value": "val1", "foo":"bar"},
            {"op": "add", "path": "/spec/unknown2", "path": "/spec/unknown3", "value": "val1"},
            {"op": "add", "path": "/spec/hostNetwork", "value": true},
            {"op": "add", "path": "/metadata/labels", "value": {"a": "1", "a": "2"}},
            {"op": "add", "path": "/x", "odd": {"k": 1, "k": 2}}
        ]"#;
        let patched = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "2"}},
            "spec": {"unknown1": "val1", "unknown3": "val1", "hostNetwork": true,
                     "containers": [{"name": "c", "image": "i"}]}
        });
        let c = PatchCheck::new(&Query::default(), PatchType::Json, patch.as_bytes());
        assert_eq!(
            c.check(pods(), &patched).expect("warn"),
            [
                r#"json patch unknown field "[0].foo""#,
                r#"json patch duplicate field "[1].path""#,
                r#"json patch duplicate field "[3].value.a""#,
                r#"json patch unknown field "[4].odd""#,
                r#"unknown field "spec.unknown1""#,
                r#"unknown field "spec.unknown3""#,
            ]
        );
    }

    /// Upstream's apply cases: the YAML decoder's wording, by line.
    #[test]
    fn apply_patches_report_repeated_keys_by_line() {
        let body = "{\n\"apiVersion\": \"v1\",\n\"kind\": \"Pod\",\n\"metadata\": {\"name\": \"p\"},\n\"spec\": {\n  \"hostNetwork\": false,\n  \"hostNetwork\": true,\n  \"containers\": [{\"name\": \"c\", \"image\": \"a\", \"image\": \"b\"}]\n}}";
        let q = Query::parse(Some("fieldValidation=Strict"));
        let c = PatchCheck::new(&q, PatchType::Apply, body.as_bytes());
        let e = c.apply_body(body.as_bytes()).expect_err("strict");
        assert_eq!((e.code(), e.reason()), (400, "BadRequest"));
        assert_eq!(
            e.status.message.as_deref(),
            Some(
                "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key \"hostNetwork\" already set in map\n  line 8: key \"image\" already set in map"
            )
        );
        let c = PatchCheck::new(&Query::default(), PatchType::Apply, body.as_bytes());
        let decoded: Value =
            serde_json::from_slice(&c.apply_body(body.as_bytes()).expect("warn")).expect("json");
        assert_eq!(decoded["spec"]["hostNetwork"], true);
        assert_eq!(decoded["spec"]["containers"][0]["image"], "b");
        assert_eq!(
            c.check(pods(), &decoded).expect("warn"),
            [
                r#"line 7: key "hostNetwork" already set in map"#,
                r#"line 8: key "image" already set in map"#,
            ]
        );
        // A body without repeated keys is passed on unchanged.
        let plain = br#"{"a": 1}"#;
        let c = PatchCheck::new(&q, PatchType::Apply, plain);
        assert_eq!(c.apply_body(plain).expect("plain").as_ref(), plain);
    }

    #[test]
    fn strict_errors_are_deduplicated_and_bounded() {
        let mut raw = String::from(r#"{"metadata":{"name":"p""#);
        for i in 0..150 {
            raw.push_str(&format!(r#","labels":{{"k{i}":"a","k{i}":"b"}}"#));
        }
        raw.push_str("}}");
        let errors = body_errors(pods(), raw.as_bytes(), &parsed(&raw));
        assert_eq!(errors.len(), MAX_ERRORS);
        assert_eq!(errors[0], r#"duplicate field "metadata.labels.k0""#);
        assert_eq!(errors[1], r#"duplicate field "metadata.labels""#);
        assert_eq!(
            errors
                .iter()
                .filter(|e| e.as_str() == r#"duplicate field "metadata.labels""#)
                .count(),
            1
        );
    }
}
