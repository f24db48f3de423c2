//! Connecting to an API server: which kubeconfig a command uses and the
//! kube-rs client built from it (HTTPS through rustls with the ring
//! provider, the TLS stack `exitplan up` serves).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The kubeconfig a client command uses when given none: `$KUBECONFIG`
/// (kube-rs reads it), else the one `exitplan up` writes by default if it
/// exists, else kube-rs's defaults (`~/.kube/config`, in-cluster).
fn default_kubeconfig() -> Option<PathBuf> {
    if std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty()) {
        return None;
    }
    Some(crate::cmd::up::default_data_dir().join("kubeconfig")).filter(|p| p.is_file())
}

/// The `User-Agent` of exitplan's clients: the server names the field
/// manager of a write without `fieldManager` after its prefix (`exitplan`),
/// as upstream does (kube-rs sends none, which reads as `unknown`).
pub const USER_AGENT: &str = concat!("exitplan/", env!("CARGO_PKG_VERSION"));

/// A client for the current context of the kubeconfig at `path` (or the
/// default one, see [`default_kubeconfig`]).
pub async fn client(path: Option<&Path>) -> Result<kube::Client> {
    kube::Client::try_from(config(path).await?).context("building the API client")
}

/// The client configuration of the current context of the kubeconfig at
/// `path` (or the default one, see [`default_kubeconfig`]), for a command
/// that adjusts it before building its client.
pub async fn config(path: Option<&Path>) -> Result<kube::Config> {
    let path = path.map(Path::to_path_buf).or_else(default_kubeconfig);
    let mut config = match &path {
        Some(p) => {
            let kc = Kubeconfig::read_from(p)
                .with_context(|| format!("reading kubeconfig {}", p.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
                .await
                .with_context(|| format!("loading kubeconfig {}", p.display()))?
        }
        None => kube::Config::infer()
            .await
            .context("no kubeconfig: pass --kubeconfig, set $KUBECONFIG, or start `exitplan up`")?,
    };
    config.headers.push((
        axum::http::header::USER_AGENT,
        axum::http::HeaderValue::from_static(USER_AGENT),
    ));
    Ok(config)
}

/// kubectl's rendering of a server error, `Error from server (NotFound):
/// jobs.batch "x" not found`, instead of kube-rs' (which includes the whole
/// `Status` in Rust debug form).
pub fn server_error(e: kube::Error) -> anyhow::Error {
    match e {
        kube::Error::Api(s) => anyhow::anyhow!("Error from server ({}): {}", s.reason, s.message),
        e => anyhow::Error::new(e),
    }
}
