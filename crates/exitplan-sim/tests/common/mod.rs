//! Helpers of the scenario tests: run a scenario, read its timeline.

#![allow(dead_code)]

use std::sync::Arc;

use exitplan_sim::engine;
use exitplan_sim::responder::BuiltinResponders;
use exitplan_sim::{Report, Scenario};

/// Parses `text` (as file `file`) and runs it with the built-in responders.
pub fn run(file: &str, text: &str) -> Report {
    let s = Scenario::parse(file, text).expect("valid scenario");
    engine::run_blocking(&s, Arc::new(BuiltinResponders)).expect("ran")
}

/// The entries for `subject` (`Kind ns/name`), as `(at, message)`.
pub fn lines(r: &Report, subject: &str) -> Vec<(String, String)> {
    r.timeline
        .iter()
        .filter(|e| e.subject() == subject)
        .map(|e| (e.at.clone(), e.message.clone()))
        .collect()
}

/// Asserts the timeline has `message` for `subject` at `at`.
pub fn has(r: &Report, at: &str, subject: &str, message: &str) {
    let found = lines(r, subject);
    assert!(
        found.iter().any(|(a, m)| a == at && m == message),
        "no `{at}  {subject}  {message}`; {subject} has {found:?}\n{}",
        r.to_text()
    );
}
