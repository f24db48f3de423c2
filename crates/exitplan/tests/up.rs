//! `exitplan up` end to end: starts on a free port, writes a private
//! kubeconfig (CA and token), serves HTTPS, authenticates, restarts with the
//! same token and CA, and stops cleanly on SIGTERM; killed with SIGKILL while
//! clients write, it comes back with every acknowledged object.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("exitplan-up-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Spawns `exitplan up --nodes NODES` on a free port (`None`: `--bare`),
/// stdout piped.
fn spawn(data: &Path, kubeconfig: &Path, nodes: Option<usize>) -> Child {
    let shape = match nodes {
        Some(n) => vec!["--nodes".to_owned(), n.to_string()],
        None => vec!["--bare".to_owned()],
    };
    Command::new(env!("CARGO_BIN_EXE_exitplan"))
        .arg("up")
        .args(shape)
        .args(["--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn exitplan up")
}

/// Starts `exitplan up` as the bare API server (`--bare`: nothing writes
/// but the test); returns the child and the server address.
fn start(data: &Path, kubeconfig: &Path) -> (Child, String) {
    let mut child = spawn(data, kubeconfig, None);
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a line").expect("utf-8");
    let url = first
        .strip_prefix("exitplan API server listening on https://")
        .unwrap_or_else(|| panic!("unexpected first line: {first}"))
        .to_owned();
    let second = lines.next().expect("a line").expect("utf-8");
    assert_eq!(second, format!("kubeconfig: {}", kubeconfig.display()));
    let third = lines.next().expect("a line").expect("utf-8");
    assert_eq!(third, "controllers: none (--bare)");
    let fourth = lines.next().expect("a line").expect("utf-8");
    assert_eq!(
        fourth,
        format!("try: kubectl --kubeconfig {} get ns", kubeconfig.display())
    );
    (child, url)
}

/// A raw HTTP/1.1 GET over TLS trusting `ca_pem`: the status code and the response.
fn get(addr: &str, ca_pem: &str, path: &str, token: Option<&str>) -> (u16, String) {
    request(addr, ca_pem, "GET", path, token, None).expect("GET")
}

/// A raw HTTP/1.1 request over TLS trusting `ca_pem` (one connection each):
/// the status code and the response, or an error when the server is gone.
fn request(
    addr: &str,
    ca_pem: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> std::io::Result<(u16, String)> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
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
    let mut sock = TcpStream::connect(addr)?;
    let mut s = rustls::Stream::new(&mut conn, &mut sock);
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let body = body.unwrap_or_default();
    let content = if body.is_empty() {
        String::new()
    } else {
        format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        )
    };
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}{content}Connection: close\r\n\r\n{body}"
    )?;
    let mut resp = Vec::new();
    // The server may close without close_notify; keep what was read.
    let _ = s.read_to_end(&mut resp);
    let resp = String::from_utf8_lossy(&resp).into_owned();
    let code = resp
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line in {resp:?}")))?;
    Ok((code, resp))
}

/// The resourceVersion in a JSON response.
fn resource_version(resp: &str) -> u64 {
    let body = resp.split("\r\n\r\n").nth(1).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(body.trim()).unwrap_or_else(|e| {
        // Chunked bodies: the JSON is between the chunk-size lines.
        let joined: String = body.lines().filter(|l| l.starts_with('{')).collect();
        serde_json::from_str(&joined).unwrap_or_else(|_| panic!("not JSON ({e}): {resp}"))
    });
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {resp}"))
}

fn stop(mut child: Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let exit = child.wait().expect("wait");
    assert!(exit.success(), "exits 0 on SIGTERM: {exit:?}");
}

