//! Server-side apply and the ownership bookkeeping of every other write:
//! the field manager chain of `k8s.io/apimachinery/pkg/util/managedfields`
//! (version check → last-applied updater → last-applied manager →
//! skip-non-applied → cap managers → manager info → managed-fields updater
//! → strip meta → structured merge) over `merge.Updater`'s `Apply` and
//! `Update` (structured-merge-diff), on JSON values.

use std::sync::LazyLock;

use jiff::Timestamp;
use serde_json::{Map, Value};

use super::error::{Cause, PatchError};
use super::fields::{FieldSet, PathElement, go_json, path_string};
use super::managed::{self, Entry, Managed, ManagerId, Operation};
use super::schema::{self, Schema, Target};
use super::typed::{
    compare, ensure_named_fields_are_members, merge, remove_items, strip_nulls, to_field_set,
    values_equal,
};
use super::yaml;

/// `DefaultMaxUpdateManagers`.
const MAX_UPDATE_MANAGERS: usize = 10;
/// `LastAppliedConfigAnnotation`.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The manager whose client-side-apply annotation apply keeps in sync.
const KUBECTL: &str = "kubectl";

/// What one request works with.
struct Ctx<'a> {
    root: &'a Schema,
    subresource: Option<&'a str>,
    group: String,
    version: String,
    kind: String,
    /// Fields the request's resource ignores (upstream's reset fields).
    ignored: FieldSet,
}

impl Ctx<'_> {
    fn group_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

fn field(name: &str) -> PathElement {
    PathElement::Field(name.to_owned())
}

/// `stripMetaManager`'s paths: never owned by anyone.
fn strip_set() -> &'static FieldSet {
    static STRIP: LazyLock<FieldSet> = LazyLock::new(build_strip_set);
    &STRIP
}

fn build_strip_set() -> FieldSet {
    let mut s = FieldSet::new();
    for top in ["apiVersion", "kind", "metadata"] {
        s.insert(&[field(top)]);
    }
    for m in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        s.insert(&[field("metadata"), field(m)]);
    }
    s
}

/// The reset fields of the main resource (`status`, for types with a
/// `/status` subresource) or of `/status` (`spec`, and `metadata` for the
/// lifecycle types).
fn ignored_set(ts: Option<&schema::TypeSchema>, subresource: Option<&str>) -> FieldSet {
    let mut s = FieldSet::new();
    let Some(ts) = ts else {
        return s;
    };
    match subresource {
        Some("status") => {
            s.insert(&[field("spec")]);
            if ts.status_ignores_metadata {
                s.insert(&[field("metadata")]);
            }
        }
        Some(_) => {}
        None => {
            if ts.status_subresource {
                s.insert(&[field("status")]);
            }
        }
    }
    s
}

fn metadata(v: &Value) -> Option<&Map<String, Value>> {
    v.get("metadata").and_then(Value::as_object)
}

fn without_managed_fields(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(Value::Object(m)) = v.get_mut("metadata") {
        m.remove("managedFields");
    }
    v
}

fn set_managed_fields(v: &mut Value, managed: &Managed) {
    let encoded = managed::encode(managed);
    let Value::Object(obj) = v else {
        return;
    };
    match encoded {
        Some(list) => {
            let meta = obj
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(m) = meta {
                m.insert("managedFields".to_owned(), list);
            }
        }
        None => {
            if let Some(Value::Object(m)) = obj.get_mut("metadata") {
                m.remove("managedFields");
            }
        }
    }
}

/// `GroupVersionKind.String()` of an object's `apiVersion`/`kind`.
fn gvk_string(obj: &Value) -> String {
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let (group, version) = match api_version.matches('/').count() {
        0 => ("", api_version),
        1 => api_version.split_once('/').unwrap_or(("", api_version)),
        _ => return format!("/, Kind={kind}"),
    };
    format!("{group}/{version}, Kind={kind}")
}

