//! `/version` and the discovery documents: legacy (`/api`, `/api/v1`,
//! `/apis`, `/apis/<group>`, `/apis/<group>/<version>`) and aggregated
//! (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList` for `/api` and
//! `/apis`, which kubectl asks for first).

use serde_json::{Value, json};

use crate::registry::{ResourceDef, Served};
use crate::rest::review::{REVIEWS, ReviewDef};

/// The version the server reports.
pub const GIT_VERSION: &str = "v1.37.0-exitplan";

/// The `Content-Type` of an aggregated discovery answer.
pub const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// `/version` (`version.Info`).
pub fn version() -> Value {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    json!({
        "major": "1",
        "minor": "37",
        "emulationMajor": "1",
        "emulationMinor": "37",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "36",
        "gitVersion": GIT_VERSION,
        "gitCommit": option_env!("EXITPLAN_GIT_COMMIT").unwrap_or(""),
        "gitTreeState": "",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "",
        "compiler": "rustc",
        "platform": format!("{}/{arch}", std::env::consts::OS),
    })
}

/// The verbs of the main resource.
pub(crate) fn verbs(def: &ResourceDef) -> Vec<&'static str> {
    // Upstream serves no deletecollection for namespaces.
    if def.plural == "namespaces" {
        return vec![
            "create", "delete", "get", "list", "patch", "update", "watch",
        ];
    }
    vec![
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ]
}

/// A served subresource: (name, group, version, kind, verbs); an empty
/// group and version mean the parent's.
type Sub = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
);

fn subresources(def: &'static ResourceDef) -> impl Iterator<Item = Sub> {
    def.subresources.iter().filter_map(move |s| match *s {
        "status" => Some(("status", "", "", def.kind, &["get", "patch", "update"][..])),
        "eviction" => Some(("eviction", "policy", "v1", "Eviction", &["create"][..])),
        "binding" => Some(("binding", "", "", "Binding", &["create"][..])),
        "token" => Some((
            "token",
            "authentication.k8s.io",
            "v1",
            "TokenRequest",
            &["create"][..],
        )),
        "scale" => Some((
            "scale",
            "autoscaling",
            "v1",
            "Scale",
            &["get", "patch", "update"][..],
        )),
        "finalize" => Some(("finalize", "", "", def.kind, &["update"][..])),
        "ephemeralcontainers" | "resize" => {
            Some((*s, "", "", def.kind, &["get", "patch", "update"][..]))
        }
        _ => None,
    })
}

fn served_in<'a>(
    served: &'a Served,
    group: &'a str,
    version: &'a str,
) -> impl Iterator<Item = &'static ResourceDef> + use<'a> {
    served
        .defs
        .iter()
        .copied()
        .filter(move |r| r.group == group && r.version == version)
}

/// The built-in groups in kube-apiserver's discovery order (descending
/// `GroupPriorityMinimum`); groups not listed follow, by name.
const GROUP_ORDER: &[&str] = &[
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "batch",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "apiextensions.k8s.io",
    "discovery.k8s.io",
    "lifecycle.k8s.io",
];

fn group_rank(group: &str) -> (usize, &str) {
    let rank = GROUP_ORDER
        .iter()
        .position(|g| *g == group)
        .unwrap_or(GROUP_ORDER.len());
    (rank, group)
}

/// The served groups, in discovery order, with their versions.
fn groups(served: &Served) -> Vec<(&'static str, Vec<&'static str>)> {
    let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    let served_versions = served.defs.iter().map(|r| (r.group, r.version));
    let reviews = REVIEWS.iter().map(|r| (r.group, r.version));
    for (group, version) in served_versions
        .chain(reviews)
        .filter(|(g, _)| !g.is_empty())
    {
        match out.iter_mut().find(|(g, _)| *g == group) {
            Some((_, versions)) if !versions.contains(&version) => versions.push(version),
            Some(_) => {}
            None => out.push((group, vec![version])),
        }
    }
    out.sort_by(|a, b| group_rank(a.0).cmp(&group_rank(b.0)));
    for (_, versions) in &mut out {
        versions.sort_by_key(|v| version_priority(v));
    }
    out
}

/// Kubernetes' version order (`version.CompareKubeAwareVersionStrings`):
/// GA before beta before alpha, higher major then minor first, anything
/// else last by name. Lower sorts first.
fn version_priority(v: &str) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, String) {
    let parsed = v.strip_prefix('v').and_then(|rest| {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        let (rank, minor) = if tail.is_empty() {
            (0, 0)
        } else if let Some(m) = tail.strip_prefix("beta") {
            (1, m.parse().ok()?)
        } else if let Some(m) = tail.strip_prefix("alpha") {
            (2, m.parse().ok()?)
        } else {
            return None;
        };
        Some((rank, major, minor))
    });
    match parsed {
        Some((rank, major, minor)) => (
            rank,
            std::cmp::Reverse(major),
            std::cmp::Reverse(minor),
            String::new(),
        ),
        None => (3, std::cmp::Reverse(0), std::cmp::Reverse(0), v.to_owned()),
    }
}

/// `/api` (`APIVersions`).
pub fn core_versions() -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    })
}

