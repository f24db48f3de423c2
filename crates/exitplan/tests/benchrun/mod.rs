//! Runs an `exitplan bench` subcommand for the bench tests and reads its
//! machine-readable `result: key=value …` line.

use std::collections::HashMap;
use std::process::Command;

/// Runs `exitplan bench <bench> <args…>`, asserting it exits 0: its stdout
/// and the `result:` line's fields.
pub fn run(bench: &str, args: &[&str]) -> (String, HashMap<String, i64>) {
    let out = Command::new(env!("CARGO_BIN_EXE_exitplan"))
        .args(["bench", bench])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run exitplan bench {bench}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr (last lines, newest first):\n{}",
        out.status,
        tail.join("\n")
    );
    let fields = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("result: "))
        .unwrap_or_else(|| panic!("no result line in:\n{stdout}"))
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.parse().expect("a number")))
        .collect();
    (stdout, fields)
}
