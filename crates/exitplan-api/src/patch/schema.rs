//! One schema table for the served types, transcribed from the upstream Go
//! struct tags: `patchStrategy`/`patchMergeKey` (strategic merge patch) and
//! `+listType`/`+listMapKey`/`+mapType`/`+structType` (server-side apply).
//!
//! The table is *sparse*: a struct lists only the fields whose merge
//! behaviour differs from the default, and every other field is [`Schema::Any`]
//! — a struct-like value whose maps merge key by key and whose lists are
//! replaced whole (atomic). That is upstream's default for both patch
//! flavours (`patchStrategy` unset ⇒ replace; `listType` unset ⇒ atomic), so
//! leaving a field out is only wrong for a field that upstream tags; the
//! tagged fields of every served type are listed here.
//!
//! | type | merged lists (SMP key / SSA keys) |
//! |---|---|
//! | ObjectMeta | `finalizers` (set), `ownerReferences` (`uid`, items atomic) |
//! | PodSpec | `containers`, `initContainers`, `ephemeralContainers`, `volumes`, `imagePullSecrets` (items atomic), `schedulingGates`, `resourceClaims`, `evictionResponders` (`name`); `hostAliases` (`ip`); `topologySpreadConstraints` (`topologyKey` / `topologyKey`+`whenUnsatisfiable`); `nodeSelector` atomic map |
//! | Container | `env` (`name`), `ports` (`containerPort` / `containerPort`+`protocol`, protocol defaulting to `TCP`), `volumeMounts` (`mountPath`), `volumeDevices` (`devicePath`); `resources.claims` (SSA only, `name`) |
//! | PodStatus | `conditions` (`type`), `podIPs`, `hostIPs` (`ip`), `resourceClaimStatuses` (`name`) |
//! | NodeSpec / NodeStatus | `podCIDRs` (set); `conditions`, `addresses` (`type`) |
//! | NamespaceStatus, PodDisruptionBudgetStatus, JobStatus, EvictionRequestStatus | `conditions` (`type`) |
//! | JobStatus | `uncountedTerminatedPods.{succeeded,failed}` (SSA sets) |
//! | EvictionStatus | `conditions` (`type`); `requesters`, `targetResponders` (`name`, items atomic), `responders` (`name`) |
//!
//! Atomic structs (`+structType=atomic`): LabelSelector (`spec.selector`,
//! `topologySpreadConstraints[].labelSelector`), ObjectReference (Event
//! `involvedObject`/`regarding`/`related`), OwnerReference,
//! LocalObjectReference (`imagePullSecrets[]`), the env `valueFrom`
//! selectors and NodeSelector (`requiredDuringSchedulingIgnoredDuringExecution`).

use std::sync::OnceLock;

use serde_json::Value;

use super::TypeRef;

