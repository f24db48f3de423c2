//! The Swagger 2.0 document as gnostic's `openapi.v2.Document` protobuf
//! (`openapiv2/OpenAPIv2.proto` of github.com/google/gnostic-models): what
//! kube-apiserver serves on `/openapi/v2` for
//! `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`,
//! the only format client-go's `OpenAPISchema()` asks for. kubectl reads
//! it for client-side validation (`--validate`), for the strategic merge
//! patch of kinds missing from OpenAPI v3, and for
//! `kubectl explain --output plaintext-openapiv2`.
//!
//! The mapping follows gnostic's JSON-to-protobuf compiler: each JSON
//! object becomes its message, maps become `repeated Named*` pairs in
//! document order, `x-` keys become `vendor_extension` entries whose value
//! is an `Any` holding the value as YAML text (JSON is YAML, and it is what
//! the readers unmarshal), and one-of choices (`$ref` or inline, body or
//! query parameter, boolean or schema `additionalProperties`) are decided
//! as gnostic decides them. A key gnostic's message does not have is an
//! error, so a document this encoder cannot represent is never served with
//! silent gaps (a unit test encodes the served document).

use serde_json::{Map, Value};

use super::wire::Message;

/// Why a document cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// A key the gnostic message at `path` has no field for.
    #[error("{path}: {key:?} is not a field of gnostic's {message}")]
    UnknownField {
        /// Where, as JSON keys joined by `/`.
        path: String,
        /// The gnostic message.
        message: &'static str,
        /// The key.
        key: String,
    },
    /// A value of the wrong JSON type.
    #[error("{path}: expected {expected}")]
    WrongType {
        /// Where, as JSON keys joined by `/`.
        path: String,
        /// What the field holds.
        expected: &'static str,
    },
}

type Result<T> = std::result::Result<T, EncodeError>;

/// Encodes one JSON value as a message.
type Encode = fn(&Value, &str) -> Result<Message>;

/// How a JSON value maps to a protobuf field.
enum Kind {
    /// `string`.
    Str,
    /// `bool`.
    Bool,
    /// `int64`.
    Int,
    /// `double`.
    Double,
    /// `repeated string`.
    Strs,
    /// `Any` (the value as YAML text).
    Any,
    /// `repeated Any`.
    Anys,
    /// A message.
    Msg(Encode),
    /// `repeated` message, from a JSON array.
    Msgs(Encode),
    /// A map message (`Definitions`, `Properties`, …): field 1 holds
    /// `repeated Named*{name = 1, value = 2}`, from a JSON object.
    Named(Encode),
}

/// A message whose JSON keys map one-to-one to fields.
struct Spec {
    message: &'static str,
    fields: &'static [(&'static str, u32, Kind)],
    /// The `repeated NamedAny vendor_extension` field for `x-` keys.
    extensions: Option<u32>,
}

/// `doc` (Swagger 2.0 JSON) as an encoded `openapi.v2.Document`.
pub fn encode(doc: &Value) -> Result<Vec<u8>> {
    document(doc, "").map(Message::into_bytes)
}

fn wrong(path: &str, expected: &'static str) -> EncodeError {
    EncodeError::WrongType {
        path: path.to_owned(),
        expected,
    }
}

fn unknown(path: &str, message: &'static str, key: &str) -> EncodeError {
    EncodeError::UnknownField {
        path: path.to_owned(),
        message,
        key: key.to_owned(),
    }
}

fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| wrong(path, "an object"))
}

fn array<'a>(v: &'a Value, path: &str) -> Result<&'a Vec<Value>> {
    v.as_array().ok_or_else(|| wrong(path, "an array"))
}

fn str_of<'a>(v: &'a Value, path: &str) -> Result<&'a str> {
    v.as_str().ok_or_else(|| wrong(path, "a string"))
}

fn child(path: &str, key: &str) -> String {
    format!("{path}/{key}")
}

/// `Any{yaml}`: the value as YAML text (JSON is valid YAML).
fn any(v: &Value, _path: &str) -> Result<Message> {
    let mut m = Message::new();
    m.string(2, &format!("{v}\n"));
    Ok(m)
}

/// `NamedAny{name, value}` for each `x-` key, into `field`.
fn extensions(m: &mut Message, field: u32, obj: &Map<String, Value>, path: &str) -> Result<()> {
    for (key, value) in obj.iter().filter(|(k, _)| k.starts_with("x-")) {
        let mut pair = Message::new();
        pair.string(1, key);
        pair.message(2, any(value, &child(path, key))?);
        m.message(field, pair);
    }
    Ok(())
}

