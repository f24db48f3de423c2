//! The string formats kube-openapi's default registry (`strfmt.Default`)
//! checks in custom resources: `byte`, `date`, `date-time`, `duration`,
//! `uuid*`, `ipv4`, `ipv6`, `cidr`, `mac`, `hostname`, `email`, `uri`,
//! `bsonobjectid`, `hexcolor`, `rgbcolor`, `password`. Other formats
//! (`int32`, `float`, … on strings, or unknown names) are not checked.

use std::net::{Ipv4Addr, Ipv6Addr};

/// Whether `s` is valid for `format`: `None` for a format not in the registry.
pub fn check(format: &str, s: &str) -> Option<bool> {
    Some(match format {
        "byte" => is_base64(s),
        "date" => is_date(s),
        "date-time" | "datetime" => is_date_time(s),
        "duration" => is_duration(s),
        "uuid" => is_uuid(s, None),
        "uuid3" => is_uuid(s, Some('3')),
        "uuid4" => is_uuid(s, Some('4')),
        "uuid5" => is_uuid(s, Some('5')),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(s),
        "mac" => is_mac(s),
        "hostname" => is_hostname(s),
        "email" => is_email(s),
        "uri" => is_uri(s),
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "hexcolor" => is_hexcolor(s),
        "rgbcolor" => is_rgbcolor(s),
        "password" => true,
        _ => return None,
    })
}

fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(4) {
        return false;
    }
    let pad = b.iter().rev().take_while(|&&c| c == b'=').count();
    pad <= 2
        && b[..b.len() - pad]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
}

fn is_date(s: &str) -> bool {
    s.len() == 10 && s.parse::<jiff::civil::Date>().is_ok() && s.as_bytes().get(4) == Some(&b'-')
}

/// strfmt's `DateTimeFormats`: RFC 3339 (also without the offset colon),
/// local `2006-01-02T15:04:05`, reduced precision `2006-01-02T15:04[Z]`
/// and `2006-01-02 15:04:05`.
fn is_date_time(s: &str) -> bool {
    if s.len() < 16
        || s.as_bytes()
            .get(10)
            .is_none_or(|b| *b != b'T' && *b != b' ')
    {
        return false;
    }
    if s.parse::<jiff::Timestamp>().is_ok() {
        return true;
    }
    // A `+hhmm` offset: add the colon RFC 3339 wants.
    let b = s.as_bytes();
    if b.len() > 5
        && matches!(b[b.len() - 5], b'+' | b'-')
        && b[b.len() - 4..].iter().all(u8::is_ascii_digit)
    {
        let fixed = format!("{}:{}", &s[..s.len() - 2], &s[s.len() - 2..]);
        if fixed.parse::<jiff::Timestamp>().is_ok() {
            return true;
        }
    }
    let local = s.strip_suffix('Z').unwrap_or(s).replacen(' ', "T", 1);
    local.parse::<jiff::civil::DateTime>().is_ok() && !local.contains(['+', 'z'])
}

/// Go's `time.ParseDuration` units plus kube-openapi's `d` and `w`.
fn is_duration(s: &str) -> bool {
    let t = s.trim();
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    if t.is_empty() {
        return false;
    }
    if t == "0" {
        return true;
    }
    let mut rest = t;
    while !rest.is_empty() {
        let num_len = rest
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        if num_len == 0 {
            return false;
        }
        rest = rest[num_len..].trim_start();
        let unit_len = rest
            .chars()
            .take_while(|c| c.is_alphabetic())
            .map(char::len_utf8)
            .sum::<usize>();
        let unit = &rest[..unit_len];
        if !matches!(
            unit,
            "ns" | "us" | "µs" | "ms" | "s" | "m" | "h" | "d" | "w"
        ) {
            return false;
        }
        rest = rest[unit_len..].trim_start();
    }
    true
}