/// How a value merges.
#[derive(Debug)]
pub enum Schema {
    /// A struct whose listed fields have the given schemas; fields not
    /// listed are [`Schema::Any`].
    Struct(Vec<(&'static str, Schema)>),
    /// A struct owned and replaced whole by apply (`+structType=atomic`);
    /// strategic merge patch still merges it field by field.
    AtomicStruct,
    /// A map owned and replaced whole by apply (`+mapType=atomic`);
    /// strategic merge patch still merges it key by key.
    AtomicMap,
    /// A `map[string]T` merged key by key.
    Map(Box<Schema>),
    /// A list.
    List(Box<ListSchema>),
    /// Not described: struct-like, lists inside replaced whole.
    Any,
}

/// A list's behaviour under both patch flavours.
#[derive(Debug)]
pub struct ListSchema {
    /// `patchStrategy` / `patchMergeKey`.
    pub smp: SmpList,
    /// `+listType` / `+listMapKey`.
    pub ssa: SsaList,
    /// The items' schema.
    pub elem: Schema,
    /// The Go field has no `omitempty` (`PodSpec.containers`): upstream's
    /// typed values always carry it, so it never appears or disappears as a
    /// whole and is never a member of an update's field set.
    pub always_present: bool,
}

/// Strategic merge patch list strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmpList {
    /// No `patchStrategy`: the patch's list replaces the original.
    Replace,
    /// `patchStrategy:"merge"` on a list of primitives: union.
    MergePrimitives,
    /// `patchStrategy:"merge" patchMergeKey:"<key>"`.
    MergeKey(&'static str),
}

/// Server-side apply list type.
#[derive(Debug, Clone, PartialEq)]
pub enum SsaList {
    /// `+listType=atomic` (the default).
    Atomic,
    /// `+listType=set`.
    Set,
    /// `+listType=map` with its keys and, for keys with a default, the
    /// default used when an item omits the key.
    Map(Vec<(&'static str, Option<Value>)>),
}

/// The shared "no metadata" schema.
pub static ANY: Schema = Schema::Any;

impl Schema {
    /// The schema of field or map entry `name` of this value.
    pub fn field(&self, name: &str) -> &Schema {
        match self {
            Schema::Struct(fields) => fields
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(&ANY, |(_, s)| s),
            Schema::Map(elem) => elem,
            _ => &ANY,
        }
    }

    /// Whether keys of this map-shaped value are struct field names (as
    /// opposed to entries of a `map[string]T`).
    pub fn has_named_fields(&self) -> bool {
        matches!(self, Schema::Struct(_) | Schema::Any | Schema::AtomicStruct)
    }

    /// Whether apply treats this value as one leaf.
    pub fn is_atomic(&self) -> bool {
        match self {
            Schema::AtomicStruct | Schema::AtomicMap => true,
            Schema::List(l) => l.ssa == SsaList::Atomic,
            _ => false,
        }
    }

    /// The list schema, if this is a list with metadata.
    pub fn list(&self) -> Option<&ListSchema> {
        match self {
            Schema::List(l) => Some(l),
            _ => None,
        }
    }
}

/// A served type: its version and schema, and the fields apply ignores on
/// the main resource and on `/status` (upstream's `GetResetFields`).
#[derive(Debug)]
pub struct TypeSchema {
    /// The served version (`v1`, `v1alpha1`).
    pub version: &'static str,
    /// The object's schema.
    pub root: Schema,
    /// Whether the type has a `/status` subresource.
    pub status_subresource: bool,
    /// Top-level fields `/status` ignores besides `spec`.
    pub status_ignores_metadata: bool,
}

fn st(fields: Vec<(&'static str, Schema)>) -> Schema {
    Schema::Struct(fields)
}

fn map(elem: Schema) -> Schema {
    Schema::Map(Box::new(elem))
}

fn list(smp: SmpList, ssa: SsaList, elem: Schema) -> Schema {
    Schema::List(Box::new(ListSchema {
        smp,
        ssa,
        elem,
        always_present: false,
    }))
}

/// `patchStrategy:"merge" patchMergeKey:"<key>"` and `+listType=map
/// +listMapKey=<key>`.
fn keyed(key: &'static str, elem: Schema) -> Schema {
    list(
        SmpList::MergeKey(key),
        SsaList::Map(vec![(key, None)]),
        elem,
    )
}

/// `+listType=map` without a patch strategy.
fn ssa_keyed(key: &'static str, elem: Schema) -> Schema {
    list(SmpList::Replace, SsaList::Map(vec![(key, None)]), elem)
}

/// `patchStrategy:"merge"` and `+listType=set` on primitives.
fn merge_set() -> Schema {
    list(SmpList::MergePrimitives, SsaList::Set, Schema::Any)
}

/// `+listType=set` without a patch strategy.
fn ssa_set() -> Schema {
    list(SmpList::Replace, SsaList::Set, Schema::Any)
}

fn conditions() -> Schema {
    keyed("type", Schema::Any)
}

fn object_meta() -> Schema {
    st(vec![
        ("labels", map(Schema::Any)),
        ("annotations", map(Schema::Any)),
        ("finalizers", merge_set()),
        ("ownerReferences", keyed("uid", Schema::AtomicStruct)),
    ])
}

fn resource_requirements() -> Schema {
    st(vec![
        ("limits", map(Schema::Any)),
        ("requests", map(Schema::Any)),
        ("claims", ssa_keyed("name", Schema::Any)),
    ])
}

fn container() -> Schema {
    let env_var = st(vec![(
        "valueFrom",
        st(vec![
            ("configMapKeyRef", Schema::AtomicStruct),
            ("secretKeyRef", Schema::AtomicStruct),
            ("fieldRef", Schema::AtomicStruct),
            ("resourceFieldRef", Schema::AtomicStruct),
            ("fileKeyRef", Schema::AtomicStruct),
        ]),
    )]);
    st(vec![
        (
            "ports",
            list(
                SmpList::MergeKey("containerPort"),
                SsaList::Map(vec![
                    ("containerPort", None),
                    ("protocol", Some(Value::String("TCP".to_owned()))),
                ]),
                Schema::Any,
            ),
        ),
        ("env", keyed("name", env_var)),
        ("volumeMounts", keyed("mountPath", Schema::Any)),
        ("volumeDevices", keyed("devicePath", Schema::Any)),
        ("resources", resource_requirements()),
    ])
}

fn pod_spec() -> Schema {
    st(vec![
        ("volumes", keyed("name", Schema::Any)),
        ("initContainers", keyed("name", container())),
        (
            "containers",
            Schema::List(Box::new(ListSchema {
                smp: SmpList::MergeKey("name"),
                ssa: SsaList::Map(vec![("name", None)]),
                elem: container(),
                always_present: true,
            })),
        ),
        ("ephemeralContainers", keyed("name", container())),
        ("imagePullSecrets", keyed("name", Schema::AtomicStruct)),
        ("hostAliases", keyed("ip", Schema::Any)),
        ("nodeSelector", Schema::AtomicMap),
        (
            "affinity",
            st(vec![(
                "nodeAffinity",
                st(vec![(
                    "requiredDuringSchedulingIgnoredDuringExecution",
                    Schema::AtomicStruct,
                )]),
            )]),
        ),
        (
            "topologySpreadConstraints",
            list(
                SmpList::MergeKey("topologyKey"),
                SsaList::Map(vec![("topologyKey", None), ("whenUnsatisfiable", None)]),
                st(vec![("labelSelector", Schema::AtomicStruct)]),
            ),
        ),
        ("schedulingGates", keyed("name", Schema::Any)),
        ("resourceClaims", keyed("name", Schema::Any)),
        ("evictionResponders", keyed("name", Schema::Any)),
        ("overhead", map(Schema::Any)),
        ("resources", resource_requirements()),
    ])
}

fn pod_template_spec() -> Schema {
    st(vec![("metadata", object_meta()), ("spec", pod_spec())])
}

fn pod() -> Schema {
    st(vec![
        ("metadata", object_meta()),
        ("spec", pod_spec()),
        (
            "status",
            st(vec![
                ("conditions", conditions()),
                ("podIPs", keyed("ip", Schema::Any)),
                ("hostIPs", keyed("ip", Schema::Any)),
                ("resourceClaimStatuses", keyed("name", Schema::Any)),
            ]),
        ),
    ])
}

fn node() -> Schema {
    st(vec![
        ("metadata", object_meta()),
        ("spec", st(vec![("podCIDRs", merge_set())])),
        (
            "status",
            st(vec![
                ("conditions", conditions()),
                ("addresses", keyed("type", Schema::Any)),
                ("capacity", map(Schema::Any)),
                ("allocatable", map(Schema::Any)),
            ]),
        ),
    ])
}

fn namespace() -> Schema {
    st(vec![
        ("metadata", object_meta()),
        ("status", st(vec![("conditions", conditions())])),
    ])
}

fn core_event() -> Schema {
    st(vec![
        ("metadata", object_meta()),
        ("involvedObject", Schema::AtomicStruct),
        ("related", Schema::AtomicStruct),
    ])
}

fn events_event() -> Schema {
    st(vec![
        ("metadata", object_meta()),
        ("regarding", Schema::AtomicStruct),
        ("related", Schema::AtomicStruct),
    ])
}

fn pod_disruption_budget() -> Schema {
    st(vec![
        ("metadata", object_meta()),
        ("spec", st(vec![("selector", Schema::AtomicStruct)])),
        (
            "status",
            st(vec![
                ("conditions", conditions()),
                ("disruptedPods", map(Schema::Any)),
            ]),
        ),
    ])
}

fn policy_eviction() -> Schema {
    st(vec![("metadata", object_meta())])
}

fn job() -> Schema {
    st(vec![
        ("metadata", object_meta()),
        (
            "spec",
            st(vec![
                ("selector", Schema::AtomicStruct),
                ("template", pod_template_spec()),
            ]),
        ),
        (
            "status",
            st(vec![
                ("conditions", conditions()),
                (
                    "uncountedTerminatedPods",
                    st(vec![("succeeded", ssa_set()), ("failed", ssa_set())]),
                ),
            ]),
        ),
    ])
}

fn lease() -> Schema {
    st(vec![("metadata", object_meta())])
}

fn eviction_request() -> Schema {
    st(vec![
        ("metadata", object_meta()),
        ("status", st(vec![("conditions", conditions())])),
    ])
}

fn eviction() -> Schema {
    st(vec![
        ("metadata", object_meta()),
        (
            "status",
            st(vec![
                ("conditions", conditions()),
                ("requesters", keyed("name", Schema::AtomicStruct)),
                ("targetResponders", keyed("name", Schema::AtomicStruct)),
                ("responders", keyed("name", Schema::Any)),
            ]),
        ),
    ])
}

/// `(group, kind, version, status subresource, /status ignores metadata, schema)`.
type Entry = (
    &'static str,
    &'static str,
    &'static str,
    bool,
    bool,
    fn() -> Schema,
);

const TYPES: &[Entry] = &[
    ("", "Pod", "v1", true, false, pod),
    ("", "Node", "v1", true, false, node),
    ("", "Namespace", "v1", true, false, namespace),
    ("", "Event", "v1", false, false, core_event),
    ("events.k8s.io", "Event", "v1", false, false, events_event),
    (
        "policy",
        "PodDisruptionBudget",
        "v1",
        true,
        false,
        pod_disruption_budget,
    ),
    ("policy", "Eviction", "v1", false, false, policy_eviction),
    ("batch", "Job", "v1", true, false, job),
    ("coordination.k8s.io", "Lease", "v1", false, false, lease),
    (
        "lifecycle.k8s.io",
        "EvictionRequest",
        "v1alpha1",
        true,
        true,
        eviction_request,
    ),
    (
        "lifecycle.k8s.io",
        "Eviction",
        "v1alpha1",
        true,
        true,
        eviction,
    ),
];

/// The schema of a served type, or `None` for a type this server does not
/// register.
pub fn lookup(ty: TypeRef<'_>) -> Option<&'static TypeSchema> {
    static CELLS: [OnceLock<TypeSchema>; TYPES.len()] = [const { OnceLock::new() }; TYPES.len()];
    let i = TYPES
        .iter()
        .position(|(g, k, ..)| *g == ty.group && *k == ty.kind)?;
    let (_, _, version, status_subresource, status_ignores_metadata, build) = TYPES.get(i)?;
    let cell = CELLS.get(i)?;
    Some(cell.get_or_init(|| TypeSchema {
        version,
        root: build(),
        status_subresource: *status_subresource,
        status_ignores_metadata: *status_ignores_metadata,
    }))
}

/// The version this server serves `group`/`kind` at (`v1`, `v1alpha1`).
pub fn served_version(group: &str, kind: &str) -> Option<&'static str> {
    TYPES
        .iter()
        .find(|(g, k, ..)| *g == group && *k == kind)
        .map(|(_, _, v, ..)| *v)
}
