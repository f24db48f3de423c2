//! `exitplan explain job`: how the Job controller judges a Job's failed pods —
//! which podFailurePolicy rule matched each one, what is counted, and what the
//! Job's decision is — computed by the controller's own decision functions.

use std::path::PathBuf;
use std::process::ExitCode;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;

use exitplan_api::batch::default_job;
use exitplan_control::job::explain::{JobDecision, JobExplanation, explain};

use crate::input::{InputError, flatten_lists, read_all, read_one, type_meta};
use crate::kinds::{Doc, decode};
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
    /// The Job (YAML or JSON; `-` reads stdin), e.g. from `kubectl get job NAME -o yaml`.
    #[arg(short = 'f', long = "filename", value_name = "JOB.yaml")]
    file: PathBuf,
    /// The Job's pods: several YAML documents or a List, e.g. from
    /// `kubectl get pods -l job-name=NAME -o yaml`.
    #[arg(long, value_name = "PODS.yaml")]
    pods: PathBuf,
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
    let (src, value) = read_one(&args.file)?;
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
    let mut job: Job = decode(Doc { src, value })?;
    default_job(&mut job);
    let (pods_src, docs) = read_all(&args.pods)?;
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
    let explanation = explain(&job, &pods, args.now.unwrap_or(clock));
    match args.output {
        Format::Text => print!("{}", render(&explanation)),
        f => print_structured(&explanation, f),
    }
    Ok(ExitCode::SUCCESS)
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
    let (decision, reason, message) = match &e.decision {
        JobDecision::Running => ("Running", None, None),
        JobDecision::FailureTarget { reason, message } => {
            ("FailureTarget", Some(reason), Some(message))
        }
        JobDecision::Failed { reason, message } => ("Failed", Some(reason), Some(message)),
        JobDecision::SuccessCriteriaMet => ("SuccessCriteriaMet", None, None),
        JobDecision::Complete => ("Complete", None, None),
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
