//! CustomResourceDefinitions over REST: a CRD is validated, gets its
//! `NamesAccepted`/`Established` conditions and serves its custom resources
//! (discovery, CRUD, schema validation, pruning, defaulting, CEL rules,
//! `status` and `scale`, printer columns, selectable fields, several
//! versions); deleting it deletes its objects.

mod support;

use exitplan_apiserver::server::Server;
use serde_json::{Value, json};
use support::*;

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

async fn get(server: &Server, uri: &str) -> (u16, Value) {
    let (code, _, out) = raw(server, "GET", uri, &[], "").await;
    (code, out)
}

/// A namespaced `Widget` CRD: a structural schema with defaults, an enum,
/// bounds, CEL rules (one with `messageExpression`, one transition rule),
/// status and scale subresources, printer columns and a selectable field.
fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                      "shortNames": ["wd"], "categories": ["all"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {
                    "status": {},
                    "scale": {"specReplicasPath": ".spec.replicas",
                              "statusReplicasPath": ".status.replicas",
                              "labelSelectorPath": ".status.selector"}
                },
                "selectableFields": [{"jsonPath": ".spec.color"}],
                "additionalPrinterColumns": [
                    {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["color"],
                            "x-kubernetes-validations": [
                                {"rule": "self.replicas <= self.maxReplicas",
                                 "message": "replicas must not exceed maxReplicas"},
                                {"rule": "self.color != 'black'",
                                 "messageExpression": "'color ' + self.color + ' is not allowed'"}
                            ],
                            "properties": {
                                "color": {"type": "string", "enum": ["red", "green", "blue", "black"],
                                          "x-kubernetes-validations": [
                                              {"rule": "self == oldSelf", "message": "color is immutable"}]},
                                "replicas": {"type": "integer", "minimum": 0, "default": 1},
                                "maxReplicas": {"type": "integer", "default": 10}
                            }
                        },
                        "status": {
                            "type": "object",
                            "properties": {
                                "replicas": {"type": "integer"},
                                "selector": {"type": "string"}
                            }
                        }
                    }
                }}
            }]
        }
    })
}

async fn install(server: &Server) {
    let (code, out) = send(server, "POST", CRDS, JSON, &widget_crd()).await;
    assert_eq!(code, 201, "{out}");
}

fn widget(name: &str, color: &str) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
           "metadata": {"name": name}, "spec": {"color": color}})
}

fn condition<'a>(crd: &'a Value, ty: &str) -> &'a Value {
    crd["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == ty))
        .unwrap_or(&Value::Null)
}

#[tokio::test]
async fn a_created_crd_is_established_and_served_at_once() {
    let server = server().await;
    install(&server).await;
    let (code, crd) = get(&server, &format!("{CRDS}/widgets.example.com")).await;
    assert_eq!(code, 200);
    assert_eq!(condition(&crd, "NamesAccepted")["status"], "True");
    assert_eq!(condition(&crd, "NamesAccepted")["reason"], "NoConflicts");
    assert_eq!(condition(&crd, "Established")["status"], "True");
    assert_eq!(
        condition(&crd, "Established")["reason"],
        "InitialNamesAccepted"
    );
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Widget");
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));

    let (code, list) = get(&server, "/apis/example.com/v1").await;
    assert_eq!(code, 200, "{list}");
    let names: Vec<&str> = list["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["widgets", "widgets/scale", "widgets/status"]);
    assert_eq!(list["resources"][0]["shortNames"], json!(["wd"]));
    assert_eq!(list["resources"][0]["categories"], json!(["all"]));
    let (_, groups) = get(&server, "/apis").await;
    let group = groups["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .find(|g| g["name"] == "example.com")
        .expect("example.com served");
    assert_eq!(group["preferredVersion"]["version"], "v1");
}

#[tokio::test]
async fn custom_resources_are_pruned_defaulted_and_validated() {
    let server = server().await;
    install(&server).await;
    let mut w = widget("w1", "red");
    w["spec"]["unknown"] = json!("dropped");
    w["status"] = json!({"replicas": 5});
    let (code, created) = send(&server, "POST", WIDGETS, JSON, &w).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        created["spec"],
        json!({"color": "red", "replicas": 1, "maxReplicas": 10})
    );
    assert!(
        created.get("status").is_none(),
        "status is the subresource's"
    );
    assert_eq!(created["metadata"]["generation"], 1);
    assert!(created["metadata"]["uid"].is_string());

    let mut bad = widget("w2", "purple");
    bad["spec"]["replicas"] = json!(-1);
    let (code, status) = send(&server, "POST", WIDGETS, JSON, &bad).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "Widget.example.com \"w2\" is invalid: [spec.color: Unsupported value: \"purple\": supported values: \"red\", \"green\", \"blue\", \"black\", spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, .spec.replicas: Invalid value: -1: should be a non-negative integer]"
    );
    assert_eq!(status["details"]["group"], "example.com");
    assert_eq!(status["details"]["kind"], "Widget");
    assert_eq!(status["details"]["causes"][0]["field"], "spec.color");
    let (code, _) = get(&server, &format!("{WIDGETS}/w2")).await;
    assert_eq!(code, 404, "nothing stored");

    let (code, status) = send(
        &server,
        "POST",
        WIDGETS,
        JSON,
        &json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w3"}, "spec": {}}),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "Widget.example.com \"w3\" is invalid: spec.color: Required value"
    );
}

