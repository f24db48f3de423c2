//! The kubeconfig a local server hands to its clients: one cluster
//! (`server: http://<addr>`), one user with the bearer token, one context.

use std::path::Path;

/// Standard base64 (with padding), for `certificate-authority-data`.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Renders a kubeconfig for `server_url` and `token` (YAML, `current-context:
/// exitplan`); `ca_pem` is the CA to trust for an `https://` server.
pub fn render(server_url: &str, token: &str, namespace: &str, ca_pem: Option<&str>) -> String {
    let ca = ca_pem
        .map(|pem| {
            format!(
                "    certificate-authority-data: {}\n",
                base64(pem.as_bytes())
            )
        })
        .unwrap_or_default();
    format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: exitplan\n  cluster:\n    server: {server_url}\n{ca}\
         users:\n\
         - name: exitplan\n  user:\n    token: {token}\n\
         contexts:\n\
         - name: exitplan\n  context:\n    cluster: exitplan\n    user: exitplan\n    namespace: {namespace}\n\
         current-context: exitplan\n\
         preferences: {{}}\n"
    )
}

/// Writes `contents` to `path` readable only by the owner (mode 0600 on Unix).
pub fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("tmp");
    {
        use std::io::Write;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut f = options.open(&tmp)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        f.write_all(contents.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_server_and_token() {
        let k = render("http://127.0.0.1:6443", "abc", "default", None);
        assert!(!k.contains("certificate-authority"));
        let k = render("https://127.0.0.1:6443", "abc", "default", Some("PEM"));
        assert!(k.contains("    certificate-authority-data: UEVN\n"));
        assert!(k.contains("    server: https://127.0.0.1:6443\n"));
        assert!(k.contains("    token: abc\n"));
        assert!(k.contains("current-context: exitplan\n"));
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }
}
