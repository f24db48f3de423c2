//! The schema tree the rules are compiled against and evaluated on: the parts
//! of a `JSONSchemaProps` that decide how a value is seen by CEL (its type and
//! format, int-or-string, preserved unknown fields, embedded resources) and how
//! old values correlate (list and map types), with each node's compiled rules.

use std::collections::BTreeMap;

use crate::rule::CompiledRule;

/// One schema node with the compiled `x-kubernetes-validations` rules declared on it.
#[derive(Debug, Default)]
pub(crate) struct Node {
    /// `type` (`object`, `array`, `string`, `integer`, `number`, `boolean`, or empty).
    pub ty: String,
    /// `format` (`date-time`, `date`, `duration`, `byte`, `int32`, …).
    pub format: String,
    /// `x-kubernetes-int-or-string: true`.
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown: bool,
    /// The root of a resource (the custom resource itself or an
    /// `x-kubernetes-embedded-resource`): `apiVersion`, `kind` and
    /// `metadata.name`/`metadata.generateName` are visible to rules.
    pub resource_root: bool,
    /// `properties`.
    pub properties: BTreeMap<String, Node>,
    /// `items`.
    pub items: Option<Box<Node>>,
    /// `additionalProperties` given as a schema.
    pub additional: Option<Box<Node>>,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`.
    pub map_type: Option<String>,
    /// The rules of this node, then those of its `allOf` branches.
    pub rules: Vec<CompiledRule>,
    /// Whether this node or any node below it has rules.
    pub has_rules: bool,
}

impl Node {
    /// Whether old and new map values correlate by key (`MapIsCorrelatable`).
    pub fn map_correlatable(&self) -> bool {
        matches!(
            self.map_type.as_deref(),
            None | Some("granular") | Some("atomic")
        )
    }

    /// Whether list items correlate with old items by their map keys.
    pub fn is_map_list(&self) -> bool {
        self.list_type.as_deref() == Some("map") && !self.list_map_keys.is_empty()
    }
}
