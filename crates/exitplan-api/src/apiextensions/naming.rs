//! The `NamesAccepted` and `Established` conditions, as the apiextensions
//! naming controller (`pkg/controller/status/naming_controller.go`) and
//! establishing controller (`pkg/controller/establish`) set them — pure:
//! the caller passes the other CRDs and the clock, and writes the returned
//! status through `/status`.

use std::collections::BTreeSet;

use jiff::Timestamp;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionCondition, CustomResourceDefinitionNames,
    CustomResourceDefinitionStatus,
};

/// The condition type saying every requested name is accepted.
pub const NAMES_ACCEPTED: &str = "NamesAccepted";
/// The condition type saying the resource is served.
pub const ESTABLISHED: &str = "Established";

fn condition<'a>(
    crd: &'a CustomResourceDefinition,
    type_: &str,
) -> Option<&'a CustomResourceDefinitionCondition> {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == type_))
}

fn is_true(crd: &CustomResourceDefinition, type_: &str) -> bool {
    condition(crd, type_).is_some_and(|c| c.status == "True")
}

/// `SetCRDCondition`: adds or updates a condition; the transition time
/// changes only with the status.
pub fn set_condition(
    status: &mut CustomResourceDefinitionStatus,
    mut new: CustomResourceDefinitionCondition,
    now: Timestamp,
) {
    new.last_transition_time = Some(crate::time::mtime(now));
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        None => conditions.push(new),
        Some(existing) => {
            if existing.status != new.status || existing.last_transition_time.is_none() {
                existing.status = new.status;
                existing.last_transition_time = new.last_transition_time;
            }
            existing.reason = new.reason;
            existing.message = new.message;
        }
    }
}

fn cond(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
) -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        ..Default::default()
    }
}

/// `equalToAcceptedOrFresh`.
fn fresh(requested: &str, accepted: &str, used: &BTreeSet<String>) -> Result<(), String> {
    if requested == accepted || !used.contains(requested) {
        Ok(())
    } else {
        Err(format!("{requested:?} is already in use"))
    }
}

