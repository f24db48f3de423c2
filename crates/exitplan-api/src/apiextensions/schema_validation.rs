//! Schema validation of custom resources: kube-openapi's `validate`
//! package as apiextensions-apiserver calls it (`ValidateCustomResource`),
//! with its error texts and their conversion to field errors
//! (`kubeOpenAPIResultToFieldErrors`).
//!
//! Validators run in kube-openapi's order for every node: type,
//! `allOf`/`anyOf`/`oneOf`/`not`, string (`maxLength`, `minLength`,
//! `pattern`), format, number (`multipleOf`, `maximum`, `minimum`), array
//! (items, `minItems`, `maxItems`, `uniqueItems`), `enum`, object
//! (`minProperties`/`maxProperties`, properties, `required`). Go's map order
//! is random; properties are visited here in name order.

use serde_json::{Map, Value};

use super::structural::{NestedValueValidation, Structural, ValueValidation};
use crate::field::{BadValue, Error, ErrorList, Path};

/// A field error value for a JSON value, rendered as Go renders the
/// decoded `interface{}` (`%v` for numbers and booleans, JSON otherwise).
pub fn bad_value(v: &Value) -> BadValue {
    match v {
        Value::Null => BadValue::Null,
        Value::Bool(b) => BadValue::Bool(*b),
        Value::String(s) => BadValue::Str(s.clone()),
        Value::Number(n) => match n.as_i64() {
            Some(i) => BadValue::Int(i),
            None => BadValue::Json(go_number(n)),
        },
        other => BadValue::Json(crate::render::json(other)),
    }
}

/// A JSON number as Go's `%v` prints a float64 (`1.5`, `1e+21`).
fn go_number(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) => go_float(f),
        None => n.to_string(),
    }
}

fn go_float(f: f64) -> String {
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e21).contains(&a) {
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e:0>2}"),
            Some((m, e)) => format!("{m}e-{:0>2}", e.trim_start_matches('-')),
            None => s,
        }
    } else {
        format!("{f}")
    }
}

/// One kube-openapi validation error, before conversion to a field error.
enum OErr {
    Required(String),
    Enum(String, Value, Vec<Value>),
    TooLong(String, i64),
    TooMany(String, i64, i64),
    TypeInvalid(String, String, String),
    Invalid(String, BadValue, String),
    Composite(String),
}

/// A schema node: a structural node or a node under `allOf`/`anyOf`/….
#[derive(Clone, Copy)]
enum Node<'a> {
    S(&'a Structural),
    N(&'a NestedValueValidation),
}

impl<'a> Node<'a> {
    fn types(self) -> Vec<&'a str> {
        match self {
            Node::S(s) if s.extensions.int_or_string => vec!["integer", "string"],
            Node::S(s) if !s.generic.type_.is_empty() => vec![s.generic.type_.as_str()],
            Node::N(n) if !n.forbidden_generics.type_.is_empty() => {
                vec![n.forbidden_generics.type_.as_str()]
            }
            _ => Vec::new(),
        }
    }

    fn nullable(self) -> bool {
        match self {
            Node::S(s) => s.generic.nullable,
            Node::N(n) => n.forbidden_generics.nullable,
        }
    }

    fn vv(self) -> &'a ValueValidation {
        match self {
            Node::S(s) => &s.value_validation,
            Node::N(n) => &n.value_validation,
        }
    }

    fn items(self) -> Option<Node<'a>> {
        match self {
            Node::S(s) => s.items.as_deref().map(Node::S),
            Node::N(n) => n.items.as_deref().map(Node::N),
        }
    }

    fn properties(self) -> Vec<(&'a str, Node<'a>)> {
        match self {
            Node::S(s) => s
                .properties
                .iter()
                .map(|(k, v)| (k.as_str(), Node::S(v)))
                .collect(),
            Node::N(n) => n
                .properties
                .iter()
                .map(|(k, v)| (k.as_str(), Node::N(v)))
                .collect(),
        }
    }

    fn has_property(self, k: &str) -> bool {
        match self {
            Node::S(s) => s.properties.contains_key(k),
            Node::N(n) => n.properties.contains_key(k),
        }
    }

    /// `additionalProperties`: `(allows, schema)`.
    fn additional(self) -> Option<(bool, Option<Node<'a>>)> {
        match self {
            Node::S(s) => s
                .generic
                .additional_properties
                .as_ref()
                .map(|a| (a.allows, a.schema.as_deref().map(Node::S))),
            Node::N(n) => n
                .forbidden_generics
                .additional_properties
                .as_ref()
                .map(|a| (a.allows, None)),
        }
    }
}

