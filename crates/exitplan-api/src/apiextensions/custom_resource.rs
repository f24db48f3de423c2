//! Validation of custom resources (`pkg/registry/customresource`:
//! `customResourceValidator` and the strategy's `Validate*`), in upstream's
//! order: `apiVersion`/`kind` first (nothing else is checked when they are
//! wrong), then `metadata` (the generic ObjectMeta rules of
//! [`crate::meta`]), the schema (kube-openapi), the scale replicas, embedded
//! resources, and list-type uniqueness.
//!
//! The caller prunes ([`super::pruning::prune`]) and defaults
//! ([`super::defaulting::apply_defaults`]) before validating; CEL rules
//! (`x-kubernetes-validations`) are evaluated by `exitplan-cel` after this.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceSubresourceScale;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use super::listtype::validate_list_sets_and_maps;
use super::scale::validate_scale;
use super::schema_validation::{bad_value, json_eq, validate_value};
use super::structural::Structural;
use crate::field::{Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, NameRule};

/// What a custom resource must be: its group, version and kind, its scope
/// and its CRD version's scale subresource.
#[derive(Clone, Copy, Debug)]
pub struct ResourceKind<'a> {
    /// The CRD's `spec.group`.
    pub group: &'a str,
    /// The served version.
    pub version: &'a str,
    /// `spec.names.kind`.
    pub kind: &'a str,
    /// `spec.scope == Namespaced`.
    pub namespaced: bool,
    /// The version's `subresources.scale`, if any.
    pub scale: Option<&'a CustomResourceSubresourceScale>,
}

/// What upstream's decoder does to a written custom resource before the
/// strategy runs: prunes unknown fields (returning their paths, for
/// `fieldValidation=Warn/Strict`), then applies defaults.
pub fn prune_and_default(s: &Structural, obj: &mut Value) -> Vec<String> {
    let unknown = super::pruning::prune(s, obj);
    super::defaulting::apply_defaults(s, obj);
    unknown
}

/// `customResourceStrategy.PrepareForCreate`: with a `status`
/// subresource a create cannot set `status`; the generation starts at 1.
pub fn prepare_for_create(obj: &mut Value, status_subresource: bool) {
    let Value::Object(map) = obj else { return };
    if status_subresource {
        map.remove("status");
    }
    set_generation(map, 1);
}

