//! Which webhooks a request selects: upstream's `rules.Matcher`, the
//! object and namespace selector matchers and the exemption of the
//! admission configuration resources. Pure.
//!
//! Rule matching is the registry's (`exitplan_api::admissionregistration::matching`).

use std::collections::BTreeMap;

use exitplan_api::admissionregistration::matching;
use k8s_openapi::api::admissionregistration::v1::RuleWithOperations;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::Value;

use super::Attributes;

/// Whether any of `rules` selects the request: the registry's
/// `admissionregistration::matching` (upstream's `rules.Matcher`). Every
/// served resource has one version, so `matchPolicy: Equivalent` finds no
/// other resource to match.
pub fn rules_match(rules: &[RuleWithOperations], attrs: &Attributes<'_>) -> bool {
    let request = matching::RequestAttributes {
        operation: attrs.operation.as_str(),
        group: &attrs.resource.group,
        version: &attrs.resource.version,
        resource: &attrs.resource.name,
        subresource: attrs.subresource,
        namespace: attrs.namespace,
    };
    matching::invocation_resource(rules, None, &request, &[]).is_some()
}

fn is_namespace(attrs: &Attributes<'_>) -> bool {
    attrs.resource.group.is_empty()
        && attrs.resource.version == "v1"
        && attrs.resource.name == "namespaces"
}

/// The admission configuration resources, which no webhook is called for
/// (`IsExemptAdmissionConfigurationResource`).
pub fn exempt(attrs: &Attributes<'_>) -> bool {
    attrs.resource.group == "admissionregistration.k8s.io"
        && matches!(
            attrs.resource.name.as_str(),
            "validatingwebhookconfigurations"
                | "mutatingwebhookconfigurations"
                | "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        )
}

/// An unset selector selects everything (the v1 default is `{}`).
fn as_selector(
    selector: Option<&LabelSelector>,
) -> Result<exitplan_api::selector::Selector, String> {
    let empty = LabelSelector::default();
    exitplan_api::selector::as_selector(Some(selector.unwrap_or(&empty))).map_err(|e| e.to_string())
}

fn labels(object: Option<&Value>) -> Option<BTreeMap<String, String>> {
    serde_json::from_value(object?.pointer("/metadata/labels")?.clone()).ok()
}

/// `MatchObjectSelector`: the new or the old object's labels match (an
/// invalid selector is an error, a missing object never matches).
pub fn object_selected(
    selector: Option<&LabelSelector>,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<bool, String> {
    let sel = as_selector(selector)?;
    if sel == exitplan_api::selector::Selector::Everything {
        return Ok(true);
    }
    let matches = |o: Option<&Value>| o.is_some() && sel.matches(labels(o).as_ref());
    Ok(matches(object) || matches(old))
}

/// Where the namespace selector reads labels from
/// (`namespace.Matcher.GetNamespaceLabels`).
pub fn namespace_source<'v>(
    attrs: &Attributes<'_>,
    object: Option<&'v Value>,
    old: Option<&'v Value>,
) -> NamespaceSource<'v> {
    if attrs.namespace.is_empty() && !is_namespace(attrs) {
        return NamespaceSource::NotApplicable;
    }
    if is_namespace(attrs) && attrs.subresource.is_empty() {
        // The Namespace's own labels: the new object, or on DELETE the old.
        let o = if attrs.operation == super::Operation::Delete {
            old
        } else {
            object
        };
        if let Some(o) = o {
            return NamespaceSource::Object(o);
        }
    }
    NamespaceSource::Lookup
}

/// Where the labels a namespace selector looks at come from.
#[derive(Debug)]
pub enum NamespaceSource<'v> {
    /// Cluster-scoped, not a Namespace: every selector matches.
    NotApplicable,
    /// The Namespace object of the request.
    Object(&'v Value),
    /// The stored Namespace of `attrs.namespace`.
    Lookup,
}

