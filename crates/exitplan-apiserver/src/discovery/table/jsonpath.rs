//! client-go's JSONPath (`k8s.io/client-go/util/jsonpath`), as CRD printer
//! columns use it: kube-apiserver parses `{` + `jsonPath` + `}` and finds
//! the results with missing keys allowed. Parsing follows upstream's
//! `parser.go` (fields with `\.` escapes, `*`, `..`, `[n]`, `[a:b]`, `[*]`,
//! `['key']`, unions `[a,b]`, filters `[?(@.x == "y")]`, quoted text,
//! numbers, booleans); evaluation follows `jsonpath.go` on decoded JSON
//! (an out-of-range index or a filter over a non-list is an error, a
//! missing key is not). `range`/`end` templates are not supported: their
//! evaluation is an error. Pure, no recursion on input length while
//! parsing.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::Value;

/// Why a JSONPath does not parse or evaluate; `Display` is upstream's text.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct JsonPathError(String);

fn err<T>(msg: impl Into<String>) -> Result<T, JsonPathError> {
    Err(JsonPathError(msg.into()))
}

/// One array selection parameter (`ParamsEntry`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Param {
    value: i64,
    known: bool,
    derived: bool,
}

/// A parsed node (`Node` of upstream's parser).
#[derive(Clone, Debug, PartialEq)]
enum Node {
    List(Vec<Node>),
    Text(String),
    Field(String),
    Wildcard,
    Recursive,
    Array([Param; 3]),
    Union(Vec<Vec<Node>>),
    Filter {
        left: Vec<Node>,
        right: Vec<Node>,
        operator: String,
    },
    Int(i64),
    Float(f64),
    Bool(bool),
    Identifier(String),
}

/// A parsed JSONPath template.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPath {
    root: Vec<Node>,
}

impl JsonPath {
    /// Parses a template (`jsonpath.Parse`), e.g. `{.status.replicas}`.
    pub fn parse(text: &str) -> Result<JsonPath, JsonPathError> {
        Ok(JsonPath {
            root: Parser::new(text).parse_text()?,
        })
    }

    /// The results of each top-level part of the template
    /// (`FindResults` with `AllowMissingKeys(true)`).
    pub fn find<'a>(&self, data: &'a Value) -> Result<Vec<Vec<Cow<'a, Value>>>, JsonPathError> {
        let cur = vec![Cow::Borrowed(data)];
        self.root.iter().map(|node| walk(&cur, node)).collect()
    }
}

/// A parser over the template text (upstream's `Parser`: `pos` is where
/// it reads, `start` where the pending token began).
struct Parser<'t> {
    input: &'t str,
    pos: usize,
    start: usize,
}

