//! A JSON value as a rule sees it (apiextensions `UnstructuredToVal`): typed by
//! its schema node — `format: date-time|date` as timestamps, `duration` as
//! durations, `byte` as decoded bytes, `number` always a double, declared
//! properties under their escaped names, a resource root's `apiVersion`,
//! `kind` and `metadata.name`/`generateName`.

use std::collections::HashMap;
use std::sync::Arc;

use kube_cel::KubeCelExt;
use kube_cel::cel::objects::{Key, Map};
use kube_cel::cel::{Context, ExecutionError, FunctionContext, ResolveResult, Value};

use crate::escape::escape;
use crate::rule::Program;
use crate::schema::Node;

/// The evaluation environment: every CEL function a CRD rule may call, and
/// the conversions of formatted strings.
pub(crate) struct Env {
    /// The root context holding the functions.
    pub ctx: Context<'static>,
    timestamp: Option<Program>,
    date: Option<Program>,
    duration: Option<Program>,
    bytes: Option<Program>,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Env")
    }
}

impl Env {
    /// The standard functions plus the Kubernetes libraries, with cel-go's
    /// `size` of strings (code points), `string(bool)`, timestamp accessors in
    /// UTC or a given zone, and `type()` compared
    /// against the type identifiers (`type(self.x) == int`).
    pub fn new() -> Env {
        let mut ctx = Context::default().with_all();
        ctx.add_function("size", size);
        crate::time::register(&mut ctx);
        let originals = Arc::new(Context::default().with_all());
        for &name in UNARY {
            let Ok(call) = Program::compile(&format!("{name}(x)")) else {
                continue;
            };
            let Ok(method) = Program::compile(&format!("x.{name}()")) else {
                continue;
            };
            let originals = Arc::clone(&originals);
            ctx.add_function(name, move |ftx: &FunctionContext| -> ResolveResult {
                let program = match (&ftx.this, ftx.args.len()) {
                    (None, 1) => &call,
                    (Some(_), 0) => &method,
                    _ => return Err(ExecutionError::NoSuchOverload),
                };
                let x = operand(ftx)?;
                if let (Value::Bool(b), "string") = (&x, name) {
                    return Ok(Value::String(Arc::new(b.to_string())));
                }
                let mut scope = originals.new_inner_scope();
                scope.add_variable_from_value("x", x);
                program.execute(&scope)
            });
        }
        ctx.add_function("type", |ftx: &FunctionContext| -> ResolveResult {
            Ok(Value::String(Arc::new(
                type_name(&operand(ftx)?).to_owned(),
            )))
        });
        for t in [
            "int",
            "uint",
            "double",
            "bool",
            "string",
            "bytes",
            "list",
            "map",
            "null_type",
            "type",
        ] {
            ctx.add_variable_from_value(t, t);
        }
        let protobuf: HashMap<Key, Value> = [
            (key("Duration"), Value::from("google.protobuf.Duration")),
            (key("Timestamp"), Value::from("google.protobuf.Timestamp")),
        ]
        .into_iter()
        .collect();
        let google: HashMap<Key, Value> = [(
            key("protobuf"),
            Value::Map(Map {
                map: Arc::new(protobuf),
            }),
        )]
        .into_iter()
        .collect();
        ctx.add_variable_from_value(
            "google",
            Value::Map(Map {
                map: Arc::new(google),
            }),
        );
        Env {
            ctx,
            timestamp: Program::compile("timestamp(s)").ok(),
            date: Program::compile("timestamp(s + 'T00:00:00Z')").ok(),
            duration: Program::compile("duration(s)").ok(),
            bytes: Program::compile("base64.decode(s)").ok(),
        }
    }

    fn convert_str(&self, program: Option<&Program>, s: &str) -> Option<Value> {
        let program = program?;
        let mut scope = self.ctx.new_inner_scope();
        scope.add_variable_from_value("s", s);
        program.execute(&scope).ok()
    }

