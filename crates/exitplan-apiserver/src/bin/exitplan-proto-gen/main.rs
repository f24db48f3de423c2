//! `exitplan-proto-gen`: regenerates `src/protobuf/schema.txt`, the table
//! the protobuf transcoder reads, from the `k8s-pb` crate's prost sources
//! (field numbers and wire types of upstream's `generated.proto`) and
//! `k8s-openapi`'s sources (the JSON name of each field, and whether it is
//! required). It only reads text: neither crate is compiled.
//!
//! ```sh
//! R=~/.cargo/registry/src/index.crates.io-*/
//! cargo run -p exitplan-apiserver --features proto-gen --bin exitplan-proto-gen -- \
//!     $R/k8s-pb-0.9.0/src $R/k8s-openapi-0.29.0/src/v1_37 \
//!     > crates/exitplan-apiserver/src/protobuf/schema.txt
//! ```
//!
//! Output: one `message <full.proto.Name>` line per message, then one line
//! per field: `<number> <jsonName> <type> [<message>] [flags]`, where the
//! JSON name is `-` for an inlined field (Go's `json:",inline"`), type is
//! one of `string int32 int64 bool bytes double message map_string
//! map_bytes map_message` and flags are `repeated`, `required` (the
//! field is written in JSON even when zero) and `pointer` (a Go pointer:
//! zero is a value, not "unset").

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The packages served (relative to the k8s-pb and k8s-openapi roots).
const PACKAGES: &[&str] = &[
    "api/apps/v1",
    "api/authentication/v1",
    "api/autoscaling/v1",
    "api/batch/v1",
    "api/coordination/v1",
    "api/core/v1",
    "api/discovery/v1",
    "api/events/v1",
    "api/networking/v1",
    "api/policy/v1",
    "api/rbac/v1",
    "api/scheduling/v1",
    "api/storage/v1",
    "apimachinery/pkg/api/resource",
    "apimachinery/pkg/apis/meta/v1",
    "apimachinery/pkg/runtime",
    "apimachinery/pkg/util/intstr",
];

/// Go pointer scalars (`*int32`, `*bool`, `*string`, …) whose zero value
/// means something: a client that sets one to zero writes it, so decoding
/// keeps it. The OpenAPI sources cannot tell a pointer from an omitempty
/// value field; this is the list that matters for what clients send.
const POINTERS: &[(&str, &[&str])] = &[
    (
        "DeploymentSpec",
        &[
            "replicas",
            "revisionHistoryLimit",
            "progressDeadlineSeconds",
        ],
    ),
    ("ReplicaSetSpec", &["replicas"]),
    ("StatefulSetSpec", &["replicas", "revisionHistoryLimit"]),
    ("DaemonSetSpec", &["revisionHistoryLimit"]),
    (
        "RollingUpdateStatefulSetStrategy",
        &["partition", "maxUnavailable"],
    ),
    ("ReplicationControllerSpec", &["replicas"]),
    (
        "PodSpec",
        &[
            "terminationGracePeriodSeconds",
            "activeDeadlineSeconds",
            "automountServiceAccountToken",
            "enableServiceLinks",
            "shareProcessNamespace",
            "hostUsers",
            "priority",
        ],
    ),
    ("ServiceAccount", &["automountServiceAccountToken"]),
    (
        "SecurityContext",
        &[
            "privileged",
            "runAsUser",
            "runAsGroup",
            "runAsNonRoot",
            "readOnlyRootFilesystem",
            "allowPrivilegeEscalation",
        ],
    ),
    (
        "PodSecurityContext",
        &["runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup"],
    ),
    ("Secret", &["immutable"]),
    ("ConfigMap", &["immutable"]),
    ("PersistentVolumeClaimSpec", &["storageClassName"]),
    ("ConfigMapKeySelector", &["optional"]),
    ("SecretKeySelector", &["optional"]),
    ("ConfigMapVolumeSource", &["defaultMode", "optional"]),
    ("SecretVolumeSource", &["defaultMode", "optional"]),
    ("ProjectedVolumeSource", &["defaultMode"]),
    ("KeyToPath", &["mode"]),
    ("ServiceSpec", &["allocateLoadBalancerNodePorts"]),
    (
        "JobSpec",
        &[
            "parallelism",
            "completions",
            "activeDeadlineSeconds",
            "backoffLimit",
            "ttlSecondsAfterFinished",
            "suspend",
            "backoffLimitPerIndex",
            "maxFailedIndexes",
            "manualSelector",
        ],
    ),
    (
        "CronJobSpec",
        &[
            "startingDeadlineSeconds",
            "suspend",
            "successfulJobsHistoryLimit",
            "failedJobsHistoryLimit",
        ],
    ),
    ("JobStatus", &["ready", "terminating"]),
    ("StorageClass", &["allowVolumeExpansion"]),
    ("ObjectMeta", &["deletionGracePeriodSeconds"]),
    ("DeleteOptions", &["gracePeriodSeconds", "orphanDependents"]),
    ("OwnerReference", &["controller", "blockOwnerDeletion"]),
    ("ListMeta", &["remainingItemCount"]),
];

