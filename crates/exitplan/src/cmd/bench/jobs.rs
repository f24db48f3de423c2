//! `exitplan bench jobs`: Jobs with failure policies under chaos, in one
//! process, on the real clock — time to converge and Job syncs/s (issue 6 §6).
//!
//! An embedded API server (in-memory store, or `--durable` on disk in a
//! temporary directory), a kube-rs client on its router, and the runtime with
//! the Job controller, the scheduler, the garbage collector and `--nodes`
//! simulated nodes. `--jobs` Jobs are created at once by concurrent clients,
//! each with `completions = parallelism = --pods-per-job`, `backoffLimit`
//! `--backoff-limit` (6, upstream's default: most Jobs complete, a few run out
//! of retries and fail with `BackoffLimitExceeded`) and the pod failure policy
//!
//! ```yaml
//! podFailurePolicy:
//!   rules:
//!   - action: Ignore        # disruptions are not the workload's fault
//!     onPodConditions: [{type: DisruptionTarget, status: "True"}]
//!   - action: Count         # the workload's own failure counts
//!     onExitCodes: {containerName: main, operator: In, values: [42]}
//! ```
//!
//! Each pod runs `--run` (`sim.exitplan.io/run`, 2 s) and succeeds. The bench
//! is the chaos agent: for each of the `--jobs` × `--pods-per-job` pods of the
//! workload (each Job's first `--pods-per-job` pods; with
//! `--chaos-replacements`, every pod a Job creates, replacements included)
//! a seeded deterministic draw on (seed, Job name, the pod's ordinal among its
//! Job's pods as seen by the agent) makes `--fail-percent` of them fail (its
//! annotation `sim.exitplan.io/exit-code` patched to 42 when it is created;
//! the simulated kubelet reads it when the container exits) and
//! `--disrupt-percent` of them disrupted (once seen Running, evicted through
//! `pods/<name>/eviction`, which adds `DisruptionTarget`; the node then
//! stops the pod, exit 143, phase Failed). Disrupted pods are ignored by the
//! policy and replaced, failed ones count towards `backoffLimit`; both
//! replacements wait the Job controller's pod-failure back-off (10 s,
//! doubling per failure since the Job's last success), which dominates the
//! time to converge. Replacements succeed unless `--chaos-replacements`
//! (then a Job can fail several rounds in a row and wait 20 s, 40 s, … each).
//!
//! Converged: every Job has `Complete=True` or `Failed=True`. Figures: wall
//! time from the first Job created to the last Job observed terminal (and
//! when 50/90/99 % were), Job
//! syncs/s (`job_controller_job_syncs_total`), pods created, failures counted
//! (sum of `status.failed`) and ignored (the policy's Ignore actions), Jobs
//! Complete/Failed, store writes, peak RSS (and a `result: key=value …`
//! line for scripts). The pods' own outcomes as the
//! agent saw them (succeeded; failed without `DisruptionTarget`; disrupted)
//! are printed too: the counted failures must equal the pods that failed
//! without `DisruptionTarget` (`counts add up: yes`), else the bench exits 1.
//!
//! `--virtual-time` runs everything on tokio's paused clock instead (one
//! thread, milliseconds of real time; the tests use it): the figures in
//! time are then virtual and only the counts mean something.

use std::collections::{HashMap, HashSet};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use clap::Args;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, EvictParams, Patch, PatchParams, PostParams};
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::Instant;

use exitplan_clock::{SharedClock, SystemClock, TokioClock};
use exitplan_runtime::context::Context;
use exitplan_runtime::informer::{Change, ObjectKey};
use exitplan_runtime::runtime::{Component, Runtime, RuntimeConfig};

use super::measure::{in_process, mib, peak_rss_kib, percentile, rss_kib, runtime, storage_label};

/// The namespace of the Jobs.
const NAMESPACE: &str = "default";
/// The exit code of a scripted failure (the policy's `Count` rule).
const FAIL_EXIT_CODE: i32 = 42;
/// Give up when no Job finishes and no pod is created or finishes for this
/// long (longer than the back-off cap of 10 minutes).
const STALL: Duration = Duration::from_secs(11 * 60);