fn put(m: &mut Message, field: u32, kind: &Kind, v: &Value, path: &str) -> Result<()> {
    match kind {
        Kind::Str => m.string(field, str_of(v, path)?),
        Kind::Bool => m.bool(field, v.as_bool().ok_or_else(|| wrong(path, "a boolean"))?),
        Kind::Int => m.int64(field, v.as_i64().ok_or_else(|| wrong(path, "an integer"))?),
        Kind::Double => m.double(field, v.as_f64().ok_or_else(|| wrong(path, "a number"))?),
        Kind::Strs => {
            for (i, s) in array(v, path)?.iter().enumerate() {
                m.repeated_string(field, str_of(s, &child(path, &i.to_string()))?);
            }
        }
        Kind::Any => m.message(field, any(v, path)?),
        Kind::Anys => {
            for (i, item) in array(v, path)?.iter().enumerate() {
                m.message(field, any(item, &child(path, &i.to_string()))?);
            }
        }
        Kind::Msg(encode) => m.message(field, encode(v, path)?),
        Kind::Msgs(encode) => {
            for (i, item) in array(v, path)?.iter().enumerate() {
                m.message(field, encode(item, &child(path, &i.to_string()))?);
            }
        }
        Kind::Named(encode) => {
            let mut map = Message::new();
            for (name, value) in object(v, path)? {
                let mut pair = Message::new();
                pair.string(1, name);
                pair.message(2, encode(value, &child(path, name))?);
                map.message(1, pair);
            }
            m.message(field, map);
        }
    }
    Ok(())
}

/// A message from a JSON object by `spec`, fields in number order.
fn by_spec(spec: &Spec, v: &Value, path: &str) -> Result<Message> {
    let obj = object(v, path)?;
    if let Some(key) = obj.keys().find(|k| {
        let extension = k.starts_with("x-") && spec.extensions.is_some();
        !extension && !spec.fields.iter().any(|(name, ..)| name == k)
    }) {
        return Err(unknown(path, spec.message, key));
    }
    let mut m = Message::new();
    for (key, field, kind) in spec.fields {
        if let Some(value) = obj.get(*key) {
            put(&mut m, *field, kind, value, &child(path, key))?;
        }
    }
    if let Some(field) = spec.extensions {
        extensions(&mut m, field, obj, path)?;
    }
    Ok(m)
}

const DOCUMENT: Spec = Spec {
    message: "Document",
    fields: &[
        ("swagger", 1, Kind::Str),
        ("info", 2, Kind::Msg(info)),
        ("host", 3, Kind::Str),
        ("basePath", 4, Kind::Str),
        ("schemes", 5, Kind::Strs),
        ("consumes", 6, Kind::Strs),
        ("produces", 7, Kind::Strs),
        ("paths", 8, Kind::Msg(paths)),
        ("definitions", 9, Kind::Named(schema)),
        ("parameters", 10, Kind::Named(parameter)),
        ("responses", 11, Kind::Named(response)),
        ("tags", 14, Kind::Msgs(tag)),
        ("externalDocs", 15, Kind::Msg(external_docs)),
    ],
    extensions: Some(16),
};

fn document(v: &Value, path: &str) -> Result<Message> {
    by_spec(&DOCUMENT, v, path)
}

fn info(v: &Value, path: &str) -> Result<Message> {
    const INFO: Spec = Spec {
        message: "Info",
        fields: &[
            ("title", 1, Kind::Str),
            ("version", 2, Kind::Str),
            ("description", 3, Kind::Str),
            ("termsOfService", 4, Kind::Str),
            ("contact", 5, Kind::Msg(contact)),
            ("license", 6, Kind::Msg(license)),
        ],
        extensions: Some(7),
    };
    by_spec(&INFO, v, path)
}

fn contact(v: &Value, path: &str) -> Result<Message> {
    const CONTACT: Spec = Spec {
        message: "Contact",
        fields: &[
            ("name", 1, Kind::Str),
            ("url", 2, Kind::Str),
            ("email", 3, Kind::Str),
        ],
        extensions: Some(4),
    };
    by_spec(&CONTACT, v, path)
}

fn license(v: &Value, path: &str) -> Result<Message> {
    const LICENSE: Spec = Spec {
        message: "License",
        fields: &[("name", 1, Kind::Str), ("url", 2, Kind::Str)],
        extensions: Some(3),
    };
    by_spec(&LICENSE, v, path)
}

fn external_docs(v: &Value, path: &str) -> Result<Message> {
    const EXTERNAL_DOCS: Spec = Spec {
        message: "ExternalDocs",
        fields: &[("description", 1, Kind::Str), ("url", 2, Kind::Str)],
        extensions: Some(3),
    };
    by_spec(&EXTERNAL_DOCS, v, path)
}

fn tag(v: &Value, path: &str) -> Result<Message> {
    const TAG: Spec = Spec {
        message: "Tag",
        fields: &[
            ("name", 1, Kind::Str),
            ("description", 2, Kind::Str),
            ("externalDocs", 3, Kind::Msg(external_docs)),
        ],
        extensions: Some(4),
    };
    by_spec(&TAG, v, path)
}

