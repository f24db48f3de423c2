//! Conversion webhook client configuration (`k8s.io/apiserver/pkg/util/webhook`
//! `ValidateWebhookURL`, `ValidateWebhookService`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::ServiceReference;

use crate::field::{Error, ErrorList, Path};
use crate::formats;

/// `webhook.ValidateWebhookURL` with HTTPS forced.
pub fn validate_webhook_url(path: &Path, url: &str) -> ErrorList {
    const FORM: &str = "; desired format: https://host[/path]";
    let mut errs = ErrorList::new();
    let (rest, fragment) = url.split_once('#').unwrap_or((url, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (scheme, after) = match rest.split_once(':') {
        Some((s, a))
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
        {
            (s.to_lowercase(), a)
        }
        _ => (String::new(), rest),
    };
    let (user, host) = match after.strip_prefix("//") {
        Some(auth) => {
            let authority = auth.split('/').next().unwrap_or_default();
            match authority.rsplit_once('@') {
                Some((u, h)) => (Some(u), h),
                None => (None, authority),
            }
        }
        None => (None, ""),
    };
    if scheme != "https" {
        errs.push(Error::invalid(
            path,
            scheme.as_str(),
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if host.is_empty() {
        errs.push(Error::invalid(
            path,
            host,
            format!("host must be specified{FORM}"),
        ));
    }
    if let Some(u) = user {
        errs.push(Error::invalid(
            path,
            u,
            "user information is not permitted in the URL",
        ));
    }
    if !fragment.is_empty() {
        errs.push(Error::invalid(
            path,
            fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if !query.is_empty() {
        errs.push(Error::invalid(
            path,
            query,
            "query parameters are not permitted in the URL",
        ));
    }
    errs
}

/// `webhook.ValidateWebhookService` (the port defaults to 443).
pub fn validate_webhook_service(path: &Path, svc: &ServiceReference) -> ErrorList {
    let mut errs = ErrorList::new();
    if svc.name.is_empty() {
        errs.push(Error::required(
            &path.child("name"),
            "service name is required",
        ));
    }
    if svc.namespace.is_empty() {
        errs.push(Error::required(
            &path.child("namespace"),
            "service namespace is required",
        ));
    }
    let port = svc.port.unwrap_or(443);
    if !(1..=65535).contains(&port) {
        errs.push(Error::invalid(
            &path.child("port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    if let Some(url_path) = svc.path.as_deref() {
        errs.append(validate_webhook_service_path(&path.child("path"), url_path));
    }
    errs
}

/// The `path` rules of `webhook.ValidateWebhookService`: empty or `/`, or a
/// `/`-led sequence of non-empty DNS-1123 subdomain segments (one trailing
/// `/` allowed).
pub fn validate_webhook_service_path(pp: &Path, url_path: &str) -> ErrorList {
    let mut errs = ErrorList::new();
    if url_path.is_empty() || url_path == "/" {
        return errs;
    }
    if url_path == "//" {
        errs.push(Error::invalid(pp, url_path, "segment[0] may not be empty"));
        return errs;
    }
    if !url_path.starts_with('/') {
        errs.push(Error::invalid(pp, url_path, "must start with a '/'"));
    }
    let check = url_path.get(1..).unwrap_or_default();
    let check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            errs.push(Error::invalid(
                pp,
                url_path,
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for failure in formats::is_dns1123_subdomain(step) {
            errs.push(Error::invalid(
                pp,
                url_path,
                format!("segment[{i}]: {failure}"),
            ));
        }
    }
    errs
}
