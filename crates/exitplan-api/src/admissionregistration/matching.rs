//! Which webhooks a request calls — kube-apiserver's pure predicates
//! (`k8s.io/apiserver/pkg/admission/plugin/webhook`):
//!
//! * [`rule_matches`] — `rules.Matcher`: scope, operation, group, version,
//!   resource with subresource forms (`pods`, `pods/*`, `*/status`, `*`, `*/*`);
//! * [`invocation_resource`] — `ShouldCallHook`'s rule loop: the request's
//!   own resource first, then (`matchPolicy: Equivalent`) each equivalent
//!   resource the caller lists, earlier rules first;
//! * [`namespace_selector_matches`] — `namespace.Matcher`: cluster-scoped
//!   objects other than Namespaces always match; a Namespace's own labels
//!   are used on its CREATE and UPDATE; otherwise the namespace's labels
//!   (a missing namespace is a 404);
//! * [`object_selector_matches`] — `object.Matcher`: the new or the old object.
//!
//! [`should_call_hook`] puts them together in `ShouldCallHook`'s order: the
//! namespace selector, the object selector, then the rules; selector errors
//! are reported only when a rule matched. `matchConditions` (CEL) come
//! after, in the caller; so does the exemption of the admission
//! configuration kinds themselves ([`is_exempt_admission_configuration_resource`]).

use std::collections::BTreeMap;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, RuleWithOperations, ValidatingWebhook,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::Value;

use crate::selector::{self, Selector};

/// A group, version and resource (`schema.GroupVersionResource`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct GroupVersionResource {
    /// API group (`""` for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
}

impl GroupVersionResource {
    /// A resource from its parts.
    pub fn new(group: &str, version: &str, resource: &str) -> Self {
        GroupVersionResource {
            group: group.to_owned(),
            version: version.to_owned(),
            resource: resource.to_owned(),
        }
    }
}

/// What the predicates read of a request (`admission.Attributes`).
#[derive(Clone, Copy, Debug)]
pub struct RequestAttributes<'a> {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: &'a str,
    /// The API group of the requested resource.
    pub group: &'a str,
    /// Its version.
    pub version: &'a str,
    /// The plural resource (`pods`).
    pub resource: &'a str,
    /// The subresource (`""` for the main resource, `status`, `eviction`, …).
    pub subresource: &'a str,
    /// The request's namespace: `""` for cluster-scoped objects; for a
    /// Namespace itself kube-apiserver puts its name here (except on create).
    pub namespace: &'a str,
}

impl RequestAttributes<'_> {
    fn is_namespace_resource(&self, group: &str, version: &str, resource: &str) -> bool {
        group.is_empty() && version == "v1" && resource == "namespaces"
    }
}

fn exact_or_wildcard(items: Option<&[String]>, requested: &str) -> bool {
    items
        .unwrap_or_default()
        .iter()
        .any(|i| i == "*" || i == requested)
}

/// `Matcher.scope`: no scope or `*` matches everything; `Namespaced`
/// matches namespaced requests that are not for Namespaces; `Cluster`
/// matches cluster-scoped requests and Namespaces.
pub fn scope_matches(rule: &RuleWithOperations, attrs: &RequestAttributes<'_>) -> bool {
    let is_ns = attrs.is_namespace_resource(attrs.group, attrs.version, attrs.resource);
    match rule.scope.as_deref() {
        None | Some("*") => true,
        Some("Namespaced") => !is_ns && !attrs.namespace.is_empty(),
        Some("Cluster") => is_ns || attrs.namespace.is_empty(),
        Some(_) => false,
    }
}

/// `Matcher.operation`: `*` or the request's operation.
pub fn operation_matches(rule: &RuleWithOperations, attrs: &RequestAttributes<'_>) -> bool {
    exact_or_wildcard(rule.operations.as_deref(), attrs.operation)
}

