//! The apimachinery string checks (`k8s.io/apimachinery/pkg/util/validation`)
//! that pod validation needs, each returning upstream's explanation strings
//! (empty = valid).

use std::net::IpAddr;

use crate::field::{Error, ErrorList, Path};
use crate::formats::{max_len_error, regex_error};

/// `InclusiveRangeError`: "must be between LO and HI, inclusive".
pub fn inclusive_range_error(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

/// `IsValidPortNum`: 1–65535.
pub fn is_valid_port_num(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![inclusive_range_error(1, 65535)]
    }
}

/// `IsValidPortName`: an IANA service name (at most 15 characters, lowercase
/// alphanumerics and single hyphens, at least one letter).
pub fn is_valid_port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push(max_len_error(15));
    }
    let charset_ok = !port.is_empty()
        && port
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !charset_ok {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !port.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

/// `IsRelaxedEnvVarName` (gate `RelaxedEnvironmentVariableValidation`, GA):
/// printable ASCII other than `=`.
pub fn is_relaxed_env_var_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.is_empty() {
        errs.push("environment variable name must be non-empty".to_owned());
    }
    if value.chars().any(|c| !(' '..='~').contains(&c) || c == '=') {
        errs.push(
            "a valid environment variable name must consist only of printable ASCII characters other than '='"
                .to_owned(),
        );
    }
    errs
}

/// `IsConfigMapKey`: `[-._a-zA-Z0-9]+`, at most 253 bytes, not `.`/`..`.
pub fn is_config_map_key(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    let ok = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    if !ok {
        errs.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if value == "." {
        errs.push("must not be '.'".into());
    } else if value == ".." {
        errs.push("must not be '..'".into());
    } else if value.starts_with("..") {
        errs.push("must not start with '..'".into());
    }
    errs
}

/// `IsHTTPHeaderName`: `[-A-Za-z0-9]+`.
pub fn is_http_header_name(value: &str) -> Vec<String> {
    if !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        Vec::new()
    } else {
        vec![regex_error(
            "a valid HTTP header must consist of alphanumeric characters or '-'",
            "[-A-Za-z0-9]+",
            &["X-Header-Name"],
        )]
    }
}

/// `IsValidUserID` / `IsValidGroupID`: 0–2147483647.
pub fn is_valid_id(id: i64) -> Vec<String> {
    if (0..=i64::from(i32::MAX)).contains(&id) {
        Vec::new()
    } else {
        vec![inclusive_range_error(0, i64::from(i32::MAX))]
    }
}

/// `IsValidIP` (field form): an IPv4 or IPv6 address.
pub fn validate_ip(path: &Path, value: &str) -> ErrorList {
    if value.parse::<IpAddr>().is_ok() {
        ErrorList::new()
    } else {
        ErrorList(vec![Error::invalid(
            path,
            value,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        )])
    }
}

/// Field errors for each message of a string check.
pub fn invalid_each(path: &Path, value: &str, msgs: Vec<String>) -> ErrorList {
    msgs.into_iter()
        .map(|m| Error::invalid(path, value, m))
        .collect()
}

/// Field errors for each message of an integer check.
pub fn invalid_each_int(path: &Path, value: i64, msgs: Vec<String>) -> ErrorList {
    msgs.into_iter()
        .map(|m| Error::invalid(path, value, m))
        .collect()
}

/// `ValidateDNS1123Label` (handwritten, origin `format=dns-label`).
pub fn validate_dns1123_label(path: &Path, value: &str) -> ErrorList {
    invalid_each(path, value, crate::formats::is_dns1123_label(value))
        .with_origin("format=dns-label")
}

/// `ValidateDNS1123Subdomain` / `NameIsDNSSubdomain` (no origin).
pub fn validate_dns1123_subdomain(path: &Path, value: &str) -> ErrorList {
    invalid_each(path, value, crate::formats::is_dns1123_subdomain(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names() {
        assert!(is_valid_port_name("http").is_empty());
        assert_eq!(
            is_valid_port_name("123"),
            ["must contain at least one letter (a-z)"]
        );
        assert_eq!(
            is_valid_port_name("a--b-"),
            [
                "must not contain consecutive hyphens",
                "must not begin or end with a hyphen"
            ]
        );
        assert_eq!(is_valid_port_name("toolongportname12").len(), 1);
    }

    #[test]
    fn env_names_and_keys() {
        assert!(is_relaxed_env_var_name("1-a b.c").is_empty());
        assert_eq!(is_relaxed_env_var_name("a=b").len(), 1);
        assert!(is_config_map_key("a.b_c-d").is_empty());
        assert_eq!(is_config_map_key("..a"), ["must not start with '..'"]);
    }
}
