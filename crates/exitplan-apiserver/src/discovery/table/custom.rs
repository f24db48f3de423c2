//! Tables of custom resources: the columns a CRD version declares in
//! `additionalPrinterColumns`, as apiextensions-apiserver's `tableconvertor`
//! builds them — NAME first, then each column (type, format, priority,
//! description, or `Custom resource definition column (in JSONPath format):
//! <path>`), each cell the column's JSONPath evaluated on the object:
//!
//! - `string`: the value as client-go's JSONPath prints it (lists and
//!   objects as Go's JSON, `null` as `<no value>`);
//! - `integer` / `number` / `boolean`: the value when it has that type;
//! - `date`: the age of an RFC 3339 time (`<invalid>` when it does not
//!   parse, `<unknown>` when empty);
//! - anything missing or of the wrong type: `null` (kubectl shows `<none>`).
//!
//! Several results (`[*]`, unions) are printed as one list. A version
//! without columns is served with a single `Age` column
//! ([`CustomColumns::serving`], as the CRD handler's
//! `serveDefaultColumnsIfEmpty`).

use std::borrow::Cow;

use jiff::Timestamp;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceColumnDefinition;
use serde_json::{Value, json};

use super::jsonpath::JsonPath;
use super::{Column, OBJECT_META, Row, human_duration};
use crate::discovery::openapi::describe;

/// A column whose `jsonPath` does not parse; `Display` is upstream's text.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("unrecognized column definition {}", serde_json::Value::String(.json_path.clone()))]
pub struct InvalidColumn {
    /// The column's `jsonPath`.
    pub json_path: String,
}

/// The Table columns of one CRD version and the paths that fill them.
#[derive(Clone, Debug)]
pub struct CustomColumns {
    columns: Vec<Column>,
    paths: Vec<JsonPath>,
}

impl CustomColumns {
    /// `tableconvertor.New`: NAME and the given columns; the first column
    /// whose `jsonPath` does not parse is an error.
    pub fn new(definitions: &[CustomResourceColumnDefinition]) -> Result<Self, InvalidColumn> {
        match Self::build(definitions) {
            (columns, None) => Ok(columns),
            (_, Some(e)) => Err(e),
        }
    }

    /// What kube-apiserver serves for a CRD version: its columns, or `Age`
    /// when it declares none; on an unparsable column, the columns before
    /// it (upstream logs the error and serves that partial convertor).
    pub fn serving(
        definitions: &[CustomResourceColumnDefinition],
    ) -> (Self, Option<InvalidColumn>) {
        if definitions.is_empty() {
            return Self::build(&[CustomResourceColumnDefinition {
                name: "Age".to_owned(),
                type_: "date".to_owned(),
                description: Some(describe(OBJECT_META, "creationTimestamp")),
                json_path: ".metadata.creationTimestamp".to_owned(),
                format: None,
                priority: None,
            }]);
        }
        Self::build(definitions)
    }

    fn build(definitions: &[CustomResourceColumnDefinition]) -> (Self, Option<InvalidColumn>) {
        let mut out = CustomColumns {
            columns: vec![Column::name()],
            paths: Vec::new(),
        };
        for def in definitions {
            let Ok(path) = JsonPath::parse(&format!("{{{}}}", def.json_path)) else {
                let error = InvalidColumn {
                    json_path: def.json_path.clone(),
                };
                return (out, Some(error));
            };
            let description = match def.description.as_deref() {
                Some(d) if !d.is_empty() => d.to_owned(),
                _ => format!(
                    "Custom resource definition column (in JSONPath format): {}",
                    def.json_path
                ),
            };
            out.paths.push(path);
            out.columns.push(Column {
                name: Cow::Owned(def.name.clone()),
                ty: Cow::Owned(def.type_.clone()),
                format: Cow::Owned(def.format.clone().unwrap_or_default()),
                description,
                priority: def.priority.unwrap_or(0),
            });
        }
        (out, None)
    }

    /// The columns, NAME first.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The row of one custom resource at `now`.
    pub fn row(&self, object: &Value, now: Timestamp) -> Row {
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut cells = Vec::with_capacity(self.columns.len());
        cells.push(json!(name));
        for (column, path) in self.columns.iter().skip(1).zip(&self.paths) {
            cells.push(cell(&column.ty, path, object, now));
        }
        Row::from(cells)
    }
}

