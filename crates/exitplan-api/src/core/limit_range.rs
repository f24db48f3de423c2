//! core/v1 LimitRange: defaulting (`SetDefaults_LimitRangeItem`), validation
//! (`ValidateLimitRange` of `pkg/apis/core/validation`) and the registry
//! strategy (`pkg/registry/core/limitrange`): per limit type, resource names
//! valid for the type and `min ≤ defaultRequest ≤ default ≤ max`, with
//! `maxLimitRequestRatio ≥ 1` and within max/min.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{LimitRange, LimitRangeItem};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;

use super::persistent_volume::quantity;
use super::validation::quantity::Quantity;
use super::validation::resources::{
    is_overcommit_allowed, validate_container_resource_name, validate_resource_name,
};
use crate::field::{Error, ErrorList, Path};
use crate::formats;
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, NameRule};
use crate::strategy::{Context, Strategy};

/// The limit types without a domain prefix (`IsStandardLimitRangeType`).
pub const STANDARD_LIMIT_TYPES: &[&str] = &["Pod", "Container", "PersistentVolumeClaim"];

type List = BTreeMap<String, WireQuantity>;

/// `SetDefaults_LimitRangeItem`: for `Container` items, `default` from
/// `max`, then `defaultRequest` from `default` and from `min`.
pub fn default_limit_range_item(item: &mut LimitRangeItem) {
    if item.type_ != "Container" {
        return;
    }
    let mut default = item.default.clone().unwrap_or_default();
    for (k, v) in item.max.iter().flatten() {
        default.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let mut request = item.default_request.clone().unwrap_or_default();
    for (k, v) in default.iter().chain(item.min.iter().flatten()) {
        request.entry(k.clone()).or_insert_with(|| v.clone());
    }
    // Empty maps are omitted on the wire (`omitempty`).
    item.default = (!default.is_empty())
        .then_some(default)
        .or(item.default.take());
    item.default_request = (!request.is_empty())
        .then_some(request)
        .or(item.default_request.take());
}

/// `validateLimitRangeTypeName`: a qualified name; unprefixed names standard.
fn validate_type_name(value: &str, path: &Path) -> ErrorList {
    let errs = formats::validate_qualified_name(path, value);
    if !errs.is_empty() {
        return errs;
    }
    if !value.contains('/') && !STANDARD_LIMIT_TYPES.contains(&value) {
        return ErrorList(vec![Error::invalid(
            path,
            value,
            "must be a standard limit type or fully qualified",
        )]);
    }
    errs
}

/// `validateLimitRangeResourceName`: container rules for `Pod` and
/// `Container` items, the general rules otherwise.
fn validate_resource(limit_type: &str, name: &str, path: &Path) -> ErrorList {
    match limit_type {
        "Pod" | "Container" => validate_container_resource_name(name, path),
        _ => validate_resource_name(name, path),
    }
}

/// Go's `%f` of a float64.
fn go_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else {
        format!("{f:.6}")
    }
}

fn collect(
    list: Option<&List>,
    limit_type: &str,
    path: &Path,
    keys: &mut BTreeSet<String>,
    errs: &mut ErrorList,
) -> BTreeMap<String, Quantity> {
    let mut out = BTreeMap::new();
    for (k, v) in list.into_iter().flatten() {
        errs.append(validate_resource(limit_type, k, &path.key(k)));
        keys.insert(k.clone());
        out.insert(k.clone(), quantity(v));
    }
    out
}

