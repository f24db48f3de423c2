//! The authenticator chain run on every request (upstream's union of
//! token authenticators behind `bearertoken.Authenticator`): the
//! kubeconfig's admin token (a static token, audience-agnostic), then
//! service account JWTs signed by the server's key (`pkg/serviceaccount/
//! jwt.go`: issuer, signature, audiences, then [`super::claims::validate`]).
//! Verified tokens are cached by their SHA-256 until they expire, so a
//! request pays one hash and two map lookups, not an ECDSA verification;
//! the service account and bound objects are still looked up on every
//! request, so deleting them revokes the token at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use exitplan_authz::{UserInfo, groups};
use serde::Deserialize;

use super::claims::{self, Claims, ISSUER, ObjectKind, ObjectState, Objects};
use super::jwt::{SigningKey, VerifyError, base64url_decode};
use crate::rest::auth::bearer_token;
use crate::rest::errors::{ApiError, unauthorized};
use crate::rest::state::State;
use crate::storage::Store;

/// The admin user of the kubeconfig's token (kubeadm's and kind's admin).
pub const ADMIN_USER: &str = "kubernetes-admin";

/// The error of a bearer token no authenticator recognizes
/// (`bearertoken`'s `invalidToken`).
pub const INVALID_TOKEN: &str = "invalid bearer token";

/// Verified tokens kept at most (the cache is pruned, then cleared, beyond).
const CACHE_CAPACITY: usize = 4096;

/// A successful authentication (upstream's `authenticator.Response`).
#[derive(Clone, Debug, PartialEq)]
pub struct Authenticated {
    /// Who the token says the caller is.
    pub user: Arc<UserInfo>,
    /// The audiences the token is valid for among those asked for.
    pub audiences: Vec<String>,
}

/// A token whose signature and issuer were verified.
struct Verified {
    claims: Claims,
    /// The user, made at the first successful validation.
    user: OnceLock<Arc<UserInfo>>,
}

/// Authenticates bearer tokens: the admin token and service account JWTs.
pub struct Authenticator {
    key: SigningKey,
    issuer: String,
    audiences: Vec<String>,
    admin: Arc<UserInfo>,
    cache: Mutex<HashMap<[u8; 32], Arc<Verified>>>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("key", &self.key)
            .field("issuer", &self.issuer)
            .field("audiences", &self.audiences)
            .finish_non_exhaustive()
    }
}

/// The admin identity: [`ADMIN_USER`] in `system:masters` and
/// `system:authenticated`.
pub fn admin_user() -> UserInfo {
    UserInfo {
        name: ADMIN_USER.to_owned(),
        groups: vec![
            groups::SYSTEM_MASTERS.to_owned(),
            groups::AUTHENTICATED.to_owned(),
        ],
        ..UserInfo::default()
    }
}

