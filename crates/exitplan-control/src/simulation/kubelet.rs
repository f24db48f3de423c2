//! A simulated kubelet: runs a bound pod through its lifecycle — init
//! containers one after another, then the regular containers, readiness,
//! exits (scripted by [`super::script`]), restarts per `restartPolicy`, and
//! graceful deletion (SIGTERM at the deletion request, SIGKILL with exit 137
//! when the grace period ends) — and reports it as upstream's kubelet would:
//! phase, container statuses, `Initialized`/`ContainersReady`/`Ready`
//! conditions (other conditions, such as `DisruptionTarget`, are preserved),
//! plus the conditions scripted by `sim.exitplan.io/conditions`, added when a
//! container exits on its own.
//!
//! [`sync_pod`] is pure and event-driven: it replays every transition whose
//! time is at or before `now` from the timestamps already in the pod's
//! status, and says when the next one is due.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting,
    ContainerStatus, Pod, PodCondition, PodStatus, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use exitplan_api::core::constants::{PHASE_FAILED, PHASE_PENDING, PHASE_RUNNING, PHASE_SUCCEEDED};
use exitplan_api::time::{add, mtime, truncate_to_seconds};

use super::script::{EXIT_SIGKILL, PodScript, ScriptedCondition};

/// Grace period when neither the deletion nor the pod says one (`terminationGracePeriodSeconds` default).
pub const DEFAULT_GRACE: SignedDuration = SignedDuration::from_secs(30);
/// First crash-loop back-off of a restarting container (kubelet's).
pub const CRASH_BACKOFF: SignedDuration = SignedDuration::from_secs(10);
/// Longest crash-loop back-off.
pub const MAX_CRASH_BACKOFF: SignedDuration = SignedDuration::from_mins(5);
/// Upper bound on transitions replayed in one sync (a safety net; real pods
/// need a handful).
const MAX_TRANSITIONS: usize = 10_000;

/// The wait before restart number `restarts` (1-based): 10 s doubling, 5 min cap.
pub fn crash_backoff(restarts: i32) -> SignedDuration {
    let doublings = u32::try_from(restarts.saturating_sub(1))
        .unwrap_or(0)
        .min(16);
    CRASH_BACKOFF
        .checked_mul(1 << doublings)
        .map_or(MAX_CRASH_BACKOFF, |d| d.min(MAX_CRASH_BACKOFF))
}

/// What the node does for one pod at `now`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KubeletPlan {
    /// The pod status to write, when it changed.
    pub status: Option<PodStatus>,
    /// Confirm the deletion (DELETE with grace 0) after writing the status:
    /// the pod was deleted and all its containers have stopped.
    pub confirm_deletion: bool,
    /// When the next transition is due.
    pub requeue_after: Option<SignedDuration>,
}

#[derive(Clone, Debug, PartialEq)]
struct Term {
    started: Timestamp,
    finished: Timestamp,
    code: i32,
}

#[derive(Clone, Debug, PartialEq)]
enum State {
    Waiting,
    Running { started: Timestamp },
    Terminated(Term),
}

#[derive(Clone, Debug)]
struct Container {
    name: String,
    image: String,
    /// The cpu and memory requests and limits the container runs with (a
    /// 1.35 kubelet reports them, which is what lets `pods/resize` proceed).
    resources: Option<ResourceRequirements>,
    init: bool,
    state: State,
    last: Option<Term>,
    restarts: i32,
    ready: bool,
}

struct Sim<'a> {
    script: PodScript,
    restart_policy: &'a str,
    containers: Vec<Container>,
    /// SIGTERM time and SIGKILL time, when the pod is being deleted.
    deletion: Option<(Timestamp, Timestamp)>,
    phase: Option<&'static str>,
    /// Conditions scripted to appear at a container's own exit, with its time.
    scripted: Vec<(ScriptedCondition, Timestamp)>,
}

