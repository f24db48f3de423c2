//! Bearer-token authentication. Health endpoints are anonymous, as
//! upstream's default `system:public-info-viewer` allows; every other
//! request without the token gets a 401 `Status`.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

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

/// Whether `headers` carry `Authorization: Bearer <token>` (the first
/// `Authorization` header, as Go's `Header.Get`).
pub fn authorized(headers: &HeaderMap, token: Option<&str>) -> bool {
    let Some(token) = token else {
        return true;
    };
    let Some(given) = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token)
    else {
        return false;
    };
    constant_time_eq(given.as_bytes(), token.as_bytes())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_and_public_paths() {
        let mut h = HeaderMap::new();
        assert!(!authorized(&h, Some("s3cret")));
        assert!(authorized(&h, None));
        h.insert(AUTHORIZATION, "Bearer s3cret".parse().expect("header"));
        assert!(authorized(&h, Some("s3cret")));
        assert!(!authorized(&h, Some("other")));
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
