//! `exitplan drain NODE`: a cooperative drain. Cordons the node (the merge
//! patch `{"spec":{"unschedulable":true}}`, as `kubectl cordon`), asks for
//! every non-terminal pod on it to leave by creating one EvictionRequest per
//! pod (`drain-<pod>`, `spec.target.pod {name, uid}`, `spec.requester`,
//! `spec.intent: Eviction`), then follows the requests' conditions until each
//! target is `TargetEvicted=True` or `Failed=True`.
//!
//! Exit status: 0 when every pod was evicted; 1 when any failed or
//! `--timeout` passed (naming them). `--dry-run` cordons nothing and creates
//! the requests with the server's `dryRun=All` (so they are validated but not
//! stored).
//!
//! The decisions are pure ([`plan`], [`Progress::of`]); the rest is IO.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result};
use clap::Args;
use futures_util::StreamExt as _;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::lifecycle::v1alpha1::{
    EvictionRequest, EvictionRequestPodReference, EvictionRequestSpec, EvictionRequestTarget,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;

use exitplan_api::lifecycle::constants::{
    CONDITION_FAILED, CONDITION_TARGET_EVICTED, INTENT_EVICTION,
};

use crate::connect::server_error;

/// The default `spec.requester` of the requests.
pub const DEFAULT_REQUESTER: &str = "exitplan.io/drain";
/// Prefix of the requests' names (`drain-<pod>`).
pub const NAME_PREFIX: &str = "drain-";

/// Arguments of `exitplan drain`.
#[derive(Debug, Args)]
pub struct DrainArgs {
    /// The node to drain.
    pub node: String,
    /// Kubeconfig to use. Default: $KUBECONFIG, ~/.kube/config, or in-cluster.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// `spec.requester` of the EvictionRequests.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_REQUESTER)]
    pub requester: String,
    /// How long to wait for every pod to leave (e.g. 30s, 10m, 1h30m).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = super::parse_duration)]
    pub timeout: Duration,
    /// Print what would be done; change nothing (the requests are sent with dryRun=All).
    #[arg(long)]
    pub dry_run: bool,
}

/// One pod to evict and its request.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// The pod's namespace (also the request's).
    pub namespace: String,
    /// The pod's name.
    pub pod: String,
    /// The request to create.
    pub request: EvictionRequest,
}

impl Target {
    /// `namespace/pod`.
    pub fn pod_key(&self) -> String {
        format!("{}/{}", self.namespace, self.pod)
    }

    /// The request's name.
    pub fn request_name(&self) -> &str {
        self.request.metadata.name.as_deref().unwrap_or_default()
    }
}

/// The name of the request for `pod`: `drain-<pod>`, cut to the 253
/// characters of a DNS subdomain (without a trailing `-` or `.`).
pub fn request_name(pod: &str) -> String {
    let mut name = format!("{NAME_PREFIX}{pod}");
    name.truncate(253);
    while name.ends_with(['-', '.']) {
        name.pop();
    }
    name
}

fn is_terminal(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

/// The pods of `node` that must leave (bound to it, not terminal), in
/// namespace/name order, each with its EvictionRequest. Pods without a
/// namespace, name or UID (not from a server) are skipped.
pub fn plan(node: &str, pods: &[Pod], requester: &str) -> Vec<Target> {
    let mut out: Vec<Target> = pods
        .iter()
        .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node))
        .filter(|p| !is_terminal(p))
        .filter_map(|p| {
            let namespace = p.metadata.namespace.clone()?;
            let name = p.metadata.name.clone()?;
            let uid = p.metadata.uid.clone()?;
            let request = EvictionRequest {
                metadata: ObjectMeta {
                    name: Some(request_name(&name)),
                    namespace: Some(namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: EvictionRequestSpec {
                    target: EvictionRequestTarget {
                        pod: Some(EvictionRequestPodReference {
                            name: name.clone(),
                            uid,
                        }),
                    },
                    requester: requester.to_owned(),
                    intent: INTENT_EVICTION.to_owned(),
                },
                status: None,
            };
            Some(Target {
                namespace,
                pod: name,
                request,
            })
        })
        .collect();
    out.sort_by(|a, b| (&a.namespace, &a.pod).cmp(&(&b.namespace, &b.pod)));
    out
}

/// Where one target stands, from its request's conditions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Neither `TargetEvicted` nor `Failed` is True (or the request is not seen).
    Pending,
    /// `TargetEvicted=True`.
    Evicted,
    /// `Failed=True`, with its reason and message.
    Failed {
        /// The condition's reason.
        reason: String,
        /// The condition's message.
        message: String,
    },
}