/// `calculateNamesAndConditions`: the names this CRD may have given the
/// accepted names of `others` (every CRD; only those in the same group
/// count, the CRD itself may be among them), with the `NamesAccepted` and
/// `Established` conditions.
pub fn calculate_names(
    crd: &CustomResourceDefinition,
    others: &[CustomResourceDefinition],
) -> (
    CustomResourceDefinitionNames,
    CustomResourceDefinitionCondition,
    CustomResourceDefinitionCondition,
) {
    let mut resources = BTreeSet::new();
    let mut kinds = BTreeSet::new();
    for o in others.iter().filter(|o| o.spec.group == crd.spec.group) {
        let Some(n) = o.status.as_ref().and_then(|s| s.accepted_names.as_ref()) else {
            resources.insert(String::new());
            kinds.insert(String::new());
            continue;
        };
        resources.insert(n.plural.clone());
        resources.insert(n.singular.clone().unwrap_or_default());
        resources.extend(n.short_names.iter().flatten().cloned());
        kinds.insert(n.kind.clone());
        kinds.insert(n.list_kind.clone().unwrap_or_default());
    }
    let requested = &crd.spec.names;
    let accepted = crd
        .status
        .as_ref()
        .and_then(|s| s.accepted_names.clone())
        .unwrap_or_default();
    let mut names = accepted.clone();
    let mut accepted_cond = cond(NAMES_ACCEPTED, "Unknown", "", "");
    let mut conflict = |reason: &str, msg: String| {
        accepted_cond.status = "False".to_owned();
        accepted_cond.reason = Some(reason.to_owned());
        accepted_cond.message = Some(msg);
    };
    match fresh(&requested.plural, &accepted.plural, &resources) {
        Err(e) => conflict("PluralConflict", e),
        Ok(()) => names.plural.clone_from(&requested.plural),
    }
    let req_singular = requested.singular.clone().unwrap_or_default();
    match fresh(
        &req_singular,
        accepted.singular.as_deref().unwrap_or_default(),
        &resources,
    ) {
        Err(e) => conflict("SingularConflict", e),
        Ok(()) => names.singular = requested.singular.clone(),
    }
    let req_short = requested.short_names.clone().unwrap_or_default();
    let acc_short = accepted.short_names.clone().unwrap_or_default();
    if req_short != acc_short {
        let errs: Vec<String> = req_short
            .iter()
            .filter(|s| !acc_short.contains(s))
            .filter_map(|s| fresh(s, "", &resources).err())
            .collect();
        if errs.is_empty() {
            names.short_names = requested.short_names.clone();
        } else {
            let msg = if errs.len() == 1 {
                errs.concat()
            } else {
                format!("[{}]", errs.join(", "))
            };
            conflict("ShortNamesConflict", msg);
        }
    }
    match fresh(&requested.kind, &accepted.kind, &kinds) {
        Err(e) => conflict("KindConflict", e),
        Ok(()) => names.kind.clone_from(&requested.kind),
    }
    let req_list_kind = requested.list_kind.clone().unwrap_or_default();
    match fresh(
        &req_list_kind,
        accepted.list_kind.as_deref().unwrap_or_default(),
        &kinds,
    ) {
        Err(e) => conflict("ListKindConflict", e),
        Ok(()) => names.list_kind = requested.list_kind.clone(),
    }
    names.categories = requested.categories.clone();
    if accepted_cond.status == "Unknown" {
        accepted_cond = cond(NAMES_ACCEPTED, "True", "NoConflicts", "no conflicts found");
    }
    let mut established = condition(crd, ESTABLISHED).cloned().unwrap_or_else(|| {
        cond(
            ESTABLISHED,
            "False",
            "NotAccepted",
            "not all names are accepted",
        )
    });
    if established.status != "True" && accepted_cond.status == "True" {
        established = cond(
            ESTABLISHED,
            "False",
            "Installing",
            "the initial names have been accepted",
        );
    }
    (names, accepted_cond, established)
}

/// The naming controller's sync: the new status of `crd`, or `None` when
/// its accepted names and `NamesAccepted` condition are already right.
pub fn naming_status(
    crd: &CustomResourceDefinition,
    others: &[CustomResourceDefinition],
    now: Timestamp,
) -> Option<CustomResourceDefinitionStatus> {
    let (names, accepted, established) = calculate_names(crd, others);
    let status = crd.status.clone().unwrap_or_default();
    let same_names = status.accepted_names.clone().unwrap_or_default() == names;
    let same_cond = condition(crd, NAMES_ACCEPTED).is_some_and(|c| {
        c.status == accepted.status && c.reason == accepted.reason && c.message == accepted.message
    });
    if same_names && same_cond {
        return None;
    }
    let mut status = status;
    status.accepted_names = Some(names);
    set_condition(&mut status, accepted, now);
    set_condition(&mut status, established, now);
    Some(status)
}