/// `Paths`: `x-` keys into `vendor_extension` (1), paths into `path` (2).
fn paths(v: &Value, path: &str) -> Result<Message> {
    let obj = object(v, path)?;
    let mut m = Message::new();
    extensions(&mut m, 1, obj, path)?;
    for (name, item) in obj.iter().filter(|(k, _)| !k.starts_with("x-")) {
        if !name.starts_with('/') {
            return Err(unknown(path, "Paths", name));
        }
        let mut pair = Message::new();
        pair.string(1, name);
        pair.message(2, path_item(item, &child(path, name))?);
        m.message(2, pair);
    }
    Ok(m)
}

fn path_item(v: &Value, path: &str) -> Result<Message> {
    const PATH_ITEM: Spec = Spec {
        message: "PathItem",
        fields: &[
            ("$ref", 1, Kind::Str),
            ("get", 2, Kind::Msg(operation)),
            ("put", 3, Kind::Msg(operation)),
            ("post", 4, Kind::Msg(operation)),
            ("delete", 5, Kind::Msg(operation)),
            ("options", 6, Kind::Msg(operation)),
            ("head", 7, Kind::Msg(operation)),
            ("patch", 8, Kind::Msg(operation)),
            ("parameters", 9, Kind::Msgs(parameters_item)),
        ],
        extensions: Some(10),
    };
    by_spec(&PATH_ITEM, v, path)
}

fn operation(v: &Value, path: &str) -> Result<Message> {
    const OPERATION: Spec = Spec {
        message: "Operation",
        fields: &[
            ("tags", 1, Kind::Strs),
            ("summary", 2, Kind::Str),
            ("description", 3, Kind::Str),
            ("externalDocs", 4, Kind::Msg(external_docs)),
            ("operationId", 5, Kind::Str),
            ("produces", 6, Kind::Strs),
            ("consumes", 7, Kind::Strs),
            ("parameters", 8, Kind::Msgs(parameters_item)),
            ("responses", 9, Kind::Msg(responses)),
            ("schemes", 10, Kind::Strs),
            ("deprecated", 11, Kind::Bool),
        ],
        extensions: Some(13),
    };
    by_spec(&OPERATION, v, path)
}

fn json_reference(v: &Value, path: &str) -> Result<Message> {
    const JSON_REFERENCE: Spec = Spec {
        message: "JsonReference",
        fields: &[("$ref", 1, Kind::Str), ("description", 2, Kind::Str)],
        extensions: None,
    };
    by_spec(&JSON_REFERENCE, v, path)
}

/// `ParametersItem`: a `$ref` (`json_reference` = 2) or a `parameter` (1).
fn parameters_item(v: &Value, path: &str) -> Result<Message> {
    let mut m = Message::new();
    if object(v, path)?.contains_key("$ref") {
        m.message(2, json_reference(v, path)?);
    } else {
        m.message(1, parameter(v, path)?);
    }
    Ok(m)
}

/// `Parameter`: `body_parameter` (1) for `in: body`, otherwise
/// `non_body_parameter` (2) holding the sub-schema of its location.
fn parameter(v: &Value, path: &str) -> Result<Message> {
    let location = object(v, path)?
        .get("in")
        .map(|l| str_of(l, &child(path, "in")))
        .transpose()?
        .unwrap_or_default();
    let mut m = Message::new();
    if location == "body" {
        m.message(1, by_spec(&BODY_PARAMETER, v, path)?);
        return Ok(m);
    }
    let (choice, spec) = match location {
        "header" => (1, &HEADER_PARAMETER),
        "formData" => (2, &FORM_DATA_PARAMETER),
        "query" => (3, &QUERY_PARAMETER),
        "path" => (4, &PATH_PARAMETER),
        _ => {
            return Err(wrong(
                &child(path, "in"),
                "body, header, formData, query or path",
            ));
        }
    };
    let mut non_body = Message::new();
    non_body.message(choice, by_spec(spec, v, path)?);
    m.message(2, non_body);
    Ok(m)
}

const BODY_PARAMETER: Spec = Spec {
    message: "BodyParameter",
    fields: &[
        ("description", 1, Kind::Str),
        ("name", 2, Kind::Str),
        ("in", 3, Kind::Str),
        ("required", 4, Kind::Bool),
        ("schema", 5, Kind::Msg(schema)),
    ],
    extensions: Some(6),
};

/// Query and formData sub-schemas (they have `allowEmptyValue` = 5).
macro_rules! query_like {
    ($message:literal) => {
        Spec {
            message: $message,
            fields: &[
                ("required", 1, Kind::Bool),
                ("in", 2, Kind::Str),
                ("description", 3, Kind::Str),
                ("name", 4, Kind::Str),
                ("allowEmptyValue", 5, Kind::Bool),
                ("type", 6, Kind::Str),
                ("format", 7, Kind::Str),
                ("items", 8, Kind::Msg(primitives_items)),
                ("collectionFormat", 9, Kind::Str),
                ("default", 10, Kind::Any),
                ("maximum", 11, Kind::Double),
                ("exclusiveMaximum", 12, Kind::Bool),
                ("minimum", 13, Kind::Double),
                ("exclusiveMinimum", 14, Kind::Bool),
                ("maxLength", 15, Kind::Int),
                ("minLength", 16, Kind::Int),
                ("pattern", 17, Kind::Str),
                ("maxItems", 18, Kind::Int),
                ("minItems", 19, Kind::Int),
                ("uniqueItems", 20, Kind::Bool),
                ("enum", 21, Kind::Anys),
                ("multipleOf", 22, Kind::Double),
            ],
            extensions: Some(23),
        }
    };
}