fn ts(t: &Option<Time>) -> Option<Timestamp> {
    t.as_ref().map(|t| t.0)
}

fn load(status: Option<&ContainerStatus>) -> (State, Option<Term>, i32, bool) {
    let Some(s) = status else {
        return (State::Waiting, None, 0, false);
    };
    let term = |t: &ContainerStateTerminated| {
        Some(Term {
            started: ts(&t.started_at)?,
            finished: ts(&t.finished_at)?,
            code: t.exit_code,
        })
    };
    let state = match &s.state {
        Some(ContainerState {
            running: Some(r), ..
        }) => match ts(&r.started_at) {
            Some(started) => State::Running { started },
            None => State::Waiting,
        },
        Some(ContainerState {
            terminated: Some(t),
            ..
        }) => term(t).map_or(State::Waiting, State::Terminated),
        _ => State::Waiting,
    };
    let last = s
        .last_state
        .as_ref()
        .and_then(|l| l.terminated.as_ref())
        .and_then(term);
    (state, last, s.restart_count, s.ready)
}

impl Sim<'_> {
    fn regular(&self) -> impl Iterator<Item = &Container> {
        self.containers.iter().filter(|c| !c.init)
    }

    /// The time and kind of the next transition, if any.
    fn next_event(&self) -> Option<(Timestamp, usize, Transition)> {
        let mut best: Option<(Timestamp, usize, Transition)> = None;
        let mut consider = |t: Timestamp, i: usize, tr: Transition| {
            if best.as_ref().is_none_or(|(bt, bi, _)| (t, i) < (*bt, *bi)) {
                best = Some((t, i, tr));
            }
        };
        for (i, c) in self.containers.iter().enumerate() {
            if let (State::Waiting, Some(last), None) = (&c.state, &c.last, self.deletion) {
                // Backing off after a crash: restart when the back-off ends.
                consider(
                    add(last.finished, crash_backoff(c.restarts)),
                    i,
                    Transition::Restart,
                );
                continue;
            }
            let State::Running { started } = c.state else {
                continue;
            };
            if !c.ready && !c.init {
                consider(
                    add(started, self.script.ready_after(&c.name)),
                    i,
                    Transition::Ready,
                );
            }
            if let Some(at) = self.script.exit_at(&c.name).filter(|at| *at >= started) {
                consider(at, i, Transition::Exit(self.script.exit_code(&c.name)));
            }
            if let Some(run) = self.script.run(&c.name, c.init) {
                consider(
                    add(started, run),
                    i,
                    Transition::Exit(self.script.exit_code(&c.name)),
                );
            }
            if let Some((sigterm, sigkill)) = self.deletion {
                let stop = add(
                    if started > sigterm { started } else { sigterm },
                    self.script.stop(&c.name),
                );
                if stop <= sigkill {
                    consider(
                        stop,
                        i,
                        Transition::Stopped(self.script.sigterm_exit_code(&c.name)),
                    );
                } else {
                    consider(sigkill, i, Transition::Stopped(EXIT_SIGKILL));
                }
            }
        }
        best
    }

    fn start(&mut self, i: usize, at: Timestamp) {
        if let Some(c) = self.containers.get_mut(i) {
            c.state = State::Running { started: at };
            c.ready = false;
        }
    }

    /// Starts the next init container, or all regular containers.
    fn start_next(&mut self, at: Timestamp) {
        if let Some(i) = self
            .containers
            .iter()
            .position(|c| c.init && c.state == State::Waiting)
        {
            self.start(i, at);
            return;
        }
        for i in 0..self.containers.len() {
            if !self.containers[i].init && self.containers[i].state == State::Waiting {
                self.start(i, at);
            }
        }
    }

    fn apply(&mut self, at: Timestamp, i: usize, transition: Transition) {
        let deleting = self.deletion.is_some();
        let restart_policy = self.restart_policy;
        if transition == Transition::Restart {
            self.start(i, at);
            return;
        }
        let Some(c) = self.containers.get_mut(i) else {
            return;
        };
        let State::Running { started } = c.state else {
            return;
        };
        match transition {
            Transition::Restart => {}
            Transition::Ready => c.ready = true,
            Transition::Exit(code) | Transition::Stopped(code) => {
                if matches!(transition, Transition::Exit(_)) {
                    self.scripted.extend(
                        self.script
                            .conditions(&c.name)
                            .into_iter()
                            .map(|sc| (sc, at)),
                    );
                }
                let term = Term {
                    started,
                    finished: at,
                    code,
                };
                let restart = !deleting
                    && matches!(transition, Transition::Exit(_))
                    && (restart_policy == "Always" || (restart_policy == "OnFailure" && code != 0));
                c.ready = false;
                if restart {
                    c.last = Some(term);
                    c.restarts += 1;
                    c.state = State::Waiting;
                } else {
                    c.state = State::Terminated(term);
                }
                let (init, failed) = (c.init, code != 0);
                if init && !restart && !deleting {
                    if failed {
                        self.phase = Some(PHASE_FAILED);
                    } else {
                        self.start_next(at);
                    }
                }
            }
        }
        self.settle();
    }

    /// Decides a terminal phase once nothing runs any more.
    fn settle(&mut self) {
        if self.phase.is_some()
            || self
                .containers
                .iter()
                .any(|c| matches!(c.state, State::Running { .. }))
        {
            return;
        }
        let regular_done = self
            .regular()
            .all(|c| matches!(c.state, State::Terminated(_)));
        if !regular_done && self.deletion.is_none() {
            return;
        }
        let all_zero = self
            .regular()
            .all(|c| matches!(&c.state, State::Terminated(t) if t.code == 0));
        self.phase = Some(if all_zero {
            PHASE_SUCCEEDED
        } else {
            PHASE_FAILED
        });
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transition {
    /// The container reports ready.
    Ready,
    /// The container exits on its own with this code.
    Exit(i32),
    /// The container exits after SIGTERM (or is killed) with this code.
    Stopped(i32),
    /// A crashed container starts again after its back-off.
    Restart,
}

/// The cpu and memory part of a container's resources (what the kubelet
/// reports in `containerStatuses[].resources`); always a value, possibly empty.
fn cpu_memory(r: Option<&ResourceRequirements>) -> Option<ResourceRequirements> {
    let keep = |l: Option<&std::collections::BTreeMap<String, Quantity>>| {
        let kept: std::collections::BTreeMap<String, Quantity> = l
            .into_iter()
            .flatten()
            .filter(|(k, _)| *k == "cpu" || *k == "memory")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (!kept.is_empty()).then_some(kept)
    };
    Some(ResourceRequirements {
        requests: keep(r.and_then(|r| r.requests.as_ref())),
        limits: keep(r.and_then(|r| r.limits.as_ref())),
        ..ResourceRequirements::default()
    })
}

fn container_status(c: &Container) -> ContainerStatus {
    let term = |t: &Term| ContainerStateTerminated {
        exit_code: t.code,
        reason: Some(if t.code == 0 { "Completed" } else { "Error" }.to_owned()),
        started_at: Some(mtime(t.started)),
        finished_at: Some(mtime(t.finished)),
        ..Default::default()
    };
    let state = match &c.state {
        State::Waiting => ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some(
                    if c.restarts > 0 {
                        "CrashLoopBackOff"
                    } else {
                        "PodInitializing"
                    }
                    .to_owned(),
                ),
                message: None,
            }),
            ..Default::default()
        },
        State::Running { started } => ContainerState {
            running: Some(ContainerStateRunning {
                started_at: Some(mtime(*started)),
            }),
            ..Default::default()
        },
        State::Terminated(t) => ContainerState {
            terminated: Some(term(t)),
            ..Default::default()
        },
    };
    ContainerStatus {
        name: c.name.clone(),
        image: c.image.clone(),
        image_id: String::new(),
        ready: c.ready,
        restart_count: c.restarts,
        started: Some(matches!(c.state, State::Running { .. })),
        resources: matches!(c.state, State::Running { .. })
            .then(|| c.resources.clone())
            .flatten(),
        state: Some(state),
        last_state: c.last.as_ref().map(|t| ContainerState {
            terminated: Some(term(t)),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn set_condition(
    conditions: &mut Vec<PodCondition>,
    type_: &str,
    ok: bool,
    reason: Option<&str>,
    at: Timestamp,
) {
    let status = if ok { "True" } else { "False" };
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(c) if c.status == status => {
            c.reason = reason.map(str::to_owned);
        }
        Some(c) => {
            c.status = status.to_owned();
            c.reason = reason.map(str::to_owned);
            c.last_transition_time = Some(mtime(at));
        }
        None => conditions.push(PodCondition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            reason: reason.map(str::to_owned),
            last_transition_time: Some(mtime(at)),
            ..Default::default()
        }),
    }
}

/// Message of a condition added by `sim.exitplan.io/conditions`.
pub const SCRIPTED_CONDITION_MESSAGE: &str = "scripted by sim.exitplan.io/conditions";

/// Adds (or updates) a scripted condition; its transition time is `at` when
/// the status changes, kept otherwise.
fn set_scripted_condition(
    conditions: &mut Vec<PodCondition>,
    sc: &ScriptedCondition,
    at: Timestamp,
) {
    match conditions.iter_mut().find(|c| c.type_ == sc.type_) {
        Some(c) => {
            if c.status != sc.status {
                c.status.clone_from(&sc.status);
                c.last_transition_time = Some(mtime(at));
            }
            c.reason.clone_from(&sc.reason);
            c.message = Some(SCRIPTED_CONDITION_MESSAGE.to_owned());
        }
        None => conditions.push(PodCondition {
            type_: sc.type_.clone(),
            status: sc.status.clone(),
            reason: sc.reason.clone(),
            message: Some(SCRIPTED_CONDITION_MESSAGE.to_owned()),
            last_transition_time: Some(mtime(at)),
            ..Default::default()
        }),
    }
}

/// The deletion window of a pod being deleted: (SIGTERM time, SIGKILL time).
fn deletion_window(pod: &Pod) -> Option<(Timestamp, Timestamp)> {
    let kill = ts(&pod.metadata.deletion_timestamp)?;
    let grace = pod
        .metadata
        .deletion_grace_period_seconds
        .map_or(DEFAULT_GRACE, SignedDuration::from_secs);
    Some((add(kill, -grace), kill))
}

/// Runs `pod` on its node up to `now` and says what to report.
pub fn sync_pod(pod: &Pod, now: Timestamp) -> KubeletPlan {
    let now = truncate_to_seconds(now);
    let old = pod.status.clone().unwrap_or_default();
    let deleting = pod.metadata.deletion_timestamp.is_some();
    // A deletion already at grace 0 was confirmed (by us, or by the client
    // that deleted it): the server removes the pod once its finalizers are
    // gone, so confirming again would only rewrite it (and wake us again).
    let confirm = deleting && pod.metadata.deletion_grace_period_seconds != Some(0);
    let phase = old.phase.as_deref().unwrap_or(PHASE_PENDING);
    if phase == PHASE_SUCCEEDED || phase == PHASE_FAILED {
        return KubeletPlan {
            confirm_deletion: confirm,
            ..Default::default()
        };
    }
    let Some(spec) = pod.spec.as_ref() else {
        return KubeletPlan {
            confirm_deletion: confirm,
            ..Default::default()
        };
    };
    if old.start_time.is_none() && deleting {
        // Never started: nothing to stop.
        return KubeletPlan {
            confirm_deletion: confirm,
            ..Default::default()
        };
    }
    let statuses = |list: &Option<Vec<ContainerStatus>>, name: &str| {
        list.iter().flatten().find(|s| s.name == name).cloned()
    };
    let mut containers = Vec::new();
    for (init, list) in [
        (true, spec.init_containers.as_deref().unwrap_or_default()),
        (false, spec.containers.as_slice()),
    ] {
        for c in list {
            let status = statuses(
                if init {
                    &old.init_container_statuses
                } else {
                    &old.container_statuses
                },
                &c.name,
            );
            let (state, last, restarts, ready) = load(status.as_ref());
            containers.push(Container {
                name: c.name.clone(),
                image: c.image.clone().unwrap_or_default(),
                resources: cpu_memory(c.resources.as_ref()),
                init,
                state,
                last,
                restarts,
                ready,
            });
        }
    }
    let mut sim = Sim {
        script: PodScript::of(pod),
        restart_policy: spec.restart_policy.as_deref().unwrap_or("Always"),
        containers,
        deletion: deletion_window(pod),
        phase: None,
        scripted: Vec::new(),
    };
    let start = ts(&old.start_time).unwrap_or(now);
    if old.start_time.is_none() {
        sim.start_next(now);
    }
    sim.settle();
    let mut requeue_after = None;
    let mut transitions = 0;
    while sim.phase.is_none() && transitions < MAX_TRANSITIONS {
        transitions += 1;
        match sim.next_event() {
            Some((at, i, transition)) if at <= now => sim.apply(at, i, transition),
            Some((at, _, _)) => {
                requeue_after = Some(at.duration_since(now));
                break;
            }
            None => break,
        }
    }

    let mut status = old.clone();
    status.start_time = Some(mtime(start));
    // Running once a regular container has started (a crash-looping one included).
    let phase = sim.phase.unwrap_or(
        if sim
            .regular()
            .any(|c| c.state != State::Waiting || c.last.is_some())
        {
            PHASE_RUNNING
        } else {
            PHASE_PENDING
        },
    );
    status.phase = Some(phase.to_owned());
    status.init_container_statuses = Some(
        sim.containers
            .iter()
            .filter(|c| c.init)
            .map(container_status)
            .collect(),
    )
    .filter(|v: &Vec<_>| !v.is_empty());
    status.container_statuses = Some(sim.regular().map(container_status).collect());
    let mut conditions = status.conditions.take().unwrap_or_default();
    let initialized = sim
        .containers
        .iter()
        .filter(|c| c.init)
        .all(|c| matches!(&c.state, State::Terminated(t) if t.code == 0));
    let terminal = phase == PHASE_SUCCEEDED || phase == PHASE_FAILED;
    let ready = !terminal
        && sim
            .regular()
            .all(|c| c.ready && matches!(c.state, State::Running { .. }));
    let not_ready_reason = if terminal {
        "PodCompleted"
    } else {
        "ContainersNotReady"
    };
    set_condition(
        &mut conditions,
        "Initialized",
        initialized,
        (!initialized).then_some("ContainersNotInitialized"),
        now,
    );
    set_condition(
        &mut conditions,
        "ContainersReady",
        ready,
        (!ready).then_some(not_ready_reason),
        now,
    );
    set_condition(
        &mut conditions,
        "Ready",
        ready,
        (!ready).then_some(not_ready_reason),
        now,
    );
    for (sc, at) in &sim.scripted {
        set_scripted_condition(&mut conditions, sc, *at);
    }
    status.conditions = Some(conditions);
    KubeletPlan {
        confirm_deletion: confirm && terminal,
        status: (status != old).then_some(status),
        requeue_after: if terminal { None } else { requeue_after },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container as ContainerSpec, PodSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn t(secs: i64) -> Timestamp {
        add(
            "2026-11-29T10:00:00Z".parse().expect("time"),
            SignedDuration::from_secs(secs),
        )
    }

    fn pod(annotations: &[(&str, &str)]) -> Pod {
        let container = |name: &str| ContainerSpec {
            name: name.to_owned(),
            image: Some("img".to_owned()),
            ..Default::default()
        };
        Pod {
            metadata: ObjectMeta {
                name: Some("p".to_owned()),
                annotations: Some(
                    annotations
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                ),
                ..Default::default()
            },
            spec: Some(PodSpec {
                node_name: Some("node-1".to_owned()),
                restart_policy: Some("Never".to_owned()),
                containers: vec![container("main"), container("side")],
                ..Default::default()
            }),
            status: None,
        }
    }

    fn step(mut p: Pod, at: Timestamp) -> Pod {
        if let Some(s) = sync_pod(&p, at).status {
            p.status = Some(s);
        }
        p
    }

    fn conds(p: &Pod) -> Vec<(String, String, Option<String>, Option<Timestamp>)> {
        p.status
            .iter()
            .flat_map(|s| s.conditions.iter().flatten())
            .filter(|c| {
                !matches!(
                    c.type_.as_str(),
                    "Initialized" | "ContainersReady" | "Ready"
                )
            })
            .map(|c| {
                (
                    c.type_.clone(),
                    c.status.clone(),
                    c.reason.clone(),
                    c.last_transition_time.as_ref().map(|t| t.0),
                )
            })
            .collect()
    }

    #[test]
    fn scripted_conditions_appear_with_the_containers_own_exit() {
        let p = pod(&[
            ("sim.exitplan.io/run", "30s"),
            ("sim.exitplan.io/run.side", "10s"),
            ("sim.exitplan.io/exit-code.main", "3"),
            (
                "sim.exitplan.io/conditions.main",
                "ConfigIssue=True:BadConfig,Extra=False",
            ),
        ]);
        let p = step(p, t(0));
        assert!(conds(&p).is_empty(), "nothing before an exit");
        let p = step(p, t(15));
        assert!(conds(&p).is_empty(), "side's exit scripts no condition");
        // Synced late: the exit (and its conditions) is dated when it was due.
        let p = step(p, t(40));
        assert_eq!(phase_of(&p), "Failed");
        assert_eq!(
            conds(&p),
            vec![
                (
                    "ConfigIssue".into(),
                    "True".into(),
                    Some("BadConfig".into()),
                    Some(t(30))
                ),
                ("Extra".into(), "False".into(), None, Some(t(30))),
            ]
        );
    }

    #[test]
    fn no_scripted_conditions_after_sigterm() {
        let mut p = step(
            pod(&[("sim.exitplan.io/conditions", "ConfigIssue=True")]),
            t(0),
        );
        p.metadata.deletion_timestamp = Some(mtime(t(30)));
        p.metadata.deletion_grace_period_seconds = Some(30);
        let p = step(p, t(1));
        assert_eq!(phase_of(&p), "Failed");
        assert!(conds(&p).is_empty());
    }

    #[test]
    fn a_deletion_already_at_grace_zero_is_not_confirmed_again() {
        let mut p = step(pod(&[]), t(0));
        p.metadata.deletion_timestamp = Some(mtime(t(30)));
        p.metadata.deletion_grace_period_seconds = Some(30);
        let plan = sync_pod(&p, t(1));
        assert!(plan.confirm_deletion, "stopped: confirm");
        let mut p = step(p, t(1));
        assert!(
            sync_pod(&p, t(2)).confirm_deletion,
            "not yet confirmed: again"
        );
        // The confirmation left the pod at grace 0 (a finalizer keeps it).
        p.metadata.deletion_timestamp = Some(mtime(t(1)));
        p.metadata.deletion_grace_period_seconds = Some(0);
        assert_eq!(sync_pod(&p, t(2)), KubeletPlan::default());
    }

    fn phase_of(p: &Pod) -> String {
        p.status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default()
    }
}
