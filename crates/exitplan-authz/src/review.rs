//! The authorization.k8s.io reviews' pure parts: the attributes a
//! (Self/Local)SubjectAccessReview asks about (`AuthorizationAttributesFrom`,
//! `ResourceAttributesFrom`, `NonResourceAttributesFrom` in
//! `pkg/registry/authorization/util/helpers.go`) and the rules listing a
//! SelfSubjectRulesReview answers (`RBACAuthorizer.RulesFor` and
//! `getResourceRules`/`getNonResourceRules` in
//! `pkg/registry/authorization/selfsubjectrulesreview/rest.go`).

use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, NonResourceRule, ResourceAttributes, ResourceRule,
    SubjectAccessReviewSpec, SubjectAccessReviewStatus, SubjectRulesReviewStatus,
};
use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::rbac::policy::{ResolveError, aggregate_messages};
use crate::rbac::rule::list;
use crate::{Attributes, Decision, UserInfo};

/// The attributes of a review's `resourceAttributes` for `user`
/// (`ResourceAttributesFrom`): an empty version means every version (`*`).
/// Label and field selectors are not part of [`Attributes`] (RBAC ignores
/// them).
pub fn resource_attributes(user: UserInfo, r: &ResourceAttributes) -> Attributes {
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    let version = s(&r.version);
    Attributes {
        user,
        verb: s(&r.verb),
        resource_request: true,
        namespace: s(&r.namespace),
        api_group: s(&r.group),
        api_version: if version.is_empty() {
            "*".into()
        } else {
            version
        },
        resource: s(&r.resource),
        subresource: s(&r.subresource),
        name: s(&r.name),
        path: String::new(),
    }
}

/// The attributes of a review's `nonResourceAttributes` for `user`
/// (`NonResourceAttributesFrom`).
pub fn non_resource_attributes(user: UserInfo, r: &NonResourceAttributes) -> Attributes {
    Attributes {
        user,
        verb: r.verb.clone().unwrap_or_default(),
        path: r.path.clone().unwrap_or_default(),
        ..Attributes::default()
    }
}

/// The attributes a SubjectAccessReview (or LocalSubjectAccessReview) spec
/// asks about, for the user it names (`AuthorizationAttributesFrom`).
/// `None` when the spec has neither resource nor non-resource attributes
/// (validation refuses that first).
pub fn subject_access_review_attributes(spec: &SubjectAccessReviewSpec) -> Option<Attributes> {
    let user = UserInfo {
        name: spec.user.clone().unwrap_or_default(),
        uid: spec.uid.clone().unwrap_or_default(),
        groups: spec.groups.clone().unwrap_or_default(),
        extra: spec.extra.clone().unwrap_or_default().into_iter().collect(),
    };
    if let Some(r) = &spec.resource_attributes {
        return Some(resource_attributes(user, r));
    }
    spec.non_resource_attributes
        .as_ref()
        .map(|n| non_resource_attributes(user, n))
}

/// The status an access review answers with for an authorizer's decision:
/// `allowed`, `denied` (only for an explicit deny) and the reason (omitted
/// when empty), as upstream's SubjectAccessReview REST storages set them.
pub fn subject_access_review_status(decision: &Decision) -> SubjectAccessReviewStatus {
    let reason = decision.reason();
    SubjectAccessReviewStatus {
        allowed: decision.allowed(),
        denied: matches!(decision, Decision::Deny(_)).then_some(true),
        evaluation_error: None,
        reason: (!reason.is_empty()).then(|| reason.to_owned()),
    }
}

/// A non-empty list as `Some`, an empty one as `None` (Go's `omitempty`).
fn non_empty(v: &[String]) -> Option<Vec<String>> {
    (!v.is_empty()).then(|| v.to_vec())
}

