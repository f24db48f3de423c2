//! A static check of a parsed rule against the schema of `self`, standing in
//! for cel-go's type checker where it can be exact: undeclared references,
//! undefined fields of declared objects, `==`/`!=` between two different
//! scalar types, and the result type of a rule (`bool`) or of a
//! `messageExpression` (`string`). Everything the schema leaves open is
//! `dyn` and passes; those mistakes surface when the rule is evaluated.

use kube_cel::cel::common::ast::{Expr, IdedExpr, LiteralValue};

use crate::escape::escape;
use crate::schema::Node;

/// The static type of an expression, as far as the check knows it.
#[derive(Clone, Debug)]
pub(crate) enum Ty<'a> {
    /// Unknown until evaluation.
    Dyn,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `null_type`.
    Null,
    /// `google.protobuf.Duration`.
    Duration,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// `list(T)`.
    List(Box<Ty<'a>>),
    /// `map(string, T)`.
    Map(Box<Ty<'a>>),
    /// An object with the declared properties of a schema node.
    Object(&'a Node),
    /// `metadata` of a resource root: only `name` and `generateName`.
    Meta,
    /// `optional_type(T)`: `oldSelf` of an `optionalOldSelf` rule.
    Optional(Box<Ty<'a>>),
}

impl Ty<'_> {
    /// cel-go's name of a scalar type, for overload errors.
    fn scalar_name(&self) -> Option<&'static str> {
        Some(match self {
            Ty::Bool => "bool",
            Ty::Int => "int",
            Ty::Uint => "uint",
            Ty::Double => "double",
            Ty::String => "string",
            Ty::Bytes => "bytes",
            Ty::Duration => "google.protobuf.Duration",
            Ty::Timestamp => "google.protobuf.Timestamp",
            _ => return None,
        })
    }

    /// cel-go's name of a known type; `None` for `dyn`.
    fn full_name(&self) -> Option<String> {
        if let Some(n) = self.scalar_name() {
            return Some(n.to_owned());
        }
        let inner = |t: &Ty<'_>| t.full_name().unwrap_or_else(|| "dyn".to_owned());
        Some(match self {
            Ty::Null => "null_type".to_owned(),
            Ty::List(t) => format!("list({})", inner(t)),
            Ty::Map(t) => format!("map(string, {})", inner(t)),
            Ty::Object(_) | Ty::Meta => "object".to_owned(),
            Ty::Optional(t) => format!("optional_type({})", inner(t)),
            _ => return None,
        })
    }

    fn is_numeric(&self) -> bool {
        matches!(self, Ty::Int | Ty::Uint | Ty::Double)
    }
}

/// The type a value of `node` has in CEL (apiserver `SchemaDeclType`).
pub(crate) fn node_ty(node: &Node) -> Ty<'_> {
    if node.int_or_string {
        return Ty::Dyn;
    }
    match node.ty.as_str() {
        "object" => {
            if let Some(add) = &node.additional {
                Ty::Map(Box::new(node_ty(add)))
            } else if node.properties.is_empty() && node.preserve_unknown && !node.resource_root {
                Ty::Dyn
            } else {
                Ty::Object(node)
            }
        }
        "array" => Ty::List(Box::new(node.items.as_deref().map_or(Ty::Dyn, node_ty))),
        "string" => match node.format.as_str() {
            "byte" => Ty::Bytes,
            "duration" => Ty::Duration,
            "date" | "date-time" => Ty::Timestamp,
            _ => Ty::String,
        },
        "integer" => Ty::Int,
        "number" => Ty::Double,
        "boolean" => Ty::Bool,
        _ => Ty::Dyn,
    }
}

/// Identifiers that name types or packages (`type(x) == int`,
/// `google.protobuf.Duration`): never undeclared.
const TYPE_IDENTS: &[&str] = &[
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
    "google",
    "dyn",
    "cel",
    "lists",
    "optional",
    "sets",
    "math",
    "strings",
    "base64",
    "isURL",
    "url",
    "ip",
    "cidr",
    "quantity",
    "isQuantity",
    "isIP",
    "isCIDR",
    "isSemver",
    "semver",
    "format",
];

