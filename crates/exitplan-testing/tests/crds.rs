//! CRD installation: CRDs given to the builder or installed later are
//! `Established` and served when the call returns; installing one again
//! replaces it; an invalid CRD or one whose names conflict fails with a
//! clear error carrying the API server's message.

use exitplan_testing::{Error, TestEnv};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::core::{ApiResource, DynamicObject};
use serde_json::{Value, json};

/// A namespaced CRD `<plural>.example.com` with an open object schema.
fn crd(plural: &str, kind: &str, short_names: &[&str]) -> CustomResourceDefinition {
    serde_json::from_value(crd_json(plural, kind, short_names)).expect("crd")
}

fn crd_json(plural: &str, kind: &str, short_names: &[&str]) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.example.com")},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {
                "plural": plural,
                "singular": kind.to_lowercase(),
                "kind": kind,
                "shortNames": short_names,
            },
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {
                        "type": "object",
                        "properties": {"size": {"type": "integer"}}
                    }}
                }}
            }]
        }
    })
}

fn established(crd: &CustomResourceDefinition) -> Option<(String, Option<String>)> {
    crd.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Established")
        .map(|c| (c.status.clone(), c.reason.clone()))
}

/// An API for the custom resource `<plural>.example.com/v1` in `default`.
fn custom(env: &TestEnv, plural: &str, kind: &str) -> Api<DynamicObject> {
    let resource = ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    };
    Api::namespaced_with(env.client(), "default", &resource)
}

fn object(kind: &str, name: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": kind,
        "metadata": {"name": name},
        "spec": {"size": 3}
    }))
    .expect("object")
}

#[tokio::test(start_paused = true)]
async fn crds_given_to_the_builder_are_established_and_served_at_start() {
    let env = TestEnv::builder()
        .crds([crd("gadgets", "Gadget", &[])])
        .start()
        .await
        .expect("start");
    let crds: Api<CustomResourceDefinition> = Api::all(env.client());
    let stored = crds.get("gadgets.example.com").await.expect("the CRD");
    assert_eq!(
        established(&stored),
        Some(("True".into(), Some("InitialNamesAccepted".into())))
    );
    // The custom resource is served right away.
    let gadgets = custom(&env, "gadgets", "Gadget");
    let created = gadgets
        .create(&PostParams::default(), &object("Gadget", "g1"))
        .await
        .expect("create a Gadget");
    assert_eq!(created.data["spec"]["size"], 3);
}

#[tokio::test(start_paused = true)]
async fn crds_installed_later_are_ready_on_return_and_reinstalling_replaces() {
    let env = TestEnv::start().await.expect("start");
    let installed = env
        .install_crds([crd("gadgets", "Gadget", &[]), crd("gizmos", "Gizmo", &[])])
        .await
        .expect("install");
    let names: Vec<Option<String>> = installed.iter().map(|c| c.metadata.name.clone()).collect();
    assert_eq!(
        names,
        [
            Some("gadgets.example.com".to_owned()),
            Some("gizmos.example.com".to_owned())
        ]
    );
    for crd in &installed {
        assert_eq!(established(crd).map(|e| e.0).as_deref(), Some("True"));
    }
    custom(&env, "gizmos", "Gizmo")
        .create(&PostParams::default(), &object("Gizmo", "z1"))
        .await
        .expect("create a Gizmo");

    // The same name again: replaced (here: a short name added).
    let again = env
        .install_crd(crd("gadgets", "Gadget", &["gd"]))
        .await
        .expect("reinstall");
    assert_eq!(again.spec.names.short_names, Some(vec!["gd".to_owned()]));
    let accepted = again.status.and_then(|s| s.accepted_names);
    assert_eq!(
        accepted.and_then(|n| n.short_names),
        Some(vec!["gd".to_owned()])
    );
}

#[tokio::test(start_paused = true)]
async fn an_invalid_crd_fails_with_the_api_servers_message() {
    let mut wrong = crd_json("gadgets", "Gadget", &[]);
    wrong["metadata"]["name"] = json!("wrong.example.com");
    let wrong: CustomResourceDefinition = serde_json::from_value(wrong).expect("crd");

    let err = TestEnv::builder()
        .crds([wrong.clone()])
        .start()
        .await
        .expect_err("an invalid CRD");
    let want = r#"CustomResourceDefinition.apiextensions.k8s.io "wrong.example.com" is invalid: metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group"#;
    match &err {
        Error::CrdRefused {
            name,
            code,
            reason,
            message,
        } => {
            assert_eq!(name, "wrong.example.com");
            assert_eq!(*code, 422);
            assert_eq!(reason, "Invalid");
            assert_eq!(message, want);
        }
        other => panic!("not CrdRefused: {other}"),
    }
    assert_eq!(
        err.to_string(),
        format!(
            r#"CustomResourceDefinition "wrong.example.com" was refused (422 Invalid): {want}"#
        )
    );

    // Later installs fail alike, and store nothing.
    let env = TestEnv::start().await.expect("start");
    assert!(matches!(
        env.install_crd(wrong).await,
        Err(Error::CrdRefused { code: 422, .. })
    ));
    let crds: Api<CustomResourceDefinition> = Api::all(env.client());
    assert!(
        crds.get_opt("wrong.example.com")
            .await
            .expect("get")
            .is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn a_crd_whose_names_conflict_is_reported_not_waited_for() {
    let env = TestEnv::builder()
        .crds([crd("gadgets", "Gadget", &[])])
        .start()
        .await
        .expect("start");
    // "gadgets" as a short name of another CRD of the group is taken.
    let err = env
        .install_crd(crd("things", "Thing", &["gadgets"]))
        .await
        .expect_err("a names conflict");
    assert_eq!(
        err.to_string(),
        r#"CustomResourceDefinition "things.example.com" names were not accepted (ShortNamesConflict): "gadgets" is already in use"#
    );
}

#[tokio::test(start_paused = true)]
async fn a_crd_without_a_name_is_refused_before_any_request() {
    let env = TestEnv::start().await.expect("start");
    let mut unnamed = crd("gadgets", "Gadget", &[]);
    unnamed.metadata.name = None;
    let err = env.install_crd(unnamed).await.expect_err("no name");
    assert!(matches!(err, Error::CrdUnnamed), "{err}");
}
