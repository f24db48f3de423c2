//! The real kubectl (v1.32, on PATH) on the RBAC kinds: `kubectl create
//! role/clusterrole/rolebinding/clusterrolebinding` build the objects a
//! real kube-apiserver stores, `kubectl get` prints upstream's columns
//! (Roles: NAME, CREATED AT; bindings: NAME, ROLE, AGE and, wide, USERS,
//! GROUPS, SERVICEACCOUNTS), and a `roleRef` change is refused; `kubectl
//! apply` and `kubectl auth reconcile` of RBAC manifests.

mod support;

use serde_json::json;
use support::https::Cluster;

/// kubectl's table as rows of cells (columns are padded with ≥ 2 spaces).
fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|line| {
            line.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

fn is_age(cell: &str) -> bool {
    cell.ends_with('s') && cell[..cell.len() - 1].parse::<u32>().is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_and_prints_rbac_objects() {
    let c = Cluster::start("rbac").await;
    let created = c
        .ok(
            &[
                "create",
                "role",
                "pod-reader",
                "--verb=get,list",
                "--resource=pods,deployments.apps",
            ],
            None,
        )
        .await;
    assert_eq!(
        created,
        "role.rbac.authorization.k8s.io/pod-reader created\n"
    );
    let role = c.json(&["get", "role", "pod-reader", "-o", "json"]).await;
    assert_eq!(
        role["rules"],
        json!([
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]}
        ])
    );

    c.ok(
        &[
            "create",
            "clusterrole",
            "metrics",
            "--verb=get",
            "--non-resource-url=/metrics",
        ],
        None,
    )
    .await;
    c.ok(
        &[
            "create",
            "clusterrole",
            "monitoring",
            "--aggregation-rule=rbac.example.com/aggregate-to-monitoring=true",
        ],
        None,
    )
    .await;
    let agg = c
        .json(&["get", "clusterrole", "monitoring", "-o", "json"])
        .await;
    assert_eq!(
        agg["aggregationRule"],
        json!({"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate-to-monitoring": "true"}}]})
    );

    c.ok(
        &[
            "create",
            "rolebinding",
            "readers",
            "--role=pod-reader",
            "--user=jane",
            "--group=devs",
            "--serviceaccount=default:robot",
        ],
        None,
    )
    .await;
    c.ok(
        &[
            "create",
            "clusterrolebinding",
            "scrapers",
            "--clusterrole=metrics",
            "--serviceaccount=monitoring:prometheus",
        ],
        None,
    )
    .await;
    let rb = c
        .json(&["get", "rolebinding", "readers", "-o", "json"])
        .await;
    assert_eq!(
        rb["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"})
    );
    assert_eq!(
        rb["subjects"],
        json!([
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"},
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "name": "robot", "namespace": "default"}
        ])
    );

    let out = c.ok(&["get", "roles"], None).await;
    let got = rows(&out);
    assert_eq!(got[0], ["NAME", "CREATED AT"], "{out}");
    assert_eq!(got[1][0], "pod-reader", "{out}");
    assert!(got[1][1].len() == 20 && got[1][1].ends_with('Z'), "{out}");

    let out = c.ok(&["get", "rolebindings", "-o", "wide"], None).await;
    let got = rows(&out);
    assert_eq!(
        got[0],
        ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"],
        "{out}"
    );
    assert_eq!(got[1][..2], ["readers", "Role/pod-reader"], "{out}");
    assert!(is_age(&got[1][2]), "{out}");
    assert_eq!(got[1][3..], ["jane", "devs", "default/robot"], "{out}");

    let out = c.ok(&["get", "clusterrolebinding", "scrapers"], None).await;
    let got = rows(&out);
    assert_eq!(got[0], ["NAME", "ROLE", "AGE"], "{out}");
    assert_eq!(got[1][..2], ["scrapers", "ClusterRole/metrics"], "{out}");

    let mut changed = rb.clone();
    changed["roleRef"]["name"] = json!("other");
    let manifest = c.file("rb.json", &changed.to_string());
    let stderr = c.fails(&["replace", "-f", &manifest]).await;
    assert_eq!(
        stderr,
        "The RoleBinding \"readers\" is invalid: roleRef: Invalid value: {\"APIGroup\":\"rbac.authorization.k8s.io\",\"Kind\":\"Role\",\"Name\":\"other\"}: cannot change roleRef\n"
    );

    c.stop().await;
}

const MANIFEST: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read-pods, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects:
- {kind: ServiceAccount, name: robot, namespace: default}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_and_auth_reconcile() {
    let c = Cluster::start("rbac-apply").await;
    let out = c.ok(&["apply", "-f", "-"], Some(MANIFEST)).await;
    assert_eq!(
        out,
        "clusterrole.rbac.authorization.k8s.io/reader created\nrolebinding.rbac.authorization.k8s.io/read-pods created\n"
    );
    let wider = MANIFEST.replace("verbs: [get]", "verbs: [get, list, watch]");
    let out = c.ok(&["apply", "-f", "-"], Some(&wider)).await;
    assert_eq!(
        out,
        "clusterrole.rbac.authorization.k8s.io/reader configured\nrolebinding.rbac.authorization.k8s.io/read-pods unchanged\n"
    );
    let role = c
        .json(&["get", "clusterrole", "reader", "-o", "json"])
        .await;
    assert_eq!(role["rules"][0]["verbs"], json!(["get", "list", "watch"]));

    // reconcile adds missing rules and subjects, and recreates a binding
    // whose roleRef changed (the server refuses to change it in place).
    let reconciled = wider
        .replace("resources: [pods]", "resources: [pods, services]")
        .replace(
            "kind: ClusterRole, name: reader",
            "kind: ClusterRole, name: viewer",
        )
        .replace("metadata: {name: reader}", "metadata: {name: viewer}");
    let file = c.file("reconcile.yaml", &reconciled);
    c.ok(&["auth", "reconcile", "-f", &file], None).await;
    let rb = c
        .json(&["get", "rolebinding", "read-pods", "-o", "json"])
        .await;
    assert_eq!(rb["roleRef"]["name"], "viewer");
    let viewer = c
        .json(&["get", "clusterrole", "viewer", "-o", "json"])
        .await;
    assert_eq!(viewer["rules"][0]["resources"], json!(["pods", "services"]));
    c.stop().await;
}
