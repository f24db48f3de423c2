//! `metav1.LabelSelector`, in one place: validation
//! (`metav1validation.ValidateLabelSelector`), conversion
//! (`metav1.LabelSelectorAsSelector`, with `labels.NewRequirement`'s checks
//! and error texts) and matching (`labels.Selector.Matches`).
//!
//! * a nil selector (`None`) selects **nothing**;
//! * an empty selector (`{}`) selects **everything**;
//! * otherwise every `matchLabels` pair and every `matchExpressions`
//!   requirement (`In`, `NotIn`, `Exists`, `DoesNotExist`) must hold.
//!
//! Validation reports field errors at the selector's path (Job and
//! PodDisruptionBudget validation). Conversion of an invalid selector is an
//! error; callers decide what it means: Job validation skips the
//! selector-matches-template check (the validation errors already say why),
//! the eviction subresource ignores such a PDB, and the disruption
//! controller fails the sync with the error text.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use crate::field::{BadValue, Error, ErrorList, Path, go_quote};
use crate::formats::{self, is_label_value, is_qualified_name};
use crate::{meta, render};

// ---------------------------------------------------------------------------
// Validation.

/// `ValidateLabelSelector`: matchLabels as labels, each matchExpression as a
/// requirement. `allow_invalid_label_value` relaxes the value format check
/// (upstream's `AllowInvalidLabelValueInSelector`, granted on update when the
/// stored object already had such a value).
pub fn validate_label_selector(
    selector: Option<&LabelSelector>,
    allow_invalid_label_value: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(s) = selector else {
        return errs;
    };
    if let Some(ml) = &s.match_labels {
        errs.append(meta::validate_labels(ml, &path.child("matchLabels")));
    }
    for (i, expr) in s.match_expressions.iter().flatten().enumerate() {
        errs.append(validate_requirement(
            expr,
            allow_invalid_label_value,
            &path.child("matchExpressions").index(i),
        ));
    }
    errs
}

