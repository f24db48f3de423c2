//! What a request asks to do (upstream's `authorizer.AttributesRecord`) and
//! an authorizer's answer.

use crate::UserInfo;

/// The attributes of one request that authorization decides on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// The verb: `get`, `list`, `watch`, `create`, `update`, `patch`,
    /// `delete`, `deletecollection` for resource requests (or a special verb
    /// such as `impersonate`, `bind`, `escalate`, `approve`); the lower-case
    /// HTTP method for non-resource requests.
    pub verb: String,
    /// Whether the request addresses a resource (`/api`, `/apis` paths with
    /// a resource) rather than a non-resource URL.
    pub resource_request: bool,
    /// The namespace, `""` for cluster-scoped requests and for requests
    /// across all namespaces.
    pub namespace: String,
    /// The API group (`""` for core).
    pub api_group: String,
    /// The API version.
    pub api_version: String,
    /// The resource (plural), `""` for non-resource requests.
    pub resource: String,
    /// The subresource (`status`, `eviction`, `token`), `""` if none.
    pub subresource: String,
    /// The object name, `""` if none.
    pub name: String,
    /// The request path (what non-resource rules match).
    pub path: String,
}

/// An authorizer's answer, with the reason upstream logs and returns in
/// access reviews.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The request is allowed; the reason says by what (`RBAC: allowed by
    /// ClusterRoleBinding "x" of ClusterRole "y" to User "z"`).
    Allow(String),
    /// The request is explicitly denied.
    Deny(String),
    /// The authorizer has no opinion (RBAC never denies: it only allows or
    /// has no opinion); the reason may be empty.
    NoOpinion(String),
}

impl Decision {
    /// Whether the request is allowed.
    pub fn allowed(&self) -> bool {
        matches!(self, Decision::Allow(_))
    }

    /// The reason given with the decision.
    pub fn reason(&self) -> &str {
        match self {
            Decision::Allow(r) | Decision::Deny(r) | Decision::NoOpinion(r) => r,
        }
    }
}