/// `Matcher.group`: `*` or the request's group.
pub fn group_matches(rule: &RuleWithOperations, attrs: &RequestAttributes<'_>) -> bool {
    exact_or_wildcard(rule.api_groups.as_deref(), attrs.group)
}

/// `Matcher.version`: `*` or the request's version.
pub fn version_matches(rule: &RuleWithOperations, attrs: &RequestAttributes<'_>) -> bool {
    exact_or_wildcard(rule.api_versions.as_deref(), attrs.version)
}

/// `Matcher.resource`: some entry `res[/sub]` whose resource is `*` or the
/// request's and whose subresource is `*` or the request's (no `/sub`
/// means the main resource only).
pub fn resource_matches(rule: &RuleWithOperations, attrs: &RequestAttributes<'_>) -> bool {
    rule.resources.iter().flatten().any(|entry| {
        let (res, sub) = entry.split_once('/').unwrap_or((entry, ""));
        (res == "*" || res == attrs.resource) && (sub == "*" || sub == attrs.subresource)
    })
}

/// `rules.Matcher.Matches`: scope, operation, group, version and resource.
pub fn rule_matches(rule: &RuleWithOperations, attrs: &RequestAttributes<'_>) -> bool {
    scope_matches(rule, attrs)
        && operation_matches(rule, attrs)
        && group_matches(rule, attrs)
        && version_matches(rule, attrs)
        && resource_matches(rule, attrs)
}

/// The resource a webhook is called for, or `None` when no rule matches
/// (`ShouldCallHook`'s rule loop): the request's own resource when a rule
/// matches it; else, with `matchPolicy: Equivalent`, the first
/// `equivalents` entry (other than the request's own resource) that a rule
/// matches, trying rules in order. `equivalents` are the resources serving
/// the same objects (`EquivalentResourcesFor`: e.g. `apps/v1 deployments`
/// for `extensions/v1beta1 deployments`). For an equivalent match the
/// caller sends the AdmissionReview with that resource and its kind.
pub fn invocation_resource(
    rules: &[RuleWithOperations],
    match_policy: Option<&str>,
    attrs: &RequestAttributes<'_>,
    equivalents: &[GroupVersionResource],
) -> Option<GroupVersionResource> {
    let own = GroupVersionResource::new(attrs.group, attrs.version, attrs.resource);
    if rules.iter().any(|r| rule_matches(r, attrs)) {
        return Some(own);
    }
    if match_policy != Some("Equivalent") {
        return None;
    }
    for rule in rules {
        for eq in equivalents.iter().filter(|e| **e != own) {
            let overridden = RequestAttributes {
                group: &eq.group,
                version: &eq.version,
                resource: &eq.resource,
                ..*attrs
            };
            if rule_matches(rule, &overridden) {
                return Some(eq.clone());
            }
        }
    }
    None
}

/// Why a selector could not be evaluated (`ShouldCallHook` reports it only
/// when a rule matched).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SelectorMatchError {
    /// The selector does not convert (500, `apierrors.NewInternalError`).
    #[error("{0}")]
    InvalidSelector(#[from] selector::SelectorError),
    /// The request's namespace does not exist (404, `namespaces "<name>" not found`).
    #[error("namespaces \"{0}\" not found")]
    NamespaceNotFound(String),
}

/// The labels of a JSON object's `metadata.labels` (`None` when it has none).
pub fn labels_of(object: &Value) -> Option<BTreeMap<String, String>> {
    let labels = object.pointer("/metadata/labels")?.as_object()?;
    Some(
        labels
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect(),
    )
}

/// Where the labels a `namespaceSelector` is evaluated against come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NamespaceLabelsSource {
    /// Nothing to look up: the selector matches (a cluster-scoped object
    /// other than a Namespace, or an empty selector).
    Unconditional,
    /// The request's object itself (CREATE or UPDATE of a Namespace).
    RequestObject,
    /// The stored Namespace of this name.
    Namespace(String),
}