/// `ValidateCustomResource(base, value, validator)`: validates `value`
/// against the schema; `base` prefixes every error path (`None` for a
/// custom resource, where errors that name no field render as `<nil>`).
pub fn validate_value(base: Option<&Path>, s: &Structural, value: &Value) -> ErrorList {
    let mut out = Vec::new();
    node(Node::S(s), value, "", &mut out);
    out.into_iter().map(|e| convert(base, e)).collect()
}

fn err_path(base: Option<&Path>, name: &str) -> Path {
    let name = name.strip_prefix('.').unwrap_or(name);
    match base {
        Some(b) if !name.is_empty() => b.child(name),
        Some(b) => b.clone(),
        None if !name.is_empty() => Path::new(name),
        None => Path::new("<nil>"),
    }
}

fn convert(base: Option<&Path>, e: OErr) -> Error {
    match e {
        OErr::Required(name) => Error::required(&err_path(base, &name), ""),
        OErr::Enum(name, value, allowed) => {
            let values: Vec<String> = allowed
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            let refs: Vec<&str> = values.iter().map(String::as_str).collect();
            Error::not_supported(&err_path(base, &name), bad_value(&value), &refs)
        }
        OErr::TooLong(name, max) => {
            Error::too_long(&err_path(base, &name), usize::try_from(max).unwrap_or(0))
        }
        OErr::TooMany(name, actual, max) => Error::too_many(
            &err_path(base, &name),
            usize::try_from(actual).unwrap_or(0),
            usize::try_from(max).unwrap_or(0),
        ),
        OErr::TypeInvalid(name, value, msg) => {
            let mut e = Error::invalid(&err_path(base, &name), value, msg);
            e.error_type = crate::field::ErrorType::TypeInvalid;
            e
        }
        OErr::Invalid(name, value, msg) => Error::invalid(&err_path(base, &name), value, msg),
        OErr::Composite(msg) => {
            let p = base.cloned().unwrap_or_else(|| Path::new("<nil>"));
            Error::invalid(&p, "", msg)
        }
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn as_f64(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn node(n: Node<'_>, data: &Value, path: &str, out: &mut Vec<OErr>) {
    let types = n.types();
    if data.is_null() {
        if !types.is_empty() && !n.nullable() {
            out.push(type_error(path, &types.join(","), "null"));
        }
        if !n.nullable() {
            common(n.vv(), data, path, out);
        }
        return;
    }
    // type
    if !types.is_empty() {
        let t = json_type(data);
        let float_int = t == "number"
            && types.contains(&"integer")
            && data.as_f64().is_some_and(|f| f.fract() == 0.0);
        let int_float = t == "integer" && types.contains(&"number");
        if !(types.contains(&t) || float_int || int_float) {
            out.push(type_error(path, &types.join(","), t));
        }
    }
    junctors(n.vv(), data, path, out);
    let vv = n.vv();
    match data {
        Value::String(s) => {
            string(vv, s, path, out);
            format(vv, s, path, out);
        }
        Value::Number(_) => number(vv, data, path, out),
        Value::Array(items) => array(n, items, path, out),
        _ => {}
    }
    common(vv, data, path, out);
    if let Value::Object(map) = data {
        object(n, map, path, out);
    }
}

/// The start of kube-openapi's messages: `<path> in body`, or `in body`
/// for the value itself.
fn subject(path: &str) -> String {
    if path.is_empty() {
        "in body".to_owned()
    } else {
        format!("{path} in body")
    }
}

fn type_error(path: &str, ty: &str, value: &str) -> OErr {
    OErr::TypeInvalid(
        path.to_owned(),
        value.to_owned(),
        format!(
            "{} must be of type {ty}: {}",
            subject(path),
            crate::field::go_quote(value)
        ),
    )
}

fn junctor_valid(n: &NestedValueValidation, data: &Value, path: &str) -> Vec<OErr> {
    let mut out = Vec::new();
    node(Node::N(n), data, path, &mut out);
    out
}

fn junctors(vv: &ValueValidation, data: &Value, path: &str, out: &mut Vec<OErr>) {
    if !vv.any_of.is_empty() {
        let mut best: Option<Vec<OErr>> = None;
        let mut ok = false;
        for n in &vv.any_of {
            let r = junctor_valid(n, data, path);
            if r.is_empty() {
                ok = true;
                best = None;
                break;
            }
            if best.is_none() {
                best = Some(r);
            }
        }
        if !ok {
            out.push(OErr::Composite(
                "must validate at least one schema (anyOf)".to_owned(),
            ));
        }
        out.extend(best.into_iter().flatten());
    }
    if !vv.one_of.is_empty() {
        let mut best: Option<Vec<OErr>> = None;
        let mut validated = 0;
        for n in &vv.one_of {
            let r = junctor_valid(n, data, path);
            if r.is_empty() {
                validated += 1;
                best = None;
                continue;
            }
            if validated == 0 && best.is_none() {
                best = Some(r);
            }
        }
        if validated != 1 {
            out.push(OErr::Composite(
                "must validate one and only one schema (oneOf)".to_owned(),
            ));
            out.extend(best.into_iter().flatten());
        }
    }
    if !vv.all_of.is_empty() {
        let mut validated = 0;
        for n in &vv.all_of {
            let r = junctor_valid(n, data, path);
            if r.is_empty() {
                validated += 1;
            }
            out.extend(r);
        }
        if validated != vv.all_of.len() {
            out.push(OErr::Composite(
                "must validate all the schemas (allOf)".to_owned(),
            ));
        }
    }
    if let Some(not) = &vv.not
        && junctor_valid(not, data, path).is_empty()
    {
        out.push(OErr::Composite(
            "must not validate the schema (not)".to_owned(),
        ));
    }
}

fn string(vv: &ValueValidation, s: &str, path: &str, out: &mut Vec<OErr>) {
    let len = i64::try_from(s.chars().count()).unwrap_or(i64::MAX);
    if let Some(max) = vv.max_length.filter(|m| len > *m) {
        out.push(OErr::TooLong(path.to_owned(), max));
        return;
    }
    if let Some(min) = vv.min_length.filter(|m| len < *m) {
        out.push(OErr::Invalid(
            path.to_owned(),
            s.into(),
            format!("{} should be at least {min} chars long", subject(path)),
        ));
        return;
    }
    // An uncompilable pattern was refused with the CRD.
    if let Some(re) = &vv.pattern_regex
        && !re.0.is_match(s)
    {
        out.push(OErr::Invalid(
            path.to_owned(),
            s.into(),
            format!("{} should match '{}'", subject(path), vv.pattern),
        ));
    }
}

fn format(vv: &ValueValidation, s: &str, path: &str, out: &mut Vec<OErr>) {
    if let Some(false) = super::string_formats::check(&vv.format, s) {
        out.push(OErr::TypeInvalid(
            path.to_owned(),
            s.to_owned(),
            format!(
                "{} must be of type {}: {}",
                subject(path),
                vv.format,
                crate::field::go_quote(s)
            ),
        ));
    }
}

/// `swag.IsFloat64AJSONInteger`: integral within a relative error of 1e-9.
fn is_float_a_json_integer(f: f64) -> bool {
    if !f.is_finite() {
        return false;
    }
    let g = f.trunc();
    if f == g {
        return true;
    }
    let diff = (f - g).abs();
    diff / (f.abs() + g.abs()) < 1e-9
}

fn number(vv: &ValueValidation, data: &Value, path: &str, out: &mut Vec<OErr>) {
    let v = as_f64(data);
    if let Some(m) = vv.multiple_of.filter(|m| *m != 0.0) {
        let q = if m < 1.0 { 1.0 / m * v } else { v / m };
        if !is_float_a_json_integer(q) {
            out.push(OErr::Invalid(
                path.to_owned(),
                bad_value(data),
                format!("{} should be a multiple of {}", subject(path), go_float(m)),
            ));
        }
    }
    if let Some(min) = vv.minimum {
        let bad = if vv.exclusive_minimum {
            v <= min
        } else {
            v < min
        };
        if bad {
            let cmp = if vv.exclusive_minimum {
                "greater than"
            } else {
                "greater than or equal to"
            };
            out.push(OErr::Invalid(
                path.to_owned(),
                bad_value(data),
                format!("{} should be {cmp} {}", subject(path), go_float(min)),
            ));
        }
    }
    if let Some(max) = vv.maximum {
        let bad = if vv.exclusive_maximum {
            v >= max
        } else {
            v > max
        };
        if bad {
            let cmp = if vv.exclusive_maximum {
                "less than"
            } else {
                "less than or equal to"
            };
            out.push(OErr::Invalid(
                path.to_owned(),
                bad_value(data),
                format!("{} should be {cmp} {}", subject(path), go_float(max)),
            ));
        }
    }
}

fn array(n: Node<'_>, items: &[Value], path: &str, out: &mut Vec<OErr>) {
    if let Some(is) = n.items() {
        for (i, v) in items.iter().enumerate() {
            node(is, v, &format!("{path}[{i}]"), out);
        }
    }
    let vv = n.vv();
    let size = i64::try_from(items.len()).unwrap_or(i64::MAX);
    if let Some(min) = vv.min_items.filter(|m| size < *m) {
        out.push(OErr::Invalid(
            path.to_owned(),
            BadValue::Int(size),
            format!("{} should have at least {min} items", subject(path)),
        ));
    }
    if let Some(max) = vv.max_items.filter(|m| size > *m) {
        out.push(OErr::TooMany(path.to_owned(), size, max));
    }
    if vv.unique_items {
        let dup = items
            .iter()
            .enumerate()
            .any(|(i, a)| items[..i].iter().any(|b| json_eq(a, b)));
        if dup {
            out.push(OErr::Invalid(
                path.to_owned(),
                "".into(),
                format!("{} shouldn't contain duplicates", subject(path)),
            ));
        }
    }
}

/// Equality of decoded JSON values, numbers compared by value.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn common(vv: &ValueValidation, data: &Value, path: &str, out: &mut Vec<OErr>) {
    if !vv.enum_.is_empty() && !vv.enum_.iter().any(|e| json_eq(e, data)) {
        out.push(OErr::Enum(path.to_owned(), data.clone(), vv.enum_.clone()));
    }
}

fn child_path(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_owned()
    } else {
        format!("{path}.{k}")
    }
}

fn object(n: Node<'_>, map: &Map<String, Value>, path: &str, out: &mut Vec<OErr>) {
    let vv = n.vv();
    let num = i64::try_from(map.len()).unwrap_or(i64::MAX);
    if let Some(min) = vv.min_properties.filter(|m| num < *m) {
        out.push(OErr::Invalid(
            path.to_owned(),
            BadValue::Int(num),
            format!("{} should have at least {min} properties", subject(path)),
        ));
        return;
    }
    if let Some(max) = vv.max_properties.filter(|m| num > *m) {
        out.push(OErr::TooMany(path.to_owned(), num, max));
        return;
    }
    match n.additional() {
        Some((false, _)) => {
            for k in map.keys().filter(|k| !n.has_property(k)) {
                out.push(OErr::Invalid(
                    path.to_owned(),
                    k.as_str().into(),
                    format!("{path}.{k} in body is a forbidden property"),
                ));
            }
        }
        Some((true, Some(schema))) => {
            for (k, v) in map.iter().filter(|(k, _)| !n.has_property(k)) {
                node(schema, v, &format!("{path}.{k}"), out);
            }
        }
        _ => {}
    }
    for (k, p) in n.properties() {
        if let Some(v) = map.get(k) {
            node(p, v, &child_path(path, k), out);
        }
    }
    for k in &vv.required {
        if !map.contains_key(k) {
            out.push(OErr::Required(format!("{path}.{k}")));
        }
    }
}

#[cfg(test)]
#[path = "schema_validation_tests.rs"]
mod tests;
