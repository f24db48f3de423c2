//! Service account token claims and their validation, as upstream's
//! `pkg/serviceaccount/claims.go`: the registered claims (`iss`, `sub`,
//! `aud`, `exp`, `iat`, `nbf`, `jti`) and the private `kubernetes.io` claim
//! (namespace, service account, and the pod, secret or node the token is
//! bound to); [`validate`] checks the times (with go-jose's one-minute
//! leeway) and that the service account and bound objects still exist with
//! the same uids, and yields the [`ServiceAccountInfo`] the user comes
//! from. Pure: the caller passes the time and an [`Objects`] lookup.

use std::collections::BTreeMap;

use exitplan_api::field::go_quote;
use exitplan_authz::UserInfo;
use serde::{Deserialize, Deserializer, Serialize};

/// The issuer (`--service-account-issuer`), also the server's one API
/// audience (`--api-audiences` defaults to the issuer).
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// go-jose's `jwt.DefaultLeeway`: clock skew allowed on `exp`, `nbf`, `iat`
/// and on deletion timestamps of bound objects.
pub const LEEWAY_SECONDS: i64 = 60;

/// `user.Info` extra keys a service account token adds
/// (`k8s.io/apiserver/pkg/authentication/serviceaccount`).
pub mod extra {
    /// The bound pod's name.
    pub const POD_NAME: &str = "authentication.kubernetes.io/pod-name";
    /// The bound pod's uid.
    pub const POD_UID: &str = "authentication.kubernetes.io/pod-uid";
    /// The node of the token (bound node, or the bound pod's node).
    pub const NODE_NAME: &str = "authentication.kubernetes.io/node-name";
    /// That node's uid.
    pub const NODE_UID: &str = "authentication.kubernetes.io/node-uid";
    /// `JTI=<jti>`: which token this is.
    pub const CREDENTIAL_ID: &str = "authentication.kubernetes.io/credential-id";
}

/// A reference to an object in the claims (`{name, uid}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ref {
    /// The object's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The object's uid.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
}

impl Ref {
    /// A reference to `name` with `uid`.
    pub fn new(name: &str, uid: &str) -> Ref {
        Ref {
            name: name.to_owned(),
            uid: uid.to_owned(),
        }
    }
}

/// The `kubernetes.io` private claim.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Private {
    /// The service account's namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The service account.
    #[serde(default)]
    pub serviceaccount: Ref,
    /// The pod the token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<Ref>,
    /// The secret the token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<Ref>,
    /// The node the token is bound to, or the bound pod's node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<Ref>,
    /// When a token with an extended expiry starts to be reported stale.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "numeric_date"
    )]
    pub warnafter: Option<i64>,
}

/// A service account token's claims.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The issuer.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub iss: String,
    /// `system:serviceaccount:<ns>:<name>`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sub: String,
    /// The audiences (a string or a list on the wire).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "audience"
    )]
    pub aud: Vec<String>,
    /// Expiry (Unix seconds).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "numeric_date"
    )]
    pub exp: Option<i64>,
    /// Issued at (Unix seconds).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "numeric_date"
    )]
    pub iat: Option<i64>,
    /// Not before (Unix seconds).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "numeric_date"
    )]
    pub nbf: Option<i64>,
    /// The token's unique id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub jti: String,
    /// The `kubernetes.io` claim.
    #[serde(rename = "kubernetes.io", default)]
    pub kubernetes: Private,
}

/// go-jose's `Audience`: one string or a list of strings.
fn audience<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
    })
}

/// go-jose's `NumericDate`: a JSON number of seconds (fractions dropped).
fn numeric_date<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.map(|f| f as i64))
}

/// The object a token is bound to (TokenRequest `spec.boundObjectRef`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Not bound.
    None,
    /// A pod, with its node when it is scheduled (the node's uid may be
    /// empty when the node object does not exist).
    Pod(Ref, Option<Ref>),
    /// A secret.
    Secret(Ref),
    /// A node.
    Node(Ref),
}

/// What a new token says: everything of `Claims(...)` but the clock and
/// the random id, which the caller supplies.
#[derive(Clone, Debug)]
pub struct NewToken<'a> {
    /// The service account's namespace.
    pub namespace: &'a str,
    /// The service account (name and uid).
    pub service_account: Ref,
    /// The bound object.
    pub bound: Bound,
    /// Lifetime in seconds.
    pub expiration_seconds: i64,
    /// Seconds after which the token is reported stale (0: never).
    pub warn_after: i64,
    /// The audiences.
    pub audiences: Vec<String>,
    /// The token id (`jti`).
    pub jti: String,
}

