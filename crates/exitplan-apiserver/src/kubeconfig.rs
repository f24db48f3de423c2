//! The kubeconfig a local server hands to its clients: one cluster
//! (`server: http://<addr>`), one user with the bearer token, one context.

use std::path::{Path, PathBuf};

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

/// Writes `contents` to `path` readable only by the owner (mode 0600 on
/// Unix), atomically: the bytes go to a new temporary file in the same
/// directory, which is then renamed over `path`.
///
/// The temporary file gets a random name and is created exclusively
/// (`O_CREAT|O_EXCL`, which never follows a symlink), so nothing planted
/// beforehand — a symlink or a file at a predictable `<path>.tmp` — can
/// redirect the secret elsewhere; the rename replaces `path` itself, never
/// the target of a symlink at `path`.
pub fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir
        }
        None => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("{} names no file", path.display())))?;
    let (tmp, file) = create_temporary(dir, &name.to_string_lossy())?;
    let written = write_and_sync(file, contents).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        // Best effort: the error that matters is the one returned.
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A new, exclusively created, owner-only file `.<name>.<random>.tmp` in `dir`.
fn create_temporary(dir: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut last = None;
    for _ in 0..8 {
        let suffix =
            crate::rest::meta::random_hex(8).map_err(|e| std::io::Error::other(e.to_string()))?;
        let tmp = dir.join(format!(".{name}.{suffix}.tmp"));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free temporary file name")))
}

fn write_and_sync(mut file: std::fs::File, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    {
        // The umask may have cleared bits of 0600, never added any; this
        // makes the mode exact.
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(contents.as_bytes())?;
    file.sync_all()
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

    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_cannot_redirect_the_secret() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!(
            "exitplan-write-private-{}-{}",
            std::process::id(),
            crate::rest::meta::random_hex(4).expect("random")
        ));
        std::fs::create_dir_all(&dir).expect("dir");
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep me").expect("victim");
        let path = dir.join("kubeconfig");
        // The names earlier builds wrote through, and the file itself.
        for planted in ["kubeconfig.tmp", "kubeconfig"] {
            std::os::unix::fs::symlink(&victim, dir.join(planted)).expect("symlink");
        }
        write_private(&path, "token: secret\n").expect("write");
        assert_eq!(
            std::fs::read_to_string(&victim).expect("victim"),
            "keep me",
            "the symlinks' target is untouched"
        );
        let meta = std::fs::symlink_metadata(&path).expect("written");
        assert!(
            meta.file_type().is_file(),
            "the symlink at the path was replaced"
        );
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "token: secret\n"
        );
        let left: Vec<_> = std::fs::read_dir(&dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp") && n.starts_with('.'))
            .collect();
        assert!(left.is_empty(), "no temporary file is left: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
