//! The REST paths of a resource as OpenAPI operations: what kubectl reads to
//! find a kind's PATCH content types (strategic merge patch or not) and
//! whether the server validates fields itself (`fieldValidation`).

use serde_json::{Map, Value, json};

use super::{V2_REF_PREFIX, V3_REF_PREFIX, definition_name};
use crate::registry::ResourceDef;

/// Which document the operations go into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// Swagger 2.0 (`/openapi/v2`).
    V2,
    /// OpenAPI 3.0 (`/openapi/v3/...`).
    V3,
}

const PATCH_TYPES: &[&str] = exitplan_api::patch::BUILTIN_PATCH_TYPES;
const JSON_TYPES: &[&str] = &["application/json", "application/yaml"];
const WRITE_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
const PATCH_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "force"];
const LIST_PARAMS: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
];
const DELETE_PARAMS: &[&str] = &["dryRun", "gracePeriodSeconds", "propagationPolicy"];

const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";

fn param_type(name: &str) -> &'static str {
    match name {
        "force" | "watch" | "allowWatchBookmarks" | "sendInitialEvents" => "boolean",
        "limit" | "timeoutSeconds" | "gracePeriodSeconds" => "integer",
        _ => "string",
    }
}

fn param(flavor: Flavor, name: &str, location: &str) -> Value {
    let ty = if location == "path" {
        "string"
    } else {
        param_type(name)
    };
    let mut p = json!({"name": name, "in": location, "uniqueItems": true});
    if location == "path" {
        p["required"] = json!(true);
        p["description"] = json!(format!("{name} of the object"));
    }
    match flavor {
        Flavor::V3 => p["schema"] = json!({"type": ty}),
        Flavor::V2 => p["type"] = json!(ty),
    }
    p
}

fn schema_ref(flavor: Flavor, name: &str) -> Value {
    let prefix = match flavor {
        Flavor::V3 => V3_REF_PREFIX,
        Flavor::V2 => V2_REF_PREFIX,
    };
    json!({"$ref": format!("{prefix}{name}")})
}

/// Group and version as operation IDs spell them (kube-openapi's
/// `GetOperationIDAndTags`: `CoreV1`, `LifecycleV1alpha1`,
/// `StableExampleComV1`; `.k8s.io` dropped, other separators capitalize).
fn id_prefix(group: &str, version: &str) -> String {
    let group = match group {
        "" => "core",
        g => g.strip_suffix(".k8s.io").unwrap_or(g),
    };
    let mut out = String::new();
    for part in [group, version] {
        let mut capitalize = true;
        for (i, c) in part.chars().enumerate() {
            if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
                if capitalize {
                    out.extend(c.to_uppercase());
                    capitalize = false;
                } else {
                    out.push(c);
                }
            } else {
                capitalize = true;
            }
        }
    }
    out
}

/// What the paths of one resource are built from: a built-in
/// [`ResourceDef`] ([`Resource::builtin`]) or a custom resource.
#[derive(Clone, Debug)]
pub struct Resource<'a> {
    /// API group (`""` for core).
    pub group: &'a str,
    /// API version.
    pub version: &'a str,
    /// Kind of the objects.
    pub kind: &'a str,
    /// Plural resource name in URLs.
    pub plural: &'a str,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Subresources with paths (`status`, `scale`, `eviction`, …).
    pub subresources: Vec<&'a str>,
    /// The kind's definition name (its list's is this plus `List`).
    pub kind_definition: String,
    /// The PATCH content types (custom resources: no strategic merge patch).
    pub patch_types: &'static [&'static str],
}

impl Resource<'static> {
    /// A built-in resource.
    pub fn builtin(def: &'static ResourceDef) -> Self {
        Resource {
            group: def.group,
            version: def.version,
            kind: def.kind,
            plural: def.plural,
            namespaced: def.namespaced,
            subresources: def.subresources.to_vec(),
            kind_definition: definition_name(def),
            patch_types: PATCH_TYPES,
        }
    }
}

/// One operation.
struct Op<'a> {
    verb: &'a str,
    action: &'a str,
    id: String,
    gvk: (&'a str, &'a str, &'a str),
    body: Option<(String, &'a [&'a str])>,
    query: &'a [&'a str],
    response: String,
}

