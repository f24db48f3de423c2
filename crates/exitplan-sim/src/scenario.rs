//! The scenario model and its parser. Every problem is reported before
//! anything runs, as `file:line: reason`.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_saphyr::Spanned;

use crate::duration;
use crate::kinds::KindInfo;

/// The virtual clock's start when a scenario names none.
pub const DEFAULT_START: &str = "2026-11-29T10:00:00Z";
/// Simulated nodes when a scenario names no count.
pub const DEFAULT_NODES: usize = 3;
/// The most simulated nodes a scenario may ask for.
pub const MAX_NODES: usize = 100;
/// The requester name of the `drain` step's EvictionRequests.
pub const DRAIN_REQUESTER: &str = "exitplan.io/drain";

/// An invalid scenario: where and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ScenarioError {
    /// The file name as given.
    pub file: String,
    /// The 1-based line.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

/// A parsed, validated scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The file name as given (for messages).
    pub file: String,
    /// Shown in the header.
    pub name: String,
    /// The virtual clock's start.
    pub start: Timestamp,
    /// The seed (see `docs/simulate.md`: the server does not take injected
    /// UIDs, so output never shows UIDs instead).
    pub seed: u64,
    /// Simulated nodes `node-1..node-N`.
    pub nodes: usize,
    /// Stop at `start + until`; `None`: when every step ran and the timeline
    /// was quiet for [`crate::engine::QUIET`].
    pub until: Option<Duration>,
    /// Objects applied at the start, in order.
    pub objects: Vec<Located<Value>>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// What to print at the end.
    pub show: Vec<Located<Show>>,
}

/// A value and the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Located<T> {
    /// The 1-based line.
    pub line: u64,
    /// The value.
    pub value: T,
}

/// One step.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Index in `steps`.
    pub index: usize,
    /// The 1-based line.
    pub line: u64,
    /// When it runs, relative to the start.
    pub at: Duration,
    /// What it does.
    pub action: Action,
}

/// What a step does.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Cordon the node and create one EvictionRequest per pod on it.
    Drain(String),
    /// Make the node schedulable again.
    Uncordon(String),
    /// Start or stop an in-process responder.
    Responder(ResponderStep),
    /// Create or update an object (server-side apply).
    Apply(Value),
    /// Patch an object.
    Patch(PatchStep),
    /// Delete an object.
    Delete(ObjectRef),
    /// Set an EvictionRequest's intent to `Withdrawn`.
    Withdraw(ObjectRef),
    /// Make a container of a pod exit now.
    Exit(ExitStep),
    /// Create an EvictionRequest for a pod (its current UID).
    Request(RequestStep),
    /// Let time pass: the step's instant is the previous one's plus this.
    Advance(Duration),
}

/// A `request` step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestStep {
    /// The pod.
    pub pod: String,
    /// Its namespace (and the EvictionRequest's).
    pub namespace: String,
    /// The requester (default [`REQUESTER`]).
    pub requester: String,
    /// The EvictionRequest's name (default `request-<pod>`).
    pub name: String,
}

/// The default requester of `request` steps.
pub const REQUESTER: &str = "exitplan.io/simulate";

/// A `responder` step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponderStep {
    /// The responder name (`mover.acme.io/migrate`).
    pub name: String,
    /// How long its work takes once Active.
    pub work: Duration,
    /// Stop heartbeating halfway through the work (never complete).
    pub fail: bool,
    /// Stop a running responder of that name instead of starting one.
    pub stop: bool,
}

/// The patch types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PatchType {
    /// JSON merge patch (RFC 7386).
    Merge,
    /// Strategic merge patch.
    Strategic,
}

/// A `patch` step.
#[derive(Clone, Debug, PartialEq)]
pub struct PatchStep {
    /// The object.
    pub target: ObjectRef,
    /// The patch type.
    pub patch_type: PatchType,
    /// The patch body.
    pub patch: Value,
    /// `status` to patch the status subresource.
    pub subresource: Option<String>,
}

