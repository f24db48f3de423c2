//! `exitplan up`: a one-machine cluster — the embedded, durable,
//! Kubernetes-compatible API server, and in the same process the
//! controllers and simulated nodes that make pods run and leave.
//!
//! * Runs, against the server in-process (`kube::Client::new(router)`, one
//!   clock for server and controllers, authenticated with the token): the evictionrequest-controller, the
//!   imperative evictor, the disruption controller, the garbage collector,
//!   the simulated scheduler and the Job controller, and `--nodes N`
//!   simulated nodes `node-1..node-N` (default 3; each registers its `Node`,
//!   heartbeats, and runs its pods with a simulated kubelet). `--nodes 0`
//!   runs the controllers without simulated nodes (pods stay Pending unless
//!   a Node is registered and their status written by hand, as with kwok);
//!   `--bare` runs the API server alone: no controllers, no nodes (for a
//!   controller run elsewhere, such as `exitplan controller`).
//! * Prints what runs, after the listen address and the kubeconfig path.
//! * Serves Prometheus metrics on `/metrics` (with the token): the API
//!   server's and those of every controller it runs.
//! * Data lives in `--data` (default `$XDG_DATA_HOME/exitplan`, else
//!   `~/.local/share/exitplan`): the database (`exitplan.redb`) and the
//!   bearer token (`token`, created at first start, mode 0600), and the
//!   service account token signing key (`sa.key`, likewise).
//! * Listens on `--listen` (default `127.0.0.1:6443`) over HTTPS with a
//!   private CA made at first start (`ca.crt`, `server.crt`, `server.key`
//!   in the data directory): kubectl (client-go) sends a kubeconfig's token
//!   only to `https://` servers.
//! * Writes a kubeconfig (mode 0600, default `<data>/kubeconfig`) with the
//!   server URL, the CA and the token, and prints how to use it.
//! * Stops on Ctrl-C or SIGTERM: stops the controllers and nodes first, then
//!   the server stops accepting, ends watches and lets in-flight requests
//!   (and their durable writes) finish.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use exitplan_apiserver::kubeconfig;
use exitplan_apiserver::rest::meta::random_hex;
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use exitplan_apiserver::tls::{LocalCa, local_names};
use exitplan_clock::{SharedClock, SystemClock};
use exitplan_runtime::context::Context as RuntimeContext;
use exitplan_runtime::runtime::{Component, Runtime, RuntimeConfig};

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
    /// Simulated nodes node-1..node-N to run with the controllers
    /// (0: the controllers without simulated nodes).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_NODES,
          value_parser = clap::value_parser!(u16).range(0..=MAX_NODES))]
    pub nodes: u16,
    /// The API server alone: no controllers and no simulated nodes.
    #[arg(long, conflicts_with = "nodes")]
    pub bare: bool,
}

/// The default number of simulated nodes.
pub const DEFAULT_NODES: u16 = 3;
/// The most simulated nodes `exitplan up` runs.
pub const MAX_NODES: i64 = 1000;

/// What `exitplan up` runs next to the server (unless `--bare`).
pub fn components() -> Vec<(Component, &'static str)> {
    vec![
        (Component::EvictionRequest, "evictionrequest-controller"),
        (
            Component::ImperativeEvictor,
            "imperative-eviction.k8s.io/evictor",
        ),
        (Component::Disruption, "disruption-controller"),
        (Component::GarbageCollector, "garbage-collector"),
        (Component::Scheduler, "scheduler"),
        (Component::Job, "job-controller"),
    ]
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

/// Makes sure the data directory exists. A directory exitplan creates is
/// private (0700, like each parent it had to create); an existing one keeps
/// its mode — it may be shared on purpose (`--data .`) — and if other users
/// can read or enter it, the returned warning says so (the files exitplan
/// writes there are 0600 whatever the directory's mode).
fn prepare_data_dir(dir: &Path) -> Result<Option<String>> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(open_to_others(dir, &meta)),
        Ok(_) => anyhow::bail!("{} exists and is not a directory", dir.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            builder
                .create(dir)
                .with_context(|| format!("creating {}", dir.display()))?;
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", dir.display())),
    }
}

#[cfg(unix)]
fn open_to_others(dir: &Path, meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then(|| {
        format!(
            "data directory {} is accessible to other users (mode {mode:04o}); its files are \
             private (0600), but consider `chmod 700 {}`",
            dir.display(),
            dir.display()
        )
    })
}

#[cfg(not(unix))]
fn open_to_others(_dir: &Path, _meta: &std::fs::Metadata) -> Option<String> {
    None
}

