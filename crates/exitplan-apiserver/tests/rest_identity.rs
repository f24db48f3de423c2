//! Identities through kube-rs, in-process under tokio's paused clock:
//! service account tokens from TokenRequest authenticate until they expire
//! or their account (or bound object) goes, TokenReview and
//! SelfSubjectReview answer as kube-apiserver does, bad tokens get a bare
//! 401, and impersonation is allowed to `system:masters` only (until RBAC).

mod support;

use std::time::Duration;

use exitplan_apiserver::authn::claims::ISSUER;
use exitplan_apiserver::server::Server;
use k8s_openapi::api::authentication::v1::{
    BoundObjectReference, SelfSubjectReview, TokenRequest, TokenRequestSpec, TokenReview,
    TokenReviewSpec,
};
use k8s_openapi::api::core::v1::{Node, Pod, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use support::*;

/// A kube-rs client on `server` that adds `headers` to every request.
fn with_headers(server: &Server, headers: Vec<(&'static str, String)>) -> kube::Client {
    let service = tower::ServiceBuilder::new()
        .map_request(move |mut req: axum::http::Request<kube::client::Body>| {
            for (k, v) in &headers {
                if let Ok(v) = axum::http::HeaderValue::from_str(v) {
                    req.headers_mut().append(*k, v);
                }
            }
            req
        })
        .service(server.router());
    kube::Client::new(service, "default")
}

fn bearer(server: &Server, token: &str) -> kube::Client {
    with_headers(server, vec![("authorization", format!("Bearer {token}"))])
}

fn account(name: &str) -> ServiceAccount {
    ServiceAccount {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        ..ServiceAccount::default()
    }
}

async fn token(sas: &Api<ServiceAccount>, name: &str, spec: TokenRequestSpec) -> String {
    let tr = TokenRequest {
        spec: Some(spec),
        ..TokenRequest::default()
    };
    sas.create_token_request(name, &PostParams::default(), &tr)
        .await
        .expect("token request")
        .status
        .and_then(|s| s.token)
        .expect("token")
}

async fn whoami(client: &kube::Client) -> Result<serde_json::Value, kube::Error> {
    let api: Api<SelfSubjectReview> = Api::all(client.clone());
    let review = api
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await?;
    Ok(serde_json::to_value(review.status.and_then(|s| s.user_info)).expect("json"))
}

/// TokenReview of `token` for `audiences`, as the admin: its status.
async fn review(client: &kube::Client, token: &str, audiences: &[&str]) -> serde_json::Value {
    let api: Api<TokenReview> = Api::all(client.clone());
    let tr = TokenReview {
        spec: TokenReviewSpec {
            token: token.to_owned(),
            audiences: (!audiences.is_empty())
                .then(|| audiences.iter().map(|a| (*a).to_owned()).collect()),
        },
        ..TokenReview::default()
    };
    let out = api
        .create(&PostParams::default(), &tr)
        .await
        .expect("token review");
    serde_json::to_value(out.status).expect("json")
}

fn assert_unauthorized(result: Result<serde_json::Value, kube::Error>, what: &str) {
    let e = api_error(result.expect_err(what));
    assert_eq!(
        (e.code, e.reason.as_str(), e.message.as_str()),
        (401, "Unauthorized", "Unauthorized"),
        "{what}"
    );
}

#[tokio::test(start_paused = true)]
async fn service_account_tokens_authenticate_until_expiry_or_deletion() {
    let server = server().await;
    let admin = client(&server);
    let sas: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    let created = sas
        .create(&PostParams::default(), &account("robot"))
        .await
        .expect("sa");
    let uid = created.metadata.uid.clone().expect("uid");

    // In-process without credentials: the admin.
    let me = whoami(&admin).await.expect("admin whoami");
    assert_eq!(me["username"], "kubernetes-admin");
    assert_eq!(
        me["groups"],
        serde_json::json!(["system:masters", "system:authenticated"])
    );

    let ten_minutes = TokenRequestSpec {
        expiration_seconds: Some(600),
        ..TokenRequestSpec::default()
    };
    let t = token(&sas, "robot", ten_minutes.clone()).await;
    let robot = bearer(&server, &t);
    let me = whoami(&robot).await.expect("robot whoami");
    assert_eq!(me["username"], "system:serviceaccount:default:robot");
    assert_eq!(me["uid"], uid.as_str());
    assert_eq!(
        me["groups"],
        serde_json::json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    let credential = me["extra"]["authentication.kubernetes.io/credential-id"][0]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(credential.starts_with("JTI="), "{me}");
    // RBAC: nothing is granted to the account yet, so listing is forbidden
    // with kube-apiserver's message; a RoleBinding to `view` allows it.
    let pods: Api<Pod> = Api::default_namespaced(robot.clone());
    match pods.list(&Default::default()).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 403);
            assert_eq!(
                s.message,
                r#"pods is forbidden: User "system:serviceaccount:default:robot" cannot list resource "pods" in API group "" in the namespace "default""#
            );
        }
        other => panic!("list without a binding: {other:?}"),
    }
    let binding: k8s_openapi::api::rbac::v1::RoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "robot-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}],
    }))
    .expect("binding");
    Api::<k8s_openapi::api::rbac::v1::RoleBinding>::default_namespaced(admin.clone())
        .create(&Default::default(), &binding)
        .await
        .expect("bind");
    pods.list(&Default::default()).await.expect("list as robot");

    // TokenReview: the server's audience by default; another audience fails.
    let status = review(&admin, &t, &[]).await;
    assert_eq!(status["authenticated"], true);
    assert_eq!(status["audiences"], serde_json::json!([ISSUER]));
    assert_eq!(
        status["user"]["username"],
        "system:serviceaccount:default:robot"
    );
    let status = review(&admin, &t, &["vault"]).await;
    assert_eq!(status.get("authenticated"), None);
    assert_eq!(
        status["error"],
        format!("token audiences [\"{ISSUER}\"] is invalid for the target audiences [\"vault\"]")
    );

    // A token for another audience works for it, not for the server.
    let vault = token(
        &sas,
        "robot",
        TokenRequestSpec {
            audiences: Some(vec!["vault".into()]),
            ..ten_minutes.clone()
        },
    )
    .await;
    assert_unauthorized(whoami(&bearer(&server, &vault)).await, "vault token");
    let status = review(&admin, &vault, &["vault"]).await;
    assert_eq!(
        (status["authenticated"].clone(), status["audiences"].clone()),
        (serde_json::json!(true), serde_json::json!(["vault"]))
    );

    // Expiry: valid through the minute of leeway, refused after.
    tokio::time::advance(Duration::from_secs(600 + 60)).await;
    whoami(&robot).await.expect("within the leeway");
    tokio::time::advance(Duration::from_secs(2)).await;
    assert_unauthorized(whoami(&robot).await, "expired");
    assert_eq!(
        review(&admin, &t, &[]).await["error"],
        "service account token has expired"
    );

    // Deleting the account revokes its tokens; a new account of the same
    // name does not revive them.
    let t = token(&sas, "robot", ten_minutes.clone()).await;
    whoami(&bearer(&server, &t)).await.expect("fresh token");
    sas.delete("robot", &DeleteParams::default())
        .await
        .expect("delete");
    assert_unauthorized(whoami(&bearer(&server, &t)).await, "account deleted");
    let again = sas
        .create(&PostParams::default(), &account("robot"))
        .await
        .expect("sa again");
    assert_unauthorized(whoami(&bearer(&server, &t)).await, "account recreated");
    assert_eq!(
        review(&admin, &t, &[]).await["error"],
        format!(
            "service account UID ({}) does not match claim ({uid})",
            again.metadata.uid.unwrap_or_default()
        )
    );

    // Tampered, foreign and malformed tokens: a bare 401.
    let t = token(&sas, "robot", ten_minutes).await;
    let parts: Vec<&str> = t.split('.').collect();
    let forged = format!("{}.{}.{}", parts[0], parts[1], parts[0]);
    let other = Server::builder()
        .store(exitplan_apiserver::storage::Store::in_memory().expect("store"))
        .build()
        .await
        .expect("other server");
    let other_sas: Api<ServiceAccount> = Api::namespaced(client(&other), "default");
    other_sas
        .create(&PostParams::default(), &account("robot"))
        .await
        .expect("sa");
    let foreign = token(&other_sas, "robot", TokenRequestSpec::default()).await;
    for (what, bad) in [
        ("wrong signature", forged.as_str()),
        ("another server's key", foreign.as_str()),
        ("malformed", "a.b.c"),
        ("not a jwt", "s3cret"),
    ] {
        assert_unauthorized(whoami(&bearer(&server, bad)).await, what);
    }
    assert_eq!(
        review(&admin, "s3cret", &[]).await,
        serde_json::json!({"user": {}, "error": "invalid bearer token"})
    );
    assert_eq!(
        review(&admin, &forged, &[]).await["error"],
        "go-jose/go-jose: error in cryptographic primitive"
    );
}

