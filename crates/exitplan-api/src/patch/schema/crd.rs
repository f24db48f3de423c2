//! The schema of a custom resource version, from its CRD's structural
//! `openAPIV3Schema`, as apiextensions-apiserver builds its type converter
//! (structured-merge-diff's view of the schema):
//!
//! * `metadata` is `ObjectMeta` (the server injects it; the CRD may only
//!   restrict `name` and `generateName`), `apiVersion` and `kind` scalars;
//! * `type: array` → a list, `x-kubernetes-list-type` `atomic` (default),
//!   `set` or `map` with `x-kubernetes-list-map-keys`; never merged by
//!   strategic merge patch (refused for custom resources anyway);
//! * `type: object` with `properties` → a struct, with
//!   `additionalProperties` → a map; `x-kubernetes-map-type: atomic` makes
//!   either atomic;
//! * `x-kubernetes-preserve-unknown-fields` without `properties`, and
//!   anything else, is untyped ([`Schema::Any`]).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

use super::{Fields, ListSchema, Schema, SmpList, SsaList, builtin};

/// The definition name of `ObjectMeta`.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The root schema of a custom resource (`None`: no schema).
pub fn root(schema: Option<&JSONSchemaProps>) -> Schema {
    let mut fields: Vec<(Box<str>, Schema)> = schema
        .and_then(|s| s.properties.as_ref())
        .map(|props| {
            props
                .iter()
                .filter(|(name, _)| !matches!(name.as_str(), "apiVersion" | "kind" | "metadata"))
                .map(|(name, s)| (Box::from(name.as_str()), compile(s)))
                .collect()
        })
        .unwrap_or_default();
    let meta = builtin::definition_named(OBJECT_META).unwrap_or(Schema::Any);
    fields.push(("metadata".into(), meta));
    fields.push(("apiVersion".into(), Schema::Any));
    fields.push(("kind".into(), Schema::Any));
    Schema::Struct(Fields::new(fields))
}

fn atomic(s: &JSONSchemaProps) -> bool {
    s.x_kubernetes_map_type.as_deref() == Some("atomic")
}

/// The schema of one value.
fn compile(s: &JSONSchemaProps) -> Schema {
    match s.type_.as_deref() {
        Some("array") => {
            let elem = match &s.items {
                Some(JSONSchemaPropsOrArray::Schema(items)) => compile(items),
                _ => Schema::Any,
            };
            let ssa = match s.x_kubernetes_list_type.as_deref() {
                Some("set") => SsaList::Set,
                Some("map") => SsaList::Map(
                    s.x_kubernetes_list_map_keys
                        .iter()
                        .flatten()
                        .map(|k| (Box::from(k.as_str()), None))
                        .collect(),
                ),
                _ => SsaList::Atomic,
            };
            Schema::List(Box::new(ListSchema {
                smp: SmpList::Replace,
                ssa,
                elem,
                always_present: false,
            }))
        }
        Some("object") => {
            if let Some(props) = s.properties.as_ref().filter(|p| !p.is_empty()) {
                let fields = Fields::new(
                    props
                        .iter()
                        .map(|(name, p)| (Box::from(name.as_str()), compile(p)))
                        .collect(),
                );
                return if atomic(s) {
                    Schema::AtomicStruct(fields)
                } else {
                    Schema::Struct(fields)
                };
            }
            let values = match &s.additional_properties {
                Some(JSONSchemaPropsOrBool::Schema(v)) => compile(v),
                Some(JSONSchemaPropsOrBool::Bool(true)) => Schema::Any,
                _ => return Schema::Any,
            };
            if atomic(s) {
                Schema::AtomicMap
            } else {
                Schema::Map(Box::new(values))
            }
        }
        _ => Schema::Any,
    }
}
