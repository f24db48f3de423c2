//! ConfigMap (`ValidateConfigMap*` in `pkg/apis/core/validation`,
//! `pkg/registry/core/configmap/strategy.go`): keys are config keys, a key
//! may not be in both `data` and `binaryData`, the values together stay
//! within 1 MiB, and an `immutable` ConfigMap keeps its data for good.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::ConfigMap;

use super::validation::strings::is_config_map_key;
use crate::field::{Error, ErrorList, Path};
use crate::meta::{self, NameRule};
use crate::strategy::{Context, Strategy};

/// `MaxSecretSize`: the largest total size of a ConfigMap's or Secret's values (1 MiB).
pub const MAX_SECRET_SIZE: usize = 1024 * 1024;

/// Upstream's detail for a change to an `immutable` ConfigMap or Secret.
pub const IMMUTABLE_DETAIL: &str = "field is immutable when `immutable` is set";

/// The path upstream reports an object-wide error at (`field.NewPath("")`,
/// rendered `[]`).
pub fn whole_object_path() -> Path {
    Path::new("").key("")
}

/// `ValidateConfigMap`: metadata, key names, keys in both maps, total size.
pub fn validate_config_map(cm: &ConfigMap) -> ErrorList {
    let mut errs = meta::validate_object_meta(&cm.metadata, true, NameRule::Subdomain);
    let data = cm.data.as_ref();
    let binary = cm.binary_data.as_ref();
    let mut total = 0usize;
    let data_path = Path::new("data");
    for (key, value) in data.into_iter().flatten() {
        for msg in is_config_map_key(key) {
            errs.push(Error::invalid(&data_path.key(key), key, msg));
        }
        if binary.is_some_and(|b| b.contains_key(key)) {
            errs.push(Error::invalid(
                &data_path.key(key),
                key,
                "duplicate of key present in binaryData",
            ));
        }
        total = total.saturating_add(value.len());
    }
    let binary_path = Path::new("binaryData");
    for (key, value) in binary.into_iter().flatten() {
        for msg in is_config_map_key(key) {
            errs.push(Error::invalid(&binary_path.key(key), key, msg));
        }
        total = total.saturating_add(value.0.len());
    }
    if total > MAX_SECRET_SIZE {
        errs.push(Error::too_long(&whole_object_path(), MAX_SECRET_SIZE));
    }
    errs
}

fn same_strings(
    a: Option<&BTreeMap<String, String>>,
    b: Option<&BTreeMap<String, String>>,
) -> bool {
    a.filter(|m| !m.is_empty()) == b.filter(|m| !m.is_empty())
}

fn same_bytes(
    a: Option<&BTreeMap<String, ByteString>>,
    b: Option<&BTreeMap<String, ByteString>>,
) -> bool {
    a.filter(|m| !m.is_empty()) == b.filter(|m| !m.is_empty())
}

/// `ValidateConfigMapUpdate`: metadata update rules; once `immutable` is
/// true, `immutable`, `data` and `binaryData` may not change; then the
/// create rules on the new object.
pub fn validate_config_map_update(new: &ConfigMap, old: &ConfigMap) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    if old.immutable == Some(true) {
        if new.immutable != Some(true) {
            errs.push(Error::forbidden(&Path::new("immutable"), IMMUTABLE_DETAIL));
        }
        if !same_strings(new.data.as_ref(), old.data.as_ref()) {
            errs.push(Error::forbidden(&Path::new("data"), IMMUTABLE_DETAIL));
        }
        if !same_bytes(new.binary_data.as_ref(), old.binary_data.as_ref()) {
            errs.push(Error::forbidden(&Path::new("binaryData"), IMMUTABLE_DETAIL));
        }
    }
    errs.append(validate_config_map(new));
    errs
}

