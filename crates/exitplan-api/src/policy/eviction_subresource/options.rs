//! The eviction request and its delete options: the name check, the
//! `ignoreStoreReadErrorWithClusterBreakingPotential` refusal, the dry-run
//! merge of query and body (`propagateDryRun`) and the resourceVersion
//! precondition helpers (job-failure spec §12 steps 1–3).

use k8s_openapi::api::policy::v1::Eviction;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{DeleteOptions, Preconditions};

use super::answer::{self, Answer};

/// One `POST pods/{name}/eviction` as the API server decoded it. A
/// `policy/v1beta1` body has the same fields and is decoded into the same type.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvictionRequest {
    /// Namespace from the URL.
    pub namespace: String,
    /// Pod name from the URL.
    pub url_name: String,
    /// The decoded Eviction body.
    pub eviction: Eviction,
    /// The request's `dryRun` query values (`?dryRun=All`).
    pub dry_run: Vec<String>,
}

/// Decodes an Eviction body of either accepted version (`policy/v1`,
/// `policy/v1beta1`: same fields). Other versions or kinds are rejected.
pub fn decode_body(mut body: serde_json::Value) -> Result<Eviction, serde_json::Error> {
    use serde::de::Error as _;
    if let Some(map) = body.as_object_mut() {
        match map.remove("apiVersion").as_ref().and_then(|v| v.as_str()) {
            None | Some("policy/v1" | "policy/v1beta1") => {}
            Some(other) => {
                return Err(serde_json::Error::custom(format!(
                    "unsupported apiVersion {other:?} for an Eviction"
                )));
            }
        }
        if let Some(kind) = map
            .remove("kind")
            .as_ref()
            .and_then(|v| v.as_str())
            .filter(|k| *k != "Eviction")
        {
            return Err(serde_json::Error::custom(format!(
                "not a Eviction object: {kind}"
            )));
        }
    }
    serde_json::from_value(body)
}

/// Checks steps 1–3 and returns the delete options the eviction proceeds
/// with (the body's, with the request's dry-run merged in), or the answer
/// that ends it.
pub fn admit(request: &EvictionRequest) -> Result<DeleteOptions, Answer> {
    let name = request
        .eviction
        .metadata
        .name
        .as_deref()
        .unwrap_or_default();
    if request.url_name != name {
        return Err(answer::name_mismatch());
    }
    let body = request.eviction.delete_options.as_ref();
    if body
        .and_then(|o| o.ignore_store_read_error_with_cluster_breaking_potential)
        .unwrap_or(false)
    {
        return Err(answer::ignore_store_read_error_invalid(name));
    }
    propagate_dry_run(body, &request.dry_run)
}

/// `propagateDryRun`: no body options → the request's dry-run; body without
/// dry-run → the request's; request without → the body's; both set and
/// different → a plain 500 error.
pub fn propagate_dry_run(
    body: Option<&DeleteOptions>,
    request_dry_run: &[String],
) -> Result<DeleteOptions, Answer> {
    let as_option = |v: &[String]| (!v.is_empty()).then(|| v.to_vec());
    let Some(body) = body else {
        return Ok(DeleteOptions {
            dry_run: as_option(request_dry_run),
            ..DeleteOptions::default()
        });
    };
    let mut options = body.clone();
    let body_dry_run = body.dry_run.as_deref().unwrap_or_default();
    if body_dry_run.is_empty() {
        options.dry_run = as_option(request_dry_run);
        return Ok(options);
    }
    if request_dry_run.is_empty() || request_dry_run == body_dry_run {
        return Ok(options);
    }
    Err(answer::plain_error(format!(
        "Non-matching dry-run options in request and content: {} and {}",
        go_string_list(request_dry_run),
        go_string_list(body_dry_run)
    )))
}

/// Go's `%v` of a `[]string`: `[a b]`.
fn go_string_list(values: &[String]) -> String {
    format!("[{}]", values.join(" "))
}

/// `dryrun.IsDryRun`: any dry-run value at all.
pub fn is_dry_run(options: &DeleteOptions) -> bool {
    options.dry_run.as_ref().is_some_and(|v| !v.is_empty())
}

/// `resourceVersionIsUnset`: no resourceVersion precondition (an empty string counts as set).
pub fn resource_version_unset(options: &DeleteOptions) -> bool {
    options
        .preconditions
        .as_ref()
        .is_none_or(|p| p.resource_version.is_none())
}

/// `setPreconditionsResourceVersion`: a copy of `options` requiring `rv`.
pub fn with_resource_version(options: &DeleteOptions, rv: &str) -> DeleteOptions {
    let mut options = options.clone();
    options
        .preconditions
        .get_or_insert_with(Preconditions::default)
        .resource_version = Some(rv.to_owned());
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn decodes_both_versions() {
        for version in ["policy/v1", "policy/v1beta1"] {
            let body = serde_json::json!({
                "apiVersion": version, "kind": "Eviction",
                "metadata": {"name": "p"}, "deleteOptions": {"gracePeriodSeconds": 0}
            });
            let e = decode_body(body).expect("decodes");
            assert_eq!(e.metadata.name.as_deref(), Some("p"));
            assert_eq!(
                e.delete_options.and_then(|o| o.grace_period_seconds),
                Some(0)
            );
        }
        let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
        assert!(decode_body(pod).is_err());
    }

    #[test]
    fn dry_run_merge() {
        let all = s(&["All"]);
        let body = |v: &[&str]| DeleteOptions {
            dry_run: Some(s(v)),
            ..DeleteOptions::default()
        };
        let got = propagate_dry_run(None, &all).expect("no body");
        assert_eq!(got.dry_run, Some(all.clone()));
        let got = propagate_dry_run(Some(&body(&[])), &all).expect("empty body");
        assert_eq!(got.dry_run, Some(all.clone()));
        let got = propagate_dry_run(Some(&body(&["All"])), &[]).expect("body only");
        assert_eq!(got.dry_run, Some(all.clone()));
        let got = propagate_dry_run(Some(&body(&["All"])), &all).expect("equal");
        assert!(is_dry_run(&got));
        let err = propagate_dry_run(Some(&body(&["All", "All"])), &all).expect_err("differ");
        assert_eq!(err.code, 500);
        assert_eq!(err.status.reason, None);
        assert_eq!(
            err.status.message.as_deref(),
            Some("Non-matching dry-run options in request and content: [All] and [All All]")
        );
        assert!(!is_dry_run(&propagate_dry_run(None, &[]).expect("none")));
    }
}
