//! rbac.authorization.k8s.io/v1: validation (`pkg/apis/rbac/validation`),
//! defaulting (`pkg/apis/rbac/v1/defaults.go`) and the registry strategies
//! (`pkg/registry/rbac/*/strategy.go`) of the four kinds — storage rules
//! only: authorization, escalation checks and aggregation live elsewhere.
//!
//! * this file — the rules the kinds share: names ([`validate_rbac_name`]),
//!   policy rules ([`validate_policy_rule`]), subjects
//!   ([`validate_role_binding_subject`], [`default_subject`]) and role
//!   references;
//! * [`role`] — Role and ClusterRole (with its `aggregationRule`);
//! * [`binding`] — RoleBinding and ClusterRoleBinding (immutable `roleRef`).

use k8s_openapi::api::rbac::v1::{PolicyRule, RoleRef, Subject};

use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::generic::path_segment_name_errors;
use crate::{formats, render};

pub mod binding;
pub mod role;

/// The API group (`rbac.GroupName`), also the `apiGroup` of role references
/// and of User and Group subjects.
pub const GROUP_NAME: &str = "rbac.authorization.k8s.io";
/// Subject kind of a service account (`rbac.ServiceAccountKind`).
pub const SERVICE_ACCOUNT_KIND: &str = "ServiceAccount";
/// Subject kind of a user (`rbac.UserKind`).
pub const USER_KIND: &str = "User";
/// Subject kind of a group (`rbac.GroupKind`).
pub const GROUP_KIND: &str = "Group";

/// `ValidateRBACName`: roles, bindings and role references need only be
/// valid path segments (`prefix` is ignored, as upstream does).
pub fn validate_rbac_name(name: &str, _prefix: bool) -> Vec<String> {
    path_segment_name_errors(name, false)
}

fn is_empty(v: Option<&Vec<String>>) -> bool {
    v.is_none_or(Vec::is_empty)
}