/// One problem found, at a byte offset of the source.
#[derive(Debug)]
pub(crate) struct Issue {
    /// Byte offset in the source where the problem is reported.
    pub offset: usize,
    /// cel-go's message.
    pub message: String,
}

/// Checks `expr` (parsed from `source`) with `self`/`oldSelf` of type
/// `self_ty`; returns the expression's type and the issues found.
pub(crate) fn check<'a>(
    source: &str,
    expr: &IdedExpr,
    self_ty: Ty<'a>,
    old_self_ty: Ty<'a>,
) -> (Ty<'a>, Vec<Issue>) {
    check_in_scope(
        source,
        expr,
        vec![
            ("self".to_owned(), self_ty),
            ("oldSelf".to_owned(), old_self_ty),
        ],
    )
}

/// Checks `expr` (parsed from `source`) with the declared variables of
/// `scope`; returns the expression's type and the issues found.
pub(crate) fn check_in_scope<'a>(
    source: &str,
    expr: &IdedExpr,
    scope: Vec<(String, Ty<'a>)>,
) -> (Ty<'a>, Vec<Issue>) {
    let mut c = Checker {
        source,
        issues: Vec::new(),
        scope,
    };
    let ty = c.expr(expr);
    c.issues.sort_by_key(|i| i.offset);
    (ty, c.issues)
}

