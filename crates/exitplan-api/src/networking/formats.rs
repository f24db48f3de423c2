//! The string formats networking validation needs beyond [`crate::formats`]:
//! DNS-1035 labels (Service names), wildcard DNS subdomains (Ingress hosts),
//! domain-prefixed paths (IngressClass controllers) and CIDRs
//! (NetworkPolicy `ipBlock`), with apimachinery's messages.

use std::net::IpAddr;

use crate::field::{Error, ErrorList, Path};
use crate::formats::{
    DNS1123_SUBDOMAIN_MAX_LENGTH, is_dns1123_subdomain, max_len_error, regex_error,
};

/// `DNS1035LabelMaxLength`.
pub const DNS1035_LABEL_MAX_LENGTH: usize = 63;
const WILDCARD_FMT: &str = r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const WILDCARD_ERR: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";
const HTTP_PATH_FMT: &str = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+";
/// The message of an invalid CIDR.
pub const CIDR_ERR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

pub use crate::formats::is_dns1035_label;

/// `IsWildcardDNS1123Subdomain`: `*.` followed by a DNS subdomain.
pub fn is_wildcard_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    let ok = value.strip_prefix("*.").is_some_and(|rest| {
        rest.len() <= DNS1123_SUBDOMAIN_MAX_LENGTH && is_dns1123_subdomain(rest).is_empty()
    });
    if !ok {
        errs.push(regex_error(WILDCARD_ERR, WILDCARD_FMT, &["*.example.com"]));
    }
    errs
}

/// `IsDomainPrefixedPath`: `host/path` with a DNS-subdomain host and an
/// HTTP path.
pub fn validate_domain_prefixed_path(path: &Path, value: &str) -> ErrorList {
    if value.is_empty() {
        return ErrorList(vec![Error::required(path, "")]);
    }
    let Some((host, rest)) = value
        .split_once('/')
        .filter(|(h, r)| !h.is_empty() && !r.is_empty())
    else {
        return ErrorList(vec![Error::invalid(
            path,
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )]);
    };
    let mut errs: ErrorList = is_dns1123_subdomain(host)
        .into_iter()
        .map(|m| Error::invalid(path, host, m))
        .collect();
    let valid_path = rest
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&c));
    if !valid_path {
        errs.push(Error::invalid(
            path,
            rest,
            regex_error("must be a valid path", HTTP_PATH_FMT, &[]),
        ));
    }
    errs
}

/// `netutils.ParseIPSloppy`: an IP address, IPv4 octets may carry leading
/// zeros (the `StrictIPCIDRValidation` gate is off in v1.37).
pub fn parse_ip_sloppy(value: &str) -> Option<IpAddr> {
    if let Ok(ip) = value.parse::<IpAddr>() {
        return Some(ip);
    }
    let octets: Vec<&str> = value.split('.').collect();
    if octets.len() != 4 {
        return None;
    }
    let mut bytes = [0u8; 4];
    for (b, o) in bytes.iter_mut().zip(&octets) {
        if o.is_empty() || o.len() > 3 || !o.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        *b = o.parse().ok()?;
    }
    Some(IpAddr::from(bytes))
}

/// `IsValidIPForLegacyField` without strict validation: an IP address
/// (sloppy), or one of `allowed` (values the stored object already had).
pub fn validate_ip_sloppy(path: &Path, value: &str, allowed: &[&str]) -> ErrorList {
    if allowed.contains(&value) || parse_ip_sloppy(value).is_some() {
        ErrorList::new()
    } else {
        ErrorList(vec![Error::invalid(
            path,
            value,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        )])
    }
}

/// A parsed CIDR (`netutils.ParseCIDRSloppy`): the address and the prefix
/// length; host bits and leading zeros are allowed.
pub fn parse_cidr(value: &str) -> Option<(IpAddr, u8)> {
    let (ip, bits) = value.split_once('/')?;
    let ip = parse_ip_sloppy(ip)?;
    if bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) || bits.len() > 3 {
        return None;
    }
    let bits: u8 = bits.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some((ip, bits))
}

/// `IsValidCIDRForLegacyField`: a CIDR, or one of `allowed` (values the
/// stored object already had).
pub fn validate_cidr(path: &Path, value: &str, allowed: &[String]) -> ErrorList {
    if allowed.iter().any(|a| a == value) || parse_cidr(value).is_some() {
        ErrorList::new()
    } else {
        ErrorList(vec![Error::invalid(path, value, CIDR_ERR)])
    }
}

fn bits_of(ip: IpAddr) -> (u128, u8) {
    match ip {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    }
}

/// Whether `inner` is a strict subset of `outer` (same family, a longer
/// prefix, its address inside `outer`).
pub fn is_strict_subset(outer: (IpAddr, u8), inner: (IpAddr, u8)) -> bool {
    let ((o, width), (i, iwidth)) = (bits_of(outer.0), bits_of(inner.0));
    if width != iwidth || outer.1 >= inner.1 {
        return false;
    }
    let shift = u32::from(width - outer.1);
    let mask = |v: u128| if shift >= 128 { 0 } else { v >> shift };
    mask(o) == mask(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(is_dns1035_label("my-svc").is_empty());
        assert_eq!(is_dns1035_label("1svc").len(), 1);
        assert!(is_wildcard_dns1123_subdomain("*.example.com").is_empty());
        assert_eq!(
            is_wildcard_dns1123_subdomain("*.*.example.com"),
            [regex_error(WILDCARD_ERR, WILDCARD_FMT, &["*.example.com"])]
        );
        assert!(
            validate_domain_prefixed_path(&Path::new("c"), "example.com/ingress-nginx").is_empty()
        );
        assert_eq!(
            validate_domain_prefixed_path(&Path::new("c"), "nginx").to_string(),
            r#"c: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")"#
        );
        let p = |s: &str| parse_cidr(s).expect("cidr");
        assert!(is_strict_subset(p("192.168.0.0/16"), p("192.168.1.0/24")));
        assert!(!is_strict_subset(p("192.168.0.0/16"), p("192.168.0.0/16")));
        assert!(!is_strict_subset(p("192.168.0.0/16"), p("10.0.0.0/24")));
        assert!(parse_cidr("192.168.0.0/33").is_none());
        assert!(parse_cidr("::/0").is_some());
        assert!(
            parse_cidr("010.0.0.0/08").is_some(),
            "sloppy, as upstream without StrictIPCIDRValidation"
        );
        assert!(parse_cidr("10.0.0.256/8").is_none());
    }
}
