//! Impersonation (`Impersonate-User`, `Impersonate-Group`,
//! `Impersonate-Uid`, `Impersonate-Extra-<key>` headers; `kubectl --as`,
//! `--as-group`), as upstream's `endpoints/filters/impersonation.go`: each
//! thing asked for is authorized as verb `impersonate` on `users`,
//! `groups`, `serviceaccounts` (a `system:serviceaccount:<ns>:<name>` user),
//! `uids` or `userextras/<key>`, through the [`Authorize`] hook; the
//! request then runs as the impersonated user (with `system:authenticated`
//! added as upstream adds it).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use exitplan_api::field::go_quote;
use exitplan_authz::{Attributes, Decision, UserInfo, groups, users};

use crate::rest::errors::ApiError;
use crate::rest::state::State;

/// The authorization hook impersonation (and, later, every request) asks.
pub trait Authorize: Send + Sync + std::fmt::Debug {
    /// Whether `attrs` are allowed; `state` gives access to the store.
    fn authorize(&self, state: &State, attrs: &Attributes) -> Decision;
}

/// The authorizer until RBAC exists: members of `system:masters` may do
/// anything, nobody else anything.
#[derive(Clone, Copy, Debug, Default)]
pub struct MastersOnly;

impl Authorize for MastersOnly {
    fn authorize(&self, _state: &State, attrs: &Attributes) -> Decision {
        if attrs.user.in_group(groups::SYSTEM_MASTERS) {
            Decision::Allow(String::new())
        } else {
            Decision::NoOpinion(String::new())
        }
    }
}

/// The `Impersonate-User` header.
pub const USER_HEADER: &str = "impersonate-user";
/// The `Impersonate-Group` header (repeated for several groups).
pub const GROUP_HEADER: &str = "impersonate-group";
/// The `Impersonate-Uid` header.
pub const UID_HEADER: &str = "impersonate-uid";
/// The prefix of `Impersonate-Extra-<key>` headers.
pub const EXTRA_PREFIX: &str = "impersonate-extra-";

/// One thing asked to impersonate (upstream's `ObjectReference`s).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Request {
    ServiceAccount { namespace: String, name: String },
    User(String),
    Group(String),
    Extra { key: String, value: String },
    Uid(String),
}

impl Request {
    /// Go's `%v` of the `ObjectReference` (what the 500 text shows).
    fn go_value(&self) -> String {
        let (kind, ns, name, api_version, field) = match self {
            Request::ServiceAccount { namespace, name } => {
                ("ServiceAccount", namespace.as_str(), name.as_str(), "", "")
            }
            Request::User(n) => ("User", "", n.as_str(), "", ""),
            Request::Group(n) => ("Group", "", n.as_str(), "", ""),
            Request::Extra { key, value } => (
                "UserExtra",
                "",
                value.as_str(),
                "authentication.k8s.io/v1",
                key.as_str(),
            ),
            Request::Uid(n) => ("UID", "", n.as_str(), "authentication.k8s.io/v1", ""),
        };
        format!("{{{kind} {ns} {name}  {api_version}  {field}}}")
    }

    /// The authorization attributes of impersonating this.
    fn attributes(&self, requestor: &UserInfo) -> Attributes {
        let mut attrs = Attributes {
            user: requestor.clone(),
            verb: "impersonate".to_owned(),
            resource_request: true,
            ..Attributes::default()
        };
        match self {
            Request::ServiceAccount { namespace, name } => {
                attrs.resource = "serviceaccounts".to_owned();
                attrs.namespace = namespace.clone();
                attrs.name = name.clone();
            }
            Request::User(name) => {
                attrs.resource = "users".to_owned();
                attrs.name = name.clone();
            }
            Request::Group(name) => {
                attrs.resource = "groups".to_owned();
                attrs.name = name.clone();
            }
            Request::Extra { key, value } => {
                attrs.api_group = "authentication.k8s.io".to_owned();
                attrs.api_version = "v1".to_owned();
                attrs.resource = "userextras".to_owned();
                attrs.subresource = key.clone();
                attrs.name = value.clone();
            }
            Request::Uid(uid) => {
                attrs.api_group = "authentication.k8s.io".to_owned();
                attrs.api_version = "v1".to_owned();
                attrs.resource = "uids".to_owned();
                attrs.name = uid.clone();
            }
        }
        attrs
    }
}

/// `serviceaccount.SplitUsername`: the namespace and name of a service
/// account user name whose parts are a valid namespace and name.
pub fn split_service_account(user: &str) -> Option<(&str, &str)> {
    let rest = user.strip_prefix(users::SERVICE_ACCOUNT_PREFIX)?;
    let (ns, name) = rest.split_once(':')?;
    if name.contains(':') {
        return None;
    }
    let ok = exitplan_api::formats::is_dns1123_label(ns).is_empty()
        && exitplan_api::formats::is_dns1123_subdomain(name).is_empty();
    ok.then_some((ns, name))
}

/// `%`-decoding of an extra key (`url.PathUnescape`; the key as given when
/// it is malformed).
fn unescape_extra_key(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(b) => {
                    out.push(b);
                    i += 3;
                    continue;
                }
                None => return encoded.to_owned(),
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| encoded.to_owned())
}

