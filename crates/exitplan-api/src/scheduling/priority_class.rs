//! scheduling.k8s.io/v1 PriorityClass: defaulting (`SetDefaults_PriorityClass`),
//! validation (`pkg/apis/scheduling/validation`), the registry strategy
//! (`pkg/registry/scheduling/priorityclass`), the system classes
//! kube-apiserver creates at startup (`SystemPriorityClasses`) and the
//! one-global-default rule of the `Priority` admission plugin
//! ([`global_default_conflict`]).

use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::generic::{before_create_scoped, validate_common_fields_scoped};
use crate::meta::{self, FIELD_IMMUTABLE, NameRule};
use crate::strategy::{Context, Strategy};

/// Names starting with it are reserved for the system classes.
pub const SYSTEM_PRIORITY_CLASS_PREFIX: &str = "system-";
/// The highest value a user-defined class may have (`HighestUserDefinablePriority`).
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i32 = 1_000_000_000;
/// `SystemCriticalPriority`: the base of the system classes' values.
pub const SYSTEM_CRITICAL_PRIORITY: i32 = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
/// `system-cluster-critical`.
pub const SYSTEM_CLUSTER_CRITICAL: &str = "system-cluster-critical";
/// `system-node-critical`.
pub const SYSTEM_NODE_CRITICAL: &str = "system-node-critical";
/// `PreemptLowerPriority` (the default preemption policy).
pub const PREEMPT_LOWER_PRIORITY: &str = "PreemptLowerPriority";
/// `Never`.
pub const PREEMPT_NEVER: &str = "Never";

fn system_class(name: &str, value: i32, description: &str) -> PriorityClass {
    PriorityClass {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        value: Some(value),
        global_default: Some(false),
        description: Some(description.to_owned()),
        preemption_policy: Some(PREEMPT_LOWER_PRIORITY.to_owned()),
    }
}

/// The classes kube-apiserver creates at startup (`SystemPriorityClasses`):
/// `system-node-critical` (2000001000) and `system-cluster-critical`
/// (2000000000), in upstream's order. The caller stores them (through the
/// strategy, like any create) when they do not exist yet.
pub fn system_priority_classes() -> Vec<PriorityClass> {
    vec![
        system_class(
            SYSTEM_NODE_CRITICAL,
            SYSTEM_CRITICAL_PRIORITY + 1000,
            "Used for system critical pods that must not be moved from their current node.",
        ),
        system_class(
            SYSTEM_CLUSTER_CRITICAL,
            SYSTEM_CRITICAL_PRIORITY,
            "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
        ),
    ]
}

/// `IsKnownSystemPriorityClass`: `Err` carries upstream's reason.
pub fn is_known_system_priority_class(
    name: &str,
    value: i32,
    global_default: bool,
) -> Result<(), String> {
    let known = system_priority_classes();
    let Some(spc) = known
        .iter()
        .find(|s| s.metadata.name.as_deref() == Some(name))
    else {
        return Err(format!("{name} is not a known system priority class"));
    };
    let want = spc.value.unwrap_or(0);
    if want != value {
        return Err(format!("value of {name} PriorityClass must be {want}"));
    }
    let want_default = spc.global_default.unwrap_or(false);
    if want_default != global_default {
        return Err(format!(
            "globalDefault of {name} PriorityClass must be {want_default}"
        ));
    }
    Ok(())
}

/// `ValidatePreemptionPolicy`: `PreemptLowerPriority` or `Never`.
pub fn validate_preemption_policy(policy: &str, path: &Path) -> ErrorList {
    match policy {
        PREEMPT_LOWER_PRIORITY | PREEMPT_NEVER => ErrorList::new(),
        "" => ErrorList(vec![Error::required(path, "")]),
        other => ErrorList(vec![Error::not_supported(
            path,
            other,
            &[PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER],
        )]),
    }
}