fn is_terminator(c: Option<char>) -> bool {
    matches!(
        c,
        None | Some(' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}')
    )
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

impl<'t> Parser<'t> {
    fn new(input: &'t str) -> Self {
        Parser {
            input,
            pos: 0,
            start: 0,
        }
    }

    fn rest(&self) -> &'t str {
        self.input.get(self.pos..).unwrap_or_default()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.rest().chars().next()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn backup(&mut self, c: Option<char>) {
        if let Some(c) = c {
            self.pos -= c.len_utf8();
        }
    }

    fn consume(&mut self) -> &'t str {
        let text = self.input.get(self.start..self.pos).unwrap_or_default();
        self.start = self.pos;
        text
    }

    /// `parseText`: text outside `{…}` and each action inside.
    fn parse_text(&mut self) -> Result<Vec<Node>, JsonPathError> {
        let mut root = Vec::new();
        loop {
            if self.rest().starts_with('{') {
                if self.pos > self.start {
                    root.push(Node::Text(self.consume().to_owned()));
                }
                self.pos += 1;
                self.consume();
                root.push(Node::List(self.parse_action()?));
                continue;
            }
            if self.next().is_none() {
                break;
            }
        }
        if self.pos > self.start {
            root.push(Node::Text(self.consume().to_owned()));
        }
        Ok(root)
    }

    /// `parseInsideAction` up to and including the closing `}`.
    fn parse_action(&mut self) -> Result<Vec<Node>, JsonPathError> {
        let mut cur = Vec::new();
        loop {
            let rest = self.rest();
            if rest.starts_with('}') {
                self.pos += 1;
                self.consume();
                return Ok(cur);
            }
            if rest.starts_with("[?(") {
                cur.push(self.parse_filter()?);
                continue;
            }
            if rest.starts_with("..") {
                if matches!(cur.last(), Some(Node::Recursive)) {
                    return err("invalid multiple recursive descent");
                }
                self.pos += 2;
                self.consume();
                cur.push(Node::Recursive);
                if self.peek().is_some_and(is_alphanumeric) {
                    cur.push(self.parse_field());
                }
                continue;
            }
            match self.next() {
                None | Some('\r' | '\n') => return err("unclosed action"),
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => cur.push(self.parse_array()?),
                Some(q @ ('"' | '\'')) => cur.push(self.parse_quote(q)?),
                Some('.') => cur.push(self.parse_field()),
                Some(c @ ('+' | '-')) => {
                    self.backup(Some(c));
                    cur.push(self.parse_number()?);
                }
                Some(c) if c.is_ascii_digit() || c.is_numeric() => {
                    self.backup(Some(c));
                    cur.push(self.parse_number()?);
                }
                Some(c) if is_alphanumeric(c) => {
                    self.backup(Some(c));
                    cur.push(self.parse_identifier());
                }
                Some(c) => {
                    return err(format!(
                        "unrecognized character in action: U+{:04X} '{c}'",
                        u32::from(c)
                    ));
                }
            }
        }
    }

    /// `parseField`: a field name up to an unescaped terminator (`*` is the
    /// wildcard); backslashes are dropped from the name.
    fn parse_field(&mut self) -> Node {
        self.consume();
        loop {
            let c = self.next();
            if c == Some('\\') {
                self.next();
            } else if is_terminator(c) {
                self.backup(c);
                break;
            }
        }
        let value = self.consume();
        if value == "*" {
            Node::Wildcard
        } else {
            Node::Field(value.replace('\\', ""))
        }
    }

    /// `parseIdentifier`: `true`, `false` or a keyword.
    fn parse_identifier(&mut self) -> Node {
        loop {
            let c = self.next();
            if is_terminator(c) {
                self.backup(c);
                break;
            }
        }
        match self.consume() {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            other => Node::Identifier(other.to_owned()),
        }
    }

    /// `parseNumber`: an optional sign, then digits and dots.
    fn parse_number(&mut self) -> Result<Node, JsonPathError> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            let c = self.next();
            if !matches!(c, Some(c) if c == '.' || c.is_numeric()) {
                self.backup(c);
                break;
            }
        }
        let value = self.consume();
        if let Ok(i) = value.parse::<i64>() {
            return Ok(Node::Int(i));
        }
        match value.parse::<f64>() {
            Ok(f)
                if value
                    .chars()
                    .all(|c| c.is_ascii_digit() || "+-.".contains(c)) =>
            {
                Ok(Node::Float(f))
            }
            _ => err(format!("cannot parse number {value}")),
        }
    }

    /// `parseArray`: an index, a slice, `*`, a `'key'` or a union.
    fn parse_array(&mut self) -> Result<Node, JsonPathError> {
        loop {
            match self.next() {
                None | Some('\n') => return err("unterminated array"),
                Some(']') => break,
                Some(_) => {}
            }
        }
        let text = self.consume();
        let inner = text.get(1..text.len() - 1).unwrap_or_default();
        let inner = if inner == "*" { ":" } else { inner };
        let parts: Vec<&str> = inner.split(',').collect();
        if parts.len() > 1 {
            let union = parts
                .iter()
                .map(|p| parse_action_text(&format!("[{}]", p.trim_matches(' '))))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Node::Union(union));
        }
        if let Some(key) = inner
            .strip_prefix('\'')
            .and_then(|k| k.strip_suffix('\''))
            .filter(|k| !k.contains('\''))
        {
            // Upstream re-parses `.key`: a dotted key becomes several fields.
            let nodes = parse_action_text(&format!(".{key}"))?;
            return Ok(Node::List(nodes));
        }
        slice_params(inner).map(Node::Array)
    }

    /// `parseFilter`: `[?(left op right)]` or `[?(path)]` (exists).
    fn parse_filter(&mut self) -> Result<Node, JsonPathError> {
        self.pos += 3;
        self.consume();
        let (mut begin, mut end) = (false, false);
        let mut pair = '"';
        loop {
            let before = self.pos;
            match self.next() {
                None | Some('\n') => return err("unterminated filter"),
                Some(q @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = q;
                        continue;
                    }
                    let escaped =
                        before > 0 && self.input.as_bytes().get(before - 1) == Some(&b'\\');
                    if !escaped && q == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                Some(_) => {}
            }
        }
        if self.next() != Some(']') {
            return err("unclosed array expect ]");
        }
        let text = self.consume();
        let text = text.get(..text.len() - 2).unwrap_or_default();
        let split = text.find(['!', '<', '>', '=']).filter(|&i| i > 0);
        match split {
            Some(i) => {
                let op_len = text[i..]
                    .find(|c: char| !"!<>=".contains(c))
                    .unwrap_or(text.len() - i);
                let (left, op, right) = (&text[..i], &text[i..i + op_len], &text[i + op_len..]);
                if right.is_empty() {
                    return Ok(Node::Filter {
                        left: parse_action_text(text)?,
                        right: Vec::new(),
                        operator: "exists".to_owned(),
                    });
                }
                Ok(Node::Filter {
                    left: parse_action_text(left)?,
                    right: parse_action_text(right)?,
                    operator: op.to_owned(),
                })
            }
            None => Ok(Node::Filter {
                left: parse_action_text(text)?,
                right: Vec::new(),
                operator: "exists".to_owned(),
            }),
        }
    }

    /// `parseQuote`: a quoted string (Go escapes, single quotes allowed).
    fn parse_quote(&mut self, quote: char) -> Result<Node, JsonPathError> {
        loop {
            let before = self.pos;
            match self.next() {
                None | Some('\n') => return err("unterminated quoted string"),
                Some(c) if c == quote => {
                    if self.input.as_bytes().get(before.wrapping_sub(1)) != Some(&b'\\') {
                        break;
                    }
                }
                Some(_) => {}
            }
        }
        let value = self.consume();
        unquote(value)
            .map(Node::Text)
            .ok_or_else(|| JsonPathError(format!("unquote string {value} error invalid syntax")))
    }
}