fn header_values<'a>(headers: &'a HeaderMap, name: &str) -> impl Iterator<Item = &'a str> {
    headers.get_all(name).iter().filter_map(|v| v.to_str().ok())
}

/// `buildImpersonationRequests`: what the headers ask for, or the 500 text
/// when groups, extras or a uid come without a user.
fn requests(headers: &HeaderMap) -> Result<Vec<Request>, String> {
    let mut out = Vec::new();
    let user = header_values(headers, USER_HEADER)
        .next()
        .unwrap_or_default();
    let has_user = !user.is_empty();
    if has_user {
        out.push(match split_service_account(user) {
            Some((namespace, name)) => Request::ServiceAccount {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            },
            None => Request::User(user.to_owned()),
        });
    }
    let mut others = false;
    for group in header_values(headers, GROUP_HEADER) {
        others = true;
        out.push(Request::Group(group.to_owned()));
    }
    let mut keys: Vec<&str> = headers
        .keys()
        .map(|k| k.as_str())
        .filter(|k| k.starts_with(EXTRA_PREFIX))
        .collect();
    keys.dedup();
    for name in keys {
        others = true;
        let key = unescape_extra_key(&name[EXTRA_PREFIX.len()..]);
        for value in header_values(headers, name) {
            out.push(Request::Extra {
                key: key.clone(),
                value: value.to_owned(),
            });
        }
    }
    let uid = header_values(headers, UID_HEADER)
        .next()
        .unwrap_or_default();
    if !uid.is_empty() {
        others = true;
        out.push(Request::Uid(uid.to_owned()));
    }
    if others && !has_user {
        let listed: Vec<String> = out.iter().map(Request::go_value).collect();
        return Err(format!(
            "requested [{}] without impersonating a user",
            listed.join(" ")
        ));
    }
    Ok(out)
}

/// Whether any impersonation header is present (cheap: no allocation).
pub fn requested(headers: &HeaderMap) -> bool {
    headers
        .keys()
        .any(|k| k.as_str().starts_with("impersonate-"))
}

/// Why a request may not run: a `Status` error (401, 403), or upstream's
/// plain-text 500 of malformed impersonation headers.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// Answered with a `Status`.
    #[error(transparent)]
    Status(#[from] ApiError),
    /// Answered as `responsewriters.InternalError` (the text given).
    #[error("{0}")]
    Internal(String),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Status(e) => e.into_response(),
            Refusal::Internal(text) => internal_error(&text),
        }
    }
}

/// The user a request runs as: `requestor`, or whom its headers
/// impersonate if `authorizer` allows each part; otherwise what upstream
/// answers (403 `Forbidden`, or 500 for a malformed request). `uri` is the
/// request URI (the 500 text quotes it).
pub fn impersonate(
    state: &State,
    authorizer: &dyn Authorize,
    requestor: Arc<UserInfo>,
    headers: &HeaderMap,
    uri: &str,
) -> Result<Arc<UserInfo>, Refusal> {
    if !requested(headers) {
        return Ok(requestor);
    }
    let asked = requests(headers).map_err(|why| {
        Refusal::Internal(format!("Internal Server Error: {}: {why}", go_quote(uri)))
    })?;
    if asked.is_empty() {
        return Ok(requestor);
    }
    let groups_specified = header_values(headers, GROUP_HEADER).next().is_some();
    let mut name = String::new();
    let mut user_groups: Vec<String> = Vec::new();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut uid = String::new();
    for request in &asked {
        let attrs = request.attributes(&requestor);
        match request {
            Request::ServiceAccount {
                namespace,
                name: sa,
            } => {
                name = format!("{}{namespace}:{sa}", users::SERVICE_ACCOUNT_PREFIX);
                if !groups_specified {
                    user_groups = vec![
                        groups::SERVICE_ACCOUNTS.to_owned(),
                        format!("{}{namespace}", groups::SERVICE_ACCOUNTS_PREFIX),
                    ];
                }
            }
            Request::User(n) => name = n.clone(),
            Request::Group(g) => user_groups.push(g.clone()),
            Request::Extra { key, value } => {
                extra.entry(key.clone()).or_default().push(value.clone());
            }
            Request::Uid(u) => uid = u.clone(),
        }
        let decision = authorizer.authorize(state, &attrs);
        if !decision.allowed() {
            tracing::debug!(user = %requestor.name, reason = decision.reason(), "impersonation forbidden");
            return Err(forbidden(&attrs, decision.reason()).into());
        }
    }
    if name != users::ANONYMOUS {
        let add = !user_groups
            .iter()
            .any(|g| g == groups::AUTHENTICATED || g == groups::UNAUTHENTICATED);
        if add {
            user_groups.push(groups::AUTHENTICATED.to_owned());
        }
    } else if !user_groups.iter().any(|g| g == groups::UNAUTHENTICATED) {
        user_groups.push(groups::UNAUTHENTICATED.to_owned());
    }
    tracing::debug!(user = %requestor.name, as_user = %name, "impersonating");
    Ok(Arc::new(UserInfo {
        name,
        uid,
        groups: user_groups,
        extra,
    }))
}