/// Path and header sub-schemas (no `allowEmptyValue`).
macro_rules! path_like {
    ($message:literal) => {
        Spec {
            message: $message,
            fields: &[
                ("required", 1, Kind::Bool),
                ("in", 2, Kind::Str),
                ("description", 3, Kind::Str),
                ("name", 4, Kind::Str),
                ("type", 5, Kind::Str),
                ("format", 6, Kind::Str),
                ("items", 7, Kind::Msg(primitives_items)),
                ("collectionFormat", 8, Kind::Str),
                ("default", 9, Kind::Any),
                ("maximum", 10, Kind::Double),
                ("exclusiveMaximum", 11, Kind::Bool),
                ("minimum", 12, Kind::Double),
                ("exclusiveMinimum", 13, Kind::Bool),
                ("maxLength", 14, Kind::Int),
                ("minLength", 15, Kind::Int),
                ("pattern", 16, Kind::Str),
                ("maxItems", 17, Kind::Int),
                ("minItems", 18, Kind::Int),
                ("uniqueItems", 19, Kind::Bool),
                ("enum", 20, Kind::Anys),
                ("multipleOf", 21, Kind::Double),
            ],
            extensions: Some(22),
        }
    };
}

const QUERY_PARAMETER: Spec = query_like!("QueryParameterSubSchema");
const FORM_DATA_PARAMETER: Spec = query_like!("FormDataParameterSubSchema");
const PATH_PARAMETER: Spec = path_like!("PathParameterSubSchema");
const HEADER_PARAMETER: Spec = path_like!("HeaderParameterSubSchema");

fn primitives_items(v: &Value, path: &str) -> Result<Message> {
    const PRIMITIVES_ITEMS: Spec = Spec {
        message: "PrimitivesItems",
        fields: &[
            ("type", 1, Kind::Str),
            ("format", 2, Kind::Str),
            ("items", 3, Kind::Msg(primitives_items)),
            ("collectionFormat", 4, Kind::Str),
            ("default", 5, Kind::Any),
            ("maximum", 6, Kind::Double),
            ("exclusiveMaximum", 7, Kind::Bool),
            ("minimum", 8, Kind::Double),
            ("exclusiveMinimum", 9, Kind::Bool),
            ("maxLength", 10, Kind::Int),
            ("minLength", 11, Kind::Int),
            ("pattern", 12, Kind::Str),
            ("maxItems", 13, Kind::Int),
            ("minItems", 14, Kind::Int),
            ("uniqueItems", 15, Kind::Bool),
            ("enum", 16, Kind::Anys),
            ("multipleOf", 17, Kind::Double),
        ],
        extensions: Some(18),
    };
    by_spec(&PRIMITIVES_ITEMS, v, path)
}

/// `Responses`: codes into `response_code` (1), `x-` keys into
/// `vendor_extension` (2).
fn responses(v: &Value, path: &str) -> Result<Message> {
    let obj = object(v, path)?;
    let mut m = Message::new();
    for (code, value) in obj.iter().filter(|(k, _)| !k.starts_with("x-")) {
        let p = child(path, code);
        let mut choice = Message::new();
        if object(value, &p)?.contains_key("$ref") {
            choice.message(2, json_reference(value, &p)?);
        } else {
            choice.message(1, response(value, &p)?);
        }
        let mut pair = Message::new();
        pair.string(1, code);
        pair.message(2, choice);
        m.message(1, pair);
    }
    extensions(&mut m, 2, obj, path)?;
    Ok(m)
}

fn response(v: &Value, path: &str) -> Result<Message> {
    const RESPONSE: Spec = Spec {
        message: "Response",
        fields: &[
            ("description", 1, Kind::Str),
            ("schema", 2, Kind::Msg(schema_item)),
            ("headers", 3, Kind::Named(header)),
            ("examples", 4, Kind::Named(any)),
        ],
        extensions: Some(5),
    };
    by_spec(&RESPONSE, v, path)
}