/// `objectGVKNN`: `namespace/name; group/version, Kind=Kind`.
fn gvk_nn(obj: &Value) -> String {
    let meta = metadata(obj);
    let s = |k: &str| {
        meta.and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    format!("{}/{}; {}", s("namespace"), s("name"), gvk_string(obj))
}

/// The ownership an `Update` by `id` records (SMD `Updater.Update` under
/// the strip-meta and managed-fields-updater managers): changed fields move
/// to `id` (merged with what it owned before), removed fields leave every
/// manager, and the entry's time becomes `now` when it took anything.
fn update_managed(
    ctx: &Ctx<'_>,
    live: &Value,
    new: &Value,
    managed: &mut Managed,
    id: &ManagerId,
    now: Timestamp,
) {
    let cmp = compare(Some(live), Some(new), ctx.root).exclude(&ctx.ignored);
    let mut changed = cmp.modified;
    changed.union_with(&cmp.added);
    for entry in managed.values_mut() {
        entry.set.subtract(&changed);
        entry.set.subtract(&cmp.removed);
    }
    managed.retain(|_, e| !e.set.is_empty());
    let mut took = changed.recursive_difference(&ctx.ignored);
    took.subtract(strip_set());
    if !took.is_empty() {
        let set = match managed.get(id) {
            Some(prev) => {
                let mut set = took;
                set.union_with(&prev.set);
                set
            }
            None => took,
        };
        managed.insert(
            id.clone(),
            Entry {
                set,
                api_version: ctx.group_version(),
                applied: false,
                time: Some(crate::time::format_rfc3339(now)),
            },
        );
    }
    managed::cap_update_managers(managed, MAX_UPDATE_MANAGERS);
}

/// Conflicting paths by manager.
type Conflicts = Vec<(ManagerId, Vec<PathElement>)>;

enum ApplyFail {
    Conflicts(Conflicts),
    Error(PatchError),
}

/// `prune`: removes what `id` applied last time and no longer applies,
/// unless another manager owns it.
fn prune(ctx: &Ctx<'_>, merged: Value, managed: &Managed, last: Option<&Entry>) -> Value {
    let Some(last) = last.filter(|l| !l.set.is_empty()) else {
        return merged;
    };
    let root = ctx.root;
    let enf = |s: &FieldSet| ensure_named_fields_are_members(s, root);
    let set_of = |v: &Value| to_field_set(v, root, false).unwrap_or_default();
    let empty = || Value::Object(Map::new());
    let last_set = enf(&last.set);
    let pruned = remove_items(&merged, &last_set, root).unwrap_or_else(empty);
    let mut owned = FieldSet::new();
    for e in managed.values() {
        owned.union_with(&e.set);
    }
    let merged_set = enf(&set_of(&merged));
    let mut kept = enf(&set_of(&pruned));
    kept.union_with(&enf(&owned));
    let removable = merged_set.difference(&kept);
    if removable.is_empty() {
        // Removing nothing leaves `merged`, and then nothing dangles.
        return merged;
    }
    let pruned = remove_items(&merged, &removable, root).unwrap_or_else(empty);
    let dangling = merged_set
        .difference(&enf(&set_of(&pruned)))
        .intersection(&last_set);
    remove_items(&merged, &dangling, root).unwrap_or_else(empty)
}

/// `Updater.Apply` under skip-non-applied, managed-fields-updater and
/// strip-meta: the new object (`None`: `live` unchanged) and ownership, or
/// the conflicts.
fn apply_core(
    ctx: &Ctx<'_>,
    live: &Value,
    applied: &Value,
    mut managed: Managed,
    id: &ManagerId,
    force: bool,
    now: Timestamp,
) -> Result<(Option<Value>, Managed), ApplyFail> {
    if managed.is_empty() {
        let before = ManagerId::new(
            "before-first-apply",
            Operation::Update,
            &ctx.group_version(),
            ctx.subresource,
        );
        update_managed(
            ctx,
            &Value::Object(Map::new()),
            live,
            &mut managed,
            &before,
            now,
        );
    }
    let has_managed = metadata(applied)
        .and_then(|m| m.get("managedFields"))
        .is_some_and(|v| !v.is_null());
    if has_managed {
        return Err(ApplyFail::Error(PatchError::bad_request(
            "metadata.managedFields must be nil",
        )));
    }
    let config_set = to_field_set(applied, ctx.root, true).map_err(|e| {
        ApplyFail::Error(PatchError::internal(format!(
            "failed to create typed patch object ({}): {e}",
            gvk_nn(applied)
        )))
    })?;
    let merged =
        merge(Some(live), Some(applied), ctx.root).unwrap_or_else(|| Value::Object(Map::new()));
    let last = managed.remove(id);
    managed.insert(
        id.clone(),
        Entry {
            set: config_set.recursive_difference(&ctx.ignored),
            api_version: ctx.group_version(),
            applied: true,
            time: last.as_ref().and_then(|l| l.time.clone()),
        },
    );
    let merged = prune(ctx, merged, &managed, last.as_ref());

    let cmp = compare(Some(live), Some(&merged), ctx.root).exclude(&ctx.ignored);
    let mut changed = cmp.modified;
    changed.union_with(&cmp.added);
    let mut conflicts: Conflicts = Vec::new();
    for (other, entry) in &managed {
        if other == id {
            continue;
        }
        for path in entry.set.intersection(&changed).paths() {
            conflicts.push((other.clone(), path));
        }
    }
    if !force && !conflicts.is_empty() {
        return Err(ApplyFail::Conflicts(conflicts));
    }
    for (other, entry) in managed.iter_mut() {
        if other != id {
            entry.set.subtract(&changed);
            entry.set.subtract(&cmp.removed);
        }
    }
    managed.retain(|_, e| !e.set.is_empty());
    if let Some(e) = managed.get_mut(id) {
        e.set.subtract(strip_set());
    }
    managed.retain(|_, e| !e.set.is_empty());

    if values_equal(live, &merged) {
        // `live` itself is the object (numbers keep their spelling).
        return Ok((None, managed));
    }
    if let Some(e) = managed.get_mut(id) {
        e.time = Some(crate::time::format_rfc3339(now));
    }
    Ok((Some(merged), managed))
}

/// `lastAppliedManager.allowedConflictsFromLastApplied`: the fields the
/// client-side-apply annotation set that still hold their applied value.
fn allowed_from_last_applied(ctx: &Ctx<'_>, live: &Value) -> Option<FieldSet> {
    let annotation = metadata(live)?
        .get("annotations")?
        .get(LAST_APPLIED)?
        .as_str()
        .filter(|s| !s.is_empty())?;
    let last: Value = serde_json::from_str(annotation).ok()?;
    if last.get("apiVersion").and_then(Value::as_str) != Some(ctx.group_version().as_str()) {
        return None;
    }
    let set = to_field_set(&last, ctx.root, true).ok()?;
    let cmp = compare(Some(&last), Some(live), ctx.root);
    Some(
        set.difference(&cmp.modified)
            .difference(&cmp.added)
            .difference(&cmp.removed),
    )
}

/// `buildLastApplied`: the applied configuration without the annotation,
/// encoded as `json.Encoder` does.
fn build_last_applied(applied: &Value) -> String {
    let mut v = applied.clone();
    if let Some(Value::Object(a)) = v.get_mut("metadata").and_then(|m| m.get_mut("annotations")) {
        a.remove(LAST_APPLIED);
    }
    format!("{}\n", go_json(&v))
}

fn conflict_error(conflicts: &Conflicts) -> PatchError {
    let mut sorted = conflicts.clone();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let causes: Vec<Cause> = conflicts
        .iter()
        .map(|(m, p)| Cause {
            reason: "FieldManagerConflict".to_owned(),
            message: format!("conflict with {}", m.print()),
            field: path_string(p),
        })
        .collect();
    let message = match sorted.as_slice() {
        [(m, p)] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            m.print(),
            path_string(p)
        ),
        _ => {
            let mut lines: Vec<String> = Vec::new();
            let mut current: Option<&ManagerId> = None;
            for (m, p) in &sorted {
                if current != Some(m) {
                    lines.push(format!("conflicts with {}:", m.print()));
                    current = Some(m);
                }
                lines.push(format!("- {}", path_string(p)));
            }
            format!(
                "Apply failed with {} conflicts: {}",
                sorted.len(),
                lines.join("\n")
            )
        }
    };
    PatchError {
        causes,
        ..PatchError::new(409, "Conflict", message)
    }
}