impl Claims {
    /// The claims of `token` issued by `issuer` at `now` (Unix seconds), as
    /// upstream's `Claims`.
    pub fn new(issuer: &str, token: NewToken<'_>, now: i64) -> Claims {
        let mut private = Private {
            namespace: token.namespace.to_owned(),
            serviceaccount: token.service_account.clone(),
            ..Private::default()
        };
        match token.bound {
            Bound::None => {}
            Bound::Pod(pod, node) => {
                private.pod = Some(pod);
                private.node = node;
            }
            Bound::Secret(secret) => private.secret = Some(secret),
            Bound::Node(node) => private.node = Some(node),
        }
        if token.warn_after != 0 {
            private.warnafter = Some(now.saturating_add(token.warn_after));
        }
        Claims {
            iss: issuer.to_owned(),
            sub: format!(
                "{}{}:{}",
                exitplan_authz::users::SERVICE_ACCOUNT_PREFIX,
                token.namespace,
                token.service_account.name
            ),
            aud: token.audiences,
            exp: Some(now.saturating_add(token.expiration_seconds)),
            iat: Some(now),
            nbf: Some(now),
            jti: token.jti,
            kubernetes: private,
        }
    }
}

/// Kinds of objects the validator looks up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// `serviceaccounts` (namespaced).
    ServiceAccount,
    /// `pods` (namespaced).
    Pod,
    /// `secrets` (namespaced).
    Secret,
    /// `nodes` (cluster-scoped).
    Node,
}

/// What the validator needs of a stored object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectState {
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.deletionTimestamp` (Unix seconds), if set.
    pub deleted_at: Option<i64>,
}

/// The object lookups of the validator (upstream's
/// `ServiceAccountTokenGetter`).
pub trait Objects {
    /// The object of `kind` named `name` (in `namespace` when namespaced).
    fn get(&self, kind: ObjectKind, namespace: &str, name: &str) -> Option<ObjectState>;
}

/// Who a validated token says it is (upstream's `ServiceAccountInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceAccountInfo {
    /// The namespace.
    pub namespace: String,
    /// The service account name.
    pub name: String,
    /// The service account uid.
    pub uid: String,
    /// The bound pod's name.
    pub pod_name: String,
    /// The bound pod's uid.
    pub pod_uid: String,
    /// The node's name.
    pub node_name: String,
    /// The node's uid.
    pub node_uid: String,
    /// `JTI=<jti>`, or empty.
    pub credential_id: String,
}

impl ServiceAccountInfo {
    /// The user (upstream's `ServiceAccountInfo.UserInfo()`, plus
    /// `system:authenticated` as the authenticated group adder adds it).
    pub fn user_info(&self) -> UserInfo {
        let mut user = UserInfo::service_account(&self.namespace, &self.name, &self.uid);
        let mut put = |key: &str, value: &str| {
            user.extra.insert(key.to_owned(), vec![value.to_owned()]);
        };
        if !self.pod_name.is_empty() && !self.pod_uid.is_empty() {
            put(extra::POD_NAME, &self.pod_name);
            put(extra::POD_UID, &self.pod_uid);
        }
        if !self.credential_id.is_empty() {
            put(extra::CREDENTIAL_ID, &self.credential_id);
        }
        if !self.node_name.is_empty() {
            put(extra::NODE_NAME, &self.node_name);
            if !self.node_uid.is_empty() {
                put(extra::NODE_UID, &self.node_uid);
            }
        }
        user
    }
}

/// go-jose's `Claims.ValidateWithLeeway` for the times: `Ok` or upstream's
/// error text.
pub fn check_times(claims: &Claims, now: i64) -> Result<(), String> {
    if claims.nbf.is_some_and(|nbf| now + LEEWAY_SECONDS < nbf) {
        return Err("service account token is not valid yet".to_owned());
    }
    if claims.exp.is_some_and(|exp| now - LEEWAY_SECONDS > exp) {
        return Err("service account token has expired".to_owned());
    }
    if claims.iat.is_some_and(|iat| now + LEEWAY_SECONDS < iat) {
        return Err(
            "service account token claims could not be validated due to unexpected validation error"
                .to_owned(),
        );
    }
    Ok(())
}