/// The rules of one `spec.limits[i]` item (after its type was checked).
fn validate_item(item: &LimitRangeItem, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let t = item.type_.as_str();
    let mut keys = BTreeSet::new();
    let max = collect(
        item.max.as_ref(),
        t,
        &path.child("max"),
        &mut keys,
        &mut errs,
    );
    let min = collect(
        item.min.as_ref(),
        t,
        &path.child("min"),
        &mut keys,
        &mut errs,
    );
    let (mut defaults, mut requests) = (BTreeMap::new(), BTreeMap::new());
    if t == "Pod" {
        if item.default.as_ref().is_some_and(|d| !d.is_empty()) {
            errs.push(Error::forbidden(
                &path.child("default"),
                "may not be specified when `type` is 'Pod'",
            ));
        }
        if item.default_request.as_ref().is_some_and(|d| !d.is_empty()) {
            errs.push(Error::forbidden(
                &path.child("defaultRequest"),
                "may not be specified when `type` is 'Pod'",
            ));
        }
    } else {
        defaults = collect(
            item.default.as_ref(),
            t,
            &path.child("default"),
            &mut keys,
            &mut errs,
        );
        requests = collect(
            item.default_request.as_ref(),
            t,
            &path.child("defaultRequest"),
            &mut keys,
            &mut errs,
        );
    }
    if t == "PersistentVolumeClaim" {
        let has = |l: Option<&List>| l.is_some_and(|l| l.contains_key("storage"));
        if !has(item.min.as_ref()) && !has(item.max.as_ref()) {
            errs.push(Error::required(
                &path.child("limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
    }
    let ratios = collect(
        item.max_limit_request_ratio.as_ref(),
        t,
        &path.child("maxLimitRequestRatio"),
        &mut keys,
        &mut errs,
    );
    let one = Quantity::parse("1").unwrap_or_else(|_| Quantity::zero());
    for k in &keys {
        let (mn, mx, df, dr, ratio) = (
            min.get(k),
            max.get(k),
            defaults.get(k),
            requests.get(k),
            ratios.get(k),
        );
        let req_path = path.child("defaultRequest").key(k);
        let def_path = path.child("default").key(k);
        let ratio_path = path.child("maxLimitRequestRatio").key(k);
        if let (Some(mn), Some(mx)) = (mn, mx)
            && mn > mx
        {
            errs.push(Error::invalid(
                &path.child("min").key(k),
                mn.to_string(),
                format!("min value {mn} is greater than max value {mx}"),
            ));
        }
        if let (Some(dr), Some(mn)) = (dr, mn)
            && mn > dr
        {
            errs.push(Error::invalid(
                &req_path,
                dr.to_string(),
                format!("min value {mn} is greater than default request value {dr}"),
            ));
        }
        if let (Some(dr), Some(mx)) = (dr, mx)
            && dr > mx
        {
            errs.push(Error::invalid(
                &req_path,
                dr.to_string(),
                format!("default request value {dr} is greater than max value {mx}"),
            ));
        }
        if let (Some(dr), Some(df)) = (dr, df)
            && dr > df
        {
            errs.push(Error::invalid(
                &req_path,
                dr.to_string(),
                format!("default request value {dr} is greater than default limit value {df}"),
            ));
        }
        if let (Some(df), Some(mn)) = (df, mn)
            && mn > df
        {
            errs.push(Error::invalid(
                &def_path,
                mn.to_string(),
                format!("min value {mn} is greater than default value {df}"),
            ));
        }
        if let (Some(df), Some(mx)) = (df, mx)
            && df > mx
        {
            errs.push(Error::invalid(
                &def_path,
                mx.to_string(),
                format!("default value {df} is greater than max value {mx}"),
            ));
        }
        if let Some(r) = ratio
            && *r < one
        {
            errs.push(Error::invalid(
                &ratio_path,
                r.to_string(),
                format!("ratio {r} is less than 1"),
            ));
        }
        if let (Some(r), Some(mn), Some(mx)) = (ratio, mn, mx) {
            let limit = mx.as_f64() / mn.as_f64();
            if r.as_f64() > limit {
                errs.push(Error::invalid(
                    &ratio_path,
                    r.to_string(),
                    format!("ratio {r} is greater than max/min = {}", go_float(limit)),
                ));
            }
        }
        if let (Some(df), Some(dr)) = (df, dr)
            && !is_overcommit_allowed(k)
            && df != dr
        {
            errs.push(Error::invalid(
                &req_path,
                dr.to_string(),
                format!("default value {df} must equal to defaultRequest value {dr} in {k}"),
            ));
        }
    }
    errs
}

/// `ValidateLimitRange`: metadata (a DNS subdomain), then each item: its
/// type (unique), resource names, and the ordering rules.
pub fn validate_limit_range(lr: &LimitRange) -> ErrorList {
    let mut errs = meta::validate_object_meta(&lr.metadata, true, NameRule::Subdomain);
    let path = Path::new("spec").child("limits");
    let mut types = BTreeSet::new();
    for (i, item) in lr.spec.iter().flat_map(|s| s.limits.iter()).enumerate() {
        let p = path.index(i);
        errs.append(validate_type_name(&item.type_, &p.child("type")));
        if !types.insert(item.type_.as_str()) {
            errs.push(Error::duplicate(&p.child("type"), item.type_.as_str()));
        }
        errs.append(validate_item(item, &p));
    }
    errs
}

impl crate::quantities::Quantities for LimitRange {
    fn visit_quantities<'a>(&'a self, f: &mut dyn FnMut(&'a WireQuantity)) {
        for item in self.spec.iter().flat_map(|s| s.limits.iter()) {
            for list in [
                &item.default,
                &item.default_request,
                &item.max,
                &item.max_limit_request_ratio,
                &item.min,
            ] {
                for q in list.iter().flat_map(BTreeMap::values) {
                    f(q);
                }
            }
        }
    }
}

/// Create and update rules of core/v1 LimitRanges (no status).
#[derive(Clone, Copy, Debug, Default)]
pub struct LimitRangeStrategy;

impl Strategy for LimitRangeStrategy {
    type Object = LimitRange;

    /// `SetDefaults_LimitRangeItem` on every item.
    fn default(obj: &mut LimitRange) {
        for item in obj.spec.iter_mut().flat_map(|s| s.limits.iter_mut()) {
            default_limit_range_item(item);
        }
    }

    /// A LimitRange without a name is named after its UID, as upstream names
    /// it with a fresh UUID (the server assigned the UID before).
    fn prepare_for_create(obj: &mut LimitRange) {
        let no_name = obj.metadata.name.as_deref().unwrap_or_default().is_empty()
            && obj
                .metadata
                .generate_name
                .as_deref()
                .unwrap_or_default()
                .is_empty();
        if no_name {
            obj.metadata.name.clone_from(&obj.metadata.uid);
        }
    }

    fn validate_create(obj: &LimitRange, _ctx: &Context<'_>) -> ErrorList {
        before_create(validate_limit_range(obj), &obj.metadata)
    }

    fn validate_update(new: &LimitRange, old: &LimitRange, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_limit_range(new));
        errs
    }

    /// LimitRanges have no `/status`; the stored object is kept.
    fn prepare_for_status_update(new: &mut LimitRange, old: &LimitRange) {
        *new = old.clone();
    }

    fn validate_status_update(new: &LimitRange, old: &LimitRange, _ctx: &Context<'_>) -> ErrorList {
        validate_common_fields(&new.metadata, &old.metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::admit_create;
    use serde_json::{Value, json};

    fn lr(limits: Value) -> LimitRange {
        serde_json::from_value(json!({
            "metadata": {"name": "abc", "namespace": "foo"},
            "spec": {"limits": limits},
        }))
        .expect("limit range")
    }

    fn item(t: &str, fields: &[(&str, Value)]) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("type".into(), t.into());
        for (k, v) in fields {
            m.insert((*k).to_owned(), v.clone());
        }
        Value::Object(m)
    }

    /// `TestValidateLimitRange` of upstream's validation_test.go.
    #[test]
    fn validate_limit_range_table() {
        let ok = [
            (
                "all-fields-valid",
                json!([
                    item(
                        "Pod",
                        &[
                            ("max", json!({"cpu": "100m", "memory": "10000Mi"})),
                            ("min", json!({"cpu": "5m", "memory": "100Mi"})),
                            ("maxLimitRequestRatio", json!({"cpu": "10"}))
                        ]
                    ),
                    item(
                        "Container",
                        &[
                            ("max", json!({"cpu": "100m", "memory": "10000Mi"})),
                            ("min", json!({"cpu": "5m", "memory": "100Mi"})),
                            ("default", json!({"cpu": "50m", "memory": "500Mi"})),
                            ("defaultRequest", json!({"cpu": "10m", "memory": "200Mi"})),
                            ("maxLimitRequestRatio", json!({"cpu": "10"}))
                        ]
                    ),
                    item(
                        "PersistentVolumeClaim",
                        &[
                            ("max", json!({"storage": "10Gi"})),
                            ("min", json!({"storage": "5Gi"}))
                        ]
                    ),
                ]),
            ),
            (
                "pvc-min-only",
                json!([item(
                    "PersistentVolumeClaim",
                    &[("min", json!({"storage": "5Gi"}))]
                )]),
            ),
            (
                "all-fields-valid-big-numbers",
                json!([item(
                    "Container",
                    &[
                        ("max", json!({"cpu": "100m", "memory": "10000T"})),
                        ("min", json!({"cpu": "5m", "memory": "100Mi"})),
                        ("default", json!({"cpu": "50m", "memory": "500Mi"})),
                        ("defaultRequest", json!({"cpu": "10m", "memory": "200Mi"})),
                        ("maxLimitRequestRatio", json!({"cpu": "20"}))
                    ]
                )]),
            ),
            (
                "thirdparty-fields-all-valid-standard-container-resources",
                json!([item(
                    "thirdparty.com/foo",
                    &[
                        ("max", json!({"cpu": "100m"})),
                        ("min", json!({"cpu": "5m"}))
                    ]
                )]),
            ),
            (
                "extended resources with equal default and request",
                json!([item(
                    "Container",
                    &[
                        ("default", json!({"example.com/gpu": "1"})),
                        ("defaultRequest", json!({"example.com/gpu": "1"}))
                    ]
                )]),
            ),
        ];
        for (name, limits) in ok {
            let errs = validate_limit_range(&lr(limits));
            assert!(errs.is_empty(), "{name}: {errs}");
        }

        let mut bad_name = lr(json!([]));
        bad_name.metadata.name = Some("^Invalid".into());
        let cases: Vec<(&str, LimitRange, &str)> = vec![
            (
                "duplicate-limit-type",
                lr(json!([
                    item(
                        "Pod",
                        &[
                            ("max", json!({"cpu": "100m"})),
                            ("min", json!({"cpu": "0m"}))
                        ]
                    ),
                    item("Pod", &[("min", json!({"cpu": "0m"}))]),
                ])),
                r#"spec.limits[1].type: Duplicate value: "Pod""#,
            ),
            (
                "default-limit-type-pod",
                lr(json!([item(
                    "Pod",
                    &[
                        ("max", json!({"cpu": "100m"})),
                        ("min", json!({"cpu": "0m"})),
                        ("default", json!({"cpu": "10m"}))
                    ]
                )])),
                "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
            ),
            (
                "default-request-limit-type-pod",
                lr(json!([item(
                    "Pod",
                    &[
                        ("max", json!({"cpu": "100m"})),
                        ("min", json!({"cpu": "0m"})),
                        ("defaultRequest", json!({"cpu": "10m"}))
                    ]
                )])),
                "spec.limits[0].defaultRequest: Forbidden: may not be specified when `type` is 'Pod'",
            ),
            (
                "min value 100m is greater than max value 10m",
                lr(json!([item(
                    "Container",
                    &[
                        ("max", json!({"cpu": "10m"})),
                        ("min", json!({"cpu": "100m"}))
                    ]
                )])),
                r#"spec.limits[0].min[cpu]: Invalid value: "100m": min value 100m is greater than max value 10m"#,
            ),
            (
                "invalid spec default outside range",
                lr(json!([item(
                    "Container",
                    &[
                        ("max", json!({"cpu": "1"})),
                        ("min", json!({"cpu": "100m"})),
                        ("default", json!({"cpu": "2"})),
                        ("defaultRequest", json!({"cpu": "500m"}))
                    ]
                )])),
                r#"spec.limits[0].default[cpu]: Invalid value: "1": default value 2 is greater than max value 1"#,
            ),
            (
                "invalid spec default request outside range",
                lr(json!([item(
                    "Container",
                    &[
                        ("max", json!({"cpu": "1"})),
                        ("min", json!({"cpu": "100m"})),
                        ("default", json!({"cpu": "500m"})),
                        ("defaultRequest", json!({"cpu": "2"}))
                    ]
                )])),
                r#"[spec.limits[0].defaultRequest[cpu]: Invalid value: "2": default request value 2 is greater than max value 1, spec.limits[0].defaultRequest[cpu]: Invalid value: "2": default request value 2 is greater than default limit value 500m]"#,
            ),
            (
                "invalid spec default request more than default",
                lr(json!([item(
                    "Container",
                    &[
                        ("max", json!({"cpu": "2"})),
                        ("min", json!({"cpu": "100m"})),
                        ("default", json!({"cpu": "500m"})),
                        ("defaultRequest", json!({"cpu": "800m"}))
                    ]
                )])),
                r#"spec.limits[0].defaultRequest[cpu]: Invalid value: "800m": default request value 800m is greater than default limit value 500m"#,
            ),
            (
                "invalid spec maxLimitRequestRatio less than 1",
                lr(json!([item(
                    "Pod",
                    &[("maxLimitRequestRatio", json!({"memory": "800m"}))]
                )])),
                r#"spec.limits[0].maxLimitRequestRatio[memory]: Invalid value: "800m": ratio 800m is less than 1"#,
            ),
            (
                "invalid spec maxLimitRequestRatio greater than max/min",
                lr(json!([item(
                    "Container",
                    &[
                        ("max", json!({"memory": "400Mi"})),
                        ("min", json!({"memory": "100Mi"})),
                        ("maxLimitRequestRatio", json!({"memory": "10"}))
                    ]
                )])),
                r#"spec.limits[0].maxLimitRequestRatio[memory]: Invalid value: "10": ratio 10 is greater than max/min = 4.000000"#,
            ),
            (
                "invalid non standard limit type",
                lr(json!([item(
                    "foo",
                    &[("max", json!({"storage": "10000T"}))]
                )])),
                r#"spec.limits[0].type: Invalid value: "foo": must be a standard limit type or fully qualified"#,
            ),
            (
                "min and max values missing, one required",
                lr(json!([item("PersistentVolumeClaim", &[])])),
                "spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided",
            ),
            (
                "invalid min greater than max",
                lr(json!([item(
                    "PersistentVolumeClaim",
                    &[
                        ("min", json!({"storage": "10Gi"})),
                        ("max", json!({"storage": "1Gi"}))
                    ]
                )])),
                r#"spec.limits[0].min[storage]: Invalid value: "10Gi": min value 10Gi is greater than max value 1Gi"#,
            ),
            (
                "invalid-name",
                bad_name,
                r#"metadata.name: Invalid value: "^Invalid": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ),
            (
                "storage for a container",
                lr(json!([item(
                    "Container",
                    &[("max", json!({"storage": "1Gi"}))]
                )])),
                r#"spec.limits[0].max[storage]: Invalid value: "storage": must be a standard resource for containers"#,
            ),
            (
                "invalid default and request for a resource that cannot overcommit",
                lr(json!([item(
                    "Container",
                    &[
                        ("default", json!({"example.com/gpu": "2"})),
                        ("defaultRequest", json!({"example.com/gpu": "1"}))
                    ]
                )])),
                r#"spec.limits[0].defaultRequest[example.com/gpu]: Invalid value: "1": default value 2 must equal to defaultRequest value 1 in example.com/gpu"#,
            ),
        ];
        for (name, l, want) in cases {
            assert_eq!(validate_limit_range(&l).to_string(), want, "{name}");
        }
    }

    /// `TestSetDefaultLimitRangeItem` of upstream's defaults_test.go.
    #[test]
    fn container_items_get_defaults() {
        let absent = Absent::default();
        let ctx = Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent: &absent,
        };
        let mut l = lr(json!([
            item(
                "Container",
                &[
                    ("max", json!({"cpu": "100m"})),
                    ("min", json!({"memory": "100Mi"})),
                    ("default", json!({})),
                    ("defaultRequest", json!({}))
                ]
            ),
            item("Pod", &[("max", json!({"cpu": "1"}))]),
        ]));
        l.metadata.name = None;
        l.metadata.uid = Some("8e0b4d8e-5c1e-4b8b-9d5a-6a3c1e2f4b7d".into());
        admit_create::<LimitRangeStrategy>(&mut l, &ctx).expect("valid");
        assert_eq!(
            l.metadata.name.as_deref(),
            Some("8e0b4d8e-5c1e-4b8b-9d5a-6a3c1e2f4b7d")
        );
        let items = l.spec.map(|s| s.limits).unwrap_or_default();
        let keys = |m: &Option<List>| -> Vec<(String, String)> {
            m.iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.0.clone()))
                .collect()
        };
        assert_eq!(
            keys(&items[0].default),
            [("cpu".to_owned(), "100m".to_owned())]
        );
        assert_eq!(
            keys(&items[0].default_request),
            [
                ("cpu".to_owned(), "100m".to_owned()),
                ("memory".to_owned(), "100Mi".to_owned())
            ]
        );
        assert_eq!(items[1].default, None, "only Container items are defaulted");
    }
}
