//! Evaluating the compiled rules on an object (apiextensions
//! `cel/validation.go`): every rule at every instance of its node (list
//! items, map values), old values correlated by property, map key and
//! list-map keys, transition rules only where an old value correlates, and
//! failures of unchanged values reported as warnings (CRD validation
//! ratcheting).

use std::sync::Arc;

use exitplan_api::field::{BadValue, Error, ErrorList, Path};
use kube_cel::cel::objects::OptionalValue;
use kube_cel::cel::{ExecutionError, Value};
use serde_json::Value as Json;

use crate::rule::{CompiledRule, Reason};
use crate::schema::Node;
use crate::value::Env;

/// The result of validating one object.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outcome {
    /// The field errors, in apimachinery's rendering.
    pub errors: ErrorList,
    /// Failures of rules on values that did not change (ratcheted into
    /// warnings, each the full error text), for the response's `Warning` headers.
    pub warnings: Vec<String>,
}

/// The longest evaluated `messageExpression` kept (`MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE_EXPRESSION_BYTES: usize = 5 * 1024;

/// A value, its correlated old value and their schema node.
#[derive(Clone, Copy)]
struct Pair<'v> {
    new: &'v Json,
    old: &'v Json,
    node: &'v Node,
}

impl Pair<'_> {
    /// `CachedDeepEqual`.
    fn equal(&self) -> bool {
        deep_equal(self.node, self.new, self.old)
    }
}

/// Where a node's value correlates with its old value, for ratcheting
/// (`ratchetingOptions` over `common.CorrelatedObject`).
#[derive(Clone, Copy, Default)]
struct Ratchet<'v> {
    /// This node's pair, when it correlates.
    current: Option<Pair<'v>>,
    /// The nearest correlated ancestor's pair.
    parent: Option<Pair<'v>>,
    /// Whether this is the object root (its `apiVersion`/`kind` never ratchet).
    root: bool,
}

impl<'v> Ratchet<'v> {
    fn key(self, k: &str) -> Ratchet<'v> {
        let Some(cur) = self.current else {
            return self;
        };
        if self.root && (k == "apiVersion" || k == "kind") {
            return Ratchet::default();
        }
        let child = cur
            .node
            .properties
            .get(k)
            .or(cur.node.additional.as_deref());
        let current = match (child, cur.new.get(k), cur.old.get(k)) {
            (Some(node), Some(new), Some(old)) if cur.new.is_object() && cur.old.is_object() => {
                Some(Pair { new, old, node })
            }
            _ => None,
        };
        Ratchet {
            current,
            parent: self.current,
            root: false,
        }
    }

    fn index(self, i: usize) -> Ratchet<'v> {
        let Some(cur) = self.current else {
            return self;
        };
        let current = match (
            cur.new.as_array(),
            cur.old.as_array(),
            cur.node.items.as_deref(),
        ) {
            (Some(n), Some(o), Some(items)) if cur.node.is_map_list() => n.get(i).and_then(|new| {
                map_list_get(cur.node, o, new).map(|old| Pair {
                    new,
                    old,
                    node: items,
                })
            }),
            _ => None,
        };
        Ratchet {
            current,
            parent: self.current,
            root: false,
        }
    }

    /// `shouldRatchetError`.
    fn unchanged(&self) -> bool {
        match self.current {
            Some(c) => c.equal(),
            None => self.parent.is_some_and(|p| p.equal()),
        }
    }
}

/// Equality of a value and its old value through the schema: list-maps
/// compare item by key (order does not matter), object fields must be
/// declared (`CachedDeepEqual`).
fn deep_equal(node: &Node, new: &Json, old: &Json) -> bool {
    match (new, old) {
        (Json::Array(n), Json::Array(o)) => {
            if n.len() != o.len() {
                return false;
            }
            match node.items.as_deref() {
                Some(items) if node.is_map_list() => n.iter().all(|item| {
                    map_list_get(node, o, item).is_some_and(|old| deep_equal(items, item, old))
                }),
                _ => n == o,
            }
        }
        (Json::Object(n), Json::Object(o)) => {
            n.len() == o.len()
                && n.iter().all(|(k, v)| {
                    let child = node.properties.get(k).or(node.additional.as_deref());
                    matches!((child, o.get(k)), (Some(c), Some(ov)) if deep_equal(c, v, ov))
                })
        }
        _ => new == old,
    }
}

