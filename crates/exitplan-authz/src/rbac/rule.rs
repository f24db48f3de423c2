//! Whether one `PolicyRule` allows a request (upstream's
//! `pkg/apis/rbac/v1/evaluation_helpers.go` and `RuleAllows` in
//! `plugin/pkg/auth/authorizer/rbac/rbac.go`), and the compact rule text
//! escalation errors print (`CompactString`).

use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::Attributes;

/// The wildcard verb, API group, resource and non-resource URL (`*`).
pub const ALL: &str = "*";

/// The rule's list, `[]` when absent (Go's nil slice).
pub(crate) fn list(v: &Option<Vec<String>>) -> &[String] {
    v.as_deref().unwrap_or_default()
}

/// Whether the rule grants `verb` (`VerbMatches`): `*` or an exact match.
pub fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == ALL || v == verb)
}

/// Whether the rule covers API group `group` (`APIGroupMatches`).
pub fn api_group_matches(rule: &PolicyRule, group: &str) -> bool {
    list(&rule.api_groups)
        .iter()
        .any(|g| g == ALL || g == group)
}

/// Whether the rule covers the resource (`ResourceMatches`): `combined` is
/// `resource` or `resource/subresource`; a rule resource matches when it is
/// `*`, equals `combined`, or is `*/<subresource>` for a request with that
/// subresource.
pub fn resource_matches(rule: &PolicyRule, combined: &str, subresource: &str) -> bool {
    list(&rule.resources).iter().any(|r| {
        r == ALL
            || r == combined
            || (!subresource.is_empty()
                && r.strip_prefix("*/").is_some_and(|sub| sub == subresource))
    })
}

/// Whether the rule covers object `name` (`ResourceNameMatches`): a rule
/// without resourceNames covers every name (and requests without one).
pub fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    let names = list(&rule.resource_names);
    names.is_empty() || names.iter().any(|n| n == name)
}

/// Whether the rule covers non-resource `path` (`NonResourceURLMatches`):
/// `*`, an exact match, or a rule URL ending in `*` whose prefix (with every
/// trailing `*` removed) starts the path.
pub fn non_resource_url_matches(rule: &PolicyRule, path: &str) -> bool {
    list(&rule.non_resource_urls)
        .iter()
        .any(|u| non_resource_url_covers(u, path))
}

/// One rule URL against one path (shared by matching and `Covers`).
pub(crate) fn non_resource_url_covers(rule_url: &str, path: &str) -> bool {
    rule_url == ALL
        || rule_url == path
        || (rule_url.ends_with('*') && path.starts_with(rule_url.trim_end_matches('*')))
}

/// Whether the rule allows the request (`RuleAllows`): resource requests
/// match verb, group, resource (with subresource) and name; non-resource
/// requests match verb and path. Allocation-free (the request's
/// `resource/subresource` is compared in place).
pub fn rule_allows(attrs: &Attributes, rule: &PolicyRule) -> bool {
    if !verb_matches(rule, &attrs.verb) {
        return false;
    }
    if !attrs.resource_request {
        return non_resource_url_matches(rule, &attrs.path);
    }
    let (res, sub) = (attrs.resource.as_str(), attrs.subresource.as_str());
    let matches_resource = list(&rule.resources).iter().any(|r| {
        r == ALL
            || is_combined(r, res, sub)
            || (!sub.is_empty() && r.strip_prefix("*/").is_some_and(|s| s == sub))
    });
    api_group_matches(rule, &attrs.api_group)
        && matches_resource
        && resource_name_matches(rule, &attrs.name)
}

/// Whether `r` is `res` (no subresource) or `res/sub`.
fn is_combined(r: &str, res: &str, sub: &str) -> bool {
    if sub.is_empty() {
        return r == res;
    }
    r.strip_prefix(res)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|rest| rest == sub)
}

/// Whether any of `rules` allows the request (`RulesAllow`).
pub fn rules_allow(attrs: &Attributes, rules: &[PolicyRule]) -> bool {
    rules.iter().any(|r| rule_allows(attrs, r))
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
pub(crate) fn go_quote_list(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|s| exitplan_api::field::go_quote(s))
        .collect();
    format!("[{}]", quoted.join(" "))
}