impl Authenticator {
    /// An authenticator for tokens signed with `key`, issued by [`ISSUER`]
    /// for the server's one audience (the issuer).
    pub fn new(key: SigningKey) -> Authenticator {
        Authenticator {
            key,
            issuer: ISSUER.to_owned(),
            audiences: vec![ISSUER.to_owned()],
            admin: Arc::new(admin_user()),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The signing key (TokenRequest signs with it).
    pub fn key(&self) -> &SigningKey {
        &self.key
    }

    /// The issuer put in and required of tokens.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The server's API audiences (what tokens default to and must have).
    pub fn audiences(&self) -> &[String] {
        &self.audiences
    }

    /// The user of a request (upstream's `WithAuthentication`): the user of
    /// its bearer token, or 401 `Unauthorized` with nothing else said.
    /// Without a token, a server with no admin token (`State.token` is
    /// `None`: in-process clients) treats the caller as the admin.
    pub fn authenticate_request(
        &self,
        state: &State,
        headers: &HeaderMap,
    ) -> Result<Arc<UserInfo>, ApiError> {
        let bearer = headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_token);
        match bearer {
            None if state.token.is_none() => Ok(self.admin.clone()),
            None => Err(unauthorized()),
            Some(token) => match self.authenticate_token(state, token, None) {
                Ok(a) => Ok(a.user),
                Err(why) => {
                    tracing::debug!(%why, "unable to authenticate the request");
                    Err(unauthorized())
                }
            },
        }
    }

    /// Authenticates `token` for `requested` audiences (default: the
    /// server's); the error is what TokenReview puts in `status.error`.
    pub fn authenticate_token(
        &self,
        state: &State,
        token: &str,
        requested: Option<&[String]>,
    ) -> Result<Authenticated, String> {
        let requested = requested.unwrap_or(&self.audiences);
        if let Some(admin) = state.token.as_deref()
            && constant_time_eq(token.as_bytes(), admin.as_bytes())
        {
            // Audience-agnostic (`WrapAudienceAgnosticToken`): valid for
            // the server's audiences only.
            let audiences = claims::intersect(&self.audiences, requested);
            if audiences.is_empty() {
                return Err(INVALID_TOKEN.to_owned());
            }
            return Ok(Authenticated {
                user: self.admin.clone(),
                audiences,
            });
        }
        match self.service_account(state, token, requested)? {
            Some(a) => Ok(a),
            None => Err(INVALID_TOKEN.to_owned()),
        }
    }

    /// The service account token authenticator: `Ok(None)` when the token
    /// is not one of ours (not a JWT, another issuer).
    fn service_account(
        &self,
        state: &State,
        token: &str,
        requested: &[String],
    ) -> Result<Option<Authenticated>, String> {
        let hash: [u8; 32] = ring::digest::digest(&ring::digest::SHA256, token.as_bytes())
            .as_ref()
            .try_into()
            .map_err(|_| INVALID_TOKEN.to_owned())?;
        let cached = self.cache_get(&hash);
        let verified = match cached {
            Some(v) => v,
            None => {
                let Some(claims) = verify(&self.key, &self.issuer, token)? else {
                    return Ok(None);
                };
                let v = Arc::new(Verified {
                    claims,
                    user: OnceLock::new(),
                });
                self.cache_put(hash, v.clone(), state.clock.now().as_second());
                v
            }
        };
        let audiences = audiences_of(&verified.claims, &self.audiences, requested)?;
        let now = state.clock.now().as_second();
        let objects = StoreObjects(&state.store);
        let user = match verified.user.get() {
            Some(user) => {
                // Only the checks; the user follows from the claims.
                claims::validate(&verified.claims, now, &objects)?;
                user.clone()
            }
            None => {
                let info = claims::validate(&verified.claims, now, &objects)?;
                verified
                    .user
                    .get_or_init(|| Arc::new(info.user_info()))
                    .clone()
            }
        };
        Ok(Some(Authenticated { user, audiences }))
    }

    fn cache_get(&self, hash: &[u8; 32]) -> Option<Arc<Verified>> {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(hash)
            .cloned()
    }

    fn cache_put(&self, hash: [u8; 32], verified: Arc<Verified>, now: i64) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= CACHE_CAPACITY {
            cache.retain(|_, v| {
                v.claims
                    .exp
                    .is_none_or(|exp| exp + claims::LEEWAY_SECONDS >= now)
            });
            if cache.len() >= CACHE_CAPACITY {
                cache.clear();
            }
        }
        cache.insert(hash, verified);
    }
}

