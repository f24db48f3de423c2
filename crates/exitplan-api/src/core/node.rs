//! Node (`pkg/registry/core/node/strategy.go`, `ValidateNode*`):
//! cluster-scoped, the status only through `/status`, taints unique by key
//! and effect, `podCIDRs` and `providerID` settable once.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Node, Taint};

use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, NameRule};
use crate::render;
use crate::strategy::{Context, Strategy};

/// The taint effects a node may carry.
pub const TAINT_EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];
const CIDR_FORBIDDEN: &str = "node updates may not change podCIDR except from \"\" to valid";
const PROVIDER_FORBIDDEN: &str = "node updates may not change providerID except from \"\" to valid";

/// `validateNodeTaints`.
pub fn validate_node_taints(taints: &[Taint], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    for (i, t) in taints.iter().enumerate() {
        let p = path.index(i);
        for msg in formats::is_qualified_name(&t.key) {
            errs.push(Error::invalid(&p.child("key"), t.key.as_str(), msg));
        }
        let value = t.value.as_deref().unwrap_or_default();
        let value_errs = formats::is_label_value(value);
        if !value_errs.is_empty() {
            errs.push(Error::invalid(
                &p.child("value"),
                value,
                value_errs.join(";"),
            ));
        }
        if t.effect.is_empty() {
            errs.push(Error::required(&p.child("effect"), ""));
        } else if !TAINT_EFFECTS.contains(&t.effect.as_str()) {
            errs.push(Error::not_supported(
                &p.child("effect"),
                t.effect.as_str(),
                TAINT_EFFECTS,
            ));
        }
        if !seen.insert((t.effect.as_str(), t.key.as_str())) {
            let mut dup = Error::duplicate(&p, BadValue::Json(internal_taint(t)));
            dup.detail = "taints must be unique by key and effect pair".to_owned();
            errs.push(dup);
        }
    }
    errs
}

/// The internal (untagged) `core.Taint` as apimachinery renders error values:
/// Go field names in declaration order.
fn internal_taint(t: &Taint) -> String {
    let added = t
        .time_added
        .as_ref()
        .map_or_else(|| "null".to_owned(), render::time);
    format!(
        "{{\"Key\":{},\"Value\":{},\"Effect\":{},\"TimeAdded\":{added}}}",
        render::string(&t.key),
        render::string(t.value.as_deref().unwrap_or_default()),
        render::string(&t.effect),
    )
}

fn taints(node: &Node) -> &[Taint] {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default()
}

/// `ValidateNode` (metadata and taints; status and resource checks are not
/// implemented).
pub fn validate_node(node: &Node) -> ErrorList {
    let mut errs = meta::validate_object_meta(&node.metadata, false, NameRule::Subdomain);
    errs.append(validate_node_taints(
        taints(node),
        &Path::new("spec").child("taints"),
    ));
    errs
}

/// `ValidateNodeUpdate`: metadata, taints, and `podCIDRs` / `providerID`
/// that may only be set once.
pub fn validate_node_update(new: &Node, old: &Node) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_node_taints(
        taints(new),
        &Path::new("spec").child("taints"),
    ));
    let spec = |n: &Node| n.spec.clone().unwrap_or_default();
    let (new_spec, old_spec) = (spec(new), spec(old));
    let old_cidrs = old_spec.pod_cidrs.unwrap_or_default();
    let new_cidrs = new_spec.pod_cidrs.unwrap_or_default();
    let cidr_path = Path::new("spec").child("podCIDRs");
    if !old_cidrs.is_empty() {
        if old_cidrs.len() != new_cidrs.len() {
            errs.push(Error::forbidden(&cidr_path, CIDR_FORBIDDEN));
        } else {
            for (a, b) in old_cidrs.iter().zip(&new_cidrs) {
                if a != b {
                    errs.push(Error::forbidden(&cidr_path, CIDR_FORBIDDEN));
                }
            }
        }
    }
    let old_provider = old_spec.provider_id.unwrap_or_default();
    if !old_provider.is_empty() && Some(old_provider) != new_spec.provider_id {
        errs.push(Error::forbidden(
            &Path::new("spec").child("providerID"),
            PROVIDER_FORBIDDEN,
        ));
    }
    errs
}

/// The Node registry strategy.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeStrategy;

impl Strategy for NodeStrategy {
    type Object = Node;
    const NAMESPACED: bool = false;

    fn validate_create(obj: &Node, _ctx: &Context<'_>) -> ErrorList {
        validate_node(obj)
    }

    /// The status is the stored one.
    fn prepare_for_update(new: &mut Node, old: &Node) {
        new.status.clone_from(&old.status);
    }

    fn validate_update(new: &Node, old: &Node, _ctx: &Context<'_>) -> ErrorList {
        validate_node_update(new, old)
    }

    /// The spec is the stored one.
    fn prepare_for_status_update(new: &mut Node, old: &Node) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(new: &Node, old: &Node, _ctx: &Context<'_>) -> ErrorList {
        validate_node_update(new, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::NodeSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn node(taints: Vec<Taint>) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some("n1".into()),
                ..Default::default()
            },
            spec: Some(NodeSpec {
                taints: Some(taints),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn taint(key: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            effect: effect.into(),
            ..Default::default()
        }
    }

    #[test]
    fn taints_are_checked() {
        assert!(
            validate_node(&node(vec![
                taint("a", "NoSchedule"),
                taint("a", "NoExecute")
            ]))
            .is_empty()
        );
        assert_eq!(
            validate_node(&node(vec![taint("a", "Never")])).to_string(),
            r#"spec.taints[0].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute""#
        );
        assert_eq!(
            validate_node(&node(vec![
                taint("a", "NoSchedule"),
                taint("a", "NoSchedule")
            ]))
            .to_string(),
            r#"spec.taints[1]: Duplicate value: {"Key":"a","Value":"","Effect":"NoSchedule","TimeAdded":null}: taints must be unique by key and effect pair"#
        );
    }

    #[test]
    fn provider_id_is_set_once() {
        let mut old = node(vec![]);
        old.metadata.resource_version = Some("1".into());
        let mut new = old.clone();
        new.spec.get_or_insert_with(NodeSpec::default).provider_id = Some("x".into());
        assert!(validate_node_update(&new, &old).is_empty());
        let mut changed = new.clone();
        changed
            .spec
            .get_or_insert_with(NodeSpec::default)
            .provider_id = Some("y".into());
        assert_eq!(
            validate_node_update(&changed, &new).to_string(),
            "spec.providerID: Forbidden: node updates may not change providerID except from \"\" to valid"
        );
    }
}