/// `customResourceStrategy.PrepareForUpdate`: with a `status` subresource
/// the stored `status` is kept; any change outside `metadata` bumps the
/// generation (from the stored one).
pub fn prepare_for_update(new: &mut Value, old: &Value, status_subresource: bool) {
    let (Value::Object(n), Value::Object(o)) = (&mut *new, old) else {
        return;
    };
    if status_subresource {
        match o.get("status") {
            Some(st) => {
                n.insert("status".to_owned(), st.clone());
            }
            None => {
                n.remove("status");
            }
        }
    }
    let old_generation = o
        .get("metadata")
        .and_then(|m| m.get("generation"))
        .and_then(Value::as_i64);
    let non_meta = |m: &serde_json::Map<String, Value>| -> serde_json::Map<String, Value> {
        m.iter()
            .filter(|(k, _)| k.as_str() != "metadata")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let changed = !json_eq(&Value::Object(non_meta(n)), &Value::Object(non_meta(o)));
    match crate::strategy::next_generation(old_generation, changed) {
        Some(g) => set_generation(n, g),
        None => {
            if let Some(Value::Object(m)) = n.get_mut("metadata") {
                m.remove("generation");
            }
        }
    }
}

/// `statusStrategy.PrepareForUpdate`: a `/status` write changes only
/// `status` (and keeps its own `managedFields`); everything else is the
/// stored object.
pub fn prepare_for_status_update(new: &mut Value, old: &Value) {
    let status = new.get("status").cloned();
    let managed = new
        .get("metadata")
        .and_then(|m| m.get("managedFields"))
        .cloned();
    *new = old.clone();
    let Value::Object(n) = new else { return };
    match status {
        Some(st) => {
            n.insert("status".to_owned(), st);
        }
        None => {
            n.remove("status");
        }
    }
    if let Some(Value::Object(m)) = n.get_mut("metadata") {
        match managed {
            Some(mf) => {
                m.insert("managedFields".to_owned(), mf);
            }
            None => {
                m.remove("managedFields");
            }
        }
    }
}

fn set_generation(map: &mut serde_json::Map<String, Value>, generation: i64) {
    let meta = map
        .entry("metadata".to_owned())
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Value::Object(m) = meta {
        m.insert("generation".to_owned(), Value::from(generation));
    }
}

/// `ValidateTypeMeta`: `kind` and `apiVersion` must be the served ones.
pub fn validate_type_meta(obj: &Value, k: &ResourceKind<'_>) -> ErrorList {
    let mut errs = ErrorList::new();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    if kind != k.kind {
        errs.push(Error::invalid(
            &Path::new("kind"),
            kind,
            format!("must be {}", k.kind),
        ));
    }
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let want = format!("{}/{}", k.group, k.version);
    if api_version != want {
        errs.push(Error::invalid(
            &Path::new("apiVersion"),
            api_version,
            format!("must be {want}"),
        ));
    }
    errs
}

/// The `metadata` of a custom resource as ObjectMeta.
pub fn object_meta(obj: &Value) -> Result<ObjectMeta, Error> {
    match obj.get("metadata") {
        None | Some(Value::Null) => Ok(ObjectMeta::default()),
        Some(m) => serde_json::from_value(m.clone())
            .map_err(|e| Error::invalid(&Path::new("metadata"), "", e.to_string())),
    }
}

/// The checks a create runs (`customResourceStrategy.Validate`).
pub fn validate_create(s: &Structural, obj: &Value, k: &ResourceKind<'_>) -> ErrorList {
    let errs = validate_type_meta(obj, k);
    if !errs.is_empty() {
        return errs;
    }
    let mut errs = match object_meta(obj) {
        Ok(m) => meta::validate_object_meta(&m, k.namespaced, NameRule::Subdomain),
        Err(e) => ErrorList::from(vec![e]),
    };
    errs.append(validate_custom_resource(s, obj, None));
    if let Some(scale) = k.scale {
        errs.append(validate_scale(obj, scale));
    }
    errs
}

/// The checks an update (main resource or `/status`) runs
/// (`customResourceStrategy.ValidateUpdate`): schema errors on values that
/// did not change are ratcheted away.
pub fn validate_update(
    s: &Structural,
    new: &Value,
    old: &Value,
    k: &ResourceKind<'_>,
) -> ErrorList {
    let errs = validate_type_meta(new, k);
    if !errs.is_empty() {
        return errs;
    }
    let mut errs = match (object_meta(new), object_meta(old)) {
        (Ok(n), Ok(o)) => meta::validate_object_meta_update(&n, &o),
        (Err(e), _) | (_, Err(e)) => ErrorList::from(vec![e]),
    };
    errs.append(validate_custom_resource(s, new, Some(old)));
    if let Some(scale) = k.scale {
        errs.append(validate_scale(new, scale));
    }
    errs
}

/// Schema validation of a custom resource: kube-openapi's rules, embedded
/// resources' `apiVersion`/`kind`, then `x-kubernetes-list-type`
/// uniqueness. With `old` (an update), an error whose field (reached
/// through object keys only) holds the same value as in `old` is dropped,
/// as upstream's validation ratcheting does.
pub fn validate_custom_resource(s: &Structural, obj: &Value, old: Option<&Value>) -> ErrorList {
    let mut errs = validate_value(None, s, obj);
    errs.append(validate_embedded(s, obj, None));
    errs.append(validate_list_sets_and_maps(None, s, obj));
    match old {
        None => errs,
        Some(old) => errs
            .into_iter()
            .filter(|e| !unchanged(&e.field, obj, old))
            .collect(),
    }
}

/// Whether the value at a rendered field path (`spec.a.b`, no indexes) is
/// the same in both objects.
fn unchanged(field: &str, new: &Value, old: &Value) -> bool {
    if field.is_empty() || field == "<nil>" || field.contains(['[', ']']) {
        return false;
    }
    let get = |v: &Value| {
        field
            .split('.')
            .try_fold(v.clone(), |cur, k| cur.get(k).cloned())
    };
    match (get(new), get(old)) {
        (Some(a), Some(b)) => json_eq(&a, &b),
        (None, None) => {
            // A missing required field: ratchet when the parent is unchanged.
            let parent = field.rsplit_once('.').map_or("", |(p, _)| p);
            !parent.is_empty() && unchanged(parent, new, old)
        }
        _ => false,
    }
}

fn child(base: Option<&Path>, name: &str) -> Path {
    base.map_or_else(|| Path::new(name), |b| b.child(name))
}

/// `objectmeta.Validate` for embedded resources: every
/// `x-kubernetes-embedded-resource` below the root needs a string
/// `apiVersion` and `kind`.
fn validate_embedded(s: &Structural, x: &Value, path: Option<&Path>) -> ErrorList {
    let mut errs = ErrorList::new();
    match x {
        Value::Object(map) => {
            if s.extensions.embedded_resource
                && let Some(p) = path
            {
                errs.append(validate_embedded_resource(p, map));
            }
            for (k, v) in map {
                if let Some(sub) = s.properties.get(k).or_else(|| s.additional_schema()) {
                    errs.append(validate_embedded(sub, v, Some(&child(path, k))));
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = s.items.as_deref() {
                let base = path.cloned().unwrap_or_default();
                for (i, v) in items.iter().enumerate() {
                    errs.append(validate_embedded(is, v, Some(&base.index(i))));
                }
            }
        }
        _ => {}
    }
    errs
}

fn validate_embedded_resource(p: &Path, x: &serde_json::Map<String, Value>) -> ErrorList {
    let mut errs = ErrorList::new();
    if !x.contains_key("apiVersion") {
        errs.push(Error::required(&p.child("apiVersion"), ""));
    }
    if !x.contains_key("kind") {
        errs.push(Error::required(&p.child("kind"), ""));
    }
    if let Some(v) = x.get("apiVersion") {
        let ap = p.child("apiVersion");
        match v.as_str() {
            None => errs.push(Error::invalid(&ap, bad_value(v), "must be a string")),
            Some("") => errs.push(Error::invalid(&ap, "", "must not be empty")),
            Some(av) if av.matches('/').count() > 1 => {
                errs.push(Error::invalid(
                    &ap,
                    av,
                    format!("unexpected GroupVersion string: {av}"),
                ));
            }
            Some(_) => {}
        }
    }
    if let Some(v) = x.get("kind") {
        let kp = p.child("kind");
        match v.as_str() {
            None => errs.push(Error::invalid(&kp, bad_value(v), "must be a string")),
            Some("") => errs.push(Error::invalid(&kp, "", "must not be empty")),
            Some(kind) => {
                let e = formats::is_dns1035_label(&kind.to_lowercase());
                if !e.is_empty() {
                    errs.push(Error::invalid(
                        &kp,
                        kind,
                        format!(
                            "may have mixed case, but should otherwise match: {}",
                            e.join(",")
                        ),
                    ));
                }
            }
        }
    }
    if let Some(v) = x.get("metadata") {
        errs.append(validate_embedded_metadata(p, v));
    }
    errs
}

/// The `metadata` of an embedded resource: `ValidateObjectMeta` with the
/// path-segment name rule, a namespace only required when set, and a
/// missing name allowed (upstream validates a placeholder name).
fn validate_embedded_metadata(p: &Path, v: &Value) -> ErrorList {
    let mp = p.child("metadata");
    let mut m: ObjectMeta = match serde_json::from_value(v.clone()) {
        Ok(m) => m,
        Err(e) => return ErrorList::from(vec![Error::invalid(&mp, bad_value(v), e.to_string())]),
    };
    if m.name.as_deref().unwrap_or_default().is_empty() {
        m.name = Some("fakename".to_owned());
    }
    let namespaced = m.namespace.as_deref().is_some_and(|n| !n.is_empty());
    meta::generic::validate_object_meta_generic(&m)
        .into_iter()
        .filter(|e| namespaced || e.field != "metadata.namespace")
        .map(|mut e| {
            e.field = format!("{p}.{}", e.field);
            e
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
    use serde_json::json;

    fn structural() -> Structural {
        let s: JSONSchemaProps = serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "required": ["size"], "properties": {
                    "size": {"type": "integer", "minimum": 1},
                    "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
                }}
            }
        }))
        .expect("schema");
        Structural::new(&s).expect("structural")
    }

    fn kind() -> ResourceKind<'static> {
        ResourceKind {
            group: "example.com",
            version: "v1",
            kind: "Foo",
            namespaced: true,
            scale: None,
        }
    }

    #[test]
    fn prune_then_default() {
        let s: JSONSchemaProps = serde_json::from_value(json!({
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer", "default": 1}}}}
        }))
        .expect("schema");
        let s = Structural::new(&s).expect("structural");
        let mut obj = json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "a"}, "spec": {"x": 1}});
        assert_eq!(prune_and_default(&s, &mut obj), vec!["spec.x".to_owned()]);
        assert_eq!(obj["spec"], json!({"size": 1}));
    }

    #[test]
    fn strategy_prepares() {
        let mut obj = json!({"metadata": {"name": "a"}, "spec": {"x": 1}, "status": {"s": 1}});
        prepare_for_create(&mut obj, true);
        assert_eq!(
            obj,
            json!({"metadata": {"name": "a", "generation": 1}, "spec": {"x": 1}})
        );

        let old = json!({"metadata": {"name": "a", "generation": 3}, "spec": {"x": 1}, "status": {"s": 1}});
        let mut new = json!({"metadata": {"name": "a", "labels": {"l": "v"}}, "spec": {"x": 1}, "status": {"s": 2}});
        prepare_for_update(&mut new, &old, true);
        assert_eq!(new["status"], json!({"s": 1}));
        assert_eq!(
            new["metadata"]["generation"],
            json!(3),
            "metadata-only change"
        );
        let mut new = json!({"metadata": {"name": "a"}, "spec": {"x": 2}});
        prepare_for_update(&mut new, &old, true);
        assert_eq!(new["metadata"]["generation"], json!(4));
        let mut new = json!({"metadata": {"name": "a"}, "spec": {"x": 1}, "status": {"s": 2}});
        prepare_for_update(&mut new, &old, false);
        assert_eq!(
            new["metadata"]["generation"],
            json!(4),
            "without the subresource status counts"
        );

        let mut new = json!({"metadata": {"name": "a", "labels": {"l": "v"}, "managedFields": [{"manager": "m"}]}, "spec": {"x": 9}, "status": {"s": 5}});
        prepare_for_status_update(&mut new, &old);
        assert_eq!(
            new,
            json!({"metadata": {"name": "a", "generation": 3, "managedFields": [{"manager": "m"}]}, "spec": {"x": 1}, "status": {"s": 5}})
        );
    }

    #[test]
    fn type_meta_first() {
        let obj = json!({"apiVersion": "example.com/v2", "kind": "Bar", "metadata": {}});
        assert_eq!(
            validate_create(&structural(), &obj, &kind()).to_string(),
            r#"[kind: Invalid value: "Bar": must be Foo, apiVersion: Invalid value: "example.com/v2": must be example.com/v1]"#
        );
    }

    #[test]
    fn metadata_schema_and_embedded() {
        let obj = json!({
            "apiVersion": "example.com/v1", "kind": "Foo",
            "metadata": {"name": "Bad_Name"},
            "spec": {"size": 0, "template": {"kind": 1, "metadata": {"name": "a/b", "labels": {"k": "bad value"}}}}
        });
        let got: Vec<String> = validate_create(&structural(), &obj, &kind())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            vec![
                "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_owned(),
                "metadata.namespace: Required value".to_owned(),
                "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1".to_owned(),
                "spec.template.apiVersion: Required value".to_owned(),
                "spec.template.kind: Invalid value: 1: must be a string".to_owned(),
                "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'".to_owned(),
                "spec.template.metadata.labels: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_owned(),
            ]
        );
    }

    #[test]
    fn update_ratchets_unchanged_values() {
        let old = json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "a", "namespace": "n", "resourceVersion": "1"}, "spec": {"size": 0}});
        let mut new = old.clone();
        new["metadata"]["labels"] = json!({"x": "y"});
        assert!(validate_update(&structural(), &new, &old, &kind()).is_empty());
        new["spec"]["size"] = json!(-1);
        assert_eq!(
            validate_update(&structural(), &new, &old, &kind()).to_string(),
            "spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 1"
        );
    }
}
