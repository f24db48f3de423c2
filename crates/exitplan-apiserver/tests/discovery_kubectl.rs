//! The real kubectl (v1.32, on PATH) against a router that serves only the
//! discovery endpoints, OpenAPI and a Table list: `kubectl api-resources`,
//! `kubectl explain`, `kubectl get` and `kubectl apply --dry-run=client`
//! work as they do against kube-apiserver.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Path as UrlPath;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use exitplan_apiserver::discovery::{self, IncludeObject};
use exitplan_apiserver::registry::{RESOURCES, find};
use exitplan_apiserver::rest;
use serde_json::{Value, json};

fn json_response(status: StatusCode, content_type: &str, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, content_type.to_owned())],
        body.to_string(),
    )
        .into_response()
}

fn ok(body: &Value) -> Response {
    json_response(StatusCode::OK, "application/json", body)
}

fn not_found() -> Response {
    json_response(
        StatusCode::NOT_FOUND,
        "application/json",
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "the server could not find the requested resource", "reason": "NotFound", "code": 404}),
    )
}

fn accept(headers: &HeaderMap) -> &str {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

fn discovery_answer(headers: &HeaderMap, aggregated: Value, legacy: Value) -> Response {
    if discovery::wants_aggregated(accept(headers)) {
        json_response(
            StatusCode::OK,
            discovery::AGGREGATED_CONTENT_TYPE,
            &aggregated,
        )
    } else {
        ok(&legacy)
    }
}

fn now() -> jiff::Timestamp {
    "2026-01-01T00:10:00Z".parse().expect("time")
}

/// A list answer: a Table when kubectl asks for one.
fn list(
    headers: &HeaderMap,
    group: &str,
    version: &str,
    plural: &str,
    items: Vec<Value>,
) -> Response {
    let Some(def) = find(group, version, plural) else {
        return not_found();
    };
    if accept(headers).contains("as=Table") {
        let table = discovery::table(
            def,
            &items,
            json!({"resourceVersion": "7"}),
            IncludeObject::Metadata,
            now(),
        );
        return json_response(
            StatusCode::OK,
            "application/json;as=Table;v=v1;g=meta.k8s.io",
            &table,
        );
    }
    ok(
        &json!({"kind": def.list_kind(), "apiVersion": def.api_version(), "metadata": {"resourceVersion": "7"}, "items": items}),
    )
}

fn pods() -> Vec<Value> {
    vec![json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "default", "uid": "u1", "creationTimestamp": "2026-01-01T00:05:00Z"},
        "spec": {"containers": [{"name": "a", "image": "nginx"}], "nodeName": "node-1"},
        "status": {"phase": "Running", "podIPs": [{"ip": "10.1.0.7"}],
                   "containerStatuses": [{"name": "a", "ready": true, "restartCount": 0, "image": "nginx", "imageID": "", "state": {"running": {}}}]}
    })]
}

fn evictions() -> Vec<Value> {
    vec![json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
        "metadata": {"name": "web-0-x1", "namespace": "default", "uid": "u2", "creationTimestamp": "2026-01-01T00:08:00Z"},
        "spec": {"target": {"pod": {"name": "web-0", "uid": "u1"}}},
        "status": {"targetResponders": [
            {"name": "acme.io/backup", "priority": 200, "state": "Active"},
            {"name": "imperative-eviction.k8s.io/evictor", "priority": 100, "state": "Inactive"}]}
    })]
}

/// PATCH requests the router received: (Content-Type, body).
type Patches = Arc<Mutex<Vec<(String, String)>>>;

const POD_APPLIED: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"default"},"spec":{"containers":[{"image":"nginx","name":"a"}],"evictionResponders":[{"name":"acme.io/a","priority":2000},{"name":"acme.io/b","priority":1500}]}}"#;

fn live_pod() -> Value {
    let mut pod: Value = serde_json::from_str(POD_APPLIED).expect("pod");
    pod["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": format!("{POD_APPLIED}\n")});
    pod["metadata"]["uid"] = json!("u3");
    pod["metadata"]["resourceVersion"] = json!("5");
    pod
}

