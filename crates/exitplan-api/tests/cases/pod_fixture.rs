//! Pods for the update, status and subresource tables: upstream's
//! `podtest.MakePod` (namespace `ns`, one container `ctr` with image
//! `image`) as submitted JSON, stored through the Pod strategy's defaults
//! and `PrepareForCreate`, and the expected-error comparison of those tables.

use exitplan_api::absent::Absent;
use exitplan_api::core::pod::PodStrategy;
use exitplan_api::field::{ErrorList, ErrorType};
use exitplan_api::strategy::{Context, Strategy, admit_status_update, admit_update};
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use crate::support::now;

/// One expected error: type, field, and the body (`ErrorBody`). A body
/// ending in `…` is a prefix (the spec diff after it is go-cmp's).
pub type Want = (ErrorType, &'static str, &'static str);

/// Compares every error, in order.
pub fn check(case: &str, got: &ErrorList, want: &[Want]) {
    let got: Vec<(ErrorType, String, String)> = got
        .iter()
        .map(|e| (e.error_type, e.field.clone(), e.body()))
        .collect();
    let matches = got.len() == want.len()
        && got.iter().zip(want).all(|((gt, gf, gb), (wt, wf, wb))| {
            gt == wt
                && gf == wf
                && match wb.strip_suffix('…') {
                    Some(prefix) => gb.starts_with(prefix),
                    None => gb == wb,
                }
        });
    assert!(matches, "{case}:\n got: {got:#?}\nwant: {want:#?}");
}

/// Merges the members of `patch` into `into` (one level).
pub fn merge(into: &mut Value, patch: Value) {
    if let (Some(a), Value::Object(b)) = (into.as_object_mut(), patch) {
        for (k, v) in b {
            a.insert(k, v);
        }
    }
}

/// The submitted pod `123` with `spec` merged into `MakePod`'s spec and
/// `meta` into its metadata.
pub fn submitted(meta: Value, spec: Value) -> Pod {
    let mut base = json!({
        "metadata": {"name": "123", "namespace": "ns"},
        "spec": {"containers": [{"name": "ctr", "image": "image"}]}
    });
    merge(&mut base["metadata"], meta);
    merge(&mut base["spec"], spec);
    serde_json::from_value(base).expect("pod fixture")
}

/// The pod as stored after a create: defaults and `PrepareForCreate`
/// (status `Pending` with its QoS class), resourceVersion 1. Not validated,
/// so a table may start from a pod only an older server would accept.
pub fn stored(meta: Value, spec: Value) -> Pod {
    let mut p = submitted(meta, spec);
    <PodStrategy as Strategy>::default(&mut p);
    PodStrategy::prepare_for_create(&mut p);
    p.metadata.resource_version = Some("1".into());
    p
}

/// `old` with `meta` and `spec` merged in (as a client edits what it read).
pub fn edited(old: &Pod, meta: Value, spec: Value) -> Pod {
    let mut v = serde_json::to_value(old).expect("pod");
    merge(&mut v["metadata"], meta);
    merge(&mut v["spec"], spec);
    serde_json::from_value(v).expect("pod")
}

fn ctx_errors(
    f: impl FnOnce(&Context<'_>) -> Result<(), exitplan_api::status::InvalidError>,
) -> ErrorList {
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    match f(&ctx) {
        Ok(()) => ErrorList::new(),
        Err(e) => e.errors,
    }
}

/// The errors of an update of the main resource through strategy `S`.
pub fn update_errors<S: Strategy<Object = Pod>>(new: &mut Pod, old: &Pod) -> ErrorList {
    ctx_errors(|ctx| admit_update::<S>(new, old, ctx))
}

/// The errors of a `/status` update.
pub fn status_errors(new: &mut Pod, old: &Pod) -> ErrorList {
    ctx_errors(|ctx| admit_status_update::<PodStrategy>(new, old, ctx))
}
