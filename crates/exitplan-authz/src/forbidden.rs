//! The 403 kube-apiserver answers when authorization refuses a request
//! (`responsewriters.Forbidden` and `forbiddenMessage` in
//! `k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`) and
//! the `Forbidden` status error (`apierrors.NewForbidden`), which the RBAC
//! write checks use too.

use exitplan_api::field::go_quote;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status, StatusDetails};

use crate::Attributes;

/// What the user may not do, as kube-apiserver words it:
/// `User "x" cannot list resource "pods" in API group "" in the namespace
/// "default"`, `... at the cluster scope`, `resource "pods/eviction"` with a
/// subresource, and `User "x" cannot get path "/metrics"` for non-resource
/// requests.
pub fn forbidden_message(attrs: &Attributes) -> String {
    let user = go_quote(&attrs.user.name);
    if !attrs.resource_request {
        return format!(
            "User {user} cannot {} path {}",
            attrs.verb,
            go_quote(&attrs.path)
        );
    }
    let resource = if attrs.subresource.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}/{}", attrs.resource, attrs.subresource)
    };
    let scope = if attrs.namespace.is_empty() {
        "at the cluster scope".to_owned()
    } else {
        format!("in the namespace {}", go_quote(&attrs.namespace))
    };
    format!(
        "User {user} cannot {} resource {} in API group {} {scope}",
        attrs.verb,
        go_quote(&resource),
        go_quote(&attrs.api_group),
    )
}

/// A `Forbidden` status error (`apierrors.NewForbidden(groupResource, name,
/// err)`): HTTP 403, reason `Forbidden`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct Forbidden {
    /// The API group of the resource (`""` for core).
    pub group: String,
    /// The resource (plural, no subresource); `""` for non-resource requests.
    pub resource: String,
    /// The object name, `""` if none.
    pub name: String,
    /// Why: the error text after `is forbidden: `.
    pub detail: String,
}

impl Forbidden {
    /// `apierrors.NewForbidden(schema.GroupResource{group, resource}, name, detail)`.
    pub fn new(group: &str, resource: &str, name: &str, detail: impl std::fmt::Display) -> Self {
        Forbidden {
            group: group.to_owned(),
            resource: resource.to_owned(),
            name: name.to_owned(),
            detail: detail.to_string(),
        }
    }

    /// The error for a request authorization refused
    /// (`responsewriters.Forbidden`): [`forbidden_message`] with `&`, `<`
    /// and `>` HTML-escaped (upstream's sanitizer), then `: <reason>` when
    /// the authorizer gave a reason.
    pub fn for_request(attrs: &Attributes, reason: &str) -> Self {
        let mut detail = forbidden_message(attrs)
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        if !reason.is_empty() {
            detail.push_str(": ");
            detail.push_str(reason);
        }
        Forbidden {
            group: attrs.api_group.clone(),
            resource: attrs.resource.clone(),
            name: attrs.name.clone(),
            detail,
        }
    }