fn is_uuid(s: &str, version: Option<char>) -> bool {
    let b = s.as_bytes();
    if b.len() != 36 {
        return false;
    }
    let groups_ok = s.split('-').map(str::len).eq([8, 4, 4, 4, 12])
        && s.split('-')
            .all(|g| g.bytes().all(|c| c.is_ascii_hexdigit()));
    if !groups_ok {
        return false;
    }
    match version {
        None => true,
        Some(v) => {
            let variant_ok = matches!(b[19], b'8' | b'9' | b'a' | b'b' | b'A' | b'B');
            char::from(b[14]) == v && variant_ok
        }
    }
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    if ip.parse::<Ipv4Addr>().is_ok() {
        bits <= 32
    } else {
        ip.parse::<Ipv6Addr>().is_ok() && bits <= 128
    }
}

fn is_mac(s: &str) -> bool {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    let dotted: Vec<&str> = s.split('.').collect();
    let hex = |p: &&str, n: usize| p.len() == n && p.bytes().all(|c| c.is_ascii_hexdigit());
    (matches!(parts.len(), 6 | 8 | 20) && parts.iter().all(|p| hex(p, 2)))
        || (matches!(dotted.len(), 3 | 4 | 10) && dotted.iter().all(|p| hex(p, 4)))
}

fn is_hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.trim_end_matches('.').split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    !local.is_empty() && !local.contains(char::is_whitespace) && is_hostname(domain)
}

fn is_uri(s: &str) -> bool {
    if s.starts_with('/') {
        return true;
    }
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !s.contains(char::is_whitespace)
}

fn is_hexcolor(s: &str) -> bool {
    s.strip_prefix('#')
        .is_some_and(|h| matches!(h.len(), 3 | 6) && h.bytes().all(|c| c.is_ascii_hexdigit()))
}

fn is_rgbcolor(s: &str) -> bool {
    let Some(inner) = s.strip_prefix("rgb(").and_then(|r| r.strip_suffix(')')) else {
        return false;
    };
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    parts.len() == 3 && parts.iter().all(|p| p.parse::<u8>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_table() {
        let cases = [
            ("byte", "aGVsbG8=", Some(true)),
            ("byte", "not base64!", Some(false)),
            ("date", "2026-11-29", Some(true)),
            ("date", "2026-13-01", Some(false)),
            ("date-time", "2026-11-29T10:00:00Z", Some(true)),
            ("date-time", "2026-11-29", Some(false)),
            ("date-time", "2026-11-29T10:00:00.123+0100", Some(true)),
            ("date-time", "2026-11-29T10:00:00", Some(true)),
            ("date-time", "2026-11-29T10:00Z", Some(true)),
            ("date-time", "2026-11-29 10:00:00", Some(true)),
            ("date-time", "2026-11-29Tnoon", Some(false)),
            ("duration", "1h30m", Some(true)),
            ("duration", "3d", Some(true)),
            ("duration", "soon", Some(false)),
            ("uuid", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", Some(true)),
            ("uuid4", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", Some(false)),
            ("ipv4", "10.0.0.1", Some(true)),
            ("ipv4", "10.0.0.256", Some(false)),
            ("ipv6", "::1", Some(true)),
            ("cidr", "10.0.0.0/8", Some(true)),
            ("cidr", "10.0.0.0/33", Some(false)),
            ("mac", "00:1a:2b:3c:4d:5e", Some(true)),
            ("hostname", "example.com", Some(true)),
            ("hostname", "-bad", Some(false)),
            ("email", "a@example.com", Some(true)),
            ("uri", "https://example.com/x", Some(true)),
            ("uri", "no scheme", Some(false)),
            ("hexcolor", "#ffaa00", Some(true)),
            ("rgbcolor", "rgb(1, 2, 3)", Some(true)),
            ("int32", "anything", None),
            ("k8s-unknown", "x", None),
        ];
        for (format, value, want) in cases {
            assert_eq!(check(format, value), want, "{format} {value:?}");
        }
    }
}
