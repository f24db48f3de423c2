//! What a request asks, for authorization: upstream's `RequestInfoFactory`
//! (`k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`) read into
//! [`Attributes`] — the verb from the method (`get` without a name is `list`
//! or `watch`, `delete` without a name is `deletecollection`), the deprecated
//! `/watch/` and `/proxy/` path verbs, namespace, resource, name and
//! subresource, and the name a `metadata.name` field selector pins. Anything
//! that is not `/api/<v>/<resource>…` or `/apis/<g>/<v>/<resource>…` is a
//! non-resource request whose verb is the lower-case method.

use axum::http::Method;
use exitplan_authz::Attributes;

use super::query::Query;
use crate::discovery::field_selector;

/// Path verbs of the deprecated `/api/v1/watch/...` and `/proxy/` forms.
const SPECIAL_VERBS: &[&str] = &["proxy", "watch"];
/// Subresources that stay on the namespace itself.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

/// Whether `name` may be a path segment (`path.IsValidPathSegmentName`).
fn valid_path_segment(name: &str) -> bool {
    name != "." && name != ".." && !name.contains(['/', '%'])
}

/// The attributes of a request (everything but the user).
pub fn attributes(method: &Method, path: &str, query: Option<&str>) -> Attributes {
    let mut info = Attributes {
        verb: method.as_str().to_ascii_lowercase(),
        path: path.to_owned(),
        ..Attributes::default()
    };
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let mut rest: &[&str] = match parts.as_slice() {
        ["api", rest @ ..] if rest.len() >= 2 => rest,
        ["apis", group, rest @ ..] if rest.len() >= 2 => {
            info.api_group = (*group).to_owned();
            rest
        }
        _ => return info,
    };
    info.resource_request = true;
    info.api_version = rest[0].to_owned();
    rest = &rest[1..];
    if SPECIAL_VERBS.contains(&rest[0]) {
        if rest.len() < 2 {
            return info;
        }
        info.verb = rest[0].to_owned();
        rest = &rest[1..];
    } else {
        info.verb = match *method {
            Method::POST => "create",
            Method::GET | Method::HEAD => "get",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE => "delete",
            _ => "",
        }
        .to_owned();
    }
    if rest[0] == "namespaces" && rest.len() > 1 {
        info.namespace = rest[1].to_owned();
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
        }
    }
    let proxy = info.verb == "proxy";
    info.resource = rest[0].to_owned();
    if let Some(name) = rest.get(1) {
        info.name = (*name).to_owned();
    }
    if let Some(sub) = rest.get(2).filter(|_| !proxy) {
        info.subresource = (*sub).to_owned();
    }
    if info.name.is_empty() && info.verb == "get" {
        let q = Query::parse(query);
        info.verb = match q.get("watch").map(str::to_ascii_lowercase).as_deref() {
            None | Some("false" | "0") => "list",
            Some(_) => "watch",
        }
        .to_owned();
        if let Some(name) = q.get("fieldSelector").and_then(field_selector::exact_name)
            && valid_path_segment(&name)
        {
            info.name = name;
        }
    }
    if info.name.is_empty() && info.verb == "delete" {
        info.verb = "deletecollection".to_owned();
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    /// method, URL, verb, group, version, namespace, resource, subresource, name.
    type Case = (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    );

    /// Upstream's `TestGetAPIRequestInfo` success cases.
    #[test]
    fn resource_requests_as_upstream_reads_them() {
        #[rustfmt::skip]
        let cases: &[Case] = &[
            ("GET", "/api/v1/namespaces", "list", "", "v1", "", "namespaces", "", ""),
            ("GET", "/api/v1/namespaces/other", "get", "", "v1", "other", "namespaces", "", "other"),
            ("GET", "/api/v1/namespaces/other/pods", "list", "", "v1", "other", "pods", "", ""),
            ("GET", "/api/v1/namespaces/other/pods/foo", "get", "", "v1", "other", "pods", "", "foo"),
            ("HEAD", "/api/v1/namespaces/other/pods/foo", "get", "", "v1", "other", "pods", "", "foo"),
            ("GET", "/api/v1/pods", "list", "", "v1", "", "pods", "", ""),
            ("HEAD", "/api/v1/pods", "list", "", "v1", "", "pods", "", ""),
            ("PATCH", "/api/v1/namespaces/new-namespace", "patch", "", "v1", "new-namespace", "namespaces", "", "new-namespace"),
            // special verbs
            ("GET", "/api/v1/proxy/namespaces/other/pods/foo", "proxy", "", "v1", "other", "pods", "", "foo"),
            ("GET", "/api/v1/proxy/namespaces/other/pods/foo/subpath/not/a/subresource", "proxy", "", "v1", "other", "pods", "", "foo"),
            ("GET", "/api/v1/watch/pods", "watch", "", "v1", "", "pods", "", ""),
            ("GET", "/api/v1/pods?watch=true", "watch", "", "v1", "", "pods", "", ""),
            ("GET", "/api/v1/pods?watch=false", "list", "", "v1", "", "pods", "", ""),
            ("GET", "/api/v1/watch/namespaces/other/pods", "watch", "", "v1", "other", "pods", "", ""),
            ("GET", "/api/v1/namespaces/other/pods?watch=1", "watch", "", "v1", "other", "pods", "", ""),
            ("GET", "/api/v1/namespaces/other/pods?watch=0", "list", "", "v1", "other", "pods", "", ""),
            // subresources
            ("GET", "/api/v1/namespaces/other/pods/foo/status", "get", "", "v1", "other", "pods", "status", "foo"),
            ("GET", "/api/v1/namespaces/other/pods/foo/proxy/subpath", "get", "", "v1", "other", "pods", "proxy", "foo"),
            ("PUT", "/api/v1/namespaces/other/finalize", "update", "", "v1", "other", "namespaces", "finalize", "other"),
            ("PUT", "/api/v1/namespaces/other/status", "update", "", "v1", "other", "namespaces", "status", "other"),
            ("POST", "/api/v1/namespaces/other/pods/foo/eviction", "create", "", "v1", "other", "pods", "eviction", "foo"),
            // verbs
            ("PATCH", "/api/v1/namespaces/other/pods/foo", "patch", "", "v1", "other", "pods", "", "foo"),
            ("DELETE", "/api/v1/namespaces/other/pods/foo", "delete", "", "v1", "other", "pods", "", "foo"),
            ("POST", "/api/v1/namespaces/other/pods", "create", "", "v1", "other", "pods", "", ""),
            ("DELETE", "/api/v1/nodes", "deletecollection", "", "v1", "", "nodes", "", ""),
            ("DELETE", "/api/v1/namespaces", "deletecollection", "", "v1", "", "namespaces", "", ""),
            ("DELETE", "/api/v1/namespaces/other/pods", "deletecollection", "", "v1", "other", "pods", "", ""),
            ("DELETE", "/apis/extensions/v1/namespaces/other/pods", "deletecollection", "extensions", "v1", "other", "pods", "", ""),
            ("POST", "/apis/extensions/v1/namespaces/other/pods", "create", "extensions", "v1", "other", "pods", "", ""),
            ("POST", "/apis/extensions/v1beta3/namespaces/other/pods", "create", "extensions", "v1beta3", "other", "pods", "", ""),
        ];
        for &(method, url, verb, group, version, ns, resource, sub, name) in cases {
            let (path, query) = url
                .split_once('?')
                .map_or((url, None), |(p, q)| (p, Some(q)));
            let method = Method::from_bytes(method.as_bytes()).expect("method");
            let a = attributes(&method, path, query);
            assert!(a.resource_request, "{url}");
            assert_eq!(
                (
                    a.verb.as_str(),
                    a.api_group.as_str(),
                    a.api_version.as_str(),
                    a.namespace.as_str(),
                    a.resource.as_str(),
                    a.subresource.as_str(),
                    a.name.as_str()
                ),
                (verb, group, version, ns, resource, sub, name),
                "{method} {url}"
            );
            assert_eq!(a.path, path);
        }
    }

    /// Upstream's error and `TestGetNonAPIRequestInfo` cases: not resource
    /// requests, and the verb is the lower-case method.
    #[test]
    fn non_resource_requests() {
        for path in [
            "/",
            "/api/version/",
            "/apis/group/version/",
            "/badprefix/version/resource",
            "/apis/version/resource",
            "/apis/extensions/v1beta1",
            "/api/version",
            "/api",
            "",
            "/healthz",
            "/metrics",
        ] {
            let a = attributes(&Method::GET, path, None);
            assert!(!a.resource_request, "{path}");
            assert_eq!(a.verb, "get");
            assert_eq!(a.path, path);
        }
        assert_eq!(attributes(&Method::POST, "/logs", None).verb, "post");
        for path in [
            "/api/version/resource",
            "/apis/group/version/resource/name/subresource",
            "/api/version/resource/name/subresource",
            "/apis/batch/v1/job",
            "/apis/batch/v1/job/foo",
            "/apis/batch/v1/job/foo/scale",
        ] {
            assert!(
                attributes(&Method::GET, path, None).resource_request,
                "{path}"
            );
        }
    }

    /// Upstream's `TestFieldSelectorParsing`: a list or watch pinned to one
    /// name by `metadata.name` carries that name.
    #[test]
    fn field_selector_pins_the_name() {
        let cases = [
            ("", "", "list"),
            ("fieldSelector=metadata.name=name1", "name1", "list"),
            (
                "watch=true&fieldSelector=metadata.name=name1",
                "name1",
                "watch",
            ),
            ("fieldSelector=foo=bar", "", "list"),
            ("fieldSelector=metadata.name=name1,foo", "", "list"),
            (
                "fieldSelector=metadata.name=name1,foo&watch=true",
                "",
                "watch",
            ),
            (
                "fieldSelector=metadata.name=name1,foo&watch=false",
                "",
                "list",
            ),
            ("fieldSelector=metadata.name%3D%3Dn2", "n2", "list"),
            ("fieldSelector=metadata.name!=n2", "", "list"),
            ("fieldSelector=metadata.name=..", "", "list"),
        ];
        for (query, name, verb) in cases {
            let a = attributes(&Method::GET, "/apis/group/version/resource", Some(query));
            assert_eq!((a.name.as_str(), a.verb.as_str()), (name, verb), "{query}");
        }
    }
}
