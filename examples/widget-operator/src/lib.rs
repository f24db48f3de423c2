//! # widget-operator — an example kube-rs operator tested with exitplan-testing
//!
//! A `Widget` (`widgets.example.exitplan.io/v1`, namespaced) asks for a
//! greeting to be published: the controller keeps one ConfigMap per Widget
//! (same name, owned by it) holding the message and the replica count, and
//! reports it in the Widget's `status` subresource. The API server refuses
//! a Widget asking for more than 10 replicas: the CEL rule in its schema
//! (`x-kubernetes-validations`), generated from the Rust type.
//!
//! The controller watches Widgets only; it also re-reconciles every
//! [`RESYNC`], which repairs a ConfigMap changed or deleted behind its back.
//!
//! Its tests (`tests/widget.rs`) run it against `exitplan_testing::TestEnv`:
//! the API server in the test's process, under tokio's paused clock.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{CustomResource, KubeSchema, Resource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The field manager of every write of the controller.
pub const MANAGER: &str = "widget-operator";

/// How often every Widget is reconciled even when nothing changed.
pub const RESYNC: Duration = Duration::from_secs(300);

/// What a Widget asks for.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "example.exitplan.io",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus",
    shortname = "wd",
    printcolumn = r#"{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}"#
)]
pub struct WidgetSpec {
    /// The greeting to publish.
    pub message: String,
    /// How many replicas (0–10).
    #[x_kube(validation = Rule::new("self >= 0 && self <= 10").message("must be between 0 and 10"))]
    pub replicas: i32,
}

/// What the controller last did for a Widget.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    /// The ConfigMap holding the greeting.
    pub config_map: Option<String>,
    /// The `metadata.generation` the ConfigMap reflects.
    pub observed_generation: Option<i64>,
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API request failed.
    #[error("API request failed: {0}")]
    Kube(#[from] kube::Error),
    /// The Widget has no namespace (the API server always sets one).
    #[error("widget {0:?} has no namespace")]
    NoNamespace(String),
}

/// The ConfigMap a Widget asks for: its name, owned by the Widget, with
/// the message and the replica count.
pub fn desired_config_map(widget: &Widget) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(widget.name_any()),
            namespace: widget.namespace(),
            owner_references: widget.controller_owner_ref(&()).map(|o| vec![o]),
            labels: Some(
                [(
                    "app.kubernetes.io/managed-by".to_owned(),
                    MANAGER.to_owned(),
                )]
                .into(),
            ),
            ..ObjectMeta::default()
        },
        data: Some(
            [
                ("message".to_owned(), widget.spec.message.clone()),
                ("replicas".to_owned(), widget.spec.replicas.to_string()),
            ]
            .into(),
        ),
        ..ConfigMap::default()
    }
}

/// What the reconciler needs.
#[derive(Clone)]
pub struct Ctx {
    /// The API client.
    pub client: kube::Client,
}

/// Applies the Widget's ConfigMap (server-side apply), then records it in
/// the Widget's status.
pub async fn reconcile(widget: Arc<Widget>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let ns = widget
        .namespace()
        .ok_or_else(|| Error::NoNamespace(widget.name_any()))?;
    let name = widget.name_any();
    let params = PatchParams::apply(MANAGER).force();
    let maps: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
    // k8s-openapi types serialize their apiVersion and kind, as apply needs.
    maps.patch(&name, &params, &Patch::Apply(desired_config_map(&widget)))
        .await?;
    let status = WidgetStatus {
        config_map: Some(name.clone()),
        observed_generation: widget.metadata.generation,
    };
    if widget.status.as_ref() != Some(&status) {
        let widgets: Api<Widget> = Api::namespaced(ctx.client.clone(), &ns);
        widgets
            .patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": status})),
            )
            .await?;
    }
    Ok(Action::requeue(RESYNC))
}

/// After a failed reconcile: try again in 5 seconds.
pub fn error_policy(_widget: Arc<Widget>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    tracing::warn!(%error, "reconcile failed");
    Action::requeue(Duration::from_secs(5))
}

/// Runs the controller on `client` until the task is dropped.
pub async fn run(client: kube::Client) {
    let widgets: Api<Widget> = Api::all(client.clone());
    Controller::new(widgets, watcher::Config::default())
        .run(reconcile, error_policy, Arc::new(Ctx { client }))
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "reconcile");
            }
        })
        .await;
}

#[cfg(test)]
mod tests {
    use kube::CustomResourceExt;

    use super::*;

    #[test]
    fn the_config_map_is_named_and_owned_like_its_widget() {
        let mut widget = Widget::new(
            "hello",
            WidgetSpec {
                message: "hi".into(),
                replicas: 3,
            },
        );
        widget.metadata.namespace = Some("team-a".into());
        widget.metadata.uid = Some("1234".into());
        let cm = desired_config_map(&widget);
        assert_eq!(cm.metadata.name.as_deref(), Some("hello"));
        assert_eq!(cm.metadata.namespace.as_deref(), Some("team-a"));
        let owner = cm
            .metadata
            .owner_references
            .and_then(|o| o.into_iter().next());
        let owner = owner.as_ref();
        assert_eq!(owner.map(|o| o.kind.as_str()), Some("Widget"));
        assert_eq!(owner.map(|o| o.uid.as_str()), Some("1234"));
        assert_eq!(owner.and_then(|o| o.controller), Some(true));
        let data = cm.data.unwrap_or_default();
        assert_eq!(data.get("message").map(String::as_str), Some("hi"));
        assert_eq!(data.get("replicas").map(String::as_str), Some("3"));
    }

    #[test]
    fn the_crd_carries_the_cel_rule_and_the_status_subresource() {
        let crd = serde_json::to_value(Widget::crd()).unwrap_or_default();
        let version = &crd["spec"]["versions"][0];
        assert_eq!(
            version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"]["x-kubernetes-validations"],
            json!([{"rule": "self >= 0 && self <= 10", "message": "must be between 0 and 10"}])
        );
        assert_eq!(version["subresources"]["status"], json!({}));
    }
}