/// `GetNamespaceLabels`' choice, for a webhook whose selector is `selector`.
pub fn namespace_labels_source(
    selector: Option<&LabelSelector>,
    attrs: &RequestAttributes<'_>,
) -> Result<NamespaceLabelsSource, SelectorMatchError> {
    if attrs.namespace.is_empty() && attrs.resource != "namespaces" {
        return Ok(NamespaceLabelsSource::Unconditional);
    }
    if selector::as_selector(selector)? == Selector::Everything {
        return Ok(NamespaceLabelsSource::Unconditional);
    }
    if attrs.resource == "namespaces"
        && attrs.subresource.is_empty()
        && matches!(attrs.operation, "CREATE" | "UPDATE")
    {
        return Ok(NamespaceLabelsSource::RequestObject);
    }
    Ok(NamespaceLabelsSource::Namespace(attrs.namespace.to_owned()))
}

/// `MatchNamespaceSelector`. `object` is the request's object (its labels
/// are used on CREATE/UPDATE of a Namespace); `namespace_labels` looks up
/// the labels of a stored Namespace (`None`: it does not exist; `Some(None)`:
/// it has no labels).
pub fn namespace_selector_matches(
    selector: Option<&LabelSelector>,
    attrs: &RequestAttributes<'_>,
    object: Option<&Value>,
    namespace_labels: impl FnOnce(&str) -> Option<Option<BTreeMap<String, String>>>,
) -> Result<bool, SelectorMatchError> {
    let labels = match namespace_labels_source(selector, attrs)? {
        NamespaceLabelsSource::Unconditional => return Ok(true),
        NamespaceLabelsSource::RequestObject => object.and_then(labels_of),
        NamespaceLabelsSource::Namespace(name) => match namespace_labels(&name) {
            Some(labels) => labels,
            None => return Err(SelectorMatchError::NamespaceNotFound(name)),
        },
    };
    Ok(selector::as_selector(selector)?.matches(labels.as_ref()))
}

/// `MatchObjectSelector`: an empty selector matches; otherwise the new
/// object's or the old object's labels must match (an absent object never
/// does: a DELETE is matched on the old object, a CONNECT on neither).
pub fn object_selector_matches(
    selector: Option<&LabelSelector>,
    object: Option<&Value>,
    old_object: Option<&Value>,
) -> Result<bool, SelectorMatchError> {
    let sel = selector::as_selector(selector)?;
    if sel == Selector::Everything {
        return Ok(true);
    }
    let matches = |o: Option<&Value>| {
        o.filter(|v| v.is_object())
            .is_some_and(|v| sel.matches(labels_of(v).as_ref()))
    };
    Ok(matches(object) || matches(old_object))
}

/// What [`should_call_hook`] reads of a webhook.
#[derive(Clone, Copy, Debug)]
pub struct HookMatch<'a> {
    /// `rules`.
    pub rules: &'a [RuleWithOperations],
    /// `matchPolicy` (`Equivalent` after defaulting).
    pub match_policy: Option<&'a str>,
    /// `namespaceSelector`.
    pub namespace_selector: Option<&'a LabelSelector>,
    /// `objectSelector`.
    pub object_selector: Option<&'a LabelSelector>,
}

impl<'a> From<&'a ValidatingWebhook> for HookMatch<'a> {
    fn from(h: &'a ValidatingWebhook) -> Self {
        HookMatch {
            rules: h.rules.as_deref().unwrap_or_default(),
            match_policy: h.match_policy.as_deref(),
            namespace_selector: h.namespace_selector.as_ref(),
            object_selector: h.object_selector.as_ref(),
        }
    }
}

impl<'a> From<&'a MutatingWebhook> for HookMatch<'a> {
    fn from(h: &'a MutatingWebhook) -> Self {
        HookMatch {
            rules: h.rules.as_deref().unwrap_or_default(),
            match_policy: h.match_policy.as_deref(),
            namespace_selector: h.namespace_selector.as_ref(),
            object_selector: h.object_selector.as_ref(),
        }
    }
}

