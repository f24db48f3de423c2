//! What clients learn before they act: `/version`, the discovery documents
//! (`/api`, `/api/v1`, `/apis`, `/apis/<group>`, `/apis/<group>/<version>`,
//! legacy and aggregated), OpenAPI (v2 and v3) for `kubectl apply` and
//! `kubectl explain`, server-side Table output for `kubectl get`, and the
//! label/field selector syntax of list and watch.
//!
//! * [`documents`] — `/version`, discovery, and the `Accept` negotiation
//!   of aggregated discovery ([`wants_aggregated`]).
//! * [`openapi`] — the OpenAPI documents, built from definitions generated
//!   out of k8s-openapi (see `exitplan-openapi-gen`).
//! * [`table`] — printers per kind.
//! * [`label_selector`], [`field_selector`] — the query parameters.

pub mod documents;
pub mod field_selector;
pub mod label_selector;
pub mod openapi;
pub mod table;

use jiff::Timestamp;
use serde_json::Value;

pub use documents::{
    AGGREGATED_CONTENT_TYPE, aggregated_core, aggregated_groups, group, resource_list,
    wants_aggregated,
};

use crate::registry::ResourceDef;
use crate::storage::Attrs;

/// `/version`.
pub fn version() -> Value {
    documents::version()
}

/// `/api` (APIVersions).
pub fn core_versions() -> Value {
    documents::core_versions()
}

/// `/apis` (APIGroupList).
pub fn group_list(served: &crate::registry::Served) -> Value {
    documents::group_list(served)
}

/// `/openapi/v2` (Swagger 2.0 JSON).
pub fn openapi_v2() -> Value {
    openapi::v2()
}

/// `/openapi/v3` (the index of group-version documents).
pub fn openapi_v3_index() -> Value {
    openapi::v3_index()
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/<group>/<version>`, if served
/// (`group` is `""` for the core group).
pub fn openapi_v3(group: &str, version: &str) -> Option<Value> {
    openapi::v3(group, version)
}

/// Whether to embed objects in Table rows (`?includeObject=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// Rows carry no object.
    None,
    /// Rows carry `PartialObjectMetadata` (kubectl's default).
    #[default]
    Metadata,
    /// Rows carry the whole object.
    Object,
}

/// A `meta.k8s.io/v1` Table of `objects` for `kubectl get`; `list_meta` is
/// the list's `metadata` (resourceVersion, continue).
pub fn table(
    def: &ResourceDef,
    objects: &[Value],
    list_meta: Value,
    include: IncludeObject,
    now: Timestamp,
) -> Value {
    table::table(def, objects, list_meta, include, now)
}

/// A parsed `labelSelector` query parameter (empty: everything).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// The requirements, sorted by key; all must hold.
    pub requirements: Vec<label_selector::Requirement>,
}

impl LabelSelector {
    /// Parses the string form (`a=b,c!=d,e in (x,y),!f`); the error is
    /// upstream's message (HTTP 400).
    pub fn parse(text: &str) -> Result<LabelSelector, String> {
        Ok(LabelSelector {
            requirements: label_selector::parse(text)?,
        })
    }

    /// Whether `attrs.labels` match.
    pub fn matches(&self, attrs: &Attrs) -> bool {
        self.requirements.iter().all(|r| r.matches(&attrs.labels))
    }
}

/// A parsed `fieldSelector` query parameter (empty: everything).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// The terms, converted to attribute names; all must hold.
    pub terms: Vec<field_selector::Term>,
}

impl FieldSelector {
    /// Parses `a=b,c!=d` for `def`; unsupported fields are an error with
    /// upstream's message (`field label not supported: …`, HTTP 400).
    pub fn parse(text: &str, def: &ResourceDef) -> Result<FieldSelector, String> {
        Ok(FieldSelector {
            terms: field_selector::parse(text, def)?,
        })
    }

    /// Whether `attrs.fields` match (a missing attribute reads as `""`).
    pub fn matches(&self, attrs: &Attrs) -> bool {
        self.terms.iter().all(|t| {
            let have = attrs.fields.get(&t.field).map(String::as_str).unwrap_or("");
            (have == t.value) != t.negated
        })
    }
}
