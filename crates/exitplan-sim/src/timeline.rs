//! The timeline: watched changes turned into human lines
//! (`t+1m  Eviction default/pod-1-web-0  mover.acme.io/migrate Active`), and
//! what each responder did per Eviction (the summary), and what each Job
//! spent: pods created and failed, failures counted or ignored by its pod
//! failure policy, its backoffLimit, its outcome.
//!
//! Lines at the same instant are ordered by object, then message, so the
//! output does not depend on task scheduling.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::lifecycle::v1alpha1::{Eviction, EvictionRequest};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::Resource;
use serde::Serialize;

use exitplan_clock::SharedClock;
use exitplan_control::job::pod_failure_policy::match_pod_failure_policy;
use exitplan_runtime::context::Context;
use exitplan_runtime::informer::Change;

use crate::duration;

/// One line of the timeline.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Entry {
    /// Virtual time since the start.
    #[serde(skip)]
    pub offset: Duration,
    /// `t+1m`.
    pub at: String,
    /// The kind (`Pod`), or `Responder` / `Step` for the engine's own lines.
    pub kind: String,
    /// `namespace/name`, or `name`.
    pub object: String,
    /// What happened.
    pub message: String,
}

impl Entry {
    /// `Kind namespace/name`.
    pub fn subject(&self) -> String {
        format!("{} {}", self.kind, self.object)
    }

    fn sort_key(&self) -> (Duration, String, u8, &str) {
        (
            self.offset,
            self.subject(),
            rank(&self.message),
            &self.message,
        )
    }
}

/// Where a line goes among the lines of one object at one instant: by what
/// it reports (creation first, deletion last), a function of its text only,
/// so the order never depends on task scheduling.
pub fn rank(message: &str) -> u8 {
    let first = message.split([',', ';']).next().unwrap_or(message);
    let starts = |p: &str| first.starts_with(p);
    if starts("created") || starts("registered") || starts("requested by") {
        0
    } else if starts("scheduled to") || starts("responders ") {
        1
    } else if first == "Pending" {
        2
    } else if first == "Running" {
        3
    } else if starts("DisruptionTarget") {
        6
    } else if first == "terminating" || first == "deleting" {
        7
    } else if starts("container ") {
        8
    } else if first == "Succeeded"
        || first == "Failed"
        || starts("TargetEvicted (")
        || starts("Failed (")
    {
        9
    } else if first == "deleted" {
        10
    } else {
        5
    }
}

/// `t+6m30s`.
pub fn format_offset(d: Duration) -> String {
    format!("t+{}", duration::format(d))
}

/// What one responder did for one Eviction, as the timeline saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ResponderRun {
    /// The responder.
    pub name: String,
    /// Its priority.
    pub priority: i32,
    /// Its last state.
    pub state: String,
    /// When it became Active (`t+1m`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// When it left Active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// How long it was Active (to its end, or to the end of the run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ran: Option<String>,
    #[serde(skip)]
    started_at: Option<Duration>,
    #[serde(skip)]
    ended_at: Option<Duration>,
}

/// What happened to one pod's Eviction.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EvictionSummary {
    /// The pod, `namespace/name`.
    pub pod: String,
    /// The Eviction's name.
    pub eviction: String,
    /// The responders in order.
    pub responders: Vec<ResponderRun>,
    /// The final condition (`TargetEvicted (PodDeleted)`), or `in progress`.
    pub outcome: String,
    /// When the outcome was reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome_at: Option<String>,
}

/// What one Job spent, as the timeline saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSummary {
    /// The Job, `namespace/name`.
    pub job: String,
    /// Its pod failure policy in short (`Ignore on DisruptionTarget`), or
    /// `none`.
    pub pod_failure_policy: String,
    /// `spec.backoffLimit` (default 6).
    pub backoff_limit: i32,
    /// Pods it created (every pod with the Job as controller seen).
    pub pods_created: usize,
    /// Of those, pods that failed (phase `Failed`).
    pub pods_failed: usize,
    /// Failures counted: the Job's `status.failed`.
    pub failures_counted: i32,
    /// Failed pods its pod failure policy ignores (an `Ignore` rule matches).
    pub failures_ignored: usize,
    /// `failed/backoffLimit` (`2/1`): the Job fails once failed exceeds the limit.
    pub backoff_limit_spent: String,
    /// `status.succeeded`.
    pub succeeded: i32,
    /// `Complete`, `Failed (REASON)`, or `running`.
    pub outcome: String,
    /// When it finished (its `Complete` or `Failed` condition turned True).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// From its creation to its finish.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub took: Option<String>,
}

