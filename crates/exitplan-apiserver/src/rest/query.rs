//! Query parameters of a request (`?labelSelector=…&watch=1&dryRun=All`).

use super::errors::{ApiError, bad_request, invalid_options};

/// Longest `fieldManager` (`FieldManagerMaxLength`).
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// The decoded query string, in order, repeated keys kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Decodes a raw query string (`None`: no query).
    pub fn parse(raw: Option<&str>) -> Query {
        let Some(raw) = raw else {
            return Query::default();
        };
        Query(
            raw.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| match p.split_once('=') {
                    Some((k, v)) => (decode(k), decode(v)),
                    None => (decode(p), String::new()),
                })
                .collect(),
        )
    }

    /// The first value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The first non-empty value of `key`.
    pub fn non_empty(&self, key: &str) -> Option<&str> {
        self.get(key).filter(|v| !v.is_empty())
    }

    /// Every value of `key`.
    pub fn all(&self, key: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// A boolean parameter as Go's `strconv.ParseBool` reads it; absent is false.
    pub fn flag(&self, key: &str) -> Result<bool, ApiError> {
        match self.get(key) {
            None => Ok(false),
            Some("1" | "t" | "T" | "true" | "TRUE" | "True") => Ok(true),
            Some("" | "0" | "f" | "F" | "false" | "FALSE" | "False") => Ok(false),
            Some(other) => Err(bad_request(format!(
                "invalid value {other:?} for query parameter {key:?}"
            ))),
        }
    }

    /// An integer parameter.
    pub fn int(&self, key: &str) -> Result<Option<i64>, ApiError> {
        match self.non_empty(key) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                bad_request(format!("invalid value {v:?} for query parameter {key:?}"))
            }),
        }
    }

    /// `fieldManager` as upstream's `ValidateFieldManager` checks it for
    /// every write (`kind`: `CreateOptions`, `UpdateOptions`,
    /// `PatchOptions`): at most 128 bytes, printable characters only; 422
    /// `Invalid` of the options kind otherwise.
    pub fn validate_field_manager(&self, kind: &str) -> Result<(), ApiError> {
        let Some(manager) = self.get("fieldManager") else {
            return Ok(());
        };
        if manager.len() > FIELD_MANAGER_MAX_LENGTH {
            return Err(invalid_options(
                kind,
                "fieldManager",
                "FieldValueTooLong",
                &format!("Too long: may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"),
            ));
        }
        if let Some((i, c)) = manager
            .char_indices()
            .find(|(_, c)| c.is_control() || (c.is_whitespace() && *c != ' '))
        {
            return Err(invalid_options(
                kind,
                "fieldManager",
                "FieldValueInvalid",
                &format!(
                    "Invalid value: {}: invalid character U+{:04X} (at position {i})",
                    exitplan_api::field::go_quote(manager),
                    u32::from(c)
                ),
            ));
        }
        Ok(())
    }

    /// `dryRun`: only `All` is accepted, as upstream (`dryRun` values other
    /// than `All` are a 400).
    pub fn dry_run(&self) -> Result<bool, ApiError> {
        let values = self.all("dryRun");
        for v in &values {
            if v != "All" {
                return Err(bad_request(format!(
                    "Invalid dry run value: [{}]: supported values: \"All\"",
                    values.join(" ")
                )));
            }
        }
        Ok(!values.is_empty())
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `application/x-www-form-urlencoded` decoding (`+` is a space).
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_and_reads() {
        let q = Query::parse(Some(
            "labelSelector=app%3Dweb%2Ctier+in+(a)&watch=1&x&dryRun=All",
        ));
        assert_eq!(q.get("labelSelector"), Some("app=web,tier in (a)"));
        assert_eq!(q.flag("watch").ok(), Some(true));
        assert_eq!(q.get("x"), Some(""));
        assert_eq!(q.dry_run().ok(), Some(true));
        assert!(Query::parse(Some("dryRun=Some")).dry_run().is_err());
        assert_eq!(decode("%zz%4"), "%zz%4");
    }
}