#[tokio::test]
async fn cel_rules_fail_with_kube_apiservers_messages() {
    let server = server().await;
    install(&server).await;
    let mut w = widget("w", "red");
    w["spec"]["replicas"] = json!(11);
    let (code, status) = send(&server, "POST", WIDGETS, JSON, &w).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "Widget.example.com \"w\" is invalid: spec: Invalid value: \"object\": replicas must not exceed maxReplicas"
    );
    let (code, status) = send(&server, "POST", WIDGETS, JSON, &widget("b", "black")).await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "Widget.example.com \"b\" is invalid: spec: Invalid value: \"object\": color black is not allowed"
    );

    // A transition rule runs on update only.
    let (code, _) = send(&server, "POST", WIDGETS, JSON, &widget("t", "red")).await;
    assert_eq!(code, 201);
    let (code, status) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/t"),
        MERGE,
        &json!({"spec": {"color": "blue"}}),
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "Widget.example.com \"t\" is invalid: spec.color: Invalid value: \"string\": color is immutable"
    );
    let (code, patched) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/t"),
        MERGE,
        &json!({"spec": {"replicas": 3}}),
    )
    .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["metadata"]["generation"], 2);
}

#[tokio::test]
async fn status_and_scale_subresources() {
    let server = server().await;
    install(&server).await;
    let (code, _) = send(&server, "POST", WIDGETS, JSON, &widget("w", "red")).await;
    assert_eq!(code, 201);
    let (code, out) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/w/status"),
        MERGE,
        &json!({"spec": {"replicas": 7}, "status": {"replicas": 1, "selector": "app=w"}}),
    )
    .await;
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["status"]["replicas"], 1);
    assert_eq!(out["spec"]["replicas"], 1, "a status write keeps spec");
    assert_eq!(out["metadata"]["generation"], 1);

    let (code, scale) = get(&server, &format!("{WIDGETS}/w/scale")).await;
    assert_eq!(code, 200, "{scale}");
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["spec"]["replicas"], 1);
    assert_eq!(scale["status"]["replicas"], 1);
    assert_eq!(scale["status"]["selector"], "app=w");
    let (code, scale) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/w/scale"),
        MERGE,
        &json!({"spec": {"replicas": 4}}),
    )
    .await;
    assert_eq!(code, 200, "{scale}");
    let (_, w) = get(&server, &format!("{WIDGETS}/w")).await;
    assert_eq!(w["spec"]["replicas"], 4);
    // Scaling past the CEL rule is refused by the rule.
    let (code, status) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/w/scale"),
        MERGE,
        &json!({"spec": {"replicas": 11}}),
    )
    .await;
    assert_eq!(code, 422, "{status}");
}

