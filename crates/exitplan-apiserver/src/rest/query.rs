//! Query parameters of a request (`?labelSelector=…&watch=1&dryRun=All`).

use exitplan_api::field::{self, ErrorList};
use exitplan_api::printable::is_print;
use exitplan_api::status::{GroupKind, InvalidError};

use super::errors::{ApiError, bad_request};

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

    /// The write options upstream validates for every create, update and
    /// patch (`ValidateCreateOptions` and its siblings; `kind`:
    /// `CreateOptions`, `UpdateOptions`, `PatchOptions`): `fieldManager` at
    /// most 128 bytes of printable characters (Go's `unicode.IsPrint`, one
    /// error per other character) and `fieldValidation` one of `Ignore`,
    /// `Strict`, `Warn`. Every error in one 422 `Invalid` of the options kind.
    pub fn validate_write_options(&self, kind: &'static str) -> Result<(), ApiError> {
        let mut errs = field_manager_errors(self.get("fieldManager").unwrap_or_default());
        let directive = self.get("fieldValidation").unwrap_or_default();
        if !["", "Ignore", "Strict", "Warn"].contains(&directive) {
            errs.push(field::Error::not_supported(
                &field::Path::new("fieldValidation"),
                directive,
                &["", "Ignore", "Strict", "Warn"],
            ));
        }
        if errs.is_empty() {
            return Ok(());
        }
        Err(super::errors::invalid(&InvalidError {
            kind: GroupKind {
                group: "meta.k8s.io",
                kind,
            },
            name: String::new(),
            errors: errs,
        }))
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

/// `ValidateFieldManager`: too long (more than 128 bytes), and one error
/// per character Go's `unicode.IsPrint` rejects, at its byte position.
pub fn field_manager_errors(manager: &str) -> ErrorList {
    let path = field::Path::new("fieldManager");
    let mut errs = ErrorList::new();
    if manager.len() > FIELD_MANAGER_MAX_LENGTH {
        errs.push(field::Error::too_long(&path, FIELD_MANAGER_MAX_LENGTH));
    }
    for (i, c) in manager.char_indices() {
        if !is_print(c) {
            errs.push(field::Error::invalid(
                &path,
                manager,
                format!("invalid character U+{:04X} (at position {i})", u32::from(c)),
            ));
        }
    }
    errs
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