fn header(v: &Value, path: &str) -> Result<Message> {
    const HEADER: Spec = Spec {
        message: "Header",
        fields: &[
            ("type", 1, Kind::Str),
            ("format", 2, Kind::Str),
            ("items", 3, Kind::Msg(primitives_items)),
            ("collectionFormat", 4, Kind::Str),
            ("default", 5, Kind::Any),
            ("maximum", 6, Kind::Double),
            ("exclusiveMaximum", 7, Kind::Bool),
            ("minimum", 8, Kind::Double),
            ("exclusiveMinimum", 9, Kind::Bool),
            ("maxLength", 10, Kind::Int),
            ("minLength", 11, Kind::Int),
            ("pattern", 12, Kind::Str),
            ("maxItems", 13, Kind::Int),
            ("minItems", 14, Kind::Int),
            ("uniqueItems", 15, Kind::Bool),
            ("enum", 16, Kind::Anys),
            ("multipleOf", 17, Kind::Double),
            ("description", 18, Kind::Str),
        ],
        extensions: Some(19),
    };
    by_spec(&HEADER, v, path)
}

/// `SchemaItem`: a `file_schema` (2) for `type: file`, else a `schema` (1).
fn schema_item(v: &Value, path: &str) -> Result<Message> {
    const FILE_SCHEMA: Spec = Spec {
        message: "FileSchema",
        fields: &[
            ("format", 1, Kind::Str),
            ("title", 2, Kind::Str),
            ("description", 3, Kind::Str),
            ("default", 4, Kind::Any),
            ("required", 5, Kind::Strs),
            ("type", 6, Kind::Str),
            ("readOnly", 7, Kind::Bool),
            ("externalDocs", 8, Kind::Msg(external_docs)),
            ("example", 9, Kind::Any),
        ],
        extensions: Some(10),
    };
    let mut m = Message::new();
    if object(v, path)?.get("type").and_then(Value::as_str) == Some("file") {
        m.message(2, by_spec(&FILE_SCHEMA, v, path)?);
    } else {
        m.message(1, schema(v, path)?);
    }
    Ok(m)
}

const SCHEMA: Spec = Spec {
    message: "Schema",
    fields: &[
        ("$ref", 1, Kind::Str),
        ("format", 2, Kind::Str),
        ("title", 3, Kind::Str),
        ("description", 4, Kind::Str),
        ("default", 5, Kind::Any),
        ("multipleOf", 6, Kind::Double),
        ("maximum", 7, Kind::Double),
        ("exclusiveMaximum", 8, Kind::Bool),
        ("minimum", 9, Kind::Double),
        ("exclusiveMinimum", 10, Kind::Bool),
        ("maxLength", 11, Kind::Int),
        ("minLength", 12, Kind::Int),
        ("pattern", 13, Kind::Str),
        ("maxItems", 14, Kind::Int),
        ("minItems", 15, Kind::Int),
        ("uniqueItems", 16, Kind::Bool),
        ("maxProperties", 17, Kind::Int),
        ("minProperties", 18, Kind::Int),
        ("required", 19, Kind::Strs),
        ("enum", 20, Kind::Anys),
        ("additionalProperties", 21, Kind::Msg(additional_properties)),
        ("type", 22, Kind::Msg(type_item)),
        ("items", 23, Kind::Msg(items_item)),
        ("allOf", 24, Kind::Msgs(schema)),
        ("properties", 25, Kind::Named(schema)),
        ("discriminator", 26, Kind::Str),
        ("readOnly", 27, Kind::Bool),
        ("xml", 28, Kind::Msg(xml)),
        ("externalDocs", 29, Kind::Msg(external_docs)),
        ("example", 30, Kind::Any),
    ],
    extensions: Some(31),
};

fn schema(v: &Value, path: &str) -> Result<Message> {
    by_spec(&SCHEMA, v, path)
}

fn xml(v: &Value, path: &str) -> Result<Message> {
    const XML: Spec = Spec {
        message: "Xml",
        fields: &[
            ("name", 1, Kind::Str),
            ("namespace", 2, Kind::Str),
            ("prefix", 3, Kind::Str),
            ("attribute", 4, Kind::Bool),
            ("wrapped", 5, Kind::Bool),
        ],
        extensions: Some(6),
    };
    by_spec(&XML, v, path)
}

/// `AdditionalPropertiesItem`: `boolean` (2) or `schema` (1).
fn additional_properties(v: &Value, path: &str) -> Result<Message> {
    let mut m = Message::new();
    match v {
        Value::Bool(b) => m.oneof_bool(2, *b),
        _ => m.message(1, schema(v, path)?),
    }
    Ok(m)
}

/// `TypeItem{repeated string value = 1}`: one type or a list.
fn type_item(v: &Value, path: &str) -> Result<Message> {
    let mut m = Message::new();
    match v {
        Value::String(s) => m.repeated_string(1, s),
        _ => put(&mut m, 1, &Kind::Strs, v, path)?,
    }
    Ok(m)
}

