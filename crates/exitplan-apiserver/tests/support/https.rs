//! The real kubectl against the server over HTTPS with the bearer token:
//! one cluster per test, shared by the kubectl test files.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use exitplan_apiserver::clock::SystemClock;
use exitplan_apiserver::kubeconfig;
use exitplan_apiserver::server::Server;
use exitplan_apiserver::storage::Store;
use exitplan_apiserver::tls::{LocalCa, local_names};
use serde_json::Value;

/// The bearer token of every kubectl test server.
pub const TOKEN: &str = "kubectl-test-token";

/// A server over HTTPS with a bearer token, a kubeconfig for it, and
/// the real kubectl (on PATH) run against it.
pub struct Cluster {
    /// The server.
    pub server: Server,
    /// Its data, kubeconfig and manifests.
    pub dir: PathBuf,
    /// The kubeconfig kubectl uses.
    pub kubeconfig: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    serving: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Cluster {
    /// Starts a server on a durable store in a fresh directory.
    pub async fn start(tag: &str) -> Cluster {
        let dir =
            std::env::temp_dir().join(format!("exitplan-kubectl-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let server = Server::builder()
            .store(Store::open(&dir.join("db.redb")).expect("store"))
            .clock(Arc::new(SystemClock))
            .token(TOKEN)
            .build()
            .await
            .expect("server");
        let ca = LocalCa::generate(&local_names(None)).expect("ca");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let kubeconfig = dir.join("kubeconfig");
        kubeconfig::write_private(
            &kubeconfig,
            &kubeconfig::render(
                &format!("https://{addr}"),
                TOKEN,
                "default",
                Some(&ca.ca_pem),
            ),
        )
        .expect("kubeconfig");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let config = ca.server_config().expect("tls");
        let s = server.clone();
        let serving = tokio::spawn(async move {
            s.serve_tls(listener, config, async {
                let _ = rx.await;
            })
            .await
        });
        Cluster {
            server,
            dir,
            kubeconfig,
            stop: Some(tx),
            serving: Some(serving),
        }
    }

    /// Runs kubectl with `args` (and `stdin`), off the async threads.
    pub async fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.kubectl_with_env(args, stdin, &[]).await
    }

    /// kubectl that must succeed, with extra environment variables
    /// (`KUBE_EDITOR` for `kubectl edit`); its stdout.
    pub async fn ok_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> String {
        succeeded(args, self.kubectl_with_env(args, None, env).await)
    }

    /// Runs kubectl with `args`, `stdin` and extra environment variables.
    pub async fn kubectl_with_env(
        &self,
        args: &[&str],
        stdin: Option<&str>,
        env: &[(&str, &str)],
    ) -> Output {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .envs(env.iter().copied())
            .env("HOME", &self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let stdin = stdin.map(str::to_owned);
        tokio::task::spawn_blocking(move || {
            let mut child = cmd.spawn().expect("kubectl on PATH");
            if let Some(text) = stdin {
                use std::io::Write;
                child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(text.as_bytes())
                    .expect("write stdin");
            } else {
                drop(child.stdin.take());
            }
            child.wait_with_output().expect("kubectl runs")
        })
        .await
        .expect("join")
    }

    /// kubectl that must succeed; its stdout.
    pub async fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        succeeded(args, self.kubectl(args, stdin).await)
    }

    /// Writes `text` to `name` in the cluster's directory; its path.
    pub fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, text).expect("manifest");
        path.to_string_lossy().into_owned()
    }

    /// kubectl that must fail with exit code 1; its stderr.
    pub async fn fails(&self, args: &[&str]) -> String {
        let out = self.kubectl(args, None).await;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(1),
            "kubectl {args:?}: {stderr}\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        stderr
    }

    pub async fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args, None).await).expect("kubectl printed JSON")
    }

    /// Stops the server and removes its directory.
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.serving.take() {
            h.await.expect("join").expect("served");
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The stdout of a kubectl run that must have succeeded.
fn succeeded(args: &[&str], out: Output) -> String {
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