/// `ValidatePriorityClass`: metadata (cluster-scoped, a DNS subdomain), the
/// reserved `system-` prefix, the user value limit and the preemption policy.
pub fn validate_priority_class(pc: &PriorityClass) -> ErrorList {
    let mut errs = meta::validate_object_meta(&pc.metadata, false, NameRule::Subdomain);
    let name = pc.metadata.name.as_deref().unwrap_or_default();
    let value = pc.value.unwrap_or(0);
    if name.starts_with(SYSTEM_PRIORITY_CLASS_PREFIX) {
        if let Err(reason) =
            is_known_system_priority_class(name, value, pc.global_default.unwrap_or(false))
        {
            errs.push(Error::forbidden(
                &Path::new("metadata").child("name"),
                format!(
                    "priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: {reason}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        errs.push(Error::forbidden(
            &Path::new("value"),
            format!(
                "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        ));
    }
    if let Some(p) = &pc.preemption_policy {
        errs.append(validate_preemption_policy(
            p,
            &Path::new("preemptionPolicy"),
        ));
    }
    errs
}

/// `ValidatePriorityClassUpdate`: metadata update rules; `value` and
/// `preemptionPolicy` are immutable.
pub fn validate_priority_class_update(new: &PriorityClass, old: &PriorityClass) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    if new.value.unwrap_or(0) != old.value.unwrap_or(0) {
        errs.push(Error::forbidden(
            &Path::new("value"),
            "may not be changed in an update.",
        ));
    }
    if new.preemption_policy != old.preemption_policy {
        errs.push(Error::invalid(
            &Path::new("preemptionPolicy"),
            BadValue::from(new.preemption_policy.as_deref()),
            FIELD_IMMUTABLE,
        ));
    }
    errs
}

/// Why the registry refuses to delete a system priority class.
pub const SYSTEM_CLASS_DELETE_REFUSAL: &str =
    "this is a system priority class and cannot be deleted";

/// The PriorityClass registry's `Delete`: the system classes cannot be
/// deleted. `Some(reason)` for them; the server answers 403 Forbidden with
/// `priorityclasses.scheduling.k8s.io "<name>" is forbidden: <reason>`.
pub fn delete_refusal(name: &str) -> Option<&'static str> {
    [SYSTEM_NODE_CRITICAL, SYSTEM_CLUSTER_CRITICAL]
        .contains(&name)
        .then_some(SYSTEM_CLASS_DELETE_REFUSAL)
}

/// A second global default refused by the `Priority` admission plugin.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("PriorityClass {existing} is already marked as default. Only one default can exist")]
pub struct GlobalDefaultConflict {
    /// The class already marked `globalDefault`.
    pub existing: String,
}

/// The `Priority` admission plugin's check for a create or update of `new`
/// against the stored classes `existing`: when `new` is `globalDefault` and
/// another class already is (the one with the lowest value when a race left
/// several), the write is refused. The server answers 403 Forbidden with
/// `priorityclasses.scheduling.k8s.io "<new>" is forbidden: <conflict>`.
/// An update of the default class itself is no conflict.
pub fn global_default_conflict(
    new: &PriorityClass,
    existing: &[PriorityClass],
) -> Option<GlobalDefaultConflict> {
    if new.global_default != Some(true) {
        return None;
    }
    let default = existing
        .iter()
        .filter(|pc| pc.global_default == Some(true))
        .min_by_key(|pc| pc.value.unwrap_or(0))?;
    let existing_name = default.metadata.name.clone().unwrap_or_default();
    if existing_name == new.metadata.name.as_deref().unwrap_or_default() {
        return None;
    }
    Some(GlobalDefaultConflict {
        existing: existing_name,
    })
}

/// PriorityClasses hold no quantities.
impl crate::quantities::Quantities for PriorityClass {}

/// Create and update rules of scheduling.k8s.io/v1 PriorityClasses
/// (cluster-scoped, no status).
#[derive(Clone, Copy, Debug, Default)]
pub struct PriorityClassStrategy;

impl Strategy for PriorityClassStrategy {
    type Object = PriorityClass;
    const NAMESPACED: bool = false;

    /// `SetDefaults_PriorityClass`: preemptionPolicy `PreemptLowerPriority`.
    fn default(obj: &mut PriorityClass) {
        if obj.preemption_policy.is_none() {
            obj.preemption_policy = Some(PREEMPT_LOWER_PRIORITY.to_owned());
        }
    }

    /// Generation 1.
    fn prepare_for_create(obj: &mut PriorityClass) {
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &PriorityClass, _ctx: &Context<'_>) -> ErrorList {
        before_create_scoped(validate_priority_class(obj), &obj.metadata, false)
    }

    fn validate_update(new: &PriorityClass, old: &PriorityClass, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, false);
        errs.append(validate_priority_class_update(new, old));
        errs
    }

    /// PriorityClasses have no `/status`; the stored object is kept.
    fn prepare_for_status_update(new: &mut PriorityClass, old: &PriorityClass) {
        *new = old.clone();
    }

    fn validate_status_update(
        new: &PriorityClass,
        old: &PriorityClass,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_common_fields_scoped(&new.metadata, &old.metadata, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::{admit_create, admit_update};

    fn pc(name: &str, value: i32) -> PriorityClass {
        PriorityClass {
            metadata: ObjectMeta {
                name: Some(name.into()),
                resource_version: Some("1".into()),
                ..ObjectMeta::default()
            },
            value: Some(value),
            global_default: Some(false),
            description: Some("Used for the highest priority pods.".into()),
            preemption_policy: None,
        }
    }

    /// `TestValidatePriorityClass` of upstream's validation_test.go.
    #[test]
    fn validate_priority_class_table() {
        let spcs = system_priority_classes();
        let mut success = vec![("tier1", pc("tier1", 100))];
        for s in &spcs {
            success.push(("system", s.clone()));
        }
        let mut never = pc("tier1", 100);
        never.preemption_policy = Some(PREEMPT_NEVER.into());
        success.push(("valid preemptionPolicy", never));
        for (name, p) in success {
            assert!(validate_priority_class(&p).is_empty(), "{name}");
        }

        let mut bad_policy = pc("tier1", 100);
        bad_policy.preemption_policy = Some("foo".into());
        let mut ns = pc("tier1", 100);
        ns.metadata.namespace = Some("foo".into());
        let mut wrong_default = spcs[0].clone();
        wrong_default.global_default = Some(true);
        let error_cases: Vec<(&str, PriorityClass, &str)> = vec![
            (
                "invalid name",
                pc("tier&1", 100),
                r#"metadata.name: Invalid value: "tier&1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ),
            (
                "invalid namespace",
                ns,
                "metadata.namespace: Forbidden: not allowed on this type",
            ),
            (
                "invalid preemptionPolicy",
                bad_policy,
                r#"preemptionPolicy: Unsupported value: "foo": supported values: "PreemptLowerPriority", "Never""#,
            ),
            (
                "incorrect system class name",
                pc("system-tier1", 100),
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-tier1 is not a known system priority class",
            ),
            (
                "incorrect system class value",
                PriorityClass {
                    value: Some(100),
                    ..spcs[0].clone()
                },
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000",
            ),
            (
                "incorrect system class globalDefault",
                wrong_default,
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: globalDefault of system-node-critical PriorityClass must be false",
            ),
            (
                "user value above the limit",
                pc("tier1", HIGHEST_USER_DEFINABLE_PRIORITY + 1),
                "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
            ),
        ];
        for (name, p, want) in error_cases {
            assert_eq!(validate_priority_class(&p).to_string(), want, "{name}");
        }
    }

    /// `TestValidatePriorityClassUpdate` of upstream's validation_test.go.
    #[test]
    fn validate_priority_class_update_table() {
        let old = PriorityClass {
            preemption_policy: Some(PREEMPT_LOWER_PRIORITY.into()),
            ..pc("tier1", 100)
        };
        let ok: Vec<(&str, PriorityClass)> = vec![
            (
                "description change",
                PriorityClass {
                    description: Some("x".into()),
                    ..old.clone()
                },
            ),
            (
                "globalDefault change",
                PriorityClass {
                    global_default: Some(true),
                    ..old.clone()
                },
            ),
        ];
        for (name, new) in ok {
            assert!(
                validate_priority_class_update(&new, &old).is_empty(),
                "{name}"
            );
        }
        let mut renamed = old.clone();
        renamed.metadata.name = Some("tier2".into());
        let mut no_rv = old.clone();
        no_rv.metadata.resource_version = None;
        let bad: Vec<(&str, PriorityClass, &str)> = vec![
            (
                "invalid name update",
                renamed,
                r#"metadata.name: Invalid value: "tier2": field is immutable"#,
            ),
            (
                "missing resourceVersion",
                no_rv,
                r#"metadata.resourceVersion: Invalid value: "": must be specified for an update"#,
            ),
            (
                "invalid value update",
                PriorityClass {
                    value: Some(101),
                    ..old.clone()
                },
                "value: Forbidden: may not be changed in an update.",
            ),
            (
                "preemptionPolicy changed",
                PriorityClass {
                    preemption_policy: Some(PREEMPT_NEVER.into()),
                    ..old.clone()
                },
                r#"preemptionPolicy: Invalid value: "Never": field is immutable"#,
            ),
        ];
        for (name, new, want) in bad {
            assert_eq!(
                validate_priority_class_update(&new, &old).to_string(),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn strategy_defaults_preemption_and_keeps_value() {
        let absent = Absent::default();
        let ctx = Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent: &absent,
        };
        let mut new = pc("high", 1000);
        admit_create::<PriorityClassStrategy>(&mut new, &ctx).expect("valid");
        assert_eq!(
            new.preemption_policy.as_deref(),
            Some(PREEMPT_LOWER_PRIORITY)
        );
        assert_eq!(new.metadata.generation, Some(1));
        for s in system_priority_classes() {
            let mut s = s;
            admit_create::<PriorityClassStrategy>(&mut s, &ctx).expect("system class");
        }
        let mut changed = new.clone();
        changed.value = Some(5);
        let err =
            admit_update::<PriorityClassStrategy>(&mut changed, &new, &ctx).expect_err("immutable");
        assert_eq!(
            err.message(),
            r#"PriorityClass.scheduling.k8s.io "high" is invalid: value: Forbidden: may not be changed in an update."#
        );
    }

    #[test]
    fn system_classes_cannot_be_deleted() {
        assert_eq!(
            delete_refusal("system-node-critical"),
            Some("this is a system priority class and cannot be deleted")
        );
        assert_eq!(
            delete_refusal("system-cluster-critical"),
            Some(SYSTEM_CLASS_DELETE_REFUSAL)
        );
        assert_eq!(delete_refusal("system-other"), None);
        assert_eq!(delete_refusal("high"), None);
    }

    #[test]
    fn system_classes_are_upstreams() {
        let got: Vec<(String, i32)> = system_priority_classes()
            .into_iter()
            .map(|p| (p.metadata.name.unwrap_or_default(), p.value.unwrap_or(0)))
            .collect();
        assert_eq!(
            got,
            [
                ("system-node-critical".to_owned(), 2_000_001_000),
                ("system-cluster-critical".to_owned(), 2_000_000_000)
            ]
        );
    }

    /// Upstream's admission tests (`TestPriorityClassAdmission`): one default only.
    #[test]
    fn one_global_default() {
        let default = |name: &str, value: i32| PriorityClass {
            global_default: Some(true),
            ..pc(name, value)
        };
        let existing = vec![pc("a", 1), default("d1", 1000)];
        let cases: Vec<(&str, PriorityClass, &[PriorityClass], Option<&str>)> = vec![
            ("one default class", default("new", 5), &[], None),
            ("not a default", pc("new", 5), &existing, None),
            ("second default", default("new", 5), &existing, Some("d1")),
            (
                "update of the default itself",
                default("d1", 1000),
                &existing,
                None,
            ),
        ];
        for (name, new, existing, want) in cases {
            assert_eq!(
                global_default_conflict(&new, existing).map(|c| c.existing),
                want.map(str::to_owned),
                "{name}"
            );
        }
        let racy = vec![default("d1", 1000), default("d0", 10)];
        let conflict = global_default_conflict(&default("new", 1), &racy).expect("conflict");
        assert_eq!(
            conflict.to_string(),
            "PriorityClass d0 is already marked as default. Only one default can exist"
        );
    }
}