fn api_group(group: &str, versions: &[&str]) -> Value {
    let gv = |v: &str| json!({"groupVersion": format!("{group}/{v}"), "version": v});
    let listed: Vec<Value> = versions.iter().map(|v| gv(v)).collect();
    json!({
        "name": group,
        "versions": listed,
        "preferredVersion": versions.first().map(|v| gv(v)),
    })
}

/// `/apis` (`APIGroupList`).
pub fn group_list(served: &Served) -> Value {
    let groups: Vec<Value> = groups(served)
        .iter()
        .map(|(g, vs)| api_group(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>` (`APIGroup`), if served.
pub fn group(served: &Served, name: &str) -> Option<Value> {
    let (g, versions) = groups(served).into_iter().find(|(g, _)| *g == name)?;
    let mut doc = api_group(g, &versions);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

/// `/api/v1` or `/apis/<group>/<version>` (`APIResourceList`), if served.
pub fn resource_list(served: &Served, group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for def in served_in(served, group, version) {
        let mut main = json!({
            "name": def.plural,
            "singularName": def.singular,
            "namespaced": def.namespaced,
            "kind": def.kind,
            "verbs": verbs(def),
        });
        if !def.short_names.is_empty() {
            main["shortNames"] = json!(def.short_names);
        }
        if !def.categories.is_empty() {
            main["categories"] = json!(def.categories);
        }
        resources.push(main);
        for (sub, g, v, kind, sub_verbs) in subresources(def) {
            let mut entry = json!({
                "name": format!("{}/{sub}", def.plural),
                "singularName": "",
                "namespaced": def.namespaced,
                "kind": kind,
                "verbs": sub_verbs,
            });
            if !g.is_empty() {
                entry["group"] = json!(g);
                entry["version"] = json!(v);
            }
            resources.push(entry);
        }
    }
    for review in reviews_in(group, version) {
        resources.push(json!({
            "name": review.plural,
            "singularName": review.singular,
            "namespaced": review.namespaced,
            "kind": review.kind,
            "verbs": ["create"],
        }));
    }
    if resources.is_empty() {
        return None;
    }
    resources.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}

/// The create-only reviews of `group`/`version`.
fn reviews_in<'a>(
    group: &'a str,
    version: &'a str,
) -> impl Iterator<Item = &'static ReviewDef> + use<'a> {
    REVIEWS
        .iter()
        .filter(move |r| r.group == group && r.version == version)
}

/// A review as aggregated discovery lists it.
fn discovery_review(review: &'static ReviewDef) -> Value {
    json!({
        "resource": review.plural,
        "responseKind": {"group": review.group, "version": review.version, "kind": review.kind},
        "scope": if review.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": review.singular,
        "verbs": ["create"],
    })
}

fn discovery_resource(def: &'static ResourceDef) -> Value {
    let subs: Vec<Value> = subresources(def)
        .map(|(sub, g, v, kind, sub_verbs)| {
            let (g, v) = if g.is_empty() {
                (def.group, def.version)
            } else {
                (g, v)
            };
            json!({
                "subresource": sub,
                "responseKind": {"group": g, "version": v, "kind": kind},
                "verbs": sub_verbs,
            })
        })
        .collect();
    let mut r = json!({
        "resource": def.plural,
        "responseKind": {"group": def.group, "version": def.version, "kind": def.kind},
        "scope": if def.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": def.singular,
        "verbs": verbs(def),
    });
    if !def.short_names.is_empty() {
        r["shortNames"] = json!(def.short_names);
    }
    if !def.categories.is_empty() {
        r["categories"] = json!(def.categories);
    }
    if !subs.is_empty() {
        r["subresources"] = json!(subs);
    }
    r
}

fn discovery_group(served: &Served, group: &str, versions: &[&str]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| {
            let mut resources: Vec<Value> = served_in(served, group, v)
                .map(discovery_resource)
                .collect();
            resources.extend(reviews_in(group, v).map(discovery_review));
            json!({"version": v, "resources": resources, "freshness": "Current"})
        })
        .collect();
    json!({"metadata": {"name": group, "creationTimestamp": null}, "versions": versions})
}

fn discovery_list(items: Vec<Value>) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// `/api` as aggregated discovery (the core group, name `""`).
pub fn aggregated_core(served: &Served) -> Value {
    discovery_list(vec![discovery_group(served, "", &["v1"])])
}

/// `/apis` as aggregated discovery.
pub fn aggregated_groups(served: &Served) -> Value {
    discovery_list(
        groups(served)
            .iter()
            .map(|(g, vs)| discovery_group(served, g, vs))
            .collect(),
    )
}

/// Whether an `Accept` header prefers aggregated discovery (v2) over plain
/// JSON: the first acceptable media type decides.
pub fn wants_aggregated(accept: &str) -> bool {
    for media in accept.split(',') {
        let mut parts = media.split(';').map(str::trim);
        let essence = parts.next().unwrap_or_default();
        let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
        let param = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        match (essence, param("g"), param("v"), param("as")) {
            (
                "application/json",
                Some("apidiscovery.k8s.io"),
                Some("v2"),
                Some("APIGroupDiscoveryList"),
            ) => {
                return true;
            }
            ("application/json", None, None, None) | ("*/*", _, _, _) => return false,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin() -> std::sync::Arc<Served> {
        crate::registry::Registry::new().served()
    }

    fn names(list: &Value) -> Vec<&str> {
        list["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect()
    }

    #[test]
    fn core_resource_list_has_subresources() {
        let core = resource_list(&builtin(), "", "v1").expect("core");
        assert_eq!(core["groupVersion"], "v1");
        assert_eq!(
            names(&core),
            vec![
                "configmaps",
                "endpoints",
                "events",
                "limitranges",
                "namespaces",
                "namespaces/finalize",
                "namespaces/status",
                "nodes",
                "nodes/status",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "persistentvolumes",
                "persistentvolumes/status",
                "pods",
                "pods/binding",
                "pods/ephemeralcontainers",
                "pods/eviction",
                "pods/resize",
                "pods/status",
                "podtemplates",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "replicationcontrollers/status",
                "resourcequotas",
                "resourcequotas/status",
                "secrets",
                "serviceaccounts",
                "serviceaccounts/token",
                "services",
                "services/status"
            ]
        );
        let eviction = core["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["name"] == "pods/eviction"))
            .expect("eviction");
        assert_eq!(
            eviction,
            &json!({"name": "pods/eviction", "singularName": "", "namespaced": true, "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]})
        );
        let pods = core["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["name"] == "pods"))
            .expect("pods");
        assert_eq!(pods["shortNames"], json!(["po"]));
        assert_eq!(pods["categories"], json!(["all"]));
        assert_eq!(pods["singularName"], "pod");
        assert!(resource_list(&builtin(), "node.k8s.io", "v1").is_none());
    }

    #[test]
    fn groups_and_aggregated_discovery() {
        let list = group_list(&builtin());
        let groups: Vec<&str> = list["groups"]
            .as_array()
            .expect("groups")
            .iter()
            .filter_map(|g| g["name"].as_str())
            .collect();
        assert_eq!(
            groups,
            vec![
                "apps",
                "events.k8s.io",
                "authentication.k8s.io",
                "authorization.k8s.io",
                "batch",
                "networking.k8s.io",
                "policy",
                "rbac.authorization.k8s.io",
                "storage.k8s.io",
                "admissionregistration.k8s.io",
                "scheduling.k8s.io",
                "coordination.k8s.io",
                "apiextensions.k8s.io",
                "discovery.k8s.io",
                "lifecycle.k8s.io"
            ]
        );
        let lifecycle = group(&builtin(), "lifecycle.k8s.io").expect("served");
        assert_eq!(
            lifecycle["preferredVersion"]["groupVersion"],
            "lifecycle.k8s.io/v1alpha1"
        );
        assert_eq!(lifecycle["kind"], "APIGroup");
        assert!(group(&builtin(), "node.k8s.io").is_none());
        // The create-only reviews (kube-apiserver's entries).
        let authn = resource_list(&builtin(), "authentication.k8s.io", "v1").expect("served");
        assert_eq!(
            authn["resources"],
            json!([
                {"name": "selfsubjectreviews", "singularName": "selfsubjectreview", "namespaced": false, "kind": "SelfSubjectReview", "verbs": ["create"]},
                {"name": "tokenreviews", "singularName": "tokenreview", "namespaced": false, "kind": "TokenReview", "verbs": ["create"]},
            ])
        );
        assert_eq!(
            group(&builtin(), "authentication.k8s.io").expect("group")["preferredVersion"]["groupVersion"],
            "authentication.k8s.io/v1"
        );

        let agg = aggregated_groups(&builtin());
        let lc = agg["items"]
            .as_array()
            .and_then(|i| {
                i.iter()
                    .find(|g| g["metadata"]["name"] == "lifecycle.k8s.io")
            })
            .expect("lifecycle group");
        let evictions = &lc["versions"][0]["resources"][1];
        assert_eq!(evictions["resource"], "evictions");
        assert_eq!(evictions["scope"], "Namespaced");
        assert_eq!(evictions["subresources"][0]["subresource"], "status");
        let authn = agg["items"]
            .as_array()
            .and_then(|i| {
                i.iter()
                    .find(|g| g["metadata"]["name"] == "authentication.k8s.io")
            })
            .expect("authentication group");
        assert_eq!(
            authn["versions"][0]["resources"][1],
            json!({"resource": "tokenreviews", "responseKind": {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenReview"}, "scope": "Cluster", "singularResource": "tokenreview", "verbs": ["create"]})
        );
        let core = aggregated_core(&builtin());
        let pods = core["items"][0]["versions"][0]["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["resource"] == "pods"))
            .expect("pods");
        assert_eq!(pods["subresources"][1]["responseKind"]["group"], "policy");
    }

    #[test]
    fn accept_negotiation() {
        let kubectl = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert!(wants_aggregated(kubectl));
        assert!(!wants_aggregated("application/json"));
        assert!(!wants_aggregated(
            "application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        ));
        assert!(!wants_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        ));
        assert_eq!(version()["gitVersion"], GIT_VERSION);
    }
}