#[tokio::test(start_paused = true)]
async fn bound_tokens_follow_their_object() {
    let server = server().await;
    let admin = client(&server);
    let sas: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    sas.create(&PostParams::default(), &account("robot"))
        .await
        .expect("sa");
    let pods: Api<Pod> = Api::default_namespaced(admin.clone());
    let mut p: Pod = serde_json::from_value(pod("web")).expect("pod");
    if let Some(spec) = p.spec.as_mut() {
        spec.service_account_name = Some("robot".into());
    }
    let p = pods.create(&PostParams::default(), &p).await.expect("pod");
    let pod_uid = p.metadata.uid.clone().expect("uid");
    let bound = |kind: &str, name: &str, uid: Option<&str>| TokenRequestSpec {
        bound_object_ref: Some(BoundObjectReference {
            api_version: Some("v1".into()),
            kind: Some(kind.into()),
            name: Some(name.into()),
            uid: uid.map(str::to_owned),
        }),
        ..TokenRequestSpec::default()
    };
    let t = token(&sas, "robot", bound("Pod", "web", Some(&pod_uid))).await;
    let me = whoami(&bearer(&server, &t)).await.expect("pod-bound");
    assert_eq!(
        me["extra"]["authentication.kubernetes.io/pod-name"][0],
        "web"
    );
    assert_eq!(
        me["extra"]["authentication.kubernetes.io/pod-uid"][0],
        pod_uid.as_str()
    );

    // Refusals as upstream words them.
    let refused = |spec: TokenRequestSpec| {
        let sas = sas.clone();
        async move {
            let tr = TokenRequest {
                spec: Some(spec),
                ..TokenRequest::default()
            };
            api_error(
                sas.create_token_request("robot", &PostParams::default(), &tr)
                    .await
                    .expect_err("refused"),
            )
        }
    };
    let e = refused(bound("Pod", "web", Some("other-uid"))).await;
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            409,
            "Operation cannot be fulfilled on Pod \"web\": the UID in the bound object reference (other-uid) does not match the UID in record. The object might have been deleted and then recreated"
        )
    );
    let e = refused(bound("Pod", "missing", None)).await;
    assert_eq!(
        (e.code, e.message.as_str()),
        (404, "pods \"missing\" not found")
    );
    let e = refused(bound("ConfigMap", "x", None)).await;
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            400,
            "cannot bind token to object of type /v1, Kind=ConfigMap"
        )
    );
    let e = refused(bound("Secret", "nope", None)).await;
    assert_eq!(
        (e.code, e.message.as_str()),
        (404, "secrets \"nope\" not found")
    );

    // A scheduled pod's node goes into the claims; the kubelet's 3607 s
    // lifetime is extended to a year, warning after 3607 s, as kube-apiserver
    // does by default, while the status reports the lifetime asked for.
    let nodes: Api<Node> = Api::all(admin.clone());
    let node = nodes
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": "n1"}})).expect("node"),
        )
        .await
        .expect("node");
    let mut scheduled: Pod = serde_json::from_value(pod("placed")).expect("pod");
    if let Some(spec) = scheduled.spec.as_mut() {
        spec.service_account_name = Some("robot".into());
        spec.node_name = Some("n1".into());
    }
    pods.create(&PostParams::default(), &scheduled)
        .await
        .expect("pod");
    let tr = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(3607),
            ..bound("Pod", "placed", None)
        }),
        ..TokenRequest::default()
    };
    let issued = sas
        .create_token_request("robot", &PostParams::default(), &tr)
        .await
        .expect("token");
    let status = issued.status.expect("status");
    let placed = status.token.expect("token");
    let claims: serde_json::Value = serde_json::from_slice(
        &exitplan_apiserver::authn::jwt::base64url_decode(
            placed.split('.').nth(1).unwrap_or_default(),
        )
        .expect("base64"),
    )
    .expect("claims");
    let iat = claims["iat"].as_i64().unwrap_or_default();
    assert_eq!(claims["exp"].as_i64(), Some(iat + 365 * 24 * 3600));
    assert_eq!(
        claims["kubernetes.io"]["warnafter"].as_i64(),
        Some(iat + 3607)
    );
    assert_eq!(
        claims["kubernetes.io"]["node"],
        serde_json::json!({"name": "n1", "uid": node.metadata.uid.unwrap_or_default()})
    );
    assert_eq!(
        status.expiration_timestamp.map(|t| t.0.as_second()),
        Some(iat + 3607)
    );
    let me = whoami(&bearer(&server, &placed))
        .await
        .expect("scheduled pod token");
    assert_eq!(
        me["extra"]["authentication.kubernetes.io/node-name"][0],
        "n1"
    );

    // Deleting the pod (unscheduled: at once) invalidates the token.
    pods.delete("web", &DeleteParams::default())
        .await
        .expect("delete pod");
    assert_unauthorized(whoami(&bearer(&server, &t)).await, "pod deleted");
    assert_eq!(
        review(&admin, &t, &[]).await["error"],
        "service account token has been invalidated"
    );
}

