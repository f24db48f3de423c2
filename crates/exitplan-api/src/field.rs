//! Field-level validation errors, equivalent to apimachinery's
//! `k8s.io/apimachinery/pkg/util/validation/field` (`Path`, `Error`, `ErrorList`).
//!
//! The `Display` output is part of the API: users grep for it, and kube-apiserver
//! returns it verbatim in `Status.message` and `details.causes[].message`. Every
//! rendering rule here follows `field.Error.ErrorBody` in the upstream revision
//! that carries `Origin` (values that are not plain strings, integers or booleans
//! are rendered as JSON).

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// A path to a field inside an object, rendered like apimachinery's
/// `field.Path.String()`: `spec.containers[0].name`, `metadata.labels[app]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Path(String);

impl Path {
    /// A path rooted at `name` (`field.NewPath(name)`).
    pub fn new(name: &str) -> Self {
        Path(name.to_owned())
    }

    /// The path with a child field appended (`.name`).
    #[must_use]
    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() {
            return Path(name.to_owned());
        }
        Path(format!("{}.{name}", self.0))
    }

    /// The path with a list index appended (`[i]`).
    #[must_use]
    pub fn index(&self, i: usize) -> Self {
        Path(format!("{}[{i}]", self.0))
    }

    /// The path with a map key appended (`[key]`).
    #[must_use]
    pub fn key(&self, key: &str) -> Self {
        Path(format!("{}[{key}]", self.0))
    }

    /// The rendered path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a field is invalid; the serialized names double as `StatusCause.reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// A referenced value was not found (`FieldValueNotFound`).
    NotFound,
    /// A required value is missing (`FieldValueRequired`).
    Required,
    /// A value that must be unique is repeated (`FieldValueDuplicate`).
    Duplicate,
    /// A malformed or out-of-range value (`FieldValueInvalid`).
    Invalid,
    /// A value outside an enumeration (`FieldValueNotSupported`).
    NotSupported,
    /// A well-formed value that is not allowed here (`FieldValueForbidden`).
    Forbidden,
    /// A value that is too long (`FieldValueTooLong`).
    TooLong,
    /// A list with too many items (`FieldValueTooMany`).
    TooMany,
    /// An error not caused by user input (`InternalError`).
    Internal,
    /// A value of the wrong type (`FieldValueTypeInvalid`).
    TypeInvalid,
}

impl ErrorType {
    /// The machine-readable name (`FieldValueInvalid`, …), used as `StatusCause.reason`.
    pub fn cause_type(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The human-readable name (`Invalid value`, …) that starts every message body.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The offending value carried by an error, rendered as Go's `ErrorBody` would.
#[derive(Clone, Debug, PartialEq)]
pub enum BadValue {
    /// No value is shown (`omitValue`).
    Omit,
    /// Go `nil`: rendered as `null`.
    Null,
    /// A string, rendered Go-quoted (`"k8s.io/key"`).
    Str(String),
    /// An integer, rendered plainly (`101`).
    Int(i64),
    /// A boolean, rendered plainly (`true`).
    Bool(bool),
    /// Any other value, rendered as its JSON encoding (built by
    /// [`crate::render`], which keeps Go's field order and escaping).
    Json(String),
}

impl From<&str> for BadValue {
    fn from(s: &str) -> Self {
        BadValue::Str(s.to_owned())
    }
}
impl From<String> for BadValue {
    fn from(s: String) -> Self {
        BadValue::Str(s)
    }
}
impl From<&String> for BadValue {
    fn from(s: &String) -> Self {
        BadValue::Str(s.clone())
    }
}
impl From<i64> for BadValue {
    fn from(n: i64) -> Self {
        BadValue::Int(n)
    }
}
impl From<i32> for BadValue {
    fn from(n: i32) -> Self {
        BadValue::Int(i64::from(n))
    }
}
impl From<usize> for BadValue {
    fn from(n: usize) -> Self {
        BadValue::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}
impl From<bool> for BadValue {
    fn from(b: bool) -> Self {
        BadValue::Bool(b)
    }
}
impl<T: Into<BadValue>> From<Option<T>> for BadValue {
    fn from(v: Option<T>) -> Self {
        v.map_or(BadValue::Null, Into::into)
    }
}
impl From<&[i32]> for BadValue {
    fn from(values: &[i32]) -> Self {
        BadValue::Json(crate::render::int32s(values))
    }
}
impl From<&Time> for BadValue {
    fn from(t: &Time) -> Self {
        BadValue::Json(crate::render::time(t))
    }
}

/// One field-level validation error (`field.Error`).
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    /// Why the field is invalid.
    pub error_type: ErrorType,
    /// The rendered path of the field.
    pub field: String,
    /// The offending value.
    pub value: BadValue,
    /// Human-readable detail, appended after the value.
    pub detail: String,
    /// Which rule produced the error (`format=k8s-long-name`, `maxItems`, `immutable`, …);
    /// used by tests to match errors without comparing details, never rendered.
    pub origin: Option<String>,
}

impl Error {
    fn new(
        error_type: ErrorType,
        field: &Path,
        value: BadValue,
        detail: impl Into<String>,
    ) -> Self {
        Error {
            error_type,
            field: field.to_string(),
            value,
            detail: detail.into(),
            origin: None,
        }
    }

    /// A required value is missing (`field.Required`).
    pub fn required(field: &Path, detail: impl Into<String>) -> Self {
        Self::new(
            ErrorType::Required,
            field,
            BadValue::Str(String::new()),
            detail,
        )
    }

    /// A malformed value (`field.Invalid`).
    pub fn invalid(field: &Path, value: impl Into<BadValue>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Invalid, field, value.into(), detail)
    }

    /// A value outside an enumeration (`field.NotSupported`); `supported` is listed quoted.
    pub fn not_supported(field: &Path, value: impl Into<BadValue>, supported: &[&str]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(ErrorType::NotSupported, field, value.into(), detail)
    }

    /// A value not permitted in this situation (`field.Forbidden`).
    pub fn forbidden(field: &Path, detail: impl Into<String>) -> Self {
        Self::new(
            ErrorType::Forbidden,
            field,
            BadValue::Str(String::new()),
            detail,
        )
    }

    /// A repeated value that must be unique (`field.Duplicate`).
    pub fn duplicate(field: &Path, value: impl Into<BadValue>) -> Self {
        Self::new(ErrorType::Duplicate, field, value.into(), "")
    }

    /// A referenced value was not found (`field.NotFound`).
    pub fn not_found(field: &Path, value: impl Into<BadValue>) -> Self {
        Self::new(ErrorType::NotFound, field, value.into(), "")
    }

    /// A string longer than `max` bytes (`field.TooLong`).
    pub fn too_long(field: &Path, max: usize) -> Self {
        let unit = if max == 1 { "byte" } else { "bytes" };
        Self::too_long_detail(field, format!("may not be more than {max} {unit}"))
    }

    /// A string longer than `max` characters (`field.TooLongCharacters`).
    pub fn too_long_characters(field: &Path, max: usize) -> Self {
        let unit = if max == 1 { "character" } else { "characters" };
        Self::too_long_detail(field, format!("may not be more than {max} {unit}"))
    }

    /// A too-long value with the given detail and no value shown, for
    /// validators that keep an older wording (`field.TooLongMaxLength`: "may
    /// not be longer than N"; the old `field.TooLong`: "must have at most N
    /// bytes").
    pub fn too_long_detail(field: &Path, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::TooLong, field, BadValue::Omit, detail)
    }