struct Checker<'s, 'a> {
    source: &'s str,
    issues: Vec<Issue>,
    scope: Vec<(String, Ty<'a>)>,
}

impl<'a> Checker<'_, 'a> {
    fn lookup(&self, name: &str) -> Option<Ty<'a>> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
    }

    fn issue(&mut self, offset: usize, message: String) {
        if !self.issues.iter().any(|i| i.message == message) {
            self.issues.push(Issue { offset, message });
        }
    }

    fn expr(&mut self, e: &IdedExpr) -> Ty<'a> {
        match &e.expr {
            Expr::Unspecified | Expr::Struct(_) => Ty::Dyn,
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Ty::Bool,
                LiteralValue::Bytes(_) => Ty::Bytes,
                LiteralValue::Double(_) => Ty::Double,
                LiteralValue::Int(_) => Ty::Int,
                LiteralValue::Null => Ty::Null,
                LiteralValue::String(_) => Ty::String,
                LiteralValue::UInt(_) => Ty::Uint,
            },
            Expr::Ident(name) => {
                if let Some(t) = self.lookup(name) {
                    t
                } else {
                    if !TYPE_IDENTS.contains(&name.as_str()) && !name.starts_with('@') {
                        let offset = find_ident(self.source, name).unwrap_or(0);
                        self.issue(
                            offset,
                            format!("undeclared reference to '{name}' (in container '')"),
                        );
                    }
                    Ty::Dyn
                }
            }
            Expr::List(l) => {
                let mut elem = Ty::Dyn;
                for (i, x) in l.elements.iter().enumerate() {
                    let t = self.expr(x);
                    if i == 0 {
                        elem = t;
                    }
                }
                Ty::List(Box::new(elem))
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let kube_cel::cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                        self.expr(&me.key);
                        self.expr(&me.value);
                    }
                }
                Ty::Map(Box::new(Ty::Dyn))
            }
            Expr::Select(s) => {
                let operand = self.expr(&s.operand);
                let field_ty = self.select(&operand, &s.field);
                if s.test { Ty::Bool } else { field_ty }
            }
            Expr::Comprehension(c) => {
                let range = self.expr(&c.iter_range);
                let (var1, var2) = match (&range, &c.iter_var2) {
                    (Ty::List(t), None) => ((**t).clone(), Ty::Dyn),
                    (Ty::List(t), Some(_)) => (Ty::Int, (**t).clone()),
                    (Ty::Map(t), _) => (Ty::String, (**t).clone()),
                    (Ty::Object(_) | Ty::Meta, _) => (Ty::String, Ty::Dyn),
                    _ => (Ty::Dyn, Ty::Dyn),
                };
                let accu = self.expr(&c.accu_init);
                let depth = self.scope.len();
                self.scope.push((c.iter_var.clone(), var1));
                if let Some(v2) = &c.iter_var2 {
                    self.scope.push((v2.clone(), var2));
                }
                self.scope.push((c.accu_var.clone(), accu.clone()));
                self.expr(&c.loop_cond);
                self.expr(&c.loop_step);
                let result = match &c.result.expr {
                    Expr::Ident(n) if *n == c.accu_var => accu,
                    _ => self.expr(&c.result),
                };
                self.scope.truncate(depth);
                result
            }
            Expr::Call(call) => {
                let target = call.target.as_deref().map(|t| self.expr(t));
                let args: Vec<Ty<'a>> = call.args.iter().map(|a| self.expr(a)).collect();
                self.call(&call.func_name, target, args)
            }
        }
    }

    fn select(&mut self, operand: &Ty<'a>, field: &str) -> Ty<'a> {
        match operand {
            Ty::Object(node) => {
                if node.resource_root {
                    match field {
                        "apiVersion" | "kind" => return Ty::String,
                        "metadata" => return Ty::Meta,
                        _ => {}
                    }
                }
                for (name, prop) in &node.properties {
                    if escape(name).as_deref() == Some(field) {
                        return node_ty(prop);
                    }
                }
                self.undefined_field(field);
                Ty::Dyn
            }
            Ty::Meta => {
                if field == "name" || field == "generateName" {
                    Ty::String
                } else {
                    self.undefined_field(field);
                    Ty::Dyn
                }
            }
            Ty::Map(v) => (**v).clone(),
            Ty::Optional(inner) => Ty::Optional(Box::new(self.select(inner, field))),
            t => {
                if let Some(name) = t.scalar_name() {
                    let offset = find_select(self.source, field).unwrap_or(0);
                    self.issue(
                        offset,
                        format!("type '{name}' does not support field selection"),
                    );
                }
                Ty::Dyn
            }
        }
    }

    fn undefined_field(&mut self, field: &str) {
        let offset = find_select(self.source, field).unwrap_or(0);
        self.issue(offset, format!("undefined field '{field}'"));
    }

    fn no_overload(&mut self, op: &str, func: &str, args: &[Ty<'a>]) {
        let names: Vec<String> = args
            .iter()
            .map(|t| t.full_name().unwrap_or_else(|| "dyn".to_owned()))
            .collect();
        // A call is located at its opening parenthesis, an operator at its token.
        let offset = self.source.find(op).map_or(0, |i| {
            if op.ends_with('(') {
                i + op.len() - 1
            } else {
                i
            }
        });
        self.issue(
            offset,
            format!(
                "found no matching overload for '{func}' applied to '({})'",
                names.join(", ")
            ),
        );
    }

    fn call(&mut self, func: &str, target: Option<Ty<'a>>, args: Vec<Ty<'a>>) -> Ty<'a> {
        if let Some(Ty::Optional(inner)) = &target {
            match func {
                "value" => return (**inner).clone(),
                "hasValue" => return Ty::Bool,
                "orValue" => {
                    if let Some(arg) = args.first()
                        && let (Some(want), Some(got)) = (inner.full_name(), arg.full_name())
                        && want != got
                    {
                        let offset = self.source.find("orValue(").map_or(0, |i| i + 7);
                        self.issue(
                            offset,
                            format!(
                                "found no matching overload for 'orValue' applied to 'optional_type({want}).({got})'"
                            ),
                        );
                    }
                    return (**inner).clone();
                }
                _ => {}
            }
        }
        let op = match func {
            "_==_" => "==",
            "_!=_" => "!=",
            "_<_" => "<",
            "_<=_" => "<=",
            "_>_" => ">",
            "_>=_" => ">=",
            _ => "",
        };
        if !op.is_empty()
            && let [a, b] = args.as_slice()
        {
            let optional_mismatch = matches!(a, Ty::Optional(_)) != matches!(b, Ty::Optional(_))
                && a.full_name().is_some()
                && b.full_name().is_some();
            let scalar_mismatch = matches!(
                (a.scalar_name(), b.scalar_name()),
                (Some(an), Some(bn)) if an != bn
            ) && !(a.is_numeric() && b.is_numeric())
                && matches!(func, "_==_" | "_!=_");
            let aggregate =
                |t: &Ty<'_>| matches!(t, Ty::Object(_) | Ty::Meta | Ty::List(_) | Ty::Map(_));
            let kind_mismatch = (aggregate(a) && b.scalar_name().is_some())
                || (aggregate(b) && a.scalar_name().is_some());
            if optional_mismatch || scalar_mismatch || kind_mismatch {
                self.no_overload(op, func, &args);
            }
            return Ty::Bool;
        }
        match func {
            "_&&_"
            | "_||_"
            | "!_"
            | "@in"
            | "@not_strictly_false"
            | "matches"
            | "startsWith"
            | "endsWith"
            | "contains"
            | "exists"
            | "all"
            | "exists_one"
            | "isSorted" => Ty::Bool,
            "size" => {
                let arg = target.as_ref().or(args.first());
                if let Some(t) = arg
                    && t.scalar_name().is_some()
                    && !matches!(t, Ty::String | Ty::Bytes)
                {
                    let t = t.clone();
                    self.no_overload("size(", "size", &[t]);
                }
                Ty::Int
            }
            "int" => Ty::Int,
            "uint" => Ty::Uint,
            "double" => Ty::Double,
            "string" | "lowerAscii" | "upperAscii" | "trim" | "charAt" | "substring"
            | "replace" | "join" => Ty::String,
            "bytes" => Ty::Bytes,
            "duration" => Ty::Duration,
            "timestamp" => Ty::Timestamp,
            "_?_:_" => match args.as_slice() {
                [_, a, b] if same(a, b) => a.clone(),
                _ => Ty::Dyn,
            },
            "_[_]" => match args.first() {
                Some(Ty::List(t)) | Some(Ty::Map(t)) => (**t).clone(),
                _ => Ty::Dyn,
            },
            "_+_" | "_-_" | "_*_" | "_/_" | "_%_" => match args.as_slice() {
                [a, b] if same(a, b) && (a.is_numeric() || matches!(a, Ty::String | Ty::Bytes)) => {
                    a.clone()
                }
                _ => Ty::Dyn,
            },
            "-_" => match args.first() {
                Some(t) if t.is_numeric() => t.clone(),
                _ => Ty::Dyn,
            },
            _ => {
                let _ = target;
                Ty::Dyn
            }
        }
    }
}