/// The compact text of a rule used in escalation errors (`CompactString`):
/// `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`, listing only the
/// non-empty fields, in that order (NonResourceURLs and ResourceNames
/// between Resources and Verbs).
pub fn compact_string(rule: &PolicyRule) -> String {
    let mut parts = Vec::new();
    let fields: [(&str, &[String]); 5] = [
        ("APIGroups", list(&rule.api_groups)),
        ("Resources", list(&rule.resources)),
        ("NonResourceURLs", list(&rule.non_resource_urls)),
        ("ResourceNames", list(&rule.resource_names)),
        ("Verbs", &rule.verbs),
    ];
    for (name, values) in fields {
        if !values.is_empty() {
            parts.push(format!("{name}:{}", go_quote_list(values)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// Whether two rules are equal as upstream's `equality.Semantic` sees them:
/// an absent list equals an empty one.
pub fn rules_equal(a: &PolicyRule, b: &PolicyRule) -> bool {
    a.verbs == b.verbs
        && list(&a.api_groups) == list(&b.api_groups)
        && list(&a.resources) == list(&b.resources)
        && list(&a.resource_names) == list(&b.resource_names)
        && list(&a.non_resource_urls) == list(&b.non_resource_urls)
}

/// A rule from its parts, absent lists for empty ones (test and bootstrap
/// helper: `rbacv1helpers.NewRule(verbs...).Groups(...).Resources(...)`).
pub fn new_rule(
    verbs: &[&str],
    api_groups: &[&str],
    resources: &[&str],
    non_resource_urls: &[&str],
) -> PolicyRule {
    let opt = |v: &[&str]| (!v.is_empty()).then(|| v.iter().map(|s| (*s).to_owned()).collect());
    PolicyRule {
        verbs: verbs.iter().map(|s| (*s).to_owned()).collect(),
        api_groups: opt(api_groups),
        resources: opt(resources),
        resource_names: None,
        non_resource_urls: opt(non_resource_urls),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(verb: &str, group: &str, res: &str, sub: &str) -> Attributes {
        Attributes {
            verb: verb.to_owned(),
            resource_request: true,
            api_group: group.to_owned(),
            resource: res.to_owned(),
            subresource: sub.to_owned(),
            ..Attributes::default()
        }
    }

    fn non_resource(verb: &str, path: &str) -> Attributes {
        Attributes {
            verb: verb.to_owned(),
            path: path.to_owned(),
            ..Attributes::default()
        }
    }

    /// Upstream's `TestRuleMatches` (rbac_test.go).
    #[test]
    fn rule_matches() {
        type Case = (&'static str, PolicyRule, Vec<(Attributes, bool)>);
        let eight = |expect: [bool; 8]| {
            let mut v = Vec::new();
            let mut i = 0;
            for verb in ["verb1", "verb2"] {
                for (g, r) in [
                    ("group1", "resource1"),
                    ("group2", "resource1"),
                    ("group1", "resource2"),
                    ("group2", "resource2"),
                ] {
                    v.push((resource(verb, g, r, ""), expect[i]));
                    i += 1;
                }
            }
            v
        };
        let urls = |verb: &str, cases: &[(&str, bool)]| -> Vec<(Attributes, bool)> {
            cases
                .iter()
                .map(|(u, b)| (non_resource(verb, u), *b))
                .collect()
        };
        let cases: Vec<Case> = vec![
            (
                "star verb, exact match other",
                new_rule(&["*"], &["group1"], &["resource1"], &[]),
                eight([true, false, false, false, true, false, false, false]),
            ),
            (
                "star group, exact match other",
                new_rule(&["verb1"], &["*"], &["resource1"], &[]),
                eight([true, true, false, false, false, false, false, false]),
            ),
            (
                "star resource, exact match other",
                new_rule(&["verb1"], &["group1"], &["*"], &[]),
                eight([true, false, true, false, false, false, false, false]),
            ),
            (
                "tuple expansion",
                new_rule(
                    &["verb1", "verb2"],
                    &["group1", "group2"],
                    &["resource1", "resource2"],
                    &[],
                ),
                eight([true; 8]),
            ),
            (
                "subresource expansion",
                new_rule(&["*"], &["*"], &["resource1/subresource1"], &[]),
                vec![
                    (
                        resource("verb1", "group1", "resource1", "subresource1"),
                        true,
                    ),
                    (
                        resource("verb1", "group2", "resource1", "subresource2"),
                        false,
                    ),
                    (
                        resource("verb1", "group1", "resource2", "subresource1"),
                        false,
                    ),
                    (
                        resource("verb1", "group2", "resource2", "subresource1"),
                        false,
                    ),
                    (
                        resource("verb2", "group1", "resource1", "subresource1"),
                        true,
                    ),
                    (
                        resource("verb2", "group2", "resource1", "subresource2"),
                        false,
                    ),
                    (
                        resource("verb2", "group1", "resource2", "subresource1"),
                        false,
                    ),
                    (
                        resource("verb2", "group2", "resource2", "subresource1"),
                        false,
                    ),
                ],
            ),
            (
                "star subresource",
                new_rule(&["*"], &["*"], &["*/scale"], &[]),
                vec![
                    (resource("get", "apps", "deployments", "scale"), true),
                    (resource("get", "apps", "deployments", "status"), false),
                    (resource("get", "apps", "deployments", ""), false),
                    (resource("get", "apps", "scale", ""), false),
                ],
            ),
            (
                "resource star is not a subresource wildcard",
                new_rule(&["*"], &["*"], &["pods/*"], &[]),
                vec![
                    (resource("get", "", "pods", "status"), false),
                    (resource("get", "", "pods", ""), false),
                ],
            ),
            (
                "star nonresource, exact match other",
                new_rule(&["verb1"], &[], &[], &["*"]),
                [
                    urls(
                        "verb1",
                        &[
                            ("/foo", true),
                            ("/foo/bar", true),
                            ("/foo/baz", true),
                            ("/foo/bar/one", true),
                            ("/foo/baz/one", true),
                        ],
                    ),
                    urls(
                        "verb2",
                        &[
                            ("/foo", false),
                            ("/foo/bar", false),
                            ("/foo/baz", false),
                            ("/foo/bar/one", false),
                            ("/foo/baz/one", false),
                        ],
                    ),
                ]
                .concat(),
            ),
            (
                "star nonresource subpath",
                new_rule(&["verb1"], &[], &[], &["/foo/*"]),
                urls(
                    "verb1",
                    &[
                        ("/foo", false),
                        ("/foo/bar", true),
                        ("/foo/baz", true),
                        ("/foo/bar/one", true),
                        ("/foo/baz/one", true),
                        ("/notfoo", false),
                        ("/notfoo/bar", false),
                        ("/notfoo/baz", false),
                        ("/notfoo/bar/one", false),
                        ("/notfoo/baz/one", false),
                    ],
                ),
            ),
            (
                "star verb, exact nonresource",
                new_rule(&["*"], &[], &[], &["/foo", "/foo/bar/one"]),
                [
                    urls(
                        "verb1",
                        &[
                            ("/foo", true),
                            ("/foo/bar", false),
                            ("/foo/baz", false),
                            ("/foo/bar/one", true),
                            ("/foo/baz/one", false),
                        ],
                    ),
                    urls(
                        "verb2",
                        &[
                            ("/foo", true),
                            ("/foo/bar", false),
                            ("/foo/baz", false),
                            ("/foo/bar/one", true),
                            ("/foo/baz/one", false),
                        ],
                    ),
                ]
                .concat(),
            ),
        ];
        for (name, rule, requests) in cases {
            for (attrs, want) in requests {
                assert_eq!(rule_allows(&attrs, &rule), want, "{name}: {attrs:?}");
            }
        }
    }

    #[test]
    fn in_place_resource_match_agrees_with_resource_matches() {
        let rule_resources = [
            "*",
            "pods",
            "pods/status",
            "*/status",
            "pods/*",
            "pods/",
            "pod",
            "/status",
            "*/",
        ];
        let requests = [
            ("pods", ""),
            ("pods", "status"),
            ("pods", "log"),
            ("pod", "s/status"),
            ("pods/status", ""),
            ("", "status"),
            ("", ""),
        ];
        for rr in rule_resources {
            let rule = new_rule(&["*"], &["*"], &[rr], &[]);
            for (res, sub) in requests {
                let combined = if sub.is_empty() {
                    res.to_owned()
                } else {
                    format!("{res}/{sub}")
                };
                assert_eq!(
                    rule_allows(&resource("get", "", res, sub), &rule),
                    resource_matches(&rule, &combined, sub),
                    "rule {rr:?} request {res:?}/{sub:?}"
                );
            }
        }
    }

    #[test]
    fn resource_names_restrict_named_requests_only() {
        let mut rule = new_rule(&["get"], &[""], &["pods"], &[]);
        rule.resource_names = Some(vec!["a".into(), "b".into()]);
        let mut attrs = resource("get", "", "pods", "");
        for (name, want) in [("a", true), ("b", true), ("c", false), ("", false)] {
            attrs.name = name.to_owned();
            assert_eq!(rule_allows(&attrs, &rule), want, "{name:?}");
        }
        rule.resource_names = Some(vec![]);
        attrs.name = "c".into();
        assert!(
            rule_allows(&attrs, &rule),
            "empty resourceNames: every name"
        );
    }

    #[test]
    fn non_resource_rules_do_not_match_resource_requests() {
        let rule = new_rule(&["*"], &[], &[], &["*"]);
        assert!(!rule_allows(&resource("get", "", "pods", ""), &rule));
        let rule = new_rule(&["*"], &["*"], &["*"], &[]);
        assert!(!rule_allows(&non_resource("get", "/healthz"), &rule));
    }

    #[test]
    fn compact_string_renders_like_upstream() {
        let cases = [
            (
                new_rule(&["get"], &[""], &["pods"], &[]),
                r#"{APIGroups:[""], Resources:["pods"], Verbs:["get"]}"#,
            ),
            (
                new_rule(&["get", "list"], &[], &[], &["/healthz", "/x*"]),
                r#"{NonResourceURLs:["/healthz" "/x*"], Verbs:["get" "list"]}"#,
            ),
            (
                PolicyRule {
                    resource_names: Some(vec!["a\"b".into()]),
                    ..new_rule(&["get"], &["apps"], &["deployments"], &[])
                },
                r#"{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["a\"b"], Verbs:["get"]}"#,
            ),
            (PolicyRule::default(), "{}"),
        ];
        for (rule, want) in cases {
            assert_eq!(compact_string(&rule), want);
        }
    }

    #[test]
    fn absent_and_empty_lists_are_equal() {
        let a = new_rule(&["get"], &[], &["pods"], &[]);
        let mut b = a.clone();
        b.api_groups = Some(vec![]);
        b.resource_names = Some(vec![]);
        assert!(rules_equal(&a, &b));
        b.verbs.push("list".into());
        assert!(!rules_equal(&a, &b));
    }
}