/// `parseAction`: the nodes of `{text}`.
fn parse_action_text(text: &str) -> Result<Vec<Node>, JsonPathError> {
    let wrapped = format!("{{{text}}}");
    let mut root = Parser::new(&wrapped).parse_text()?;
    match root.first_mut() {
        Some(Node::List(nodes)) => Ok(std::mem::take(nodes)),
        _ => Ok(Vec::new()),
    }
}

/// The slice operator `^(-?\d*)(:-?\d*)?(:-?\d*)?$` and its parameters.
fn slice_params(text: &str) -> Result<[Param; 3], JsonPathError> {
    let invalid = || JsonPathError(format!("invalid array index {text}"));
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 {
        return Err(invalid());
    }
    let well_formed = |s: &str| {
        let digits = s.strip_prefix('-').unwrap_or(s);
        digits.chars().all(|c| c.is_ascii_digit())
    };
    if !parts.iter().all(|p| well_formed(p)) {
        return Err(invalid());
    }
    let mut params = [Param::default(); 3];
    for i in 0..3 {
        // Groups 2 and 3 keep their ':' in upstream's match.
        let present = i < parts.len();
        let text = if present { parts[i] } else { "" };
        if present && (i == 0 && !text.is_empty() || i > 0) {
            if i > 0 && text.is_empty() {
                params[i].known = false;
            } else {
                params[i].known = true;
                params[i].value = text
                    .parse()
                    .map_err(|_| JsonPathError(format!("array index {text} is not a number")))?;
            }
        } else if i == 1 {
            params[i] = Param {
                value: params[0].value.saturating_add(1),
                known: true,
                derived: true,
            };
        }
    }
    Ok(params)
}