    /// A list with `actual` items where at most `max` are allowed (`field.TooMany`).
    pub fn too_many(field: &Path, actual: usize, max: usize) -> Self {
        let unit = if max == 1 { "item" } else { "items" };
        Self::new(
            ErrorType::TooMany,
            field,
            BadValue::from(actual),
            format!("must have at most {max} {unit}"),
        )
    }

    /// An error not caused by user input (`field.InternalError`).
    pub fn internal(field: &Path, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        Self::new(ErrorType::Internal, field, BadValue::Null, detail)
    }

    /// The same error tagged with the rule that produced it.
    #[must_use]
    pub fn with_origin(mut self, origin: &str) -> Self {
        self.origin = Some(origin.to_owned());
        self
    }

    /// The message without the field path (`ErrorBody`), used as `StatusCause.message`.
    pub fn body(&self) -> String {
        let mut s = match self.error_type {
            ErrorType::Required
            | ErrorType::Forbidden
            | ErrorType::TooLong
            | ErrorType::Internal => self.error_type.as_str().to_owned(),
            _ => match &self.value {
                BadValue::Omit => self.error_type.as_str().to_owned(),
                BadValue::Null => format!("{}: null", self.error_type),
                BadValue::Str(v) => format!("{}: {}", self.error_type, go_quote(v)),
                BadValue::Int(v) => format!("{}: {v}", self.error_type),
                BadValue::Bool(v) => format!("{}: {v}", self.error_type),
                BadValue::Json(v) => format!("{}: {v}", self.error_type),
            },
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

impl std::error::Error for Error {}

/// An ordered list of field errors (`field.ErrorList`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErrorList(pub Vec<Error>);

impl ErrorList {
    /// An empty list.
    pub fn new() -> Self {
        ErrorList(Vec::new())
    }

    /// Appends one error.
    pub fn push(&mut self, e: Error) {
        self.0.push(e);
    }

    /// Appends every error of `other`.
    pub fn append(&mut self, other: ErrorList) {
        self.0.extend(other.0);
    }

    /// Whether there are no errors.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of errors.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Iterates over the errors in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Error> {
        self.0.iter()
    }

    /// Sets `origin` on every error (`ErrorList.WithOrigin`).
    #[must_use]
    pub fn with_origin(mut self, origin: &str) -> Self {
        for e in &mut self.0 {
            e.origin = Some(origin.to_owned());
        }
        self
    }

    /// The aggregate text (`ErrorList.ToAggregate().Error()`): one message as is,
    /// several as `[a, b]`, repeated messages shown once; `None` when empty.
    pub fn aggregate(&self) -> Option<String> {
        let mut seen: Vec<String> = Vec::new();
        for e in &self.0 {
            let msg = e.to_string();
            if !seen.contains(&msg) {
                seen.push(msg);
            }
        }
        match seen.len() {
            0 => None,
            1 => seen.pop(),
            _ => Some(format!("[{}]", seen.join(", "))),
        }
    }
}

impl From<Vec<Error>> for ErrorList {
    fn from(v: Vec<Error>) -> Self {
        ErrorList(v)
    }
}

impl FromIterator<Error> for ErrorList {
    fn from_iter<I: IntoIterator<Item = Error>>(iter: I) -> Self {
        ErrorList(iter.into_iter().collect())
    }
}

impl Extend<Error> for ErrorList {
    fn extend<I: IntoIterator<Item = Error>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

impl IntoIterator for ErrorList {
    type Item = Error;
    type IntoIter = std::vec::IntoIter<Error>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a ErrorList {
    type Item = &'a Error;
    type IntoIter = std::slice::Iter<'a, Error>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for ErrorList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.aggregate().unwrap_or_default())
    }
}

/// Quotes a string the way Go's `strconv.Quote` (and so `%q`) does: every
/// character Go's `strconv.IsPrint` rejects is escaped ([`crate::printable`]).
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if !crate::printable::is_print(c) => {
                let n = c as u32;
                if n <= 0xffff {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_like_apimachinery() {
        let p = Path::new("spec").child("containers").index(0).child("name");
        assert_eq!(p.as_str(), "spec.containers[0].name");
        assert_eq!(
            Path::new("metadata").child("labels").key("app").as_str(),
            "metadata.labels[app]"
        );
    }

    #[test]
    fn bodies_follow_error_body_rules() {
        let p = Path::new("spec").child("requester");
        let e = Error::invalid(
            &p,
            "k8s.io/key",
            "domain names *.k8s.io, *.kubernetes.io are reserved",
        );
        assert_eq!(
            e.to_string(),
            r#"spec.requester: Invalid value: "k8s.io/key": domain names *.k8s.io, *.kubernetes.io are reserved"#
        );
        assert_eq!(
            Error::required(&p, "").to_string(),
            "spec.requester: Required value"
        );
        assert_eq!(
            Error::forbidden(&p, "nope").to_string(),
            "spec.requester: Forbidden: nope"
        );
        assert_eq!(
            Error::not_supported(
                &Path::new("spec").child("intent"),
                "Invalid",
                &["Eviction", "Withdrawn"]
            )
            .to_string(),
            r#"spec.intent: Unsupported value: "Invalid": supported values: "Eviction", "Withdrawn""#
        );
        assert_eq!(
            Error::too_many(&Path::new("status").child("requesters"), 101, 100).to_string(),
            "status.requesters: Too many: 101: must have at most 100 items"
        );
        assert_eq!(
            Error::too_long(&Path::new("m"), 4000).to_string(),
            "m: Too long: may not be more than 4000 bytes"
        );
        assert_eq!(
            Error::duplicate(&Path::new("l").index(2), "x").to_string(),
            r#"l[2]: Duplicate value: "x""#
        );
        assert_eq!(
            Error::invalid(&p, 5_i32, "").to_string(),
            "spec.requester: Invalid value: 5"
        );
        assert_eq!(
            Error::invalid(&p, None::<i32>, "d").to_string(),
            "spec.requester: Invalid value: null: d"
        );
    }

    #[test]
    fn aggregate_matches_utilerrors() {
        let p = Path::new("a");
        let mut l = ErrorList::new();
        assert_eq!(l.aggregate(), None);
        l.push(Error::required(&p, ""));
        assert_eq!(l.aggregate().as_deref(), Some("a: Required value"));
        l.push(Error::required(&p, ""));
        assert_eq!(l.aggregate().as_deref(), Some("a: Required value"));
        l.push(Error::forbidden(&p, "x"));
        assert_eq!(
            l.aggregate().as_deref(),
            Some("[a: Required value, a: Forbidden: x]")
        );
    }

    #[test]
    fn go_quote_escapes() {
        assert_eq!(go_quote("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\x01é\"");
        assert_eq!(go_quote("a\u{a0}b"), "\"a\\u00a0b\"");
        assert_eq!(go_quote("a b"), "\"a b\"");
        // Format, private-use and unassigned characters are escaped too, as
        // Go's strconv.IsPrint rejects them; printable non-ASCII is kept.
        assert_eq!(go_quote("a\u{200b}b"), "\"a\\u200bb\"");
        assert_eq!(
            go_quote("\u{feff}\u{e000}\u{378}"),
            "\"\\ufeff\\ue000\\u0378\""
        );
        assert_eq!(go_quote("\u{e0001}"), "\"\\U000e0001\"");
        assert_eq!(go_quote("日本\u{301}😀"), "\"日本\u{301}😀\"");
    }
}