/// Server-side apply (see [`super::server_side_apply`]).
pub fn apply(
    ty: Target<'_>,
    live: Option<&Value>,
    applied_bytes: &[u8],
    manager: &str,
    subresource: Option<&str>,
    force: bool,
    now: Timestamp,
) -> Result<Value, PatchError> {
    let applied = yaml::parse(applied_bytes)
        .map_err(|e| PatchError::bad_request(format!("error decoding YAML: {e}")))?;
    let applied = match applied {
        Value::Object(_) => applied,
        Value::Null => Value::Object(Map::new()),
        _ => {
            return Err(PatchError::bad_request(
                "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}",
            ));
        }
    };
    if manager.is_empty() {
        return Err(PatchError::new(
            422,
            "Invalid",
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply requests",
        ));
    }
    let ts = ty.schema;
    let managed = managed::decode(live.and_then(metadata).and_then(|m| m.get("managedFields")))
        .map_err(|e| PatchError::internal(format!("failed to decode managed fields: {e}")))?;
    let version = match ts {
        Some(t) => t.version.clone(),
        None => gvk_version(&applied),
    };
    let ctx = Ctx {
        root: ty.root(),
        subresource,
        group: ty.group.to_owned(),
        version,
        kind: ty.kind.to_owned(),
        ignored: ignored_set(ts, subresource),
    };
    let want = format!("{}/{}, Kind={}", ctx.group, ctx.version, ctx.kind);
    if gvk_string(&applied) != want {
        return Err(PatchError::bad_request(format!(
            "invalid object type: {}",
            gvk_string(&applied)
        )));
    }
    let live_clean = live.map_or_else(|| Value::Object(Map::new()), without_managed_fields);
    let id = ManagerId::new(manager, Operation::Apply, &ctx.group_version(), subresource);
    // Only kubectl may need a second run (with the managers as they were).
    let retry_managed = (manager == KUBECTL).then(|| managed.clone());
    let run = |force: bool, managed: Managed| {
        apply_core(&ctx, &live_clean, &applied, managed, &id, force, now)
    };
    let outcome = match run(force, managed) {
        Err(ApplyFail::Conflicts(conflicts)) if manager == KUBECTL => {
            match allowed_from_last_applied(&ctx, &live_clean) {
                Some(allowed) => {
                    let rest: Conflicts = conflicts
                        .into_iter()
                        .filter(|(_, p)| !allowed.has(p))
                        .collect();
                    if rest.is_empty() {
                        run(true, retry_managed.unwrap_or_default())
                    } else {
                        Err(ApplyFail::Conflicts(rest))
                    }
                }
                None => Err(ApplyFail::Conflicts(conflicts)),
            }
        }
        other => other,
    };
    let (object, managed) = match outcome {
        Ok(ok) => ok,
        Err(ApplyFail::Conflicts(c)) => return Err(conflict_error(&c)),
        Err(ApplyFail::Error(e)) => return Err(e),
    };
    let mut object = object.unwrap_or(live_clean);
    if manager == KUBECTL {
        let has = metadata(&object)
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(LAST_APPLIED))
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty());
        if has {
            let value = build_last_applied(&applied);
            if let Some(Value::Object(a)) = object
                .get_mut("metadata")
                .and_then(|m| m.get_mut("annotations"))
            {
                a.insert(LAST_APPLIED.to_owned(), Value::String(value));
            }
        }
    }
    strip_nulls(&mut object);
    set_managed_fields(&mut object, &managed);
    Ok(object)
}