#[tokio::test]
async fn tables_selectors_and_strategic_merge_patch() {
    let server = server().await;
    install(&server).await;
    for (name, color) in [("a", "red"), ("b", "green")] {
        let (code, _) = send(&server, "POST", WIDGETS, JSON, &widget(name, color)).await;
        assert_eq!(code, 201);
    }
    let (code, _, table) = raw(
        &server,
        "GET",
        WIDGETS,
        &[("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
        "",
    )
    .await;
    assert_eq!(code, 200);
    let columns: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(columns, ["Name", "Color", "Replicas"]);
    assert_eq!(table["rows"][0]["cells"], json!(["a", "red", 1]));

    let (code, list) = get(
        &server,
        &format!("{WIDGETS}?fieldSelector=spec.color%3Dgreen"),
    )
    .await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(list["items"][0]["metadata"]["name"], "b");
    let (code, status) = get(&server, &format!("{WIDGETS}?fieldSelector=spec.size%3D1")).await;
    assert_eq!(code, 400);
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.contains("field label not supported: spec.size")),
        "{status}"
    );

    let (code, status) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/a"),
        "application/strategic-merge-patch+json",
        &json!({"spec": {"replicas": 2}}),
    )
    .await;
    assert_eq!(code, 415, "{status}");
}

#[tokio::test]
async fn invalid_crds_are_refused_and_store_nothing() {
    let server = server().await;
    let mut crd = widget_crd();
    crd["spec"]["versions"][0]["storage"] = json!(false);
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"]
        [0]["rule"] = json!("self.nope > 1");
    let (code, status) = send(&server, "POST", CRDS, JSON, &crd).await;
    assert_eq!(code, 422, "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "CustomResourceDefinition.apiextensions.k8s.io \"widgets.example.com\" is invalid: ["
        ),
        "{message}"
    );
    assert!(
        message.contains("must have exactly one version marked as storage version"),
        "{message}"
    );
    assert!(
        message.contains(
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value:"
        ) && message.contains("compilation failed: ERROR: <input>:1:5: undefined field 'nope'"),
        "{message}"
    );
    let (code, _) = get(&server, &format!("{CRDS}/widgets.example.com")).await;
    assert_eq!(code, 404);
    let (code, _) = get(&server, "/apis/example.com/v1").await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn deleting_a_crd_deletes_its_objects() {
    let server = server().await;
    install(&server).await;
    let (code, _) = send(&server, "POST", WIDGETS, JSON, &widget("w", "red")).await;
    assert_eq!(code, 201);
    let (_, _, metrics) = raw(&server, "GET", "/metrics", &[], "").await;
    let metrics = metrics.as_str().unwrap_or_default().to_owned();
    assert!(
        metrics.contains("apiserver_storage_objects{resource=\"widgets.example.com\"} 1"),
        "{metrics}"
    );
    let (code, _, _) = raw(
        &server,
        "DELETE",
        &format!("{CRDS}/widgets.example.com"),
        &[],
        "",
    )
    .await;
    assert_eq!(code, 200);
    let (code, _) = get(&server, WIDGETS).await;
    assert_eq!(code, 404);
    // Created again, the CRD starts empty.
    install(&server).await;
    let (code, list) = get(&server, WIDGETS).await;
    assert_eq!(code, 200);
    assert_eq!(list["items"], json!([]));
}

