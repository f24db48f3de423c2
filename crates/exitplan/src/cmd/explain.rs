//! `exitplan explain job`: how the Job controller judges a Job's failed pods —
//! which podFailurePolicy rule matched each one, what is counted, which
//! successPolicy rule is met (Indexed Jobs), and what the Job's decision is —
//! computed by the controller's own decision functions.
//!
//! Offline from files (`-f JOB --pods PODS`), or live (`explain job NAME`):
//! the Job is read from the server and its pods listed by the Job's selector
//! (`spec.selector.matchLabels`, else `batch.kubernetes.io/controller-uid=<uid>`);
//! both print the same output.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use kube::api::{Api, ListParams};
use std::process::ExitCode;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;

use exitplan_api::batch::constants::CONTROLLER_UID_LABEL;
use exitplan_api::batch::default_job;
use exitplan_control::job::explain::{
    JobDecision, JobExplanation, SuccessPolicyExplanation, explain,
};

use crate::input::{InputError, flatten_lists, read_all, read_one, type_meta};
use crate::kinds::{Doc, Kind, Operation, admit, decode};
use crate::output::{Format, print_structured};
use crate::table::Table;

/// What to explain.
#[derive(Debug, clap::Subcommand)]
pub enum ExplainCommand {
    /// Explain a Job's failure handling from its manifest and its pods.
    Job(ExplainJobArgs),
}

/// Arguments of `exitplan explain job`.
#[derive(Debug, clap::Args)]
pub struct ExplainJobArgs {
    /// The Job to read from the server (instead of `-f`/`--pods`).
    #[arg(value_name = "NAME", conflicts_with_all = ["file", "pods"], required_unless_present = "file")]
    name: Option<String>,
    /// The Job's namespace on the server. Default: the kubeconfig's namespace.
    #[arg(short = 'n', long, value_name = "NS", requires = "name")]
    namespace: Option<String>,
    /// Kubeconfig to use. Default: $KUBECONFIG, ~/.kube/config, or in-cluster.
    #[arg(long, value_name = "PATH", requires = "name")]
    kubeconfig: Option<PathBuf>,
    /// The Job (YAML or JSON; `-` reads stdin), e.g. from `kubectl get job NAME -o yaml`.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "JOB.yaml",
        requires = "pods"
    )]
    file: Option<PathBuf>,
    /// The Job's pods: several YAML documents or a List, e.g. from
    /// `kubectl get pods -l job-name=NAME -o yaml`.
    #[arg(long, value_name = "PODS.yaml", requires = "file")]
    pods: Option<PathBuf>,
    /// The controller's clock (RFC 3339); defaults to the current time.
    #[arg(long, value_name = "RFC3339")]
    now: Option<Timestamp>,
    /// Output format: text (kubectl-like tables), json or yaml.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    output: Format,
}

/// Runs the command; `clock` is the process's one reading of the current time.
pub fn run(cmd: ExplainCommand, clock: Timestamp) -> Result<ExitCode, InputError> {
    let ExplainCommand::Job(args) = cmd;
    let now = args.now.unwrap_or(clock);
    let (file, pods_file) = match (&args.name, &args.file, &args.pods) {
        (Some(name), _, _) => {
            return Ok(
                match fetch(name, args.namespace.as_deref(), args.kubeconfig.as_deref()) {
                    Ok((mut job, pods)) => {
                        default_job(&mut job);
                        print_explanation(&explain(&job, &pods, now), args.output);
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        eprintln!("error: {e:#}");
                        ExitCode::FAILURE
                    }
                },
            );
        }
        (None, Some(file), Some(pods)) => (file, pods),
        // clap requires NAME or both files.
        _ => {
            return Err(InputError::Mismatch(
                "give NAME or -f JOB --pods PODS".into(),
            ));
        }
    };
    let (src, value) = read_one(file)?;
    match type_meta(&value) {
        Some(("batch/v1", "Job")) => {}
        Some((api_version, kind)) => {
            return Err(InputError::Unsupported(
                src,
                api_version.to_owned(),
                kind.to_owned(),
            ));
        }
        None => return Err(InputError::NotAnObject(src)),
    }
    // A Job the API server would reject is never explained. One exported
    // from a server (it has a resourceVersion) is checked as an update of
    // itself: as a create it would get a new UID its selector no longer
    // matches. The Job explained is the input, defaulted as before.
    let (op, old) = if value.pointer("/metadata/resourceVersion").is_some() {
        let old = Doc {
            src: src.clone(),
            value: value.clone(),
        };
        (Operation::Update, Some(old))
    } else {
        (Operation::Create, None)
    };
    let new = Doc {
        src: src.clone(),
        value: value.clone(),
    };
    if let Err(invalid) = admit(Kind::Job, op, new, old, now)? {
        eprintln!("error: {src}: {}", invalid.message());
        return Ok(ExitCode::FAILURE);
    }
    let mut job: Job = decode(Doc { src, value })?;
    default_job(&mut job);
    let (pods_src, docs) = read_all(pods_file)?;
    let mut pods = Vec::new();
    for doc in flatten_lists(docs) {
        match type_meta(&doc) {
            Some(("v1", "Pod")) => pods.push(decode::<Pod>(Doc {
                src: pods_src.clone(),
                value: doc,
            })?),
            Some((api_version, kind)) => {
                return Err(InputError::Unsupported(
                    pods_src,
                    api_version.to_owned(),
                    kind.to_owned(),
                ));
            }
            None => return Err(InputError::NotAnObject(pods_src)),
        }
    }
    print_explanation(&explain(&job, &pods, now), args.output);
    Ok(ExitCode::SUCCESS)
}