/// Default `spec.backoffLimit`.
const DEFAULT_BACKOFF_LIMIT: i32 = 6;

fn job_summary(
    key: &str,
    job: &Job,
    t: &JobTrack,
    pods_created: usize,
    pods_failed: usize,
    failures_ignored: usize,
) -> JobSummary {
    let spec = job.spec.as_ref();
    let status = job.status.as_ref();
    let backoff_limit = spec
        .and_then(|s| s.backoff_limit)
        .unwrap_or(DEFAULT_BACKOFF_LIMIT);
    let failed = status.and_then(|s| s.failed).unwrap_or(0);
    JobSummary {
        job: key.to_owned(),
        pod_failure_policy: policy_text(job),
        backoff_limit,
        pods_created,
        pods_failed,
        failures_counted: failed,
        failures_ignored,
        backoff_limit_spent: format!("{failed}/{backoff_limit}"),
        succeeded: status.and_then(|s| s.succeeded).unwrap_or(0),
        outcome: job_finished(job).unwrap_or_else(|| "running".to_owned()),
        finished_at: t.finished_at.map(format_offset),
        took: t
            .finished_at
            .map(|f| duration::format(f.saturating_sub(t.created_at))),
    }
}

/// `Complete`, or `Failed (REASON)`, once the Job finished.
fn job_finished(job: &Job) -> Option<String> {
    let cs = job.status.as_ref()?.conditions.as_ref()?;
    let done = |t: &str| cs.iter().find(|c| c.type_ == t && c.status == "True");
    if done("Complete").is_some() {
        return Some("Complete".to_owned());
    }
    done("Failed").map(|c| match &c.reason {
        Some(r) => format!("Failed ({r})"),
        None => "Failed".to_owned(),
    })
}