/// The status of a SelfSubjectRulesReview from the user's rules and the
/// errors met resolving them ([`crate::rbac::Policy::rules_for`]): a
/// resource rule for each rule with resources, a non-resource rule for each
/// rule with non-resource URLs (a rule with both gives both), never
/// incomplete, and the errors as `evaluationError`.
pub fn subject_rules_review_status(
    rules: &[PolicyRule],
    errors: &[ResolveError],
) -> SubjectRulesReviewStatus {
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in rules {
        if !list(&rule.resources).is_empty() {
            resource_rules.push(ResourceRule {
                verbs: rule.verbs.clone(),
                api_groups: non_empty(list(&rule.api_groups)),
                resources: non_empty(list(&rule.resources)),
                resource_names: non_empty(list(&rule.resource_names)),
            });
        }
        if !list(&rule.non_resource_urls).is_empty() {
            non_resource_rules.push(NonResourceRule {
                verbs: rule.verbs.clone(),
                non_resource_urls: non_empty(list(&rule.non_resource_urls)),
            });
        }
    }
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    SubjectRulesReviewStatus {
        evaluation_error: (!messages.is_empty()).then(|| aggregate_messages(&messages)),
        incomplete: false,
        non_resource_rules,
        resource_rules,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbac::Policy;
    use crate::rbac::rule::new_rule;
    use crate::rbac::testing::*;

    #[test]
    fn rules_review_splits_resource_and_non_resource_rules() {
        let policy = Policy::new(
            vec![],
            vec![
                binding("ns1", "a", "ClusterRole", "mixed", &["User:bob"]),
                binding("ns1", "b", "Role", "missing", &["User:bob"]),
            ],
            vec![cluster_role(
                "mixed",
                vec![
                    new_rule(&["get", "list"], &[""], &["pods"], &[]),
                    new_rule(&["get"], &[], &[], &["/healthz"]),
                    new_rule(&["*"], &["*"], &["*"], &["*"]),
                ],
            )],
            vec![],
        );
        let (rules, errors) = policy.rules_for(&user("bob", ""), "ns1");
        let status = subject_rules_review_status(&rules, &errors);
        let json = serde_json::to_value(&status).expect("status serializes");
        assert_eq!(
            json,
            serde_json::json!({
                "evaluationError": "role.rbac.authorization.k8s.io \"missing\" not found",
                "incomplete": false,
                "resourceRules": [
                    {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]},
                    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                ],
                "nonResourceRules": [
                    {"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
                    {"verbs": ["*"], "nonResourceURLs": ["*"]},
                ],
            })
        );
        let none = subject_rules_review_status(&[], &[]);
        assert_eq!(none.evaluation_error, None);
        assert!(none.resource_rules.is_empty() && none.non_resource_rules.is_empty());
    }

    #[test]
    fn access_review_status() {
        let allow = subject_access_review_status(&Decision::Allow("RBAC: allowed by x".into()));
        assert!(allow.allowed);
        assert_eq!(allow.denied, None);
        assert_eq!(allow.reason.as_deref(), Some("RBAC: allowed by x"));
        let none = subject_access_review_status(&Decision::NoOpinion(String::new()));
        assert!(!none.allowed);
        assert_eq!((none.denied, none.reason), (None, None));
        let deny = subject_access_review_status(&Decision::Deny("no".into()));
        assert_eq!((deny.allowed, deny.denied), (false, Some(true)));
    }

    #[test]
    fn access_review_attributes() {
        let spec = SubjectAccessReviewSpec {
            user: Some("bob".into()),
            groups: Some(vec!["devs".into()]),
            resource_attributes: Some(ResourceAttributes {
                verb: Some("create".into()),
                resource: Some("pods".into()),
                subresource: Some("eviction".into()),
                namespace: Some("ns".into()),
                name: Some("p".into()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        };
        let a = subject_access_review_attributes(&spec).expect("resource attributes");
        assert_eq!(a.user.name, "bob");
        assert_eq!(a.user.groups, ["devs"]);
        assert!(a.resource_request);
        assert_eq!(
            (a.verb.as_str(), a.api_version.as_str(), a.resource.as_str()),
            ("create", "*", "pods")
        );
        assert_eq!(
            (
                a.subresource.as_str(),
                a.namespace.as_str(),
                a.name.as_str()
            ),
            ("eviction", "ns", "p")
        );

        let spec = SubjectAccessReviewSpec {
            user: Some("bob".into()),
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some("/metrics".into()),
                verb: Some("get".into()),
            }),
            ..SubjectAccessReviewSpec::default()
        };
        let a = subject_access_review_attributes(&spec).expect("non-resource attributes");
        assert!(!a.resource_request);
        assert_eq!((a.verb.as_str(), a.path.as_str()), ("get", "/metrics"));
        assert_eq!(
            subject_access_review_attributes(&SubjectAccessReviewSpec::default()),
            None
        );
    }
}
