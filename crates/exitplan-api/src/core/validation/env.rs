//! `env`, `envFrom` and `valueFrom` of a container (`ValidateEnv`,
//! `ValidateEnvFrom`), including the downward API field and resource
//! selectors that volumes share.

use k8s_openapi::api::core::v1::{
    ConfigMapKeySelector, EnvFromSource, EnvVar, ObjectFieldSelector, ResourceFieldSelector,
    SecretKeySelector,
};

use super::quantity::Quantity;
use super::strings::{invalid_each, is_config_map_key, is_relaxed_env_var_name};
use crate::field::{Error, ErrorList, Path};
use crate::formats;

/// Downward API fields an env var may read (`validEnvDownwardAPIFieldPathExpressions`).
pub const ENV_FIELD_PATHS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// Container resources the downward API exposes.
pub const RESOURCE_FIELD_PATHS: &[&str] = &[
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

/// `ValidateEnv`.
pub fn validate_env(vars: &[EnvVar], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, ev) in vars.iter().enumerate() {
        let p = path.index(i);
        if ev.name.is_empty() {
            errs.push(Error::required(&p.child("name"), ""));
        } else {
            errs.append(invalid_each(
                &p.child("name"),
                &ev.name,
                is_relaxed_env_var_name(&ev.name),
            ));
        }
        errs.append(validate_value_from(ev, &p.child("valueFrom")));
    }
    errs
}

fn validate_value_from(ev: &EnvVar, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(from) = &ev.value_from else {
        return errs;
    };
    let mut sources = 0;
    if let Some(f) = &from.field_ref {
        sources += 1;
        errs.append(validate_object_field_selector(
            f,
            ENV_FIELD_PATHS,
            &path.child("fieldRef"),
        ));
    }
    if let Some(r) = &from.resource_field_ref {
        sources += 1;
        errs.append(validate_resource_field_selector(
            r,
            false,
            &path.child("resourceFieldRef"),
        ));
    }
    if let Some(c) = &from.config_map_key_ref {
        sources += 1;
        errs.append(validate_config_map_key_selector(
            c,
            &path.child("configMapKeyRef"),
        ));
    }
    if let Some(s) = &from.secret_key_ref {
        sources += 1;
        errs.append(validate_secret_key_selector(s, &path.child("secretKeyRef")));
    }
    if from.file_key_ref.is_some() {
        sources += 1;
    }
    if sources == 0 {
        errs.push(Error::invalid(
            path,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        ));
    } else if !ev.value.as_deref().unwrap_or_default().is_empty() {
        errs.push(Error::invalid(
            path,
            "",
            "may not be specified when `value` is not empty",
        ));
    } else if sources > 1 {
        errs.push(Error::invalid(
            path,
            "",
            "may not have more than one field specified at a time",
        ));
    }
    errs
}

/// `validateObjectFieldSelector`: apiVersion and fieldPath required; the
/// path is one of `allowed` or a subscripted labels/annotations path.
pub fn validate_object_field_selector(
    fs: &ObjectFieldSelector,
    allowed: &[&str],
    path: &Path,
) -> ErrorList {
    let api_version = fs.api_version.as_deref().unwrap_or_default();
    if api_version.is_empty() {
        return ErrorList(vec![Error::required(&path.child("apiVersion"), "")]);
    }
    if fs.field_path.is_empty() {
        return ErrorList(vec![Error::required(&path.child("fieldPath"), "")]);
    }
    if api_version != "v1" {
        return ErrorList(vec![Error::invalid(
            &path.child("fieldPath"),
            fs.field_path.as_str(),
            format!("error converting fieldPath: unsupported pod version: {api_version}"),
        )]);
    }
    let fp = fs.field_path.as_str();
    // `fieldpath.SplitMaybeSubscriptedPath`: `path['key']`.
    if let Some((base, rest)) = fp.split_once("['")
        && let Some(subscript) = rest.strip_suffix("']")
    {
        return match base {
            "metadata.annotations" => {
                formats::validate_qualified_name(path, &subscript.to_lowercase())
                    .with_origin("format=qualified-name")
            }
            "metadata.labels" => formats::validate_qualified_name(path, subscript)
                .with_origin("format=qualified-name"),
            _ => ErrorList(vec![Error::invalid(
                path,
                base,
                "does not support subscript",
            )]),
        };
    }
    if !allowed.contains(&fp) {
        let mut sorted: Vec<&str> = allowed.to_vec();
        sorted.sort_unstable();
        return ErrorList(vec![Error::not_supported(
            &path.child("fieldPath"),
            fp,
            &sorted,
        )]);
    }
    ErrorList::new()
}

