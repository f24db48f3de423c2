//! Putting identities in place on a server, with an admin client: their
//! ServiceAccounts, ClusterRoles and ClusterRoleBindings (created when
//! absent, brought back to the code's rules when they differ, so restarts
//! and upgrades are idempotent, as upstream's bootstrap-policy
//! reconciliation), and their bearer tokens (TokenRequest), kept fresh.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, PostParams};

use super::{Identity, NAMESPACE};

/// The lifetime asked for each token (kube-controller-manager's
/// service-account credentials ask for an hour too).
pub const TOKEN_EXPIRATION_SECONDS: i64 = 3600;

/// How long before a token expires it is replaced: at 80% of its lifetime,
/// as client-go's token cache.
const REFRESH_AT: Duration = Duration::from_secs(TOKEN_EXPIRATION_SECONDS.unsigned_abs() * 4 / 5);

/// How soon a failed refresh is retried (the tokens in use stay valid for
/// the remaining fifth of their lifetime).
const RETRY_AFTER: Duration = Duration::from_secs(10);

/// Creates or reconciles the ServiceAccount, ClusterRole and
/// ClusterRoleBinding of every identity in `identities`, with `admin`.
pub async fn ensure(admin: &kube::Client, identities: &[Identity]) -> Result<(), kube::Error> {
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), NAMESPACE);
    let roles: Api<ClusterRole> = Api::all(admin.clone());
    let bindings: Api<ClusterRoleBinding> = Api::all(admin.clone());
    for id in identities {
        let o = id.objects();
        create_if_absent(&accounts, &o.service_account, |_, _| None).await?;
        create_if_absent(&roles, &o.cluster_role, |want, have| {
            (want.rules != have.rules).then(|| ClusterRole {
                rules: want.rules.clone(),
                ..have.clone()
            })
        })
        .await?;
        create_if_absent(&bindings, &o.cluster_role_binding, |want, have| {
            // roleRef is immutable: the names make it the same.
            (want.subjects != have.subjects).then(|| ClusterRoleBinding {
                subjects: want.subjects.clone(),
                ..have.clone()
            })
        })
        .await?;
    }
    Ok(())
}

/// Creates `want`; when it exists, replaces it with what `reconcile(want,
/// existing)` returns, if anything.
async fn create_if_absent<K>(
    api: &Api<K>,
    want: &K,
    reconcile: impl Fn(&K, &K) -> Option<K>,
) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
    K::DynamicType: Default,
{
    let name = want.meta().name.clone().unwrap_or_default();
    match api.create(&PostParams::default(), want).await {
        Ok(_) => {
            tracing::info!(kind = %K::kind(&Default::default()), %name, "created");
            Ok(())
        }
        Err(kube::Error::Api(s)) if s.code == 409 => {
            let have = api.get(&name).await?;
            if let Some(updated) = reconcile(want, &have) {
                api.replace(&name, &PostParams::default(), &updated).await?;
                tracing::info!(kind = %K::kind(&Default::default()), %name, "reconciled");
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// The bearer tokens of a set of identities (TokenRequests of their
/// ServiceAccounts), shared by the clients that send them.
#[derive(Clone, Debug, Default)]
pub struct Tokens {
    tokens: Arc<RwLock<BTreeMap<Identity, String>>>,
}

impl Tokens {
    /// Requests a token for each of `identities` with `admin` (their
    /// ServiceAccounts must exist: [`ensure`]).
    pub async fn request(
        admin: &kube::Client,
        identities: &[Identity],
    ) -> Result<Tokens, kube::Error> {
        let tokens = Tokens::default();
        tokens.renew(admin, identities).await?;
        Ok(tokens)
    }

    /// The `Authorization` header value of `identity` (`Bearer <token>`),
    /// if it has a token.
    pub fn bearer(&self, identity: Identity) -> Option<String> {
        let tokens = self.tokens.read().ok()?;
        tokens.get(&identity).map(|t| format!("Bearer {t}"))
    }

    /// Replaces every identity's token by a fresh one at 80% of its
    /// lifetime, forever (spawn it next to the components; failures are
    /// logged and retried).
    pub async fn refresh(self, admin: kube::Client) {
        let identities: Vec<Identity> = match self.tokens.read() {
            Ok(t) => t.keys().copied().collect(),
            Err(_) => return,
        };
        let mut wait = REFRESH_AT;
        loop {
            tokio::time::sleep(wait).await;
            wait = match self.renew(&admin, &identities).await {
                Ok(()) => REFRESH_AT,
                Err(e) => {
                    tracing::warn!(error = %e, "renewing the components' tokens failed; retrying");
                    RETRY_AFTER
                }
            };
        }
    }

    async fn renew(
        &self,
        admin: &kube::Client,
        identities: &[Identity],
    ) -> Result<(), kube::Error> {
        let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), NAMESPACE);
        let request = TokenRequest {
            spec: Some(TokenRequestSpec {
                expiration_seconds: Some(TOKEN_EXPIRATION_SECONDS),
                ..TokenRequestSpec::default()
            }),
            ..TokenRequest::default()
        };
        for id in identities {
            let answer: TokenRequest = accounts
                .create_subresource(
                    "token",
                    id.service_account(),
                    &PostParams::default(),
                    &serde_json::to_vec(&request).map_err(kube::Error::SerdeError)?,
                )
                .await?;
            let Some(token) = answer.status.and_then(|s| s.token) else {
                tracing::warn!(
                    account = id.service_account(),
                    "a TokenRequest answered no token"
                );
                continue;
            };
            if let Ok(mut t) = self.tokens.write() {
                t.insert(*id, token);
            }
        }
        Ok(())
    }
}