fn router(patches: Patches) -> Router {
    Router::new()
        .route(
            "/api/v1/namespaces/default/pods/web-1",
            get(|| async { ok(&live_pod()) }).patch(move |h: HeaderMap, body: String| {
                let patches = patches.clone();
                async move {
                    let ct = h
                        .get(header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_owned();
                    if let Ok(mut p) = patches.lock() {
                        p.push((ct, body));
                    }
                    ok(&live_pod())
                }
            }),
        )
        .route("/version", get(|| async { ok(&discovery::version()) }))
        .route(
            "/api",
            get(|h: HeaderMap| async move {
                discovery_answer(
                    &h,
                    discovery::aggregated_core(&builtin()),
                    discovery::core_versions(),
                )
            }),
        )
        .route(
            "/apis",
            get(|h: HeaderMap| async move {
                discovery_answer(
                    &h,
                    discovery::aggregated_groups(&builtin()),
                    discovery::group_list(&builtin()),
                )
            }),
        )
        .route(
            "/api/v1",
            get(|| async {
                discovery::resource_list(&builtin(), "", "v1").map_or_else(not_found, |d| ok(&d))
            }),
        )
        .route(
            "/apis/{group}",
            get(|UrlPath(g): UrlPath<String>| async move {
                discovery::group(&builtin(), &g).map_or_else(not_found, |d| ok(&d))
            }),
        )
        .route(
            "/apis/{group}/{version}",
            get(|UrlPath((g, v)): UrlPath<(String, String)>| async move {
                discovery::resource_list(&builtin(), &g, &v).map_or_else(not_found, |d| ok(&d))
            }),
        )
        .route("/openapi/v2", get(openapi))
        .route("/openapi/v3", get(openapi))
        .route("/openapi/v3/{*path}", get(openapi))
        .route(
            "/api/v1/namespaces/{ns}/pods",
            get(|h: HeaderMap| async move { list(&h, "", "v1", "pods", pods()) }),
        )
        .route(
            "/apis/lifecycle.k8s.io/v1alpha1/namespaces/{ns}/evictions",
            get(|h: HeaderMap| async move {
                list(&h, "lifecycle.k8s.io", "v1alpha1", "evictions", evictions())
            }),
        )
        .fallback(|| async { not_found() })
}

/// The OpenAPI documents as the server negotiates them (kubectl asks
/// `/openapi/v2` for protobuf only).
async fn openapi(method: Method, headers: HeaderMap, uri: Uri) -> Response {
    let served = exitplan_apiserver::registry::Registry::new().served();
    rest::openapi::serve(&method, &headers, uri.path(), &served)
        .unwrap_or_else(|e| e.into_response())
}

struct Kubectl {
    dir: PathBuf,
}

impl Kubectl {
    fn new(port: u16) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let dir =
            std::env::temp_dir().join(format!("exitplan-kubectl-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: http://127.0.0.1:{port}\ncontexts:\n- name: t\n  context:\n    cluster: t\n    user: t\n    namespace: default\ncurrent-context: t\nusers:\n- name: t\n  user: {{}}\n"
        );
        std::fs::write(dir.join("kubeconfig"), kubeconfig).expect("kubeconfig");
        Kubectl { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Runs kubectl; its stdout, or the failure with stderr.
    fn run(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new("kubectl")
            .args(args)
            .arg("--kubeconfig")
            .arg(self.path("kubeconfig"))
            .arg("--cache-dir")
            .arg(self.path("cache"))
            .env("HOME", &self.dir)
            .output()
            .map_err(|e| e.to_string())?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            Ok(stdout)
        } else {
            Err(format!(
                "kubectl {args:?} failed: {}\n{stdout}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn kubectl_available() -> bool {
    Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write manifest");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_discovers_explains_lists_and_applies() {
    if !kubectl_available() {
        eprintln!("SKIP: kubectl is not on PATH");
        return;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let patches = Patches::default();
    let server = tokio::spawn({
        let router = router(patches.clone());
        async move { axum::serve(listener, router).await }
    });

    let result = tokio::task::spawn_blocking(move || -> Result<(), String> {
        let k = Kubectl::new(port);

        let resources = k.run(&["api-resources", "--no-headers"])?;
        for def in RESOURCES {
            let api_version = def.api_version();
            let namespaced = def.namespaced.to_string();
            let listed = resources.lines().any(|line| {
                let cols: Vec<&str> = line.split_whitespace().collect();
                cols.first() == Some(&def.plural)
                    && cols.contains(&api_version.as_str())
                    && cols.contains(&namespaced.as_str())
                    && cols.last() == Some(&def.kind)
                    && def
                        .short_names
                        .iter()
                        .all(|s| cols.iter().any(|c| c.split(',').any(|p| p == *s)))
            });
            if !listed {
                return Err(format!("{} {api_version} missing from:\n{resources}", def.plural));
            }
        }

        let explain = k.run(&["explain", "evictions.status.targetResponders"])?;
        for want in ["GROUP:      lifecycle.k8s.io", "KIND:       Eviction", "FIELD: targetResponders <[]TargetResponder>", "targetResponders reference responders", "state\t<string> -required-"] {
            if !explain.contains(want) {
                return Err(format!("explain evictions.status.targetResponders lacks {want:?}:\n{explain}"));
            }
        }
        let explain = k.run(&["explain", "pods.spec.evictionResponders"])?;
        for want in ["KIND:       Pod", "FIELD: evictionResponders <[]EvictionResponder>", "priority\t<integer>"] {
            if !explain.contains(want) {
                return Err(format!("explain pods.spec.evictionResponders lacks {want:?}:\n{explain}"));
            }
        }
        for def in RESOURCES {
            let out = k.run(&["explain", def.plural, &format!("--api-version={}", def.api_version())])?;
            if !out.contains(&format!("KIND:       {}", def.kind)) {
                return Err(format!("explain {}: {out}", def.plural));
            }
        }
        k.run(&["explain", "evictionrequests.spec"])?;
        k.run(&["explain", "leases.spec.holderIdentity"])?;
        let note = k.run(&["explain", "events.note", "--api-version=events.k8s.io/v1"])?;
        if !note.contains("GROUP:      events.k8s.io") {
            return Err(format!("explain events.note: {note}"));
        }

        let pods = k.run(&["get", "pods", "-o", "wide"])?;
        let want = ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"];
        let header: Vec<&str> = pods.lines().next().unwrap_or_default().split("   ").map(str::trim).filter(|s| !s.is_empty()).collect();
        if header != want {
            return Err(format!("pod columns {header:?}:\n{pods}"));
        }
        let row: Vec<&str> = pods.lines().nth(1).unwrap_or_default().split_whitespace().collect();
        if row.first() != Some(&"web-0") || !row.contains(&"1/1") || !row.contains(&"Running") || !row.contains(&"10.1.0.7") {
            return Err(format!("pod row:\n{pods}"));
        }
        let evictions = k.run(&["get", "evictions"])?;
        let lines: Vec<Vec<&str>> = evictions.lines().map(|l| l.split_whitespace().collect()).collect();
        if lines.first().map(Vec::as_slice) != Some(&["NAME", "TARGET", "RESPONDER", "STATE", "OUTCOME", "AGE"][..])
            || lines.get(1).map(Vec::as_slice) != Some(&["web-0-x1", "pod/web-0", "acme.io/backup", "Active", "<none>", "2m"][..])
        {
            return Err(format!("kubectl get evictions:\n{evictions}"));
        }

        let manifest = k.path("er.yaml");
        write(
            &manifest,
            "apiVersion: lifecycle.k8s.io/v1alpha1\nkind: EvictionRequest\nmetadata:\n  name: drain-web-0\n  namespace: default\nspec:\n  target:\n    pod:\n      name: web-0\n      uid: 3f9a3c1e-4f1e-4a53-9a4c-8f1b2c3d4e5f\n  requester: acme.io/drain\n  intent: Eviction\n",
        );
        let applied = k.run(&["apply", "--dry-run=client", "-f", &manifest.to_string_lossy()])?;
        if !applied.contains("evictionrequest.lifecycle.k8s.io/drain-web-0 created (dry run)") {
            return Err(format!("apply: {applied}"));
        }

        // Client-side apply of a changed pod: kubectl 1.32 does not know
        // spec.evictionResponders, so a keyed strategic merge patch of it can
        // only come from this server's OpenAPI v3 patch metadata.
        let pod = k.path("pod.json");
        write(&pod, &POD_APPLIED.replace("1500", "1600"));
        k.run(&["apply", "-f", &pod.to_string_lossy()])?;
        let sent = patches.lock().map(|p| p.clone()).unwrap_or_default();
        let Some((content_type, body)) = sent.first() else {
            return Err("kubectl sent no PATCH".into());
        };
        let patch: Value = serde_json::from_str(body).map_err(|e| e.to_string())?;
        if content_type != "application/strategic-merge-patch+json"
            || patch["spec"]["$setElementOrder/evictionResponders"]
                != json!([{"name": "acme.io/a"}, {"name": "acme.io/b"}])
            || patch["spec"]["evictionResponders"] != json!([{"name": "acme.io/b", "priority": 1600}])
        {
            return Err(format!("apply sent {content_type}: {body}"));
        }
        k.run(&["apply", "--server-side", "-f", &pod.to_string_lossy()])?;
        let sent = patches.lock().map(|p| p.clone()).unwrap_or_default();
        match sent.get(1) {
            Some((ct, body)) if ct == "application/apply-patch+yaml" && body.contains("\"priority\":1600") => {}
            other => return Err(format!("server-side apply sent {other:?}")),
        }
        Ok(())
    })
    .await
    .expect("kubectl task");
    server.abort();
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// The discovery of the built-in resources.
fn builtin() -> std::sync::Arc<exitplan_apiserver::registry::Served> {
    exitplan_apiserver::registry::Registry::new().served()
}