fn same(a: &Ty<'_>, b: &Ty<'_>) -> bool {
    match (a.scalar_name(), b.scalar_name()) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The offset of the first standalone identifier `name` (not after a `.`).
fn find_ident(source: &str, name: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut from = 0;
    while let Some(pos) = source.get(from..)?.find(name) {
        let start = from + pos;
        let end = start + name.len();
        let before_ok = start == 0 || {
            let b = bytes[start - 1];
            !is_ident_char(b) && b != b'.'
        };
        let after_ok = end >= bytes.len() || !is_ident_char(bytes[end]);
        if before_ok && after_ok {
            return Some(start);
        }
        from = start + 1;
    }
    None
}

/// The offset of the `.` of the first selection of `field`.
fn find_select(source: &str, field: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut from = 0;
    while let Some(pos) = source.get(from..)?.find(field) {
        let start = from + pos;
        let end = start + field.len();
        let after_ok = end >= bytes.len() || !is_ident_char(bytes[end]);
        let mut dot = start;
        while dot > 0 && bytes[dot - 1].is_ascii_whitespace() {
            dot -= 1;
        }
        if after_ok && dot > 0 && bytes[dot - 1] == b'.' {
            return Some(dot - 1);
        }
        if after_ok && dot > 1 && bytes[dot - 1] == b'?' && bytes[dot - 2] == b'.' {
            return Some(dot - 2);
        }
        from = start + 1;
    }
    None
}
