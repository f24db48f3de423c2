//! `exitplan responder`: the sample eviction responder, on the
//! `exitplan-responder` SDK.
//!
//! Watches the Evictions labelled for `--name` and, on each one where it is
//! Active, works for `--work` (reporting progress and
//! `expectedCompletionTime`, heartbeating every `--heartbeat`), then reports
//! completion. `--fail` stops heartbeating halfway: the controller interrupts
//! the responder 20 minutes after its last heartbeat.
//!
//! Connects with `--kubeconfig`, else `$KUBECONFIG`, else the kubeconfig
//! `exitplan up` writes by default (`<data>/kubeconfig`). HTTPS servers are
//! reached through rustls with the kubeconfig's CA (kube-rs's own TLS stacks
//! are not built into this binary).

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use exitplan_responder::Responder;
use exitplan_responder::sample::TimedWork;
use hyper::body::Incoming;
use hyper::{Request, Response, Uri};
use hyper_util::rt::TokioIo;
use kube::client::ConfigExt;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::input::InputError;

/// Arguments of `exitplan responder`.
#[derive(Debug, Args)]
pub struct ResponderArgs {
    /// The responder's name: the key pods list in spec.evictionResponders.
    #[arg(long, value_name = "NAME", default_value = "example.com/migrator")]
    pub name: String,
    /// How long the work on each eviction takes (5m, 90s, 1h30m).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub work: Duration,
    /// Stop heartbeating halfway instead of completing (the controller
    /// interrupts the responder 20 min after its last heartbeat).
    #[arg(long)]
    pub fail: bool,
    /// How long after its last report the responder heartbeats (20s..19m).
    #[arg(long, value_name = "DURATION", default_value = "3m", value_parser = parse_duration)]
    pub heartbeat: Duration,
    /// The kubeconfig. Default: $KUBECONFIG, else `exitplan up`'s <data>/kubeconfig.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// Watch only this namespace. Default: all namespaces.
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let d: jiff::SignedDuration = s
        .parse()
        .map_err(|e| format!("not a duration (try 5m, 90s, 1h30m): {e}"))?;
    Duration::try_from(d).map_err(|_| "must not be negative".to_owned())
}

/// Runs the sample responder until Ctrl-C or SIGTERM. Connection and watch
/// failures are reported and exit 1.
pub fn run(args: ResponderArgs) -> Result<ExitCode, InputError> {
    super::up::init_logging();
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
        .and_then(|rt| rt.block_on(respond(args)));
    Ok(result.unwrap_or_else(|e| {
        eprintln!("error: {e:#}");
        ExitCode::FAILURE
    }))
}

async fn respond(args: ResponderArgs) -> Result<ExitCode> {
    let client = client(args.kubeconfig.clone()).await?;
    let work = TimedWork {
        duration: args.work,
        fail: args.fail,
    };
    tracing::info!(
        responder = %args.name,
        work = ?args.work,
        fail = args.fail,
        "starting the sample responder"
    );
    let responder = Responder::new(client, &args.name, Arc::new(exitplan_clock::SystemClock))
        .namespace(args.namespace)
        .heartbeat_interval(args.heartbeat);
    tokio::select! {
        r = responder.run(move |eviction| work.run(eviction)) => {
            r.map_err(|e| anyhow!(e))?;
            Ok(ExitCode::SUCCESS)
        }
        () = super::up::shutdown_signal() => Ok(ExitCode::SUCCESS),
    }
}

/// The kubeconfig to use: `path`, else `$KUBECONFIG`, else `exitplan up`'s.
fn kubeconfig(path: Option<PathBuf>) -> Result<Kubeconfig> {
    if let Some(p) = path {
        return Kubeconfig::read_from(&p).with_context(|| format!("reading {}", p.display()));
    }
    if std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty()) {
        return Kubeconfig::from_env()
            .context("reading $KUBECONFIG")?
            .ok_or_else(|| anyhow!("$KUBECONFIG names no kubeconfig"));
    }
    let p = super::up::default_data_dir().join("kubeconfig");
    Kubeconfig::read_from(&p).with_context(|| {
        format!(
            "reading {} (start `exitplan up`, or pass --kubeconfig)",
            p.display()
        )
    })
}

/// A client for the kubeconfig's current context.
async fn client(path: Option<PathBuf>) -> Result<kube::Client> {
    let config =
        kube::Config::from_custom_kubeconfig(kubeconfig(path)?, &KubeConfigOptions::default())
            .await
            .context("loading the kubeconfig")?;
    if config.cluster_url.scheme_str() != Some("https") {
        return kube::Client::try_from(config).context("building the client");
    }
    let tls = TlsService::new(&config)?;
    let service = tower::ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer().context("kubeconfig credentials")?)
        .service(tls);
    Ok(kube::Client::new(service, config.default_namespace.clone()))
}

/// HTTPS to one API server: a rustls connection (trusting the kubeconfig's
/// CA) and an HTTP/1.1 exchange per request. Few, long requests (a watch,
/// a heartbeat every minutes) make pooling unnecessary.
#[derive(Clone)]
struct TlsService {
    connector: tokio_rustls::TlsConnector,
    server_name: rustls::pki_types::ServerName<'static>,
    authority: String,
}

impl TlsService {
    fn new(config: &kube::Config) -> Result<TlsService> {
        let host = config
            .cluster_url
            .host()
            .ok_or_else(|| anyhow!("the server URL {} has no host", config.cluster_url))?;
        let port = config.cluster_url.port_u16().unwrap_or(443);
        let mut roots = rustls::RootCertStore::empty();
        for der in config.root_cert.iter().flatten() {
            roots
                .add(rustls::pki_types::CertificateDer::from(der.clone()))
                .context("the kubeconfig's certificate-authority-data")?;
        }
        if roots.is_empty() {
            return Err(anyhow!(
                "the kubeconfig has no certificate-authority(-data) for {}",
                config.cluster_url
            ));
        }
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .context("TLS versions")?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let name = config
            .tls_server_name
            .clone()
            .unwrap_or_else(|| host.trim_matches(['[', ']']).to_owned());
        let server_name = rustls::pki_types::ServerName::try_from(name)
            .with_context(|| format!("TLS server name of {}", config.cluster_url))?;
        Ok(TlsService {
            connector: tokio_rustls::TlsConnector::from(Arc::new(tls)),
            server_name,
            authority: format!("{host}:{port}"),
        })
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl tower::Service<Request<kube::client::Body>> for TlsService {
    type Response = Response<Incoming>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Incoming>, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request<kube::client::Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            // HTTP/1.1 origin form: the path in the request line, the
            // authority in Host.
            let path = req
                .uri()
                .path_and_query()
                .map_or("/", |p| p.as_str())
                .to_owned();
            *req.uri_mut() = path.parse::<Uri>()?;
            req.headers_mut()
                .insert(hyper::header::HOST, this.authority.parse()?);
            let tcp = tokio::net::TcpStream::connect(&this.authority).await?;
            let stream = this
                .connector
                .connect(this.server_name.clone(), tcp)
                .await?;
            let (mut sender, conn) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!(error = %e, "connection ended");
                }
            });
            Ok(sender.send_request(req).await?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert!(parse_duration("-5m").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
