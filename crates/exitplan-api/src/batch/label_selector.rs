//! `metav1.LabelSelector`: validation (`metav1validation.ValidateLabelSelector`)
//! and matching (`metav1.LabelSelectorAsSelector` + `labels.Selector.Matches`).
//!
//! Used by Job validation (selector ↔ template labels) and by
//! PodDisruptionBudget validation. Matching follows upstream's conversion
//! rules exactly: a nil selector matches nothing, an empty one everything,
//! and a selector that cannot be converted (bad operator, bad key or value,
//! wrong number of values) is reported as "not convertible" so callers skip
//! the match check, as upstream does.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use crate::field::{Error, ErrorList, Path};
use crate::{formats, meta};

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
            for msg in formats::is_label_value(v) {
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
        .any(|v| !formats::is_label_value(v).is_empty())
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Op {
    Equals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

impl Requirement {
    /// `labels.NewRequirement`'s checks.
    fn new(key: &str, op: Op, values: &[String]) -> Option<Self> {
        if !formats::is_qualified_name(key).is_empty() {
            return None;
        }
        let count_ok = match op {
            Op::In | Op::NotIn => !values.is_empty(),
            Op::Equals => values.len() == 1,
            Op::Exists | Op::DoesNotExist => values.is_empty(),
        };
        if !count_ok
            || values
                .iter()
                .any(|v| !formats::is_label_value(v).is_empty())
        {
            return None;
        }
        Some(Requirement {
            key: key.to_owned(),
            op,
            values: values.to_vec(),
        })
    }

    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let actual = labels.get(&self.key);
        match self.op {
            Op::Equals | Op::In => actual.is_some_and(|v| self.values.contains(v)),
            Op::NotIn => actual.is_none_or(|v| !self.values.contains(v)),
            Op::Exists => actual.is_some(),
            Op::DoesNotExist => actual.is_none(),
        }
    }
}

/// A converted selector (`labels.Selector`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector(Option<Vec<Requirement>>);

impl Selector {
    /// `LabelSelectorAsSelector`: `None` when the selector cannot be
    /// converted; a nil selector selects nothing, an empty one everything.
    pub fn from_label_selector(selector: Option<&LabelSelector>) -> Option<Self> {
        let Some(s) = selector else {
            return Some(Selector(None));
        };
        let mut reqs = Vec::new();
        for (k, v) in s.match_labels.iter().flatten() {
            reqs.push(Requirement::new(k, Op::Equals, std::slice::from_ref(v))?);
        }
        for e in s.match_expressions.iter().flatten() {
            let op = match e.operator.as_str() {
                "In" => Op::In,
                "NotIn" => Op::NotIn,
                "Exists" => Op::Exists,
                "DoesNotExist" => Op::DoesNotExist,
                _ => return None,
            };
            reqs.push(Requirement::new(
                &e.key,
                op,
                e.values.as_deref().unwrap_or_default(),
            )?);
        }
        Some(Selector(Some(reqs)))
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        match &self.0 {
            None => false,
            Some(reqs) => reqs.iter().all(|r| r.matches(labels)),
        }
    }
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

    #[test]
    fn nil_matches_nothing_empty_matches_everything() {
        let none = Selector::from_label_selector(None).expect("convertible");
        assert!(!none.matches(&labels(&[])));
        let all = Selector::from_label_selector(Some(&LabelSelector::default())).expect("ok");
        assert!(all.matches(&labels(&[("a", "b")])));
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
        let s = Selector::from_label_selector(Some(&sel)).expect("convertible");
        assert!(s.matches(&labels(&[("a", "b")])));
        assert!(s.matches(&labels(&[("a", "b"), ("c", "y")])));
        assert!(!s.matches(&labels(&[("a", "b"), ("c", "x")])));
        assert!(!s.matches(&labels(&[("a", "b"), ("d", "")])));
        assert!(!s.matches(&labels(&[("a", "c")])));
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
        assert_eq!(Selector::from_label_selector(Some(&sel)), None);
        let errs = validate_label_selector(Some(&sel), false, &Path::new("spec").child("selector"));
        assert_eq!(
            errs.to_string(),
            r#"spec.selector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator"#
        );
    }
}
