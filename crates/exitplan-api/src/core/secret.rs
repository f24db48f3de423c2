//! Secret (`ValidateSecret*` in `pkg/apis/core/validation`,
//! `SetDefaults_Secret`, `pkg/registry/core/secret/strategy.go`): key names,
//! the 1 MiB limit, the keys each well-known type requires, `type` and
//! `immutable` data fixed after create, and `stringData` folded into `data`
//! (upstream does that while converting v1 to its internal type, so a stored
//! Secret never carries `stringData`).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;

use super::configmap::{IMMUTABLE_DETAIL, MAX_SECRET_SIZE};
use super::validation::strings::is_config_map_key;
use crate::field::{Error, ErrorList, Path};
use crate::meta::{self, FIELD_IMMUTABLE, NameRule};
use crate::patch::gojson::syntax_error;
use crate::strategy::{Context, Strategy};

/// `Opaque`, the default type.
pub const SECRET_TYPE_OPAQUE: &str = "Opaque";
/// `kubernetes.io/service-account-token`.
pub const SECRET_TYPE_SERVICE_ACCOUNT_TOKEN: &str = "kubernetes.io/service-account-token";
/// `kubernetes.io/dockercfg`.
pub const SECRET_TYPE_DOCKERCFG: &str = "kubernetes.io/dockercfg";
/// `kubernetes.io/dockerconfigjson`.
pub const SECRET_TYPE_DOCKER_CONFIG_JSON: &str = "kubernetes.io/dockerconfigjson";
/// `kubernetes.io/basic-auth`.
pub const SECRET_TYPE_BASIC_AUTH: &str = "kubernetes.io/basic-auth";
/// `kubernetes.io/ssh-auth`.
pub const SECRET_TYPE_SSH_AUTH: &str = "kubernetes.io/ssh-auth";
/// `kubernetes.io/tls`.
pub const SECRET_TYPE_TLS: &str = "kubernetes.io/tls";
/// The annotation naming a token Secret's ServiceAccount.
pub const SERVICE_ACCOUNT_NAME_KEY: &str = "kubernetes.io/service-account.name";
/// The data key of a `kubernetes.io/dockercfg` Secret.
pub const DOCKER_CONFIG_KEY: &str = ".dockercfg";
/// The data key of a `kubernetes.io/dockerconfigjson` Secret.
pub const DOCKER_CONFIG_JSON_KEY: &str = ".dockerconfigjson";
/// The user name key of a basic-auth Secret.
pub const BASIC_AUTH_USERNAME_KEY: &str = "username";
/// The password key of a basic-auth Secret.
pub const BASIC_AUTH_PASSWORD_KEY: &str = "password";
/// The private key of an ssh-auth Secret.
pub const SSH_AUTH_PRIVATE_KEY: &str = "ssh-privatekey";
/// The certificate key of a TLS Secret.
pub const TLS_CERT_KEY: &str = "tls.crt";
/// The private key of a TLS Secret.
pub const TLS_PRIVATE_KEY_KEY: &str = "tls.key";

/// What upstream shows instead of a Secret value in an error.
const REDACTED: &str = "<secret contents redacted>";

/// `SetDefaults_Secret` (type `Opaque`) and the v1 conversion of
/// `stringData`: each entry overwrites `data` under its key, then
/// `stringData` is dropped.
pub fn default_secret(secret: &mut Secret) {
    if secret.type_.as_deref().unwrap_or_default().is_empty() {
        secret.type_ = Some(SECRET_TYPE_OPAQUE.to_owned());
    }
    if let Some(string_data) = secret.string_data.take() {
        let data = secret.data.get_or_insert_with(BTreeMap::new);
        for (k, v) in string_data {
            data.insert(k, ByteString(v.into_bytes()));
        }
    }
}

