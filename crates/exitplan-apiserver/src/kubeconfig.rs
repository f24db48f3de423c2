//! The kubeconfig a local server hands to its clients: one cluster
//! (`server: http://<addr>`), one user with the bearer token, one context.

use std::path::Path;

/// Renders a kubeconfig for `server_url` and `token` (YAML, `current-context: exitplan`).
pub fn render(server_url: &str, token: &str, namespace: &str) -> String {
    format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: exitplan\n  cluster:\n    server: {server_url}\n\
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
        let k = render("http://127.0.0.1:6443", "abc", "default");
        assert!(k.contains("    server: http://127.0.0.1:6443\n"));
        assert!(k.contains("    token: abc\n"));
        assert!(k.contains("current-context: exitplan\n"));
    }
}