/// The old item of a list-map with the same key values as `item` (`makeMapList().Get`).
fn map_list_get<'v>(node: &Node, old: &'v [Json], item: &Json) -> Option<&'v Json> {
    let keys: Vec<Option<&Json>> = node.list_map_keys.iter().map(|k| item.get(k)).collect();
    old.iter().find(|o| {
        o.is_object()
            && node
                .list_map_keys
                .iter()
                .zip(&keys)
                .all(|(k, want)| o.get(k) == *want)
    })
}

/// Validates `new` (with `old` on update) against the rules below `root`.
pub(crate) fn validate(env: &Env, root: &Node, new: &Json, old: Option<&Json>) -> Outcome {
    let mut out = Outcome::default();
    let ratchet = Ratchet {
        current: old.map(|old| Pair {
            new,
            old,
            node: root,
        }),
        parent: None,
        root: true,
    };
    walk(env, root, &Path::default(), new, old, ratchet, &mut out);
    out
}

/// The path errors are reported at: upstream validates from a nil path,
/// which prints as `<nil>`.
fn shown(path: &Path) -> Path {
    if path.as_str().is_empty() {
        Path::new("<nil>")
    } else {
        path.clone()
    }
}

fn walk(
    env: &Env,
    node: &Node,
    path: &Path,
    new: &Json,
    old: Option<&Json>,
    ratchet: Ratchet<'_>,
    out: &mut Outcome,
) {
    if !node.has_rules || new.is_null() {
        return;
    }
    let old = old.filter(|o| !o.is_null());
    if !node.rules.is_empty() {
        eval_rules(env, node, path, new, old, ratchet, out);
    }
    match new {
        Json::Array(items) => {
            let Some(item_node) = node.items.as_deref().filter(|n| n.has_rules) else {
                return;
            };
            let old_items = old.and_then(Json::as_array).filter(|_| node.is_map_list());
            for (i, item) in items.iter().enumerate() {
                let old_item = old_items.and_then(|o| map_list_get(node, o, item));
                walk(
                    env,
                    item_node,
                    &path.index(i),
                    item,
                    old_item,
                    ratchet.index(i),
                    out,
                );
            }
        }
        Json::Object(obj) => {
            let old_obj = old
                .and_then(Json::as_object)
                .filter(|_| node.map_correlatable());
            if let Some(add) = node.additional.as_deref().filter(|n| n.has_rules) {
                for (k, v) in obj {
                    let old_v = old_obj.and_then(|o| o.get(k));
                    walk(env, add, &path.key(k), v, old_v, ratchet.key(k), out);
                }
            }
            for (k, v) in obj {
                if let Some(prop) = node.properties.get(k).filter(|n| n.has_rules) {
                    let old_v = old_obj.and_then(|o| o.get(k));
                    walk(env, prop, &path.child(k), v, old_v, ratchet.key(k), out);
                }
            }
        }
        _ => {}
    }
}

