//! Per-pod behaviour of simulated nodes, scripted by annotations.
//!
//! | annotation | meaning | default |
//! |---|---|---|
//! | `sim.exitplan.io/run` | how long each container runs before it exits on its own (Go duration: `30s`, `5m`) | regular containers: forever; init containers: `0s` |
//! | `sim.exitplan.io/exit-code` | exit code when a container exits on its own | `0` |
//! | `sim.exitplan.io/stop` | how long a container takes to exit after SIGTERM | `0s` |
//! | `sim.exitplan.io/sigterm-exit-code` | exit code after SIGTERM (a container still running at the end of the grace period is killed: `137`) | `143` |
//! | `sim.exitplan.io/ready-after` | how long after starting a container reports ready | `0s` |
//! | `sim.exitplan.io/exit-at` | an instant (RFC 3339) at which a running container exits on its own (with `exit-code`), whatever `run` says — how a scenario makes a pod fail "now" | none |
//! | `sim.exitplan.io/conditions` | pod conditions the kubelet adds when a container exits on its own (not after SIGTERM): a comma list of `<Type>=<Status>[:<Reason>]`, e.g. `ConfigIssue=True:BadConfig`; `Status` is `True`, `False` or `Unknown`; written in the same status update as the exit, so a pod that fails carries them when the Job controller sees it fail | none |
//!
//! Each key may be suffixed with `.<container name>` to apply to one
//! container only (init containers included): `sim.exitplan.io/exit-code.main: "42"`.
//! The per-container key wins over the pod-wide one. An unparsable value is
//! ignored (the default applies) and reported by [`PodScript::problems`].

use std::collections::BTreeMap;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Pod;

/// Prefix of every scripting annotation.
pub const PREFIX: &str = "sim.exitplan.io/";
/// Annotation: how long a container runs before exiting on its own.
pub const RUN: &str = "run";
/// Annotation: exit code when a container exits on its own.
pub const EXIT_CODE: &str = "exit-code";
/// Annotation: time to exit after SIGTERM.
pub const STOP: &str = "stop";
/// Annotation: exit code after SIGTERM.
pub const SIGTERM_EXIT_CODE: &str = "sigterm-exit-code";
/// Annotation: delay before a container reports ready.
pub const READY_AFTER: &str = "ready-after";
/// Annotation: an instant at which a running container exits on its own.
pub const EXIT_AT: &str = "exit-at";
/// Annotation: pod conditions added when a container exits on its own.
pub const CONDITIONS: &str = "conditions";

/// A pod condition scripted by [`CONDITIONS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedCondition {
    /// The condition's `type`.
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// The condition's `reason`, if given.
    pub reason: Option<String>,
}

/// Parses a [`CONDITIONS`] value: a comma list of `<Type>=<Status>[:<Reason>]`.
/// `None` when any item does not parse (empty type, status not
/// `True`/`False`/`Unknown`, empty reason after `:`).
pub fn parse_conditions(value: &str) -> Option<Vec<ScriptedCondition>> {
    value
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| {
            let (type_, rest) = item.split_once('=')?;
            let (status, reason) = match rest.split_once(':') {
                Some((s, r)) => (s.trim(), Some(r.trim())),
                None => (rest.trim(), None),
            };
            let type_ = type_.trim();
            if type_.is_empty()
                || !matches!(status, "True" | "False" | "Unknown")
                || reason.is_some_and(str::is_empty)
            {
                return None;
            }
            Some(ScriptedCondition {
                type_: type_.to_owned(),
                status: status.to_owned(),
                reason: reason.map(str::to_owned),
            })
        })
        .collect()
}

/// Exit code of a container stopped by SIGTERM (128 + 15).
pub const EXIT_SIGTERM: i32 = 143;
/// Exit code of a container killed at the end of its grace period (128 + 9).
pub const EXIT_SIGKILL: i32 = 137;

/// The scripted behaviour of one pod.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodScript {
    annotations: BTreeMap<String, String>,
}

impl PodScript {
    /// The script in `pod`'s annotations.
    pub fn of(pod: &Pod) -> PodScript {
        let annotations = pod
            .metadata
            .annotations
            .iter()
            .flatten()
            .filter_map(|(k, v)| k.strip_prefix(PREFIX).map(|k| (k.to_owned(), v.clone())))
            .collect();
        PodScript { annotations }
    }

    fn raw(&self, key: &str, container: &str) -> Option<&str> {
        self.annotations
            .get(&format!("{key}.{container}"))
            .or_else(|| self.annotations.get(key))
            .map(String::as_str)
    }

    fn duration(&self, key: &str, container: &str) -> Option<SignedDuration> {
        self.raw(key, container)
            .and_then(|v| v.trim().parse::<SignedDuration>().ok())
            .filter(|d| !d.is_negative())
    }

    fn code(&self, key: &str, container: &str) -> Option<i32> {
        self.raw(key, container)
            .and_then(|v| v.trim().parse::<i32>().ok())
    }