/// Upstream's `validator.Validate`: the times, then the service account
/// and the bound objects must still exist with the uids of the claims (an
/// object deleted longer than the leeway ago counts as gone).
pub fn validate(
    claims: &Claims,
    now: i64,
    objects: &dyn Objects,
) -> Result<ServiceAccountInfo, String> {
    check_times(claims, now)?;
    let deleted_long_ago = |o: &ObjectState| o.deleted_at.is_some_and(|t| t < now - LEEWAY_SECONDS);
    let private = &claims.kubernetes;
    let ns = private.namespace.as_str();
    let sa = &private.serviceaccount;
    let account = objects
        .get(ObjectKind::ServiceAccount, ns, &sa.name)
        .ok_or_else(|| format!("serviceaccounts {} not found", go_quote(&sa.name)))?;
    if deleted_long_ago(&account) {
        return Err(format!("service account {ns}/{} has been deleted", sa.name));
    }
    if account.uid != sa.uid {
        return Err(format!(
            "service account UID ({}) does not match claim ({})",
            account.uid, sa.uid
        ));
    }
    const INVALIDATED: &str = "service account token has been invalidated";
    if let Some(secret) = &private.secret {
        let found = objects
            .get(ObjectKind::Secret, ns, &secret.name)
            .filter(|o| !deleted_long_ago(o))
            .ok_or_else(|| INVALIDATED.to_owned())?;
        if found.uid != secret.uid {
            return Err(format!(
                "secret UID ({}) does not match service account secret ref claim ({})",
                found.uid, secret.uid
            ));
        }
    }
    let mut info = ServiceAccountInfo {
        namespace: ns.to_owned(),
        name: sa.name.clone(),
        uid: sa.uid.clone(),
        ..ServiceAccountInfo::default()
    };
    if let Some(pod) = &private.pod {
        let found = objects
            .get(ObjectKind::Pod, ns, &pod.name)
            .filter(|o| !deleted_long_ago(o))
            .ok_or_else(|| INVALIDATED.to_owned())?;
        if found.uid != pod.uid {
            return Err(format!(
                "pod UID ({}) does not match service account pod ref claim ({})",
                found.uid, pod.uid
            ));
        }
        info.pod_name = pod.name.clone();
        info.pod_uid = pod.uid.clone();
    }
    if let Some(node) = &private.node {
        if private.pod.is_none() {
            let found = objects
                .get(ObjectKind::Node, "", &node.name)
                .filter(|o| !deleted_long_ago(o))
                .ok_or_else(|| INVALIDATED.to_owned())?;
            if found.uid != node.uid {
                return Err(format!(
                    "node UID ({}) does not match service account node ref claim ({})",
                    found.uid, node.uid
                ));
            }
        }
        info.node_name = node.name.clone();
        info.node_uid = node.uid.clone();
    }
    if !claims.jti.is_empty() {
        info.credential_id = format!("JTI={}", claims.jti);
    }
    Ok(info)
}

/// The audiences in both lists (`authenticator.Audiences.Intersect`), in
/// the order of `a`.
pub fn intersect(a: &[String], b: &[String]) -> Vec<String> {
    a.iter().filter(|x| b.contains(x)).cloned().collect()
}

/// Go's `%q` of a string slice: `["a" "b"]`.
pub fn quote_list(list: &[String]) -> String {
    let quoted: Vec<String> = list.iter().map(|s| go_quote(s)).collect();
    format!("[{}]", quoted.join(" "))
}

