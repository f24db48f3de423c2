//! RBAC through the real kubectl over HTTPS: `kubectl auth can-i` (a
//! SelfSubjectAccessReview, and with `--as` a SubjectAccessReview made
//! under impersonation), `--list` (SelfSubjectRulesReview), a denied
//! request's message, the escalation of privileges refused, and a Role
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
    c.stop().await;
}