/// `UnquoteExtend`: Go's `strconv.Unquote` that also takes single quotes.
fn unquote(s: &str) -> Option<String> {
    let quote = s.chars().next()?;
    if s.len() < 2 || !s.ends_with(quote) || !matches!(quote, '"' | '\'') {
        return None;
    }
    let body = &s[1..s.len() - 1];
    if !body.contains('\\') && !body.contains(quote) {
        return Some(body.to_owned());
    }
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == quote {
            return None;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let esc = chars.next()?;
        let hex = |chars: &mut std::str::Chars<'_>, n: usize| -> Option<u32> {
            let digits: String = chars.by_ref().take(n).collect();
            (digits.len() == n)
                .then(|| u32::from_str_radix(&digits, 16).ok())
                .flatten()
        };
        match esc {
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '\\' => out.push('\\'),
            '\'' | '"' if esc == quote => out.push(esc),
            'x' => out.push(char::from_u32(hex(&mut chars, 2)?)?),
            'u' => out.push(char::from_u32(hex(&mut chars, 4)?)?),
            'U' => out.push(char::from_u32(hex(&mut chars, 8)?)?),
            '0'..='7' => {
                let rest: String = chars.by_ref().take(2).collect();
                let v = u32::from_str_radix(&format!("{esc}{rest}"), 8).ok()?;
                if rest.len() != 2 || v > 255 {
                    return None;
                }
                out.push(char::from_u32(v)?);
            }
            _ => return None,
        }
    }
    Some(out)
}

type Values<'a> = Vec<Cow<'a, Value>>;

/// `walk`: the values `node` selects from each of `input`.
fn walk<'a>(input: &[Cow<'a, Value>], node: &Node) -> Result<Values<'a>, JsonPathError> {
    match node {
        Node::List(nodes) => eval_list(input, nodes),
        Node::Text(t) => Ok(vec![Cow::Owned(Value::String(t.clone()))]),
        Node::Field(name) => Ok(eval_field(input, name)),
        Node::Array(params) => eval_array(input, params),
        Node::Filter {
            left,
            right,
            operator,
        } => eval_filter(input, left, right, operator),
        Node::Int(i) => Ok(vec![Cow::Owned(Value::from(*i)); input.len()]),
        Node::Float(f) => Ok(vec![
            Cow::Owned(
                serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
            );
            input.len()
        ]),
        Node::Bool(b) => Ok(vec![Cow::Owned(Value::Bool(*b)); input.len()]),
        Node::Wildcard => Ok(input.iter().flat_map(children).collect()),
        Node::Recursive => Ok(eval_recursive(input)),
        Node::Union(lists) => {
            let mut out = Vec::new();
            for list in lists {
                out.extend(eval_list(input, list)?);
            }
            Ok(out)
        }
        Node::Identifier(name) => err(format!("unrecognized identifier {name}")),
    }
}

fn eval_list<'a>(input: &[Cow<'a, Value>], nodes: &[Node]) -> Result<Values<'a>, JsonPathError> {
    let mut cur: Values<'a> = input.to_vec();
    for node in nodes {
        cur = walk(&cur, node)?;
    }
    Ok(cur)
}

/// A value's children: an object's values (in key order: Go's map order
/// is random), a list's items, a string's bytes.
fn children<'a>(value: &Cow<'a, Value>) -> Values<'a> {
    match value {
        Cow::Borrowed(Value::Object(m)) => m.values().map(Cow::Borrowed).collect(),
        Cow::Borrowed(Value::Array(a)) => a.iter().map(Cow::Borrowed).collect(),
        Cow::Owned(Value::Object(m)) => m.values().cloned().map(Cow::Owned).collect(),
        Cow::Owned(Value::Array(a)) => a.iter().cloned().map(Cow::Owned).collect(),
        other => match other.as_ref() {
            Value::String(s) => s.bytes().map(|b| Cow::Owned(Value::from(b))).collect(),
            _ => Vec::new(),
        },
    }
}

/// `evalField`: an object's member; missing members and non-objects give
/// nothing (missing keys are allowed).
fn eval_field<'a>(input: &[Cow<'a, Value>], name: &str) -> Values<'a> {
    input
        .iter()
        .filter_map(|v| match v {
            Cow::Borrowed(Value::Object(m)) => m.get(name).map(Cow::Borrowed),
            Cow::Owned(Value::Object(m)) => m.get(name).cloned().map(Cow::Owned),
            _ => None,
        })
        .collect()
}