#[tokio::test(start_paused = true)]
async fn impersonation_is_for_masters_until_rbac() {
    let server = server().await;
    let admin = client(&server);
    let sas: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    sas.create(&PostParams::default(), &account("robot"))
        .await
        .expect("sa");
    let as_jane = with_headers(
        &server,
        vec![
            ("impersonate-user", "jane".into()),
            ("impersonate-group", "devs".into()),
            ("impersonate-extra-scopes", "view".into()),
            ("impersonate-uid", "u-1".into()),
        ],
    );
    let me = whoami(&as_jane).await.expect("impersonated");
    assert_eq!(
        me,
        serde_json::json!({
            "username": "jane",
            "uid": "u-1",
            "groups": ["devs", "system:authenticated"],
            "extra": {"scopes": ["view"]},
        })
    );
    // A service account user gets its groups unless groups are given.
    let as_sa = with_headers(
        &server,
        vec![(
            "impersonate-user",
            "system:serviceaccount:default:robot".into(),
        )],
    );
    assert_eq!(
        whoami(&as_sa).await.expect("as sa")["groups"],
        serde_json::json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );

    // A service account may not impersonate (no RBAC grants it yet).
    let t = token(&sas, "robot", TokenRequestSpec::default()).await;
    let cases = [
        (
            ("impersonate-user", "jane"),
            "users \"jane\" is forbidden: User \"system:serviceaccount:default:robot\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope",
        ),
        (
            (
                "impersonate-user",
                "system:serviceaccount:kube-system:default",
            ),
            "serviceaccounts \"default\" is forbidden: User \"system:serviceaccount:default:robot\" cannot impersonate resource \"serviceaccounts\" in API group \"\" in the namespace \"kube-system\"",
        ),
    ];
    for ((header, value), want) in cases {
        let client = with_headers(
            &server,
            vec![
                ("authorization", format!("Bearer {t}")),
                (header, value.to_owned()),
            ],
        );
        let e = api_error(whoami(&client).await.expect_err("forbidden"));
        assert_eq!(
            (e.code, e.reason.as_str(), e.message.as_str()),
            (403, "Forbidden", want)
        );
    }

    // Groups without a user: upstream's plain-text 500.
    let (code, headers, body) = raw(
        &server,
        "GET",
        "/api/v1/namespaces",
        &[("impersonate-group", "devs")],
        "",
    )
    .await;
    assert_eq!(code, 500);
    assert_eq!(
        headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(
        body,
        "Internal Server Error: &#34;/api/v1/namespaces&#34;: requested [{Group  devs    }] without impersonating a user\n"
    );
}

#[tokio::test(start_paused = true)]
async fn reviews_are_create_only_and_need_a_token() {
    let server = server().await;
    let (code, _, body) = raw(
        &server,
        "GET",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        &[],
        "",
    )
    .await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (405, Some("MethodNotAllowed"))
    );
    let (code, _, body) = raw(
        &server,
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        &[("content-type", "application/json")],
        r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{}}"#,
    )
    .await;
    assert_eq!(
        (code, body["message"].as_str()),
        (
            400,
            Some("token is required for TokenReview in authentication")
        )
    );
    let (code, _, _) = raw(
        &server,
        "POST",
        "/apis/authentication.k8s.io/v1/namespaces/default/tokenreviews",
        &[("content-type", "application/json")],
        "{}",
    )
    .await;
    assert_eq!(code, 404);
    // With an admin token configured, credentials are required.
    let guarded = Server::builder()
        .store(exitplan_apiserver::storage::Store::in_memory().expect("store"))
        .token("s3cret")
        .build()
        .await
        .expect("server");
    assert_unauthorized(whoami(&client(&guarded)).await, "no credentials");
    let me = whoami(&bearer(&guarded, "s3cret")).await.expect("admin");
    assert_eq!(me["username"], "kubernetes-admin");
    assert_unauthorized(whoami(&bearer(&guarded, "wrong")).await, "wrong token");
}
