//! RBAC through the real kubectl over HTTPS: `kubectl auth can-i` (a
//! SelfSubjectAccessReview, and with `--as` a SubjectAccessReview made
//! under impersonation), `--list` (SelfSubjectRulesReview), a denied
//! request's message, the escalation of privileges refused (nothing stored), and a Role
//! with `resourceNames` allowing one object only.

mod support;

use support::https::Cluster;

const SA: &str = "--as=system:serviceaccount:default:robot";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn can_i_list_and_denials() {
    let c = Cluster::start("authz").await;
    c.ok(&["create", "serviceaccount", "robot"], None).await;

    // The admin may do anything; the account nothing yet.
    assert_eq!(
        c.ok(&["auth", "can-i", "delete", "nodes"], None).await,
        "yes\n"
    );
    let out = c
        .kubectl(&[SA, "auth", "can-i", "list", "pods"], None)
        .await;
    assert_eq!(String::from_utf8_lossy(&out.stdout), "no\n");
    assert!(!out.status.success(), "can-i answers no with exit code 1");
    let err = c.fails(&[SA, "get", "pods"]).await;
    assert_eq!(
        err,
        "Error from server (Forbidden): pods is forbidden: User \"system:serviceaccount:default:robot\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"\n"
    );

    // A Role on one ConfigMap by name, bound to the account.
    c.ok(&["create", "configmap", "one"], None).await;
    c.ok(&["create", "configmap", "two"], None).await;
    c.ok(
        &[
            "create",
            "role",
            "one-reader",
            "--verb=get",
            "--resource=configmaps",
            "--resource-name=one",
        ],
        None,
    )
    .await;
    c.ok(
        &[
            "create",
            "rolebinding",
            "robot-one",
            "--role=one-reader",
            "--serviceaccount=default:robot",
        ],
        None,
    )
    .await;
    assert_eq!(
        c.ok(&[SA, "auth", "can-i", "get", "configmap/one"], None)
            .await,
        "yes\n"
    );
    let out = c
        .kubectl(&[SA, "auth", "can-i", "get", "configmap/two"], None)
        .await;
    assert_eq!(String::from_utf8_lossy(&out.stdout), "no\n");
    c.ok(&[SA, "get", "configmap", "one"], None).await;
    let err = c.fails(&[SA, "get", "configmap", "two"]).await;
    assert_eq!(
        err,
        "Error from server (Forbidden): configmaps \"two\" is forbidden: User \"system:serviceaccount:default:robot\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"default\"\n"
    );
    let err = c.fails(&[SA, "get", "nodes"]).await;
    assert_eq!(
        err,
        "Error from server (Forbidden): nodes is forbidden: User \"system:serviceaccount:default:robot\" cannot list resource \"nodes\" in API group \"\" at the cluster scope\n"
    );

    // --list: the account's rules in the namespace (its Role, and the
    // discovery rules every authenticated user has).
    let list = c.ok(&[SA, "auth", "can-i", "--list"], None).await;
    let line = list
        .lines()
        .find(|l| l.starts_with("configmaps "))
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>();
    assert_eq!(line, ["configmaps", "[]", "[one]", "[get]"], "{list}");
    assert!(
        list.contains("selfsubjectaccessreviews.authorization.k8s.io"),
        "{list}"
    );

    // Subresources: `edit` may evict pods.
    c.ok(
        &[
            "create",
            "rolebinding",
            "robot-edit",
            "--clusterrole=edit",
            "--serviceaccount=default:robot",
        ],
        None,
    )
    .await;
    assert_eq!(
        c.ok(&[SA, "auth", "can-i", "create", "pods/eviction"], None)
            .await,
        "yes\n"
    );
    assert_eq!(
        c.ok(&[SA, "auth", "can-i", "list", "pods"], None).await,
        "yes\n"
    );
    c.ok(&[SA, "get", "pods"], None).await;
    let out = c
        .kubectl(&[SA, "auth", "can-i", "create", "roles"], None)
        .await;
    assert_eq!(String::from_utf8_lossy(&out.stdout), "no\n");

    // Escalation: allowed to create roles and bindings, the account still
    // cannot grant (or bind to) what it does not hold.
    c.ok(
        &[
            "create",
            "role",
            "rbac-writer",
            "--verb=create",
            "--resource=roles,rolebindings",
        ],
        None,
    )
    .await;
    c.ok(
        &[
            "create",
            "rolebinding",
            "robot-rbac",
            "--role=rbac-writer",
            "--serviceaccount=default:robot",
        ],
        None,
    )
    .await;
    c.ok(
        &[
            SA,
            "create",
            "role",
            "held",
            "--verb=get",
            "--resource=configmaps",
        ],
        None,
    )
    .await;
    let err = c
        .fails(&[
            SA,
            "create",
            "role",
            "more",
            "--verb=get",
            "--resource=nodes",
        ])
        .await;
    assert_eq!(
        err,
        "Error from server (Forbidden): roles.rbac.authorization.k8s.io \"more\" is forbidden: user \"system:serviceaccount:default:robot\" (groups=[\"system:serviceaccounts\" \"system:serviceaccounts:default\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"nodes\"], Verbs:[\"get\"]}\n"
    );
    let err = c
        .fails(&[
            SA,
            "create",
            "rolebinding",
            "grab",
            "--clusterrole=admin",
            "--serviceaccount=default:robot",
        ])
        .await;
    assert!(
        err.starts_with("error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io \"grab\" is forbidden: user \"system:serviceaccount:default:robot\""),
        "{err}"
    );
    assert!(
        err.contains("is attempting to grant RBAC permissions not currently held"),
        "{err}"
    );
    let err = c.fails(&[SA, "get", "role", "more"]).await;
    assert!(
        err.contains("forbidden"),
        "nothing stored, and no right to look: {err}"
    );
    c.stop().await;
}
