//! String formats shared by every validator, mirroring apimachinery's
//! `pkg/api/validate/content` (messages included) and the declarative
//! `format=` validators built on it (`k8s-long-name`, `k8s-uuid`,
//! `k8s-prefixed-label-key`, …).
//!
//! The `is_*` functions return upstream's explanation strings (empty = valid);
//! the `validate_*` functions wrap them into [`Error`]s at a path with the
//! declarative `origin`.

use crate::field::{Error, ErrorList, Path};

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const UUID_ERR: &str = "must be a lowercase UUID in 8-4-4-4-12 format";

/// Maximum length of a DNS-1123 subdomain.
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// Maximum length of a DNS-1123 label.
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
/// Maximum length of the name part of a label key / qualified name.
pub const LABEL_KEY_NAME_MAX_LENGTH: usize = 63;
/// Maximum length of a label value.
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;

/// `RegexError`: `"<msg> (e.g. 'a' or 'b', regex used for validation is '<re>')"`.
pub fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{re}')");
    }
    let mut s = format!("{msg} (e.g. ");
    for (i, ex) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push('\'');
        s.push_str(ex);
        s.push_str("', ");
    }
    s.push_str("regex used for validation is '");
    s.push_str(re);
    s.push_str("')");
    s
}

/// `MaxLenError`: "must be no more than N bytes".
pub fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

/// `EmptyError`: "must be non-empty".
pub fn empty_error() -> &'static str {
    "must be non-empty"
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// Matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn matches_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => {
            is_lower_alnum(f)
                && is_lower_alnum(l)
                && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// Matches the DNS-1123 subdomain regex (labels joined by dots).
fn matches_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(matches_dns_label)
}

/// Matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn matches_label_key_name(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => {
            is_alnum(f)
                && is_alnum(l)
                && b.iter()
                    .all(|&c| is_alnum(c) || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `IsDNS1123Label`: a lowercase RFC 1123 label (`my-name`).
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !matches_dns_label(value) {
        if matches_dns_subdomain(value) {
            errs.push("must not contain dots".to_owned());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_ERR,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `IsDNS1035Label`: like a DNS-1123 label but starting with a letter
/// (Service names).
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    let starts_with_letter = value.bytes().next().is_some_and(|b| b.is_ascii_lowercase());
    if !starts_with_letter || !matches_dns_label(value) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsDNS1123Subdomain`: a lowercase RFC 1123 subdomain (`example.com`).
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_dns_subdomain(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

fn is_prefixed_name(value: &str, what: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
            } else {
                errs.extend(
                    is_dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "{what} {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_ERR, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > LABEL_KEY_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(LABEL_KEY_NAME_MAX_LENGTH)
        ));
    }
    if !matches_label_key_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_ERR,
                LABEL_KEY_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `IsLabelKey`: an optionally prefixed label key (`example.com/MyName`).
pub fn is_label_key(value: &str) -> Vec<String> {
    is_prefixed_name(value, "a valid label key")
}

/// `IsQualifiedName` (handwritten validation): same rules as a label key, used
/// for condition types and annotation keys.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    is_prefixed_name(value, "a qualified name")
}

/// `IsPrefixedLabelKey`: a label key whose prefix is mandatory (`acme.io/drain`).
pub fn is_prefixed_label_key(value: &str) -> Vec<String> {
    let errs = is_label_key(value);
    if !errs.is_empty() {
        return errs;
    }
    if value.split('/').count() != 2 {
        return vec!["must include a prefix (e.g. 'example.com/key')".to_owned()];
    }
    Vec::new()
}

/// `IsLabelValue`: empty, or up to 63 label-key-name characters.
pub fn is_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !value.is_empty() && !matches_label_key_name(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// Whether `value` is a lowercase RFC 4122 UUID in 8-4-4-4-12 form.
pub fn is_uuid(value: &str) -> bool {
    value.len() == 36
        && value.bytes().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
        })
}

fn wrap(path: &Path, value: &str, msgs: Vec<String>, origin: &str) -> ErrorList {
    msgs.into_iter()
        .map(|m| Error::invalid(path, value, m).with_origin(origin))
        .collect()
}

/// Declarative `format=k8s-long-name` (DNS subdomain).
pub fn validate_long_name(path: &Path, value: &str) -> ErrorList {
    wrap(
        path,
        value,
        is_dns1123_subdomain(value),
        "format=k8s-long-name",
    )
}

/// Declarative `format=k8s-short-name` (DNS label).
pub fn validate_short_name(path: &Path, value: &str) -> ErrorList {
    wrap(
        path,
        value,
        is_dns1123_label(value),
        "format=k8s-short-name",
    )
}

/// Declarative `format=k8s-label-key`.
pub fn validate_label_key(path: &Path, value: &str) -> ErrorList {
    wrap(path, value, is_label_key(value), "format=k8s-label-key")
}

/// Declarative `format=k8s-prefixed-label-key`.
pub fn validate_prefixed_label_key(path: &Path, value: &str) -> ErrorList {
    wrap(
        path,
        value,
        is_prefixed_label_key(value),
        "format=k8s-prefixed-label-key",
    )
}

/// Declarative `format=k8s-uuid`.
pub fn validate_uuid(path: &Path, value: &str) -> ErrorList {
    if is_uuid(value) {
        ErrorList::new()
    } else {
        ErrorList(vec![
            Error::invalid(path, value, UUID_ERR).with_origin("format=k8s-uuid"),
        ])
    }
}

/// Handwritten `ValidateLabelName`/qualified-name check (no origin).
pub fn validate_qualified_name(path: &Path, value: &str) -> ErrorList {
    is_qualified_name(value)
        .into_iter()
        .map(|m| Error::invalid(path, value, m))
        .collect()
}

/// The detail used when a name uses a reserved domain (§2.2).
pub const RESERVED_DOMAIN_DETAIL: &str = "domain names *.k8s.io, *.kubernetes.io are reserved";

/// Whether the domain of `value` (the part before the first `/`) is `k8s.io`,
/// `kubernetes.io` or a subdomain of either — compared case-insensitively,
/// after trimming whitespace and trailing dots (spec §2.2).
pub fn has_reserved_domain(value: &str) -> bool {
    let domain = value.split('/').next().unwrap_or_default();
    let domain = domain.trim().to_lowercase();
    let domain = domain.trim_end_matches('.');
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|r| domain == *r || domain.ends_with(&format!(".{r}")))
}

/// The reserved-domain rule as an error at `path` (spec §2.2).
pub fn validate_not_reserved_domain(path: &Path, value: &str) -> ErrorList {
    if has_reserved_domain(value) {
        ErrorList(vec![Error::invalid(path, value, RESERVED_DOMAIN_DETAIL)])
    } else {
        ErrorList::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_label_keys_follow_the_format_table() {
        let a253 = "a".repeat(253);
        for ok in [
            "simple.com/simple".to_owned(),
            "1-num.2-num.com/3-num".to_owned(),
            "1.2.3.4/5678".to_owned(),
            "example.com/Uppercase_Is_OK_123".to_owned(),
            format!("{a253}/{}", "b".repeat(63)),
        ] {
            assert!(
                is_prefixed_label_key(&ok).is_empty(),
                "{ok} should be valid"
            );
        }
        for bad in [
            "simple".to_owned(),
            "1234".to_owned(),
            "Example.com/abc".to_owned(),
            "example_com/abc".to_owned(),
            "example.com/".to_owned(),
            "/simple".to_owned(),
            "only/one/slash".to_owned(),
            "a".repeat(64),
            "a".repeat(63),
            format!("{}/abc", "a".repeat(254)),
        ] {
            assert!(
                !is_prefixed_label_key(&bad).is_empty(),
                "{bad} should be invalid"
            );
        }
    }

    #[test]
    fn reserved_domains() {
        for r in [
            "k8s.io/key",
            "dev.k8s.io",
            "Dev.K8s.io/path",
            "dev.kubernetes.io. ",
            ".k8s.io",
            "k8s.io.",
            "dev.k8s.io...",
            "k8s.io./path",
            " dev.kubernetes.io",
            "dev.Kubernetes.io/with/a/long/path",
        ] {
            assert!(has_reserved_domain(r), "{r:?} should be reserved");
        }
        let long = format!("{}.k8s.io", "a".repeat(64));
        assert!(has_reserved_domain(&long));
        for ok in [
            "dev-k8s.io/path",
            "foo.dev-k8s.io",
            "dev-kubernetes.io",
            "example.co.uk",
            "10.0.0.1",
            "",
        ] {
            assert!(!has_reserved_domain(ok), "{ok:?} should not be reserved");
        }
    }

    #[test]
    fn uuids() {
        assert!(is_uuid("0a1b2c3d-4e5f-6789-abcd-ef0123456789"));
        assert!(!is_uuid("0A1B2C3D-4E5F-6789-ABCD-EF0123456789"));
        assert!(!is_uuid("invalid-uid"));
    }

    #[test]
    fn subdomain_message_is_upstreams() {
        let e = validate_long_name(&Path::new("metadata").child("name"), "-invalid-name");
        assert_eq!(
            e.to_string(),
            "metadata.name: Invalid value: \"-invalid-name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        );
    }
}