    /// `v` typed by `node` (`None`: no schema, converted as plain JSON).
    pub fn to_cel(&self, v: &serde_json::Value, node: Option<&Node>) -> Value {
        let Some(node) = node else {
            return plain(v);
        };
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => {
                if node.ty == "number" {
                    Value::Float(n.as_f64().unwrap_or(f64::NAN))
                } else {
                    number(n)
                }
            }
            serde_json::Value::String(s) => {
                if node.ty == "string" {
                    let program = match node.format.as_str() {
                        "date-time" => self.timestamp.as_ref(),
                        "date" => self.date.as_ref(),
                        "duration" => self.duration.as_ref(),
                        "byte" => self.bytes.as_ref(),
                        _ => None,
                    };
                    if program.is_some()
                        && let Some(v) = self.convert_str(program, s)
                    {
                        return v;
                    }
                }
                Value::String(Arc::new(s.clone()))
            }
            serde_json::Value::Array(items) => Value::List(Arc::new(
                items
                    .iter()
                    .map(|i| self.to_cel(i, node.items.as_deref()))
                    .collect(),
            )),
            serde_json::Value::Object(obj) => self.object(obj, node),
        }
    }

    fn object(&self, obj: &serde_json::Map<String, serde_json::Value>, node: &Node) -> Value {
        let mut map: HashMap<Key, Value> = HashMap::with_capacity(obj.len());
        // A null field is absent to rules, as upstream's unstructured maps treat it.
        if let Some(add) = &node.additional {
            for (k, v) in obj {
                if !v.is_null() {
                    map.insert(key(k), self.to_cel(v, Some(add)));
                }
            }
        } else if !node.properties.is_empty() || node.ty == "object" || node.resource_root {
            for (k, v) in obj {
                if node.resource_root && k == "metadata" {
                    continue;
                }
                if v.is_null() {
                    continue;
                }
                if let Some(prop) = node.properties.get(k) {
                    if let Some(name) = escape(k) {
                        map.insert(key(&name), self.to_cel(v, Some(prop)));
                    }
                } else if node.resource_root
                    && let ("apiVersion" | "kind", serde_json::Value::String(s)) = (k.as_str(), v)
                {
                    map.insert(key(k), Value::String(Arc::new(s.clone())));
                }
            }
            if node.resource_root {
                // The declared metadata of a resource root is replaced by
                // name/generateName, as upstream's WithTypeAndObjectMeta does.
                if let Some(serde_json::Value::Object(meta)) = obj.get("metadata") {
                    let mut m = HashMap::new();
                    for f in ["name", "generateName"] {
                        if let Some(serde_json::Value::String(s)) = meta.get(f) {
                            m.insert(key(f), Value::String(Arc::new(s.clone())));
                        }
                    }
                    map.insert(key("metadata"), Value::Map(Map { map: Arc::new(m) }));
                }
            }
        } else {
            // Untyped (x-kubernetes-preserve-unknown-fields without a type).
            for (k, v) in obj {
                map.insert(key(k), plain(v));
            }
        }
        Value::Map(Map { map: Arc::new(map) })
    }
}

/// One-argument conversion and library functions re-registered so that an
/// argument that fails to evaluate keeps its own error (`no such key: x`); the
/// interpreter's argument extractor reports every such failure as "Missing
/// argument or target". `string` also converts booleans, as cel-go does.
const UNARY: &[&str] = &[
    "string",
    "int",
    "uint",
    "double",
    "bytes",
    "duration",
    "timestamp",
    "dyn",
    "quantity",
    "isQuantity",
    "url",
    "isURL",
    "ip",
    "isIP",
    "cidr",
    "isCIDR",
    "semver",
    "isSemver",
];

/// The target of a method call or the first argument of a function call,
/// keeping the argument's own error (the interpreter's `This` extractor
/// replaces it with "Missing argument or target").
fn operand(ftx: &FunctionContext) -> ResolveResult {
    if let Some(this) = &ftx.this {
        return Ok(this.clone());
    }
    match ftx.args.first() {
        Some(arg) => ftx.ptx.resolve(arg),
        None => Err(ExecutionError::MissingArgumentOrTarget),
    }
}

/// `size()`: strings count code points, as in cel-go.
fn size(ftx: &FunctionContext) -> ResolveResult {
    let n = match &operand(ftx)? {
        Value::List(l) => l.len(),
        Value::Map(m) => m.map.len(),
        Value::String(s) => s.chars().count(),
        Value::Bytes(b) => b.len(),
        _ => return Err(ExecutionError::NoSuchOverload),
    };
    Ok(Value::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

/// The name `type(v)` is compared with.
fn type_name(v: &Value) -> &str {
    match v {
        Value::List(_) => "list",
        Value::Map(_) => "map",
        Value::Function(..) => "function",
        Value::Int(_) => "int",
        Value::UInt(_) => "uint",
        Value::Float(_) => "double",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::Bool(_) => "bool",
        Value::Duration(_) => "google.protobuf.Duration",
        Value::Timestamp(_) => "google.protobuf.Timestamp",
        Value::Opaque(o) => o.runtime_type_name(),
        Value::Null => "null_type",
    }
}

fn key(s: &str) -> Key {
    Key::String(Arc::new(s.to_owned()))
}

fn number(n: &serde_json::Number) -> Value {
    if let Some(i) = n.as_i64() {
        Value::Int(i)
    } else if let Some(u) = n.as_u64() {
        Value::UInt(u)
    } else {
        Value::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// JSON with no schema: objects keep their keys.
fn plain(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => number(n),
        serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(a) => Value::List(Arc::new(a.iter().map(plain).collect())),
        serde_json::Value::Object(o) => {
            let map = o.iter().map(|(k, v)| (key(k), plain(v))).collect();
            Value::Map(Map { map: Arc::new(map) })
        }
    }
}
