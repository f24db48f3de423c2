//! The result of a run: the timeline, the per-pod summary, the per-Job
//! summary, the `show` objects; printed as text, JSON or YAML.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use crate::timeline::{Entry, EvictionSummary, JobSummary};

/// What a run produced.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The scenario's name.
    pub name: String,
    /// Its file.
    pub file: String,
    /// The virtual start (RFC 3339).
    pub start: String,
    /// The seed.
    pub seed: u64,
    /// Simulated nodes.
    pub nodes: usize,
    /// When the run ended (`t+36m`).
    pub end: String,
    /// Why: `until`, `quiet` (every step ran, nothing changed for 30m) or
    /// `limit` (24h after the last step).
    pub stopped: String,
    /// The timeline.
    pub timeline: Vec<Entry>,
    /// Per pod: its Eviction's responders and outcome.
    pub summary: Vec<EvictionSummary>,
    /// Per Job: the pods it created and lost, the failures its pod failure
    /// policy ignored, the backoffLimit spent, its outcome.
    pub jobs: Vec<JobSummary>,
    /// The `show` objects (UIDs, resourceVersions and managedFields removed).
    pub objects: Vec<Value>,
    /// Steps that failed (`file:line: steps[i]: reason`).
    pub errors: Vec<String>,
}

impl Report {
    /// The human-readable form.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# {} (start {}, seed {}, {} nodes)",
            self.name, self.start, self.seed, self.nodes
        );
        let at_w = self.timeline.iter().map(|e| e.at.len()).max().unwrap_or(0) + 2;
        let subj_w = self
            .timeline
            .iter()
            .map(|e| e.subject().len())
            .max()
            .unwrap_or(0)
            + 2;
        for e in &self.timeline {
            let _ = writeln!(out, "{:<at_w$}{:<subj_w$}{}", e.at, e.subject(), e.message);
        }
        let _ = writeln!(out, "# ended at {} ({})", self.end, self.stopped_text());
        if !self.summary.is_empty() {
            let _ = writeln!(out, "\nSummary");
            let name_w = self
                .summary
                .iter()
                .flat_map(|s| s.responders.iter().map(|r| r.name.len()))
                .max()
                .unwrap_or(0)
                + 2;
            for s in &self.summary {
                let mut head = format!("  pod {} ({}): {}", s.pod, s.eviction, s.outcome);
                if let Some(at) = &s.outcome_at {
                    let _ = write!(head, " at {at}");
                }
                let _ = writeln!(out, "{head}");
                for r in &s.responders {
                    let mut line = format!("    {:<name_w$}{:<13}", r.name, r.state);
                    match (&r.started, &r.ended, &r.ran) {
                        (Some(a), Some(b), Some(d)) => {
                            let _ = write!(line, "{a} .. {b} ({d})");
                        }
                        (Some(a), None, Some(d)) => {
                            let _ = write!(line, "{a} .. still active ({d})");
                        }
                        _ => line.push_str("did not run"),
                    }
                    let _ = writeln!(out, "{}", line.trim_end());
                }
            }
        }
        if !self.jobs.is_empty() {
            let _ = writeln!(out, "\nJobs");
            out.push_str(&self.jobs_table());
        }
        if !self.objects.is_empty() {
            let _ = writeln!(out, "\nObjects");
            for o in &self.objects {
                let _ = writeln!(out, "---");
                out.push_str(&serde_saphyr::to_string(o).unwrap_or_default());
            }
        }
        if !self.errors.is_empty() {
            let _ = writeln!(out, "\nFailed steps");
            for e in &self.errors {
                let _ = writeln!(out, "  {e}");
            }
        }
        out
    }

    /// The Jobs side by side: one row per Job, then each Job's pod failure
    /// policy.
    fn jobs_table(&self) -> String {
        let head = [
            "job",
            "outcome",
            "at",
            "took",
            "pods",
            "failed",
            "counted",
            "ignored",
            "backoffLimit",
            "succeeded",
        ];
        let dash = || "-".to_owned();
        let rows: Vec<[String; 10]> = self
            .jobs
            .iter()
            .map(|j| {
                [
                    j.job.clone(),
                    j.outcome.clone(),
                    j.finished_at.clone().unwrap_or_else(dash),
                    j.took.clone().unwrap_or_else(dash),
                    j.pods_created.to_string(),
                    j.pods_failed.to_string(),
                    j.failures_counted.to_string(),
                    j.failures_ignored.to_string(),
                    j.backoff_limit_spent.clone(),
                    j.succeeded.to_string(),
                ]
            })
            .collect();
        let widths: Vec<usize> = (0..head.len())
            .map(|i| {
                rows.iter()
                    .map(|r| r[i].len())
                    .chain([head[i].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        let mut line = |cells: Vec<&str>| {
            let mut l = String::from("  ");
            for (i, c) in cells.iter().enumerate() {
                let _ = write!(l, "{c:<w$}  ", w = widths[i]);
            }
            let _ = writeln!(out, "{}", l.trim_end());
        };
        line(head.to_vec());
        for r in &rows {
            line(r.iter().map(String::as_str).collect());
        }
        for j in &self.jobs {
            let _ = writeln!(
                out,
                "  {}: podFailurePolicy {}",
                j.job, j.pod_failure_policy
            );
        }
        out
    }

    fn stopped_text(&self) -> &'static str {
        match self.stopped.as_str() {
            "until" => "until",
            "limit" => "still changing 24h after the last step",
            _ => "every step ran and nothing changed for 30m",
        }
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// YAML.
    pub fn to_yaml(&self) -> String {
        serde_saphyr::to_string(self).unwrap_or_default()
    }
}
