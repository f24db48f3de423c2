//! The authenticated identity of a request (upstream's `user.Info`) and the
//! well-known user and group names.

use std::collections::BTreeMap;

/// Well-known group names (upstream's `k8s.io/apiserver/pkg/authentication/user`).
pub mod groups {
    /// Members may do anything (the admin token's group).
    pub const SYSTEM_MASTERS: &str = "system:masters";
    /// Every authenticated user.
    pub const AUTHENTICATED: &str = "system:authenticated";
    /// Requests without credentials.
    pub const UNAUTHENTICATED: &str = "system:unauthenticated";
    /// Every service account.
    pub const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
    /// Prefix of the per-namespace service account group
    /// (`system:serviceaccounts:<ns>`).
    pub const SERVICE_ACCOUNTS_PREFIX: &str = "system:serviceaccounts:";
}

/// Well-known user names.
pub mod users {
    /// The anonymous user.
    pub const ANONYMOUS: &str = "system:anonymous";
    /// Prefix of a service account's user name
    /// (`system:serviceaccount:<ns>:<name>`).
    pub const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
}

/// An authenticated identity: name, uid, groups and extra attributes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name (`system:serviceaccount:default:x`, `kubernetes-admin`).
    pub name: String,
    /// A unique id, when the authenticator knows one (a service account's uid).
    pub uid: String,
    /// Groups the user belongs to.
    pub groups: Vec<String>,
    /// Extra attributes (`authentication.kubernetes.io/pod-name`, ...).
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The identity of service account `name` in `namespace` (uid `uid`),
    /// with the groups upstream gives it: `system:serviceaccounts`,
    /// `system:serviceaccounts:<ns>` and `system:authenticated`.
    pub fn service_account(namespace: &str, name: &str, uid: &str) -> UserInfo {
        UserInfo {
            name: format!("{}{namespace}:{name}", users::SERVICE_ACCOUNT_PREFIX),
            uid: uid.to_owned(),
            groups: vec![
                groups::SERVICE_ACCOUNTS.to_owned(),
                format!("{}{namespace}", groups::SERVICE_ACCOUNTS_PREFIX),
                groups::AUTHENTICATED.to_owned(),
            ],
            extra: BTreeMap::new(),
        }
    }

    /// The namespace and name of the service account this user is, if it
    /// is one (`system:serviceaccount:<ns>:<name>`, both parts non-empty).
    pub fn service_account_of(&self) -> Option<(&str, &str)> {
        let rest = self.name.strip_prefix(users::SERVICE_ACCOUNT_PREFIX)?;
        let (ns, name) = rest.split_once(':')?;
        (!ns.is_empty() && !name.is_empty() && !name.contains(':')).then_some((ns, name))
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_account_identity_round_trips() {
        let u = UserInfo::service_account("default", "x", "u1");
        assert_eq!(u.name, "system:serviceaccount:default:x");
        assert_eq!(
            u.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:default",
                "system:authenticated"
            ]
        );
        assert_eq!(u.service_account_of(), Some(("default", "x")));
        assert!(u.in_group("system:authenticated"));
        assert!(!u.in_group("system:masters"));
        for name in [
            "system:serviceaccount:",
            "system:serviceaccount:ns",
            "system:serviceaccount::x",
            "system:serviceaccount:ns:",
            "system:serviceaccount:ns:a:b",
            "admin",
        ] {
            let u = UserInfo {
                name: name.to_owned(),
                ..UserInfo::default()
            };
            assert_eq!(u.service_account_of(), None, "{name}");
        }
    }
}