/// The ConfigMap registry strategy (no defaults, nothing cleared).
#[derive(Clone, Copy, Debug, Default)]
pub struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    type Object = ConfigMap;

    fn validate_create(obj: &ConfigMap, _ctx: &Context<'_>) -> ErrorList {
        validate_config_map(obj)
    }

    fn validate_update(new: &ConfigMap, old: &ConfigMap, _ctx: &Context<'_>) -> ErrorList {
        validate_config_map_update(new, old)
    }

    /// ConfigMaps have no `/status`; a status write is a plain update.
    fn validate_status_update(new: &ConfigMap, old: &ConfigMap, _ctx: &Context<'_>) -> ErrorList {
        validate_config_map_update(new, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn cm(name: &str, ns: &str, data: &[(&str, String)], binary: &[(&str, &[u8])]) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                resource_version: Some("1".into()),
                ..Default::default()
            },
            data: (!data.is_empty()).then(|| {
                data.iter()
                    .map(|(k, v)| ((*k).to_owned(), v.clone()))
                    .collect()
            }),
            binary_data: (!binary.is_empty()).then(|| {
                binary
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), ByteString(v.to_vec())))
                    .collect()
            }),
            ..Default::default()
        }
    }

    /// Upstream's `TestValidateConfigMap`, with the messages kube-apiserver prints.
    #[test]
    fn validate_config_map_table() {
        let v = || "value".to_owned();
        let cases: Vec<(&str, ConfigMap, &str)> = vec![
            (
                "valid",
                cm(
                    "validname",
                    "validns",
                    &[("key", v())],
                    &[("bin", b"value")],
                ),
                "",
            ),
            (
                "max key length",
                cm("validname", "validns", &[(&"a".repeat(253), v())], &[]),
                "",
            ),
            (
                "leading dot key",
                cm("validname", "validns", &[(".ab", v())], &[]),
                "",
            ),
            (
                "empty name",
                cm("", "validns", &[], &[]),
                "metadata.name: Required value: name or generateName is required",
            ),
            (
                "invalid name",
                cm("NoUppercaseOrSpecialCharsLike=Equals", "validns", &[], &[]),
                r#"metadata.name: Invalid value: "NoUppercaseOrSpecialCharsLike=Equals": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ),
            (
                "empty ns",
                cm("validname", "", &[], &[]),
                "metadata.namespace: Required value",
            ),
            (
                "invalid key",
                cm("validname", "validns", &[("a*b", v())], &[]),
                r#"data[a*b]: Invalid value: "a*b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"#,
            ),
            (
                "dot key",
                cm("validname", "validns", &[(".", v())], &[]),
                r#"data[.]: Invalid value: ".": must not be '.'"#,
            ),
            (
                "double dot key",
                cm("validname", "validns", &[("..", v())], &[]),
                r#"data[..]: Invalid value: "..": must not be '..'"#,
            ),
            (
                "over max key length",
                cm("validname", "validns", &[(&"a".repeat(254), v())], &[]),
                "must be no more than 253 bytes",
            ),
            (
                "over max size",
                cm(
                    "validname",
                    "validns",
                    &[("key", "a".repeat(MAX_SECRET_SIZE + 1))],
                    &[],
                ),
                "[]: Too long: may not be more than 1048576 bytes",
            ),
            (
                "over max size across data and binaryData",
                cm(
                    "validname",
                    "validns",
                    &[("key", "a".repeat(MAX_SECRET_SIZE))],
                    &[("bin", b"b")],
                ),
                "[]: Too long: may not be more than 1048576 bytes",
            ),
            (
                "duplicated key",
                cm(
                    "validname",
                    "validns",
                    &[("key", "value1".into())],
                    &[("key", b"value2")],
                ),
                r#"data[key]: Invalid value: "key": duplicate of key present in binaryData"#,
            ),
            (
                "invalid binary key",
                cm("validname", "validns", &[], &[("a b", b"x")]),
                r#"binaryData[a b]: Invalid value: "a b""#,
            ),
        ];
        for (name, obj, want) in cases {
            let got = validate_config_map(&obj).to_string();
            if want.is_empty() {
                assert_eq!(got, "", "{name}");
            } else {
                assert!(got.contains(want), "{name}: {got}");
            }
        }
    }

    /// Upstream's `TestValidateConfigMapUpdate` and `TestValidateImmutableConfigMap`.
    #[test]
    fn immutable_config_map() {
        let old = {
            let mut c = cm("n", "ns", &[("a", "1".into())], &[("b", b"2")]);
            c.immutable = Some(true);
            c
        };
        let same = old.clone();
        assert_eq!(validate_config_map_update(&same, &old).to_string(), "");

        let mut changed = old.clone();
        changed.data = Some(BTreeMap::from([("a".to_owned(), "2".to_owned())]));
        changed.binary_data = None;
        changed.immutable = None;
        assert_eq!(
            validate_config_map_update(&changed, &old).to_string(),
            "[immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set, binaryData: Forbidden: field is immutable when `immutable` is set]"
        );

        // A mutable ConfigMap may become immutable and change its data in the same write.
        let mut mutable = old.clone();
        mutable.immutable = Some(false);
        let mut next = changed.clone();
        next.immutable = Some(true);
        assert_eq!(validate_config_map_update(&next, &mutable).to_string(), "");
    }
}