/// The establishing controller: once names are accepted, `Established`
/// becomes `True` (`InitialNamesAccepted`); `None` when there is nothing to do.
pub fn establishing_status(
    crd: &CustomResourceDefinition,
    now: Timestamp,
) -> Option<CustomResourceDefinitionStatus> {
    if !is_true(crd, NAMES_ACCEPTED) || is_true(crd, ESTABLISHED) {
        return None;
    }
    let mut status = crd.status.clone().unwrap_or_default();
    set_condition(
        &mut status,
        cond(
            ESTABLISHED,
            "True",
            "InitialNamesAccepted",
            "the initial names have been accepted",
        ),
        now,
    );
    Some(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(plural: &str, kind: &str, short: &[&str], accepted: bool) -> CustomResourceDefinition {
        let names = json!({"plural": plural, "singular": plural.trim_end_matches('s'), "kind": kind, "listKind": format!("{kind}List"), "shortNames": short});
        let mut v = json!({
            "metadata": {"name": format!("{plural}.example.com")},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": names, "versions": []}
        });
        if accepted {
            v["status"] = json!({"acceptedNames": names});
        }
        serde_json::from_value(v).expect("crd")
    }

    fn with_singular(mut c: CustomResourceDefinition, singular: &str) -> CustomResourceDefinition {
        c.spec.names.singular = Some(singular.to_owned());
        if let Some(n) = c.status.as_mut().and_then(|s| s.accepted_names.as_mut()) {
            n.singular = Some(singular.to_owned());
        }
        c
    }

    fn now() -> Timestamp {
        "2026-11-29T10:00:00Z".parse().expect("time")
    }

    fn reason(c: &CustomResourceDefinitionCondition) -> (&str, &str, &str) {
        (
            c.status.as_str(),
            c.reason.as_deref().unwrap_or_default(),
            c.message.as_deref().unwrap_or_default(),
        )
    }

    /// Cases after upstream's `naming_controller_test.go`.
    #[test]
    fn names_accepted_cases() {
        let cases = [
            (
                "no conflicts",
                crd("alphas", "Alpha", &[], false),
                vec![],
                ("True", "NoConflicts", "no conflicts found"),
                (
                    "False",
                    "Installing",
                    "the initial names have been accepted",
                ),
            ),
            (
                "plural conflict",
                crd("alphas", "Alpha", &[], false),
                vec![with_singular(crd("alphas", "Other", &[], true), "other")],
                ("False", "PluralConflict", r#""alphas" is already in use"#),
                ("False", "NotAccepted", "not all names are accepted"),
            ),
            (
                "short name conflicts with a plural",
                crd("alphas", "Alpha", &["betas"], false),
                vec![crd("betas", "Beta", &[], true)],
                (
                    "False",
                    "ShortNamesConflict",
                    r#""betas" is already in use"#,
                ),
                ("False", "NotAccepted", "not all names are accepted"),
            ),
            (
                "kind and listKind conflict: the last is reported",
                crd("alphas", "Alpha", &[], false),
                vec![crd("gammas", "Alpha", &[], true)],
                (
                    "False",
                    "ListKindConflict",
                    r#""AlphaList" is already in use"#,
                ),
                ("False", "NotAccepted", "not all names are accepted"),
            ),
            (
                "own accepted names are no conflict",
                crd("alphas", "Alpha", &["a"], true),
                vec![crd("alphas", "Alpha", &["a"], true)],
                ("True", "NoConflicts", "no conflicts found"),
                (
                    "False",
                    "Installing",
                    "the initial names have been accepted",
                ),
            ),
        ];
        for (name, c, others, want_accepted, want_established) in cases {
            let (_, accepted, established) = calculate_names(&c, &others);
            assert_eq!(reason(&accepted), want_accepted, "{name}");
            assert_eq!(reason(&established), want_established, "{name}");
        }
    }

    #[test]
    fn other_groups_do_not_conflict() {
        let mut other = crd("alphas", "Alpha", &[], true);
        other.spec.group = "other.io".into();
        let (names, accepted, _) = calculate_names(&crd("alphas", "Alpha", &[], false), &[other]);
        assert_eq!(accepted.status, "True");
        assert_eq!(names.plural, "alphas");
    }

    #[test]
    fn naming_then_establishing() {
        let c = crd("alphas", "Alpha", &[], false);
        let status = naming_status(&c, &[], now()).expect("status");
        let mut c2 = c.clone();
        c2.status = Some(status);
        assert!(naming_status(&c2, &[c2.clone()], now()).is_none());
        let est = establishing_status(&c2, now()).expect("established");
        let e = est
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == ESTABLISHED)
            .expect("cond");
        assert_eq!(
            reason(e),
            (
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted"
            )
        );
        c2.status = Some(est);
        assert!(establishing_status(&c2, now()).is_none());
    }
}