/// Arguments of `exitplan bench jobs`.
#[derive(Debug, Args)]
pub struct JobsArgs {
    /// Jobs to create.
    #[arg(long, default_value_t = 1_000)]
    pub jobs: usize,
    /// Pods per Job (`completions` = `parallelism`).
    #[arg(long, default_value_t = 10)]
    pub pods_per_job: i32,
    /// Percent of the workload's pods that fail by exit code 42.
    #[arg(long, default_value_t = 20)]
    pub fail_percent: u64,
    /// Percent of the workload's pods evicted once Running.
    #[arg(long, default_value_t = 10)]
    pub disrupt_percent: u64,
    /// Draw fates for replacement pods too (by default they succeed: the
    /// percentages are of the `--jobs` × `--pods-per-job` pods).
    #[arg(long)]
    pub chaos_replacements: bool,
    /// The Jobs' `backoffLimit`.
    #[arg(long, default_value_t = 6)]
    pub backoff_limit: i32,
    /// How long each pod runs (`sim.exitplan.io/run`).
    #[arg(long, default_value = "2s")]
    pub run: String,
    /// Seed of the chaos draws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Simulated nodes (`node-1` … `node-N`, 110 pods each).
    #[arg(long, default_value_t = 100)]
    pub nodes: usize,
    /// Store on disk (a fresh temporary directory) instead of in memory.
    #[arg(long)]
    pub durable: bool,
    /// Concurrent client tasks creating the Jobs.
    #[arg(long, default_value_t = 16)]
    pub clients: usize,
    /// Run on tokio's paused clock (virtual time; for tests).
    #[arg(long, hide = true)]
    pub virtual_time: bool,
}

/// What the chaos agent does to one pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Succeed,
    Fail,
    Disrupt,
}

/// A pod's outcome as last seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Active,
    Succeeded,
    /// Failed (or gone unfinished) without `DisruptionTarget`.
    Failed,
    /// Carries `DisruptionTarget=True` and did not succeed.
    Disrupted,
    /// Released by its Job unfinished (tracking finalizer removed while
    /// Pending/Running and not being deleted: an excess pod `manageJob`
    /// deletes), then gone: not a failure, upstream counts nothing.
    Removed,
}

/// What the chaos agent draws fates with.
#[derive(Clone, Copy, Debug)]
struct Draws {
    seed: u64,
    fail_percent: u64,
    disrupt_percent: u64,
    /// Only a Job's first this many pods get a drawn fate (`None`: all).
    first: Option<u64>,
}

/// An action for the chaos executor.
enum Action {
    Fail(ObjectKey),
    Evict(ObjectKey),
}

/// The chaos agent's view, updated by the pod informer's handler.
#[derive(Default)]
struct Chaos {
    /// Pods seen per Job (the next pod's ordinal).
    ordinals: HashMap<String, u64>,
    /// Pods to evict once Running (by UID).
    to_evict: HashSet<String>,
    /// Every pod's last outcome (by UID).
    outcomes: HashMap<String, Outcome>,
    /// Pods whose finalizer went while they were unfinished and not
    /// being deleted (by UID).
    released: HashSet<String>,
    /// Every pod's Job, name and observed states (by UID), to explain a
    /// Job whose counters do not match its pods.
    traces: HashMap<String, Trace>,
    /// Scripted failures / evictions decided.
    fails: usize,
    evictions: usize,
}

/// One pod as the agent saw it over time.
#[derive(Clone, Debug, Default)]
struct Trace {
    job: String,
    name: String,
    /// Distinct consecutive observed states (see [`state`]).
    states: Vec<String>,
}

/// A compact rendering of what the agent saw of a pod: phase, exit code of
/// `main`, `DisruptionTarget`, deletion, tracking finalizer.
fn state(pod: &Pod, deleted: bool) -> String {
    let mut s = phase(pod).to_owned();
    let exit = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .and_then(|cs| cs.iter().find(|c| c.name == "main"))
        .and_then(|c| c.state.as_ref()?.terminated.as_ref())
        .map(|t| t.exit_code);
    if let Some(code) = exit {
        s.push_str(&format!("({code})"));
    }
    if has_condition(
        pod.status.as_ref().and_then(|s| s.conditions.as_deref()),
        "DisruptionTarget",
    ) {
        s.push_str("+DT");
    }
    if pod.metadata.deletion_timestamp.is_some() {
        s.push_str("+deleting");
    }
    let fin = pod
        .metadata
        .finalizers
        .as_deref()
        .is_some_and(|f| f.iter().any(|f| f == "batch.kubernetes.io/job-tracking"));
    if fin {
        s.push_str("+fin");
    }
    if deleted {
        s.push_str("+GONE");
    }
    s
}

