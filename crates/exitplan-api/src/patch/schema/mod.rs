//! The merge behaviour of every value strategic merge patch and server-side
//! apply touch: which lists merge by which keys, which maps and structs are
//! owned whole.
//!
//! ```text
//!   openapi/definitions.json ──► builtin.rs ──► one TypeSchema per served
//!   (x-kubernetes-patch-*,        (+ OVERRIDES  kind, built once (OnceLock),
//!    x-kubernetes-list-*,           where the    looked up by group/kind
//!    x-kubernetes-map-type, $ref)   file is wrong)
//!
//!   CRD openAPIV3Schema ──────► crd.rs ──────► TypeSchema of a custom
//!   (x-kubernetes-list-type,                    resource version, owned by
//!    list-map-keys, map-type,                   the caller
//!    preserve-unknown-fields)
//! ```
//!
//! A [`Target`] names the kind a patch works on and carries its schema (or
//! none). What a missing schema means is explicit: strategic merge patch is
//! refused as kube-apiserver refuses it for custom resources (415), and
//! apply treats the object as untyped ([`Schema::Any`] everywhere: maps merge
//! key by key, lists are atomic, no reset fields).

mod builtin;
mod crd;

use serde_json::Value;

use super::TypeRef;

pub use builtin::served_version;

/// The patch media types kube-apiserver accepts for built-in kinds, in its
/// order.
pub const BUILTIN_PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// The patch media types apiextensions-apiserver accepts for custom
/// resources (`customresource_handler.go`'s `supportedTypes`: no strategic
/// merge patch).
pub const CUSTOM_RESOURCE_PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

/// How a value merges.
#[derive(Debug)]
pub enum Schema {
    /// A struct: its known fields by name (sorted); other fields are
    /// [`Schema::Any`].
    Struct(Fields),
    /// A struct owned and replaced whole by apply (`+structType=atomic`);
    /// strategic merge patch still merges it field by field.
    AtomicStruct(Fields),
    /// A map owned and replaced whole by apply (`+mapType=atomic`);
    /// strategic merge patch still merges it key by key.
    AtomicMap,
    /// A `map[string]T` merged key by key.
    Map(Box<Schema>),
    /// A list.
    List(Box<ListSchema>),
    /// Not described (a scalar, or an untyped value): struct-like, lists
    /// inside replaced whole.
    Any,
    /// The built-in definition with this index (a `$ref`), resolved through
    /// the built-in table; definitions may be recursive (`JSONSchemaProps`).
    Def(usize),
}

/// A struct's fields, sorted by name.
#[derive(Debug, Default)]
pub struct Fields(Vec<(Box<str>, Schema)>);

impl Fields {
    /// The fields, sorted by name for lookup.
    pub fn new(mut fields: Vec<(Box<str>, Schema)>) -> Fields {
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        Fields(fields)
    }

    fn get(&self, name: &str) -> Option<&Schema> {
        self.0
            .binary_search_by(|(n, _)| (**n).cmp(name))
            .ok()
            .and_then(|i| self.0.get(i))
            .map(|(_, s)| s)
    }
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
    /// The Go field has no `omitempty` (`PodSpec.containers`, a required
    /// field): upstream's typed values always carry it, so it never appears
    /// or disappears as a whole and is never a member of an update's field
    /// set.
    pub always_present: bool,
}

/// Strategic merge patch list strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SmpList {
    /// No `patchStrategy`: the patch's list replaces the original.
    Replace,
    /// `patchStrategy:"merge"` on a list of primitives: union.
    MergePrimitives,
    /// `patchStrategy:"merge" patchMergeKey:"<key>"`.
    MergeKey(Box<str>),
}

impl SmpList {
    /// The merge key (`""` when the list has none).
    pub fn merge_key(&self) -> &str {
        match self {
            SmpList::MergeKey(k) => k,
            _ => "",
        }
    }
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
    Map(Vec<(Box<str>, Option<Value>)>),
}

/// The shared "no metadata" schema.
pub static ANY: Schema = Schema::Any;

impl Schema {
    /// This schema with a built-in `$ref` followed.
    fn resolve(&self) -> &Schema {
        match self {
            Schema::Def(i) => builtin::definition(*i),
            other => other,
        }
    }

    /// The schema of field or map entry `name` of this value.
    pub fn field(&self, name: &str) -> &Schema {
        match self.resolve() {
            Schema::Struct(fields) | Schema::AtomicStruct(fields) => {
                fields.get(name).unwrap_or(&ANY)
            }
            Schema::Map(elem) => elem,
            _ => &ANY,
        }
    }

