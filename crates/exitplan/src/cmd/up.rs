//! `exitplan up`: the embedded, durable, Kubernetes-compatible API server
//! on one machine.
//!
//! * Data lives in `--data` (default `$XDG_DATA_HOME/exitplan`, else
//!   `~/.local/share/exitplan`): the database (`exitplan.redb`) and the
//!   bearer token (`token`, created at first start, mode 0600).
//! * Listens on `--listen` (default `127.0.0.1:6443`) over HTTPS with a
//!   private CA made at first start (`ca.crt`, `server.crt`, `server.key`
//!   in the data directory): kubectl (client-go) sends a kubeconfig's token
//!   only to `https://` servers.
//! * Writes a kubeconfig (mode 0600, default `<data>/kubeconfig`) with the
//!   server URL, the CA and the token, and prints how to use it.
//! * Stops on Ctrl-C or SIGTERM: stops accepting, ends watches, lets
//!   in-flight requests (and their durable writes) finish.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use exitplan_apiserver::kubeconfig;
use exitplan_apiserver::rest::meta::random_hex;
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use exitplan_apiserver::tls::{LocalCa, local_names};

/// The default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:6443";

/// Arguments of `exitplan up`.
#[derive(Debug, Args)]
pub struct UpArgs {
    /// Data directory (database, token, default kubeconfig).
    /// Default: $XDG_DATA_HOME/exitplan or ~/.local/share/exitplan.
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Address to listen on (HTTPS; use port 0 for any free port).
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Where to write the kubeconfig. Default: <data>/kubeconfig.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
}

/// The default data directory.
pub(crate) fn default_data_dir() -> PathBuf {
    if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(xdg).join("exitplan");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home).join(".local/share/exitplan");
    }
    PathBuf::from(".exitplan")
}

fn create_private_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("restricting {}", dir.display()))?;
    }
    Ok(())
}

/// The token in `<data>/token`, created at first start.
fn load_or_create_token(dir: &Path) -> Result<String> {
    let path = dir.join("token");
    match std::fs::read_to_string(&path) {
        Ok(t) if !t.trim().is_empty() => return Ok(t.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    }
    let token =
        random_hex(32).map_err(|e| anyhow::anyhow!("no OS random source for the token: {e}"))?;
    kubeconfig::write_private(&path, &format!("{token}\n"))
        .with_context(|| format!("writing {}", path.display()))?;
    tracing::info!(path = %path.display(), "created a new bearer token");
    Ok(token)
}

/// Runs the server until Ctrl-C or SIGTERM.
pub fn run(args: UpArgs) -> Result<ExitCode> {
    crate::process::init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(args))
}

async fn serve(args: UpArgs) -> Result<ExitCode> {
    let data = args.data.unwrap_or_else(default_data_dir);
    create_private_dir(&data)?;
    let db = data.join("exitplan.redb");
    let store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
    let token = load_or_create_token(&data)?;
    let server = Server::builder()
        .store(store)
        .token(token.clone())
        .build()
        .await
        .context("starting the API server")?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let addr = listener.local_addr().context("reading the bound address")?;
    let ca = LocalCa::load_or_create(&data, &local_names(Some(addr.ip())))
        .context("preparing the TLS certificate")?;
    let tls = ca.server_config().context("configuring TLS")?;
    let url = format!("https://{addr}");
    let kubeconfig_path = args.kubeconfig.unwrap_or_else(|| data.join("kubeconfig"));
    kubeconfig::write_private(
        &kubeconfig_path,
        &kubeconfig::render(&url, &token, "default", Some(&ca.ca_pem)),
    )
    .with_context(|| format!("writing {}", kubeconfig_path.display()))?;
    tracing::info!(%url, data = %data.display(), revision = server.store().revision(), "exitplan API server ready");
    println!("exitplan API server listening on {url}");
    println!("kubeconfig: {}", kubeconfig_path.display());
    println!(
        "try: kubectl --kubeconfig {} get ns",
        kubeconfig_path.display()
    );
    server
        .serve_tls(listener, tls, crate::process::shutdown_signal())
        .await
        .context("serving HTTP")?;
    tracing::info!("stopped");
    Ok(ExitCode::SUCCESS)
}
