//! The `resourceVersion` and `resourceVersionMatch` query parameters of a
//! read (get, list, watch, deletecollection), checked where and as
//! kube-apiserver checks them:
//!
//! * the list and watch options first (`ValidateListOptions` in apimachinery:
//!   422 `ListOptions.meta.k8s.io "" is invalid: …` with every error found);
//! * then the value itself, which only the storage layer reads
//!   (`APIObjectVersioner.ParseResourceVersion`, a Go `strconv.ParseUint`).
//!   Its error reaches the client in two shapes, by the path the read takes
//!   through the watch cache: reads served from the cache (get, watch, a
//!   plain or `NotOlderThan` list) pass the storage error through unchanged,
//!   which kube-apiserver answers 500 with no reason and the message
//!   `resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc":
//!   invalid syntax`; lists delegated to etcd (`Exact`, a legacy exact list
//!   with `limit`, `continue`) answer 400 `BadRequest` `invalid resource
//!   version: <the same text>`.

use exitplan_api::field::{self, ErrorList, Path};
use exitplan_api::status::{GroupKind, InvalidError};

use super::errors::{ApiError, bad_request, failure};
use super::query::Query;

/// `resourceVersionMatch=Exact`.
pub const EXACT: &str = "Exact";
/// `resourceVersionMatch=NotOlderThan`.
pub const NOT_OLDER_THAN: &str = "NotOlderThan";

/// Go's `strconv.ParseUint(text, 10, 64)`: the value, or the error text
/// (`strconv.ParseUint: parsing "abc": invalid syntax`, `… value out of
/// range`). Digits only: no sign, no spaces, no underscores; the first
/// problem from the left decides which error.
pub fn parse_uint(text: &str) -> Result<u64, String> {
    let fail = |why: &str| {
        format!(
            "strconv.ParseUint: parsing {}: {why}",
            field::go_quote(text)
        )
    };
    if text.is_empty() {
        return Err(fail("invalid syntax"));
    }
    let mut n: u64 = 0;
    for b in text.bytes() {
        if !b.is_ascii_digit() {
            return Err(fail("invalid syntax"));
        }
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(b - b'0')))
            .ok_or_else(|| fail("value out of range"))?;
    }
    Ok(n)
}

/// `ParseResourceVersion`: `""` and `"0"` are 0; otherwise the number, or
/// the field error `resourceVersion: Invalid value: "abc": strconv.…`.
pub fn parse(text: &str) -> Result<u64, String> {
    if text.is_empty() || text == "0" {
        return Ok(0);
    }
    parse_uint(text)
        .map_err(|why| field::Error::invalid(&Path::new("resourceVersion"), text, why).to_string())
}

/// A resourceVersion read through the watch cache: the storage error
/// passed through, which kube-apiserver answers 500 with no reason.
pub fn parse_cached(text: &str) -> Result<u64, ApiError> {
    parse(text).map_err(|e| failure(500, "", e, None))
}

/// A resourceVersion read by a list delegated to etcd: 400 `BadRequest`
/// `invalid resource version: …`.
pub fn parse_delegated(text: &str) -> Result<u64, ApiError> {
    parse(text).map_err(|e| bad_request(format!("invalid resource version: {e}")))
}

/// 422 `Invalid` of `ListOptions` (the meta.k8s.io options kind).
fn invalid_list_options(errors: ErrorList) -> ApiError {
    super::errors::invalid(&InvalidError {
        kind: GroupKind {
            group: "meta.k8s.io",
            kind: "ListOptions",
        },
        name: String::new(),
        errors,
    })
}