/// Opens the database. A damaged file is reported by the returned error in
/// one line: the panic hook (which would print a storage-engine panic with
/// a backtrace) is silenced meanwhile; nothing else runs yet.
fn open_store(db: &Path) -> Result<Store, exitplan_apiserver::storage::StorageError> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let opened = Store::open(db);
    std::panic::set_hook(hook);
    opened
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
    // Before anything reports ready (see `shutdown_signal`).
    let signal = crate::process::shutdown_signal();
    let data = args.data.unwrap_or_else(default_data_dir);
    if let Some(warning) = prepare_data_dir(&data)? {
        tracing::warn!(data = %data.display(), "{warning}");
        eprintln!("warning: {warning}");
    }
    let db = data.join("exitplan.redb");
    let store = open_store(&db).with_context(|| format!("opening {}", db.display()))?;
    let token = load_or_create_token(&data)?;
    let sa_key = exitplan_apiserver::authn::SigningKey::load_or_create(&data)
        .context("preparing the service account signing key")?;
    let clock: SharedClock = Arc::new(SystemClock);
    let server = Server::builder()
        .store(store)
        .clock(clock.clone())
        .token(token.clone())
        .service_account_key(sa_key)
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
    // Controllers and nodes talk to the server in-process, on its clock.
    let running = if args.bare {
        println!("controllers: none (--bare)");
        None
    } else {
        let nodes: Vec<String> = (1..=args.nodes).map(|i| format!("node-{i}")).collect();
        let components = components();
        // In-process requests carry the token like any other client.
        let bearer = axum::http::HeaderValue::from_str(&format!("Bearer {token}"))
            .context("the token is not a valid header value")?;
        let service = tower::ServiceExt::map_request(
            server.router(),
            move |mut req: axum::http::Request<kube::client::Body>| {
                req.headers_mut()
                    .insert(axum::http::header::AUTHORIZATION, bearer.clone());
                req.headers_mut().insert(
                    axum::http::header::USER_AGENT,
                    axum::http::HeaderValue::from_static(crate::connect::USER_AGENT),
                );
                req
            },
        );
        let client = kube::Client::new(service, "default");
        let ctx = RuntimeContext::new(client, clock);
        // The controllers' metrics on the server's `/metrics`, as
        // kube-apiserver and kube-controller-manager would serve each their own.
        let metrics = ctx.metrics.clone();
        server.add_metrics(Arc::new(move |out: &mut String| metrics.encode_into(out)));
        let runtime = Runtime::start(
            ctx,
            RuntimeConfig {
                components: components.iter().map(|(c, _)| *c).collect(),
                nodes: nodes.clone(),
            },
        )
        .await;
        let names: Vec<&str> = components.iter().map(|(_, n)| *n).collect();
        tracing::info!(components = ?names, nodes = ?nodes, "controllers and simulated nodes running");
        println!("controllers: {}", names.join(", "));
        if nodes.is_empty() {
            println!("simulated nodes: none (--nodes 0)");
        } else {
            println!("simulated nodes: {}", nodes.join(", "));
        }
        Some(runtime)
    };
    println!(
        "try: kubectl --kubeconfig {} get ns",
        kubeconfig_path.display()
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = server.serve_tls(listener, tls, async move {
        let _ = stopped.await;
    });
    let mut serving = std::pin::pin!(serving);
    let early = tokio::select! {
        r = &mut serving => Some(r),
        () = signal => None,
    };
    // Components first (their watches and writes end), then the server.
    if let Some(runtime) = running {
        runtime.shutdown().await;
        tracing::info!("controllers and simulated nodes stopped");
    }
    let _ = stop.send(());
    match early {
        Some(r) => r,
        None => serving.await,
    }
    .context("serving HTTP")?;
    tracing::info!("stopped");
    Ok(ExitCode::SUCCESS)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "exitplan-up-{name}-{}-{}",
            std::process::id(),
            random_hex(4).expect("random")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn an_existing_data_directory_keeps_its_mode_and_is_warned_about() {
        let dir = scratch("existing");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let warning = prepare_data_dir(&dir).expect("prepare");
        assert_eq!(
            mode(&dir),
            0o755,
            "the mode of a directory exitplan did not create"
        );
        let warning = warning.expect("a warning");
        assert!(warning.contains("mode 0755"), "{warning}");
        assert!(warning.contains(&dir.display().to_string()), "{warning}");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        assert_eq!(prepare_data_dir(&dir).expect("prepare"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_new_data_directory_is_private() {
        let root = scratch("new");
        let dir = root.join("a/b");
        assert_eq!(prepare_data_dir(&dir).expect("prepare"), None);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.join("a")), 0o700, "parents it created too");
        let _ = std::fs::remove_dir_all(&root);
    }
}