/// A reference to one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectRef {
    /// Its kind.
    pub kind: KindInfo,
    /// Its name.
    pub name: String,
    /// Its namespace (namespaced kinds; default `default`).
    pub namespace: Option<String>,
}

/// An `exit` step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitStep {
    /// The pod.
    pub pod: String,
    /// Its namespace.
    pub namespace: String,
    /// One container (default: every container).
    pub container: Option<String>,
    /// The exit code.
    pub code: i32,
}

/// A `show` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Show {
    /// The kind.
    pub kind: KindInfo,
    /// One namespace (default: all).
    pub namespace: Option<String>,
    /// One object (default: all).
    pub name: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Option<String>,
    start: Option<Spanned<String>>,
    seed: Option<u64>,
    nodes: Option<Spanned<u64>>,
    until: Option<Spanned<String>>,
    #[serde(default)]
    objects: Vec<Spanned<Value>>,
    #[serde(default)]
    steps: Vec<Spanned<BTreeMap<String, Spanned<Value>>>>,
    #[serde(default)]
    show: Vec<Spanned<Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResponder {
    name: String,
    work: Option<String>,
    #[serde(default)]
    fail: bool,
    #[serde(default)]
    stop: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRef {
    kind: String,
    name: String,
    namespace: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPatch {
    kind: String,
    name: String,
    namespace: Option<String>,
    #[serde(rename = "type", default = "merge")]
    patch_type: PatchType,
    patch: Value,
    subresource: Option<String>,
}

fn merge() -> PatchType {
    PatchType::Merge
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWithdraw {
    name: String,
    namespace: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExit {
    pod: String,
    namespace: Option<String>,
    container: Option<String>,
    #[serde(default)]
    code: i32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequest {
    pod: String,
    namespace: Option<String>,
    requester: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShow {
    kind: String,
    namespace: Option<String>,
    name: Option<String>,
}

/// The step kinds, for messages.
pub const STEP_KINDS: &[&str] = &[
    "drain",
    "uncordon",
    "responder",
    "apply",
    "patch",
    "delete",
    "withdraw",
    "exit",
    "request",
    "advance",
];

/// The default work of a responder.
pub const DEFAULT_WORK: Duration = Duration::from_secs(60);

impl Scenario {
    /// Parses and validates `text`; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let err = |line: u64, message: String| ScenarioError {
            file: file.to_owned(),
            line,
            message,
        };
        if text.trim().is_empty() {
            return Err(err(1, "empty scenario".into()));
        }
        // YAML 1.2 booleans only: a pod named `n` or `yes` stays a string.
        let options = serde_saphyr::options! { strict_booleans: true };
        let raw: RawScenario = serde_saphyr::from_str_with_options(text, options).map_err(|e| {
            let line = e.location().map(|l| l.line()).unwrap_or(1);
            err(line, saphyr_message(&e.to_string()))
        })?;

        let start = match &raw.start {
            None => DEFAULT_START.parse().map_err(|e| err(1, format!("{e}")))?,
            Some(s) => s.value.parse::<Timestamp>().map_err(|e| {
                err(
                    s.referenced.line(),
                    format!("start: invalid RFC 3339 instant {:?}: {e}", s.value),
                )
            })?,
        };
        let nodes = match &raw.nodes {
            None => DEFAULT_NODES,
            Some(n) => usize::try_from(n.value)
                .ok()
                .filter(|v| *v <= MAX_NODES)
                .ok_or_else(|| {
                    err(
                        n.referenced.line(),
                        format!("nodes: {} is more than {MAX_NODES}", n.value),
                    )
                })?,
        };
        let until = match &raw.until {
            None => None,
            Some(u) => Some(
                duration::parse(&u.value)
                    .map_err(|e| err(u.referenced.line(), format!("until: {e}")))?,
            ),
        };

        let mut objects = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (i, o) in raw.objects.iter().enumerate() {
            let line = o.referenced.line();
            let info =
                check_object(&o.value).map_err(|m| err(line, format!("objects[{i}]: {m}")))?;
            // Into an empty cluster every first mention is a create: admit it
            // as the API server will, so a bad object stops the run here.
            let key = (info.kind, namespace_of(info, &o.value), name_of(&o.value));
            if seen.insert(key) {
                admit_create(info, &o.value, start)
                    .map_err(|m| err(line, format!("objects[{i}]: {m}")))?;
            }
            objects.push(Located {
                line,
                value: o.value.clone(),
            });
        }

        let mut steps = Vec::new();
        let mut cursor = Duration::ZERO;
        for (i, s) in raw.steps.iter().enumerate() {
            let line = s.referenced.line();
            let step = parse_step(i, line, &s.value, cursor)
                .map_err(|(l, m)| err(l, format!("steps[{i}]: {m}")))?;
            if let Some(u) = until
                && step.at > u
            {
                return Err(err(
                    line,
                    format!(
                        "steps[{i}]: runs at {} after until ({})",
                        duration::format(step.at),
                        duration::format(u)
                    ),
                ));
            }
            cursor = step.at;
            steps.push(step);
        }

        let mut show = Vec::new();
        for (i, s) in raw.show.iter().enumerate() {
            let line = s.referenced.line();
            let r: RawShow =
                from_value(&s.value).map_err(|m| err(line, format!("show[{i}]: {m}")))?;
            let kind = find_kind(&r.kind).map_err(|m| err(line, format!("show[{i}]: {m}")))?;
            show.push(Located {
                line,
                value: Show {
                    kind,
                    namespace: if kind.namespaced { r.namespace } else { None },
                    name: r.name,
                },
            });
        }

        Ok(Scenario {
            file: file.to_owned(),
            name: raw.name.unwrap_or_else(|| file.to_owned()),
            start,
            seed: raw.seed.unwrap_or(1),
            nodes,
            until,
            objects,
            steps,
            show,
        })
    }

    /// The simulated node names, `node-1..node-N`.
    pub fn node_names(&self) -> Vec<String> {
        (1..=self.nodes).map(|i| format!("node-{i}")).collect()
    }
}

/// The reason part of a serde-saphyr message: its first line, without the
/// `error: line L column C: ` prefix (the line is reported separately).
fn saphyr_message(s: &str) -> String {
    let first = s.lines().next().unwrap_or(s).trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    match first.strip_prefix("line ") {
        Some(rest) => match rest.split_once(": ") {
            Some((pos, msg)) if pos.contains("column") => msg.to_owned(),
            _ => first.to_owned(),
        },
        None => first.to_owned(),
    }
}

fn from_value<T: DeserializeOwned>(v: &Value) -> Result<T, String> {
    serde_json::from_value(v.clone()).map_err(|e| e.to_string())
}

fn find_kind(kind: &str) -> Result<KindInfo, String> {
    KindInfo::find(kind).ok_or_else(|| {
        format!(
            "unknown kind {kind:?} (the simulation serves {})",
            KindInfo::names()
        )
    })
}

/// An object to apply: a mapping with `apiVersion`, a served `kind` and
/// `metadata.name`.
fn check_object(v: &Value) -> Result<KindInfo, String> {
    let obj = v.as_object().ok_or("not a mapping")?;
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .ok_or("missing kind")?;
    let info = KindInfo::find(kind)
        .filter(|i| i.kind == kind)
        .ok_or_else(|| {
            format!(
                "unknown kind {kind:?} (the simulation serves {})",
                KindInfo::names()
            )
        })?;
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .ok_or("missing apiVersion")?;
    if api_version != info.api_version() {
        return Err(format!(
            "{kind} is served as apiVersion {}, not {api_version:?}",
            info.api_version()
        ));
    }
    let name = v
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.is_empty() {
        return Err("missing metadata.name (generateName is not supported: names must be known to keep runs identical)".into());
    }
    Ok(info)
}

fn name_of(v: &Value) -> String {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn namespace_of(info: KindInfo, v: &Value) -> Option<String> {
    info.namespaced.then(|| {
        v.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default")
            .to_owned()
    })
}

/// The API server's create admission (defaulting, strategy, validation) for
/// the kinds `exitplan_api` has strategies for; others pass.
fn admit_create(info: KindInfo, v: &Value, now: Timestamp) -> Result<(), String> {
    use exitplan_api::batch::JobStrategy;
    use exitplan_api::core::pod::PodStrategy;
    use exitplan_api::lifecycle::eviction::EvictionStrategy;
    use exitplan_api::lifecycle::evictionrequest::EvictionRequestStrategy;
    use exitplan_api::policy::pdb::PodDisruptionBudgetStrategy;
    let mut v = v.clone();
    if let (Some(ns), Some(meta)) = (
        namespace_of(info, &v),
        v.get_mut("metadata").and_then(Value::as_object_mut),
    ) {
        meta.insert("namespace".into(), Value::String(ns));
    }
    match info.kind {
        "Pod" => admit_as::<PodStrategy>(&v, now),
        "Job" => admit_as::<JobStrategy>(&v, now),
        "PodDisruptionBudget" => admit_as::<PodDisruptionBudgetStrategy>(&v, now),
        "EvictionRequest" => admit_as::<EvictionRequestStrategy>(&v, now),
        "Eviction" => admit_as::<EvictionStrategy>(&v, now),
        _ => Ok(()),
    }
}

fn admit_as<S>(v: &Value, now: Timestamp) -> Result<(), String>
where
    S: exitplan_api::strategy::Strategy,
    S::Object: DeserializeOwned,
{
    use exitplan_api::strategy::{Context, SystemFields, admit_create, fill_system_fields};
    let absent = exitplan_api::absent::find_absent(v);
    let ctx = Context {
        now,
        absent: &absent,
    };
    let mut obj: S::Object = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    fill_system_fields(
        k8s_openapi::Metadata::metadata_mut(&mut obj),
        &SystemFields {
            uid: "00000000-0000-4000-8000-000000000000".into(),
            creation_timestamp: now,
            generated_name_suffix: "00000".into(),
        },
    );
    admit_create::<S>(&mut obj, &ctx).map_err(|e| e.message())
}

fn parse_step(
    index: usize,
    line: u64,
    map: &BTreeMap<String, Spanned<Value>>,
    previous: Duration,
) -> Result<Step, (u64, String)> {
    let mut at = None;
    let mut kinds = Vec::new();
    for (key, value) in map {
        let vline = value.referenced.line();
        if key == "at" {
            let text = match &value.value {
                Value::String(s) => s.clone(),
                Value::Number(n) if n.as_u64() == Some(0) => "0".into(),
                other => return Err((vline, format!("at: expected a duration, got {other}"))),
            };
            at = Some(duration::parse(&text).map_err(|e| (vline, format!("at: {e}")))?);
        } else if STEP_KINDS.contains(&key.as_str()) {
            kinds.push((key.as_str(), value));
        } else {
            return Err((
                vline,
                format!(
                    "unknown step kind {key:?} (one of {})",
                    STEP_KINDS.join(", ")
                ),
            ));
        }
    }
    let (kind, value) = match kinds.as_slice() {
        [one] => *one,
        [] => {
            return Err((
                line,
                format!("no step kind (one of {})", STEP_KINDS.join(", ")),
            ));
        }
        [_, second, ..] => {
            return Err((
                second.1.referenced.line(),
                format!(
                    "more than one step kind ({} and {}): one per step",
                    kinds[0].0, second.0
                ),
            ));
        }
    };
    let vline = value.referenced.line();
    let v = &value.value;
    let fail = |m: String| (vline, format!("{kind}: {m}"));
    let action = match kind {
        "drain" | "uncordon" => {
            let node = v
                .as_str()
                .filter(|s| !s.is_empty())
                .ok_or_else(|| fail("expected a node name".into()))?
                .to_owned();
            if kind == "drain" {
                Action::Drain(node)
            } else {
                Action::Uncordon(node)
            }
        }
        "responder" => {
            let r: RawResponder = from_value(v).map_err(fail)?;
            let work = match &r.work {
                None => DEFAULT_WORK,
                Some(w) => duration::parse(w).map_err(|e| fail(format!("work: {e}")))?,
            };
            if r.name.is_empty() {
                return Err(fail("name: must not be empty".into()));
            }
            Action::Responder(ResponderStep {
                name: r.name,
                work,
                fail: r.fail,
                stop: r.stop,
            })
        }
        "apply" => {
            check_object(v).map_err(fail)?;
            Action::Apply(v.clone())
        }
        "patch" => {
            let p: RawPatch = from_value(v).map_err(fail)?;
            let kind_info = find_kind(&p.kind).map_err(fail)?;
            if let Some(s) = &p.subresource
                && s != "status"
            {
                return Err(fail(format!("subresource: only \"status\", not {s:?}")));
            }
            if !p.patch.is_object() {
                return Err(fail("patch: expected a mapping".into()));
            }
            Action::Patch(PatchStep {
                target: object_ref(kind_info, p.name, p.namespace),
                patch_type: p.patch_type,
                patch: p.patch,
                subresource: p.subresource,
            })
        }
        "delete" => {
            let r: RawRef = from_value(v).map_err(fail)?;
            let kind_info = find_kind(&r.kind).map_err(fail)?;
            Action::Delete(object_ref(kind_info, r.name, r.namespace))
        }
        "withdraw" => {
            let r: RawWithdraw = from_value(v).map_err(fail)?;
            let kind_info = find_kind("EvictionRequest").map_err(fail)?;
            Action::Withdraw(object_ref(kind_info, r.name, r.namespace))
        }
        "exit" => {
            let e: RawExit = from_value(v).map_err(fail)?;
            Action::Exit(ExitStep {
                pod: e.pod,
                namespace: e.namespace.unwrap_or_else(|| "default".into()),
                container: e.container,
                code: e.code,
            })
        }
        "request" => {
            let r: RawRequest = from_value(v).map_err(fail)?;
            Action::Request(RequestStep {
                name: r.name.unwrap_or_else(|| format!("request-{}", r.pod)),
                pod: r.pod,
                namespace: r.namespace.unwrap_or_else(|| "default".into()),
                requester: r.requester.unwrap_or_else(|| REQUESTER.into()),
            })
        }
        _ => {
            // "advance"
            let text = v
                .as_str()
                .ok_or_else(|| fail("expected a duration".into()))?;
            let d = duration::parse(text).map_err(fail)?;
            Action::Advance(d)
        }
    };
    let at = match (&action, at) {
        (Action::Advance(_), Some(_)) => {
            return Err((
                line,
                "advance: takes no `at` (it is relative to the previous step)".into(),
            ));
        }
        (Action::Advance(d), None) => previous.saturating_add(*d),
        (_, Some(at)) => at,
        (_, None) => previous,
    };
    if at < previous {
        return Err((
            line,
            format!(
                "at {} is before the previous step ({}): steps run in file order",
                duration::format(at),
                duration::format(previous)
            ),
        ));
    }
    Ok(Step {
        index,
        line,
        at,
        action,
    })
}

fn object_ref(kind: KindInfo, name: String, namespace: Option<String>) -> ObjectRef {
    let namespace = if kind.namespaced {
        Some(namespace.unwrap_or_else(|| "default".into()))
    } else {
        None
    };
    ObjectRef {
        kind,
        name,
        namespace,
    }
}
