//! A running `exitplan up` for the CLI tests of commands that talk to an API
//! server (`controller`, `drain`, `responder`, `up` itself): started on a
//! free port in a temporary data directory, with raw HTTPS requests
//! authenticated by its token.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A fresh temporary directory for `tag`.
pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("exitplan-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `exitplan up` on a free port.
pub struct Up {
    child: Option<Child>,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The kubeconfig it wrote.
    pub kubeconfig: PathBuf,
    token: String,
    ca: String,
    dir: PathBuf,
}

impl Up {
    /// Starts the bare API server: `exitplan up --data <dir>/data --listen
    /// 127.0.0.1:0 --bare` (no controllers, no nodes).
    pub fn start(dir: &Path) -> Up {
        Up::start_with(dir, &["--bare"]).0
    }

    /// Starts `exitplan up --data <dir>/data --listen 127.0.0.1:0 <extra>`;
    /// also returns what it printed between the kubeconfig line and the
    /// `try: kubectl` line (what runs next to the server).
    pub fn start_with(dir: &Path, extra: &[&str]) -> (Up, Vec<String>) {
        let data = dir.join("data");
        let kubeconfig = data.join("kubeconfig");
        let mut child = Command::new(env!("CARGO_BIN_EXE_exitplan"))
            .args(["up", "--listen", "127.0.0.1:0", "--data"])
            .arg(&data)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn exitplan up");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next().expect("a line").expect("utf-8");
        let addr = first
            .strip_prefix("exitplan API server listening on https://")
            .unwrap_or_else(|| panic!("unexpected first line: {first}"))
            .to_owned();
        let second = lines.next().expect("a line").expect("utf-8");
        assert_eq!(second, format!("kubeconfig: {}", kubeconfig.display()));
        // Read up to the last line: the server must not write to a closed pipe.
        let mut running = Vec::new();
        loop {
            let line = lines.next().expect("a line").expect("utf-8");
            if line.starts_with("try: kubectl") {
                break;
            }
            running.push(line);
        }
        let token = std::fs::read_to_string(data.join("token"))
            .expect("token")
            .trim()
            .to_owned();
        let ca = std::fs::read_to_string(data.join("ca.crt")).expect("ca");
        let up = Up {
            child: Some(child),
            addr,
            kubeconfig,
            token,
            ca,
            dir: dir.to_owned(),
        };
        (up, running)
    }

    /// An authenticated request; the status code and the JSON body.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        use rustls::pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls::pki_types::CertificateDer::pem_slice_iter(self.ca.as_bytes()) {
            roots.add(cert.expect("ca pem")).expect("ca");
        }
        let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").expect("name");
        let mut conn =
            rustls::ClientConnection::new(std::sync::Arc::new(config), name).expect("tls client");
        let mut sock = TcpStream::connect(&self.addr).expect("connect");
        let mut s = rustls::Stream::new(&mut conn, &mut sock);
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            self.token,
            body.len()
        )
        .expect("write");
        let mut resp = Vec::new();
        let _ = s.read_to_end(&mut resp);
        let resp = String::from_utf8_lossy(&resp).into_owned();
        let code = resp
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {resp:?}"));
        let (head, rest) = resp.split_once("\r\n\r\n").unwrap_or((&resp, ""));
        let text = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            dechunk(rest)
        } else {
            rest.to_owned()
        };
        let json = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
        (code, json)
    }

    /// GET `path` (200 expected unless `None` is fine: 404 gives `None`).
    pub fn get(&self, path: &str) -> Option<serde_json::Value> {
        let (code, body) = self.request("GET", path, "application/json", None);
        match code {
            200 => Some(body),
            404 => None,
            _ => panic!("GET {path}: {code} {body}"),
        }
    }

    /// POST `obj` to `path`, expecting 201.
    pub fn create(&self, path: &str, obj: serde_json::Value) -> serde_json::Value {
        let (code, body) = self.request("POST", path, "application/json", Some(&obj));
        assert_eq!(code, 201, "POST {path}: {body}");
        body
    }

    /// A merge patch of `path`, expecting 200.
    pub fn merge_patch(&self, path: &str, patch: serde_json::Value) -> serde_json::Value {
        let (code, body) =
            self.request("PATCH", path, "application/merge-patch+json", Some(&patch));
        assert_eq!(code, 200, "PATCH {path}: {body}");
        body
    }

    /// Stops the server (SIGTERM) and removes the directory.
    pub fn stop(mut self) {
        if let Some(child) = self.child.take() {
            sigterm(child);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for Up {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn dechunk(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || tail.len() < n {
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].trim_start_matches("\r\n");
    }
    out
}

/// Sends SIGTERM to `child` and waits for it; asserts it exited 0.
pub fn sigterm(mut child: Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let exit = child.wait().expect("wait");
    assert!(exit.success(), "exits 0 on SIGTERM: {exit:?}");
}

/// A plain HTTP GET on `addr`: the status code, the headers and the body.
pub fn http_get(addr: &str, path: &str) -> (u16, String, String) {
    let mut sock = TcpStream::connect(addr).expect("connect");
    write!(
        sock,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut resp = String::new();
    let _ = sock.read_to_string(&mut resp);
    let code = resp
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {resp:?}"));
    let (head, body) = resp.split_once("\r\n\r\n").unwrap_or((&resp, ""));
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (code, head.to_owned(), body)
}

/// Polls `check` every 100 ms until it returns `Some`, for at most `limit`
/// (real time: these tests run real processes).
pub fn eventually<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for: {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