/// `evalArray`: indexes and slices, negative ones from the end; out of
/// range is an error unless the slice is empty.
fn eval_array<'a>(
    input: &[Cow<'a, Value>],
    params: &[Param; 3],
) -> Result<Values<'a>, JsonPathError> {
    let mut out = Vec::new();
    for value in input {
        let items: Values<'a> = match value {
            Cow::Borrowed(Value::Null) | Cow::Owned(Value::Null) => continue,
            Cow::Borrowed(Value::Array(a)) => a.iter().map(Cow::Borrowed).collect(),
            Cow::Owned(Value::Array(a)) => a.iter().cloned().map(Cow::Owned).collect(),
            other => return err(format!("{} is not array or slice", go_type(other))),
        };
        let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
        let mut p = *params;
        if !p[0].known {
            p[0].value = 0;
        }
        if p[0].value < 0 {
            p[0].value += len;
        }
        if !p[1].known {
            p[1].value = len;
        }
        if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
            p[1].value += len;
        }
        if p[1].value != p[0].value {
            if p[0].value >= len {
                return err(format!(
                    "array index out of bounds: index {}, length {len}",
                    p[0].value
                ));
            }
            if p[1].value > len {
                return err(format!(
                    "array index out of bounds: index {}, length {len}",
                    p[1].value - 1
                ));
            }
        }
        let (from, to) = (p[0].value, p[1].value);
        // Where Go's reflect.Slice would panic, answer an error instead.
        let cap_ok = !p[2].known || (p[2].value >= to && p[2].value <= len);
        if from < 0 || to < from || to > len || !cap_ok {
            return err(format!("slice bounds out of range [{from}:{to}]"));
        }
        let (from, to) = (from as usize, to as usize);
        out.extend(items.into_iter().skip(from).take(to - from));
    }
    Ok(out)
}

/// `evalRecursive`: every object or list below (and including) each
/// input, parents before children.
fn eval_recursive<'a>(input: &[Cow<'a, Value>]) -> Values<'a> {
    let mut out = Vec::new();
    let mut stack: Vec<Cow<'a, Value>> = input.iter().rev().cloned().collect();
    while let Some(value) = stack.pop() {
        if value.is_null() {
            continue;
        }
        let kids = children(&value);
        if !kids.is_empty() {
            out.push(value);
            stack.extend(kids.into_iter().rev());
        }
    }
    out
}

fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// `evalFilter`: the items of each list for which the comparison holds
/// (or, for `exists`, the left side finds something).
fn eval_filter<'a>(
    input: &[Cow<'a, Value>],
    left: &[Node],
    right: &[Node],
    operator: &str,
) -> Result<Values<'a>, JsonPathError> {
    let mut out = Vec::new();
    for value in input {
        let items: Values<'a> = match value {
            Cow::Borrowed(Value::Array(a)) => a.iter().map(Cow::Borrowed).collect(),
            Cow::Owned(Value::Array(a)) => a.iter().cloned().map(Cow::Owned).collect(),
            other => {
                return err(format!(
                    "{} is not array or slice and cannot be filtered",
                    gofmt_v(other)
                ));
            }
        };
        for item in items {
            let one = [item.clone()];
            let lefts = eval_list(&one, left);
            if operator == "exists" {
                if lefts.is_ok_and(|l| !l.is_empty()) {
                    out.push(item);
                }
                continue;
            }
            let lefts = lefts?;
            let [l] = lefts.as_slice() else {
                return err("can only compare one element at a time");
            };
            let rights = eval_list(&one, right)?;
            let [r] = rights.as_slice() else {
                return err("can only compare one element at a time");
            };
            let pass = match operator {
                "<" => less(l, r)?,
                ">" => !(less(l, r)? || equal(l, r)?),
                "==" => equal(l, r)?,
                "!=" => !equal(l, r)?,
                "<=" => less(l, r)? || equal(l, r)?,
                ">=" => !less(l, r)?,
                other => return err(format!("unrecognized filter operator {other}")),
            };
            if pass {
                out.push(item);
            }
        }
    }
    Ok(out)
}

/// A compared value's kind (text/template's `basicKind`).
#[derive(PartialEq)]
enum Kind<'v> {
    Bool(bool),
    Int(i64),
    Float(f64),
    String(&'v str),
}