/// The Job's pod failure policy in short: `Ignore on DisruptionTarget;
/// FailJob on exit codes In [42]`, or `none`.
fn policy_text(job: &Job) -> String {
    let rules = job
        .spec
        .as_ref()
        .and_then(|s| s.pod_failure_policy.as_ref())
        .map(|p| p.rules.as_slice())
        .unwrap_or(&[]);
    if rules.is_empty() {
        return "none".to_owned();
    }
    rules
        .iter()
        .map(|r| {
            let on = match (&r.on_exit_codes, &r.on_pod_conditions) {
                (Some(e), _) => format!("exit codes {} {:?}", e.operator, e.values),
                (None, Some(cs)) => cs
                    .iter()
                    .map(|c| c.type_.clone())
                    .collect::<Vec<_>>()
                    .join(" or "),
                (None, None) => "nothing".to_owned(),
            };
            format!("{} on {on}", r.action)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The Job controlling `pod` (its controller owner reference), by name.
fn job_of(pod: &Pod) -> Option<&str> {
    pod.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true) && o.kind == "Job" && o.api_version == "batch/v1")
        .map(|o| o.name.as_str())
}

#[derive(Default)]
struct State {
    entries: Vec<Entry>,
    /// Last virtual instant something changed (node heartbeats excluded).
    last_activity: Duration,
    /// `namespace/eviction name` → summary.
    evictions: BTreeMap<String, EvictionSummary>,
    /// `namespace/job name` → what the Job spent.
    jobs: BTreeMap<String, JobTrack>,
    /// `namespace/pod name` of a Job's pod → its Job and what became of it.
    job_pods: BTreeMap<String, JobPod>,
}

/// A Job as the timeline saw it.
#[derive(Default)]
struct JobTrack {
    /// Its last state.
    job: Option<Job>,
    /// Its line at the latest instant it changed: the instant, its state
    /// before that instant, and the line's index in `entries`.
    line: Option<(Duration, Option<Job>, usize)>,
    created_at: Duration,
    finished_at: Option<Duration>,
}

/// One pod of a Job.
struct JobPod {
    job: String,
    /// Whether it failed, and if so whether the Job's pod failure policy
    /// ignores the failure.
    failed: Option<bool>,
}

/// Records the timeline of one simulation.
#[derive(Clone)]
pub struct Recorder {
    clock: SharedClock,
    start: Timestamp,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder reading `clock`, with offsets from `start`.
    pub fn new(clock: SharedClock, start: Timestamp) -> Recorder {
        Recorder {
            clock,
            start,
            state: Arc::new(Mutex::new(State::default())),
        }
    }

    /// Registers change handlers on `ctx`'s informers (before they start).
    pub fn register(&self, ctx: &Context) {
        let r = self.clone();
        ctx.informers.pods.on_change(move |c| r.pod_change(c));
        let r = self.clone();
        ctx.informers.nodes.on_change(move |c| r.node_change(c));
        let r = self.clone();
        ctx.informers
            .eviction_requests
            .on_change(move |c| r.change(c, eviction_request_parts));
        let r = self.clone();
        ctx.informers
            .evictions
            .on_change(move |c| r.eviction_change(c));
        let r = self.clone();
        ctx.informers
            .pdbs
            .on_change(move |c| r.change(c, pdb_parts));
        let r = self.clone();
        ctx.informers.jobs.on_change(move |c| r.job_change(c));
    }

    /// Virtual time since the start, to the whole second. Components act
    /// on whole-second timers; what happens between them is a retry a few
    /// milliseconds after a write conflict, whose occurrence depends on task
    /// scheduling. Recording whole seconds keeps runs of one scenario alike.
    pub fn offset(&self) -> Duration {
        let d = Duration::try_from(self.clock.now().duration_since(self.start)).unwrap_or_default();
        Duration::from_secs(d.as_secs())
    }

    /// Adds a line now.
    pub fn push(&self, kind: &str, object: &str, message: String) {
        let offset = self.offset();
        if let Ok(mut s) = self.state.lock() {
            s.entries.push(Entry {
                offset,
                at: format_offset(offset),
                kind: kind.to_owned(),
                object: object.to_owned(),
                message,
            });
            s.last_activity = s.last_activity.max(offset);
        }
    }

    /// Notes activity now without a line.
    fn touch(&self) {
        let offset = self.offset();
        if let Ok(mut s) = self.state.lock() {
            s.last_activity = s.last_activity.max(offset);
        }
    }

    /// The last instant something changed (node heartbeats excluded).
    pub fn last_activity(&self) -> Duration {
        self.state
            .lock()
            .map(|s| s.last_activity)
            .unwrap_or_default()
    }

    /// The lines so far, sorted (instant, object, message).
    pub fn entries(&self) -> Vec<Entry> {
        let mut e = self
            .state
            .lock()
            .map(|s| s.entries.clone())
            .unwrap_or_default();
        e.retain(|e| !e.message.is_empty());
        e.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        e
    }

    /// What happened to every Eviction seen, by pod then Eviction name; a
    /// responder still Active counts its time to `end`.
    pub fn summary(&self, end: Duration) -> Vec<EvictionSummary> {
        let mut out: Vec<EvictionSummary> = self
            .state
            .lock()
            .map(|s| s.evictions.values().cloned().collect())
            .unwrap_or_default();
        for s in &mut out {
            for r in &mut s.responders {
                r.started = r.started_at.map(format_offset);
                r.ended = r.ended_at.map(format_offset);
                r.ran = r
                    .started_at
                    .map(|st| duration::format(r.ended_at.unwrap_or(end).saturating_sub(st)));
            }
        }
        out.sort_by(|a, b| (&a.pod, &a.eviction).cmp(&(&b.pod, &b.eviction)));
        out
    }

    /// What every Job seen spent, by `namespace/name`.
    pub fn job_summary(&self) -> Vec<JobSummary> {
        let Ok(s) = self.state.lock() else {
            return Vec::new();
        };
        s.jobs
            .iter()
            .filter_map(|(key, t)| {
                let job = t.job.as_ref()?;
                let pods = s.job_pods.values().filter(|p| &p.job == key);
                let (mut created, mut failed, mut ignored) = (0, 0, 0);
                for p in pods {
                    created += 1;
                    if let Some(counted) = p.failed {
                        failed += 1;
                        if !counted {
                            ignored += 1;
                        }
                    }
                }
                Some(job_summary(key, job, t, created, failed, ignored))
            })
            .collect()
    }

    fn pod_change(&self, c: &Change<Pod>) {
        let (pod, message) = match c {
            Change::Added(new) => (new.as_ref(), pod_parts(None, new)),
            Change::Updated { old, new } => (new.as_ref(), pod_parts(Some(old), new)),
            Change::Deleted(old) => (old.as_ref(), vec!["deleted".to_owned()]),
        };
        let mut message = message;
        if let Some(job) = job_of(pod)
            && !matches!(c, Change::Deleted(_))
            && let Ok(mut s) = self.state.lock()
        {
            let pod_key = key(pod);
            let job_key = format!(
                "{}/{job}",
                pod.metadata.namespace.as_deref().unwrap_or_default()
            );
            let policy = s
                .jobs
                .get(&job_key)
                .and_then(|t| t.job.as_ref())
                .and_then(|j| j.spec.as_ref())
                .and_then(|sp| sp.pod_failure_policy.clone());
            let entry = s.job_pods.entry(pod_key).or_insert(JobPod {
                job: job_key,
                failed: None,
            });
            let phase = pod.status.as_ref().and_then(|st| st.phase.as_deref());
            if entry.failed.is_none() && phase == Some("Failed") {
                let m = match_pod_failure_policy(policy.as_ref(), pod);
                entry.failed = Some(m.count_failed);
                message.push(match (m.count_failed, m.rule_index, &m.action) {
                    (false, Some(i), _) => {
                        format!("failure ignored (podFailurePolicy rules[{i}]: Ignore)")
                    }
                    (true, Some(i), Some(a)) => {
                        format!("failure counted (podFailurePolicy rules[{i}]: {a})")
                    }
                    _ => "failure counted".to_owned(),
                });
            }
        }
        match join(message, ", ") {
            Some(m) => self.push("Pod", &key(pod), m),
            None => self.touch(),
        }
    }

    /// A Job writes its status several times at one instant (pods
    /// created, then counted; a condition, then the next): one line per Job
    /// and instant shows what changed in that instant, from its state
    /// before it to its last, so lines do not depend on which intermediate
    /// writes the watch delivered.
    fn job_change(&self, c: &Change<Job>) {
        let offset = self.offset();
        let new = match c {
            Change::Added(new) | Change::Updated { new, .. } => new.as_ref(),
            Change::Deleted(old) => {
                self.push("Job", &key(old.as_ref()), "deleted".to_owned());
                return;
            }
        };
        let k = key(new);
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        let s = &mut *s;
        let t = s.jobs.entry(k.clone()).or_insert_with(|| JobTrack {
            created_at: offset,
            ..JobTrack::default()
        });
        if t.finished_at.is_none() && job_finished(new).is_some() {
            t.finished_at = Some(offset);
        }
        let (before, index) = match t.line.take() {
            Some((at, before, index)) if at == offset => (before, Some(index)),
            _ => (t.job.clone(), None),
        };
        t.job = Some(new.clone());
        let message = job_parts(before.as_ref(), new).join(", ");
        let index = match index {
            Some(i) => {
                if let Some(e) = s.entries.get_mut(i) {
                    e.message = message;
                }
                i
            }
            None => {
                s.entries.push(Entry {
                    offset,
                    at: format_offset(offset),
                    kind: "Job".to_owned(),
                    object: k,
                    message,
                });
                s.entries.len() - 1
            }
        };
        t.line = Some((offset, before, index));
        s.last_activity = s.last_activity.max(offset);
    }

    fn change<K: Resource<DynamicType = ()>>(
        &self,
        c: &Change<K>,
        parts: fn(Option<&K>, &K) -> Vec<String>,
    ) {
        let (object, message) = match c {
            Change::Added(new) => (new.as_ref(), join(parts(None, new), ", ")),
            Change::Updated { old, new } => (new.as_ref(), join(parts(Some(old), new), ", ")),
            Change::Deleted(old) => (old.as_ref(), Some("deleted".to_owned())),
        };
        match message {
            Some(m) => self.push(&K::kind(&()), &key(object), m),
            None => self.touch(),
        }
    }

    fn node_change(&self, c: &Change<Node>) {
        // Node heartbeats change nothing a line shows, and are not activity.
        let (node, message) = match c {
            Change::Added(new) => (new.as_ref(), join(node_parts(None, new), ", ")),
            Change::Updated { old, new } => (new.as_ref(), join(node_parts(Some(old), new), ", ")),
            Change::Deleted(old) => (old.as_ref(), Some("deleted".to_owned())),
        };
        if let Some(m) = message {
            self.push("Node", &key(node), m);
        }
    }

    fn eviction_change(&self, c: &Change<Eviction>) {
        let offset = self.offset();
        let (ev, message) = match c {
            Change::Added(new) => (new.as_ref(), join(eviction_parts(None, new), "; ")),
            Change::Updated { old, new } => {
                (new.as_ref(), join(eviction_parts(Some(old), new), "; "))
            }
            Change::Deleted(old) => (old.as_ref(), Some("deleted".to_owned())),
        };
        let k = key(ev);
        if !matches!(c, Change::Deleted(_))
            && let Ok(mut s) = self.state.lock()
        {
            let sum = s.evictions.entry(k.clone()).or_default();
            track(sum, ev, offset);
        }
        match message {
            Some(m) => self.push("Eviction", &k, m),
            None => self.touch(),
        }
    }
}

fn track(sum: &mut EvictionSummary, ev: &Eviction, offset: Duration) {
    let ns = ev.metadata.namespace.clone().unwrap_or_default();
    let pod = ev
        .spec
        .target
        .pod
        .as_ref()
        .map(|p| p.name.clone())
        .unwrap_or_default();
    sum.pod = format!("{ns}/{pod}");
    sum.eviction = ev.metadata.name.clone().unwrap_or_default();
    let status = ev.status.as_ref();
    for tr in status
        .and_then(|s| s.target_responders.as_ref())
        .into_iter()
        .flatten()
    {
        let run = match sum.responders.iter_mut().find(|r| r.name == tr.name) {
            Some(r) => r,
            None => {
                sum.responders.push(ResponderRun {
                    name: tr.name.clone(),
                    priority: tr.priority,
                    ..Default::default()
                });
                let last = sum.responders.len() - 1;
                &mut sum.responders[last]
            }
        };
        if tr.state != run.state {
            if tr.state == "Active" {
                run.started_at = Some(offset);
            } else if run.state == "Active" {
                run.ended_at = Some(offset);
            }
            run.state = tr.state.clone();
        }
    }
    if sum.outcome_at.is_none() {
        match final_condition(conditions_of_eviction(ev)) {
            Some(c) => {
                sum.outcome = c;
                sum.outcome_at = Some(format_offset(offset));
            }
            None => sum.outcome = "in progress".into(),
        }
    }
}

fn join(parts: Vec<String>, sep: &str) -> Option<String> {
    (!parts.is_empty()).then(|| parts.join(sep))
}

/// `namespace/name` or `name`.
fn key<K: Resource>(obj: &K) -> String {
    let m = obj.meta();
    let name = m.name.clone().unwrap_or_default();
    match &m.namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name,
    }
}