impl Op<'_> {
    fn render(&self, flavor: Flavor) -> Value {
        let (group, version, kind) = self.gvk;
        let mut params: Vec<Value> = self
            .query
            .iter()
            .map(|q| param(flavor, q, "query"))
            .collect();
        let mut op = json!({
            "operationId": self.id,
            "description": format!("{} {kind}", self.action),
            "x-kubernetes-action": self.action,
            "x-kubernetes-group-version-kind": {"group": group, "kind": kind, "version": version},
        });
        match flavor {
            Flavor::V3 => {
                let content: Map<String, Value> = JSON_TYPES
                    .iter()
                    .map(|t| {
                        (
                            (*t).to_owned(),
                            json!({"schema": schema_ref(flavor, &self.response)}),
                        )
                    })
                    .collect();
                op["responses"] = json!({"200": {"description": "OK", "content": content}, "401": {"description": "Unauthorized"}});
                if let Some((body, types)) = &self.body {
                    let content: Map<String, Value> = types
                        .iter()
                        .map(|t| ((*t).to_owned(), json!({"schema": schema_ref(flavor, body)})))
                        .collect();
                    op["requestBody"] = json!({"content": content, "required": true});
                }
            }
            Flavor::V2 => {
                op["responses"] = json!({"200": {"description": "OK", "schema": schema_ref(flavor, &self.response)}, "401": {"description": "Unauthorized"}});
                op["produces"] = json!(JSON_TYPES);
                if let Some((body, types)) = &self.body {
                    op["consumes"] = json!(types);
                    params.push(json!({"name": "body", "in": "body", "required": true, "schema": schema_ref(flavor, body)}));
                }
            }
        }
        op["parameters"] = Value::Array(params);
        op
    }
}