/// One cell: the path's first results (several as one list), typed.
fn cell(ty: &str, path: &JsonPath, object: &Value, now: Timestamp) -> Value {
    let Ok(results) = path.find(object) else {
        return Value::Null;
    };
    let value = match results.first().map(Vec::as_slice) {
        None | Some([]) => return Value::Null,
        Some([one]) => one.clone().into_owned(),
        Some(many) => Value::Array(many.iter().map(|v| v.clone().into_owned()).collect()),
    };
    if ty == "string" {
        return Value::String(print_result(&value));
    }
    typed_cell(ty, &value, now)
}

/// `cellForJSONValue`: the value when it fits the column type.
fn typed_cell(ty: &str, value: &Value, now: Timestamp) -> Value {
    match (ty, value) {
        ("integer", Value::Number(n)) => match n.as_i64() {
            Some(i) => json!(i),
            None => json!(n.as_f64().unwrap_or_default().trunc() as i64),
        },
        ("number", Value::Number(n)) => match n.as_i64() {
            // float64(i): Go writes an integral float without a fraction.
            Some(i) => json!(i),
            None => float_cell(n.as_f64().unwrap_or_default()),
        },
        ("boolean", Value::Bool(b)) => json!(b),
        ("string", Value::String(s)) => json!(s),
        ("date", Value::String(s)) => json!(date_cell(s, now)),
        _ => Value::Null,
    }
}

/// A float cell as Go's `encoding/json` writes a `float64`: integral
/// values without `.0`.
fn float_cell(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        json!(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// `metav1.Time.UnmarshalQueryParameter` then
/// `ConvertToHumanReadableDateType`.
fn date_cell(s: &str, now: Timestamp) -> String {
    if s.is_empty() || s == "null" {
        return "<unknown>".to_owned();
    }
    match parse_rfc3339(s) {
        None => "<invalid>".to_owned(),
        Some(t) if t == go_zero_time() => "<unknown>".to_owned(),
        Some(t) => human_duration(now.duration_since(t)),
    }
}

/// Go's `time.Parse(time.RFC3339, s)`: `T` between date and time, `Z` or
/// a `±hh:mm` offset, optional fractional seconds.
fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let offset_ok = s.ends_with('Z')
        || (b.len() > 6 && matches!(b[b.len() - 6], b'+' | b'-') && b[b.len() - 3] == b':');
    if b.len() < 20 || b.get(10) != Some(&b'T') || !offset_ok {
        return None;
    }
    s.parse().ok()
}

fn go_zero_time() -> Timestamp {
    "0001-01-01T00:00:00Z".parse().unwrap_or(Timestamp::MIN)
}

/// client-go JSONPath's `PrintResults` of one value: lists and objects as
/// JSON, `null` as `<no value>`, scalars as Go's `fmt.Print`.
fn print_result(value: &Value) -> String {
    match value {
        Value::Null => "<no value>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => go_print_float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => {
            let mut out = String::new();
            go_json(&mut out, value);
            out
        }
    }
}

/// Go's `%v` of a `float64` (`%g`, shortest): exponent form below 1e-4
/// and from 1e6 up (`1e+06`).
fn go_print_float(f: f64) -> String {
    go_float(f, -4, 6)
}