/// `ShouldCallHook` without `matchConditions`: `Ok(Some(resource))` when
/// the webhook is called (with that resource: the request's own, or an
/// equivalent one), `Ok(None)` when it is not, `Err` when a rule matched
/// but a selector could not be evaluated (500 for an invalid selector, 404
/// for a missing namespace). `object`/`old_object` are the request's new
/// and old objects; `namespace_labels` looks up a stored Namespace's
/// labels (see [`namespace_selector_matches`]).
pub fn should_call_hook(
    hook: &HookMatch<'_>,
    attrs: &RequestAttributes<'_>,
    object: Option<&Value>,
    old_object: Option<&Value>,
    equivalents: &[GroupVersionResource],
    namespace_labels: impl FnOnce(&str) -> Option<Option<BTreeMap<String, String>>>,
) -> Result<Option<GroupVersionResource>, SelectorMatchError> {
    let ns = namespace_selector_matches(hook.namespace_selector, attrs, object, namespace_labels);
    if ns == Ok(false) {
        return Ok(None);
    }
    let obj = object_selector_matches(hook.object_selector, object, old_object);
    if obj == Ok(false) {
        return Ok(None);
    }
    let Some(resource) = invocation_resource(hook.rules, hook.match_policy, attrs, equivalents)
    else {
        return Ok(None);
    };
    ns?;
    obj?;
    Ok(Some(resource))
}