/// One prost field.
struct Field {
    tag: u32,
    rust: String,
    ty: String,
    message: Option<String>,
    repeated: bool,
}

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [pb, openapi] = args.as_slice() else {
        eprintln!("usage: exitplan-proto-gen <k8s-pb/src> <k8s-openapi/src/v1_37>");
        std::process::exit(2);
    };
    let mut all: Vec<(String, String, Vec<Field>, Option<Openapi>)> = Vec::new();
    for package in PACKAGES {
        let file = pb.join(package).join("mod.rs");
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let module: Vec<&str> = package.split('/').collect();
        for (name, fields) in messages(&text, &module) {
            let json = json_names(&openapi.join(package), &name);
            let full = format!("k8s.io.{}.{name}", module.join("."));
            all.push((full, name, fields, json));
        }
    }
    let index: BTreeMap<&str, &[Field]> = all
        .iter()
        .map(|(full, _, fields, _)| (full.as_str(), fields.as_slice()))
        .collect();
    let mut out = String::new();
    for (full, name, fields, json) in &all {
        let _ = writeln!(out, "message {full}");
        for f in fields {
            let _ = writeln!(out, "{}", line(name, f, json.as_ref(), &index));
        }
    }
    print!("{out}");
}

/// The schema line of one field.
fn line(
    message: &str,
    f: &Field,
    json: Option<&Openapi>,
    index: &BTreeMap<&str, &[Field]>,
) -> String {
    let norm = normalize(&f.rust);
    let (json_name, required) = match json {
        Some(o) => match o.fields.iter().find(|(n, _)| normalize(n) == norm) {
            Some((n, req)) => (n.clone(), *req),
            // Go's embedded `json:",inline"` struct: its fields are the
            // parent's in JSON.
            None if f.ty == "message" && inlined(o, f, index) => ("-".to_owned(), false),
            None => {
                eprintln!("{message}.{}: no JSON name, guessed", f.rust);
                (camel(&f.rust), false)
            }
        },
        None => (camel(&f.rust), false),
    };
    let pointer = POINTERS
        .iter()
        .any(|(m, fs)| *m == message && fs.contains(&json_name.as_str()));
    let mut s = format!("{} {json_name} {}", f.tag, f.ty);
    if let Some(m) = &f.message {
        s.push(' ');
        s.push_str(m);
    }
    for (on, flag) in [
        (f.repeated, "repeated"),
        (required, "required"),
        (pointer, "pointer"),
    ] {
        if on {
            s.push(' ');
            s.push_str(flag);
        }
    }
    s
}

/// Whether every field of `f`'s message is a JSON field of the parent.
fn inlined(parent: &Openapi, f: &Field, index: &BTreeMap<&str, &[Field]>) -> bool {
    let Some(fields) = f.message.as_deref().and_then(|m| index.get(m)) else {
        return false;
    };
    fields.iter().all(|nested| {
        let n = normalize(&nested.rust);
        parent.fields.iter().any(|(j, _)| normalize(j) == n)
    })
}