#[tokio::test]
async fn several_versions_share_one_storage() {
    let server = server().await;
    let mut crd = widget_crd();
    let mut beta = crd["spec"]["versions"][0].clone();
    beta["name"] = json!("v1beta1");
    beta["storage"] = json!(false);
    crd["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(beta);
    let (code, out) = send(&server, "POST", CRDS, JSON, &crd).await;
    assert_eq!(code, 201, "{out}");
    let mut w = widget("w", "red");
    w["apiVersion"] = json!("example.com/v1beta1");
    let (code, out) = send(
        &server,
        "POST",
        "/apis/example.com/v1beta1/namespaces/default/widgets",
        JSON,
        &w,
    )
    .await;
    assert_eq!(code, 201, "{out}");
    assert_eq!(out["apiVersion"], "example.com/v1beta1");
    let (code, v1) = get(&server, &format!("{WIDGETS}/w")).await;
    assert_eq!(code, 200);
    assert_eq!(v1["apiVersion"], "example.com/v1");
    let (_, group) = get(&server, "/apis/example.com").await;
    assert_eq!(group["preferredVersion"]["version"], "v1");
    assert_eq!(group["versions"][1]["version"], "v1beta1");
}

#[tokio::test]
async fn crds_survive_a_restart() {
    let dir = std::env::temp_dir().join(format!("exitplan-crd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("db");
    {
        let server = exitplan_apiserver::server::Server::builder()
            .store(exitplan_apiserver::storage::Store::open(&path).expect("store"))
            .build()
            .await
            .expect("server");
        install(&server).await;
        let (code, _) = send(&server, "POST", WIDGETS, JSON, &widget("w", "red")).await;
        assert_eq!(code, 201);
        server.shutdown();
    }
    let server = exitplan_apiserver::server::Server::builder()
        .store(reopen(&path).await)
        .build()
        .await
        .expect("server");
    let (code, w) = get(&server, &format!("{WIDGETS}/w")).await;
    assert_eq!(code, 200, "{w}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn unknown_fields_follow_field_validation() {
    let server = server().await;
    install(&server).await;
    let mut w = widget("w", "red");
    w["spec"]["size"] = json!(3);
    let (code, status) = send(
        &server,
        "POST",
        &format!("{WIDGETS}?fieldValidation=Strict"),
        JSON,
        &w,
    )
    .await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.size\""
    );
    let (code, _) = get(&server, &format!("{WIDGETS}/w")).await;
    assert_eq!(code, 404);
    let (code, headers, created) = raw(
        &server,
        "POST",
        &format!("{WIDGETS}?fieldValidation=Warn"),
        &[("content-type", JSON)],
        &w.to_string(),
    )
    .await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        headers.get("warning").and_then(|v| v.to_str().ok()),
        Some("299 - \"unknown field \\\"spec.size\\\"\"")
    );
    assert!(created["spec"].get("size").is_none());
}

/// kube-rs, as a controller author uses it: the typed CRD API, a dynamic
/// API on the custom resource, a watch, and a CEL failure as `kube::Error`.
#[tokio::test]
async fn kube_rs_creates_watches_and_reads_cel_errors() {
    use futures_util::StreamExt;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{Api, ApiResource, DynamicObject, PostParams, WatchEvent, WatchParams};

    let server = server().await;
    let client = client(&server);
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(widget_crd()).expect("crd");
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("crd created");
    let crd = crds.get("widgets.example.com").await.expect("crd");
    let established = crd
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .any(|c| c.type_ == "Established" && c.status == "True");
    assert!(established);

    let ar = ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let widgets: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
    let mut events = widgets
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    let obj: DynamicObject = serde_json::from_value(widget("w", "green")).expect("object");
    widgets
        .create(&PostParams::default(), &obj)
        .await
        .expect("created");
    match events.next().await {
        Some(Ok(WatchEvent::Added(o))) => {
            assert_eq!(o.metadata.name.as_deref(), Some("w"));
            assert_eq!(o.data["spec"]["replicas"], 1);
        }
        other => panic!("expected ADDED, got {other:?}"),
    }

    let mut too_many = widget("x", "green");
    too_many["spec"]["replicas"] = json!(20);
    let obj: DynamicObject = serde_json::from_value(too_many).expect("object");
    let err = api_error(
        widgets
            .create(&PostParams::default(), &obj)
            .await
            .expect_err("CEL rule"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(err.reason, "Invalid");
    assert_eq!(
        err.message,
        "Widget.example.com \"x\" is invalid: spec: Invalid value: \"object\": replicas must not exceed maxReplicas"
    );
}

#[tokio::test]
async fn cluster_scoped_resources_and_namespace_deletion() {
    let server = server().await;
    install(&server).await;
    let mut crd = widget_crd();
    crd["metadata"]["name"] = json!("gadgets.example.com");
    crd["spec"]["scope"] = json!("Cluster");
    crd["spec"]["names"] = json!({"plural": "gadgets", "kind": "Gadget"});
    let (code, out) = send(&server, "POST", CRDS, JSON, &crd).await;
    assert_eq!(code, 201, "{out}");
    let mut g = widget("g", "red");
    g["kind"] = json!("Gadget");
    let (code, out) = send(&server, "POST", "/apis/example.com/v1/gadgets", JSON, &g).await;
    assert_eq!(code, 201, "{out}");
    assert!(out["metadata"].get("namespace").is_none());
    let (code, _) = get(&server, "/apis/example.com/v1/namespaces/default/gadgets/g").await;
    assert_eq!(code, 404, "cluster-scoped: no namespaced path");
    let (_, list) = get(&server, "/apis/example.com/v1").await;
    let gadgets = list["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == "gadgets"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(gadgets["namespaced"], false);
    assert_eq!(gadgets["singularName"], "gadget");

    let (code, _) = send(
        &server,
        "POST",
        "/api/v1/namespaces",
        JSON,
        &json!({"metadata": {"name": "team"}}),
    )
    .await;
    assert_eq!(code, 201);
    let uri = "/apis/example.com/v1/namespaces/team/widgets";
    let (code, _) = send(&server, "POST", uri, JSON, &widget("w", "red")).await;
    assert_eq!(code, 201);
    let (code, _, _) = raw(&server, "DELETE", "/api/v1/namespaces/team", &[], "").await;
    assert_eq!(code, 200);
    let (code, list) = get(&server, uri).await;
    assert_eq!(code, 200);
    assert_eq!(
        list["items"],
        json!([]),
        "the namespace's custom resources went with it"
    );
}

#[tokio::test]
async fn a_crd_update_changes_what_is_served() {
    let server = server().await;
    install(&server).await;
    let mut w = widget("w", "red");
    w["spec"]["size"] = json!("L");
    let (code, out) = send(&server, "POST", WIDGETS, JSON, &w).await;
    assert_eq!(code, 201);
    assert!(
        out["spec"].get("size").is_none(),
        "not declared yet: pruned"
    );

    let (_, mut crd) = get(&server, &format!("{CRDS}/widgets.example.com")).await;
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"] =
        json!({"type": "string", "enum": ["S", "L"]});
    let (code, out) = send(
        &server,
        "PUT",
        &format!("{CRDS}/widgets.example.com"),
        JSON,
        &crd,
    )
    .await;
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["metadata"]["generation"], 2);
    let (code, out) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/w"),
        MERGE,
        &json!({"spec": {"size": "L"}}),
    )
    .await;
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["spec"]["size"], "L", "declared now: kept");
    let (code, status) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/w"),
        MERGE,
        &json!({"spec": {"size": "XL"}}),
    )
    .await;
    assert_eq!(code, 422, "{status}");
}

#[tokio::test]
async fn a_protobuf_body_for_a_custom_resource_is_refused() {
    let server = server().await;
    install(&server).await;
    let (code, _, status) = raw(
        &server,
        "POST",
        WIDGETS,
        &[("content-type", "application/vnd.kubernetes.protobuf")],
        "k8s\0garbage",
    )
    .await;
    assert_eq!(code, 415, "{status}");
    assert_eq!(status["reason"], "UnsupportedMediaType");
    assert_eq!(
        status["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
    );
    let (_, list) = get(&server, WIDGETS).await;
    assert_eq!(list["items"], json!([]));
}

#[tokio::test]
async fn metadata_that_is_not_an_object_is_a_decode_error() {
    let server = server().await;
    install(&server).await;
    let mut w = widget("w", "red");
    w["metadata"] = json!("w");
    let (code, status) = send(&server, "POST", WIDGETS, JSON, &w).await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: json: cannot unmarshal string into Go struct field Widget.metadata of type v1.ObjectMeta"
    );
    let (code, status) = send(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        JSON,
        &json!({"metadata": [1]}),
    )
    .await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ConfigMap.metadata of type v1.ObjectMeta"
    );
}
