//! Connecting to an API server: which kubeconfig a command uses, the
//! kube-rs client built from it (HTTPS through rustls with the ring
//! provider, the TLS stack `exitplan up` serves), and what a user reads
//! when either fails: one line naming the kubeconfig or the server and the
//! cause, as kubectl does (kube-rs' own errors repeat their causes, quote
//! paths in debug form and draw YAML snippets over several lines).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result};
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};

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
/// The server is asked for its version first (as kubectl's discovery
/// does), so a command whose server is unreachable says so at once, in
/// one line, instead of retrying in the background.
pub async fn client(path: Option<&Path>) -> Result<kube::Client> {
    let client = kube::Client::try_from(config(path).await?).context("building the API client")?;
    check_reachable(&client).await?;
    Ok(client)
}

/// Asks the server for its version: an unreachable server or a refused
/// token fails here, with the error [`server_error`] renders.
pub async fn check_reachable(client: &kube::Client) -> Result<()> {
    client.apiserver_version().await.map_err(server_error)?;
    Ok(())
}

/// The server this process talks to (one per process: every client
/// command connects to one server), for error messages.
static SERVER: OnceLock<String> = OnceLock::new();

/// The client configuration of the current context of the kubeconfig at
/// `path` (or the default one, see [`default_kubeconfig`]), for a command
/// that adjusts it before building its client.
pub async fn config(path: Option<&Path>) -> Result<kube::Config> {
    let path = path.map(Path::to_path_buf).or_else(default_kubeconfig);
    let mut config = match &path {
        Some(p) => {
            let loaded = match Kubeconfig::read_from(p) {
                Ok(kc) => {
                    kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await
                }
                Err(e) => Err(e),
            };
            loaded.map_err(|e| anyhow::anyhow!(kubeconfig_error(p, &e)))?
        }
        None => kube::Config::infer().await.map_err(|e| {
            anyhow::anyhow!(
                "no usable kubeconfig ({}): pass --kubeconfig, set $KUBECONFIG, or start `exitplan up`",
                one_line(&e.to_string())
            )
        })?,
    };
    let _ = SERVER.set(
        config
            .cluster_url
            .to_string()
            .trim_end_matches('/')
            .to_owned(),
    );
    config.headers.push((
        axum::http::header::USER_AGENT,
        axum::http::HeaderValue::from_static(USER_AGENT),
    ));
    Ok(config)
}

/// kubectl's rendering of a server error, `Error from server (NotFound):
/// jobs.batch "x" not found`, instead of kube-rs' (which includes the whole
/// `Status` in Rust debug form).
/// A request that never reached the server becomes [`Unreachable`].
pub fn server_error(e: kube::Error) -> anyhow::Error {
    match e {
        kube::Error::Api(s) => anyhow::anyhow!("Error from server ({}): {}", s.reason, s.message),
        e => match unreachable_cause(&e) {
            Some(cause) => anyhow::Error::new(Unreachable {
                server: SERVER.get().cloned(),
                cause,
            }),
            None => anyhow::Error::new(e),
        },
    }
}

/// The server could not be reached (refused, unresolvable, TLS failed):
/// the whole message a user needs, so the CLI prints it alone, without
/// the step that was being attempted.
#[derive(Debug)]
pub struct Unreachable {
    /// The server's URL, when known.
    pub server: Option<String>,
    /// Why, in a few words (`connection refused`).
    pub cause: String,
}

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("cannot connect to the server")?;
        if let Some(server) = &self.server {
            write!(f, " at {server}")?;
        }
        write!(f, ": {}", self.cause)?;
        if self.cause == REFUSED {
            f.write_str(" (is `exitplan up` running, and is this the kubeconfig it wrote?)")?;
        }
        Ok(())
    }
}

impl std::error::Error for Unreachable {}

const REFUSED: &str = "connection refused";

/// Why a request failed before any answer, if it did: hyper's connector
/// and rustls wrap the cause several times (`client error (Connect):
/// client error (Connect): tcp connect error: Connection refused (os error
/// 111)`); the innermost error is the one that says what happened.
fn unreachable_cause(e: &kube::Error) -> Option<String> {
    if !matches!(e, kube::Error::Service(_) | kube::Error::HyperError(_)) {
        return None;
    }
    let mut connect = false;
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut innermost = None;
    while let Some(err) = source {
        let text = err.to_string();
        connect |= text.contains("(Connect)") || text.contains("connect error");
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return Some(REFUSED.to_owned());
            }
            if let Some(inner) = io.get_ref() {
                // rustls and the resolver report through io::Error
                // (`invalid peer certificate: …`, `failed to lookup address …`).
                return Some(one_line(&inner.to_string()));
            }
            return Some(crate::input::io_cause(io));
        }
        innermost = Some(text);
        source = err.source();
    }
    connect.then(|| one_line(&innermost.unwrap_or_default()))
}

/// One line for a kubeconfig that cannot be used: the file and the cause,
/// once.
fn kubeconfig_error(path: &Path, e: &KubeconfigError) -> String {
    let p = path.display();
    match e {
        KubeconfigError::ReadConfig(io, _) => {
            format!("cannot read kubeconfig {p}: {}", crate::input::io_cause(io))
        }
        KubeconfigError::Parse(e) => {
            let parsed = crate::input::parse_documents_error(e);
            match parsed.at {
                Some((line, column)) => format!(
                    "kubeconfig {p}:{line}:{column}: not valid YAML: {}",
                    parsed.message
                ),
                None => format!("kubeconfig {p}: not valid YAML: {}", parsed.message),
            }
        }
        KubeconfigError::CurrentContextNotSet => {
            format!("kubeconfig {p}: no current-context is set")
        }
        KubeconfigError::LoadContext(name) => {
            format!("kubeconfig {p}: context {name:?} is not defined")
        }
        KubeconfigError::LoadClusterOfContext(name) => {
            format!("kubeconfig {p}: cluster {name:?} of the current context is not defined")
        }
        e => format!("kubeconfig {p}: {}", one_line(&e.to_string())),
    }
}

/// Collapses a message to one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
