//! The bearer token of a request and the paths served without one.
//! Health endpoints are anonymous, as upstream's default
//! `system:public-info-viewer` allows; every other request is
//! authenticated by [`crate::authn`].

/// Paths served without authentication.
pub fn is_public(path: &str) -> bool {
    ["/healthz", "/livez", "/readyz"]
        .iter()
        .any(|p| path == *p || path.strip_prefix(p).is_some_and(|r| r.starts_with('/')))
}

/// The bearer token of an `Authorization` header, read as upstream's
/// bearer-token authenticator does (`request/bearertoken`): the value
/// trimmed, split at single spaces, the scheme `bearer` in any case, the
/// token the second part (anything after it is ignored); `None` when there
/// is no non-empty token.
pub fn bearer_token(value: &str) -> Option<&str> {
    let mut parts = value.trim().splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_paths() {
        assert!(is_public("/healthz"));
        assert!(is_public("/readyz/ping"));
        assert!(!is_public("/healthzz"));
        assert!(!is_public("/api/v1/pods"));
    }

    /// Upstream's `bearertoken_test.go` cases: the token read, or none.
    #[test]
    fn bearer_token_as_upstream_reads_it() {
        let cases: &[(&str, Option<&str>)] = &[
            ("Bearer token", Some("token")),
            ("bearer token", Some("token")),
            ("BEARER token", Some("token")),
            ("Bearer token a", Some("token")),
            ("Bearer token a b c", Some("token")),
            ("Bearer token   a", Some("token")),
            ("  Bearer token  ", Some("token")),
            ("", None),
            ("Bearer", None),
            ("Bearer ", None),
            ("Bearer  token", None),
            ("bear token", None),
            ("Bearer: token", None),
            ("Basic 123", None),
        ];
        for (header, want) in cases {
            assert_eq!(bearer_token(header), *want, "{header:?}");
        }
    }
}
