//! Identities through the real kubectl over HTTPS: `kubectl create token`
//! makes a signed token that `kubectl --token` then authenticates with
//! (`kubectl auth whoami`), `--as`/`--as-group` impersonate, TokenReview
//! answers, and expired-looking, tampered or malformed tokens get
//! kube-apiserver's bare 401.

mod support;

use support::https::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_tokens_whoami_and_impersonation() {
    let c = Cluster::start("identity").await;
    c.ok(&["create", "serviceaccount", "robot"], None).await;

    // The kubeconfig's admin token.
    let me = c.json(&["auth", "whoami", "-o", "json"]).await;
    assert_eq!(me["kind"], "SelfSubjectReview");
    assert_eq!(me["apiVersion"], "authentication.k8s.io/v1");
    assert_eq!(
        me["status"]["userInfo"],
        serde_json::json!({
            "username": "kubernetes-admin",
            "groups": ["system:masters", "system:authenticated"],
        })
    );

    // A service account token, used as kubectl's credential.
    let token = c.ok(&["create", "token", "robot"], None).await;
    let token = token.trim();
    let flag = format!("--token={token}");
    let me = c.json(&[&flag, "auth", "whoami", "-o", "json"]).await;
    let user = &me["status"]["userInfo"];
    assert_eq!(user["username"], "system:serviceaccount:default:robot");
    assert_eq!(
        user["groups"],
        serde_json::json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    let uid = c
        .ok(
            &[
                "get",
                "serviceaccount",
                "robot",
                "-o",
                "jsonpath={.metadata.uid}",
            ],
            None,
        )
        .await;
    assert_eq!(user["uid"], uid.as_str());
    let table = c.ok(&[&flag, "auth", "whoami"], None).await;
    assert!(
        table.contains("system:serviceaccount:default:robot"),
        "{table}"
    );
    // RBAC: nothing granted yet, then `view` through a RoleBinding.
    let err = c.fails(&[&flag, "get", "pods"]).await;
    assert_eq!(
        err,
        "Error from server (Forbidden): pods is forbidden: User \"system:serviceaccount:default:robot\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"\n"
    );
    c.ok(
        &[
            "create",
            "rolebinding",
            "robot-view",
            "--clusterrole=view",
            "--serviceaccount=default:robot",
        ],
        None,
    )
    .await;
    c.ok(&[&flag, "get", "pods"], None).await;

    // Bound to a secret: the token dies with it.
    c.ok(
        &[
            "create",
            "secret",
            "generic",
            "holder",
            "--from-literal=a=b",
        ],
        None,
    )
    .await;
    let bound = c
        .ok(
            &[
                "create",
                "token",
                "robot",
                "--bound-object-kind=Secret",
                "--bound-object-name=holder",
            ],
            None,
        )
        .await;
    let bound_flag = format!("--token={}", bound.trim());
    c.ok(&[&bound_flag, "auth", "whoami"], None).await;
    c.ok(&["delete", "secret", "holder"], None).await;
    let err = c.fails(&[&bound_flag, "auth", "whoami"]).await;
    assert_eq!(
        err,
        "error: You must be logged in to the server (Unauthorized)\n"
    );

    // TokenReview through kubectl create.
    let manifest = c.file(
        "review.json",
        &serde_json::json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        })
        .to_string(),
    );
    let reviewed = c.json(&["create", "-f", &manifest, "-o", "json"]).await;
    assert_eq!(reviewed["status"]["authenticated"], true);
    assert_eq!(
        reviewed["status"]["user"]["username"],
        "system:serviceaccount:default:robot"
    );

    // Impersonation by the admin.
    let me = c
        .json(&[
            "--as=jane",
            "--as-group=devs",
            "auth",
            "whoami",
            "-o",
            "json",
        ])
        .await;
    assert_eq!(
        me["status"]["userInfo"],
        serde_json::json!({"username": "jane", "groups": ["devs", "system:authenticated"]})
    );
    // ... and refused to the service account (`auth whoami` rewords a 403
    // as "not enabled", so `get` shows the server's message).
    let err = c.fails(&[&flag, "--as=jane", "auth", "whoami"]).await;
    assert_eq!(
        err,
        "error: the selfsubjectreviews API is not enabled in the cluster or you do not have permission to call it\n"
    );
    let err = c.fails(&[&flag, "--as=jane", "get", "pods"]).await;
    assert_eq!(
        err,
        "Error from server (Forbidden): users \"jane\" is forbidden: User \"system:serviceaccount:default:robot\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope\n"
    );

    // Bad tokens: a bare 401 (a token whose expiry was rewritten, so its
    // signature fails; real expiry is tested in rest_identity.rs under a
    // paused clock).
    let parts: Vec<&str> = token.split('.').collect();
    let mut claims: serde_json::Value = serde_json::from_slice(
        &exitplan_apiserver::authn::jwt::base64url_decode(parts[1]).expect("claims"),
    )
    .expect("json");
    claims["exp"] = serde_json::json!(1);
    let expired = format!(
        "{}.{}.{}",
        parts[0],
        exitplan_apiserver::authn::jwt::base64url(claims.to_string().as_bytes()),
        parts[2]
    );
    let wrong_sig = format!("{}.{}.{}", parts[0], parts[1], parts[0]);
    for bad in [expired.as_str(), wrong_sig.as_str(), "a.b.c", "garbage"] {
        let flag = format!("--token={bad}");
        let err = c.fails(&[&flag, "get", "pods"]).await;
        assert_eq!(
            err, "error: You must be logged in to the server (Unauthorized)\n",
            "{bad}"
        );
    }
    c.stop().await;
}