/// FNV-1a over the seed, the Job's name and the ordinal: a draw in 0..100.
fn draw(seed: u64, job: &str, ordinal: u64) -> u64 {
    let bytes = seed
        .to_le_bytes()
        .into_iter()
        .chain(job.bytes())
        .chain(ordinal.to_le_bytes());
    let h = bytes.fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    h % 100
}

fn job_of(pod: &Pod) -> Option<&str> {
    pod.metadata
        .owner_references
        .as_deref()?
        .iter()
        .find(|r| r.controller == Some(true) && r.kind == "Job")
        .map(|r| r.name.as_str())
}

fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

fn has_condition(conditions: Option<&[impl HasTypeStatus]>, type_: &str) -> bool {
    conditions.is_some_and(|cs| cs.iter().any(|c| c.is(type_)))
}

/// A condition with a type and a status.
trait HasTypeStatus {
    fn is(&self, type_: &str) -> bool;
}

impl HasTypeStatus for k8s_openapi::api::core::v1::PodCondition {
    fn is(&self, type_: &str) -> bool {
        self.type_ == type_ && self.status == "True"
    }
}

impl HasTypeStatus for k8s_openapi::api::batch::v1::JobCondition {
    fn is(&self, type_: &str) -> bool {
        self.type_ == type_ && self.status == "True"
    }
}

fn outcome(pod: &Pod, deleted: bool) -> Outcome {
    let disrupted = has_condition(
        pod.status.as_ref().and_then(|s| s.conditions.as_deref()),
        "DisruptionTarget",
    );
    match phase(pod) {
        "Succeeded" => Outcome::Succeeded,
        _ if disrupted && (deleted || phase(pod) == "Failed") => Outcome::Disrupted,
        "Failed" => Outcome::Failed,
        _ if deleted => Outcome::Failed,
        _ => Outcome::Active,
    }
}

impl Chaos {
    fn on_pod(&mut self, change: &Change<Pod>, draws: Draws, tx: &mpsc::UnboundedSender<Action>) {
        let (pod, deleted) = match change {
            Change::Added(p) => (p, false),
            Change::Updated { new, .. } => (new, false),
            Change::Deleted(p) => (p, true),
        };
        let Some(job) = job_of(pod) else {
            return;
        };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let key = ObjectKey::of(&**pod);
        if matches!(change, Change::Added(_)) && !self.outcomes.contains_key(&uid) {
            let ordinal = self.ordinals.entry(job.to_owned()).or_default();
            let d = draw(draws.seed, job, *ordinal);
            let drawn = draws.first.is_none_or(|n| *ordinal < n);
            *ordinal += 1;
            let fate = if !drawn {
                Fate::Succeed
            } else if d < draws.fail_percent {
                Fate::Fail
            } else if d < draws.fail_percent + draws.disrupt_percent {
                Fate::Disrupt
            } else {
                Fate::Succeed
            };
            match fate {
                Fate::Fail => {
                    self.fails += 1;
                    let _ = tx.send(Action::Fail(key.clone()));
                }
                Fate::Disrupt => {
                    self.evictions += 1;
                    self.to_evict.insert(uid.clone());
                }
                Fate::Succeed => {}
            }
        }
        if !deleted
            && phase(pod) == "Running"
            && pod.metadata.deletion_timestamp.is_none()
            && self.to_evict.remove(&uid)
        {
            let _ = tx.send(Action::Evict(key));
        }
        if deleted {
            self.to_evict.remove(&uid);
        }
        let st = state(pod, deleted);
        let trace = self.traces.entry(uid.clone()).or_insert_with(|| Trace {
            job: job.to_owned(),
            name: pod.metadata.name.clone().unwrap_or_default(),
            states: Vec::new(),
        });
        if trace.states.last() != Some(&st) {
            trace.states.push(st);
        }
        let tracked = pod
            .metadata
            .finalizers
            .as_deref()
            .is_some_and(|f| f.iter().any(|f| f == "batch.kubernetes.io/job-tracking"));
        if !deleted
            && !tracked
            && matches!(phase(pod), "Pending" | "Running" | "")
            && pod.metadata.deletion_timestamp.is_none()
        {
            self.released.insert(uid.clone());
        }
        let mut o = outcome(pod, deleted);
        if o == Outcome::Failed && deleted && phase(pod) != "Failed" && self.released.contains(&uid)
        {
            o = Outcome::Removed;
        }
        // Once finished, a pod stays as it finished (its deletion after the
        // Job counted it changes nothing).
        let entry = self.outcomes.entry(uid).or_insert(Outcome::Active);
        if *entry == Outcome::Active {
            *entry = o;
        }
    }

