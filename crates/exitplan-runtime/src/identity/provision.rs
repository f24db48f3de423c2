//! Putting identities in place on a server, with an admin client: their
//! ServiceAccounts, ClusterRoles and ClusterRoleBindings (created when
//! absent, reconciled as upstream's bootstrap policy, so restarts are
//! idempotent), and their bearer tokens (TokenRequest), kept fresh.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use exitplan_authz::rbac::reconcile::{
    Operation, Reconciled, reconcile_cluster_role, reconcile_cluster_role_binding,
};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams, PostParams};

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

/// Creates the ServiceAccount of every identity in `identities` and
/// reconciles its ClusterRole and ClusterRoleBinding with `admin`, as
/// kube-apiserver's bootstrap-roles hook reconciles the default policy
/// (`exitplan_authz::rbac::reconcile`): missing objects are created,
/// missing rules and subjects added, extra ones kept, objects annotated
/// `rbac.authorization.kubernetes.io/autoupdate: "false"` left alone. So a
/// role the server also bootstraps (upstream's `system:controller:job-controller`,
/// which grants more than ours) does not flap between the two at restarts.
pub async fn ensure(admin: &kube::Client, identities: &[Identity]) -> Result<(), kube::Error> {
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), NAMESPACE);
    let roles: Api<ClusterRole> = Api::all(admin.clone());
    let bindings: Api<ClusterRoleBinding> = Api::all(admin.clone());
    for id in identities {
        let o = id.objects();
        match accounts
            .create(&PostParams::default(), &o.service_account)
            .await
        {
            Ok(_) => tracing::info!(account = id.service_account(), "ServiceAccount created"),
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(e),
        }
        let name = id.role_name();
        let existing = roles.get_opt(&name).await?;
        let r = reconcile_cluster_role(existing.as_ref(), &o.cluster_role, false);
        write(&roles, &name, r).await?;
        let existing = bindings.get_opt(&name).await?;
        let r = reconcile_cluster_role_binding(existing.as_ref(), &o.cluster_role_binding, false);
        write(&bindings, &name, r).await?;
    }
    Ok(())
}

/// Carries out one reconciliation of the object `name`.
async fn write<K>(api: &Api<K>, name: &str, r: Reconciled<K>) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
    K::DynamicType: Default,
{
    let kind = K::kind(&Default::default()).into_owned();
    if r.protected {
        tracing::info!(%kind, %name, "not reconciled: autoupdate is false");
        return Ok(());
    }
    let pp = PostParams::default();
    match r.operation {
        Operation::None => return Ok(()),
        Operation::Create => match api.create(&pp, &r.object).await {
            // Created meanwhile (another replica): the next start reconciles.
            Err(kube::Error::Api(s)) if s.code == 409 => return Ok(()),
            other => other.map(|_| ())?,
        },
        Operation::Update => api.replace(name, &pp, &r.object).await.map(|_| ())?,
        Operation::Recreate => {
            api.delete(name, &DeleteParams::default()).await?;
            let mut fresh = r.object;
            fresh.meta_mut().resource_version = None;
            fresh.meta_mut().uid = None;
            api.create(&pp, &fresh).await.map(|_| ())?;
        }
    }
    tracing::info!(%kind, %name, operation = ?r.operation, "reconciled");
    Ok(())
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
                    &request,
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
