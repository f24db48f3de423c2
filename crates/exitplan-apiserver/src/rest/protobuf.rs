//! The few Kubernetes protobuf bodies kubectl's typed clients send that
//! this server decodes: a `Namespace` (`kubectl create namespace`). The
//! envelope is `k8s\0` + `runtime.Unknown{typeMeta, raw}`; `raw` is the
//! object in `generated.proto` form. Other kinds answer 415.

use serde_json::{Map, Value, json};

use super::errors::{ApiError, bad_request, unsupported_media_type};
use crate::registry::ResourceDef;

/// The protobuf media type.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const MAGIC: &[u8] = b"k8s\0";

/// One field of a message: number and value.
enum Field<'a> {
    Varint,
    Bytes(&'a [u8]),
    Fixed,
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Option<u64> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.buf.split_first()?;
            self.buf = rest;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(out);
            }
        }
        None
    }

    fn next(&mut self) -> Option<Result<(u64, Field<'a>), ()>> {
        if self.buf.is_empty() {
            return None;
        }
        let Some(key) = self.varint() else {
            return Some(Err(()));
        };
        let field = match key & 7 {
            0 => self.varint().map(|_| Field::Varint),
            1 | 5 => {
                let n = if key & 7 == 1 { 8 } else { 4 };
                (self.buf.len() >= n).then(|| {
                    self.buf = &self.buf[n..];
                    Field::Fixed
                })
            }
            2 => self.varint().and_then(|len| {
                let len = usize::try_from(len).ok()?;
                (self.buf.len() >= len).then(|| {
                    let (b, rest) = self.buf.split_at(len);
                    self.buf = rest;
                    Field::Bytes(b)
                })
            }),
            _ => None,
        };
        Some(field.map(|f| (key >> 3, f)).ok_or(()))
    }
}

fn fields(buf: &[u8]) -> Result<Vec<(u64, Field<'_>)>, ApiError> {
    let mut r = Reader { buf };
    let mut out = Vec::new();
    while let Some(f) = r.next() {
        out.push(f.map_err(|()| bad_request("invalid protobuf body"))?);
    }
    Ok(out)
}

fn string(b: &[u8]) -> Result<String, ApiError> {
    String::from_utf8(b.to_vec()).map_err(|_| bad_request("invalid UTF-8 in protobuf body"))
}

fn map_entry(b: &[u8]) -> Result<(String, String), ApiError> {
    let mut key = String::new();
    let mut value = String::new();
    for (n, f) in fields(b)? {
        match (n, f) {
            (1, Field::Bytes(k)) => key = string(k)?,
            (2, Field::Bytes(v)) => value = string(v)?,
            _ => {}
        }
    }
    Ok((key, value))
}

/// `ObjectMeta`: the fields a client sets on create.
fn object_meta(b: &[u8]) -> Result<Value, ApiError> {
    let mut meta = Map::new();
    let mut labels = Map::new();
    let mut annotations = Map::new();
    let mut finalizers = Vec::new();
    for (n, f) in fields(b)? {
        match (n, f) {
            (1, Field::Bytes(v)) => {
                meta.insert("name".into(), string(v)?.into());
            }
            (2, Field::Bytes(v)) => {
                meta.insert("generateName".into(), string(v)?.into());
            }
            (3, Field::Bytes(v)) => {
                meta.insert("namespace".into(), string(v)?.into());
            }
            (5, Field::Bytes(v)) => {
                meta.insert("uid".into(), string(v)?.into());
            }
            (6, Field::Bytes(v)) => {
                meta.insert("resourceVersion".into(), string(v)?.into());
            }
            (11, Field::Bytes(v)) => {
                let (k, val) = map_entry(v)?;
                labels.insert(k, val.into());
            }
            (12, Field::Bytes(v)) => {
                let (k, val) = map_entry(v)?;
                annotations.insert(k, val.into());
            }
            (14, Field::Bytes(v)) => finalizers.push(Value::from(string(v)?)),
            _ => {}
        }
    }
    if !labels.is_empty() {
        meta.insert("labels".into(), labels.into());
    }
    if !annotations.is_empty() {
        meta.insert("annotations".into(), annotations.into());
    }
    if !finalizers.is_empty() {
        meta.insert("finalizers".into(), finalizers.into());
    }
    Ok(meta.into())
}

fn namespace(raw: &[u8]) -> Result<Value, ApiError> {
    let mut out = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {}});
    for (n, f) in fields(raw)? {
        match (n, f) {
            (1, Field::Bytes(m)) => out["metadata"] = object_meta(m)?,
            (2, Field::Bytes(spec)) => {
                let mut finalizers = Vec::new();
                for (n, f) in fields(spec)? {
                    if let (1, Field::Bytes(v)) = (n, f) {
                        finalizers.push(Value::from(string(v)?));
                    }
                }
                if !finalizers.is_empty() {
                    out["spec"] = json!({"finalizers": finalizers});
                }
            }
            (_, Field::Varint | Field::Fixed | Field::Bytes(_)) => {}
        }
    }
    Ok(out)
}

/// The JSON form of a protobuf body for `def`, or 415 for kinds this server
/// cannot decode.
pub fn to_json(def: &ResourceDef, body: &[u8]) -> Result<Vec<u8>, ApiError> {
    let unsupported = || unsupported_media_type(super::negotiate::PRODUCED);
    if !(def.group.is_empty() && def.kind == "Namespace") {
        return Err(unsupported());
    }
    let envelope = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| bad_request("invalid protobuf body: missing the k8s envelope"))?;
    let mut raw = None;
    for (n, f) in fields(envelope)? {
        if let (2, Field::Bytes(b)) = (n, f) {
            raw = Some(b);
        }
    }
    let value = namespace(raw.unwrap_or_default())?;
    serde_json::to_vec(&value).map_err(super::errors::internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![(n << 3) | 2, u8::try_from(bytes.len()).expect("short")];
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn decodes_what_kubectl_create_namespace_sends() {
        let label = [field(1, b"team"), field(2, b"a")].concat();
        let meta = [field(1, b"scratch"), field(11, &label)].concat();
        let ns = [field(1, &meta), field(2, &[]), field(3, &[])].concat();
        let type_meta = [field(1, b"v1"), field(2, b"Namespace")].concat();
        let unknown = [field(1, &type_meta), field(2, &ns)].concat();
        let body = [MAGIC, &unknown].concat();
        let def = crate::registry::find("", "v1", "namespaces").expect("namespaces");
        let json: Value =
            serde_json::from_slice(&to_json(def, &body).expect("decodes")).expect("json");
        assert_eq!(json["metadata"]["name"], "scratch");
        assert_eq!(json["metadata"]["labels"]["team"], "a");
        let pods = crate::registry::find("", "v1", "pods").expect("pods");
        assert_eq!(to_json(pods, &body).map_err(|e| e.code()), Err(415));
        assert_eq!(to_json(def, b"nope").map_err(|e| e.code()), Err(400));
    }
}