/// Whether `selector` (unset: everything) matches namespace `labels`.
pub fn namespace_selected(
    selector: Option<&LabelSelector>,
    labels_of: impl FnOnce() -> Result<Option<BTreeMap<String, String>>, crate::rest::ApiError>,
) -> Result<bool, NamespaceError> {
    let sel = as_selector(selector).map_err(NamespaceError::Selector)?;
    if sel == exitplan_api::selector::Selector::Everything {
        return Ok(true);
    }
    let labels = labels_of().map_err(NamespaceError::Lookup)?;
    Ok(sel.matches(labels.as_ref()))
}

/// Labels of a Namespace object.
pub fn object_labels(object: &Value) -> Option<BTreeMap<String, String>> {
    labels(Some(object))
}

/// Why a namespace selector could not be evaluated.
#[derive(Debug)]
pub enum NamespaceError {
    /// The selector does not parse.
    Selector(String),
    /// The namespace could not be read (404 when absent).
    Lookup(crate::rest::ApiError),
}

#[cfg(test)]
mod tests {
    use exitplan_authz::UserInfo;

    use super::super::{Gvn, Operation};
    use super::*;

    fn attrs<'a>(
        user: &'a UserInfo,
        op: Operation,
        group: &str,
        version: &str,
        resource: &str,
        sub: &'a str,
        ns: &'a str,
    ) -> Attributes<'a> {
        Attributes {
            operation: op,
            kind: Gvn::new(group, version, "K"),
            resource: Gvn::new(group, version, resource),
            subresource: sub,
            name: "n",
            namespace: ns,
            old_object: None,
            dry_run: false,
            options: Value::Null,
            user,
        }
    }

    fn rule(
        ops: &[&str],
        groups: &[&str],
        versions: &[&str],
        resources: &[&str],
        scope: Option<&str>,
    ) -> RuleWithOperations {
        let v = |xs: &[&str]| Some(xs.iter().map(|s| (*s).to_owned()).collect());
        RuleWithOperations {
            operations: v(ops),
            api_groups: v(groups),
            api_versions: v(versions),
            resources: v(resources),
            scope: scope.map(str::to_owned),
        }
    }

    /// Ported from upstream's `rules_test.go` (TestGroup, TestVersion,
    /// TestOperation, TestResource, TestScope) as one table.
    #[test]
    fn rules_select_as_upstream() {
        let u = UserInfo::default();
        let c = Operation::Create;
        let cases: Vec<(&str, RuleWithOperations, Attributes<'_>, bool)> = vec![
            (
                "wildcard everything",
                rule(&["*"], &["*"], &["*"], &["*"], None),
                attrs(&u, c, "apps", "v1", "deployments", "", "ns"),
                true,
            ),
            (
                "wildcard resource does not match a subresource",
                rule(&["*"], &["*"], &["*"], &["*"], None),
                attrs(&u, c, "", "v1", "pods", "status", "ns"),
                false,
            ),
            (
                "*/* matches subresources",
                rule(&["*"], &["*"], &["*"], &["*/*"], None),
                attrs(&u, c, "", "v1", "pods", "status", "ns"),
                true,
            ),
            (
                "*/status",
                rule(&["*"], &["*"], &["*"], &["*/status"], None),
                attrs(&u, Operation::Update, "", "v1", "pods", "status", "ns"),
                true,
            ),
            (
                "*/status not the main resource",
                rule(&["*"], &["*"], &["*"], &["*/status"], None),
                attrs(&u, Operation::Update, "", "v1", "pods", "", "ns"),
                false,
            ),
            (
                "pods/eviction",
                rule(&["CREATE"], &[""], &["v1"], &["pods/eviction"], None),
                attrs(&u, c, "", "v1", "pods", "eviction", "ns"),
                true,
            ),
            (
                "pods/* ",
                rule(&["CREATE"], &[""], &["v1"], &["pods/*"], None),
                attrs(&u, c, "", "v1", "pods", "binding", "ns"),
                true,
            ),
            (
                "pods/* not deployments",
                rule(&["CREATE"], &[""], &["v1"], &["pods/*"], None),
                attrs(&u, c, "apps", "v1", "deployments", "scale", "ns"),
                false,
            ),
            (
                "group mismatch",
                rule(&["*"], &["apps"], &["*"], &["*"], None),
                attrs(&u, c, "", "v1", "pods", "", "ns"),
                false,
            ),
            (
                "version mismatch",
                rule(&["*"], &["*"], &["v2"], &["*"], None),
                attrs(&u, c, "", "v1", "pods", "", "ns"),
                false,
            ),
            (
                "operation mismatch",
                rule(&["UPDATE", "DELETE"], &["*"], &["*"], &["*"], None),
                attrs(&u, c, "", "v1", "pods", "", "ns"),
                false,
            ),
            (
                "operation listed",
                rule(&["UPDATE", "DELETE"], &["*"], &["*"], &["*"], None),
                attrs(&u, Operation::Delete, "", "v1", "pods", "", "ns"),
                true,
            ),
            (
                "no operations",
                rule(&[], &["*"], &["*"], &["*"], None),
                attrs(&u, c, "", "v1", "pods", "", "ns"),
                false,
            ),
            (
                "Namespaced scope, namespaced object",
                rule(&["*"], &["*"], &["*"], &["*"], Some("Namespaced")),
                attrs(&u, c, "", "v1", "pods", "", "ns"),
                true,
            ),
            (
                "Namespaced scope, cluster object",
                rule(&["*"], &["*"], &["*"], &["*"], Some("Namespaced")),
                attrs(&u, c, "", "v1", "nodes", "", ""),
                false,
            ),
            (
                "Namespaced scope, a namespace",
                rule(&["*"], &["*"], &["*"], &["*"], Some("Namespaced")),
                attrs(&u, c, "", "v1", "namespaces", "", "ns"),
                false,
            ),
            (
                "Cluster scope, a namespace",
                rule(&["*"], &["*"], &["*"], &["*"], Some("Cluster")),
                attrs(&u, c, "", "v1", "namespaces", "", "ns"),
                true,
            ),
            (
                "Cluster scope, cluster object",
                rule(&["*"], &["*"], &["*"], &["*"], Some("Cluster")),
                attrs(&u, c, "", "v1", "nodes", "", ""),
                true,
            ),
            (
                "Cluster scope, namespaced object",
                rule(&["*"], &["*"], &["*"], &["*"], Some("Cluster")),
                attrs(&u, c, "", "v1", "pods", "", "ns"),
                false,
            ),
            (
                "unknown scope",
                rule(&["*"], &["*"], &["*"], &["*"], Some("Other")),
                attrs(&u, c, "", "v1", "pods", "", "ns"),
                false,
            ),
        ];
        for (name, r, a, want) in cases {
            assert_eq!(rules_match(&[r], &a), want, "{name}");
        }
    }

    #[test]
    fn configuration_resources_are_exempt() {
        let u = UserInfo::default();
        let c = Operation::Create;
        let g = "admissionregistration.k8s.io";
        assert!(exempt(&attrs(
            &u,
            c,
            g,
            "v1",
            "validatingwebhookconfigurations",
            "",
            ""
        )));
        assert!(exempt(&attrs(
            &u,
            c,
            g,
            "v1",
            "mutatingwebhookconfigurations",
            "",
            ""
        )));
        assert!(!exempt(&attrs(&u, c, "", "v1", "pods", "", "ns")));
    }

    #[test]
    fn object_selector_matches_new_or_old() {
        let sel = LabelSelector {
            match_labels: Some([("a".to_owned(), "b".to_owned())].into()),
            ..LabelSelector::default()
        };
        let yes = serde_json::json!({"metadata": {"labels": {"a": "b"}}});
        let no = serde_json::json!({"metadata": {}});
        assert_eq!(object_selected(None, None, None), Ok(true));
        assert_eq!(object_selected(Some(&sel), Some(&yes), None), Ok(true));
        assert_eq!(object_selected(Some(&sel), Some(&no), Some(&yes)), Ok(true));
        assert_eq!(object_selected(Some(&sel), Some(&no), None), Ok(false));
        assert_eq!(object_selected(Some(&sel), None, None), Ok(false));
        let bad = LabelSelector {
            match_labels: Some([("a b".to_owned(), "c".to_owned())].into()),
            ..LabelSelector::default()
        };
        assert!(object_selected(Some(&bad), Some(&yes), None).is_err());
    }
}