fn condition_true<'a>(cs: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    cs.iter().find(|c| c.type_ == type_ && c.status == "True")
}

/// `TargetEvicted (PodDeleted)` / `Failed (NoFurtherResponder)` when final.
fn final_condition(cs: &[Condition]) -> Option<String> {
    ["TargetEvicted", "Failed"]
        .iter()
        .find_map(|t| condition_true(cs, t).map(|c| format!("{} ({})", c.type_, c.reason)))
}

fn conditions_of_eviction(ev: &Eviction) -> &[Condition] {
    ev.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or(&[])
}

fn pod_parts(old: Option<&Pod>, new: &Pod) -> Vec<String> {
    let mut out = Vec::new();
    if old.is_none() {
        out.push("created".to_owned());
    }
    let node = |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone());
    let phase = |p: &Pod| p.status.as_ref().and_then(|s| s.phase.clone());
    let disruption = |p: &Pod| {
        p.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| {
                cs.iter()
                    .find(|c| c.type_ == "DisruptionTarget" && c.status == "True")
                    .map(|c| c.reason.clone().unwrap_or_default())
            })
    };
    let terminating = |p: &Pod| p.metadata.deletion_timestamp.is_some();
    if let Some(n) = node(new)
        && old.and_then(node).as_deref() != Some(n.as_str())
    {
        out.push(format!("scheduled to {n}"));
    }
    if let Some(ph) = phase(new)
        && old.and_then(phase) != Some(ph.clone())
    {
        out.push(ph);
    }
    if let Some(reason) = disruption(new)
        && old.and_then(disruption).is_none()
    {
        out.push(format!("DisruptionTarget ({reason})"));
    }
    if terminating(new) && !old.is_some_and(terminating) {
        out.push("terminating".to_owned());
    }
    let exits = |p: &Pod| -> BTreeMap<String, (i32, i32)> {
        let s = p.status.as_ref();
        s.and_then(|s| s.init_container_statuses.as_ref())
            .into_iter()
            .flatten()
            .chain(
                s.and_then(|s| s.container_statuses.as_ref())
                    .into_iter()
                    .flatten(),
            )
            .filter_map(|cs| {
                let t = cs.state.as_ref().and_then(|st| st.terminated.as_ref())?;
                Some((cs.name.clone(), (cs.restart_count, t.exit_code)))
            })
            .collect()
    };
    let before = old.map(exits).unwrap_or_default();
    for (name, (restarts, code)) in exits(new) {
        if before.get(&name) != Some(&(restarts, code)) {
            out.push(format!("container {name} exited {code}"));
        }
    }
    out
}