fn kind(v: &Value) -> Result<Kind<'_>, JsonPathError> {
    match v {
        Value::Bool(b) => Ok(Kind::Bool(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Ok(Kind::Int(i)),
            None => Ok(Kind::Float(n.as_f64().unwrap_or_default())),
        },
        Value::String(s) => Ok(Kind::String(s)),
        _ => err("invalid type for comparison"),
    }
}

fn equal(a: &Value, b: &Value) -> Result<bool, JsonPathError> {
    match (kind(a)?, kind(b)?) {
        (Kind::Bool(x), Kind::Bool(y)) => Ok(x == y),
        (Kind::Int(x), Kind::Int(y)) => Ok(x == y),
        (Kind::Float(x), Kind::Float(y)) => Ok(x == y),
        (Kind::String(x), Kind::String(y)) => Ok(x == y),
        _ => err("incompatible types for comparison"),
    }
}

fn less(a: &Value, b: &Value) -> Result<bool, JsonPathError> {
    match (kind(a)?, kind(b)?) {
        (Kind::Bool(_), Kind::Bool(_)) => err("invalid type for comparison"),
        (Kind::Int(x), Kind::Int(y)) => Ok(x < y),
        (Kind::Float(x), Kind::Float(y)) => Ok(x.partial_cmp(&y) == Some(Ordering::Less)),
        (Kind::String(x), Kind::String(y)) => Ok(x < y),
        _ => err("incompatible types for comparison"),
    }
}