/// The extra map of a user as the review APIs render it.
pub fn extra_json(extra: &BTreeMap<String, Vec<String>>) -> serde_json::Value {
    serde_json::to_value(extra).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const NOW: i64 = 1_700_000_000;

    #[derive(Default)]
    struct Store(HashMap<(ObjectKind, String), ObjectState>);

    impl Store {
        fn with(
            mut self,
            kind: ObjectKind,
            name: &str,
            uid: &str,
            deleted_at: Option<i64>,
        ) -> Self {
            self.0.insert(
                (kind, name.to_owned()),
                ObjectState {
                    uid: uid.to_owned(),
                    deleted_at,
                },
            );
            self
        }
    }

    impl Objects for Store {
        fn get(&self, kind: ObjectKind, _ns: &str, name: &str) -> Option<ObjectState> {
            self.0.get(&(kind, name.to_owned())).cloned()
        }
    }

    fn token(bound: Bound) -> Claims {
        Claims::new(
            ISSUER,
            NewToken {
                namespace: "myns",
                service_account: Ref::new("mysvcacct", "mysvcacct-uid"),
                bound,
                expiration_seconds: 100,
                warn_after: 0,
                audiences: vec!["1".into(), "2".into()],
                jti: "abc".into(),
            },
            NOW,
        )
    }

    /// Upstream's `TestClaims` shapes: the JSON of each kind of binding.
    #[test]
    fn claims_as_upstream_serializes_them() {
        let pod = Bound::Pod(
            Ref::new("mypod", "mypod-uid"),
            Some(Ref::new("mynode", "mynode-uid")),
        );
        let cases = [
            (
                "service account",
                Bound::None,
                serde_json::json!({"namespace": "myns", "serviceaccount": {"name": "mysvcacct", "uid": "mysvcacct-uid"}}),
            ),
            (
                "pod with node",
                pod,
                serde_json::json!({"namespace": "myns", "serviceaccount": {"name": "mysvcacct", "uid": "mysvcacct-uid"}, "pod": {"name": "mypod", "uid": "mypod-uid"}, "node": {"name": "mynode", "uid": "mynode-uid"}}),
            ),
            (
                "secret",
                Bound::Secret(Ref::new("mysecret", "mysecret-uid")),
                serde_json::json!({"namespace": "myns", "serviceaccount": {"name": "mysvcacct", "uid": "mysvcacct-uid"}, "secret": {"name": "mysecret", "uid": "mysecret-uid"}}),
            ),
            (
                "node",
                Bound::Node(Ref::new("mynode", "mynode-uid")),
                serde_json::json!({"namespace": "myns", "serviceaccount": {"name": "mysvcacct", "uid": "mysvcacct-uid"}, "node": {"name": "mynode", "uid": "mynode-uid"}}),
            ),
        ];
        for (name, bound, private) in cases {
            let claims = token(bound);
            let json = serde_json::to_value(&claims).expect("json");
            assert_eq!(
                json,
                serde_json::json!({
                    "iss": ISSUER,
                    "sub": "system:serviceaccount:myns:mysvcacct",
                    "aud": ["1", "2"],
                    "exp": NOW + 100, "iat": NOW, "nbf": NOW, "jti": "abc",
                    "kubernetes.io": private,
                }),
                "{name}"
            );
            let back: Claims = serde_json::from_value(json).expect("parse");
            assert_eq!(back, claims, "{name}");
        }
        let one: Claims = serde_json::from_str(r#"{"aud":"x","exp":12.7}"#).expect("parse");
        assert_eq!((one.aud, one.exp), (vec!["x".to_owned()], Some(12)));
    }

    /// Upstream's `TestValidatePrivateClaims` cases.
    #[test]
    fn validator_as_upstream() {
        use ObjectKind::*;
        let base = || Store::default().with(ServiceAccount, "mysvcacct", "mysvcacct-uid", None);
        let pod = Bound::Pod(Ref::new("mypod", "mypod-uid"), None);
        let secret = Bound::Secret(Ref::new("mysecret", "mysecret-uid"));
        let node = Bound::Node(Ref::new("mynode", "mynode-uid"));
        let long_ago = Some(NOW - LEEWAY_SECONDS - 1);
        let recently = Some(NOW - 10);
        let cases: Vec<(&str, Bound, Store, Result<(), &str>)> = vec![
            (
                "missing serviceaccount",
                Bound::None,
                Store::default(),
                Err(r#"serviceaccounts "mysvcacct" not found"#),
            ),
            (
                "missing secret",
                secret.clone(),
                base(),
                Err("service account token has been invalidated"),
            ),
            (
                "missing pod",
                pod.clone(),
                base(),
                Err("service account token has been invalidated"),
            ),
            (
                "missing node",
                node.clone(),
                base(),
                Err("service account token has been invalidated"),
            ),
            (
                "different uid serviceaccount",
                Bound::None,
                Store::default().with(ServiceAccount, "mysvcacct", "mysvcacct-uid2", None),
                Err("service account UID (mysvcacct-uid2) does not match claim (mysvcacct-uid)"),
            ),
            (
                "different uid secret",
                secret.clone(),
                base().with(Secret, "mysecret", "mysecret-uid2", None),
                Err(
                    "secret UID (mysecret-uid2) does not match service account secret ref claim (mysecret-uid)",
                ),
            ),
            (
                "different uid pod",
                pod.clone(),
                base().with(Pod, "mypod", "mypod-uid2", None),
                Err(
                    "pod UID (mypod-uid2) does not match service account pod ref claim (mypod-uid)",
                ),
            ),
            (
                "different uid node",
                node.clone(),
                base().with(Node, "mynode", "mynode-uid2", None),
                Err(
                    "node UID (mynode-uid2) does not match service account node ref claim (mynode-uid)",
                ),
            ),
            (
                "deleted serviceaccount",
                Bound::None,
                Store::default().with(ServiceAccount, "mysvcacct", "mysvcacct-uid", long_ago),
                Err("service account myns/mysvcacct has been deleted"),
            ),
            (
                "deleted secret",
                secret.clone(),
                base().with(Secret, "mysecret", "mysecret-uid", long_ago),
                Err("service account token has been invalidated"),
            ),
            (
                "deleted pod",
                pod.clone(),
                base().with(Pod, "mypod", "mypod-uid", long_ago),
                Err("service account token has been invalidated"),
            ),
            (
                "deleted node",
                node.clone(),
                base().with(Node, "mynode", "mynode-uid", long_ago),
                Err("service account token has been invalidated"),
            ),
            (
                "deleting serviceaccount",
                Bound::None,
                Store::default().with(ServiceAccount, "mysvcacct", "mysvcacct-uid", recently),
                Ok(()),
            ),
            (
                "deleting secret",
                secret.clone(),
                base().with(Secret, "mysecret", "mysecret-uid", recently),
                Ok(()),
            ),
            (
                "deleting pod",
                pod.clone(),
                base().with(Pod, "mypod", "mypod-uid", recently),
                Ok(()),
            ),
            (
                "deleting node",
                node.clone(),
                base().with(Node, "mynode", "mynode-uid", recently),
                Ok(()),
            ),
            ("good", Bound::None, base(), Ok(())),
        ];
        for (name, bound, store, want) in cases {
            let got = validate(&token(bound), NOW, &store).map(|_| ());
            assert_eq!(
                got.map_err(|e| e.to_owned()),
                want.map_err(str::to_owned),
                "{name}"
            );
        }
    }

    #[test]
    fn times_with_leeway() {
        let claims = token(Bound::None);
        let cases = [
            ("at issue", NOW, Ok(())),
            (
                "just before exp plus leeway",
                NOW + 100 + LEEWAY_SECONDS,
                Ok(()),
            ),
            (
                "expired",
                NOW + 101 + LEEWAY_SECONDS,
                Err("service account token has expired"),
            ),
            ("within nbf leeway", NOW - LEEWAY_SECONDS, Ok(())),
            (
                "not valid yet",
                NOW - LEEWAY_SECONDS - 1,
                Err("service account token is not valid yet"),
            ),
        ];
        for (name, now, want) in cases {
            assert_eq!(
                check_times(&claims, now),
                want.map_err(str::to_owned),
                "{name}"
            );
        }
        let future_iat = Claims {
            iat: Some(NOW + 1000),
            nbf: None,
            ..claims
        };
        assert!(check_times(&future_iat, NOW).is_err());
    }

    #[test]
    fn user_info_of_pod_bound_token() {
        let store = Store::default()
            .with(
                ObjectKind::ServiceAccount,
                "mysvcacct",
                "mysvcacct-uid",
                None,
            )
            .with(ObjectKind::Pod, "mypod", "mypod-uid", None);
        let claims = token(Bound::Pod(
            Ref::new("mypod", "mypod-uid"),
            Some(Ref::new("mynode", "")),
        ));
        let user = validate(&claims, NOW, &store).expect("valid").user_info();
        assert_eq!(user.name, "system:serviceaccount:myns:mysvcacct");
        assert_eq!(user.uid, "mysvcacct-uid");
        let extra: Vec<(&str, &str)> = user
            .extra
            .iter()
            .map(|(k, v)| (k.as_str(), v[0].as_str()))
            .collect();
        assert_eq!(
            extra,
            [
                (extra::CREDENTIAL_ID, "JTI=abc"),
                (extra::NODE_NAME, "mynode"),
                (extra::POD_NAME, "mypod"),
                (extra::POD_UID, "mypod-uid"),
            ]
        );
        assert_eq!(quote_list(&["a".into(), "b".into()]), r#"["a" "b"]"#);
        assert_eq!(
            intersect(&["a".into(), "b".into()], &["b".into(), "c".into()]),
            ["b"]
        );
    }
}