fn node_parts(old: Option<&Node>, new: &Node) -> Vec<String> {
    let mut out = Vec::new();
    if old.is_none() {
        out.push("registered".to_owned());
    }
    let cordoned = |n: &Node| n.spec.as_ref().and_then(|s| s.unschedulable) == Some(true);
    let ready = |n: &Node| {
        n.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
            .map(|c| c.status == "True")
    };
    if cordoned(new) != old.is_some_and(cordoned) {
        out.push(
            if cordoned(new) {
                "cordoned"
            } else {
                "uncordoned"
            }
            .to_owned(),
        );
    }
    if let Some(r) = ready(new)
        && old.and_then(ready) != Some(r)
    {
        out.push(if r { "Ready" } else { "NotReady" }.to_owned());
    }
    out
}

fn eviction_request_parts(old: Option<&EvictionRequest>, new: &EvictionRequest) -> Vec<String> {
    let mut out = Vec::new();
    match old {
        None => {
            let mut s = format!("requested by {}", new.spec.requester);
            if new.spec.intent != "Eviction" {
                s.push_str(&format!(" (intent {})", new.spec.intent));
            }
            out.push(s);
        }
        Some(o) if o.spec.intent != new.spec.intent => {
            out.push(format!("intent {}", new.spec.intent));
        }
        Some(_) => {}
    }
    if new.metadata.deletion_timestamp.is_some()
        && old.is_none_or(|o| o.metadata.deletion_timestamp.is_none())
    {
        out.push("deleting".to_owned());
    }
    let conds = |er: &EvictionRequest| {
        er.status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default()
    };
    let before = old.map(|o| final_condition(&conds(o))).unwrap_or_default();
    let after = final_condition(&conds(new));
    if after != before {
        out.push(after.unwrap_or_else(|| "in progress again".to_owned()));
    }
    out
}