/// Go's `%v` of a decoded value, for error texts.
fn gofmt_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn find(path: &str, data: &Value) -> Result<Vec<Value>, JsonPathError> {
        let p = JsonPath::parse(&format!("{{{path}}}"))?;
        let results = p.find(data)?;
        Ok(results
            .first()
            .map(|r| r.iter().map(|v| v.clone().into_owned()).collect())
            .unwrap_or_default())
    }

    fn data() -> Value {
        json!({
            "kind": "List",
            "metadata": {"name": "n", "labels": {"app.kubernetes.io/name": "web", "tier": "fe"}},
            "items": [
                {"name": "a", "n": 1, "ok": true, "tags": ["x", "y"]},
                {"name": "b", "n": 2, "ok": false, "tags": []},
                {"name": "c", "n": 3, "x": 3.5, "tags": ["z"]}
            ],
            "status": {"conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "Synced", "status": "False"}
            ], "nothing": null}
        })
    }

    /// Cases after upstream `jsonpath_test.go` (`TestJSONInput`,
    /// `TestKubernetes`, `TestFilterPartialMatchesSometimesMissingAnnotations`).
    #[test]
    fn finds_like_client_go() {
        let d = data();
        let cases: Vec<(&str, Vec<Value>)> = vec![
            ("", vec![d.clone()]),
            ("@", vec![d.clone()]),
            (".kind", vec![json!("List")]),
            ("$.kind", vec![json!("List")]),
            (".missing", vec![]),
            (".metadata.missing.deeper", vec![]),
            (
                ".metadata.labels.app\\.kubernetes\\.io/name",
                vec![json!("web")],
            ),
            (".items[0].name", vec![json!("a")]),
            (".items[-1].name", vec![json!("c")]),
            (".items[*].name", vec![json!("a"), json!("b"), json!("c")]),
            (".items[1:].n", vec![json!(2), json!(3)]),
            (".items[:2].name", vec![json!("a"), json!("b")]),
            (".items[0:0].name", vec![]),
            (".items[0,2].name", vec![json!("a"), json!("c")]),
            (".items[0]['name']", vec![json!("a")]),
            (
                ".items[*].tags[*]",
                vec![json!("x"), json!("y"), json!("z")],
            ),
            (".metadata.labels.*", vec![json!("web"), json!("fe")]),
            (
                "..name",
                vec![json!("a"), json!("b"), json!("c"), json!("n")],
            ),
            (
                ".status.conditions[?(@.type==\"Ready\")].status",
                vec![json!("True")],
            ),
            (
                ".status.conditions[?(@.type != 'Ready')].type",
                vec![json!("Synced")],
            ),
            (".items[?(@.n > 1)].name", vec![json!("b"), json!("c")]),
            (".items[?(@.n >= 3)].name", vec![json!("c")]),
            (".items[?(@.n < 2)].name", vec![json!("a")]),
            (".items[?(@.n<=2)].name", vec![json!("a"), json!("b")]),
            (
                ".status.conditions[?(@.status == 'True')].type",
                vec![json!("Ready")],
            ),
            (".items[?(@.ok)].name", vec![json!("a"), json!("b")]),
            (".status.nothing", vec![Value::Null]),
            (".status.nothing.deeper", vec![]),
        ];
        for (path, want) in cases {
            assert_eq!(find(path, &d), Ok(want), "{path}");
        }
    }

    #[test]
    fn evaluation_errors() {
        let d = data();
        let cases = [
            (".items[3]", "array index out of bounds: index 3, length 3"),
            (".kind[0]", "string is not array or slice"),
            (".items[?(@.n == 'x')]", "incompatible types for comparison"),
            (
                ".items[?(@.missing == 1)]",
                "can only compare one element at a time",
            ),
            // c has no `ok`: upstream fails the whole path.
            (
                ".items[?(@.ok == true)]",
                "can only compare one element at a time",
            ),
            (
                ".kind[?(@.a)]",
                "List is not array or slice and cannot be filtered",
            ),
            (".items[?(@.n < 3.5)]", "incompatible types for comparison"),
            (
                ".items[?(@.x == 3.5)]",
                "can only compare one element at a time",
            ),
            ("range", "unrecognized identifier range"),
        ];
        for (path, want) in cases {
            assert_eq!(
                find(path, &d),
                Err(JsonPathError(want.to_owned())),
                "{path}"
            );
        }
    }

    /// Parsing and finding never panic, whatever the path: every
    /// sequence of up to four tokens from a hostile alphabet.
    #[test]
    fn never_panics() {
        let tokens = [
            ".",
            "..",
            "a",
            "*",
            "[",
            "]",
            "[0]",
            "[-1]",
            "[9223372036854775807]",
            "[1:0]",
            "[:",
            "[?(",
            ")",
            "@",
            "'",
            "\"",
            "\\",
            "==",
            "<",
            "{",
            "}",
            ",",
            " ",
            "é",
            "1.5",
        ];
        let d = data();
        let mut frontier = vec![String::new()];
        let mut paths = Vec::new();
        for _ in 0..4 {
            frontier = frontier
                .iter()
                .flat_map(|p| tokens.iter().map(move |t| format!("{p}{t}")))
                .collect();
            paths.extend(frontier.iter().cloned());
        }
        for p in paths {
            if let Ok(path) = JsonPath::parse(&format!("{{{p}}}")) {
                let _ = path.find(&d);
            }
        }
    }

    /// Upstream `TestParser` error cases and accepted forms.
    #[test]
    fn parses_like_client_go() {
        let bad = [
            ("{.hello", "unclosed action"),
            ("{.hello\n}", "unclosed action"),
            ("{.items[1}]}", "invalid array index 1}"),
            ("{.items[a]}", "invalid array index a"),
            ("{.items[1", "unterminated array"),
            ("{.items[?(@.a]}", "unterminated filter"),
            ("{.items[?(@.a)}", "unclosed array expect ]"),
            ("{'abc}", "unterminated quoted string"),
            ("{#}", "unrecognized character in action: U+0023 '#'"),
            ("{.a....b}", "invalid multiple recursive descent"),
            ("{1.2.3}", "cannot parse number 1.2.3"),
        ];
        for (text, want) in bad {
            assert_eq!(
                JsonPath::parse(text),
                Err(JsonPathError(want.to_owned())),
                "{text}"
            );
        }
        for good in [
            "{.metadata.name}",
            "{.a.b[0].c}",
            "{.a[*].b}",
            "{.a[-1:]}",
            "{.a[1:3:3]}",
            "{..x}",
            "{.a['b.c']}",
            "{.a[?(@.x==\"y z\")].b}",
            "{.a[?(@.x==\"a\\\"b\")].b}",
            "plain text",
            "{.a} and {.b}",
            "{.}",
        ] {
            assert!(JsonPath::parse(good).is_ok(), "{good}");
        }
        let p = JsonPath::parse("{.a} and {.b}").expect("parses");
        let data = json!({"a": 1, "b": 2});
        let r = p.find(&data).expect("finds");
        assert_eq!(r.len(), 3);
        assert_eq!(r[1][0].as_ref(), &json!(" and "));
    }
}
