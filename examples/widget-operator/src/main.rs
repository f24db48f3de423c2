//! `widget-operator`: installs the Widget CRD (server-side apply) and runs
//! the controller against the cluster of the current kubeconfig — for
//! example `exitplan up`'s.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use kube::api::{Api, Patch, PatchParams};
use widget_operator::{MANAGER, Widget};

#[tokio::main]
async fn main() -> Result<(), kube::Error> {
    let client = kube::Client::try_default().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = Widget::crd();
    let name = crd.metadata.name.clone().unwrap_or_default();
    crds.patch(
        &name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&crd),
    )
    .await?;
    println!("CRD {name} applied; reconciling Widgets (Ctrl-C to stop)");
    tokio::select! {
        () = widget_operator::run(client) => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(())
}
