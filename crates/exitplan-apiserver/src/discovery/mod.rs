//! What clients learn before they act: `/version`, the discovery documents
//! (`/api`, `/api/v1`, `/apis`, `/apis/<group>/<version>`), OpenAPI (v2 and
//! v3) for `kubectl apply` and `kubectl explain`, server-side Table output
//! for `kubectl get`, and the label/field selector syntax of list and watch.
//!
//! INTERFACE STUB: the signatures are fixed; the implementations land with
//! the discovery work item.

use jiff::Timestamp;
use serde_json::Value;

use crate::registry::ResourceDef;
use crate::storage::Attrs;

/// `/version`.
pub fn version() -> Value {
    serde_json::json!({"major": "1", "minor": "37", "gitVersion": "v1.37.0-exitplan"})
}

/// `/api` (APIVersions).
pub fn core_versions() -> Value {
    serde_json::json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})
}

/// `/apis` (APIGroupList).
pub fn group_list() -> Value {
    serde_json::json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": []})
}

/// `/api/v1` or `/apis/<group>/<version>` (APIResourceList), if served.
pub fn resource_list(_group: &str, _version: &str) -> Option<Value> {
    None
}

/// `/apis/<group>` (APIGroup), if served.
pub fn group(_group: &str) -> Option<Value> {
    None
}

/// `/openapi/v2` (Swagger 2.0 JSON).
pub fn openapi_v2() -> Value {
    serde_json::json!({"swagger": "2.0", "info": {"title": "exitplan", "version": "v1.37.0"}, "paths": {}, "definitions": {}})
}

/// `/openapi/v3` (the index of group-version documents).
pub fn openapi_v3_index() -> Value {
    serde_json::json!({"paths": {}})
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/<group>/<version>`, if served.
pub fn openapi_v3(_group: &str, _version: &str) -> Option<Value> {
    None
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
    _def: &ResourceDef,
    _objects: &[Value],
    _list_meta: Value,
    _include: IncludeObject,
    _now: Timestamp,
) -> Value {
    serde_json::json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "columnDefinitions": [], "rows": []})
}

/// A parsed `labelSelector` query parameter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// The selector text, kept until the parser lands.
    pub text: String,
}

impl LabelSelector {
    /// Parses the string form (`a=b,c!=d,e in (x,y),!f`); the error is
    /// upstream's message (HTTP 400).
    pub fn parse(text: &str) -> Result<LabelSelector, String> {
        Ok(LabelSelector {
            text: text.to_owned(),
        })
    }

    /// Whether `attrs.labels` match.
    pub fn matches(&self, _attrs: &Attrs) -> bool {
        true
    }
}

/// A parsed `fieldSelector` query parameter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// The selector text, kept until the parser lands.
    pub text: String,
}

impl FieldSelector {
    /// Parses `a=b,c!=d` for `def`; unsupported fields are an error with
    /// upstream's message (`field label not supported: …`, HTTP 400).
    pub fn parse(text: &str, _def: &ResourceDef) -> Result<FieldSelector, String> {
        Ok(FieldSelector {
            text: text.to_owned(),
        })
    }

    /// Whether `attrs.fields` match.
    pub fn matches(&self, _attrs: &Attrs) -> bool {
        true
    }
}