    /// How long `container` runs before exiting on its own; `None` is forever.
    pub fn run(&self, container: &str, init: bool) -> Option<SignedDuration> {
        self.duration(RUN, container)
            .or(init.then_some(SignedDuration::ZERO))
    }

    /// The exit code when `container` exits on its own.
    pub fn exit_code(&self, container: &str) -> i32 {
        self.code(EXIT_CODE, container).unwrap_or(0)
    }

    /// How long `container` takes to exit after SIGTERM.
    pub fn stop(&self, container: &str) -> SignedDuration {
        self.duration(STOP, container)
            .unwrap_or(SignedDuration::ZERO)
    }

    /// The exit code after SIGTERM.
    pub fn sigterm_exit_code(&self, container: &str) -> i32 {
        self.code(SIGTERM_EXIT_CODE, container)
            .unwrap_or(EXIT_SIGTERM)
    }

    /// The instant at which `container` exits on its own, if scripted.
    pub fn exit_at(&self, container: &str) -> Option<jiff::Timestamp> {
        self.raw(EXIT_AT, container)
            .and_then(|v| v.trim().parse().ok())
    }

    /// The pod conditions added when `container` exits on its own (empty
    /// when none are scripted or the value does not parse).
    pub fn conditions(&self, container: &str) -> Vec<ScriptedCondition> {
        self.raw(CONDITIONS, container)
            .and_then(parse_conditions)
            .unwrap_or_default()
    }

    /// How long after starting `container` reports ready.
    pub fn ready_after(&self, container: &str) -> SignedDuration {
        self.duration(READY_AFTER, container)
            .unwrap_or(SignedDuration::ZERO)
    }

    /// Scripting annotations whose value could not be parsed, as
    /// `(annotation, value)` — the defaults apply to them.
    pub fn problems(&self) -> Vec<(String, String)> {
        self.annotations
            .iter()
            .filter(|(k, v)| {
                let base = k.split('.').next().unwrap_or_default();
                let ok = match base {
                    RUN | STOP | READY_AFTER => v
                        .trim()
                        .parse::<SignedDuration>()
                        .is_ok_and(|d| !d.is_negative()),
                    EXIT_CODE | SIGTERM_EXIT_CODE => v.trim().parse::<i32>().is_ok(),
                    EXIT_AT => v.trim().parse::<jiff::Timestamp>().is_ok(),
                    CONDITIONS => parse_conditions(v).is_some(),
                    _ => false,
                };
                !ok
            })
            .map(|(k, v)| (format!("{PREFIX}{k}"), v.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(annotations: &[(&str, &str)]) -> Pod {
        Pod {
            metadata: ObjectMeta {
                annotations: Some(
                    annotations
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                ),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn per_container_keys_win_and_defaults_apply() {
        let s = PodScript::of(&pod(&[
            ("sim.exitplan.io/run", "30s"),
            ("sim.exitplan.io/exit-code", "1"),
            ("sim.exitplan.io/exit-code.main", "42"),
            ("sim.exitplan.io/stop", "bogus"),
            ("other.io/x", "y"),
        ]));
        assert_eq!(s.run("main", false), Some(SignedDuration::from_secs(30)));
        assert_eq!(s.exit_code("main"), 42);
        assert_eq!(s.exit_code("side"), 1);
        assert_eq!(s.stop("main"), SignedDuration::ZERO);
        assert_eq!(s.sigterm_exit_code("main"), EXIT_SIGTERM);
        assert_eq!(
            s.problems(),
            vec![("sim.exitplan.io/stop".to_owned(), "bogus".to_owned())]
        );
        let none = PodScript::of(&pod(&[]));
        assert!(none.conditions("main").is_empty());
        assert_eq!(
            none.run("main", false),
            None,
            "regular containers run forever"
        );
        assert_eq!(
            none.run("init", true),
            Some(SignedDuration::ZERO),
            "init containers finish at once"
        );
    }

    #[test]
    fn conditions_parse_as_a_comma_list() {
        let s = PodScript::of(&pod(&[
            (
                "sim.exitplan.io/conditions",
                "ConfigIssue=True:BadConfig, Other=Unknown",
            ),
            ("sim.exitplan.io/conditions.side", "Nope=Maybe"),
        ]));
        assert_eq!(
            s.conditions("main"),
            vec![
                ScriptedCondition {
                    type_: "ConfigIssue".into(),
                    status: "True".into(),
                    reason: Some("BadConfig".into()),
                },
                ScriptedCondition {
                    type_: "Other".into(),
                    status: "Unknown".into(),
                    reason: None,
                },
            ]
        );
        assert!(
            s.conditions("side").is_empty(),
            "an unparsable value adds nothing"
        );
        assert_eq!(
            s.problems(),
            vec![(
                "sim.exitplan.io/conditions.side".to_owned(),
                "Nope=Maybe".to_owned()
            )]
        );
        assert_eq!(parse_conditions("=True"), None);
        assert_eq!(parse_conditions("A=True:"), None);
    }
}