/// A float in decimal form when its exponent is in `[min, max)`, else in
/// Go's exponent form (`1e+21`, `1.5e-07`).
fn go_float(f: f64, min: i32, max: i32) -> String {
    if f == 0.0 || !f.is_finite() {
        return format!("{f}");
    }
    let exp = f.abs().log10().floor() as i32;
    if (min..max).contains(&exp) {
        return format!("{f}");
    }
    let s = format!("{f:e}");
    match s.split_once('e') {
        Some((mantissa, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// Go's `json.Marshal` of a decoded value: sorted keys, HTML characters
/// escaped, floats as Go writes them.
fn go_json(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_i64() {
            Some(i) => out.push_str(&i.to_string()),
            None => {
                let f = n.as_f64().unwrap_or_default();
                let text = go_float(f, -6, 21);
                // encoding/json trims e-07 to e-7.
                out.push_str(&text.replace("e-0", "e-"));
            }
        },
        Value::String(s) => go_json_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json_string(out, key);
                out.push(':');
                go_json(out, &map[key]);
            }
            out.push('}');
        }
    }
}

fn go_json_string(out: &mut String, s: &str) {
    let quoted = Value::String(s.to_owned()).to_string();
    for c in quoted.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-01-02T12:30:00Z".parse().expect("time")
    }

    fn col(name: &str, ty: &str, path: &str) -> CustomResourceColumnDefinition {
        CustomResourceColumnDefinition {
            name: name.to_owned(),
            type_: ty.to_owned(),
            json_path: path.to_owned(),
            ..Default::default()
        }
    }

    /// Upstream `Test_cellForJSONValue`.
    #[test]
    fn typed_cells() {
        let cases = [
            ("integer", json!(42), json!(42)),
            ("integer", json!(3.25), json!(3)),
            ("integer", json!(true), Value::Null),
            ("integer", json!("foo"), Value::Null),
            ("number", json!(42), json!(42)),
            ("number", json!(3.25), json!(3.25)),
            ("number", json!(true), Value::Null),
            ("number", json!("foo"), Value::Null),
            ("boolean", json!(42), Value::Null),
            ("boolean", json!(3.25), Value::Null),
            ("boolean", json!(true), json!(true)),
            ("boolean", json!("foo"), Value::Null),
            ("string", json!(42), Value::Null),
            ("string", json!(3.25), Value::Null),
            ("string", json!(true), Value::Null),
            ("string", json!("foo"), json!("foo")),
            ("date", json!(42), Value::Null),
            ("date", json!(3.25), Value::Null),
            ("date", json!(true), Value::Null),
            ("date", json!("2026-01-02T00:00:00Z"), json!("12h")),
            ("date", json!("2026-01-03T01:00:00Z"), json!("<invalid>")),
            ("date", json!(""), json!("<unknown>")),
            ("date", json!("yesterday"), json!("<invalid>")),
            ("date", json!("2026-01-02 00:00:00Z"), json!("<invalid>")),
            ("date", json!("2026-01-02T02:00:00+02:00"), json!("12h")),
            ("date", json!("0001-01-01T00:00:00Z"), json!("<unknown>")),
            ("unknown", json!("foo"), Value::Null),
            ("integer", Value::Null, Value::Null),
        ];
        for (ty, value, want) in cases {
            assert_eq!(typed_cell(ty, &value, now()), want, "{value} as {ty}");
        }
    }

    /// Upstream `Test_convertor_ConvertToTable`.
    #[test]
    fn string_and_integer_columns_of_lists() {
        let obj = json!({
            "apiVersion": "example.istio.io/v1alpha1", "kind": "Blah",
            "metadata": {"name": "blah"},
            "spec": {"servers": [{"hosts": ["foo"]}, {"hosts": ["bar", "baz"]}],
                     "foo": [{"bar": [1]}, {"bar": [2, 3]}]}
        });
        let strings = CustomColumns::new(&[
            col("valueOnly", "string", ".spec.servers[0].hosts[0]"),
            col("single1", "string", ".spec.servers[0].hosts"),
            col("single2", "string", ".spec.servers[1].hosts"),
            col("multi", "string", ".spec.servers[*].hosts"),
            col("ints", "string", ".spec.foo[*].bar"),
        ])
        .expect("columns");
        assert_eq!(
            strings.row(&obj, now()).cells,
            vec![
                json!("blah"),
                json!("foo"),
                json!(r#"["foo"]"#),
                json!(r#"["bar","baz"]"#),
                json!(r#"[["foo"],["bar","baz"]]"#),
                json!("[[1],[2,3]]")
            ]
        );
        let ints = CustomColumns::new(&[
            col("valueOnly", "integer", ".spec.foo[0].bar[0]"),
            col("single1", "integer", ".spec.foo[0].bar"),
            col("single2", "integer", ".spec.foo[1].bar"),
            col("multi", "integer", ".spec.foo[*].bar"),
        ])
        .expect("columns");
        assert_eq!(
            ints.row(&obj, now()).cells,
            vec![
                json!("blah"),
                json!(1),
                Value::Null,
                Value::Null,
                Value::Null
            ]
        );
    }

    #[test]
    fn columns_descriptions_and_missing_values() {
        let defs = [
            CustomResourceColumnDefinition {
                description: Some("How many".to_owned()),
                format: Some("int32".to_owned()),
                priority: Some(1),
                ..col("Replicas", "integer", ".spec.replicas")
            },
            col("Phase", "string", ".status.phase"),
            col(
                "Ready",
                "string",
                ".status.conditions[?(@.type==\"Ready\")].status",
            ),
            col("Raw", "string", ".spec.raw"),
            col("Age", "date", ".metadata.creationTimestamp"),
        ];
        let c = CustomColumns::new(&defs).expect("columns");
        let cols: Vec<_> = c
            .columns()
            .iter()
            .map(|c| {
                (
                    c.name.to_string(),
                    c.ty.to_string(),
                    c.format.to_string(),
                    c.priority,
                )
            })
            .collect();
        assert_eq!(
            cols,
            vec![
                ("Name".into(), "string".into(), "name".into(), 0),
                ("Replicas".into(), "integer".into(), "int32".into(), 1),
                ("Phase".into(), "string".into(), "".into(), 0),
                ("Ready".into(), "string".into(), "".into(), 0),
                ("Raw".into(), "string".into(), "".into(), 0),
                ("Age".into(), "date".into(), "".into(), 0),
            ]
        );
        assert_eq!(c.columns()[1].description, "How many");
        assert_eq!(
            c.columns()[2].description,
            "Custom resource definition column (in JSONPath format): .status.phase"
        );
        let obj = json!({
            "metadata": {"name": "w", "creationTimestamp": "2026-01-02T12:25:00Z"},
            "spec": {"replicas": 3, "raw": {"b": "<x>", "a": null, "f": 1.5e-7, "g": 1e21}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}
        });
        assert_eq!(
            c.row(&obj, now()).cells,
            vec![
                json!("w"),
                json!(3),
                Value::Null,
                json!("True"),
                json!(r#"{"a":null,"b":"\u003cx\u003e","f":1.5e-7,"g":1e+21}"#),
                json!("5m")
            ]
        );
        let nulls =
            json!({"metadata": {"name": "n"}, "status": {"phase": null}, "spec": {"raw": 1e6}});
        let cells = c.row(&nulls, now()).cells;
        assert_eq!(
            (&cells[1], &cells[2], &cells[4], &cells[5]),
            (
                &Value::Null,
                &json!("<no value>"),
                &json!("1e+06"),
                &Value::Null
            )
        );
    }

    #[test]
    fn defaults_and_invalid_paths() {
        let (age, error) = CustomColumns::serving(&[]);
        assert_eq!(error, None);
        let names: Vec<_> = age.columns().iter().map(|c| c.name.to_string()).collect();
        assert_eq!(names, ["Name", "Age"]);
        assert_eq!(age.columns()[1].ty, "date");
        assert!(!age.columns()[1].description.is_empty());
        let obj = json!({"metadata": {"name": "x", "creationTimestamp": "2026-01-01T12:30:00Z"}});
        assert_eq!(age.row(&obj, now()).cells, vec![json!("x"), json!("24h")]);

        let bad = [
            col("Ok", "string", ".spec.a"),
            col("Bad", "string", ".spec[oops"),
            col("Later", "string", ".spec.b"),
        ];
        let e = CustomColumns::new(&bad).expect_err("invalid");
        assert_eq!(
            e.to_string(),
            r#"unrecognized column definition ".spec[oops""#
        );
        let (partial, error) = CustomColumns::serving(&bad);
        assert_eq!(error, Some(e));
        assert_eq!(partial.columns().len(), 2);
        assert_eq!(
            partial
                .row(
                    &json!({"metadata": {"name": "p"}, "spec": {"a": "A"}}),
                    now()
                )
                .cells,
            vec![json!("p"), json!("A")]
        );
        let none = CustomColumns::new(&[]).expect("columns");
        assert_eq!(none.columns().len(), 1);
    }

    #[test]
    fn go_number_printing() {
        let cases = [
            (json!(1.5), "1.5"),
            (json!(100000.0), "100000"),
            (json!(1e21), "1e+21"),
            (json!(0.00001), "1e-05"),
            (json!(0.0001), "0.0001"),
            (json!(-42), "-42"),
        ];
        for (v, want) in cases {
            assert_eq!(print_result(&v), want, "{v}");
        }
    }
}