    fn count(&self, o: Outcome) -> usize {
        self.outcomes.values().filter(|v| **v == o).count()
    }

    /// The Jobs whose `status.succeeded` / `status.failed` differ from the
    /// pods the agent saw succeed / fail without `DisruptionTarget`, each
    /// rendered with its pods (UID, name, outcome, observed states).
    fn mismatches(&self, jobs: &[Arc<Job>], listed: &[Pod]) -> Vec<String> {
        let mut by_job: HashMap<&str, Vec<(&String, &Trace)>> = HashMap::new();
        for (uid, t) in &self.traces {
            by_job.entry(t.job.as_str()).or_default().push((uid, t));
        }
        let mut out = Vec::new();
        for j in jobs {
            let name = j.metadata.name.as_deref().unwrap_or_default();
            let status = j.status.clone().unwrap_or_default();
            let mut pods = by_job.remove(name).unwrap_or_default();
            pods.sort_by(|a, b| a.1.name.cmp(&b.1.name));
            let seen = |o: Outcome| {
                pods.iter()
                    .filter(|(uid, _)| self.outcomes.get(*uid) == Some(&o))
                    .count()
            };
            let (s, f) = (seen(Outcome::Succeeded), seen(Outcome::Failed));
            let (ss, sf) = (status.succeeded.unwrap_or(0), status.failed.unwrap_or(0));
            if i64::from(ss) == i64::try_from(s).unwrap_or(-1)
                && i64::from(sf) == i64::try_from(f).unwrap_or(-1)
            {
                continue;
            }
            let conditions: Vec<String> = status
                .conditions
                .iter()
                .flatten()
                .filter(|c| c.status == "True")
                .map(|c| format!("{}/{}", c.type_, c.reason.as_deref().unwrap_or_default()))
                .collect();
            let mut text = format!(
                "Job {name}: status succeeded={ss} failed={sf} (agent saw {s} succeeded, {f} failed), \
                 uncounted={:?}, conditions {conditions:?}",
                status.uncounted_terminated_pods
            );
            for (uid, t) in &pods {
                let o = self.outcomes.get(*uid).copied().unwrap_or(Outcome::Active);
                text.push_str(&format!(
                    "\n    pod {} {uid} {o:?}: {}",
                    t.name,
                    t.states.join(" -> ")
                ));
            }
            for p in listed {
                let uid = p.metadata.uid.as_deref().unwrap_or_default();
                if job_of(p) == Some(name) && !self.traces.contains_key(uid) {
                    text.push_str(&format!(
                        "\n    pod {} {uid} NEVER SEEN by the informer, listed now: {}",
                        p.metadata.name.as_deref().unwrap_or_default(),
                        state(p, false)
                    ));
                }
            }
            out.push(text);
        }
        out
    }
}

fn job(index: usize, args: &JobsArgs) -> Result<Job> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": format!("job-{index:05}"), "namespace": NAMESPACE},
        "spec": {
            "completions": args.pods_per_job,
            "parallelism": args.pods_per_job,
            "backoffLimit": args.backoff_limit,
            "podFailurePolicy": {"rules": [
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
                {"action": "Count", "onExitCodes": {"containerName": "main", "operator": "In", "values": [FAIL_EXIT_CODE]}},
            ]},
            "template": {
                "metadata": {
                    "labels": {"app": "bench-jobs"},
                    "annotations": {"sim.exitplan.io/run": args.run, "sim.exitplan.io/stop": "0s"},
                },
                "spec": {
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 30,
                    "containers": [{"name": "main", "image": "registry.example.com/bench:1"}],
                },
            },
        },
    }))?)
}

fn terminal(job: &Job) -> Option<&'static str> {
    let cs = job.status.as_ref().and_then(|s| s.conditions.as_deref());
    if has_condition(cs, "Complete") {
        Some("Complete")
    } else if has_condition(cs, "Failed") {
        Some("Failed")
    } else {
        None
    }
}