/// Go's `json.Unmarshal(b, &map[string]interface{}{})` error, if any.
fn json_object_error(bytes: &[u8]) -> Option<String> {
    if let Some(e) = syntax_error(bytes) {
        return Some(e);
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let kind = match value {
        serde_json::Value::Object(_) | serde_json::Value::Null => return None,
        serde_json::Value::Array(_) => "array",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::Bool(_) => "bool",
    };
    Some(format!(
        "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    ))
}

/// `ValidateSecret`: metadata, key names, total size and the keys the
/// secret's type requires.
pub fn validate_secret(secret: &Secret) -> ErrorList {
    let mut errs = meta::validate_object_meta(&secret.metadata, true, NameRule::Subdomain);
    let data_path = Path::new("data");
    let empty = BTreeMap::new();
    let data = secret.data.as_ref().unwrap_or(&empty);
    let mut total = 0usize;
    for (key, value) in data {
        for msg in is_config_map_key(key) {
            errs.push(Error::invalid(&data_path.key(key), key, msg));
        }
        total = total.saturating_add(value.0.len());
    }
    if total > MAX_SECRET_SIZE {
        errs.push(Error::too_long(&data_path, MAX_SECRET_SIZE));
    }
    let required = |errs: &mut ErrorList, key: &str| {
        errs.push(Error::required(&data_path.key(key), ""));
    };
    match secret.type_.as_deref().unwrap_or_default() {
        SECRET_TYPE_SERVICE_ACCOUNT_TOKEN => {
            let name = secret
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(SERVICE_ACCOUNT_NAME_KEY))
                .map(String::as_str)
                .unwrap_or_default();
            if name.is_empty() {
                errs.push(Error::required(
                    &Path::new("metadata")
                        .child("annotations")
                        .key(SERVICE_ACCOUNT_NAME_KEY),
                    "",
                ));
            }
        }
        key_type @ (SECRET_TYPE_DOCKERCFG | SECRET_TYPE_DOCKER_CONFIG_JSON) => {
            let key = if key_type == SECRET_TYPE_DOCKERCFG {
                DOCKER_CONFIG_KEY
            } else {
                DOCKER_CONFIG_JSON_KEY
            };
            match data.get(key) {
                None => required(&mut errs, key),
                Some(bytes) => {
                    if let Some(e) = json_object_error(&bytes.0) {
                        errs.push(Error::invalid(&data_path.key(key), REDACTED, e));
                    }
                }
            }
        }
        SECRET_TYPE_BASIC_AUTH
            if !data.contains_key(BASIC_AUTH_USERNAME_KEY)
                && !data.contains_key(BASIC_AUTH_PASSWORD_KEY) =>
        {
            required(&mut errs, BASIC_AUTH_USERNAME_KEY);
            required(&mut errs, BASIC_AUTH_PASSWORD_KEY);
        }
        SECRET_TYPE_SSH_AUTH
            if data
                .get(SSH_AUTH_PRIVATE_KEY)
                .is_none_or(|v| v.0.is_empty()) =>
        {
            required(&mut errs, SSH_AUTH_PRIVATE_KEY);
        }
        SECRET_TYPE_TLS => {
            for key in [TLS_CERT_KEY, TLS_PRIVATE_KEY_KEY] {
                if !data.contains_key(key) {
                    required(&mut errs, key);
                }
            }
        }
        _ => {}
    }
    errs
}

/// `ValidateSecretUpdate`: metadata update rules, `type` immutable, data
/// frozen once `immutable` is true, then the create rules.
pub fn validate_secret_update(new: &Secret, old: &Secret) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    let new_type = new.type_.as_deref().unwrap_or_default();
    if new_type != old.type_.as_deref().unwrap_or_default() {
        errs.push(
            Error::invalid(&Path::new("type"), new_type, FIELD_IMMUTABLE).with_origin("immutable"),
        );
    }
    if old.immutable == Some(true) {
        if new.immutable != Some(true) {
            errs.push(Error::forbidden(&Path::new("immutable"), IMMUTABLE_DETAIL));
        }
        let non_empty =
            |d: &Option<BTreeMap<String, ByteString>>| d.clone().filter(|m| !m.is_empty());
        if non_empty(&new.data) != non_empty(&old.data) {
            errs.push(Error::forbidden(&Path::new("data"), IMMUTABLE_DETAIL));
        }
    }
    errs.append(validate_secret(new));
    errs
}

/// The Secret registry strategy.
#[derive(Clone, Copy, Debug, Default)]
pub struct SecretStrategy;

impl Strategy for SecretStrategy {
    type Object = Secret;

    /// Type `Opaque` when empty; `stringData` merged into `data`.
    fn default(obj: &mut Secret) {
        default_secret(obj);
    }

    fn validate_create(obj: &Secret, _ctx: &Context<'_>) -> ErrorList {
        validate_secret(obj)
    }

    fn validate_update(new: &Secret, old: &Secret, _ctx: &Context<'_>) -> ErrorList {
        validate_secret_update(new, old)
    }

    /// Secrets have no `/status`; a status write is a plain update.
    fn validate_status_update(new: &Secret, old: &Secret, _ctx: &Context<'_>) -> ErrorList {
        validate_secret_update(new, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::admit_create;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn secret(ty: &str, data: &[(&str, &[u8])]) -> Secret {
        Secret {
            metadata: ObjectMeta {
                name: Some("foo".into()),
                namespace: Some("bar".into()),
                resource_version: Some("1".into()),
                ..Default::default()
            },
            type_: (!ty.is_empty()).then(|| ty.to_owned()),
            data: Some(
                data.iter()
                    .map(|(k, v)| ((*k).to_owned(), ByteString(v.to_vec())))
                    .collect(),
            ),
            ..Default::default()
        }
    }

    #[test]
    fn string_data_folds_into_data_and_type_defaults() {
        let mut s = secret("", &[("a", b"old"), ("b", b"keep")]);
        s.string_data = Some(BTreeMap::from([("a".to_owned(), "new".to_owned())]));
        let absent = Absent::default();
        let ctx = Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent: &absent,
        };
        admit_create::<SecretStrategy>(&mut s, &ctx).expect("valid");
        assert_eq!(s.string_data, None);
        assert_eq!(s.type_.as_deref(), Some("Opaque"));
        let data = s.data.expect("data");
        assert_eq!(data.get("a").map(|v| v.0.as_slice()), Some(&b"new"[..]));
        assert_eq!(data.get("b").map(|v| v.0.as_slice()), Some(&b"keep"[..]));
    }

    /// Upstream's `TestValidateSecret` and the type-specific tests
    /// (`TestValidateDockerConfigSecret`, `TestValidateBasicAuthSecret`,
    /// `TestValidateSSHAuthSecret`), with kube-apiserver's messages.
    #[test]
    fn validate_secret_table() {
        let mut sa_token = secret(SECRET_TYPE_SERVICE_ACCOUNT_TOKEN, &[]);
        sa_token.metadata.annotations = Some(BTreeMap::from([(
            SERVICE_ACCOUNT_NAME_KEY.to_owned(),
            "foo".to_owned(),
        )]));
        let mut bad_name = secret("", &[]);
        bad_name.metadata.name = Some("bad_name".into());
        let cases: Vec<(&str, Secret, &str)> = vec![
            ("valid", secret("", &[("data-1", b"bar")]), ""),
            (
                "valid opaque",
                secret(SECRET_TYPE_OPAQUE, &[(".dot", b"x")]),
                "",
            ),
            ("valid service account token", sa_token, ""),
            (
                "invalid name",
                bad_name,
                r#"metadata.name: Invalid value: "bad_name""#,
            ),
            (
                "service account token without name annotation",
                secret(SECRET_TYPE_SERVICE_ACCOUNT_TOKEN, &[]),
                "metadata.annotations[kubernetes.io/service-account.name]: Required value",
            ),
            (
                "invalid key",
                secret("", &[("a*b", b"x")]),
                r#"data[a*b]: Invalid value: "a*b": a valid config key"#,
            ),
            (
                "leading dot dot key",
                secret("", &[("..a", b"x")]),
                r#"data[..a]: Invalid value: "..a": must not start with '..'"#,
            ),
            (
                "too big",
                secret("", &[("a", &vec![b'x'; MAX_SECRET_SIZE + 1])]),
                "data: Too long: may not be more than 1048576 bytes",
            ),
            (
                "valid dockercfg",
                secret(
                    SECRET_TYPE_DOCKERCFG,
                    &[(
                        DOCKER_CONFIG_KEY,
                        br#"{"https://index.docker.io/v1/": {"auth": "Zm9vOmJhcgo="}}"#,
                    )],
                ),
                "",
            ),
            (
                "dockercfg without key",
                secret(SECRET_TYPE_DOCKERCFG, &[]),
                "data[.dockercfg]: Required value",
            ),
            (
                "dockercfg invalid json",
                secret(SECRET_TYPE_DOCKERCFG, &[(DOCKER_CONFIG_KEY, b"bad")]),
                r#"data[.dockercfg]: Invalid value: "<secret contents redacted>": invalid character 'b' looking for beginning of value"#,
            ),
            (
                "dockerconfigjson without key",
                secret(SECRET_TYPE_DOCKER_CONFIG_JSON, &[]),
                "data[.dockerconfigjson]: Required value",
            ),
            (
                "dockerconfigjson not an object",
                secret(
                    SECRET_TYPE_DOCKER_CONFIG_JSON,
                    &[(DOCKER_CONFIG_JSON_KEY, b"[]")],
                ),
                r#"data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of type map[string]interface {}"#,
            ),
            (
                "basic auth with username only",
                secret(SECRET_TYPE_BASIC_AUTH, &[("username", b"")]),
                "",
            ),
            (
                "basic auth with neither key",
                secret(SECRET_TYPE_BASIC_AUTH, &[]),
                "[data[username]: Required value, data[password]: Required value]",
            ),
            (
                "ssh auth",
                secret(SECRET_TYPE_SSH_AUTH, &[("ssh-privatekey", b"k")]),
                "",
            ),
            (
                "ssh auth with empty key",
                secret(SECRET_TYPE_SSH_AUTH, &[("ssh-privatekey", b"")]),
                "data[ssh-privatekey]: Required value",
            ),
            (
                "tls without keys",
                secret(SECRET_TYPE_TLS, &[]),
                "[data[tls.crt]: Required value, data[tls.key]: Required value]",
            ),
            (
                "tls",
                secret(SECRET_TYPE_TLS, &[("tls.crt", b"c"), ("tls.key", b"k")]),
                "",
            ),
            ("unknown type", secret("example.com/thing", &[]), ""),
        ];
        for (name, obj, want) in cases {
            let got = validate_secret(&obj).to_string();
            if want.is_empty() {
                assert_eq!(got, "", "{name}");
            } else {
                assert!(got.contains(want), "{name}: {got}");
            }
        }
    }

    /// Upstream's `TestValidateSecretUpdate` and immutable-secret cases.
    #[test]
    fn secret_update() {
        let old = secret("", &[("a", b"1")]);
        let mut retyped = old.clone();
        retyped.type_ = Some(SECRET_TYPE_TLS.into());
        retyped.data = Some(BTreeMap::from([
            ("tls.crt".to_owned(), ByteString(b"c".to_vec())),
            ("tls.key".to_owned(), ByteString(b"k".to_vec())),
        ]));
        let mut old_opaque = old.clone();
        default_secret(&mut old_opaque);
        assert_eq!(
            validate_secret_update(&retyped, &old_opaque).to_string(),
            r#"type: Invalid value: "kubernetes.io/tls": field is immutable"#
        );

        let mut frozen = old_opaque.clone();
        frozen.immutable = Some(true);
        let mut changed = frozen.clone();
        changed.data = Some(BTreeMap::from([(
            "a".to_owned(),
            ByteString(b"2".to_vec()),
        )]));
        changed.immutable = Some(false);
        assert_eq!(
            validate_secret_update(&changed, &frozen).to_string(),
            "[immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]"
        );
        let mut relabelled = frozen.clone();
        relabelled.metadata.labels = Some(BTreeMap::from([("a".to_owned(), "b".to_owned())]));
        assert_eq!(validate_secret_update(&relabelled, &frozen).to_string(), "");
    }
}