/// `responsewriters.InternalError`: plain text, HTML-escaped as Go's
/// `http.Error` caller escapes it.
fn internal_error(text: &str) -> Response {
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;");
    let mut resp = (StatusCode::INTERNAL_SERVER_ERROR, format!("{escaped}\n")).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    resp
}

/// `responsewriters.ForbiddenStatusError`: the 403 of a denied request,
/// worded as kube-apiserver words it (`pods is forbidden: User "x" cannot
/// list resource "pods" in API group "" in the namespace "default"`, with
/// `: <reason>` when the authorizer gave one).
pub fn forbidden(attrs: &Attributes, reason: &str) -> ApiError {
    let f = exitplan_authz::Forbidden::for_request(attrs, reason);
    crate::rest::errors::forbidden(&f.group, &f.resource, &f.name, &f.detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).expect("name"),
                HeaderValue::from_str(v).expect("value"),
            );
        }
        h
    }

    /// Upstream's `TestImpersonationFilter` request shapes: what is asked
    /// for, in order, or the error of groups without a user.
    #[test]
    fn requests_as_upstream_builds_them() {
        assert_eq!(requests(&headers(&[])), Ok(vec![]));
        assert_eq!(
            requests(&headers(&[
                ("Impersonate-User", "system:serviceaccount:foo:default"),
                ("Impersonate-Group", "some-group"),
                ("Impersonate-Extra-Scopes", "scope-a"),
                ("Impersonate-Extra-Scopes", "scope-b"),
                ("Impersonate-Uid", "some-uid"),
            ])),
            Ok(vec![
                Request::ServiceAccount {
                    namespace: "foo".into(),
                    name: "default".into()
                },
                Request::Group("some-group".into()),
                Request::Extra {
                    key: "scopes".into(),
                    value: "scope-a".into()
                },
                Request::Extra {
                    key: "scopes".into(),
                    value: "scope-b".into()
                },
                Request::Uid("some-uid".into()),
            ])
        );
        assert_eq!(
            requests(&headers(&[("Impersonate-Extra-Example.com%2fkey", "v")])),
            Err(
                "requested [{UserExtra  v  authentication.k8s.io/v1  example.com/key}] without impersonating a user"
                    .into()
            )
        );
        assert_eq!(
            requests(&headers(&[("Impersonate-Group", "g")])),
            Err("requested [{Group  g    }] without impersonating a user".into())
        );
        // Not a valid service account name: a plain user.
        assert_eq!(
            requests(&headers(&[(
                "Impersonate-User",
                "system:serviceaccount:Foo:x"
            )])),
            Ok(vec![Request::User("system:serviceaccount:Foo:x".into())])
        );
        assert_eq!(unescape_extra_key("a%zz"), "a%zz");
        assert_eq!(unescape_extra_key("a%2Fb"), "a/b");
    }

    /// Upstream's `forbiddenMessage` / `NewForbidden` wording.
    #[test]
    fn forbidden_texts() {
        let user = UserInfo {
            name: "tester".into(),
            ..UserInfo::default()
        };
        let cases = [
            (
                Request::User("bob".into()).attributes(&user),
                r#"users "bob" is forbidden: User "tester" cannot impersonate resource "users" in API group "" at the cluster scope"#,
            ),
            (
                Request::ServiceAccount {
                    namespace: "foo".into(),
                    name: "default".into(),
                }
                .attributes(&user),
                r#"serviceaccounts "default" is forbidden: User "tester" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "foo""#,
            ),
            (
                Request::Extra {
                    key: "scopes".into(),
                    value: "a".into(),
                }
                .attributes(&user),
                r#"userextras.authentication.k8s.io "a" is forbidden: User "tester" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope"#,
            ),
            (
                Attributes {
                    user: user.clone(),
                    verb: "get".into(),
                    path: "/healthz/x".into(),
                    ..Attributes::default()
                },
                r#"forbidden: User "tester" cannot get path "/healthz/x""#,
            ),
        ];
        for (attrs, want) in cases {
            let e = forbidden(&attrs, "");
            assert_eq!(e.code(), 403);
            assert_eq!(e.status.message.as_deref(), Some(want));
        }
        let e = forbidden(&Request::Group("g".into()).attributes(&user), "no RBAC");
        assert!(
            e.status
                .message
                .as_deref()
                .is_some_and(|m| m.ends_with("at the cluster scope: no RBAC")),
            "{e}"
        );
    }

    #[test]
    fn service_account_names_split_as_upstream() {
        let cases = [
            ("system:serviceaccount:ns:name", Some(("ns", "name"))),
            ("system:serviceaccount:ns:a.b", Some(("ns", "a.b"))),
            ("system:serviceaccount:ns", None),
            ("system:serviceaccount:ns:a:b", None),
            ("system:serviceaccount::name", None),
            ("system:serviceaccount:NS:name", None),
            ("bob", None),
        ];
        for (user, want) in cases {
            assert_eq!(split_service_account(user), want, "{user}");
        }
    }
}