/// `ValidateLabelSelectorRequirement`.
fn validate_requirement(
    r: &LabelSelectorRequirement,
    allow_invalid_label_value: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let values = r.values.as_deref().unwrap_or_default();
    match r.operator.as_str() {
        "In" | "NotIn" => {
            if values.is_empty() {
                errs.push(Error::required(
                    &path.child("values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
        }
        "Exists" | "DoesNotExist" => {
            if !values.is_empty() {
                errs.push(Error::forbidden(
                    &path.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
        }
        other => errs.push(Error::invalid(
            &path.child("operator"),
            other,
            "not a valid selector operator",
        )),
    }
    errs.append(formats::validate_qualified_name(&path.child("key"), &r.key));
    if !allow_invalid_label_value {
        for (i, v) in values.iter().enumerate() {
            for msg in is_label_value(v) {
                errs.push(Error::invalid(
                    &path.child("values").index(i),
                    v.as_str(),
                    msg,
                ));
            }
        }
    }
    errs
}

/// `LabelSelectorHasInvalidLabelValue`: whether any matchExpressions value
/// is not a valid label value.
pub fn has_invalid_label_value(selector: Option<&LabelSelector>) -> bool {
    selector
        .and_then(|s| s.match_expressions.as_ref())
        .into_iter()
        .flatten()
        .flat_map(|e| e.values.iter().flatten())
        .any(|v| !is_label_value(v).is_empty())
}

// ---------------------------------------------------------------------------
// Conversion and matching.

/// How one requirement compares a label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `key=value` (from `matchLabels`).
    Equals,
    /// The label is present and its value is in the set.
    In,
    /// The label is absent or its value is not in the set.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

/// One validated requirement of a selector (`labels.Requirement`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// Label key.
    pub key: String,
    /// Comparison.
    pub operator: Operator,
    /// Values compared against (empty for `Exists` / `DoesNotExist`).
    pub values: Vec<String>,
}

impl Requirement {
    fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        let value = labels.and_then(|l| l.get(&self.key));
        match self.operator {
            Operator::Equals | Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
        }
    }
}

/// A converted selector (`labels.Selector`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// Selects nothing (a nil `LabelSelector`).
    Nothing,
    /// Selects everything (an empty `LabelSelector`).
    Everything,
    /// Selects objects meeting every requirement (never empty).
    Requirements(Vec<Requirement>),
}

impl Selector {
    /// Whether an object with `labels` is selected (`None`: no labels).
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        match self {
            Selector::Nothing => false,
            Selector::Everything => true,
            Selector::Requirements(reqs) => reqs.iter().all(|r| r.matches(labels)),
        }
    }
}

/// `labels.Selector.String()`: requirements sorted by key and joined by
/// `,` (`a=b,c in (x,y),d,!e`); values of `in`/`notin` sorted; nothing and
/// everything both print as the empty string.
impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Selector::Requirements(reqs) = self else {
            return Ok(());
        };
        let mut reqs: Vec<&Requirement> = reqs.iter().collect();
        reqs.sort_by(|a, b| a.key.cmp(&b.key));
        let parts: Vec<String> = reqs
            .iter()
            .map(|r| {
                let mut values = r.values.clone();
                values.sort();
                let values = values.join(",");
                match r.operator {
                    Operator::Equals => format!("{}={values}", r.key),
                    Operator::In => format!("{} in ({values})", r.key),
                    Operator::NotIn => format!("{} notin ({values})", r.key),
                    Operator::Exists => r.key.clone(),
                    Operator::DoesNotExist => format!("!{}", r.key),
                }
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// Why a `LabelSelector` cannot be converted; `Display` is upstream's error text.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SelectorError {
    /// A requirement with an invalid key or value (`labels.NewRequirement`).
    #[error("{0}")]
    Invalid(ErrorList),
    /// A `matchExpressions` operator outside In/NotIn/Exists/DoesNotExist.
    #[error("{} is not a valid label selector operator", go_quote(.0))]
    UnknownOperator(String),
}

/// Converts a `LabelSelector` (`metav1.LabelSelectorAsSelector`). `matchLabels`
/// are checked first, in key order (upstream iterates a Go map, so with several
/// invalid labels the reported one is unspecified there), then `matchExpressions`
/// in order; the first invalid requirement is the error.
pub fn as_selector(selector: Option<&LabelSelector>) -> Result<Selector, SelectorError> {
    let Some(sel) = selector else {
        return Ok(Selector::Nothing);
    };
    let labels = sel.match_labels.as_ref();
    let exprs = sel.match_expressions.as_deref().unwrap_or_default();
    if labels.is_none_or(BTreeMap::is_empty) && exprs.is_empty() {
        return Ok(Selector::Everything);
    }
    let mut reqs = Vec::new();
    for (key, value) in labels.into_iter().flatten() {
        reqs.push(new_requirement(
            key,
            Operator::Equals,
            std::slice::from_ref(value),
        )?);
    }
    for expr in exprs {
        let op = match expr.operator.as_str() {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            other => return Err(SelectorError::UnknownOperator(other.to_owned())),
        };
        reqs.push(new_requirement(
            &expr.key,
            op,
            expr.values.as_deref().unwrap_or_default(),
        )?);
    }
    Ok(Selector::Requirements(reqs))
}

/// Whether `labels` are selected by `selector`; an invalid selector selects nothing.
pub fn selects(
    selector: Option<&LabelSelector>,
    labels: Option<&BTreeMap<String, String>>,
) -> bool {
    as_selector(selector).is_ok_and(|s| s.matches(labels))
}

/// `labels.NewRequirement` with its validation (messages and field paths).
fn new_requirement(
    key: &str,
    operator: Operator,
    values: &[String],
) -> Result<Requirement, SelectorError> {
    let mut errs = ErrorList::new();
    let key_errs = is_qualified_name(key);
    if !key_errs.is_empty() {
        errs.push(Error::invalid(&Path::new("key"), key, key_errs.join("; ")));
    }
    let values_path = Path::new("values");
    // Upstream passes `append([]string(nil), values...)`: nil when empty.
    let values_json = || {
        if values.is_empty() {
            return BadValue::Null;
        }
        BadValue::Json(render::strings(values))
    };
    match operator {
        Operator::In | Operator::NotIn if values.is_empty() => errs.push(Error::invalid(
            &values_path,
            values_json(),
            "for 'in', 'notin' operators, values set can't be empty",
        )),
        Operator::Equals if values.len() != 1 => errs.push(Error::invalid(
            &values_path,
            values_json(),
            "exact-match compatibility requires one single value",
        )),
        Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
            errs.push(Error::invalid(
                &values_path,
                values_json(),
                "values set must be empty for exists and does not exist",
            ));
        }
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        let value_errs = is_label_value(v);
        if !value_errs.is_empty() {
            errs.push(Error::invalid(
                &values_path.index(i).key(key),
                v,
                value_errs.join("; "),
            ));
        }
    }
    if !errs.is_empty() {
        return Err(SelectorError::Invalid(errs));
    }
    Ok(Requirement {
        key: key.to_owned(),
        operator,
        values: values.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.to_owned(),
            operator: op.to_owned(),
            values: Some(values.iter().map(|v| (*v).to_owned()).collect()),
        }
    }

    #[test]
    fn nil_matches_nothing_and_empty_everything() {
        let l = labels(&[("a", "true")]);
        assert!(!selects(None, Some(&l)));
        assert!(selects(Some(&LabelSelector::default()), Some(&l)));
        assert!(selects(Some(&LabelSelector::default()), None));
        let empty_maps = LabelSelector {
            match_labels: Some(BTreeMap::new()),
            match_expressions: Some(Vec::new()),
        };
        assert_eq!(as_selector(Some(&empty_maps)), Ok(Selector::Everything));
    }

    #[test]
    fn nil_matches_nothing_empty_matches_everything() {
        let none = as_selector(None).expect("convertible");
        assert!(!none.matches(Some(&labels(&[]))));
        let all = as_selector(Some(&LabelSelector::default())).expect("ok");
        assert!(all.matches(Some(&labels(&[("a", "b")]))));
    }

    #[test]
    fn operators() {
        let l = labels(&[("a", "true"), ("b", "x")]);
        let cases = [
            (expr("a", "In", &["true", "false"]), true),
            (expr("a", "In", &["false"]), false),
            (expr("c", "In", &["x"]), false),
            (expr("a", "NotIn", &["true"]), false),
            (expr("a", "NotIn", &["false"]), true),
            (expr("c", "NotIn", &["x"]), true),
            (expr("b", "Exists", &[]), true),
            (expr("c", "Exists", &[]), false),
            (expr("c", "DoesNotExist", &[]), true),
            (expr("b", "DoesNotExist", &[]), false),
        ];
        for (e, want) in cases {
            let sel = LabelSelector {
                match_expressions: Some(vec![e.clone()]),
                match_labels: None,
            };
            assert_eq!(selects(Some(&sel), Some(&l)), want, "{e:?}");
        }
        let both = LabelSelector {
            match_labels: Some(labels(&[("a", "true")])),
            match_expressions: Some(vec![expr("b", "In", &["y"])]),
        };
        assert!(!selects(Some(&both), Some(&l)));
    }

    #[test]
    fn expressions_match_like_upstream() {
        let sel = LabelSelector {
            match_labels: Some(labels(&[("a", "b")])),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "c".into(),
                    operator: "NotIn".into(),
                    values: Some(vec!["x".into()]),
                },
                LabelSelectorRequirement {
                    key: "d".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                },
            ]),
        };
        let s = as_selector(Some(&sel)).expect("convertible");
        assert!(s.matches(Some(&labels(&[("a", "b")]))));
        assert!(s.matches(Some(&labels(&[("a", "b"), ("c", "y")]))));
        assert!(!s.matches(Some(&labels(&[("a", "b"), ("c", "x")]))));
        assert!(!s.matches(Some(&labels(&[("a", "b"), ("d", "")]))));
        assert!(!s.matches(Some(&labels(&[("a", "c")]))));
    }

    #[test]
    fn invalid_selectors_report_upstream_texts() {
        let bad_key = LabelSelector {
            match_labels: Some(labels(&[("k8s.io/too/many/slashes", "value")])),
            match_expressions: None,
        };
        let err = as_selector(Some(&bad_key)).expect_err("invalid key");
        assert_eq!(
            err.to_string(),
            "key: Invalid value: \"k8s.io/too/many/slashes\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        );
        let bad_op = LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![expr("foo", "illegal", &["bar"])]),
        };
        assert_eq!(
            as_selector(Some(&bad_op))
                .expect_err("invalid operator")
                .to_string(),
            "\"illegal\" is not a valid label selector operator"
        );
        let empty_in = LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![expr("foo", "In", &[])]),
        };
        assert_eq!(
            as_selector(Some(&empty_in))
                .expect_err("empty In")
                .to_string(),
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
        );
        assert!(!selects(Some(&bad_op), None));
    }

    #[test]
    fn unconvertible_selectors_and_their_errors() {
        let sel = LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "k".into(),
                operator: "Bogus".into(),
                values: None,
            }]),
            ..Default::default()
        };
        assert_eq!(as_selector(Some(&sel)).ok(), None);
        let errs = validate_label_selector(Some(&sel), false, &Path::new("spec").child("selector"));
        assert_eq!(
            errs.to_string(),
            r#"spec.selector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator"#
        );
    }
}