/// apimachinery's `ValidateListOptions` for a list (`watch` false) or a
/// watch, with the WatchList feature on (its default): every error, in
/// upstream's order, as one 422.
pub fn validate_list_options(query: &Query, watch: bool) -> Result<(), ApiError> {
    let rv = query.get("resourceVersion").unwrap_or_default();
    let matching = query.get("resourceVersionMatch").unwrap_or_default();
    let cont = query.get("continue").unwrap_or_default();
    let send_initial = query.get("sendInitialEvents").is_some();
    let path = Path::new("resourceVersionMatch");
    let mut errs = ErrorList::new();
    if watch {
        if send_initial && matching != NOT_OLDER_THAN {
            errs.push(field::Error::forbidden(
                &path,
                format!(
                    "sendInitialEvents requires setting resourceVersionMatch to {NOT_OLDER_THAN}"
                ),
            ));
        }
        if !matching.is_empty() {
            if !send_initial {
                errs.push(field::Error::forbidden(
                    &path,
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if matching != NOT_OLDER_THAN {
                errs.push(field::Error::not_supported(
                    &path,
                    matching,
                    &[NOT_OLDER_THAN],
                ));
            }
            if !cont.is_empty() {
                errs.push(field::Error::forbidden(
                    &path,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
    } else {
        if !matching.is_empty() {
            if rv.is_empty() {
                errs.push(field::Error::forbidden(
                    &path,
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if !cont.is_empty() {
                errs.push(field::Error::forbidden(
                    &path,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if matching != EXACT && matching != NOT_OLDER_THAN {
                errs.push(field::Error::not_supported(
                    &path,
                    matching,
                    &[EXACT, NOT_OLDER_THAN, ""],
                ));
            }
            if matching == EXACT && rv == "0" {
                errs.push(field::Error::forbidden(
                    &path,
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if send_initial {
            errs.push(field::Error::forbidden(
                &Path::new("sendInitialEvents"),
                "sendInitialEvents is forbidden for list",
            ));
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(invalid_list_options(errs))
    }
}

/// Whether the watch cache hands a list to etcd (`shouldDelegateList`):
/// `Exact`, a legacy exact list (`limit` with a non-zero resourceVersion and
/// no match) and a `continue`d list. Only these read the resourceVersion as
/// etcd does (400 when it is not a number).
pub fn list_is_delegated(query: &Query, limit: i64) -> bool {
    let rv = query.get("resourceVersion").unwrap_or_default();
    match query.get("resourceVersionMatch").unwrap_or_default() {
        EXACT => true,
        NOT_OLDER_THAN => false,
        "" => {
            (limit > 0 && !rv.is_empty() && rv != "0")
                || !query.get("continue").unwrap_or_default().is_empty()
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(raw: &str) -> Query {
        Query::parse(Some(raw))
    }

    /// Go's `strconv.ParseUint` table (`atoi_test.go`, base 10), as far as
    /// a resourceVersion can carry it.
    #[test]
    fn parses_unsigned_integers_as_go_does() {
        let cases: &[(&str, Result<u64, &str>)] = &[
            ("", Err("invalid syntax")),
            ("0", Ok(0)),
            ("1", Ok(1)),
            ("12345", Ok(12345)),
            ("012345", Ok(12345)),
            ("12345x", Err("invalid syntax")),
            ("98765432100", Ok(98_765_432_100)),
            ("18446744073709551615", Ok(u64::MAX)),
            ("18446744073709551616", Err("value out of range")),
            ("18446744073709551620", Err("value out of range")),
            ("1_2_3_4_5", Err("invalid syntax")),
            ("_12345", Err("invalid syntax")),
            ("1__2345", Err("invalid syntax")),
            ("12345_", Err("invalid syntax")),
            ("-0", Err("invalid syntax")),
            ("-1", Err("invalid syntax")),
            ("+1", Err("invalid syntax")),
            (" 1", Err("invalid syntax")),
            ("0x10", Err("invalid syntax")),
            // The first problem from the left decides.
            ("99999999999999999999x", Err("value out of range")),
            ("x99999999999999999999", Err("invalid syntax")),
        ];
        for (text, want) in cases {
            let want = want.map_err(|why| {
                format!(
                    "strconv.ParseUint: parsing {}: {why}",
                    field::go_quote(text)
                )
            });
            assert_eq!(parse_uint(text), want, "{text:?}");
        }
    }

    /// `APIObjectVersioner.ParseResourceVersion` (`api_object_versioner_test.go`
    /// and the error upstream answers for `resourceVersion=abc`).
    #[test]
    fn parses_resource_versions_as_the_versioner_does() {
        assert_eq!(parse(""), Ok(0));
        assert_eq!(parse("0"), Ok(0));
        assert_eq!(parse("00"), Ok(0));
        assert_eq!(parse("42"), Ok(42));
        assert_eq!(
            parse("abc").expect_err("not a number"),
            "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
        );
        assert_eq!(
            parse("-1").expect_err("negative"),
            "resourceVersion: Invalid value: \"-1\": strconv.ParseUint: parsing \"-1\": invalid syntax"
        );
        let e = parse_cached("abc").expect_err("500");
        assert_eq!((e.code(), e.reason()), (500, ""));
        assert!(e.status.details.is_none());
        let e = parse_delegated("abc").expect_err("400");
        assert_eq!((e.code(), e.reason()), (400, "BadRequest"));
        assert_eq!(
            e.status.message.as_deref(),
            Some(
                "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
            )
        );
    }

    /// Upstream's `TestValidateListOptions` table, with the WatchList
    /// feature on (its default).
    #[test]
    fn validates_list_options_like_apimachinery() {
        let cases: &[(&str, bool, &[&str])] = &[
            ("", false, &[]),
            ("resourceVersion=1&resourceVersionMatch=Exact", false, &[]),
            (
                "resourceVersion=0&resourceVersionMatch=Exact",
                false,
                &[
                    "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ],
            ),
            (
                "resourceVersion=0&resourceVersionMatch=NotOlderThan",
                false,
                &[],
            ),
            (
                "resourceVersion=0&resourceVersionMatch=foo",
                false,
                &[
                    "resourceVersionMatch: Unsupported value: \"foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
                ],
            ),
            (
                "resourceVersionMatch=foo",
                false,
                &[
                    "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
                    "resourceVersionMatch: Unsupported value: \"foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
                ],
            ),
            (
                "resourceVersion=5&resourceVersionMatch=NotOlderThan&continue=x",
                false,
                &[
                    "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided",
                ],
            ),
            (
                "sendInitialEvents=true",
                false,
                &["sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"],
            ),
            ("", true, &[]),
            (
                "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
                true,
                &[],
            ),
            (
                "sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
                true,
                &[],
            ),
            (
                "resourceVersionMatch=NotOlderThan",
                true,
                &[
                    "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ],
            ),
            (
                "sendInitialEvents=true",
                true,
                &[
                    "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ],
            ),
            (
                "sendInitialEvents=true&resourceVersionMatch=Exact&allowWatchBookmarks=true",
                true,
                &[
                    "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    "resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\"",
                ],
            ),
            (
                "sendInitialEvents=false",
                true,
                &[
                    "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ],
            ),
            (
                "sendInitialEvents=true&resourceVersionMatch=incorrect&allowWatchBookmarks=true",
                true,
                &[
                    "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    "resourceVersionMatch: Unsupported value: \"incorrect\": supported values: \"NotOlderThan\"",
                ],
            ),
            (
                "sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
                true,
                &[],
            ),
            (
                "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&continue=123",
                true,
                &[
                    "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided",
                ],
            ),
        ];
        for (raw, watch, want) in cases {
            let got = validate_list_options(&q(raw), *watch);
            if want.is_empty() {
                assert!(got.is_ok(), "{raw} (watch {watch}): {got:?}");
                continue;
            }
            let e = got.expect_err(raw);
            assert_eq!((e.code(), e.reason()), (422, "Invalid"), "{raw}");
            let details = e.status.details.as_ref().expect("details");
            assert_eq!(details.kind.as_deref(), Some("ListOptions"));
            assert_eq!(details.group.as_deref(), Some("meta.k8s.io"));
            let causes: Vec<String> = details
                .causes
                .iter()
                .flatten()
                .map(|c| {
                    format!(
                        "{}: {}",
                        c.field.as_deref().unwrap_or_default(),
                        c.message.as_deref().unwrap_or_default()
                    )
                })
                .collect();
            assert_eq!(causes, *want, "{raw} (watch {watch})");
            let body = if want.len() == 1 {
                want[0].to_owned()
            } else {
                format!("[{}]", want.join(", "))
            };
            assert_eq!(
                e.status.message.as_deref(),
                Some(format!("ListOptions.meta.k8s.io \"\" is invalid: {body}").as_str()),
                "{raw}"
            );
        }
    }

    /// `shouldDelegateList`: which lists read the resourceVersion as etcd does.
    #[test]
    fn delegates_lists_as_the_watch_cache_does() {
        let cases: &[(&str, i64, bool)] = &[
            ("", 0, false),
            ("resourceVersion=0", 0, false),
            ("resourceVersion=0", 5, false),
            ("resourceVersion=abc", 0, false),
            ("resourceVersion=abc", 5, true),
            ("resourceVersion=7", 5, true),
            (
                "resourceVersion=7&resourceVersionMatch=NotOlderThan",
                5,
                false,
            ),
            ("resourceVersion=7&resourceVersionMatch=Exact", 0, true),
            ("continue=abc", 0, true),
            ("resourceVersion=0&continue=abc", 5, true),
        ];
        for (raw, limit, want) in cases {
            assert_eq!(
                list_is_delegated(&q(raw), *limit),
                *want,
                "{raw} limit {limit}"
            );
        }
    }
}
