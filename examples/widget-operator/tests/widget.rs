//! The Widget operator against the API server in the test's process
//! (`exitplan_testing::TestEnv`), as a kube-rs user tests a controller:
//! install the CRD, run the controller, create Widgets, assert on what
//! the API server holds. Under tokio's paused clock, the 5-minute resync
//! passes at once.

use std::time::Duration;

use exitplan_testing::TestEnv;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::{Condition, await_condition};
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::task::JoinHandle;
use widget_operator::{RESYNC, Widget, WidgetSpec, WidgetStatus};

/// A test environment with the Widget CRD installed and the controller
/// running on its client.
async fn start() -> (TestEnv, JoinHandle<()>) {
    let env = TestEnv::builder()
        .crds([Widget::crd()])
        .start()
        .await
        .expect("test environment");
    let controller = tokio::spawn(widget_operator::run(env.client()));
    (env, controller)
}

fn widget(name: &str, message: &str, replicas: i32) -> Widget {
    Widget::new(
        name,
        WidgetSpec {
            message: message.into(),
            replicas,
        },
    )
}

/// Waits (watching, as kube-rs users wait) until `name` satisfies `cond`,
/// for at most 30 s of tokio time; returns it.
async fn wait_for<K>(api: &Api<K>, name: &str, what: &str, cond: impl Condition<K>) -> K
where
    K: kube::Resource + Clone + std::fmt::Debug + DeserializeOwned + Send + 'static,
{
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(api.clone(), name, cond),
    )
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for: {what}"))
    .expect("watch")
    .unwrap_or_else(|| panic!("{name} is gone"))
}

/// The Widget's status once the controller has seen `generation`.
async fn reconciled(widgets: &Api<Widget>, name: &str, generation: i64) -> WidgetStatus {
    let seen = move |w: Option<&Widget>| {
        w.and_then(|w| w.status.as_ref())
            .is_some_and(|s| s.observed_generation == Some(generation))
    };
    let what = format!("{name} reconciled at generation {generation}");
    let widget = wait_for(widgets, name, &what, seen).await;
    widget.status.unwrap_or_default()
}

fn data(cm: &ConfigMap, key: &str) -> Option<String> {
    cm.data.as_ref().and_then(|d| d.get(key).cloned())
}

#[tokio::test(start_paused = true)]
async fn reconcile_creates_the_config_map_and_writes_status() {
    let (env, _controller) = start().await;
    let widgets: Api<Widget> = Api::default_namespaced(env.client());
    let maps: Api<ConfigMap> = Api::default_namespaced(env.client());
    let created = widgets
        .create(&PostParams::default(), &widget("hello", "hi there", 3))
        .await
        .expect("create widget");

    let status = reconciled(&widgets, "hello", 1).await;
    assert_eq!(
        status,
        WidgetStatus {
            config_map: Some("hello".into()),
            observed_generation: Some(1),
        }
    );
    let cm = maps.get("hello").await.expect("the ConfigMap");
    assert_eq!(data(&cm, "message").as_deref(), Some("hi there"));
    assert_eq!(data(&cm, "replicas").as_deref(), Some("3"));
    let owner = cm.metadata.owner_references.unwrap_or_default();
    assert_eq!(owner.len(), 1);
    assert_eq!(owner[0].kind, "Widget");
    assert_eq!(owner[0].api_version, "example.exitplan.io/v1");
    assert_eq!(Some(&owner[0].uid), created.metadata.uid.as_ref());

    // A spec change bumps the generation; the controller follows it.
    widgets
        .patch(
            "hello",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"message": "goodbye"}})),
        )
        .await
        .expect("patch spec");
    reconciled(&widgets, "hello", 2).await;
    let cm = maps.get("hello").await.expect("the ConfigMap");
    assert_eq!(data(&cm, "message").as_deref(), Some("goodbye"));
}

#[tokio::test(start_paused = true)]
async fn the_status_subresource_keeps_spec_and_status_apart() {
    let (env, _controller) = start().await;
    let widgets: Api<Widget> = Api::default_namespaced(env.client());
    widgets
        .create(&PostParams::default(), &widget("hello", "hi", 1))
        .await
        .expect("create widget");
    reconciled(&widgets, "hello", 1).await;
    // A write of the main resource cannot change status (it is ignored),
    // and a status write does not bump the generation.
    let patched = widgets
        .patch(
            "hello",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"configMap": "forged"}})),
        )
        .await
        .expect("patch");
    assert_eq!(
        patched.status.and_then(|s| s.config_map).as_deref(),
        Some("hello")
    );
    assert_eq!(patched.metadata.generation, Some(1));
}

#[tokio::test(start_paused = true)]
async fn a_widget_breaking_the_cel_rule_is_refused_with_kube_apiservers_message() {
    let (env, _controller) = start().await;
    let widgets: Api<Widget> = Api::default_namespaced(env.client());
    let err = widgets
        .create(&PostParams::default(), &widget("too-many", "hi", 11))
        .await
        .expect_err("11 replicas break the rule");
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err}");
    };
    assert_eq!(status.code, 422);
    assert_eq!(status.reason, "Invalid");
    assert_eq!(
        status.message,
        r#"Widget.example.exitplan.io "too-many" is invalid: spec.replicas: Invalid value: "integer": must be between 0 and 10"#
    );
    let causes = status.details.map(|d| d.causes).unwrap_or_default();
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert_eq!(causes[0].reason, "FieldValueInvalid");
    assert_eq!(causes[0].field, "spec.replicas");
    assert_eq!(
        causes[0].message,
        r#"Invalid value: "integer": must be between 0 and 10"#
    );
    assert!(
        widgets.get_opt("too-many").await.expect("get").is_none(),
        "nothing is stored"
    );

    // The rule holds on updates too.
    widgets
        .create(&PostParams::default(), &widget("ok", "hi", 10))
        .await
        .expect("10 replicas are fine");
    let err = widgets
        .patch(
            "ok",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": -1}})),
        )
        .await
        .expect_err("-1 replicas break the rule");
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err}");
    };
    assert_eq!(
        status.message,
        r#"Widget.example.exitplan.io "ok" is invalid: spec.replicas: Invalid value: "integer": must be between 0 and 10"#
    );
}

#[tokio::test(start_paused = true)]
async fn a_deleted_config_map_comes_back_at_the_next_resync() {
    let (env, _controller) = start().await;
    let widgets: Api<Widget> = Api::default_namespaced(env.client());
    let maps: Api<ConfigMap> = Api::default_namespaced(env.client());
    widgets
        .create(&PostParams::default(), &widget("hello", "hi", 1))
        .await
        .expect("create widget");
    reconciled(&widgets, "hello", 1).await;
    // Let the reconcile that the status write triggered settle: the next
    // one is then RESYNC after it.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let settled = tokio::time::Instant::now();

    // The controller does not watch ConfigMaps: a deletion behind its back
    // is repaired at the periodic resync, 5 minutes of virtual time later.
    maps.delete("hello", &DeleteParams::default())
        .await
        .expect("delete the ConfigMap");
    tokio::time::sleep(RESYNC - Duration::from_secs(5)).await;
    assert!(
        maps.get_opt("hello").await.expect("get").is_none(),
        "not back before the resync"
    );
    let back = |cm: Option<&ConfigMap>| cm.is_some();
    wait_for(&maps, "hello", "the ConfigMap is back", back).await;
    let waited = settled.elapsed();
    assert!(
        waited > RESYNC - Duration::from_secs(5) && waited <= RESYNC + Duration::from_secs(1),
        "recreated after {waited:?}"
    );
}