/// Upstream's `hasCorrectIssuer`: the unverified payload names `issuer`.
fn has_issuer(token: &str, issuer: &str) -> bool {
    #[derive(Deserialize)]
    struct Iss {
        #[serde(default)]
        iss: String,
    }
    let mut parts = token.split('.');
    let (Some(_), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    base64url_decode(payload)
        .and_then(|p| serde_json::from_slice::<Iss>(&p).ok())
        .is_some_and(|i| i.iss == issuer)
}

/// The first half of upstream's `jwtTokenAuthenticator.AuthenticateToken`:
/// `Ok(None)` when the token is not ours (not a JWS, another issuer);
/// otherwise its claims if `key` signed it, or the error.
pub fn verify(key: &SigningKey, issuer: &str, token: &str) -> Result<Option<Claims>, String> {
    if !has_issuer(token, issuer) {
        return Ok(None);
    }
    let payload = match key.verify(token) {
        Ok(p) => p,
        Err(VerifyError::Malformed) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let claims: Claims = serde_json::from_slice(&payload)
        .map_err(|_| "service account token claims could not be validated".to_owned())?;
    if claims.iss != issuer {
        return Err(format!(
            "token issuer {} is invalid",
            exitplan_api::field::go_quote(&claims.iss)
        ));
    }
    Ok(Some(claims))
}

/// The audiences a token is good for among `requested` (upstream: a token
/// without audiences has the server's, `implicit`); the error when none.
pub fn audiences_of(
    claims: &Claims,
    implicit: &[String],
    requested: &[String],
) -> Result<Vec<String>, String> {
    let token_audiences = if claims.aud.is_empty() {
        implicit
    } else {
        &claims.aud
    };
    let audiences = claims::intersect(token_audiences, requested);
    if audiences.is_empty() && !implicit.is_empty() {
        return Err(format!(
            "token audiences {} is invalid for the target audiences {}",
            claims::quote_list(token_audiences),
            claims::quote_list(requested)
        ));
    }
    Ok(audiences)
}

/// The validator's lookups in the store.
struct StoreObjects<'a>(&'a Store);

impl Objects for StoreObjects<'_> {
    fn get(&self, kind: ObjectKind, namespace: &str, name: &str) -> Option<ObjectState> {
        let plural = match kind {
            ObjectKind::ServiceAccount => "serviceaccounts",
            ObjectKind::Pod => "pods",
            ObjectKind::Secret => "secrets",
            ObjectKind::Node => "nodes",
        };
        let def = crate::registry::find("", "v1", plural)?;
        let stored = self.0.get(&def.key(Some(namespace), name))?;
        #[derive(Deserialize)]
        struct Object {
            metadata: Meta,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Meta {
            #[serde(default)]
            uid: String,
            #[serde(default)]
            deletion_timestamp: Option<jiff::Timestamp>,
        }
        let object: Object = serde_json::from_slice(&stored.json).ok()?;
        Some(ObjectState {
            uid: object.metadata.uid,
            deleted_at: object.metadata.deletion_timestamp.map(|t| t.as_second()),
        })
    }
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
    use crate::authn::claims::{Bound, NewToken, Ref};

    fn claims(issuer: &str, audiences: &[&str]) -> Claims {
        Claims::new(
            issuer,
            NewToken {
                namespace: "ns",
                service_account: Ref::new("sa", "uid"),
                bound: Bound::None,
                expiration_seconds: 600,
                warn_after: 0,
                audiences: audiences.iter().map(|a| (*a).to_owned()).collect(),
                jti: String::new(),
            },
            1_700_000_000,
        )
    }

    fn signed(key: &SigningKey, claims: &Claims) -> String {
        key.sign(&serde_json::to_vec(claims).expect("json"))
            .expect("sign")
    }

    /// Upstream's `TestTokenGenerateAndValidate` outcomes: ours and valid,
    /// not ours (no error: other authenticators may know it), or an error.
    #[test]
    fn tokens_are_ours_or_not_as_upstream_decides() {
        let key = SigningKey::generate().expect("key");
        let other = SigningKey::generate().expect("key");
        let good = claims(ISSUER, &[ISSUER]);
        type Want = Result<bool, &'static str>;
        let cases: Vec<(&str, String, Want)> = vec![
            ("valid key", signed(&key, &good), Ok(true)),
            (
                "invalid issuer",
                signed(&key, &claims("https://other", &[ISSUER])),
                Ok(false),
            ),
            (
                "other key",
                signed(&other, &good),
                Err("go-jose/go-jose: error in cryptographic primitive"),
            ),
            ("not a jwt", "abc".to_owned(), Ok(false)),
            ("opaque three parts", "a.b.c".to_owned(), Ok(false)),
        ];
        for (name, token, want) in cases {
            let got = verify(&key, ISSUER, &token).map(|c| c.is_some());
            assert_eq!(got, want.map_err(str::to_owned), "{name}");
        }
    }

    /// `authenticator.Audiences` intersection as the JWT authenticator
    /// applies it.
    #[test]
    fn audiences_intersect_or_fail() {
        let implicit = vec![ISSUER.to_owned()];
        let s = |v: &[&str]| v.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        type Case<'a> = (
            &'a str,
            Vec<&'a str>,
            Vec<&'a str>,
            Result<Vec<&'a str>, String>,
        );
        let cases: Vec<Case> = vec![
            (
                "server audience",
                vec![ISSUER],
                vec![ISSUER],
                Ok(vec![ISSUER]),
            ),
            (
                "no audience means the server's",
                vec![],
                vec![ISSUER],
                Ok(vec![ISSUER]),
            ),
            (
                "one of several",
                vec!["a", "b"],
                vec!["b", "c"],
                Ok(vec!["b"]),
            ),
            (
                "disjoint",
                vec!["a"],
                vec![ISSUER],
                Err(format!(
                    "token audiences [\"a\"] is invalid for the target audiences [\"{ISSUER}\"]"
                )),
            ),
        ];
        for (name, token, requested, want) in cases {
            let got = audiences_of(&claims(ISSUER, &token), &implicit, &s(&requested));
            assert_eq!(got, want.map(|v| s(&v)), "{name}");
        }
    }

    #[test]
    fn the_admin_is_a_master() {
        let admin = admin_user();
        assert_eq!(admin.name, ADMIN_USER);
        assert!(admin.in_group("system:masters"));
        assert!(admin.in_group("system:authenticated"));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