/// `IsExemptAdmissionConfigurationResource`: requests for the admission
/// configuration kinds themselves are never sent to webhooks.
pub fn is_exempt_admission_configuration_resource(group: &str, kind: &str) -> bool {
    group == "admissionregistration.k8s.io"
        && matches!(
            kind,
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strs(v: &[&str]) -> Option<Vec<String>> {
        Some(v.iter().map(|s| (*s).to_owned()).collect())
    }

    /// Upstream's `a(group, version, resource, subresource, name, op)`: in namespace `ns`.
    fn a(
        group: &'static str,
        version: &'static str,
        resource: &'static str,
        sub: &'static str,
        op: &'static str,
    ) -> RequestAttributes<'static> {
        RequestAttributes {
            operation: op,
            group,
            version,
            resource,
            subresource: sub,
            namespace: "ns",
        }
    }

    fn cluster(
        group: &'static str,
        version: &'static str,
        resource: &'static str,
        sub: &'static str,
    ) -> RequestAttributes<'static> {
        RequestAttributes {
            namespace: "",
            ..a(group, version, resource, sub, "CREATE")
        }
    }

    type Part = fn(&RuleWithOperations, &RequestAttributes<'_>) -> bool;

    fn check(
        part: Part,
        table: Vec<(
            &str,
            RuleWithOperations,
            Vec<RequestAttributes<'_>>,
            Vec<RequestAttributes<'_>>,
        )>,
    ) {
        for (name, rule, yes, no) in table {
            for (i, m) in yes.iter().enumerate() {
                assert!(part(&rule, m), "{name}: expected match {i}: {m:?}");
            }
            for (i, m) in no.iter().enumerate() {
                assert!(!part(&rule, m), "{name}: expected no match {i}: {m:?}");
            }
        }
    }

    fn groups(g: &[&str]) -> RuleWithOperations {
        RuleWithOperations {
            api_groups: strs(g),
            ..Default::default()
        }
    }

    /// `TestGroup`.
    #[test]
    fn group_table() {
        check(
            group_matches,
            vec![
                (
                    "wildcard",
                    groups(&["*"]),
                    vec![a("g", "v", "r", "", "CREATE")],
                    vec![],
                ),
                (
                    "exact",
                    groups(&["g1", "g2"]),
                    vec![
                        a("g1", "v", "r", "", "CREATE"),
                        a("g2", "v2", "r3", "", "CREATE"),
                    ],
                    vec![
                        a("g3", "v", "r", "", "CREATE"),
                        a("g4", "v", "r", "", "CREATE"),
                    ],
                ),
            ],
        );
    }

    /// `TestVersion`.
    #[test]
    fn version_table() {
        let versions = |v: &[&str]| RuleWithOperations {
            api_versions: strs(v),
            ..Default::default()
        };
        check(
            version_matches,
            vec![
                (
                    "wildcard",
                    versions(&["*"]),
                    vec![a("g", "v", "r", "", "CREATE")],
                    vec![],
                ),
                (
                    "exact",
                    versions(&["v1", "v2"]),
                    vec![
                        a("g1", "v1", "r", "", "CREATE"),
                        a("g2", "v2", "r", "", "CREATE"),
                    ],
                    vec![
                        a("g1", "v3", "r", "", "CREATE"),
                        a("g2", "v4", "r", "", "CREATE"),
                    ],
                ),
            ],
        );
    }

    /// `TestOperation`.
    #[test]
    fn operation_table() {
        let ops = |o: &[&str]| RuleWithOperations {
            operations: strs(o),
            ..Default::default()
        };
        let op = |o: &'static str| a("g", "v", "r", "", o);
        check(
            operation_matches,
            vec![
                (
                    "wildcard",
                    ops(&["*"]),
                    vec![op("CREATE"), op("UPDATE"), op("DELETE"), op("CONNECT")],
                    vec![],
                ),
                (
                    "create",
                    ops(&["CREATE"]),
                    vec![op("CREATE")],
                    vec![op("UPDATE"), op("DELETE"), op("CONNECT")],
                ),
                (
                    "update",
                    ops(&["UPDATE"]),
                    vec![op("UPDATE")],
                    vec![op("CREATE"), op("DELETE"), op("CONNECT")],
                ),
                (
                    "delete",
                    ops(&["DELETE"]),
                    vec![op("DELETE")],
                    vec![op("CREATE"), op("UPDATE"), op("CONNECT")],
                ),
                (
                    "connect",
                    ops(&["CONNECT"]),
                    vec![op("CONNECT")],
                    vec![op("CREATE"), op("UPDATE"), op("DELETE")],
                ),
                (
                    "multiple",
                    ops(&["UPDATE", "DELETE"]),
                    vec![op("UPDATE"), op("DELETE")],
                    vec![op("CREATE"), op("CONNECT")],
                ),
            ],
        );
    }

    fn resources(r: &[&str]) -> RuleWithOperations {
        RuleWithOperations {
            resources: strs(r),
            ..Default::default()
        }
    }

    /// `TestResource`.
    #[test]
    fn resource_table() {
        let c = |g, r, s| a(g, "v", r, s, "CREATE");
        check(
            resource_matches,
            vec![
                (
                    "no subresources",
                    resources(&["*"]),
                    vec![c("g", "r", ""), c("2", "r2", "")],
                    vec![c("g", "r", "exec"), c("2", "r2", "proxy")],
                ),
                (
                    "r & subresources",
                    resources(&["r/*"]),
                    vec![c("g", "r", ""), c("g", "r", "exec")],
                    vec![c("2", "r2", ""), c("2", "r2", "proxy")],
                ),
                (
                    "r & subresources or r2",
                    resources(&["r/*", "r2"]),
                    vec![c("g", "r", ""), c("g", "r", "exec"), c("2", "r2", "")],
                    vec![c("2", "r2", "proxy")],
                ),
                (
                    "proxy or exec",
                    resources(&["*/proxy", "*/exec"]),
                    vec![
                        c("g", "r", "exec"),
                        c("2", "r2", "proxy"),
                        c("2", "r3", "proxy"),
                    ],
                    vec![c("g", "r", ""), c("2", "r2", ""), c("2", "r4", "scale")],
                ),
                (
                    "everything with */*",
                    resources(&["*/*"]),
                    vec![c("g", "r", ""), c("g", "pods", "eviction")],
                    vec![],
                ),
            ],
        );
    }

    /// `TestScope`.
    #[test]
    fn scope_table() {
        let scoped = |s: &str| RuleWithOperations {
            resources: strs(&["*"]),
            scope: Some(s.to_owned()),
            ..Default::default()
        };
        let ns = |g, v, r, s| a(g, v, r, s, "CREATE");
        check(
            scope_matches,
            vec![
                (
                    "cluster scope",
                    scoped("Cluster"),
                    vec![
                        cluster("g", "v", "r", ""),
                        cluster("g", "v", "r", "exec"),
                        cluster("", "v1", "namespaces", ""),
                        cluster("", "v1", "namespaces", "finalize"),
                        ns("", "v1", "namespaces", ""),
                        ns("", "v1", "namespaces", "finalize"),
                    ],
                    vec![ns("g", "v", "r", ""), ns("g", "v", "r", "exec")],
                ),
                (
                    "namespace scope",
                    scoped("Namespaced"),
                    vec![ns("g", "v", "r", ""), ns("g", "v", "r", "exec")],
                    vec![
                        cluster("", "v1", "namespaces", ""),
                        cluster("", "v1", "namespaces", "finalize"),
                        ns("", "v1", "namespaces", ""),
                        ns("", "v1", "namespaces", "finalize"),
                        cluster("g", "v", "r", ""),
                        cluster("g", "v", "r", "exec"),
                    ],
                ),
                (
                    "all scopes",
                    scoped("*"),
                    vec![
                        ns("g", "v", "r", ""),
                        ns("g", "v", "r", "exec"),
                        cluster("g", "v", "r", ""),
                        cluster("g", "v", "r", "exec"),
                        cluster("", "v1", "namespaces", ""),
                        cluster("", "v1", "namespaces", "finalize"),
                        ns("", "v1", "namespaces", ""),
                        ns("", "v1", "namespaces", "finalize"),
                    ],
                    vec![],
                ),
            ],
        );
    }

    fn rule(ops: &[&str], g: &[&str], v: &[&str], r: &[&str]) -> RuleWithOperations {
        RuleWithOperations {
            operations: strs(ops),
            api_groups: strs(g),
            api_versions: strs(v),
            resources: strs(r),
            scope: None,
        }
    }

    #[test]
    fn whole_rules_and_equivalent_resources() {
        let deploy_beta = RequestAttributes {
            operation: "CREATE",
            group: "extensions",
            version: "v1beta1",
            resource: "deployments",
            subresource: "",
            namespace: "default",
        };
        let apps = GroupVersionResource::new("apps", "v1", "deployments");
        let equivalents = [
            GroupVersionResource::new("extensions", "v1beta1", "deployments"),
            apps.clone(),
        ];
        let on_apps = [rule(&["CREATE"], &["apps"], &["v1"], &["deployments"])];
        assert_eq!(
            invocation_resource(&on_apps, Some("Equivalent"), &deploy_beta, &equivalents),
            Some(apps)
        );
        assert_eq!(
            invocation_resource(&on_apps, Some("Exact"), &deploy_beta, &equivalents),
            None
        );
        let on_own = [
            rule(&["*"], &["apps"], &["v1"], &["deployments"]),
            rule(&["*"], &["extensions"], &["*"], &["deployments"]),
        ];
        assert_eq!(
            invocation_resource(&on_own, Some("Equivalent"), &deploy_beta, &equivalents),
            Some(GroupVersionResource::new(
                "extensions",
                "v1beta1",
                "deployments"
            )),
            "the request's own resource first"
        );
        let eviction = RequestAttributes {
            operation: "CREATE",
            group: "",
            version: "v1",
            resource: "pods",
            subresource: "eviction",
            namespace: "default",
        };
        assert!(rule_matches(
            &rule(&["CREATE"], &[""], &["v1"], &["pods/eviction"]),
            &eviction
        ));
        assert!(!rule_matches(
            &rule(&["CREATE"], &[""], &["v1"], &["pods"]),
            &eviction
        ));
        assert!(!rule_matches(
            &rule(&["UPDATE"], &[""], &["v1"], &["pods/*"]),
            &eviction
        ));
        assert!(rule_matches(
            &rule(&["*"], &["*"], &["*"], &["*/*"]),
            &eviction
        ));
        assert!(rule_matches(
            &RuleWithOperations {
                scope: Some("Namespaced".into()),
                ..rule(&["CREATE"], &[""], &["v1"], &["pods/eviction"])
            },
            &eviction
        ));
    }

    fn selector(v: Value) -> LabelSelector {
        serde_json::from_value(v).expect("selector")
    }

    /// `TestGetNamespaceLabels` and `TestNotExemptClusterScopedResource` of
    /// upstream's namespace matcher_test.go, with the selector semantics.
    #[test]
    fn namespace_selector_table() {
        let sel = selector(json!({"matchLabels": {"runlevel": "1"}}));
        let ns_object = json!({"metadata": {"name": "n", "labels": {"runlevel": "1"}}});
        let stored = |name: &str| match name {
            "default" => Some(Some(BTreeMap::from([("runlevel".into(), "0".into())]))),
            "one" => Some(Some(BTreeMap::from([("runlevel".into(), "1".into())]))),
            "bare" => Some(None),
            _ => None,
        };
        let req =
            |op: &'static str, resource: &'static str, sub: &'static str, ns: &'static str| {
                RequestAttributes {
                    operation: op,
                    group: "",
                    version: "v1",
                    resource,
                    subresource: sub,
                    namespace: ns,
                }
            };
        let cases: Vec<(
            &str,
            RequestAttributes<'_>,
            Result<bool, SelectorMatchError>,
        )> = vec![
            (
                "cluster-scoped object: never exempted",
                req("CREATE", "nodes", "", ""),
                Ok(true),
            ),
            (
                "namespace create: its own labels",
                req("CREATE", "namespaces", "", ""),
                Ok(true),
            ),
            (
                "namespace update: its own labels",
                req("UPDATE", "namespaces", "", "n"),
                Ok(true),
            ),
            (
                "namespace delete: the stored namespace",
                req("DELETE", "namespaces", "", "default"),
                Ok(false),
            ),
            (
                "namespace subresource: the stored namespace",
                req("UPDATE", "namespaces", "finalize", "one"),
                Ok(true),
            ),
            (
                "namespaced object, matching namespace",
                req("CREATE", "pods", "", "one"),
                Ok(true),
            ),
            (
                "namespaced object, other namespace",
                req("CREATE", "pods", "", "default"),
                Ok(false),
            ),
            (
                "namespace without labels",
                req("CREATE", "pods", "", "bare"),
                Ok(false),
            ),
            (
                "missing namespace",
                req("CREATE", "pods", "", "gone"),
                Err(SelectorMatchError::NamespaceNotFound("gone".into())),
            ),
        ];
        for (name, attrs, want) in cases {
            assert_eq!(
                namespace_selector_matches(Some(&sel), &attrs, Some(&ns_object), stored),
                want,
                "{name}"
            );
        }
        // An empty selector needs no namespace at all.
        assert_eq!(
            namespace_selector_matches(
                Some(&LabelSelector::default()),
                &req("CREATE", "pods", "", "gone"),
                None,
                |_| None
            ),
            Ok(true)
        );
        let bad = selector(json!({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}));
        assert!(matches!(
            namespace_selector_matches(Some(&bad), &req("CREATE", "pods", "", "one"), None, stored),
            Err(SelectorMatchError::InvalidSelector(_))
        ));
    }

    /// `TestObjectSelector` of upstream's object matcher_test.go.
    #[test]
    fn object_selector_table() {
        let sel = selector(json!({"matchLabels": {"runlevel": "0"}}));
        let with = json!({"metadata": {"labels": {"runlevel": "0"}}});
        let without = json!({"metadata": {"labels": {"runlevel": "1"}}});
        let cases: Vec<(&str, Option<&Value>, Option<&Value>, bool)> = vec![
            ("new object matches", Some(&with), None, true),
            ("old object matches (delete)", None, Some(&with), true),
            ("either matches", Some(&without), Some(&with), true),
            ("neither matches", Some(&without), Some(&without), false),
            ("no objects (connect)", None, None, false),
        ];
        for (name, new, old, want) in cases {
            assert_eq!(
                object_selector_matches(Some(&sel), new, old),
                Ok(want),
                "{name}"
            );
        }
        assert_eq!(
            object_selector_matches(Some(&LabelSelector::default()), None, None),
            Ok(true),
            "empty selector"
        );
    }

    /// `ShouldCallHook`'s order: a selector that does not match skips the
    /// webhook; a selector error only matters when a rule matched.
    #[test]
    fn should_call_hook_table() {
        let hook: ValidatingWebhook = serde_json::from_value(json!({
            "name": "h.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": "https://h.example.com"}, "matchPolicy": "Equivalent",
            "namespaceSelector": {"matchLabels": {"team": "a"}},
            "objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["pods", "pods/eviction"], "scope": "*"}]
        }))
        .expect("hook");
        let team = |name: &str| match name {
            "a" => Some(Some(BTreeMap::from([("team".into(), "a".into())]))),
            "b" => Some(Some(BTreeMap::from([("team".into(), "b".into())]))),
            _ => None,
        };
        let attrs =
            |op: &'static str, resource: &'static str, sub: &'static str, ns: &'static str| {
                RequestAttributes {
                    operation: op,
                    group: "",
                    version: "v1",
                    resource,
                    subresource: sub,
                    namespace: ns,
                }
            };
        let pod = json!({"metadata": {"name": "p"}});
        let skipped = json!({"metadata": {"name": "p", "labels": {"skip": "yes"}}});
        let pods = GroupVersionResource::new("", "v1", "pods");
        type Want = Result<Option<GroupVersionResource>, SelectorMatchError>;
        let cases: Vec<(&str, RequestAttributes<'_>, Option<&Value>, Want)> = vec![
            (
                "called",
                attrs("CREATE", "pods", "", "a"),
                Some(&pod),
                Ok(Some(pods.clone())),
            ),
            (
                "other team's namespace",
                attrs("CREATE", "pods", "", "b"),
                Some(&pod),
                Ok(None),
            ),
            (
                "object opted out",
                attrs("CREATE", "pods", "", "a"),
                Some(&skipped),
                Ok(None),
            ),
            (
                "no rule for updates",
                attrs("UPDATE", "pods", "", "a"),
                Some(&pod),
                Ok(None),
            ),
            (
                "eviction subresource (the Eviction is the object)",
                attrs("CREATE", "pods", "eviction", "a"),
                Some(&pod),
                Ok(Some(pods.clone())),
            ),
            (
                "no object: the object selector cannot match",
                attrs("CREATE", "pods", "eviction", "a"),
                None,
                Ok(None),
            ),
            (
                "missing namespace, rule matches",
                attrs("CREATE", "pods", "", "gone"),
                Some(&pod),
                Err(SelectorMatchError::NamespaceNotFound("gone".into())),
            ),
            (
                "missing namespace, no rule matches",
                attrs("CREATE", "configmaps", "", "gone"),
                Some(&pod),
                Ok(None),
            ),
        ];
        for (name, a, object, want) in cases {
            assert_eq!(
                should_call_hook(&HookMatch::from(&hook), &a, object, None, &[], team),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn admission_configuration_kinds_are_exempt() {
        assert!(is_exempt_admission_configuration_resource(
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration"
        ));
        assert!(!is_exempt_admission_configuration_resource("", "Pod"));
    }
}