fn put_path(
    paths: &mut Map<String, Value>,
    flavor: Flavor,
    path: String,
    path_params: &[&str],
    ops: &[Op<'_>],
) {
    let mut item = Map::new();
    item.insert(
        "parameters".into(),
        Value::Array(
            path_params
                .iter()
                .map(|p| param(flavor, p, "path"))
                .collect(),
        ),
    );
    for op in ops {
        item.insert(op.verb.to_owned(), op.render(flavor));
    }
    paths.insert(path, Value::Object(item));
}

/// Adds the collection, object and subresource paths of `def`.
pub fn add(def: &'static ResourceDef, paths: &mut Map<String, Value>, flavor: Flavor) {
    add_resource(&Resource::builtin(def), paths, flavor);
}

/// The autoscaling/v1 `Scale` the `scale` subresource reads and writes.
pub const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// Adds the collection, object and subresource paths of `def`.
pub fn add_resource(def: &Resource<'_>, paths: &mut Map<String, Value>, flavor: Flavor) {
    let prefix = if def.group.is_empty() {
        format!("/api/{}", def.version)
    } else {
        format!("/apis/{}/{}", def.group, def.version)
    };
    let (scope, ns_params): (String, &[&str]) = if def.namespaced {
        (format!("{prefix}/namespaces/{{namespace}}"), &["namespace"])
    } else {
        (prefix.clone(), &[])
    };
    let id = id_prefix(def.group, def.version);
    let scoped = if def.namespaced { "Namespaced" } else { "" };
    let kind_def = def.kind_definition.clone();
    let list_def = format!("{kind_def}List");
    let gvk = (def.group, def.version, def.kind);
    let item_params: Vec<&str> = ["name"].iter().chain(ns_params).copied().collect();

    let op = |verb: &'static str,
              action: &'static str,
              name: String,
              body: Option<(String, &'static [&'static str])>,
              query: &'static [&'static str],
              response: &str| Op {
        verb,
        action,
        id: name,
        gvk,
        body,
        query,
        response: response.to_owned(),
    };
    let kind = def.kind;
    let collection = vec![
        op(
            "get",
            "list",
            format!("list{id}{scoped}{kind}"),
            None,
            LIST_PARAMS,
            &list_def,
        ),
        op(
            "post",
            "post",
            format!("create{id}{scoped}{kind}"),
            Some((kind_def.clone(), &["application/json", "application/yaml"])),
            WRITE_PARAMS,
            &kind_def,
        ),
        op(
            "delete",
            "deletecollection",
            format!("deleteCollection{id}{scoped}{kind}"),
            Some((DELETE_OPTIONS.to_owned(), &["application/json"])),
            DELETE_PARAMS,
            STATUS,
        ),
    ];
    put_path(
        paths,
        flavor,
        format!("{scope}/{}", def.plural),
        ns_params,
        &collection,
    );
    if def.namespaced {
        let all = [op(
            "get",
            "list",
            format!("list{id}{kind}ForAllNamespaces"),
            None,
            LIST_PARAMS,
            &list_def,
        )];
        put_path(paths, flavor, format!("{prefix}/{}", def.plural), &[], &all);
    }
    let object = vec![
        op(
            "get",
            "get",
            format!("read{id}{scoped}{kind}"),
            None,
            &[],
            &kind_def,
        ),
        op(
            "put",
            "put",
            format!("replace{id}{scoped}{kind}"),
            Some((kind_def.clone(), &["application/json", "application/yaml"])),
            WRITE_PARAMS,
            &kind_def,
        ),
        op(
            "patch",
            "patch",
            format!("patch{id}{scoped}{kind}"),
            Some((PATCH.to_owned(), def.patch_types)),
            PATCH_PARAMS,
            &kind_def,
        ),
        op(
            "delete",
            "delete",
            format!("delete{id}{scoped}{kind}"),
            Some((DELETE_OPTIONS.to_owned(), &["application/json"])),
            DELETE_PARAMS,
            STATUS,
        ),
    ];
    put_path(
        paths,
        flavor,
        format!("{scope}/{}/{{name}}", def.plural),
        &item_params,
        &object,
    );
    for sub in &def.subresources {
        let path = format!("{scope}/{}/{{name}}/{sub}", def.plural);
        let ops = match *sub {
            // Subresources that read and write the whole object
            // (`readCoreV1NamespacedPodStatus`, `…Ephemeralcontainers`, `…Resize`).
            "status" | "ephemeralcontainers" | "resize" => {
                let mut suffix = sub.to_string();
                if let Some(first) = suffix.get_mut(0..1) {
                    first.make_ascii_uppercase();
                }
                vec![
                    op(
                        "get",
                        "get",
                        format!("read{id}{scoped}{kind}{suffix}"),
                        None,
                        &[],
                        &kind_def,
                    ),
                    op(
                        "put",
                        "put",
                        format!("replace{id}{scoped}{kind}{suffix}"),
                        Some((kind_def.clone(), &["application/json", "application/yaml"])),
                        WRITE_PARAMS,
                        &kind_def,
                    ),
                    op(
                        "patch",
                        "patch",
                        format!("patch{id}{scoped}{kind}{suffix}"),
                        Some((PATCH.to_owned(), def.patch_types)),
                        PATCH_PARAMS,
                        &kind_def,
                    ),
                ]
            }
            "scale" => {
                let scale =
                    |verb, id: String, body: Option<(String, &'static [&'static str])>, query| Op {
                        verb,
                        action: verb,
                        id,
                        gvk: ("autoscaling", "v1", "Scale"),
                        body,
                        query,
                        response: SCALE.to_owned(),
                    };
                vec![
                    scale("get", format!("read{id}{scoped}{kind}Scale"), None, &[]),
                    scale(
                        "put",
                        format!("replace{id}{scoped}{kind}Scale"),
                        Some((SCALE.to_owned(), &["application/json", "application/yaml"])),
                        WRITE_PARAMS,
                    ),
                    scale(
                        "patch",
                        format!("patch{id}{scoped}{kind}Scale"),
                        Some((PATCH.to_owned(), def.patch_types)),
                        PATCH_PARAMS,
                    ),
                ]
            }
            "eviction" => {
                let body = "io.k8s.api.policy.v1.Eviction".to_owned();
                vec![Op {
                    verb: "post",
                    action: "post",
                    id: format!("create{id}{scoped}{kind}Eviction"),
                    gvk: ("policy", "v1", "Eviction"),
                    body: Some((body.clone(), &["application/json", "application/yaml"])),
                    query: WRITE_PARAMS,
                    response: body,
                }]
            }
            "binding" => {
                let body = "io.k8s.api.core.v1.Binding".to_owned();
                vec![Op {
                    verb: "post",
                    action: "post",
                    id: format!("create{id}{scoped}{kind}Binding"),
                    gvk: ("", "v1", "Binding"),
                    body: Some((body.clone(), &["application/json", "application/yaml"])),
                    query: WRITE_PARAMS,
                    response: body,
                }]
            }
            _ => continue,
        };
        put_path(paths, flavor, path, &item_params, &ops);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    #[test]
    fn patch_operations_advertise_smp_and_field_validation() {
        let def = find("lifecycle.k8s.io", "v1alpha1", "evictions").expect("evictions");
        let mut paths = Map::new();
        add(def, &mut paths, Flavor::V3);
        let patch = &paths["/apis/lifecycle.k8s.io/v1alpha1/namespaces/{namespace}/evictions/{name}"]
            ["patch"];
        assert_eq!(patch["x-kubernetes-group-version-kind"]["kind"], "Eviction");
        assert!(
            patch["requestBody"]["content"]["application/strategic-merge-patch+json"].is_object()
        );
        assert!(
            patch["parameters"]
                .as_array()
                .expect("params")
                .iter()
                .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
        );
        assert_eq!(
            patch["operationId"],
            "patchLifecycleV1alpha1NamespacedEviction"
        );
        assert!(paths.contains_key("/apis/lifecycle.k8s.io/v1alpha1/evictions"));
        assert!(paths.contains_key(
            "/apis/lifecycle.k8s.io/v1alpha1/namespaces/{namespace}/evictions/{name}/status"
        ));

        let pods = find("", "v1", "pods").expect("pods");
        let mut v2 = Map::new();
        add(pods, &mut v2, Flavor::V2);
        let eviction = &v2["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]["post"];
        assert_eq!(
            eviction["x-kubernetes-group-version-kind"]["group"],
            "policy"
        );
        assert_eq!(eviction["parameters"].as_array().map(Vec::len), Some(4));
        let nodes = find("", "v1", "nodes").expect("nodes");
        let mut cluster = Map::new();
        add(nodes, &mut cluster, Flavor::V3);
        assert!(cluster.contains_key("/api/v1/nodes/{name}/status"));
        assert_eq!(
            cluster["/api/v1/nodes/{name}"]["patch"]["operationId"],
            "patchCoreV1Node"
        );
    }
}