fn print_explanation(explanation: &JobExplanation, output: Format) {
    match output {
        Format::Text => print!("{}", render(explanation)),
        f => print_structured(explanation, f),
    }
}

/// The label selector of `job`'s pods: its `spec.selector.matchLabels`
/// (what the API server defaults), else its controller-uid label.
pub fn pod_selector(job: &Job) -> Option<String> {
    let labels = job
        .spec
        .as_ref()
        .and_then(|s| s.selector.as_ref())
        .and_then(|s| s.match_labels.as_ref())
        .filter(|l| !l.is_empty());
    match labels {
        Some(l) => Some(
            l.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(","),
        ),
        None => job
            .metadata
            .uid
            .as_ref()
            .map(|uid| format!("{CONTROLLER_UID_LABEL}={uid}")),
    }
}

/// Reads Job `name` and its pods from the server.
fn fetch(
    name: &str,
    namespace: Option<&str>,
    kubeconfig: Option<&Path>,
) -> anyhow::Result<(Job, Vec<Pod>)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let client = crate::connect::client(kubeconfig).await?;
        let ns = namespace.map_or_else(|| client.default_namespace().to_owned(), str::to_owned);
        let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
        let job = jobs
            .get(name)
            .await
            .map_err(crate::connect::server_error)
            .with_context(|| format!("getting job {ns}/{name}"))?;
        let selector = pod_selector(&job)
            .with_context(|| format!("job {ns}/{name} has neither a selector nor a UID"))?;
        let pods: Api<Pod> = Api::namespaced(client, &ns);
        let pods = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(crate::connect::server_error)
            .with_context(|| format!("listing the pods of job {ns}/{name} ({selector})"))?
            .items;
        Ok((job, pods))
    })
}

fn dash(s: Option<String>) -> String {
    s.filter(|s| !s.is_empty())
        .unwrap_or_else(|| "-".to_owned())
}