/// The outcome that `request`'s conditions show.
pub fn outcome(request: Option<&EvictionRequest>) -> Outcome {
    let conditions = request
        .and_then(|r| r.status.as_ref())
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let is_true = |t: &str| {
        conditions
            .iter()
            .find(|c| c.type_ == t && c.status == "True")
    };
    if is_true(CONDITION_TARGET_EVICTED).is_some() {
        return Outcome::Evicted;
    }
    if let Some(c) = is_true(CONDITION_FAILED) {
        return Outcome::Failed {
            reason: c.reason.clone(),
            message: c.message.clone(),
        };
    }
    Outcome::Pending
}

/// The drain's progress: each target's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// `namespace/pod` of every target with its outcome, in target order.
    pub targets: Vec<(String, Outcome)>,
}

impl Progress {
    /// The progress of `targets` given the requests seen, keyed by
    /// `(namespace, name)`.
    pub fn of(
        targets: &[Target],
        requests: &BTreeMap<(String, String), EvictionRequest>,
    ) -> Progress {
        Progress {
            targets: targets
                .iter()
                .map(|t| {
                    let key = (t.namespace.clone(), t.request_name().to_owned());
                    (t.pod_key(), outcome(requests.get(&key)))
                })
                .collect(),
        }
    }

    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.targets.iter().filter(|(_, o)| f(o)).count()
    }

    /// How many were evicted.
    pub fn evicted(&self) -> usize {
        self.count(|o| *o == Outcome::Evicted)
    }

    /// The targets that failed, with `reason: message`.
    pub fn failed(&self) -> Vec<(String, String, String)> {
        self.targets
            .iter()
            .filter_map(|(k, o)| match o {
                Outcome::Failed { reason, message } => {
                    Some((k.clone(), reason.clone(), message.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// The targets still pending.
    pub fn pending(&self) -> Vec<String> {
        self.targets
            .iter()
            .filter(|(_, o)| *o == Outcome::Pending)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Whether every target is evicted or failed.
    pub fn done(&self) -> bool {
        self.pending().is_empty()
    }

    /// `2/5 evicted, 1 failed, 2 pending`.
    pub fn summary(&self) -> String {
        format!(
            "{}/{} evicted, {} failed, {} pending",
            self.evicted(),
            self.targets.len(),
            self.failed().len(),
            self.pending().len()
        )
    }

    /// A bar of `width` cells: `#` evicted, `x` failed, `.` pending.
    pub fn bar(&self, width: usize) -> String {
        let total = self.targets.len().max(1);
        let cells = |n: usize| (n * width).div_ceil(total);
        let ev = cells(self.evicted()).min(width);
        let fa = cells(self.failed().len()).min(width - ev);
        format!(
            "[{}{}{}]",
            "#".repeat(ev),
            "x".repeat(fa),
            ".".repeat(width - ev - fa)
        )
    }
}

/// Runs the drain.
pub fn run(args: DrainArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(drain(args))
}

/// Draws the progress on stderr: redrawn in place on a terminal, one line
/// per change otherwise.
struct Display {
    tty: bool,
    last: Option<String>,
}

impl Display {
    fn show(&mut self, p: &Progress) {
        let line = p.summary();
        if self.last.as_deref() == Some(line.as_str()) {
            return;
        }
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{} {line}", p.bar(30));
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
        self.last = Some(line);
    }

    fn finish(&self) {
        if self.tty && self.last.is_some() {
            eprintln!();
        }
    }
}

async fn drain(args: DrainArgs) -> Result<ExitCode> {
    let client = crate::connect::client(args.kubeconfig.as_deref()).await?;
    let node = &args.node;
    let nodes: Api<Node> = Api::all(client.clone());
    let current = nodes
        .get(node)
        .await
        .map_err(server_error)
        .with_context(|| format!("getting node {node}"))?;
    let suffix = if args.dry_run { " (dry run)" } else { "" };
    let cordoned = current
        .spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false);
    if cordoned {
        println!("node/{node} already cordoned");
    } else {
        if !args.dry_run {
            nodes
                .patch(
                    node,
                    &PatchParams::default(),
                    &Patch::Merge(serde_json::json!({"spec": {"unschedulable": true}})),
                )
                .await
                .map_err(server_error)
                .with_context(|| format!("cordoning node {node}"))?;
        }
        println!("node/{node} cordoned{suffix}");
    }

    let pods: Api<Pod> = Api::all(client.clone());
    let listed = pods
        .list(&ListParams::default().fields(&format!("spec.nodeName={node}")))
        .await
        .map_err(server_error)
        .with_context(|| format!("listing the pods of node {node}"))?;
    let targets = plan(node, &listed.items, &args.requester);

    let post = PostParams {
        dry_run: args.dry_run,
        ..PostParams::default()
    };
    let suffix = if args.dry_run {
        " (server dry run)"
    } else {
        ""
    };
    let mut conflicts = Vec::new();
    for t in &targets {
        let api: Api<EvictionRequest> = Api::namespaced(client.clone(), &t.namespace);
        match api.create(&post, &t.request).await {
            Ok(_) => println!(
                "evictionrequest.lifecycle.k8s.io/{} created for pod {}{suffix}",
                t.request_name(),
                t.pod_key()
            ),
            Err(kube::Error::Api(s)) if s.is_already_exists() => {
                let existing = api
                    .get(t.request_name())
                    .await
                    .map_err(server_error)
                    .with_context(|| format!("reading EvictionRequest {}", t.request_name()))?;
                if existing.spec.target == t.request.spec.target {
                    println!(
                        "evictionrequest.lifecycle.k8s.io/{} unchanged for pod {}",
                        t.request_name(),
                        t.pod_key()
                    );
                } else {
                    conflicts.push(format!(
                        "{}: EvictionRequest {} already exists for another pod",
                        t.pod_key(),
                        t.request_name()
                    ));
                }
            }
            Err(e) => {
                return Err(server_error(e)).with_context(|| {
                    format!(
                        "creating EvictionRequest {}/{}",
                        t.namespace,
                        t.request_name()
                    )
                });
            }
        }
    }
    if args.dry_run {
        return Ok(ExitCode::SUCCESS);
    }

    let mut display = Display {
        tty: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        last: None,
    };
    let deadline = tokio::time::Instant::now() + args.timeout;
    let mut seen: BTreeMap<(String, String), EvictionRequest> = BTreeMap::new();
    let mut relist: Option<BTreeMap<(String, String), EvictionRequest>> = None;
    let mut progress = Progress::of(&targets, &seen);
    let all: Api<EvictionRequest> = Api::all(client);
    let mut events = std::pin::pin!(watcher(all, watcher::Config::default()));
    let timed_out = loop {
        display.show(&progress);
        if progress.done() {
            break false;
        }
        let event = match tokio::time::timeout_at(deadline, events.next()).await {
            Err(_) => break true,
            Ok(None) => anyhow::bail!("the EvictionRequest watch ended"),
            Ok(Some(Err(e))) => {
                tracing::debug!(error = %e, "watch error (retrying)");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            Ok(Some(Ok(ev))) => ev,
        };
        let key = |r: &EvictionRequest| {
            (
                r.metadata.namespace.clone().unwrap_or_default(),
                r.metadata.name.clone().unwrap_or_default(),
            )
        };
        // A (re)list is buffered and swapped in whole at its end, so the
        // progress never flickers back to pending.
        match event {
            watcher::Event::Apply(r) => {
                seen.insert(key(&r), r);
            }
            watcher::Event::Delete(r) => {
                seen.remove(&key(&r));
            }
            watcher::Event::Init => relist = Some(BTreeMap::new()),
            watcher::Event::InitApply(r) => {
                relist.get_or_insert_default().insert(key(&r), r);
            }
            watcher::Event::InitDone => {
                if let Some(listed) = relist.take() {
                    seen = listed;
                }
            }
        }
        progress = Progress::of(&targets, &seen);
    };
    display.finish();

    let failed = progress.failed();
    if !timed_out && failed.is_empty() && conflicts.is_empty() {
        println!("node/{node} drained");
        return Ok(ExitCode::SUCCESS);
    }
    if timed_out {
        let pending = progress.pending();
        eprintln!(
            "error: timed out after {} waiting for {} pod(s) to be evicted: {}",
            humantime(args.timeout),
            pending.len(),
            pending.join(", ")
        );
    }
    for (pod, reason, message) in &failed {
        eprintln!("error: pod {pod} was not evicted: {reason}: {message}");
    }
    for c in &conflicts {
        eprintln!("error: {c}");
    }
    Ok(ExitCode::FAILURE)
}

fn humantime(d: Duration) -> String {
    jiff::SignedDuration::try_from(d)
        .map(|s| format!("{s:#}"))
        .unwrap_or_else(|_| format!("{d:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, node: Option<&str>, phase: Option<&str>) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default",
                         "uid": format!("00000000-0000-0000-0000-{:0>12}", name.len())},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": phase},
        }))
        .expect("pod")
    }

    fn request(conds: serde_json::Value) -> EvictionRequest {
        serde_json::from_value(json!({
            "metadata": {"name": "drain-a", "namespace": "default"},
            "spec": {"target": {"pod": {"name": "a", "uid": "u"}},
                     "requester": "exitplan.io/drain", "intent": "Eviction"},
            "status": {"conditions": conds},
        }))
        .expect("request")
    }

    fn cond(t: &str, s: &str, reason: &str) -> serde_json::Value {
        json!({"type": t, "status": s, "reason": reason, "message": format!("{reason}."),
               "lastTransitionTime": "2026-11-29T10:00:00Z"})
    }

    #[test]
    fn plan_takes_the_live_pods_of_the_node_only() {
        let pods = vec![
            pod("b", Some("n1"), Some("Running")),
            pod("a", Some("n1"), Some("Pending")),
            pod("done", Some("n1"), Some("Succeeded")),
            pod("dead", Some("n1"), Some("Failed")),
            pod("elsewhere", Some("n2"), Some("Running")),
            pod("unbound", None, Some("Pending")),
        ];
        let targets = plan("n1", &pods, "example.com/drain");
        let names: Vec<_> = targets.iter().map(Target::pod_key).collect();
        assert_eq!(names, ["default/a", "default/b"]);
        let r = serde_json::to_value(&targets[0].request).expect("json");
        assert_eq!(
            r,
            json!({
                "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "EvictionRequest",
                "metadata": {"name": "drain-a", "namespace": "default"},
                "spec": {
                    "target": {"pod": {"name": "a", "uid": "00000000-0000-0000-0000-000000000001"}},
                    "requester": "example.com/drain",
                    "intent": "Eviction",
                },
            })
        );
        assert!(
            exitplan_api::lifecycle::evictionrequest::validate_eviction_request_create(
                &targets[0].request
            )
            .0
            .is_empty(),
            "the request passes the server's create validation"
        );
    }

    #[test]
    fn request_names_are_deterministic_and_valid() {
        assert_eq!(request_name("web-0"), "drain-web-0");
        let long = format!("{}-x", "a".repeat(246));
        let n = request_name(&long);
        assert_eq!(n.len(), 252, "cut at 253, then the trailing '-' dropped");
        assert!(!n.ends_with('-'));
    }

    #[test]
    fn outcome_reads_the_conditions() {
        assert_eq!(outcome(None), Outcome::Pending);
        assert_eq!(
            outcome(Some(&request(json!([
                cond("TargetEvicted", "False", "AwaitingEviction"),
                cond("Failed", "False", "AwaitingEviction"),
            ])))),
            Outcome::Pending
        );
        assert_eq!(
            outcome(Some(&request(json!([
                cond("TargetEvicted", "True", "PodDeleted"),
                cond("Failed", "False", "Succeeded"),
            ])))),
            Outcome::Evicted
        );
        assert_eq!(
            outcome(Some(&request(json!([
                cond("TargetEvicted", "False", "EvictionFailed"),
                cond("Failed", "True", "NoFurtherResponder"),
            ])))),
            Outcome::Failed {
                reason: "NoFurtherResponder".into(),
                message: "NoFurtherResponder.".into()
            }
        );
    }

    #[test]
    fn progress_summarises_every_target() {
        let pods = vec![
            pod("a", Some("n1"), None),
            pod("bb", Some("n1"), None),
            pod("ccc", Some("n1"), None),
        ];
        let targets = plan("n1", &pods, DEFAULT_REQUESTER);
        let mut seen = BTreeMap::new();
        let p = Progress::of(&targets, &seen);
        assert_eq!(p.summary(), "0/3 evicted, 0 failed, 3 pending");
        assert_eq!(p.bar(6), "[......]");
        assert!(!p.done());
        let key = |n: &str| ("default".to_owned(), format!("drain-{n}"));
        seen.insert(
            key("a"),
            request(json!([cond("TargetEvicted", "True", "PodDeleted")])),
        );
        seen.insert(
            key("bb"),
            request(json!([cond("Failed", "True", "CanceledDueToNoRequesters")])),
        );
        let p = Progress::of(&targets, &seen);
        assert_eq!(p.summary(), "1/3 evicted, 1 failed, 1 pending");
        assert_eq!(p.bar(6), "[##xx..]");
        assert_eq!(p.pending(), ["default/ccc"]);
        assert_eq!(
            p.failed(),
            [(
                "default/bb".to_owned(),
                "CanceledDueToNoRequesters".to_owned(),
                "CanceledDueToNoRequesters.".to_owned()
            )]
        );
        seen.insert(
            key("ccc"),
            request(json!([cond("TargetEvicted", "True", "PodTerminal")])),
        );
        let p = Progress::of(&targets, &seen);
        assert!(p.done());
        assert_eq!(p.summary(), "2/3 evicted, 1 failed, 0 pending");
    }

    #[test]
    fn durations_parse_like_go() {
        assert_eq!(crate::cmd::parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(
            crate::cmd::parse_duration("10m"),
            Ok(Duration::from_secs(600))
        );
        assert_eq!(
            crate::cmd::parse_duration("1h30m"),
            Ok(Duration::from_secs(5400))
        );
        assert!(crate::cmd::parse_duration("soon").is_err());
        assert!(crate::cmd::parse_duration("-1s").is_err());
    }
}
