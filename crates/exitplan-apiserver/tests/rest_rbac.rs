//! rbac.authorization.k8s.io/v1 Roles, ClusterRoles, RoleBindings and
//! ClusterRoleBindings through kube-rs's typed API: CRUD, defaulting,
//! upstream's validation answered as 422 with field causes, the immutable
//! `roleRef`, create on update (PUT), discovery and tables.

mod support;

use k8s_openapi::api::rbac::v1::{
    AggregationRule, ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef,
    Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams};
use serde_json::{Value, json};
use support::*;

const GROUP: &str = "rbac.authorization.k8s.io";

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        ..ObjectMeta::default()
    }
}

fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
    let list = |v: &[&str]| Some(v.iter().map(|s| (*s).to_owned()).collect());
    PolicyRule {
        verbs: verbs.iter().map(|s| (*s).to_owned()).collect(),
        api_groups: list(groups),
        resources: list(resources),
        ..PolicyRule::default()
    }
}

fn subject(kind: &str, name: &str, namespace: Option<&str>) -> Subject {
    Subject {
        kind: kind.into(),
        name: name.into(),
        namespace: namespace.map(str::to_owned),
        api_group: None,
    }
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: None,
        kind: kind.into(),
        name: name.into(),
    }
}

/// `(field, reason, message)` of each cause of a 422.
fn causes(status: &kube::core::Status) -> Vec<(String, String, String)> {
    status
        .details
        .as_ref()
        .map(|d| {
            d.causes
                .iter()
                .map(|c| (c.field.clone(), c.reason.clone(), c.message.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn cause(field: &str, reason: &str, message: &str) -> (String, String, String) {
    (field.into(), reason.into(), message.into())
}

#[tokio::test(start_paused = true)]
async fn roles_crud_and_validation() {
    let server = server().await;
    let roles: Api<Role> = Api::namespaced(client(&server), "default");
    let pp = PostParams::default();

    let created = roles
        .create(
            &pp,
            &Role {
                metadata: meta("system:pod-reader"),
                rules: Some(vec![rule(
                    &["get", "list", "watch"],
                    &[""],
                    &["pods", "pods/log"],
                )]),
            },
        )
        .await
        .expect("a path-segment name is enough");
    assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
    assert!(created.metadata.uid.is_some());

    let mut changed = created.clone();
    changed.rules = Some(vec![rule(&["*"], &["apps"], &["deployments"])]);
    let replaced = roles
        .replace("system:pod-reader", &pp, &changed)
        .await
        .expect("rules may change");
    assert_eq!(replaced.rules, changed.rules);

    let e = api_error(
        roles
            .create(
                &pp,
                &Role {
                    metadata: meta("bad"),
                    rules: Some(vec![
                        PolicyRule {
                            verbs: vec!["get".into()],
                            non_resource_urls: Some(vec!["/healthz".into()]),
                            ..PolicyRule::default()
                        },
                        rule(&[], &["v1"], &[]),
                    ]),
                },
            )
            .await
            .expect_err("invalid"),
    );
    assert_eq!(e.code, 422);
    assert_eq!(e.reason, "Invalid");
    assert_eq!(
        e.message,
        r#"Role.rbac.authorization.k8s.io "bad" is invalid: [rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs, rules[1].verbs: Required value: verbs must contain at least one value, rules[1].resources: Required value: resource rules must supply at least one resource]"#
    );
    assert_eq!(
        causes(&e),
        vec![
            cause(
                "rules[0].nonResourceURLs",
                "FieldValueInvalid",
                r#"Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs"#
            ),
            cause(
                "rules[1].verbs",
                "FieldValueRequired",
                "Required value: verbs must contain at least one value"
            ),
            cause(
                "rules[1].resources",
                "FieldValueRequired",
                "Required value: resource rules must supply at least one resource"
            ),
        ]
    );

    let e = api_error(
        roles
            .create(
                &pp,
                &Role {
                    metadata: meta("a%b"),
                    rules: None,
                },
            )
            .await
            .expect_err("invalid name"),
    );
    assert_eq!(e.code, 422);
    assert_eq!(
        causes(&e),
        vec![cause(
            "metadata.name",
            "FieldValueInvalid",
            r#"Invalid value: "a%b": may not contain '%'"#
        )]
    );

    let list = roles.list(&ListParams::default()).await.expect("list");
    assert_eq!(list.items.len(), 1);
    roles
        .delete("system:pod-reader", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(
        roles
            .get_opt("system:pod-reader")
            .await
            .expect("get")
            .is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn cluster_roles_with_urls_and_aggregation() {
    let server = server().await;
    let roles: Api<ClusterRole> = Api::all(client(&server));
    let pp = PostParams::default();
    roles
        .create(
            &pp,
            &ClusterRole {
                metadata: meta("healthz"),
                rules: Some(vec![PolicyRule {
                    verbs: vec!["get".into()],
                    non_resource_urls: Some(vec!["/healthz".into(), "/livez".into()]),
                    ..PolicyRule::default()
                }]),
                aggregation_rule: None,
            },
        )
        .await
        .expect("non-resource URLs in a cluster role");
    let aggregated = roles
        .create(
            &pp,
            &ClusterRole {
                metadata: meta("monitoring"),
                aggregation_rule: Some(AggregationRule {
                    cluster_role_selectors: Some(vec![LabelSelector {
                        match_labels: Some(
                            [(
                                "rbac.example.com/aggregate-to-monitoring".to_owned(),
                                "true".to_owned(),
                            )]
                            .into(),
                        ),
                        ..LabelSelector::default()
                    }]),
                }),
                rules: Some(vec![rule(&["get"], &[""], &["pods"])]),
            },
        )
        .await
        .expect("an aggregated role may carry rules");
    assert!(aggregated.aggregation_rule.is_some());

    let e = api_error(
        roles
            .create(
                &pp,
                &ClusterRole {
                    metadata: meta("empty-aggregation"),
                    aggregation_rule: Some(AggregationRule {
                        cluster_role_selectors: None,
                    }),
                    rules: None,
                },
            )
            .await
            .expect_err("no selectors"),
    );
    assert_eq!(e.code, 422);
    assert_eq!(
        e.message,
        r#"ClusterRole.rbac.authorization.k8s.io "empty-aggregation" is invalid: aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"#
    );
    let names: Vec<String> = roles
        .list(&ListParams::default().labels("!kubernetes.io/bootstrapping"))
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|r| r.metadata.name)
        .collect();
    assert_eq!(names, ["healthz", "monitoring"]);
}

#[tokio::test(start_paused = true)]
async fn bindings_default_and_keep_their_role_ref() {
    let server = server().await;
    let bindings: Api<RoleBinding> = Api::namespaced(client(&server), "default");
    let pp = PostParams::default();
    let created = bindings
        .create(
            &pp,
            &RoleBinding {
                metadata: meta("readers"),
                role_ref: role_ref("ClusterRole", "view"),
                subjects: Some(vec![
                    subject("User", "jane", None),
                    subject("Group", "devs", None),
                    subject("ServiceAccount", "default", None),
                ]),
            },
        )
        .await
        .expect("create");
    assert_eq!(created.role_ref.api_group.as_deref(), Some(GROUP));
    let groups: Vec<Option<&str>> = created
        .subjects
        .iter()
        .flatten()
        .map(|s| s.api_group.as_deref())
        .collect();
    assert_eq!(groups, [Some(GROUP), Some(GROUP), None]);

    let mut more = created.clone();
    more.subjects
        .get_or_insert_with(Vec::new)
        .push(subject("User", "joe", None));
    bindings
        .replace("readers", &pp, &more)
        .await
        .expect("subjects may change");

    let mut other = more.clone();
    other.metadata.resource_version = None;
    other.role_ref.name = "edit".into();
    let current = bindings.get("readers").await.expect("get");
    other.metadata.resource_version = current.metadata.resource_version;
    let e = api_error(
        bindings
            .replace("readers", &pp, &other)
            .await
            .expect_err("roleRef is immutable"),
    );
    assert_eq!(e.code, 422);
    assert_eq!(
        e.message,
        r#"RoleBinding.rbac.authorization.k8s.io "readers" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef"#
    );
    assert_eq!(
        causes(&e),
        vec![cause(
            "roleRef",
            "FieldValueInvalid",
            r#"Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef"#
        )]
    );

    let e = api_error(
        bindings
            .create(
                &pp,
                &RoleBinding {
                    metadata: meta("bad"),
                    role_ref: role_ref("Secret", ""),
                    subjects: Some(vec![subject("Robot", "r2", None)]),
                },
            )
            .await
            .expect_err("invalid"),
    );
    assert_eq!(
        causes(&e),
        vec![
            cause(
                "roleRef.kind",
                "FieldValueNotSupported",
                r#"Unsupported value: "Secret": supported values: "Role", "ClusterRole""#
            ),
            cause("roleRef.name", "FieldValueRequired", "Required value"),
            cause(
                "subjects[0].kind",
                "FieldValueNotSupported",
                r#"Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group""#
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn cluster_role_bindings_need_service_account_namespaces() {
    let server = server().await;
    let bindings: Api<ClusterRoleBinding> = Api::all(client(&server));
    let pp = PostParams::default();
    let e = api_error(
        bindings
            .create(
                &pp,
                &ClusterRoleBinding {
                    metadata: meta("ops"),
                    role_ref: role_ref("Role", "r"),
                    subjects: Some(vec![subject("ServiceAccount", "robot", None)]),
                },
            )
            .await
            .expect_err("invalid"),
    );
    assert_eq!(e.code, 422);
    assert_eq!(
        e.message,
        r#"ClusterRoleBinding.rbac.authorization.k8s.io "ops" is invalid: [roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: Required value]"#
    );
    let created = bindings
        .create(
            &pp,
            &ClusterRoleBinding {
                metadata: meta("ops"),
                role_ref: role_ref("ClusterRole", "cluster-admin"),
                subjects: Some(vec![subject("ServiceAccount", "robot", Some("ops"))]),
            },
        )
        .await
        .expect("valid");
    assert_eq!(created.metadata.namespace, None);
    bindings
        .delete("ops", &DeleteParams::default())
        .await
        .expect("delete");
}

/// `AllowCreateOnUpdate` and `AllowUnconditionalUpdate` are true for the
/// four kinds: a PUT creates, and a PUT without a resourceVersion updates.
#[tokio::test(start_paused = true)]
async fn put_creates() {
    let server = server().await;
    let roles: Api<ClusterRole> = Api::all(client(&server));
    let r = roles
        .replace(
            "made-by-put",
            &PostParams::default(),
            &ClusterRole {
                metadata: meta("made-by-put"),
                rules: Some(vec![rule(&["get"], &[""], &["nodes"])]),
                aggregation_rule: None,
            },
        )
        .await
        .expect("created by PUT");
    assert!(r.metadata.uid.is_some());
    let (code, _, body) = raw(
        &server,
        "PUT",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/made-by-put",
        &[("content-type", "application/json")],
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "made-by-put"},
                "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["nodes"]}]})
        .to_string(),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["rules"][0]["verbs"], json!(["list"]));
    assert_eq!(body["metadata"]["uid"], json!(r.metadata.uid));
    assert_ne!(
        body["metadata"]["resourceVersion"],
        json!(r.metadata.resource_version)
    );
}

#[tokio::test(start_paused = true)]
async fn discovery_and_tables() {
    let server = server().await;
    let (code, _, list) = raw(
        &server,
        "GET",
        "/apis/rbac.authorization.k8s.io/v1",
        &[],
        "",
    )
    .await;
    assert_eq!(code, 200, "{list}");
    let resources: Vec<(String, bool, String)> = list["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap_or_default().to_owned(),
                r["namespaced"].as_bool().unwrap_or_default(),
                r["kind"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let want = [
        ("roles", true, "Role"),
        ("clusterroles", false, "ClusterRole"),
        ("rolebindings", true, "RoleBinding"),
        ("clusterrolebindings", false, "ClusterRoleBinding"),
    ]
    .map(|(n, ns, k)| (n.to_owned(), ns, k.to_owned()));
    for w in &want {
        assert!(resources.contains(w), "{w:?} in {resources:?}");
    }

    let pp = PostParams::default();
    let bindings: Api<RoleBinding> = Api::namespaced(client(&server), "default");
    bindings
        .create(
            &pp,
            &RoleBinding {
                metadata: meta("b"),
                role_ref: role_ref("Role", "r"),
                subjects: Some(vec![
                    subject("ServiceAccount", "sa", Some("kube-system")),
                    subject("User", "u", None),
                ]),
            },
        )
        .await
        .expect("create");
    let table_accept = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let (code, _, table) = raw(
        &server,
        "GET",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        &[("accept", table_accept)],
        "",
    )
    .await;
    assert_eq!(code, 200, "{table}");
    let columns: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        columns,
        ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]
    );
    assert_eq!(
        table["rows"][0]["cells"],
        json!(["b", "Role/r", "0s", "u", "", "kube-system/sa"])
    );

    let roles: Api<Role> = Api::namespaced(client(&server), "default");
    roles
        .create(
            &pp,
            &Role {
                metadata: meta("r"),
                rules: None,
            },
        )
        .await
        .expect("create");
    let (_, _, table) = raw(
        &server,
        "GET",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
        &[("accept", table_accept)],
        "",
    )
    .await;
    let columns: Vec<&Value> = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(columns, [&json!("Name"), &json!("Created At")]);
    assert_eq!(table["rows"][0]["cells"], json!(["r", START]));
}

fn has_rule(role: &ClusterRole, verb: &str, resource: &str) -> bool {
    role.rules.iter().flatten().any(|r| {
        r.verbs.iter().any(|v| v == verb) && r.resources.iter().flatten().any(|x| x == resource)
    })
}

/// The server starts with kube-apiserver's default roles and bindings, and
/// aggregates ClusterRoles as kube-controller-manager does: `admin`, `edit`
/// and `view` carry the rules of the `aggregate-to-*` roles, and a new
/// ClusterRole labelled `aggregate-to-view` adds its rules to `view` (and,
/// through it, `edit` and `admin`); deleting it takes them away again.
#[tokio::test(start_paused = true)]
async fn default_roles_and_aggregation() {
    let server = server().await;
    let roles: Api<ClusterRole> = Api::all(client(&server));
    let bindings: Api<ClusterRoleBinding> = Api::all(client(&server));
    let admin = roles.get("cluster-admin").await.expect("cluster-admin");
    assert!(has_rule(&admin, "*", "*"));
    let masters = bindings.get("cluster-admin").await.expect("binding");
    assert_eq!(
        masters.subjects.expect("subjects")[0].name,
        "system:masters"
    );
    let view = roles.get("view").await.expect("view");
    assert!(has_rule(&view, "list", "pods"), "{view:?}");
    assert!(!has_rule(&view, "create", "pods"));
    let edit = roles.get("edit").await.expect("edit");
    assert!(has_rule(&edit, "create", "pods"));
    assert!(has_rule(&edit, "list", "pods"), "edit aggregates view");
    for name in [
        "admin",
        "system:discovery",
        "system:basic-user",
        "system:public-info-viewer",
    ] {
        roles.get(name).await.expect(name);
    }

    let mut widgets = ClusterRole {
        metadata: meta("widgets-view"),
        rules: Some(vec![rule(&["get", "list"], &["example.com"], &["widgets"])]),
        ..ClusterRole::default()
    };
    widgets.metadata.labels = Some(
        [(
            "rbac.authorization.k8s.io/aggregate-to-view".to_owned(),
            "true".to_owned(),
        )]
        .into(),
    );
    roles
        .create(&PostParams::default(), &widgets)
        .await
        .expect("create");
    for name in ["view", "edit", "admin"] {
        let role = roles.get(name).await.expect(name);
        assert!(
            has_rule(&role, "list", "widgets"),
            "{name} aggregates widgets"
        );
    }
    roles
        .delete("widgets-view", &DeleteParams::default())
        .await
        .expect("delete");
    let view = roles.get("view").await.expect("view");
    assert!(!has_rule(&view, "list", "widgets"));
    assert!(has_rule(&view, "list", "pods"));
}
