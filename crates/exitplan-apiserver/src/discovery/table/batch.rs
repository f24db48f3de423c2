//! batch/v1 CronJobs: upstream's `printCronJob` (Jobs are in `builtin.rs`).

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::CronJob;
use serde_json::json;

use super::cells::{self, NONE};
use super::core::{containers_column, images_column};
use super::{Column, Printer, Row, decode, since};
use crate::discovery::openapi::describe;

/// The CronJob printer: NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE
/// AGE, wide CONTAINERS IMAGES SELECTOR.
pub const CRON_JOB: Printer = Printer {
    columns: || {
        let spec = |p: &str| describe("io.k8s.api.batch.v1.CronJobSpec", p);
        let status = |p: &str| describe("io.k8s.api.batch.v1.CronJobStatus", p);
        vec![
            Column::name(),
            Column::new("Schedule", "string", spec("schedule")),
            Column::new("Timezone", "string", spec("timeZone")),
            Column::new("Suspend", "boolean", spec("suspend")),
            Column::new("Active", "integer", status("active")),
            Column::new("Last Schedule", "string", status("lastScheduleTime")),
            Column::age(),
            containers_column(),
            images_column(),
            Column::new(
                "Selector",
                "string",
                describe("io.k8s.api.batch.v1.JobSpec", "selector"),
            )
            .wide(),
        ]
    },
    row: |v, now| decode::<CronJob>(v).map(|c| row(&c, now)),
};

fn row(cj: &CronJob, now: Timestamp) -> Row {
    let spec = cj.spec.clone();
    let status = cj.status.clone().unwrap_or_default();
    let last = status
        .last_schedule_time
        .as_ref()
        .map_or_else(|| NONE.to_owned(), |t| since(Some(t.0), now));
    let job = spec.job_template.spec.clone().unwrap_or_default();
    let (names, images) = cells::containers(Some(&job.template));
    Row::from(vec![
        cells::name(&cj.metadata),
        json!(spec.schedule),
        json!(spec.time_zone.clone().unwrap_or_else(|| NONE.to_owned())),
        json!(cells::bool_ptr(spec.suspend)),
        json!(status.active.as_ref().map_or(0, Vec::len)),
        json!(last),
        cells::age(&cj.metadata, now),
        json!(names),
        json!(images),
        json!(cells::label_selector(job.selector.as_ref())),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn now() -> Timestamp {
        "2026-01-03T00:00:00Z".parse().expect("time")
    }

    fn cells_of(v: Value) -> Vec<Value> {
        (CRON_JOB.row)(&v, now()).expect("decodes").cells
    }

    /// Upstream `TestPrintCronJob`.
    #[test]
    fn cron_jobs() {
        let c = cells_of(json!({
            "metadata": {"name": "cronjob1", "creationTimestamp": "2026-01-02T23:00:00Z"},
            "spec": {"schedule": "0/5 * * * ?", "suspend": false,
                     "jobTemplate": {"spec": {"selector": {"matchLabels": {"a": "b"}},
                                              "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}},
            "status": {"lastScheduleTime": "2026-01-02T23:59:55Z", "active": [{"name": "j"}]}
        }));
        assert_eq!(
            c,
            vec![
                json!("cronjob1"),
                json!("0/5 * * * ?"),
                json!("<none>"),
                json!("False"),
                json!(1),
                json!("5s"),
                json!("60m"),
                json!("c"),
                json!("busybox"),
                json!("a=b")
            ]
        );
        let c = cells_of(json!({
            "metadata": {"name": "cronjob2"},
            "spec": {"schedule": "@daily", "timeZone": "Europe/Paris", "jobTemplate": {}}
        }));
        assert_eq!(
            (&c[2], &c[3], &c[4], &c[5], &c[9]),
            (
                &json!("Europe/Paris"),
                &json!("<unset>"),
                &json!(0),
                &json!("<none>"),
                &json!("<none>")
            )
        );
    }
}