/// `ValidatePolicyRule`: verbs are required; a rule names either
/// non-resource URLs (cluster roles only) or API groups and resources.
pub fn validate_policy_rule(rule: &PolicyRule, is_namespaced: bool, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if rule.verbs.is_empty() {
        errs.push(Error::required(
            &path.child("verbs"),
            "verbs must contain at least one value",
        ));
    }
    if let Some(urls) = rule.non_resource_urls.as_ref().filter(|u| !u.is_empty()) {
        let urls_path = path.child("nonResourceURLs");
        if is_namespaced {
            errs.push(Error::invalid(
                &urls_path,
                BadValue::Json(render::strings(urls)),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if !is_empty(rule.api_groups.as_ref())
            || !is_empty(rule.resources.as_ref())
            || !is_empty(rule.resource_names.as_ref())
        {
            errs.push(Error::invalid(
                &urls_path,
                BadValue::Json(render::strings(urls)),
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if is_empty(rule.api_groups.as_ref()) {
        errs.push(Error::required(
            &path.child("apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if is_empty(rule.resources.as_ref()) {
        errs.push(Error::required(
            &path.child("resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

/// The rules of a role's `rules` list, each at `rules[i]`.
pub(crate) fn validate_rules(rules: Option<&Vec<PolicyRule>>, is_namespaced: bool) -> ErrorList {
    let path = Path::new("rules");
    rules
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(i, rule)| validate_policy_rule(rule, is_namespaced, &path.index(i)))
        .collect()
}

/// `ValidateRoleBindingSubject`: a name, and per kind — ServiceAccount: a
/// DNS subdomain name, the core group, a namespace in cluster bindings;
/// User and Group: the RBAC group.
pub fn validate_role_binding_subject(
    subject: &Subject,
    is_namespaced: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let name = subject.name.as_str();
    let api_group = subject.api_group.as_deref().unwrap_or_default();
    if name.is_empty() {
        errs.push(Error::required(&path.child("name"), ""));
    }
    match subject.kind.as_str() {
        SERVICE_ACCOUNT_KIND => {
            if !name.is_empty() {
                for msg in formats::is_dns1123_subdomain(name) {
                    errs.push(Error::invalid(&path.child("name"), name, msg));
                }
            }
            if !api_group.is_empty() {
                errs.push(Error::not_supported(
                    &path.child("apiGroup"),
                    api_group,
                    &[""],
                ));
            }
            if !is_namespaced && subject.namespace.as_deref().unwrap_or_default().is_empty() {
                errs.push(Error::required(&path.child("namespace"), ""));
            }
        }
        USER_KIND | GROUP_KIND => {
            if api_group != GROUP_NAME {
                errs.push(Error::not_supported(
                    &path.child("apiGroup"),
                    api_group,
                    &[GROUP_NAME],
                ));
            }
        }
        other => errs.push(Error::not_supported(
            &path.child("kind"),
            other,
            &[SERVICE_ACCOUNT_KIND, USER_KIND, GROUP_KIND],
        )),
    }
    errs
}

/// The subjects of a binding, each at `subjects[i]`.
pub(crate) fn validate_subjects(subjects: Option<&Vec<Subject>>, is_namespaced: bool) -> ErrorList {
    let path = Path::new("subjects");
    subjects
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(i, s)| validate_role_binding_subject(s, is_namespaced, &path.index(i)))
        .collect()
}

/// A binding's `roleRef`: the RBAC group, one of `kinds`, a valid name.
pub(crate) fn validate_role_ref(role_ref: &RoleRef, kinds: &[&str]) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = Path::new("roleRef");
    let api_group = role_ref.api_group.as_deref().unwrap_or_default();
    if api_group != GROUP_NAME {
        errs.push(Error::not_supported(
            &path.child("apiGroup"),
            api_group,
            &[GROUP_NAME],
        ));
    }
    if !kinds.contains(&role_ref.kind.as_str()) {
        errs.push(Error::not_supported(
            &path.child("kind"),
            role_ref.kind.as_str(),
            kinds,
        ));
    }
    if role_ref.name.is_empty() {
        errs.push(Error::required(&path.child("name"), ""));
    } else {
        for msg in validate_rbac_name(&role_ref.name, false) {
            errs.push(Error::invalid(
                &path.child("name"),
                role_ref.name.as_str(),
                msg,
            ));
        }
    }
    errs
}

/// The update rule of both binding kinds: `roleRef` never changes. The value
/// shown is the internal `rbac.RoleRef` (no JSON tags: Go field names).
pub(crate) fn validate_role_ref_unchanged(new: &RoleRef, old: &RoleRef) -> ErrorList {
    let group = |r: &RoleRef| r.api_group.clone().unwrap_or_default();
    if group(new) == group(old) && new.kind == old.kind && new.name == old.name {
        return ErrorList::new();
    }
    let shown = format!(
        "{{\"APIGroup\":{},\"Kind\":{},\"Name\":{}}}",
        render::string(&group(new)),
        render::string(&new.kind),
        render::string(&new.name)
    );
    ErrorList::from(vec![Error::invalid(
        &Path::new("roleRef"),
        BadValue::Json(shown),
        "cannot change roleRef",
    )])
}

/// `SetDefaults_Subject`: an empty `apiGroup` becomes the RBAC group for
/// User and Group subjects; ServiceAccount subjects keep the core group
/// (`""`, omitted on the wire as upstream encodes it).
pub fn default_subject(subject: &mut Subject) {
    if subject.api_group.as_deref().unwrap_or_default().is_empty() {
        subject.api_group = match subject.kind.as_str() {
            USER_KIND | GROUP_KIND => Some(GROUP_NAME.to_owned()),
            _ => None,
        };
    }
}

/// `SetDefaults_RoleBinding` / `SetDefaults_ClusterRoleBinding`: an empty
/// `roleRef.apiGroup` becomes the RBAC group.
pub fn default_role_ref(role_ref: &mut RoleRef) {
    if role_ref.api_group.as_deref().unwrap_or_default().is_empty() {
        role_ref.api_group = Some(GROUP_NAME.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], urls: &[&str]) -> PolicyRule {
        let list =
            |v: &[&str]| (!v.is_empty()).then(|| v.iter().map(|s| (*s).to_owned()).collect());
        PolicyRule {
            verbs: verbs.iter().map(|s| (*s).to_owned()).collect(),
            api_groups: list(groups),
            resources: list(resources),
            non_resource_urls: list(urls),
            resource_names: None,
        }
    }

    /// Upstream's `TestValidateRole*` cases on the rules, plus the texts.
    #[test]
    fn policy_rules() {
        let p = Path::new("rules").index(0);
        let cases: Vec<(&str, PolicyRule, bool, &str)> = vec![
            (
                "non-resource URL in a cluster role",
                rule(&["get"], &[], &[], &["/*"]),
                false,
                "",
            ),
            (
                "valid resource",
                rule(&["get"], &["v1"], &["pods"], &[]),
                true,
                "",
            ),
            ("core group", rule(&["*"], &[""], &["*"], &[]), true, ""),
            (
                "namespaced non-resource URL",
                rule(&["get"], &[], &[], &["/*"]),
                true,
                r#"rules[0].nonResourceURLs: Invalid value: ["/*"]: namespaced rules cannot apply to non-resource URLs"#,
            ),
            (
                "non-resource URL without verbs",
                rule(&[], &[], &[], &["/*"]),
                false,
                "rules[0].verbs: Required value: verbs must contain at least one value",
            ),
            (
                "mixed non-resource and resource",
                rule(&["get"], &["v1"], &["pods"], &["/*"]),
                true,
                r#"[rules[0].nonResourceURLs: Invalid value: ["/*"]: namespaced rules cannot apply to non-resource URLs, rules[0].nonResourceURLs: Invalid value: ["/*"]: rules cannot apply to both regular resources and non-resource URLs]"#,
            ),
            (
                "mixed in a cluster role",
                rule(&["get"], &[], &["pods"], &["/healthz", "/api"]),
                false,
                r#"rules[0].nonResourceURLs: Invalid value: ["/healthz","/api"]: rules cannot apply to both regular resources and non-resource URLs"#,
            ),
            (
                "no API group",
                rule(&["get"], &[], &["pods"], &[]),
                true,
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
            ),
            (
                "no resources",
                rule(&["get"], &["v1"], &[], &[]),
                true,
                "rules[0].resources: Required value: resource rules must supply at least one resource",
            ),
            (
                "empty rule",
                rule(&[], &[], &[], &[]),
                false,
                "[rules[0].verbs: Required value: verbs must contain at least one value, rules[0].apiGroups: Required value: resource rules must supply at least one api group, rules[0].resources: Required value: resource rules must supply at least one resource]",
            ),
        ];
        for (name, r, namespaced, want) in cases {
            assert_eq!(
                validate_policy_rule(&r, namespaced, &p).to_string(),
                want,
                "{name}"
            );
        }
        let mut names_only = rule(&["get"], &["v1"], &["pods", "secrets"], &[]);
        names_only.resource_names = Some(vec!["a".into()]);
        assert!(
            validate_policy_rule(&names_only, true, &p).is_empty(),
            "resourceNames with several resources (allowed since upstream dropped the check)"
        );
    }

    fn subject(kind: &str, name: &str, group: Option<&str>, ns: Option<&str>) -> Subject {
        Subject {
            kind: kind.into(),
            name: name.into(),
            api_group: group.map(str::to_owned),
            namespace: ns.map(str::to_owned),
        }
    }

    #[test]
    fn subjects() {
        let p = Path::new("subjects").index(0);
        let cases: Vec<(&str, Subject, bool, &str)> = vec![
            (
                "service account",
                subject("ServiceAccount", "validsaname", None, None),
                true,
                "",
            ),
            (
                "service account in a cluster binding",
                subject("ServiceAccount", "sa", None, Some("foo")),
                false,
                "",
            ),
            (
                "user",
                subject("User", "valid@username", Some(GROUP_NAME), None),
                true,
                "",
            ),
            (
                "group",
                subject("Group", "valid@groupname", Some(GROUP_NAME), None),
                false,
                "",
            ),
            (
                "bad subject kind",
                subject("", "subject", None, None),
                true,
                r#"subjects[0].kind: Unsupported value: "": supported values: "ServiceAccount", "User", "Group""#,
            ),
            (
                "bad subject name",
                subject("ServiceAccount", "subject:bad", None, None),
                true,
                r#"subjects[0].name: Invalid value: "subject:bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ),
            (
                "missing SA namespace",
                subject("ServiceAccount", "good", None, None),
                false,
                "subjects[0].namespace: Required value",
            ),
            (
                "missing subject name",
                subject("ServiceAccount", "", None, Some("foo")),
                false,
                "subjects[0].name: Required value",
            ),
            (
                "service account in the RBAC group",
                subject("ServiceAccount", "sa", Some(GROUP_NAME), None),
                true,
                r#"subjects[0].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: """#,
            ),
            (
                "user without the RBAC group",
                subject("User", "u", None, None),
                true,
                r#"subjects[0].apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io""#,
            ),
            (
                "group named nothing",
                subject("Group", "", Some(GROUP_NAME), None),
                true,
                "subjects[0].name: Required value",
            ),
        ];
        for (name, s, namespaced, want) in cases {
            assert_eq!(
                validate_role_binding_subject(&s, namespaced, &p).to_string(),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn defaults() {
        let mut cases = [
            (subject("User", "u", None, None), Some(GROUP_NAME)),
            (subject("Group", "g", Some(""), None), Some(GROUP_NAME)),
            (subject("ServiceAccount", "s", Some(""), None), None),
            (subject("User", "u", Some("other"), None), Some("other")),
        ];
        for (s, want) in &mut cases {
            default_subject(s);
            assert_eq!(s.api_group.as_deref(), *want, "{}", s.kind);
        }
        let mut r = RoleRef {
            api_group: None,
            kind: "Role".into(),
            name: "r".into(),
        };
        default_role_ref(&mut r);
        assert_eq!(r.api_group.as_deref(), Some(GROUP_NAME));
    }

    #[test]
    fn rbac_names_are_path_segments() {
        assert!(validate_rbac_name("system:node:a@b", false).is_empty());
        assert_eq!(validate_rbac_name("..", false), ["may not be '..'"]);
        assert_eq!(
            validate_rbac_name("a/b%c", true),
            ["may not contain '/'", "may not contain '%'"]
        );
    }
}
