//! What a request addresses, resolved from its path like upstream's
//! `RequestInfoFactory`: group, version, namespace, resource, name and
//! subresource.

/// A resolved resource path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourcePath {
    /// API group (`""` for `/api`).
    pub group: String,
    /// API version.
    pub version: String,
    /// Namespace from the path, if any.
    pub namespace: Option<String>,
    /// Plural resource name.
    pub resource: String,
    /// Object name, if any.
    pub name: Option<String>,
    /// Subresource, if any.
    pub subresource: Option<String>,
}

/// Subresources of a namespace that stay on the namespace itself.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

/// What a path under `/api` or `/apis` addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiPath {
    /// `/api` or `/apis`.
    Root,
    /// `/apis/<group>`.
    Group(String),
    /// `/api/v1` or `/apis/<group>/<version>`.
    GroupVersion(String, String),
    /// A resource collection, object or subresource.
    Resource(ResourcePath),
}

/// Resolves `/api/...` and `/apis/...` paths; `None` for anything else or
/// paths too deep to be a resource.
pub fn resolve(path: &str) -> Option<ApiPath> {
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let (group, rest) = match parts.as_slice() {
        ["api"] | ["apis"] => return Some(ApiPath::Root),
        ["api", rest @ ..] => ("", rest),
        ["apis", group] => return Some(ApiPath::Group((*group).to_owned())),
        ["apis", group, rest @ ..] => (*group, rest),
        _ => return None,
    };
    let (version, mut rest) = rest.split_first()?;
    if rest.is_empty() {
        return Some(ApiPath::GroupVersion(
            group.to_owned(),
            (*version).to_owned(),
        ));
    }
    let mut namespace = None;
    if rest[0] == "namespaces" && rest.len() > 1 {
        namespace = Some(rest[1].to_owned());
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
        }
    }
    if rest.len() > 3 {
        return None;
    }
    Some(ApiPath::Resource(ResourcePath {
        group: group.to_owned(),
        version: (*version).to_owned(),
        namespace,
        resource: rest[0].to_owned(),
        name: rest.get(1).map(|s| (*s).to_owned()),
        subresource: rest.get(2).map(|s| (*s).to_owned()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match resolve(path) {
            Some(ApiPath::Resource(r)) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn resolves_like_request_info() {
        let r = res("/api/v1/namespaces/default/pods/p/eviction");
        assert_eq!(r.namespace.as_deref(), Some("default"));
        assert_eq!(r.resource, "pods");
        assert_eq!(r.name.as_deref(), Some("p"));
        assert_eq!(r.subresource.as_deref(), Some("eviction"));
        let r = res("/api/v1/namespaces/x");
        assert_eq!(
            (r.resource.as_str(), r.name.as_deref()),
            ("namespaces", Some("x"))
        );
        let r = res("/api/v1/namespaces/x/status");
        assert_eq!(r.subresource.as_deref(), Some("status"));
        assert_eq!(r.resource, "namespaces");
        let r = res("/apis/batch/v1/jobs");
        assert_eq!((r.group.as_str(), r.namespace), ("batch", None));
        let r = res("/api/v1/nodes/n1/status");
        assert_eq!(r.subresource.as_deref(), Some("status"));
        assert_eq!(resolve("/apis/batch"), Some(ApiPath::Group("batch".into())));
        assert_eq!(
            resolve("/api/v1"),
            Some(ApiPath::GroupVersion(String::new(), "v1".into()))
        );
        assert_eq!(resolve("/metrics"), None);
    }
}
