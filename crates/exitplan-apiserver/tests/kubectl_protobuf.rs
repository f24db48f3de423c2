//! The real `kubectl` (v1.32, on PATH) creating objects through its typed
//! clients, which send protobuf bodies and ask for protobuf answers
//! (`kubectl create namespace|configmap|secret|service|serviceaccount|
//! priorityclass|cronjob|job|pdb|deployment|token`); the objects are then
//! read back as JSON.

mod support;

use support::https::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_through_protobuf() {
    let c = Cluster::start("protobuf").await;
    let cases: &[(&[&str], &str, &[&str])] = &[
        (
            &["create", "namespace", "scratch"],
            "namespace/scratch created",
            &["get", "namespace", "scratch"],
        ),
        (
            &[
                "create",
                "configmap",
                "settings",
                "--from-literal=mode=fast",
            ],
            "configmap/settings created",
            &["get", "configmap", "settings"],
        ),
        (
            &[
                "create",
                "secret",
                "generic",
                "creds",
                "--from-literal=password=s3cr3t",
            ],
            "secret/creds created",
            &["get", "secret", "creds"],
        ),
        (
            &["create", "service", "clusterip", "web", "--tcp=80:8080"],
            "service/web created",
            &["get", "service", "web"],
        ),
        (
            &["create", "serviceaccount", "robot"],
            "serviceaccount/robot created",
            &["get", "serviceaccount", "robot"],
        ),
        (
            &[
                "create",
                "priorityclass",
                "high",
                "--value=1000",
                "--description=important",
            ],
            "priorityclass.scheduling.k8s.io/high created",
            &["get", "priorityclass", "high"],
        ),
        (
            &[
                "create",
                "cronjob",
                "nightly",
                "--image=busybox",
                "--schedule=0 3 * * *",
                "--",
                "true",
            ],
            "cronjob.batch/nightly created",
            &["get", "cronjob", "nightly"],
        ),
        (
            &["create", "job", "once", "--image=busybox", "--", "true"],
            "job.batch/once created",
            &["get", "job", "once"],
        ),
        (
            &[
                "create",
                "pdb",
                "web",
                "--selector=app=web",
                "--min-available=1",
            ],
            "poddisruptionbudget.policy/web created",
            &["get", "pdb", "web"],
        ),
        (
            &[
                "create",
                "deployment",
                "web",
                "--image=nginx",
                "--replicas=2",
                "--port=80",
            ],
            "deployment.apps/web created",
            &["get", "deployment", "web"],
        ),
    ];
    for (create, want, get) in cases {
        let out = c.ok(create, None).await;
        assert!(out.contains(want), "{create:?}: {out}");
        let mut args = get.to_vec();
        args.extend(["-o", "json"]);
        let json = c.json(&args).await;
        assert!(json["metadata"]["uid"].is_string(), "{get:?}: {json}");
    }

    let secret = c.json(&["get", "secret", "creds", "-o", "json"]).await;
    assert_eq!(secret["data"]["password"], "czNjcjN0");
    let cm = c
        .json(&["get", "configmap", "settings", "-o", "json"])
        .await;
    assert_eq!(cm["data"]["mode"], "fast");
    let svc = c.json(&["get", "service", "web", "-o", "json"]).await;
    assert_eq!(svc["spec"]["ports"][0]["port"], 80);
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080);
    let pc = c
        .json(&["get", "priorityclass", "high", "-o", "json"])
        .await;
    assert_eq!(pc["value"], 1000);
    let cron = c.json(&["get", "cronjob", "nightly", "-o", "json"]).await;
    assert_eq!(cron["spec"]["schedule"], "0 3 * * *");
    let pdb = c.json(&["get", "pdb", "web", "-o", "json"]).await;
    assert_eq!(pdb["spec"]["minAvailable"], 1);
    let deploy = c.json(&["get", "deployment", "web", "-o", "json"]).await;
    assert_eq!(deploy["spec"]["replicas"], 2);
    let container = &deploy["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx");
    assert_eq!(container["ports"][0]["containerPort"], 80);
    assert!(
        deploy["spec"]["template"]["spec"]
            .get("restartPolicy")
            .is_none()
            || deploy["spec"]["template"]["spec"]["restartPolicy"] == "Always",
        "no empty restartPolicy from gogo's zero fields: {deploy}"
    );

    // kubectl really spoke protobuf both ways (its -v=8 log shows the
    // request and response headers).
    let out = c
        .kubectl(&["-v=8", "create", "serviceaccount", "watcher"], None)
        .await;
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    let pb = "Content-Type: application/vnd.kubernetes.protobuf";
    assert_eq!(log.matches(pb).count(), 2, "request and response: {log}");

    // `kubectl create token`: a TokenRequest through serviceaccounts/token
    // (protobuf both ways), printed as the bare token.
    let token = c
        .ok(&["create", "token", "robot", "--duration=20m"], None)
        .await;
    let claims = token
        .trim()
        .split('.')
        .nth(1)
        .map(|b64| {
            let padded = format!("{b64}{}", "=".repeat((4 - b64.len() % 4) % 4));
            padded.replace('-', "+").replace('_', "/")
        })
        .unwrap_or_default();
    let decoded = std::process::Command::new("base64")
        .arg("-d")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(claims.as_bytes())?;
            }
            child.wait_with_output()
        })
        .expect("base64 -d");
    let claims: serde_json::Value =
        serde_json::from_slice(&decoded.stdout).expect("JWT claims are JSON");
    assert_eq!(claims["sub"], "system:serviceaccount:default:robot");
    assert_eq!(
        claims["exp"].as_i64().unwrap_or_default() - claims["iat"].as_i64().unwrap_or_default(),
        1200
    );
    let err = c
        .fails(&["create", "token", "robot", "--duration=5m"])
        .await;
    assert_eq!(
        err,
        "error: failed to create token: TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes\n"
    );
    let err = c.fails(&["create", "token", "nobody"]).await;
    assert_eq!(
        err,
        "error: failed to create token: serviceaccounts \"nobody\" not found\n"
    );
    c.stop().await;
}
