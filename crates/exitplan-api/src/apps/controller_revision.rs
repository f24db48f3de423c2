//! apps/v1 ControllerRevision: validation (`ValidateControllerRevision`,
//! `ValidateControllerRevisionUpdate`) and the registry strategy
//! (`pkg/registry/apps/controllerrevision`): `data` is required and
//! immutable, `revision` non-negative. No status, no generation.

use k8s_openapi::api::apps::v1::ControllerRevision;

use crate::absent::Absent;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, FIELD_IMMUTABLE, NameRule};
use crate::nonnegative::validate_nonnegative_field;
use crate::render;
use crate::strategy::{Context, Strategy};

fn data_absent(absent: &Absent) -> bool {
    absent.contains(&Path::new("data"))
}

/// `ValidateControllerRevision`: metadata (name a DNS subdomain), `data`
/// present (`absent` says whether the submitted object lacked it),
/// `revision` ≥ 0.
pub fn validate_controller_revision(cr: &ControllerRevision, absent: &Absent) -> ErrorList {
    let mut errs = meta::validate_object_meta(&cr.metadata, true, NameRule::Subdomain);
    if data_absent(absent) {
        errs.push(Error::required(&Path::new("data"), "data is mandatory"));
    }
    errs.append(validate_nonnegative_field(
        cr.revision.unwrap_or(0),
        &Path::new("revision"),
    ));
    errs
}

/// `ValidateControllerRevisionUpdate`: metadata update rules, the revision
/// again, and `data` unchanged.
pub fn validate_controller_revision_update(
    new: &ControllerRevision,
    old: &ControllerRevision,
    absent: &Absent,
) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_controller_revision(new, absent));
    if data_absent(absent) || new.data != old.data {
        let value = if data_absent(absent) {
            BadValue::Null
        } else {
            BadValue::Json(render::json(&new.data))
        };
        errs.push(
            Error::invalid(&Path::new("data"), value, FIELD_IMMUTABLE).with_origin("immutable"),
        );
    }
    errs
}

/// Create and update rules of apps/v1 ControllerRevisions.
#[derive(Clone, Copy, Debug, Default)]
pub struct ControllerRevisionStrategy;

impl Strategy for ControllerRevisionStrategy {
    type Object = ControllerRevision;

    fn validate_create(obj: &ControllerRevision, ctx: &Context<'_>) -> ErrorList {
        before_create(validate_controller_revision(obj, ctx.absent), &obj.metadata)
    }

    fn validate_update(
        new: &ControllerRevision,
        old: &ControllerRevision,
        ctx: &Context<'_>,
    ) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_controller_revision_update(new, old, ctx.absent));
        errs
    }

    fn validate_status_update(
        new: &ControllerRevision,
        old: &ControllerRevision,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_common_fields(&new.metadata, &old.metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::find_absent;
    use crate::strategy::admit_update;
    use crate::strategy::testing::created;
    use serde_json::{Value, json};

    fn valid() -> Value {
        json!({"metadata": {"name": "validname", "namespace": "validns"}, "data": {"kind": "DaemonSet"}, "revision": 0})
    }

    fn create(v: &Value) -> Result<ControllerRevision, ErrorList> {
        created::<ControllerRevisionStrategy>(v)
    }

    // Upstream TestValidateControllerRevision.
    #[test]
    fn validate_cases() {
        assert!(create(&valid()).is_ok());
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "invalid name",
                json!({"metadata": {"name": "NoUppercaseOrSpecialCharsLike=Equals", "namespace": "validns"}, "data": {}, "revision": 0}),
                "metadata.name: Invalid value: \"NoUppercaseOrSpecialCharsLike=Equals\": a lowercase RFC 1123 subdomain…",
            ),
            (
                "missing namespace",
                json!({"metadata": {"name": "validname"}, "data": {}, "revision": 0}),
                "metadata.namespace: Required value",
            ),
            (
                "missing data",
                json!({"metadata": {"name": "validname", "namespace": "validns"}, "revision": 0}),
                "data: Required value: data is mandatory",
            ),
            (
                "null data",
                json!({"metadata": {"name": "validname", "namespace": "validns"}, "data": null}),
                "data: Required value: data is mandatory",
            ),
            (
                "negative revision",
                json!({"metadata": {"name": "validname", "namespace": "validns"}, "data": {}, "revision": -1}),
                "revision: Invalid value: -1: must be greater than or equal to 0",
            ),
        ];
        for (name, v, want) in cases {
            let got = create(&v).expect_err(name).to_string();
            match want.strip_suffix('…') {
                Some(prefix) => assert!(got.starts_with(prefix), "{name}: {got}"),
                None => assert_eq!(got, want, "{name}"),
            }
        }
    }

    // Upstream TestValidateControllerRevisionUpdate.
    #[test]
    fn update_cases() {
        let old = create(&valid()).expect("valid");
        let run = |v: Value| {
            let absent = find_absent(&v);
            let ctx = Context {
                now: jiff::Timestamp::UNIX_EPOCH,
                absent: &absent,
            };
            let mut cr: ControllerRevision = serde_json::from_value(v).expect("cr");
            admit_update::<ControllerRevisionStrategy>(&mut cr, &old, &ctx).map_err(|e| e.errors)
        };
        let mut same = serde_json::to_value(&old).expect("json");
        same["metadata"]["labels"] = json!({"a": "b"});
        assert!(run(same.clone()).is_ok());
        let mut changed = same.clone();
        changed["data"] = json!({"kind": "StatefulSet"});
        assert_eq!(
            run(changed).expect_err("data").to_string(),
            r#"data: Invalid value: {"kind":"StatefulSet"}: field is immutable"#
        );
        let mut negative = same;
        negative["revision"] = json!(-1);
        assert_eq!(
            run(negative).expect_err("revision").to_string(),
            "revision: Invalid value: -1: must be greater than or equal to 0"
        );
    }
}