use exitplan_api::lifecycle::constants::DEFAULT_RESPONDER_NAME as IMPERATIVE_EVICTOR;

fn eviction_parts(old: Option<&Eviction>, new: &Eviction) -> Vec<String> {
    let mut out = Vec::new();
    if old.is_none() {
        let pod = new.spec.target.pod.as_ref().map(|p| p.name.as_str());
        out.push(format!("created for pod {}", pod.unwrap_or("?")));
    }
    let responders = |e: &Eviction| {
        e.status
            .as_ref()
            .and_then(|s| s.target_responders.clone())
            .unwrap_or_default()
    };
    let before = old.map(responders).unwrap_or_default();
    let after = responders(new);
    if before.is_empty() && !after.is_empty() {
        out.push(format!(
            "responders {}",
            after
                .iter()
                .map(|r| format!("{}({})", r.name, r.priority))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let prev: BTreeMap<&str, &str> = before
        .iter()
        .map(|r| (r.name.as_str(), r.state.as_str()))
        .collect();
    for r in &after {
        let was = prev.get(r.name.as_str()).copied().unwrap_or("Inactive");
        if was != r.state {
            out.push(format!("{} {}", r.name, r.state));
        }
    }
    let done = |e: &Eviction| {
        e.status
            .as_ref()
            .and_then(|s| s.responders.as_ref())
            .map(|rs| {
                rs.iter()
                    .filter(|r| r.completion_time.is_some())
                    .map(|r| r.name.clone())
                    .collect::<BTreeSet<_>>()
            })
            .unwrap_or_default()
    };
    // What a responder says in its entry (progress, a failure), when it
    // changes; of the evictor only its failed attempts (a PDB refusing, with
    // the attempt count): its other messages follow the pod's termination,
    // which the pod's own lines show, and come too fast one after another
    // for every one to be seen.
    let messages = |e: &Eviction| {
        e.status
            .as_ref()
            .and_then(|s| s.responders.as_ref())
            .map(|rs| {
                rs.iter()
                    .filter_map(|r| Some((r.name.clone(), r.message.clone()?)))
                    .filter(|(n, m)| {
                        !m.is_empty() && (n != IMPERATIVE_EVICTOR || m.contains("(attempts="))
                    })
                    .collect::<BTreeMap<_, _>>()
            })
            .unwrap_or_default()
    };
    let said = old.map(messages).unwrap_or_default();
    for (name, message) in messages(new) {
        if said.get(&name) != Some(&message) {
            out.push(format!("{name}: {message}"));
        }
    }
    let done_before = old.map(done).unwrap_or_default();
    for name in done(new).difference(&done_before) {
        out.push(format!("{name} reported completion"));
    }
    let before = old.and_then(|o| final_condition(conditions_of_eviction(o)));
    let after = final_condition(conditions_of_eviction(new));
    if after != before
        && let Some(a) = after
    {
        out.push(a);
    }
    out
}

fn pdb_parts(old: Option<&PodDisruptionBudget>, new: &PodDisruptionBudget) -> Vec<String> {
    let mut out = Vec::new();
    if old.is_none() {
        out.push("created".to_owned());
    }
    let allowed = |p: &PodDisruptionBudget| {
        p.status.as_ref().map(|s| {
            (
                s.disruptions_allowed.unwrap_or(0),
                s.current_healthy.unwrap_or(0),
                s.desired_healthy.unwrap_or(0),
            )
        })
    };
    if let Some((a, c, d)) = allowed(new)
        && old.and_then(allowed) != Some((a, c, d))
    {
        out.push(format!("disruptionsAllowed {a} (healthy {c}/{d})"));
    }
    out
}

fn job_parts(old: Option<&Job>, new: &Job) -> Vec<String> {
    let mut out = Vec::new();
    if old.is_none() {
        let spec = new.spec.as_ref();
        let n = |v: Option<i32>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
        out.push(format!(
            "created (parallelism {}, completions {}, backoffLimit {}, podFailurePolicy {})",
            n(spec.and_then(|s| s.parallelism)),
            n(spec.and_then(|s| s.completions)),
            spec.and_then(|s| s.backoff_limit)
                .unwrap_or(DEFAULT_BACKOFF_LIMIT),
            policy_text(new)
        ));
    }
    let counts = |j: &Job| {
        j.status.as_ref().map(|s| {
            (
                s.active.unwrap_or(0),
                s.succeeded.unwrap_or(0),
                s.failed.unwrap_or(0),
            )
        })
    };
    if let Some((a, s, f)) = counts(new)
        && old.and_then(counts) != Some((a, s, f))
    {
        out.push(format!("active {a}, succeeded {s}, failed {f}"));
    }
    // In the order of `status.conditions` (the order they were added:
    // FailureTarget before Failed, SuccessCriteriaMet before Complete).
    let conds = |j: &Job| -> Vec<String> {
        j.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .filter(|c| c.status == "True")
            .map(|c| match &c.reason {
                Some(r) => format!("{} ({r})", c.type_),
                None => c.type_.clone(),
            })
            .collect()
    };
    let before = old.map(conds).unwrap_or_default();
    for c in conds(new) {
        if !before.contains(&c) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use exitplan_clock::Clock;
    use serde_json::json;

    #[derive(Debug)]
    struct Manual(Mutex<Timestamp>);

    impl Clock for Manual {
        fn now(&self) -> Timestamp {
            self.0.lock().map(|t| *t).unwrap_or_default()
        }
    }

    const START: &str = "2026-11-29T10:00:00Z";

    fn at(clock: &Manual, secs: i64) {
        let start: Timestamp = START.parse().expect("start");
        if let Ok(mut t) = clock.0.lock() {
            *t = start + jiff::SignedDuration::from_secs(secs);
        }
    }

    fn eviction(states: &[(&str, i32, &str)], condition: Option<(&str, &str)>) -> Arc<Eviction> {
        let trs: Vec<_> = states
            .iter()
            .map(|(n, p, s)| json!({"name": n, "priority": p, "state": s}))
            .collect();
        let mut conditions = vec![];
        if let Some((t, r)) = condition {
            conditions.push(
                json!({"type": t, "status": "True", "reason": r, "message": "",
                "lastTransitionTime": "2026-11-29T10:00:00Z"}),
            );
        }
        Arc::new(
            serde_json::from_value(json!({
                "apiVersion": "lifecycle.k8s.io/v1alpha1",
                "kind": "Eviction",
                "metadata": {"name": "pod-1-web-0", "namespace": "default"},
                "spec": {"target": {"pod": {"name": "web-0", "uid": "u"}}},
                "status": {"targetResponders": trs, "conditions": conditions},
            }))
            .expect("eviction"),
        )
    }

    #[test]
    fn eviction_lines_and_summary() {
        let clock = Arc::new(Manual(Mutex::new(START.parse().expect("start"))));
        let rec = Recorder::new(clock.clone(), START.parse().expect("start"));
        let m = "mover.acme.io/migrate";
        let ev = "imperative-eviction.k8s.io/evictor";
        let e0 = eviction(&[], None);
        at(&clock, 60);
        rec.eviction_change(&Change::Added(e0.clone()));
        let e1 = eviction(&[(m, 20000, "Active"), (ev, 100, "Inactive")], None);
        rec.eviction_change(&Change::Updated {
            old: e0,
            new: e1.clone(),
        });
        at(&clock, 360);
        let e2 = eviction(&[(m, 20000, "Completed"), (ev, 100, "Active")], None);
        rec.eviction_change(&Change::Updated {
            old: e1,
            new: e2.clone(),
        });
        // A change no line shows (a heartbeat) is still activity.
        at(&clock, 370);
        rec.eviction_change(&Change::Updated {
            old: e2.clone(),
            new: e2.clone(),
        });
        assert_eq!(rec.last_activity(), Duration::from_secs(370));
        at(&clock, 390);
        let e3 = eviction(
            &[(m, 20000, "Completed"), (ev, 100, "Completed")],
            Some(("TargetEvicted", "PodDeleted")),
        );
        rec.eviction_change(&Change::Updated {
            old: e2,
            new: e3.clone(),
        });
        let lines: Vec<(String, String)> = rec
            .entries()
            .into_iter()
            .map(|e| (e.at, e.message))
            .collect();
        assert_eq!(
            lines,
            [
                ("t+1m".into(), "created for pod web-0".into()),
                (
                    "t+1m".into(),
                    format!("responders {m}(20000), {ev}(100); {m} Active")
                ),
                ("t+6m".into(), format!("{m} Completed; {ev} Active")),
                (
                    "t+6m30s".into(),
                    format!("{ev} Completed; TargetEvicted (PodDeleted)")
                ),
            ]
        );
        let summary = rec.summary(Duration::from_secs(3600));
        assert_eq!(summary.len(), 1);
        let s = &summary[0];
        assert_eq!(
            (s.pod.as_str(), s.eviction.as_str(), s.outcome.as_str()),
            ("default/web-0", "pod-1-web-0", "TargetEvicted (PodDeleted)")
        );
        assert_eq!(s.outcome_at.as_deref(), Some("t+6m30s"));
        let runs: Vec<_> = s
            .responders
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.state.as_str(),
                    r.started.as_deref(),
                    r.ended.as_deref(),
                    r.ran.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            runs,
            [
                (m, "Completed", Some("t+1m"), Some("t+6m"), Some("5m")),
                (ev, "Completed", Some("t+6m"), Some("t+6m30s"), Some("30s")),
            ]
        );
    }

    #[test]
    fn one_objects_lines_at_one_instant_follow_what_they_report() {
        let clock = Arc::new(Manual(Mutex::new(START.parse().expect("start"))));
        let rec = Recorder::new(clock.clone(), START.parse().expect("start"));
        for m in [
            "deleted",
            "container main exited 0, Succeeded",
            "Running",
            "terminating",
            "DisruptionTarget (EvictionByEvictionAPI), terminating",
            "created, scheduled to node-1, Pending",
        ] {
            rec.push("Pod", "default/p", m.to_owned());
        }
        rec.push("Node", "n", "cordoned".to_owned());
        let got: Vec<String> = rec
            .entries()
            .into_iter()
            .map(|e| format!("{} {}", e.subject(), e.message))
            .collect();
        assert_eq!(
            got,
            [
                "Node n cordoned",
                "Pod default/p created, scheduled to node-1, Pending",
                "Pod default/p Running",
                "Pod default/p DisruptionTarget (EvictionByEvictionAPI), terminating",
                "Pod default/p terminating",
                "Pod default/p container main exited 0, Succeeded",
                "Pod default/p deleted",
            ]
        );
    }

    #[test]
    fn an_active_responder_runs_until_the_end_of_the_run() {
        let clock = Arc::new(Manual(Mutex::new(START.parse().expect("start"))));
        let rec = Recorder::new(clock.clone(), START.parse().expect("start"));
        let e = eviction(
            &[("a.io/x", 20000, "Active"), ("b.io/y", 100, "Inactive")],
            None,
        );
        at(&clock, 120);
        rec.eviction_change(&Change::Added(e));
        let s = rec.summary(Duration::from_secs(600));
        assert_eq!(s[0].outcome, "in progress");
        assert_eq!(s[0].responders[0].ran.as_deref(), Some("8m"));
        assert_eq!(s[0].responders[0].ended, None);
        assert_eq!(s[0].responders[1].started, None);
        let text = crate::Report {
            name: "n".into(),
            file: "f".into(),
            start: START.into(),
            seed: 1,
            nodes: 0,
            end: "t+10m".into(),
            stopped: "until".into(),
            timeline: rec.entries(),
            summary: s,
            jobs: vec![],
            objects: vec![],
            errors: vec![],
        }
        .to_text();
        assert!(
            text.contains("  pod default/web-0 (pod-1-web-0): in progress\n    a.io/x  Active       t+2m .. still active (8m)\n    b.io/y  Inactive     did not run\n"),
            "{text}"
        );
    }
}
