//! `exitplan up` end to end: starts on a free port, writes a private
//! kubeconfig and token, authenticates, restarts with the same token, and
//! stops cleanly on SIGTERM.

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
        .strip_prefix("exitplan API server listening on http://")
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

/// A raw HTTP/1.1 GET: the status code and body.
fn get(addr: &str, path: &str, token: Option<&str>) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
    )
    .expect("write");
    let mut resp = String::new();
    s.read_to_string(&mut resp).expect("read");
    let code = resp
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("status code");
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
        config.contains(&format!("server: http://{addr}")),
        "{config}"
    );
    assert!(config.contains(&format!("token: {token}")));

    assert_eq!(get(&addr, "/healthz", None).0, 200);
    let (code, body) = get(&addr, "/api/v1/namespaces", None);
    assert_eq!(code, 401);
    assert!(body.contains("\"reason\":\"Unauthorized\""), "{body}");
    let (code, body) = get(&addr, "/api/v1/namespaces/default", Some(&token));
    assert_eq!(code, 200, "{body}");
    stop(child);

    // A restart keeps the token and the data.
    let (child, addr) = start(&data, &kubeconfig);
    let again = std::fs::read_to_string(data.join("token")).expect("token");
    assert_eq!(again.trim(), token);
    assert_eq!(
        get(&addr, "/api/v1/namespaces/kube-system", Some(&token)).0,
        200
    );
    stop(child);
    let _ = std::fs::remove_dir_all(&dir);
}
