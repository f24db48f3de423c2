//! `listen()`: the server on a real `127.0.0.1` port over HTTPS, with a
//! private CA, a bearer token and a kubeconfig in a private temporary
//! directory — for kubectl and other processes. Like `exitplan up`'s
//! listener, made per test environment and removed with it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use exitplan_apiserver::kubeconfig;
use exitplan_apiserver::rest::meta::random_hex;
use exitplan_apiserver::server::Server;
use exitplan_apiserver::tls::{LocalCa, local_names};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::Error;

/// A random bearer token for a listening server.
pub(crate) fn new_token() -> Result<String, Error> {
    random_hex(32).map_err(|e| Error::Token(e.to_string()))
}

/// The server being served on a port, and the files its clients use.
#[derive(Debug)]
pub(crate) struct Listening {
    /// The bound address.
    pub(crate) addr: SocketAddr,
    /// `https://127.0.0.1:<port>`.
    pub(crate) url: String,
    /// The kubeconfig (in `dir`).
    pub(crate) kubeconfig: PathBuf,
    /// The private directory holding the kubeconfig; removed on drop.
    dir: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    serving: Option<JoinHandle<std::io::Result<()>>>,
}

impl Listening {
    /// Binds `127.0.0.1:0`, makes the TLS material and the kubeconfig (with
    /// `token`, which the server must require) and starts serving.
    pub(crate) async fn start(server: &Server, token: &str) -> Result<Listening, Error> {
        let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(Error::Listen)?;
        let addr = listener.local_addr().map_err(Error::Listen)?;
        let ca = LocalCa::generate(&local_names(Some(addr.ip())))?;
        let tls = ca.server_config()?;
        let dir = private_dir()?;
        let url = format!("https://{addr}");
        let kubeconfig = dir.join("kubeconfig");
        kubeconfig::write_private(
            &kubeconfig,
            &kubeconfig::render(&url, token, "default", Some(&ca.ca_pem)),
        )
        .map_err(|source| Error::Kubeconfig {
            path: kubeconfig.clone(),
            source,
        })?;
        let (stop, stopped) = oneshot::channel::<()>();
        let server = server.clone();
        let serving = tokio::spawn(async move {
            server
                .serve_tls(listener, tls, async move {
                    let _ = stopped.await;
                })
                .await
        });
        Ok(Listening {
            addr,
            url,
            kubeconfig,
            dir,
            stop: Some(stop),
            serving: Some(serving),
        })
    }

    /// Stops accepting, lets in-flight requests finish and waits for the
    /// listener to close.
    pub(crate) async fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(serving) = self.serving.take() {
            match serving.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "the test server's listener failed"),
                Err(e) => tracing::warn!(error = %e, "the test server's listener task failed"),
            }
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        remove_dir(&self.dir);
    }
}

/// A new directory only the owner can enter, under the system's temporary
/// directory.
fn private_dir() -> Result<PathBuf, Error> {
    let suffix = random_hex(8).map_err(|e| Error::Token(e.to_string()))?;
    let dir =
        std::env::temp_dir().join(format!("exitplan-testing-{}-{suffix}", std::process::id()));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(&dir).map_err(|source| Error::Kubeconfig {
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// Removes the directory; a failure is only logged (nothing to do about it
/// in a destructor).
fn remove_dir(dir: &Path) {
    if let Err(e) = std::fs::remove_dir_all(dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(dir = %dir.display(), error = %e, "removing the test server's kubeconfig directory");
    }
}