    /// Whether keys of this map-shaped value are struct field names (as
    /// opposed to entries of a `map[string]T`).
    pub fn has_named_fields(&self) -> bool {
        matches!(
            self.resolve(),
            Schema::Struct(_) | Schema::Any | Schema::AtomicStruct(_)
        )
    }

    /// Whether this is a granular `map[string]T`.
    pub fn is_map(&self) -> bool {
        matches!(self.resolve(), Schema::Map(_))
    }

    /// Whether apply treats this value as one leaf.
    pub fn is_atomic(&self) -> bool {
        match self.resolve() {
            Schema::AtomicStruct(_) | Schema::AtomicMap => true,
            Schema::List(l) => l.ssa == SsaList::Atomic,
            _ => false,
        }
    }

    /// The list schema, if this is a list with metadata.
    pub fn list(&self) -> Option<&ListSchema> {
        match self.resolve() {
            Schema::List(l) => Some(l),
            _ => None,
        }
    }
}

/// The schema of one kind at one version, and the fields apply ignores on
/// the main resource and on `/status` (upstream's `GetResetFields`).
#[derive(Debug)]
pub struct TypeSchema {
    /// The served version (`v1`, `v1alpha1`).
    pub version: String,
    /// The object's schema.
    pub root: Schema,
    /// Whether the type has a `/status` subresource (the main resource then
    /// ignores `status`, `/status` ignores `spec`).
    pub status_subresource: bool,
    /// Whether `/status` also ignores `metadata` (the lifecycle.k8s.io kinds).
    pub status_ignores_metadata: bool,
    /// Whether strategic merge patch is accepted: built-in kinds have Go
    /// types with patch tags; custom resources do not.
    pub strategic: bool,
}

impl TypeSchema {
    /// The patch media types a PATCH of this kind accepts, in upstream's
    /// order (what a 415 lists).
    pub fn patch_types(&self) -> &'static [&'static str] {
        if self.strategic {
            BUILTIN_PATCH_TYPES
        } else {
            CUSTOM_RESOURCE_PATCH_TYPES
        }
    }

    /// The schema of one version of a custom resource, from the version's
    /// `schema.openAPIV3Schema` (`None`: no schema, every field untyped).
    /// `metadata` is always `ObjectMeta`'s, as apiextensions-apiserver
    /// injects it; the list/map/struct types come from
    /// `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
    /// `x-kubernetes-map-type` (lists default to atomic, maps and structs to
    /// granular) and `x-kubernetes-preserve-unknown-fields` (untyped).
    /// Strategic merge patch is refused.
    pub fn custom_resource(
        version: &str,
        schema: Option<
            &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps,
        >,
        status_subresource: bool,
    ) -> TypeSchema {
        TypeSchema {
            version: version.to_owned(),
            root: crd::root(schema),
            status_subresource,
            status_ignores_metadata: false,
            strategic: false,
        }
    }
}

/// What a patch or apply works on: the kind, and its schema when known.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// API group (`""` for core).
    pub group: &'a str,
    /// Kind.
    pub kind: &'a str,
    /// The kind's schema; `None`: strategic merge patch is refused (415)
    /// and apply treats the object as untyped, at the version its
    /// `apiVersion` names.
    pub schema: Option<&'a TypeSchema>,
}

impl<'a> Target<'a> {
    /// A built-in kind, with the schema derived from the OpenAPI
    /// definitions (`None` for a kind they do not describe).
    pub fn builtin(ty: TypeRef<'a>) -> Target<'a> {
        Target {
            group: ty.group,
            kind: ty.kind,
            schema: builtin::lookup(ty.group, ty.kind),
        }
    }

    /// A custom resource kind with the schema of the requested version
    /// ([`TypeSchema::custom_resource`]).
    pub fn custom(group: &'a str, kind: &'a str, schema: &'a TypeSchema) -> Target<'a> {
        Target {
            group,
            kind,
            schema: Some(schema),
        }
    }

    /// A kind without any schema (see [`Target::schema`]).
    pub fn untyped(group: &'a str, kind: &'a str) -> Target<'a> {
        Target {
            group,
            kind,
            schema: None,
        }
    }

    /// The patch media types a PATCH of this kind accepts, in upstream's
    /// order: without strategic merge patch for custom resources and kinds
    /// without a schema.
    pub fn patch_types(&self) -> &'static [&'static str] {
        self.schema
            .map_or(CUSTOM_RESOURCE_PATCH_TYPES, TypeSchema::patch_types)
    }

    /// The root schema ([`Schema::Any`] without a schema).
    pub fn root(&self) -> &'a Schema {
        self.schema.map_or(&ANY, |t| &t.root)
    }
}

impl<'a> From<TypeRef<'a>> for Target<'a> {
    fn from(ty: TypeRef<'a>) -> Target<'a> {
        Target::builtin(ty)
    }
}