/// `snake_case` → `lowerCamel` (for messages k8s-openapi has no struct for).
fn camel(s: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in s.trim_start_matches("r#").chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn normalize(s: &str) -> String {
    s.trim_start_matches("r#")
        .chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The messages of one prost file, in order, with their fields.
fn messages(text: &str, module: &[&str]) -> Vec<(String, Vec<Field>)> {
    let mut out: Vec<(String, Vec<Field>)> = Vec::new();
    let mut attr: Option<String> = None;
    let mut pending: Option<(String, String)> = None; // (attr, field text so far)
    for raw in text.lines() {
        let l = raw.trim();
        if let Some((a, mut decl)) = pending.take() {
            decl.push_str(l);
            if complete(&decl) {
                push_field(&mut out, &a, &decl, module);
            } else {
                pending = Some((a, decl));
            }
            continue;
        }
        if let Some(name) = l.strip_prefix("pub struct ") {
            let name = name
                .trim_end_matches("{}")
                .trim_end_matches('{')
                .trim()
                .to_owned();
            out.push((name, Vec::new()));
        } else if l.starts_with("#[prost(") {
            attr = Some(l.to_owned());
        } else if l.starts_with("pub ") && attr.is_some() {
            let a = attr.take().unwrap_or_default();
            if complete(l) {
                push_field(&mut out, &a, l, module);
            } else {
                pending = Some((a, l.to_owned()));
            }
        }
    }
    out
}

/// Whether a field declaration is whole: it ends with `,` outside any `<…>`.
fn complete(decl: &str) -> bool {
    decl.ends_with(',') && decl.matches('<').count() == decl.matches('>').count()
}

fn push_field(out: &mut [(String, Vec<Field>)], attr: &str, decl: &str, module: &[&str]) {
    let Some((_, fields)) = out.last_mut() else {
        return;
    };
    let inner = attr.trim_start_matches("#[prost(").trim_end_matches(")]");
    let tag: u32 = inner
        .split("tag = \"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .and_then(|t| t.parse().ok())
        .expect("a tag");
    let rust = decl
        .trim_start_matches("pub ")
        .split(':')
        .next()
        .expect("a name")
        .trim()
        .to_owned();
    let ty_text = decl.split_once(':').map(|(_, t)| t).unwrap_or_default();
    let repeated = inner.contains("repeated");
    let (ty, message) = if let Some(map) = inner.strip_prefix("btree_map = \"") {
        let value = map.split('"').next().unwrap_or_default();
        match value {
            "string, string" => ("map_string", None),
            "string, bytes" => ("map_bytes", None),
            "string, message" => {
                let t = ty_text.trim_end_matches([',', '>', ' ']);
                let t = t.rsplit_once(',').map(|(_, t)| t).unwrap_or_default();
                ("map_message", Some(resolve(t, module)))
            }
            other => panic!("map {other}"),
        }
    } else {
        let kind = inner.split([',', ' ']).next().unwrap_or_default();
        match kind {
            "message" => ("message", Some(resolve(ty_text, module))),
            "bytes" => ("bytes", None),
            "string" | "int32" | "int64" | "bool" | "double" => (kind, None),
            other => panic!("type {other}"),
        }
    };
    fields.push(Field {
        tag,
        rust,
        ty: ty.to_owned(),
        message,
        repeated,
    });
}

/// The full proto name of a Rust type path relative to `module`.
fn resolve(ty: &str, module: &[&str]) -> String {
    let path: String = ty
        .replace("::core::option::Option<", "")
        .replace("::prost::alloc::vec::Vec<", "")
        .replace("::prost::alloc::boxed::Box<", "")
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ':' || *c == '_')
        .collect();
    let mut parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
    let mut base: Vec<&str> = module.to_vec();
    while parts.first() == Some(&"super") {
        parts.remove(0);
        base.pop();
    }
    base.extend(parts);
    format!("k8s.io.{}", base.join("."))
}

/// What k8s-openapi says about a struct: its JSON field names, each with
/// whether it is required.
struct Openapi {
    fields: Vec<(String, bool)>,
}

fn json_names(dir: &Path, name: &str) -> Option<Openapi> {
    let entries = std::fs::read_dir(dir).ok()?;
    let decl = format!("pub struct {name} {{");
    for e in entries.flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        if !text.contains(&decl) {
            continue;
        }
        let body = text.split(&decl).nth(1)?.split("\n}").next()?;
        let mut required: BTreeMap<String, bool> = BTreeMap::new();
        for l in body.lines() {
            let l = l.trim();
            if let Some(rest) = l.strip_prefix("pub ")
                && let Some((field, ty)) = rest.split_once(':')
            {
                required.insert(field.trim().to_owned(), !ty.trim().starts_with("Option<"));
            }
        }
        let mut fields = Vec::new();
        for l in text.lines() {
            let l = l.trim();
            if let Some((json, key)) = l.split_once("\" => Field::Key_")
                && let Some(json) = json.strip_prefix('"')
            {
                let key = key.trim_end_matches(',');
                let req = required.get(key).copied().unwrap_or(false);
                fields.push((json.to_owned(), req));
            }
        }
        return Some(Openapi { fields });
    }
    None
}