fn eval_rules(
    env: &Env,
    node: &Node,
    path: &Path,
    new: &Json,
    old: Option<&Json>,
    ratchet: Ratchet<'_>,
    out: &mut Outcome,
) {
    let self_val = env.to_cel(new, Some(node));
    let uses_old = node.rules.iter().any(|r| r.uses_old_self);
    let old_val = old.filter(|_| uses_old).map(|o| env.to_cel(o, Some(node)));
    let mut scope = env.ctx.new_inner_scope();
    scope.add_variable_from_value("self", self_val.clone());
    if let Some(o) = &old_val {
        scope.add_variable_from_value("oldSelf", o.clone());
    }
    let mut optional_scope = None;
    if node.rules.iter().any(|r| r.optional_old_self) {
        let mut s = env.ctx.new_inner_scope();
        s.add_variable_from_value("self", self_val);
        let opt = match &old_val {
            Some(o) => OptionalValue::of(o.clone()),
            None => OptionalValue::none(),
        };
        s.add_variable_from_value("oldSelf", Value::Opaque(Arc::new(opt)));
        optional_scope = Some(s);
    }
    let at = shown(path);
    for rule in &node.rules {
        if rule.uses_old_self && old.is_none() && !rule.optional_old_self {
            continue; // transition rules need a correlated old value
        }
        let s = match (&optional_scope, rule.optional_old_self) {
            (Some(o), true) => o,
            _ => &scope,
        };
        let passed = match rule.program.execute(s) {
            Ok(Value::Bool(b)) => b,
            Ok(_) => {
                out.errors.push(no_overload(&at, node, rule));
                continue;
            }
            Err(e) => {
                out.errors.push(runtime_error(&at, node, rule, &e));
                continue;
            }
        };
        if passed {
            continue;
        }
        let current = match &rule.field_path {
            Some(fp) => path.child(fp),
            None => at.clone(),
        };
        let detail = rule
            .message_expression
            .as_ref()
            .and_then(|me| match me.execute(s) {
                Ok(Value::String(m)) => {
                    let m = m.trim();
                    (!m.is_empty() && m.len() <= MAX_MESSAGE_EXPRESSION_BYTES && !m.contains('\n'))
                        .then(|| m.to_owned())
                }
                _ => None,
            })
            .unwrap_or_else(|| rule.message_or_default());
        let err = error_for_reason(&current, &node.ty, detail, rule.reason);
        let ratcheted = if rule.from_all_of {
            ratchet.parent.is_some_and(|p| p.equal())
        } else {
            ratchet.unchanged()
        };
        if !rule.uses_old_self && ratcheted {
            out.warnings.push(err.to_string());
        } else {
            out.errors.push(err);
        }
    }
}

/// `fieldErrorForReason`.
fn error_for_reason(path: &Path, ty: &str, detail: String, reason: Reason) -> Error {
    match reason {
        Reason::Forbidden => Error::forbidden(path, detail),
        Reason::Required => Error::required(path, detail),
        Reason::Duplicate => Error::duplicate(path, ty),
        Reason::Unset | Reason::Invalid => Error::invalid(path, ty, detail),
    }
}

fn no_overload(path: &Path, node: &Node, rule: &CompiledRule) -> Error {
    Error::invalid(
        path,
        BadValue::from(node.ty.as_str()),
        format!(
            "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {}",
            rule.error_string()
        ),
    )
}

/// A rule that failed to evaluate, worded as upstream words cel-go's errors.
fn runtime_error(path: &Path, node: &Node, rule: &CompiledRule, e: &ExecutionError) -> Error {
    let text = match e {
        ExecutionError::NoSuchOverload
        | ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::UnsupportedUnaryOperator(..)
        | ExecutionError::ValuesNotComparable(..)
        | ExecutionError::UnexpectedType { .. }
        | ExecutionError::UnsupportedTargetType { .. }
        | ExecutionError::NotSupportedAsMethod { .. }
        | ExecutionError::InvalidArgumentCount { .. } => return no_overload(path, node, rule),
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::IndexOutOfBounds(i) => match i {
            Value::Int(i) => format!("index out of bounds: {i}"),
            other => format!("index out of bounds: {other:?}"),
        },
        ExecutionError::UndeclaredReference(n) => format!("no such attribute: {n}"),
        ExecutionError::FunctionError { message, .. } => go_function_error(message),
        other => other.to_string(),
    };
    Error::invalid(
        path,
        BadValue::from(node.ty.as_str()),
        format!("{text} evaluating rule: {}", rule.error_string()),
    )
}

/// A library function's error in cel-go's words, where kube-cel words it differently.
fn go_function_error(message: &str) -> String {
    if let Some(f) = message
        .strip_prefix("cannot call ")
        .and_then(|m| m.strip_suffix(" on empty list"))
    {
        return format!("{f} called on empty list");
    }
    message.to_owned()
}