/// The version of an object's `apiVersion`.
fn gvk_version(obj: &Value) -> String {
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    api_version
        .rsplit_once('/')
        .map_or(api_version, |(_, v)| v)
        .to_owned()
}

/// `isResetManagedFields`: `[]` or `[{}]`.
fn is_reset(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Array(items)) => match items.as_slice() {
            [] => true,
            [Value::Object(m)] => m.is_empty(),
            _ => false,
        },
        _ => false,
    }
}

/// Ownership bookkeeping of a non-apply write (see [`super::record_update`]).
pub fn record_update(
    ty: Target<'_>,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    now: Timestamp,
) {
    let subresource = subresource.filter(|s| !s.is_empty());
    let ts = ty.schema;
    let live_managed = || {
        managed::decode(old.and_then(metadata).and_then(|m| m.get("managedFields")))
            .unwrap_or_default()
    };
    let new_fields = metadata(new).and_then(|m| m.get("managedFields")).cloned();
    let mut managed = if subresource.is_some() {
        live_managed()
    } else if is_reset(new_fields.as_ref()) {
        Managed::new()
    } else {
        match managed::decode(new_fields.as_ref()) {
            Ok(m) if !m.is_empty() => m,
            _ => live_managed(),
        }
    };
    if let Some(Value::Object(m)) = new.get_mut("metadata") {
        m.remove("managedFields");
    }
    let is_create = old
        .and_then(metadata)
        .and_then(|m| m.get("uid"))
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    if managed.is_empty() && !is_create {
        return;
    }
    let version = match ts {
        Some(t) => t.version.clone(),
        None => gvk_version(new),
    };
    let ctx = Ctx {
        root: ty.root(),
        subresource,
        group: ty.group.to_owned(),
        version,
        kind: ty.kind.to_owned(),
        ignored: ignored_set(ts, subresource),
    };
    let id = ManagerId::new(
        manager,
        Operation::Update,
        &ctx.group_version(),
        subresource,
    );
    let live_clean = old.map_or_else(|| Value::Object(Map::new()), without_managed_fields);
    update_managed(&ctx, &live_clean, new, &mut managed, &id, now);
    set_managed_fields(new, &managed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `prune` as it was before its shortcut: every step, always.
    fn prune_reference(
        ctx: &Ctx<'_>,
        merged: Value,
        managed: &Managed,
        last: Option<&Entry>,
    ) -> Value {
        let Some(last) = last.filter(|l| !l.set.is_empty()) else {
            return merged;
        };
        let root = ctx.root;
        let enf = |s: &FieldSet| ensure_named_fields_are_members(s, root);
        let set_of = |v: &Value| to_field_set(v, root, false).unwrap_or_default();
        let empty = || Value::Object(Map::new());
        let last_set = enf(&last.set);
        let pruned = remove_items(&merged, &last_set, root).unwrap_or_else(empty);
        let owned = managed
            .values()
            .fold(FieldSet::new(), |acc, e| acc.union(&e.set));
        let merged_set = enf(&set_of(&merged));
        let removable = merged_set.difference(&enf(&set_of(&pruned)).union(&enf(&owned)));
        let pruned = remove_items(&merged, &removable, root).unwrap_or_else(empty);
        let dangling = merged_set
            .difference(&enf(&set_of(&pruned)))
            .intersection(&last_set);
        remove_items(&merged, &dangling, root).unwrap_or_else(empty)
    }

    /// Small pods: labels, containers (keyed by name) with env (keyed by
    /// name), finalizers (a set), conditions (keyed by type), nulls and
    /// empty containers.
    fn pod() -> impl Strategy<Value = Value> {
        let scalar = prop_oneof![
            Just(Value::Null),
            "[ab]".prop_map(Value::from),
            (0i64..3).prop_map(Value::from),
        ];
        let env = prop::collection::vec(("[xy]", scalar.clone()), 0..3).prop_map(|items| {
            Value::Array(
                items
                    .into_iter()
                    .map(|(n, v)| serde_json::json!({"name": n, "value": v}))
                    .collect(),
            )
        });
        let container = (
            "[cd]",
            prop::option::of(scalar.clone()),
            prop::option::of(env),
        )
            .prop_map(|(name, image, env)| {
                let mut c = serde_json::json!({"name": name});
                if let Some(i) = image {
                    c["image"] = i;
                }
                if let Some(e) = env {
                    c["env"] = e;
                }
                c
            });
        let labels = prop::collection::btree_map("[pq]", scalar.clone(), 0..3)
            .prop_map(|m| Value::Object(m.into_iter().collect()));
        let conditions = prop::collection::vec(("[XY]", scalar.clone()), 0..3).prop_map(|items| {
            Value::Array(
                items
                    .into_iter()
                    .map(|(t, s)| serde_json::json!({"type": t, "status": s}))
                    .collect(),
            )
        });
        (
            prop::option::of(labels),
            prop::option::of(prop::collection::vec("[fg]", 0..3)),
            prop::option::of(prop::collection::vec(container, 0..3)),
            prop::option::of(conditions),
            prop::option::of(scalar),
        )
            .prop_map(|(labels, finalizers, containers, conditions, phase)| {
                let mut p = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "p", "uid": "u"}});
                if let Some(l) = labels {
                    p["metadata"]["labels"] = l;
                }
                if let Some(f) = finalizers {
                    p["metadata"]["finalizers"] = serde_json::json!(f);
                }
                if let Some(c) = containers {
                    p["spec"] = serde_json::json!({"containers": c});
                }
                if let Some(c) = conditions {
                    p["status"] = serde_json::json!({"conditions": c});
                }
                if let Some(ph) = phase {
                    p["status"]["phase"] = ph;
                }
                p
            })
    }

    fn ctx() -> Ctx<'static> {
        let ts = Target::builtin(crate::patch::TypeRef {
            group: "",
            kind: "Pod",
        })
        .schema
        .expect("pods");
        Ctx {
            root: &ts.root,
            subresource: None,
            group: String::new(),
            version: "v1".to_owned(),
            kind: "Pod".to_owned(),
            ignored: FieldSet::new(),
        }
    }

    fn set_of(v: &Value) -> FieldSet {
        to_field_set(v, ctx().root, false).unwrap_or_default()
    }

    fn entry(set: FieldSet) -> Entry {
        Entry {
            set,
            api_version: "v1".to_owned(),
            applied: true,
            time: None,
        }
    }

    proptest! {
        #[test]
        fn in_place_set_operations_equal_the_copying_ones(a in pod(), b in pod()) {
            let (a, b) = (set_of(&a), set_of(&b));
            let mut u = a.clone();
            u.union_with(&b);
            prop_assert_eq!(u, a.union(&b));
            let mut d = a.clone();
            d.subtract(&b);
            prop_assert_eq!(d, a.difference(&b));
        }

        /// The pruning shortcut changes nothing: random merged objects,
        /// last applied sets and other owners.
        #[test]
        fn prune_equals_the_reference(
            merged in pod(), last in pod(), now_applied in pod(), other in pod(),
        ) {
            let ctx = ctx();
            let mut managed = Managed::new();
            let id = ManagerId::new("m", Operation::Apply, "v1", None);
            let other_id = ManagerId::new("o", Operation::Update, "v1", None);
            managed.insert(id, entry(set_of(&now_applied)));
            managed.insert(other_id, entry(set_of(&other)));
            let last = entry(set_of(&last));
            prop_assert_eq!(
                prune(&ctx, merged.clone(), &managed, Some(&last)),
                prune_reference(&ctx, merged, &managed, Some(&last))
            );
        }
    }
}
