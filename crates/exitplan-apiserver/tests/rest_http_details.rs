//! HTTP details as kube-apiserver has them, through the REST router.

mod support;

use std::sync::Arc;

use exitplan_apiserver::clock::TokioClock;
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use support::{START, raw};

async fn server_with_token(token: &str) -> Server {
    Server::builder()
        .store(Store::in_memory().expect("store"))
        .clock(Arc::new(TokioClock::starting_at(
            START.parse().expect("time"),
        )))
        .token(token)
        .build()
        .await
        .expect("server")
}

/// Upstream's bearer-token authenticator table (`bearertoken_test.go`): the
/// scheme in any case, the token the second space-separated part.
#[tokio::test]
async fn bearer_scheme_is_read_case_insensitively() {
    let server = server_with_token("token").await;
    let cases: &[(&str, u16)] = &[
        ("Bearer token", 200),
        ("bearer token", 200),
        ("BEARER token", 200),
        ("Bearer token a", 200),
        ("Bearer token a b c", 200),
        ("Bearer token   a", 200),
        ("Bearer", 401),
        ("Bearer ", 401),
        ("bear token", 401),
        ("Bearer: token", 401),
        ("Basic 123", 401),
        ("Bearer 123", 401),
    ];
    for (header, want) in cases {
        let (code, _, body) = raw(
            &server,
            "GET",
            "/api/v1/namespaces/default",
            &[("authorization", header)],
            "",
        )
        .await;
        assert_eq!(code, *want, "{header:?}: {body}");
        if *want == 401 {
            assert_eq!(body["reason"], "Unauthorized", "{header:?}");
        }
    }
    let (code, _, _) = raw(&server, "GET", "/api/v1/namespaces/default", &[], "").await;
    assert_eq!(code, 401);
}
