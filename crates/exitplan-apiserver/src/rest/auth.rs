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

/// Whether `headers` carry `Authorization: Bearer <token>`.
pub fn authorized(headers: &HeaderMap, token: Option<&str>) -> bool {
    let Some(token) = token else {
        return true;
    };
    let Some(given) = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    constant_time_eq(given.trim().as_bytes(), token.as_bytes())
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
}
