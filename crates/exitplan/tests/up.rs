//! `exitplan up` end to end: starts on a free port, writes a private
//! kubeconfig (CA and token), serves HTTPS, authenticates, restarts with the
//! same token and CA, and stops cleanly on SIGTERM.

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

/// Starts `exitplan up`; returns the child and the server address.
fn start(data: &Path, kubeconfig: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_exitplan"))
        .args(["up", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn exitplan up");
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
    assert_eq!(
        third,
        format!("try: kubectl --kubeconfig {} get ns", kubeconfig.display())
    );
    (child, url)
}

/// A raw HTTP/1.1 GET over TLS trusting `ca_pem`: the status code and the response.
fn get(addr: &str, ca_pem: &str, path: &str, token: Option<&str>) -> (u16, String) {
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
    let mut sock = TcpStream::connect(addr).expect("connect");
    let mut s = rustls::Stream::new(&mut conn, &mut sock);
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
    )
    .expect("write");
    let mut resp = Vec::new();
    // The server may close without close_notify; keep what was read.
    let _ = s.read_to_end(&mut resp);
    let resp = String::from_utf8_lossy(&resp).into_owned();
    let code = resp
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {resp:?}"));
    (code, resp)
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
    let (code, _) = get(&addr, &ca, "/api/v1/namespaces/kube-system", Some(&token));
    assert_eq!(code, 200);
    stop(child);
    let _ = std::fs::remove_dir_all(&dir);
}