/// The value of an unlabelled metric line `name value`, or the sum of the
/// lines of `name{…}` whose labels contain `label`.
fn metric(ctx: &Context, name: &str, label: Option<&str>) -> u64 {
    ctx.metrics
        .encode()
        .lines()
        .filter_map(|l| l.strip_prefix(name))
        .filter(|rest| match label {
            None => rest.starts_with(' '),
            Some(lbl) => rest.starts_with('{') && rest.contains(lbl),
        })
        .filter_map(|rest| rest.rsplit(' ').next()?.parse::<f64>().ok())
        .map(|v| v as u64)
        .sum()
}

/// Runs the benchmark and prints its figures.
pub fn run(args: JobsArgs) -> Result<ExitCode> {
    if std::env::var_os("RUST_LOG").is_some() {
        crate::process::init_logging();
    }
    let dir = args
        .durable
        .then(|| std::env::temp_dir().join(format!("exitplan-bench-jobs-{}", std::process::id())));
    if let Some(d) = &dir {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let rt = if args.virtual_time {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()?
    } else {
        runtime()?
    };
    let result = rt.block_on(bench(dir.as_deref(), &args));
    if let Some(d) = &dir {
        let _ = std::fs::remove_dir_all(d);
    }
    result.map(|ok| {
        if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    })
}

/// `clients` tasks creating the Jobs.
async fn create_jobs(client: &kube::Client, args: &JobsArgs) -> Result<()> {
    let clients = args.clients.max(1);
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let api: Api<Job> = Api::namespaced(client.clone(), NAMESPACE);
            let jobs: Result<Vec<Job>> = (c..args.jobs)
                .step_by(clients)
                .map(|i| job(i, args))
                .collect();
            tokio::spawn(async move {
                for j in jobs? {
                    api.create(&PostParams::default(), &j).await?;
                }
                Ok::<_, anyhow::Error>(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    Ok(())
}

/// Performs the chaos agent's actions (each in its own task).
async fn chaos_executor(client: kube::Client, mut rx: mpsc::UnboundedReceiver<Action>) {
    while let Some(action) = rx.recv().await {
        let client = client.clone();
        tokio::spawn(async move {
            let (key, result) = match action {
                Action::Fail(key) => {
                    let api: Api<Pod> = Api::namespaced(client, NAMESPACE);
                    let patch = json!({"metadata": {"annotations": {
                        "sim.exitplan.io/exit-code": FAIL_EXIT_CODE.to_string(),
                    }}});
                    let r = api
                        .patch(&key.name, &PatchParams::default(), &Patch::Merge(patch))
                        .await
                        .map(|_| ());
                    (key, r)
                }
                Action::Evict(key) => {
                    let api: Api<Pod> = Api::namespaced(client, NAMESPACE);
                    let r = api
                        .evict(&key.name, &EvictParams::default())
                        .await
                        .map(|_| ());
                    (key, r)
                }
            };
            if let Err(e) = result {
                tracing::warn!(pod = %key, error = %e, "chaos action failed");
            }
        });
    }
}

async fn bench(dir: Option<&std::path::Path>, args: &JobsArgs) -> Result<bool> {
    let profile = if args.virtual_time {
        "virtual time: durations are virtual"
    } else if cfg!(debug_assertions) {
        "debug build: figures are not meaningful, use --release"
    } else {
        "release build"
    };
    let storage = storage_label(dir);
    println!(
        "exitplan bench jobs ({profile}; {storage}; {} Jobs x {} pods on {} nodes; \
         {}% fail by exit code, {}% disrupted ({}); backoffLimit {}; run {}; seed {})",
        args.jobs,
        args.pods_per_job,
        args.nodes,
        args.fail_percent,
        args.disrupt_percent,
        if args.chaos_replacements {
            "of all pods, replacements included"
        } else {
            "of the first attempts; replacements succeed"
        },
        args.backoff_limit,
        args.run,
        args.seed,
    );
    let clock: SharedClock = if args.virtual_time {
        Arc::new(TokioClock::starting_at(jiff::Timestamp::now()))
    } else {
        Arc::new(SystemClock)
    };
    let (server, client, ctx) = in_process(dir, clock).await?;

    // The chaos agent: decisions in the pod informer's handler, API calls
    // in the executor.
    let chaos = Arc::new(Mutex::new(Chaos::default()));
    let (tx, rx) = mpsc::unbounded_channel();
    {
        let chaos = chaos.clone();
        let draws = Draws {
            seed: args.seed,
            fail_percent: args.fail_percent,
            disrupt_percent: args.disrupt_percent,
            first: (!args.chaos_replacements)
                .then(|| u64::try_from(args.pods_per_job).unwrap_or_default()),
        };
        ctx.informers.pods.on_change(move |change| {
            if let Ok(mut c) = chaos.lock() {
                c.on_pod(change, draws, &tx);
            }
        });
    }
    // Terminal Jobs, and when the last one was seen.
    type Finished = HashMap<String, (&'static str, Instant)>;
    let finished: Arc<Mutex<(Finished, Option<Instant>)>> = Arc::default();
    {
        let finished = finished.clone();
        ctx.informers.jobs.on_change(move |change| {
            if let Change::Added(j) | Change::Updated { new: j, .. } = change
                && let Some(t) = terminal(j)
                && let Ok(mut f) = finished.lock()
                && !f
                    .0
                    .contains_key(j.metadata.name.as_deref().unwrap_or_default())
            {
                let now = Instant::now();
                f.0.insert(j.metadata.name.clone().unwrap_or_default(), (t, now));
                f.1 = Some(now);
            }
        });
    }
    let pods_seen = Arc::new(AtomicUsize::new(0));
    {
        let n = pods_seen.clone();
        ctx.informers.pods.on_change(move |change| {
            if matches!(change, Change::Added(_)) {
                n.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    let config = RuntimeConfig {
        components: [
            Component::Job,
            Component::Scheduler,
            Component::GarbageCollector,
        ]
        .into_iter()
        .collect(),
        nodes: (1..=args.nodes).map(|i| format!("node-{i}")).collect(),
        clients: None,
    };
    let rt = Runtime::start(ctx.clone(), config).await;
    let executor = tokio::spawn(chaos_executor(client.clone(), rx));
    // The nodes register and report Ready before the Jobs come.
    let ready_by = Instant::now() + Duration::from_secs(60);
    while ctx.informers.nodes.list().len() < args.nodes {
        if Instant::now() > ready_by {
            bail!("the {} simulated nodes did not register", args.nodes);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let writes_before = server.store().stats();
    let start = Instant::now();
    create_jobs(&client, args).await?;
    let all_created = start.elapsed();
    eprintln!("[jobs {all_created:>6.1?}] {} Jobs created", args.jobs);

    let mut last_line = Instant::now();
    let mut last_progress = (Instant::now(), (0usize, 0usize, 0usize));
    let stalled = loop {
        let done = finished.lock().map(|f| f.0.len()).unwrap_or_default();
        if done >= args.jobs {
            break false;
        }
        let (created, ended) = chaos
            .lock()
            .map(|c| {
                (
                    c.outcomes.len(),
                    c.outcomes.len() - c.count(Outcome::Active),
                )
            })
            .unwrap_or_default();
        let progress = (done, created, ended);
        if progress != last_progress.1 {
            last_progress = (Instant::now(), progress);
        } else if last_progress.0.elapsed() > STALL {
            break true;
        }
        if last_line.elapsed() >= Duration::from_secs(1) {
            eprintln!(
                "[jobs {:>6.1?}] Jobs finished {done}/{}, pods created {created} ended {ended}, \
                 Job syncs {}, store writes {}; RSS {}",
                start.elapsed(),
                args.jobs,
                metric(&ctx, "job_controller_job_syncs_total", None),
                server.store().stats().writes - writes_before.writes,
                mib(rss_kib()),
            );
            last_line = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (finished, last) = finished
        .lock()
        .map(|f| (f.0.clone(), f.1))
        .unwrap_or_default();
    let elapsed = last.map_or(start.elapsed(), |l| l.saturating_duration_since(start));
    let writes = server.store().stats().writes - writes_before.writes;
    let syncs = metric(&ctx, "job_controller_job_syncs_total", None);
    let policy = "job_controller_pod_failures_handled_by_failure_policy_total";
    let ignored = metric(&ctx, policy, Some("action=\"Ignore\""));
    let counted_by_rule = metric(&ctx, policy, Some("action=\"Count\""));
    let jobs = ctx.informers.jobs.list();
    let sum = |f: fn(&k8s_openapi::api::batch::v1::JobStatus) -> Option<i32>| -> i64 {
        jobs.iter()
            .filter_map(|j| j.status.as_ref().and_then(f))
            .map(i64::from)
            .sum()
    };
    let failed_total = sum(|s| s.failed);
    let succeeded_total = sum(|s| s.succeeded);
    let complete = finished.values().filter(|(t, _)| *t == "Complete").count();
    let failed_jobs = finished.values().filter(|(t, _)| *t == "Failed").count();
    let mut finish_times: Vec<Duration> = finished
        .values()
        .map(|(_, at)| at.saturating_duration_since(start))
        .collect();
    finish_times.sort();
    let (fails, evictions, outcomes) = chaos
        .lock()
        .map(|c| {
            (
                c.fails,
                c.evictions,
                [
                    c.count(Outcome::Succeeded),
                    c.count(Outcome::Failed),
                    c.count(Outcome::Disrupted),
                    c.count(Outcome::Active),
                    c.count(Outcome::Removed),
                ],
            )
        })
        .unwrap_or_default();
    let [
        pod_succeeded,
        pod_failed,
        pod_disrupted,
        pod_active,
        pod_removed,
    ] = outcomes;
    let created = pods_seen.load(Ordering::Relaxed);

    if stalled {
        println!(
            "STALLED: {}/{} Jobs finished; nothing progressed for {STALL:?}",
            finished.len(),
            args.jobs
        );
    }
    println!(
        "converged: {} Jobs terminal in {elapsed:.2?} (first Job created → last observed terminal; \
         all created after {all_created:.2?}): {complete} Complete, {failed_jobs} Failed",
        finished.len(),
    );
    println!(
        "  Jobs terminal after: p50 {:.2?}, p90 {:.2?}, p99 {:.2?}, all {:.2?} \
         (the pod-failure back-off, 10 s doubling per consecutive failure, makes the tail)",
        percentile(&finish_times, 50),
        percentile(&finish_times, 90),
        percentile(&finish_times, 99),
        finish_times.last().copied().unwrap_or_default(),
    );
    println!(
        "  Job syncs: {syncs} ({:.0}/s, {:.1} per Job)",
        syncs as f64 / elapsed.as_secs_f64().max(1e-9),
        syncs as f64 / args.jobs.max(1) as f64,
    );
    println!(
        "  pods: {created} created; chaos drew {fails} exit-code failures and {evictions} disruptions; \
         outcomes: {pod_succeeded} succeeded, {pod_failed} failed, {pod_disrupted} disrupted, {pod_removed} removed unfinished by their Job (excess), {pod_active} still active"
    );
    println!(
        "  failures: {failed_total} counted (sum of status.failed; {counted_by_rule} by the Count rule), \
         {ignored} ignored (DisruptionTarget); status.succeeded sum {succeeded_total}"
    );
    let adds_up = !stalled
        && failed_total == i64::try_from(pod_failed).unwrap_or(i64::MAX)
        && ignored == u64::try_from(pod_disrupted).unwrap_or(u64::MAX)
        && succeeded_total == i64::try_from(pod_succeeded).unwrap_or(i64::MAX);
    println!(
        "  counts add up: {} (counted == pods failed without DisruptionTarget, ignored == pods disrupted, \
         succeeded == pods succeeded)",
        if adds_up { "yes" } else { "NO" }
    );
    println!(
        "  result: jobs={} complete={complete} failed_jobs={failed_jobs} pods={created} \
         counted={failed_total} ignored={ignored} succeeded={succeeded_total} \
         pods_succeeded={pod_succeeded} pods_failed={pod_failed} pods_disrupted={pod_disrupted} \
         pods_active={pod_active} pods_removed={pod_removed} drawn_fail={fails} drawn_disrupt={evictions} syncs={syncs}",
        finished.len(),
    );
    println!(
        "  store writes {writes} ({:.1} per pod); RSS now {}, peak {}",
        writes as f64 / created.max(1) as f64,
        mib(rss_kib()),
        mib(peak_rss_kib())
    );
    if !adds_up {
        // A fresh LIST, to show pods the informer never delivered.
        let listed = Api::<Pod>::namespaced(client.clone(), NAMESPACE)
            .list(&Default::default())
            .await
            .map(|l| l.items)
            .unwrap_or_default();
        let mismatches = chaos
            .lock()
            .map(|c| c.mismatches(&jobs, &listed))
            .unwrap_or_default();
        println!(
            "  Jobs whose counters differ from their pods: {}",
            mismatches.len()
        );
        for m in mismatches.iter().take(20) {
            println!("  {m}");
        }
    }
    executor.abort();
    rt.shutdown().await;
    server.shutdown();
    Ok(adds_up)
}