    /// The message: `forbidden: <detail>` without a resource,
    /// `<resource>[.<group>] is forbidden: <detail>` without a name, and
    /// `<resource>[.<group>] "<name>" is forbidden: <detail>`.
    pub fn message(&self) -> String {
        if self.group.is_empty() && self.resource.is_empty() {
            return format!("forbidden: {}", self.detail);
        }
        let qualified = if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        };
        if self.name.is_empty() {
            format!("{qualified} is forbidden: {}", self.detail)
        } else {
            format!(
                "{qualified} {} is forbidden: {}",
                go_quote(&self.name),
                self.detail
            )
        }
    }

    /// The `Status` kube-apiserver answers with: code 403, reason
    /// `Forbidden`, details naming the group, resource (as `kind`) and name
    /// (each omitted when empty).
    pub fn to_status(&self) -> Status {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        Status {
            code: Some(403),
            details: Some(StatusDetails {
                group: some(&self.group),
                kind: some(&self.resource),
                name: some(&self.name),
                ..StatusDetails::default()
            }),
            message: Some(self.message()),
            metadata: ListMeta::default(),
            reason: Some("Forbidden".to_owned()),
            status: Some("Failure".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UserInfo;

    fn attrs(verb: &str, group: &str, res: &str, sub: &str, ns: &str, name: &str) -> Attributes {
        Attributes {
            user: UserInfo::service_account("default", "x", "u"),
            verb: verb.into(),
            resource_request: true,
            namespace: ns.into(),
            api_group: group.into(),
            resource: res.into(),
            subresource: sub.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn forbidden_messages() {
        let sa = r#"User "system:serviceaccount:default:x""#;
        let metrics = Attributes {
            user: UserInfo {
                name: "bob".into(),
                ..UserInfo::default()
            },
            verb: "get".into(),
            path: "/metrics".into(),
            ..Attributes::default()
        };
        let cases = [
            (
                attrs("list", "", "pods", "", "default", ""),
                "",
                format!(
                    r#"pods is forbidden: {sa} cannot list resource "pods" in API group "" in the namespace "default""#
                ),
            ),
            (
                attrs("get", "", "pods", "", "default", "p"),
                "",
                format!(
                    r#"pods "p" is forbidden: {sa} cannot get resource "pods" in API group "" in the namespace "default""#
                ),
            ),
            (
                attrs("create", "", "pods", "eviction", "default", "p"),
                "",
                format!(
                    r#"pods "p" is forbidden: {sa} cannot create resource "pods/eviction" in API group "" in the namespace "default""#
                ),
            ),
            (
                attrs("list", "apps", "deployments", "", "", ""),
                "",
                format!(
                    r#"deployments.apps is forbidden: {sa} cannot list resource "deployments" in API group "apps" at the cluster scope"#
                ),
            ),
            (
                attrs("get", "", "nodes", "", "", "n1"),
                "RBAC: clusterrole.rbac.authorization.k8s.io \"gone\" not found",
                format!(
                    r#"nodes "n1" is forbidden: {sa} cannot get resource "nodes" in API group "" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#
                ),
            ),
            (
                metrics,
                "",
                r#"forbidden: User "bob" cannot get path "/metrics""#.to_owned(),
            ),
        ];
        for (a, reason, want) in cases {
            assert_eq!(Forbidden::for_request(&a, reason).message(), want);
        }
    }

    /// Upstream's `TestForbidden` (responsewriters/errors_test.go): message
    /// and details of each case.
    #[test]
    fn upstream_forbidden_table() {
        let u = UserInfo {
            name: "NAME".into(),
            ..UserInfo::default()
        };
        let base = Attributes {
            user: u,
            ..Attributes::default()
        };
        let cases = [
            (
                Attributes {
                    verb: "GET".into(),
                    path: "/whatever".into(),
                    ..base.clone()
                },
                r#"forbidden: User "NAME" cannot GET path "/whatever""#,
                serde_json::json!({}),
            ),
            (
                Attributes {
                    verb: "GET".into(),
                    path: "/<script>".into(),
                    ..base.clone()
                },
                r#"forbidden: User "NAME" cannot GET path "/&lt;script&gt;""#,
                serde_json::json!({}),
            ),
            (
                Attributes {
                    verb: "get".into(),
                    resource: "pod".into(),
                    resource_request: true,
                    ..base.clone()
                },
                r#"pod is forbidden: User "NAME" cannot get resource "pod" in API group "" at the cluster scope"#,
                serde_json::json!({"kind": "pod"}),
            ),
            (
                Attributes {
                    verb: "get".into(),
                    resource: "pod".into(),
                    resource_request: true,
                    name: "mypod".into(),
                    ..base.clone()
                },
                r#"pod "mypod" is forbidden: User "NAME" cannot get resource "pod" in API group "" at the cluster scope"#,
                serde_json::json!({"name": "mypod", "kind": "pod"}),
            ),
            (
                Attributes {
                    verb: "get".into(),
                    namespace: "test".into(),
                    api_group: "v2".into(),
                    resource: "pod".into(),
                    subresource: "quota".into(),
                    resource_request: true,
                    ..base.clone()
                },
                r#"pod.v2 is forbidden: User "NAME" cannot get resource "pod/quota" in API group "v2" in the namespace "test""#,
                serde_json::json!({"group": "v2", "kind": "pod"}),
            ),
        ];
        for (attrs, message, details) in cases {
            let status = Forbidden::for_request(&attrs, "").to_status();
            assert_eq!(status.message.as_deref(), Some(message));
            let json = serde_json::to_value(&status).expect("status serializes");
            assert_eq!(json["details"], details, "{message}");
            assert_eq!(json["code"], 403);
        }
    }

    #[test]
    fn forbidden_status() {
        let f =
            Forbidden::for_request(&attrs("get", "apps", "deployments", "scale", "ns", "d"), "");
        let status = serde_json::to_value(f.to_status()).expect("status serializes");
        assert_eq!(status["code"], 403);
        assert_eq!(status["reason"], "Forbidden");
        assert_eq!(status["status"], "Failure");
        assert_eq!(
            status["details"],
            serde_json::json!({"group": "apps", "kind": "deployments", "name": "d"})
        );
        assert_eq!(
            status["message"],
            "deployments.apps \"d\" is forbidden: User \"system:serviceaccount:default:x\" cannot get resource \"deployments/scale\" in API group \"apps\" in the namespace \"ns\""
        );
        let f = Forbidden::new("", "", "", "x");
        let status = serde_json::to_value(f.to_status()).expect("status serializes");
        assert_eq!(status["details"], serde_json::json!({}));
        assert_eq!(status["message"], "forbidden: x");
    }
}