/// `ItemsItem{repeated Schema schema = 1}`: one schema or a list.
fn items_item(v: &Value, path: &str) -> Result<Message> {
    let mut m = Message::new();
    match v {
        Value::Array(_) => put(&mut m, 1, &Kind::Msgs(schema), v, path)?,
        _ => m.message(1, schema(v, path)?),
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A wire-format reader written from the encoding spec alone, so the
    /// tests do not read back with the writer's own code.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Wire<'a> {
        Varint(u64),
        Fixed64([u8; 8]),
        Bytes(&'a [u8]),
    }

    fn varint(buf: &mut &[u8]) -> u64 {
        let mut out = 0u64;
        let mut shift = 0;
        loop {
            let (b, rest) = buf.split_first().expect("truncated varint");
            *buf = rest;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return out;
            }
            shift += 7;
        }
    }

    fn decode(mut buf: &[u8]) -> Vec<(u64, Wire<'_>)> {
        let mut out = Vec::new();
        while !buf.is_empty() {
            let key = varint(&mut buf);
            let wire = match key & 7 {
                0 => Wire::Varint(varint(&mut buf)),
                1 => {
                    let (b, rest) = buf.split_at(8);
                    buf = rest;
                    Wire::Fixed64(b.try_into().expect("8 bytes"))
                }
                2 => {
                    let len = usize::try_from(varint(&mut buf)).expect("len");
                    let (b, rest) = buf.split_at(len);
                    buf = rest;
                    Wire::Bytes(b)
                }
                other => panic!("wire type {other}"),
            };
            out.push((key >> 3, wire));
        }
        out
    }

    /// Every length-delimited value of `field`.
    fn all(buf: &[u8], field: u64) -> Vec<&[u8]> {
        decode(buf)
            .into_iter()
            .filter(|(f, _)| *f == field)
            .map(|(_, w)| match w {
                Wire::Bytes(b) => b,
                other => panic!("field {field} is {other:?}"),
            })
            .collect()
    }

    /// The one length-delimited value of `field`.
    fn one(buf: &[u8], field: u64) -> &[u8] {
        let v = all(buf, field);
        assert_eq!(v.len(), 1, "field {field} in {:?}", decode(buf));
        v[0]
    }

    fn text(buf: &[u8], field: u64) -> String {
        String::from_utf8(one(buf, field).to_vec()).expect("utf-8")
    }

    fn texts(buf: &[u8], field: u64) -> Vec<String> {
        all(buf, field)
            .into_iter()
            .map(|b| String::from_utf8(b.to_vec()).expect("utf-8"))
            .collect()
    }

    fn varint_field(buf: &[u8], field: u64) -> Option<u64> {
        decode(buf).into_iter().find_map(|(f, w)| match w {
            Wire::Varint(v) if f == field => Some(v),
            _ => None,
        })
    }

    /// The value of entry `name` in a map message (`repeated Named*` at 1)
    /// or in a `repeated Named*` at `field` of `buf`.
    fn named<'a>(buf: &'a [u8], field: u64, name: &str) -> &'a [u8] {
        all(buf, field)
            .into_iter()
            .find(|pair| text(pair, 1) == name)
            .map(|pair| one(pair, 2))
            .unwrap_or_else(|| panic!("no {name}"))
    }

    /// The YAML text of vendor extension `name` at `field`, parsed (it is
    /// JSON).
    fn extension(buf: &[u8], field: u64, name: &str) -> Value {
        let any = named(buf, field, name);
        serde_json::from_str(&text(any, 2)).expect("extension value")
    }

    #[test]
    fn a_minimal_document_has_the_expected_bytes() {
        let doc = json!({"swagger": "2.0", "info": {"title": "T", "version": "v"}});
        let bytes = encode(&doc).expect("encodes");
        let want: &[u8] = &[
            0x0a, 0x03, b'2', b'.', b'0', // swagger = 1
            0x12, 0x06, // info = 2, 6 bytes
            0x0a, 0x01, b'T', // title = 1
            0x12, 0x01, b'v', // version = 2
        ];
        assert_eq!(bytes, want);
    }

    fn sample() -> Value {
        json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": "v1"},
            "paths": {
                "/api/v1/namespaces/{namespace}/pods/{name}": {
                    "parameters": [
                        {"name": "name", "in": "path", "required": true, "type": "string", "uniqueItems": true},
                        {"$ref": "#/parameters/pretty"}
                    ],
                    "patch": {
                        "consumes": ["application/json-patch+json", "application/strategic-merge-patch+json"],
                        "operationId": "patchCoreV1NamespacedPod",
                        "parameters": [
                            {"name": "fieldValidation", "in": "query", "type": "string", "uniqueItems": true},
                            {"name": "force", "in": "query", "type": "boolean"},
                            {"name": "body", "in": "body", "required": true,
                             "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
                        ],
                        "responses": {
                            "200": {"description": "OK", "schema": {"$ref": "#/definitions/io.k8s.api.core.v1.Pod"}},
                            "401": {"description": "Unauthorized"}
                        },
                        "x-kubernetes-action": "patch",
                        "x-kubernetes-group-version-kind": {"group": "", "kind": "Pod", "version": "v1"}
                    }
                }
            },
            "definitions": {
                "io.k8s.api.core.v1.Pod": {
                    "description": "Pod is a collection of containers.",
                    "type": "object",
                    "properties": {
                        "spec": {"$ref": "#/definitions/io.k8s.api.core.v1.PodSpec", "description": "Spec."},
                        "containers": {
                            "type": "array",
                            "items": {"$ref": "#/definitions/io.k8s.api.core.v1.Container"},
                            "x-kubernetes-patch-merge-key": "name",
                            "x-kubernetes-patch-strategy": "merge"
                        },
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "closed": {"type": "object", "additionalProperties": false},
                        "port": {"x-kubernetes-int-or-string": true, "format": "int-or-string"},
                        "replicas": {"type": "integer", "format": "int32", "minimum": -1.5, "maxLength": 300},
                        "phase": {"type": "string", "enum": ["Pending", "Running"], "default": "Pending"}
                    },
                    "required": ["spec"],
                    "x-kubernetes-group-version-kind": [{"group": "", "kind": "Pod", "version": "v1"}]
                }
            }
        })
    }

    #[test]
    fn paths_operations_and_parameters_map_to_their_messages() {
        let bytes = encode(&sample()).expect("encodes");
        assert_eq!(text(&bytes, 1), "2.0");
        let paths = one(&bytes, 8);
        assert!(all(paths, 1).is_empty(), "no vendor extensions");
        let item = named(paths, 2, "/api/v1/namespaces/{namespace}/pods/{name}");
        // PathItem.parameters (9): a path parameter, then a reference.
        let params = all(item, 9);
        assert_eq!(params.len(), 2);
        let path_param = one(one(one(params[0], 1), 2), 4); // ParametersItem.parameter → NonBodyParameter → path
        assert_eq!(varint_field(path_param, 1), Some(1), "required");
        assert_eq!(text(path_param, 2), "path");
        assert_eq!(text(path_param, 4), "name");
        assert_eq!(text(path_param, 5), "string");
        assert_eq!(varint_field(path_param, 19), Some(1), "uniqueItems");
        assert_eq!(text(one(params[1], 2), 1), "#/parameters/pretty");
        // PathItem.patch (8).
        let patch = one(item, 8);
        assert_eq!(
            texts(patch, 7),
            [
                "application/json-patch+json",
                "application/strategic-merge-patch+json"
            ]
        );
        assert_eq!(text(patch, 5), "patchCoreV1NamespacedPod");
        let ops = all(patch, 8);
        let query = one(one(one(ops[0], 1), 2), 3);
        assert_eq!(text(query, 2), "query");
        assert_eq!(text(query, 4), "fieldValidation");
        assert_eq!(text(query, 6), "string");
        assert_eq!(varint_field(query, 20), Some(1), "uniqueItems");
        let force = one(one(one(ops[1], 1), 2), 3);
        assert_eq!(text(force, 6), "boolean");
        assert_eq!(varint_field(force, 20), None, "false is not written");
        let body = one(one(ops[2], 1), 1);
        assert_eq!(text(body, 2), "body");
        assert_eq!(text(body, 3), "body");
        assert_eq!(varint_field(body, 4), Some(1));
        assert_eq!(
            text(one(body, 5), 1),
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
        );
        let responses = one(patch, 9);
        let ok = one(named(responses, 1, "200"), 1);
        assert_eq!(text(ok, 1), "OK");
        assert_eq!(
            text(one(one(ok, 2), 1), 1),
            "#/definitions/io.k8s.api.core.v1.Pod"
        );
        let unauthorized = one(named(responses, 1, "401"), 1);
        assert!(all(unauthorized, 2).is_empty());
        assert_eq!(extension(patch, 13, "x-kubernetes-action"), "patch");
        assert_eq!(
            extension(patch, 13, "x-kubernetes-group-version-kind"),
            json!({"group": "", "kind": "Pod", "version": "v1"})
        );
    }

    #[test]
    fn schemas_map_to_their_messages() {
        let bytes = encode(&sample()).expect("encodes");
        let pod = named(one(&bytes, 9), 1, "io.k8s.api.core.v1.Pod");
        assert_eq!(text(pod, 4), "Pod is a collection of containers.");
        assert_eq!(texts(one(pod, 22), 1), ["object"]);
        assert_eq!(texts(pod, 19), ["spec"]);
        assert_eq!(
            extension(pod, 31, "x-kubernetes-group-version-kind"),
            json!([{"group": "", "kind": "Pod", "version": "v1"}])
        );
        let props = one(pod, 25);
        let spec = named(props, 1, "spec");
        assert_eq!(text(spec, 1), "#/definitions/io.k8s.api.core.v1.PodSpec");
        assert_eq!(text(spec, 4), "Spec.");
        let containers = named(props, 1, "containers");
        assert_eq!(texts(one(containers, 22), 1), ["array"]);
        let items = all(one(containers, 23), 1);
        assert_eq!(items.len(), 1);
        assert_eq!(
            text(items[0], 1),
            "#/definitions/io.k8s.api.core.v1.Container"
        );
        assert_eq!(
            extension(containers, 31, "x-kubernetes-patch-merge-key"),
            "name"
        );
        assert_eq!(
            extension(containers, 31, "x-kubernetes-patch-strategy"),
            "merge"
        );
        let labels = named(props, 1, "labels");
        assert_eq!(texts(one(one(one(labels, 21), 1), 22), 1), ["string"]);
        let closed = named(props, 1, "closed");
        assert_eq!(
            decode(one(closed, 21)),
            [(2, Wire::Varint(0))],
            "boolean false is set"
        );
        let port = named(props, 1, "port");
        assert_eq!(text(port, 2), "int-or-string");
        assert_eq!(extension(port, 31, "x-kubernetes-int-or-string"), true);
        let replicas = named(props, 1, "replicas");
        let minimum = decode(replicas).into_iter().find_map(|(f, w)| match w {
            Wire::Fixed64(b) if f == 9 => Some(f64::from_le_bytes(b)),
            _ => None,
        });
        assert_eq!(minimum, Some(-1.5));
        assert_eq!(varint_field(replicas, 11), Some(300), "maxLength");
        let phase = named(props, 1, "phase");
        let values: Vec<Value> = all(phase, 20)
            .into_iter()
            .map(|any| serde_json::from_str(&text(any, 2)).expect("enum value"))
            .collect();
        assert_eq!(values, [json!("Pending"), json!("Running")]);
        assert_eq!(
            text(one(phase, 5), 2),
            "\"Pending\"\n",
            "default as YAML text"
        );
    }

    /// The served document encodes whole: every definition and path is
    /// there, with the fields kubectl reads.
    #[test]
    fn the_served_document_encodes_whole() {
        let doc = crate::discovery::openapi::v2();
        let bytes = crate::discovery::openapi::v2_protobuf().expect("the served document encodes");
        assert_eq!(bytes, encode(&doc).expect("encodes").as_slice());
        let definitions = all(one(bytes, 9), 1);
        let json_definitions = doc["definitions"].as_object().expect("definitions");
        assert_eq!(definitions.len(), json_definitions.len());
        for (pair, name) in definitions.iter().zip(json_definitions.keys()) {
            assert_eq!(&text(pair, 1), name);
        }
        let paths = all(one(bytes, 8), 2);
        let json_paths = doc["paths"].as_object().expect("paths");
        assert_eq!(paths.len(), json_paths.len());
        let operations = ["get", "put", "post", "delete", "options", "head", "patch"];
        for (pair, (name, item)) in paths.iter().zip(json_paths) {
            assert_eq!(&text(pair, 1), name);
            let encoded = one(pair, 2);
            for (field, op) in (2..).zip(operations) {
                assert_eq!(
                    all(encoded, field).len(),
                    usize::from(item.get(op).is_some()),
                    "{name} {op}"
                );
            }
        }
        let defs = one(bytes, 9);
        let pod = named(defs, 1, "io.k8s.api.core.v1.Pod");
        assert_eq!(
            extension(pod, 31, "x-kubernetes-group-version-kind"),
            json!([{"group": "", "kind": "Pod", "version": "v1"}])
        );
        let containers = named(
            one(named(defs, 1, "io.k8s.api.core.v1.PodSpec"), 25),
            1,
            "containers",
        );
        assert_eq!(
            extension(containers, 31, "x-kubernetes-patch-merge-key"),
            "name"
        );
        let pod_path = named(
            one(bytes, 8),
            2,
            "/api/v1/namespaces/{namespace}/pods/{name}",
        );
        let patch = one(pod_path, 8);
        let query_names: Vec<String> = all(patch, 8)
            .into_iter()
            .filter_map(|item| {
                let non_body = all(one(item, 1), 2);
                non_body.first().map(|nb| text(one(nb, 3), 4))
            })
            .collect();
        assert!(
            query_names.iter().any(|n| n == "fieldValidation"),
            "{query_names:?}"
        );
    }

    #[test]
    fn keys_gnostic_lacks_and_wrong_types_are_errors() {
        let mut doc = sample();
        doc["definitions"]["io.k8s.api.core.v1.Pod"]["properties"]["spec"]["nullable"] =
            json!(true);
        assert_eq!(
            encode(&doc),
            Err(EncodeError::UnknownField {
                path: "/definitions/io.k8s.api.core.v1.Pod/properties/spec".into(),
                message: "Schema",
                key: "nullable".into(),
            })
        );
        let doc = json!({"swagger": "2.0", "definitions": {"A": {"required": "x"}}});
        assert_eq!(
            encode(&doc),
            Err(EncodeError::WrongType {
                path: "/definitions/A/required".into(),
                expected: "an array",
            })
        );
        let doc =
            json!({"paths": {"/a": {"get": {"parameters": [{"name": "x", "in": "cookie"}]}}}});
        assert!(matches!(encode(&doc), Err(EncodeError::WrongType { .. })));
        let doc = json!({"paths": {"a": {}}});
        assert!(matches!(
            encode(&doc),
            Err(EncodeError::UnknownField { .. })
        ));
    }
}
