//! Running scenarios: step execution, the timeline, determinism, the end rule.

use std::sync::Arc;

use exitplan_sim::Scenario;
use exitplan_sim::engine;
use exitplan_sim::responder::BuiltinResponders;

fn run(text: &str) -> exitplan_sim::Report {
    let s = Scenario::parse("t.yaml", text).expect("valid scenario");
    engine::run_blocking(&s, Arc::new(BuiltinResponders)).expect("ran")
}

#[test]
fn demo_runs() {
    let r = run(exitplan_sim::DEMO);
    print!("{}", r.to_text());
}