/// `validateContainerResourceFieldSelector`.
pub fn validate_resource_field_selector(
    fs: &ResourceFieldSelector,
    volume: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if volume && fs.container_name.as_deref().unwrap_or_default().is_empty() {
        errs.push(Error::required(&path.child("containerName"), ""));
    } else if fs.resource.is_empty() {
        errs.push(Error::required(&path.child("resource"), ""));
    } else if !RESOURCE_FIELD_PATHS.contains(&fs.resource.as_str())
        && !fs.resource.starts_with("requests.hugepages-")
        && !fs.resource.starts_with("limits.hugepages-")
    {
        errs.push(Error::not_supported(
            &path.child("resource"),
            fs.resource.as_str(),
            RESOURCE_FIELD_PATHS,
        ));
    }
    errs.append(validate_divisor(fs, path));
    errs
}

fn validate_divisor(fs: &ResourceFieldSelector, path: &Path) -> ErrorList {
    let Some(divisor) = fs.divisor.as_ref().and_then(|d| Quantity::parse(&d.0).ok()) else {
        return ErrorList::new();
    };
    if divisor.is_zero() {
        return ErrorList::new();
    }
    let d = divisor.to_string();
    const MEMORY: &[&str] = &[
        "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei",
    ];
    let r = fs.resource.as_str();
    let (ok, kind) = match r {
        "limits.cpu" | "requests.cpu" => (
            d == "1m" || d == "1",
            "only divisor's values 1m and 1 are supported with the cpu resource",
        ),
        "limits.memory" | "requests.memory" => (
            MEMORY.contains(&d.as_str()),
            "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource",
        ),
        "limits.ephemeral-storage" | "requests.ephemeral-storage" => (
            MEMORY.contains(&d.as_str()),
            "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource",
        ),
        _ if r.starts_with("requests.hugepages-") || r.starts_with("limits.hugepages-") => (
            MEMORY.contains(&d.as_str()),
            "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the hugepages resource",
        ),
        _ => (true, ""),
    };
    if ok {
        ErrorList::new()
    } else {
        ErrorList(vec![Error::invalid(&path.child("divisor"), r, kind)])
    }
}

fn validate_key_selector(name: &str, key: &str, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for msg in formats::is_dns1123_subdomain(name) {
        errs.push(Error::invalid(&path.child("name"), name, msg));
    }
    if key.is_empty() {
        errs.push(Error::required(&path.child("key"), ""));
    } else {
        errs.append(invalid_each(
            &path.child("key"),
            key,
            is_config_map_key(key),
        ));
    }
    errs
}

fn validate_config_map_key_selector(s: &ConfigMapKeySelector, path: &Path) -> ErrorList {
    validate_key_selector(&s.name, &s.key, path)
}

fn validate_secret_key_selector(s: &SecretKeySelector, path: &Path) -> ErrorList {
    validate_key_selector(&s.name, &s.key, path)
}

/// `ValidateEnvFrom`.
pub fn validate_env_from(vars: &[EnvFromSource], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, ev) in vars.iter().enumerate() {
        let p = path.index(i);
        if let Some(prefix) = ev.prefix.as_deref().filter(|s| !s.is_empty()) {
            errs.append(invalid_each(
                &p.child("prefix"),
                prefix,
                is_relaxed_env_var_name(prefix),
            ));
        }
        let mut sources = 0;
        if let Some(c) = &ev.config_map_ref {
            sources += 1;
            errs.append(validate_ref_name(&c.name, &p.child("configMapRef")));
        }
        if let Some(s) = &ev.secret_ref {
            sources += 1;
            errs.append(validate_ref_name(&s.name, &p.child("secretRef")));
        }
        if sources == 0 {
            errs.push(Error::invalid(
                path,
                "",
                "must specify one of: `configMapRef` or `secretRef`",
            ));
        } else if sources > 1 {
            errs.push(Error::invalid(
                path,
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
    errs
}

/// A required object name that may be a generateName prefix (`NameIsDNSSubdomain(name, true)`).
fn validate_ref_name(name: &str, path: &Path) -> ErrorList {
    if name.is_empty() {
        return ErrorList(vec![Error::required(&path.child("name"), "")]);
    }
    let trimmed = name.strip_suffix('-').map_or(name, |n| {
        // A prefix may end with '-'; validate it as if a suffix followed.
        if n.is_empty() { name } else { n }
    });
    let probe = if trimmed.len() != name.len() {
        format!("{trimmed}a")
    } else {
        name.to_owned()
    };
    formats::is_dns1123_subdomain(&probe)
        .into_iter()
        .map(|m| Error::invalid(&path.child("name"), name, m))
        .collect()
}