#[cfg(unix)]
#[test]
fn up_serves_with_a_private_kubeconfig_and_stops_on_sigterm() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("serve");
    let data = dir.join("data");
    let kubeconfig = dir.join("kube/config");
    let (child, addr) = start(&data, &kubeconfig);
    let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    assert_eq!(mode(&kubeconfig), 0o600);
    assert_eq!(mode(&data.join("token")), 0o600);
    let token = std::fs::read_to_string(data.join("token")).expect("token");
    let token = token.trim().to_owned();
    assert_eq!(token.len(), 64);
    let config = std::fs::read_to_string(&kubeconfig).expect("kubeconfig");
    assert!(
        config.contains(&format!("server: https://{addr}")),
        "{config}"
    );
    assert!(config.contains(&format!("token: {token}")));
    assert!(config.contains("certificate-authority-data: "));
    assert_eq!(mode(&data.join("server.key")), 0o600);
    assert_eq!(mode(&data.join("sa.key")), 0o600);
    let sa_key = std::fs::read_to_string(data.join("sa.key")).expect("sa.key");
    let ca = std::fs::read_to_string(data.join("ca.crt")).expect("ca");

    assert_eq!(get(&addr, &ca, "/healthz", None).0, 200);
    let (code, body) = get(&addr, &ca, "/api/v1/namespaces", None);
    assert_eq!(code, 401);
    assert!(body.contains("\"reason\":\"Unauthorized\""), "{body}");
    let (code, body) = get(&addr, &ca, "/api/v1/namespaces/default", Some(&token));
    assert_eq!(code, 200, "{body}");
    stop(child);

    // A restart keeps the token, the CA and the data.
    let (child, addr) = start(&data, &kubeconfig);
    let again = std::fs::read_to_string(data.join("token")).expect("token");
    assert_eq!(again.trim(), token);
    let ca_again = std::fs::read_to_string(data.join("ca.crt")).expect("ca");
    assert_eq!(ca_again, ca, "the CA is kept");
    let sa_key_again = std::fs::read_to_string(data.join("sa.key")).expect("sa.key");
    assert!(sa_key_again == sa_key, "the service account key is kept");
    let (code, _) = get(&addr, &ca, "/api/v1/namespaces/kube-system", Some(&token));
    assert_eq!(code, 200);
    stop(child);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A SIGTERM sent the moment `up` says it listens (while its controllers and
/// nodes are still starting) stops it cleanly: the handler is installed
/// before anything reports ready, so the signal's default action (killed,
/// exit by signal 15) never applies.
#[cfg(unix)]
#[test]
fn sigterm_right_after_listening_stops_cleanly() {
    let dir = temp_dir("early-term");
    let mut child = spawn(&dir.join("data"), &dir.join("kubeconfig"), Some(3));
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a line").expect("utf-8");
    assert!(
        first.starts_with("exitplan API server listening on "),
        "{first}"
    );
    stop(child);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writers create pods as fast as they can; the server is SIGKILLed mid-stream.
/// After a restart every acknowledged (201) pod is there with the
/// resourceVersion it was acknowledged with, and the revision sequence goes on
/// above every acknowledged one.
#[cfg(unix)]
#[test]
fn up_killed_with_sigkill_keeps_every_acknowledged_write() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    const WRITERS: usize = 4;
    const KILL_AFTER: usize = 150;
    let dir = temp_dir("crash");
    let data = dir.join("data");
    let kubeconfig = dir.join("kubeconfig");
    let (mut child, addr) = start(&data, &kubeconfig);
    let token = std::fs::read_to_string(data.join("token")).expect("token");
    let token = token.trim().to_owned();
    let ca = std::fs::read_to_string(data.join("ca.crt")).expect("ca");

    let acked: Arc<Mutex<Vec<(String, u64)>>> = Arc::default();
    let stop_writing = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (acked, stop_writing) = (acked.clone(), stop_writing.clone());
            let (addr, ca, token) = (addr.clone(), ca.clone(), token.clone());
            std::thread::spawn(move || {
                let mut last = 0;
                for i in 0.. {
                    if stop_writing.load(Ordering::Relaxed) {
                        break;
                    }
                    let name = format!("w{w}-{i}");
                    let body = format!(
                        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}"}},"spec":{{"containers":[{{"name":"c","image":"i"}}]}}}}"#
                    );
                    let path = "/api/v1/namespaces/default/pods";
                    match request(&addr, &ca, "POST", path, Some(&token), Some(&body)) {
                        Ok((201, resp)) => {
                            let rv = resource_version(&resp);
                            assert!(rv > last, "one client's acknowledged revisions increase");
                            last = rv;
                            acked.lock().expect("lock").push((name, rv));
                        }
                        // The server died mid-request: not acknowledged.
                        Ok(_) | Err(_) => break,
                    }
                }
            })
        })
        .collect();
    while acked.lock().expect("lock").len() < KILL_AFTER {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    stop_writing.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().expect("writer");
    }
    let acked = acked.lock().expect("lock").clone();
    assert!(acked.len() >= KILL_AFTER);

    let (child, addr) = start(&data, &kubeconfig);
    for (name, rv) in &acked {
        let (code, resp) = get(
            &addr,
            &ca,
            &format!("/api/v1/namespaces/default/pods/{name}"),
            Some(&token),
        );
        assert_eq!(code, 200, "acknowledged pod {name} survived: {resp}");
        assert_eq!(resource_version(&resp), *rv, "{name} as acknowledged");
    }
    let highest = acked.iter().map(|(_, rv)| *rv).max().unwrap_or(0);
    let body = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"after-restart"},"spec":{"containers":[{"name":"c","image":"i"}]}}"#;
    let (code, resp) = request(
        &addr,
        &ca,
        "POST",
        "/api/v1/namespaces/default/pods",
        Some(&token),
        Some(body),
    )
    .expect("create after restart");
    assert_eq!(code, 201, "{resp}");
    assert!(
        resource_version(&resp) > highest,
        "the revision sequence continues above every acknowledged write"
    );
    stop(child);
    let _ = std::fs::remove_dir_all(&dir);
}