/// The text form: failed pods, counters, decision.
pub fn render(e: &JobExplanation) -> String {
    let mut out = format!("Job {}\n\n", e.job);
    if e.failed_pods.is_empty() {
        out.push_str("No failed pods.\n");
    } else {
        let mut pods = Table::new(&[
            "POD", "PHASE", "INDEX", "RULE", "ACTION", "COUNTED", "VERDICT",
        ]);
        for p in &e.failed_pods {
            pods.row(vec![
                p.name.clone(),
                p.phase.clone(),
                dash(p.index.map(|i| i.to_string())),
                dash(p.rule_index.map(|i| i.to_string())),
                dash(p.action.as_ref().map(ToString::to_string)),
                if p.counted { "yes" } else { "no" }.to_owned(),
                p.verdict.clone(),
            ]);
        }
        out.push_str(&pods.render());
    }
    out.push('\n');
    let mut counters = Table::new(&["FAILED", "SUCCEEDED", "IGNORED", "FAILED-INDEXES"]);
    counters.row(vec![
        e.counters.failed.to_string(),
        e.counters.succeeded.to_string(),
        e.counters.ignored.to_string(),
        dash(e.failed_indexes.clone()),
    ]);
    out.push_str(&counters.render());
    out.push('\n');
    if let Some(sp) = &e.success_policy {
        out.push_str(&render_success_policy(sp));
        out.push('\n');
    }
    let (decision, reason, message) = match &e.decision {
        JobDecision::Running => ("Running", None, None),
        JobDecision::FailureTarget { reason, message } => {
            ("FailureTarget", Some(reason), Some(message))
        }
        JobDecision::Failed { reason, message } => ("Failed", Some(reason), Some(message)),
        JobDecision::SuccessCriteriaMet { reason, message } => {
            ("SuccessCriteriaMet", Some(reason), Some(message))
        }
        JobDecision::Complete { reason, message } => ("Complete", Some(reason), Some(message)),
        JobDecision::Skipped { reason } => ("Skipped", Some(reason), None),
    };
    let mut d = Table::new(&["DECISION", "REASON", "MESSAGE"]);
    d.row(vec![
        decision.to_owned(),
        dash(reason.cloned()),
        dash(message.cloned()),
    ]);
    out.push_str(&d.render());
    out
}

/// The success-policy table: one row per rule, how many of the indexes it
/// needs have succeeded, and whether it is met.
fn render_success_policy(sp: &SuccessPolicyExplanation) -> String {
    let mut t = Table::new(&[
        "SUCCESS RULE",
        "SUCCEEDED-INDEXES",
        "SUCCEEDED-COUNT",
        "PROGRESS",
        "MET",
    ]);
    for r in &sp.rules {
        let met = if let Some(why) = &r.skipped {
            format!("never ({why})")
        } else if sp.matched_rule == Some(r.rule_index) {
            "yes — matched".to_owned()
        } else if r.matched {
            "yes (an earlier rule matched first)".to_owned()
        } else {
            "no".to_owned()
        };
        t.row(vec![
            r.rule_index.to_string(),
            dash(r.succeeded_indexes.clone()),
            dash(r.succeeded_count.map(|c| c.to_string())),
            format!("{}/{}", r.succeeded, r.needed),
            met,
        ]);
    }
    format!(
        "Succeeded indexes: {}\n{}",
        dash(Some(sp.succeeded_indexes.clone())),
        t.render()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use exitplan_control::job::success_policy::RuleEvaluation;

    fn rule(i: usize, ix: Option<&str>, count: Option<i32>, got: i64, need: i64) -> RuleEvaluation {
        RuleEvaluation {
            rule_index: i,
            succeeded_indexes: ix.map(str::to_owned),
            succeeded_count: count,
            needed: need,
            succeeded: got,
            matched: got >= need,
            skipped: None,
        }
    }

    #[test]
    fn renders_the_success_policy_and_the_decision_reason() {
        let e = JobExplanation {
            job: "default/shards".into(),
            failed_pods: vec![],
            counters: Default::default(),
            failed_indexes: None,
            success_policy: Some(SuccessPolicyExplanation {
                succeeded_indexes: "0,2".into(),
                rules: vec![
                    rule(0, Some("0-3"), None, 2, 4),
                    rule(1, None, Some(2), 2, 2),
                ],
                matched_rule: Some(1),
            }),
            decision: JobDecision::SuccessCriteriaMet {
                reason: "SuccessPolicy".into(),
                message: "Matched rules at index 1".into(),
            },
        };
        let out = render(&e);
        let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
        assert!(lines.contains(&"Succeeded indexes: 0,2"), "{out}");
        let header = lines
            .iter()
            .position(|l| l.starts_with("SUCCESS RULE"))
            .unwrap_or(lines.len());
        let row = |prefix: &str| {
            lines[header..]
                .iter()
                .find(|l| l.starts_with(prefix))
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        };
        assert_eq!(row("0 "), Some("0 0-3 - 2/4 no".to_owned()), "{out}");
        assert_eq!(
            row("1 "),
            Some("1 - 2 2/2 yes — matched".to_owned()),
            "{out}"
        );
        assert_eq!(
            row("SuccessCriteriaMet"),
            Some("SuccessCriteriaMet SuccessPolicy Matched rules at index 1".to_owned()),
            "{out}"
        );
    }
}
