//! The README's live flows, run as written against a real `exitplan up`
//! (its own `--data`, `--listen` and `--kubeconfig` in a temporary
//! directory; `kubectl` from PATH): the first paragraph of "More to try"
//! (up, apply, a responder, a drain) and then the live Job example's `$`
//! commands. The commands are read from README.md itself, so the README and
//! this test cannot drift; `cargo run -q -p exitplan --` is this build's
//! binary, `exitplan up` is started once by the test, and `export
//! KUBECONFIG=…` points at its kubeconfig. Every command has a time bound.

mod cluster;

use std::process::{Child, Command, Output, Stdio};

use cluster::{Up, temp_dir};

const README: &str = include_str!("../../../README.md");
const CARGO_RUN: &str = "cargo run -q -p exitplan --";

/// The first paragraph of the first ```sh block after `heading`.
fn sh_paragraph(heading: &str) -> Vec<String> {
    let after = &README[README.find(heading).expect("heading")..];
    let block = &after[after.find("```sh\n").expect("sh block") + 6..];
    block
        .lines()
        .skip_while(|l| l.starts_with('#'))
        .take_while(|l| !l.trim().is_empty() && !l.starts_with("```"))
        .filter(|l| !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// The `$ ` commands of the first ```console block after `marker`.
fn console_commands(marker: &str) -> Vec<String> {
    let after = &README[README.find(marker).expect("marker")..];
    let block = &after[after.find("```console\n").expect("console block")..];
    let block = &block[..block[3..].find("```").expect("block end")];
    block
        .lines()
        .filter_map(|l| l.strip_prefix("$ "))
        .map(str::to_owned)
        .collect()
}

/// A command without its trailing `# comment`.
fn strip_comment(line: &str) -> &str {
    line.find("  #").map_or(line, |i| &line[..i]).trim()
}

struct Flow {
    up: Option<Up>,
    background: Vec<Child>,
    bin: String,
}

impl Flow {
    /// Runs one README line; returns its output (`None` for lines the
    /// test plays itself).
    fn run(&mut self, line: &str) -> Option<Output> {
        let line = strip_comment(line);
        let (line, background) = match line.strip_suffix('&') {
            Some(l) => (l.trim(), true),
            None => (line, false),
        };
        if line == format!("{CARGO_RUN} up") {
            assert!(self.up.is_none(), "up started twice");
            self.up = Some(Up::start_with(&temp_dir("readme"), &[]).0);
            return None;
        }
        if line.starts_with("export KUBECONFIG=") {
            return None;
        }
        let up = self.up.as_ref().expect("a command before `exitplan up`");
        let command = line.replace(CARGO_RUN, &self.bin);
        let mut cmd = Command::new("sh");
        cmd.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .env("KUBECONFIG", &up.kubeconfig)
            .stdin(Stdio::null());
        if background {
            let child = cmd
                .args(["-c", &format!("exec {command}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn");
            self.background.push(child);
            return None;
        }
        let out = cmd
            .args(["-c", &format!("timeout 120 {command}")])
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "`{line}` failed ({:?}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Some(out)
    }
}

impl Drop for Flow {
    fn drop(&mut self) {
        for child in &mut self.background {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(unix)]
#[test]
fn readme_live_flows_run_top_to_bottom() {
    let mut flow = Flow {
        up: None,
        background: Vec::new(),
        bin: env!("CARGO_BIN_EXE_exitplan").to_owned(),
    };
    let more = sh_paragraph("### More to try");
    assert!(more.iter().any(|l| l.contains("-- up")), "{more:?}");
    for line in &more {
        flow.run(line);
    }
    // The live Job example: `up` is already running (its `&` line starts
    // nothing new); the drain must evict the Job's pod on node-1.
    let job = console_commands("Live, on the embedded cluster");
    let mut drained = None;
    for line in &job {
        if line.starts_with(&format!("{CARGO_RUN} up")) {
            continue;
        }
        if line.starts_with("kubectl apply") {
            let out = flow.run(line);
            // Let both pods be scheduled and start before the drain.
            wait_running(&flow, "nightly", 2);
            drop(out);
            continue;
        }
        let out = flow.run(line);
        if line.contains("-- drain node-1") {
            drained = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        }
    }
    let drained = drained.expect("the Job example drains node-1");
    assert!(
        drained.contains("created for pod default/nightly-"),
        "the drain evicts the Job's pod on node-1:\n{drained}"
    );
    if let Some(up) = flow.up.take() {
        up.stop();
    }
}

/// Waits until `n` pods named `prefix-*` are Running, one on node-1.
fn wait_running(flow: &Flow, prefix: &str, n: usize) {
    let up = flow.up.as_ref().expect("up");
    cluster::eventually(
        "the Job's pods Running, one on node-1",
        std::time::Duration::from_secs(60),
        || {
            let pods = up.get("/api/v1/namespaces/default/pods")?;
            let running: Vec<_> = pods["items"]
                .as_array()?
                .iter()
                .filter(|p| {
                    p["metadata"]["name"]
                        .as_str()
                        .is_some_and(|s| s.starts_with(prefix))
                        && p["status"]["phase"] == "Running"
                })
                .cloned()
                .collect();
            (running.len() == n && running.iter().any(|p| p["spec"]["nodeName"] == "node-1"))
                .then_some(())
        },
    );
}
