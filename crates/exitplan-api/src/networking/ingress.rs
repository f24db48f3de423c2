//! networking.k8s.io/v1 Ingress: validation (`ValidateIngress*` of
//! `pkg/apis/networking/validation`) and the registry strategy
//! (`pkg/registry/networking/ingress`): rules, paths and their `pathType`,
//! backends (exactly one of service and resource), wildcard hosts, TLS,
//! `ingressClassName` and the load-balancer status. The
//! `RelaxedServiceNameValidation` gate is off (v1.37 default): backend
//! Service names are DNS-1035 labels unless the stored Ingress already had
//! a DNS-1123-only one.

use k8s_openapi::api::core::v1::TypedLocalObjectReference;
use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, HTTPIngressRuleValue, Ingress, IngressBackend, IngressLoadBalancerStatus,
    IngressSpec, IngressStatus,
};

use super::formats::{
    is_dns1035_label, is_wildcard_dns1123_subdomain, parse_ip_sloppy, validate_ip_sloppy,
};
use crate::core::validation::strings::{is_valid_port_name, is_valid_port_num};
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats::{is_dns1123_label, is_dns1123_subdomain};
use crate::meta::generic::{before_create, path_segment_name_errors, validate_common_fields};
use crate::meta::{self, NameRule};
use crate::render;
use crate::strategy::{Context, Strategy, next_generation};

/// The deprecated annotation naming the Ingress class.
pub const ANNOTATION_INGRESS_CLASS: &str = "kubernetes.io/ingress.class";
/// The path types, sorted as upstream lists them.
pub const PATH_TYPES: [&str; 3] = ["Exact", "ImplementationSpecific", "Prefix"];
const INVALID_PATH_SEQUENCES: [&str; 5] = ["//", "/./", "/../", "%2f", "%2F"];
const INVALID_PATH_SUFFIXES: [&str; 2] = ["/..", "/."];

/// `IngressValidationOptions`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngressValidationOptions {
    /// Stored TLS secret names that are not valid Secret names stay valid.
    pub allow_invalid_secret_name: bool,
    /// Stored invalid rules under wildcard hosts stay valid.
    pub allow_invalid_wildcard_host_rule: bool,
    /// Backend Service names are checked as DNS-1123 labels.
    pub allow_relaxed_service_name_validation: bool,
}

fn tls_secret_name_errors(name: &str) -> Vec<String> {
    if name.is_empty() {
        Vec::new()
    } else {
        is_dns1123_subdomain(name)
    }
}

fn rules_of(
    spec: &IngressSpec,
) -> impl Iterator<Item = &k8s_openapi::api::networking::v1::IngressRule> {
    spec.rules.iter().flatten()
}

fn service_names(spec: &IngressSpec) -> Vec<&str> {
    let default = spec
        .default_backend
        .as_ref()
        .and_then(|b| b.service.as_ref())
        .map(|s| s.name.as_str());
    let paths = rules_of(spec)
        .filter_map(|r| r.http.as_ref())
        .flat_map(|h| h.paths.iter())
        .filter_map(|p| p.backend.service.as_ref())
        .map(|s| s.name.as_str());
    default.into_iter().chain(paths).collect()
}

/// The options for a create (`old` = `None`) or an update of `old`.
pub fn validation_options(old: Option<&Ingress>) -> IngressValidationOptions {
    let Some(old) = old else {
        return IngressValidationOptions::default();
    };
    let spec = old.spec.clone().unwrap_or_default();
    IngressValidationOptions {
        allow_invalid_secret_name: spec.tls.iter().flatten().any(|t| {
            !tls_secret_name_errors(t.secret_name.as_deref().unwrap_or_default()).is_empty()
        }),
        allow_invalid_wildcard_host_rule: rules_of(&spec).any(|r| {
            r.host.as_deref().unwrap_or_default().contains('*')
                && r.http.as_ref().is_some_and(|h| {
                    !validate_http_rule(h, &Path::default(), IngressValidationOptions::default())
                        .is_empty()
                })
        }),
        allow_relaxed_service_name_validation: service_names(&spec)
            .iter()
            .any(|n| is_dns1123_label(n).is_empty() && !is_dns1035_label(n).is_empty()),
    }
}

/// `validateIngressTypedLocalObjectReference` (a resource backend).
fn validate_resource_ref(r: &TypedLocalObjectReference, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(g) = &r.api_group {
        for m in is_dns1123_subdomain(g) {
            errs.push(Error::invalid(&path.child("apiGroup"), g.as_str(), m));
        }
    }
    for (name, value) in [("kind", &r.kind), ("name", &r.name)] {
        if value.is_empty() {
            errs.push(Error::required(&path.child(name), ""));
        } else {
            for m in path_segment_name_errors(value, false) {
                errs.push(Error::invalid(&path.child(name), value.as_str(), m));
            }
        }
    }
    errs
}

/// `validateIngressBackend`: exactly one of service and resource; a
/// service backend names the Service and one of port name and number.
pub fn validate_backend(
    backend: &IngressBackend,
    opts: IngressValidationOptions,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    match (&backend.resource, &backend.service) {
        (Some(_), Some(_)) => errs.push(Error::invalid(
            path,
            "",
            "cannot set both resource and service backends",
        )),
        (Some(r), None) => errs.append(validate_resource_ref(r, &path.child("resource"))),
        (None, Some(svc)) => {
            let name_path = path.child("service").child("name");
            if svc.name.is_empty() {
                errs.push(Error::required(&name_path, ""));
            } else {
                let msgs = if opts.allow_relaxed_service_name_validation {
                    is_dns1123_label(&svc.name)
                } else {
                    is_dns1035_label(&svc.name)
                };
                for m in msgs {
                    errs.push(Error::invalid(&name_path, svc.name.as_str(), m));
                }
            }
            let port = svc.port.clone().unwrap_or_default();
            let name = port.name.as_deref().unwrap_or_default();
            let number = port.number.unwrap_or(0);
            let port_path = path.child("service").child("port");
            if !name.is_empty() && number != 0 {
                errs.push(Error::invalid(
                    path,
                    "",
                    "cannot set both port name & port number",
                ));
            } else if !name.is_empty() {
                for m in is_valid_port_name(name) {
                    errs.push(Error::invalid(&port_path.child("name"), name, m));
                }
            } else if number != 0 {
                for m in is_valid_port_num(i64::from(number)) {
                    errs.push(Error::invalid(&port_path.child("number"), number, m));
                }
            } else {
                errs.push(Error::required(path, "port name or number is required"));
            }
        }
        (None, None) => errs.push(Error::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
    }
    errs
}

/// `validateHTTPIngressPath`: `pathType` required and supported, the path
/// absolute (and clean for `Exact`/`Prefix`), the backend valid.
fn validate_http_path(
    p: &HTTPIngressPath,
    opts: IngressValidationOptions,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let value = p.path.as_deref().unwrap_or_default();
    let path_path = path.child("path");
    match p.path_type.as_str() {
        "" => {
            return ErrorList(vec![Error::required(
                &path.child("pathType"),
                "pathType must be specified",
            )]);
        }
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errs.push(Error::invalid(
                    &path_path,
                    value,
                    "must be an absolute path",
                ));
            }
            if !value.is_empty() {
                for seq in INVALID_PATH_SEQUENCES {
                    if value.contains(seq) {
                        errs.push(Error::invalid(
                            &path_path,
                            value,
                            format!("must not contain '{seq}'"),
                        ));
                    }
                }
                for suffix in INVALID_PATH_SUFFIXES {
                    if value.ends_with(suffix) {
                        errs.push(Error::invalid(
                            &path_path,
                            value,
                            format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.push(Error::invalid(
                    &path_path,
                    value,
                    "must be an absolute path",
                ));
            }
        }
        other => errs.push(Error::not_supported(
            &path.child("pathType"),
            other,
            &PATH_TYPES,
        )),
    }
    errs.append(validate_backend(&p.backend, opts, &path.child("backend")));
    errs
}

/// `validateHTTPIngressRuleValue`: at least one path, each valid.
fn validate_http_rule(
    http: &HTTPIngressRuleValue,
    path: &Path,
    opts: IngressValidationOptions,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let paths_path = path.child("paths");
    if http.paths.is_empty() {
        errs.push(Error::required(&paths_path, ""));
    }
    for (i, p) in http.paths.iter().enumerate() {
        errs.append(validate_http_path(p, opts, &paths_path.index(i)));
    }
    errs
}

/// `ValidateIngressSpec`: rules or a default backend, each rule's host
/// (a DNS name, wildcards only as `*.`) and paths, TLS hosts and secret
/// names, and `ingressClassName`.
pub fn validate_ingress_spec(
    spec: &IngressSpec,
    opts: IngressValidationOptions,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let rules = spec.rules.as_deref().unwrap_or_default();
    if rules.is_empty() && spec.default_backend.is_none() {
        let shown = spec
            .rules
            .as_ref()
            .map_or(BadValue::Null, |r| BadValue::Json(render::json(r)));
        errs.push(Error::invalid(
            path,
            shown,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(b) = &spec.default_backend {
        errs.append(validate_backend(b, opts, &path.child("defaultBackend")));
    }
    let rules_path = path.child("rules");
    for (i, rule) in rules.iter().enumerate() {
        let p = rules_path.index(i);
        let host = rule.host.as_deref().unwrap_or_default();
        let mut wildcard = false;
        if !host.is_empty() {
            if parse_ip_sloppy(host).is_some() {
                errs.push(Error::invalid(
                    &p.child("host"),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
            let msgs = if host.contains('*') {
                wildcard = true;
                is_wildcard_dns1123_subdomain(host)
            } else {
                is_dns1123_subdomain(host)
            };
            for m in msgs {
                errs.push(Error::invalid(&p.child("host"), host, m));
            }
        }
        if (!wildcard || !opts.allow_invalid_wildcard_host_rule)
            && let Some(http) = &rule.http
        {
            errs.append(validate_http_rule(http, &p.child("http"), opts));
        }
    }
    let tls_path = path.child("tls");
    for (i, tls) in spec.tls.iter().flatten().enumerate() {
        let p = tls_path.index(i);
        for (j, host) in tls.hosts.iter().flatten().enumerate() {
            let msgs = if host.contains('*') {
                is_wildcard_dns1123_subdomain(host)
            } else {
                is_dns1123_subdomain(host)
            };
            for m in msgs {
                errs.push(Error::invalid(&p.child("hosts").index(j), host.as_str(), m));
            }
        }
        if !opts.allow_invalid_secret_name {
            let name = tls.secret_name.as_deref().unwrap_or_default();
            for m in tls_secret_name_errors(name) {
                errs.push(Error::invalid(&p.child("secretName"), name, m));
            }
        }
    }
    if let Some(class) = &spec.ingress_class_name {
        for m in is_dns1123_subdomain(class) {
            errs.push(Error::invalid(
                &path.child("ingressClassName"),
                class.as_str(),
                m,
            ));
        }
    }
    errs
}

/// `validateIngress`: metadata (a DNS subdomain) and the spec.
pub fn validate_ingress(ing: &Ingress, opts: IngressValidationOptions) -> ErrorList {
    let mut errs = meta::validate_object_meta(&ing.metadata, true, NameRule::Subdomain);
    errs.append(validate_ingress_spec(
        &ing.spec.clone().unwrap_or_default(),
        opts,
        &Path::new("spec"),
    ));
    errs
}

/// `ValidateIngressCreate`: [`validate_ingress`] and an
/// `kubernetes.io/ingress.class` annotation that matches `ingressClassName`.
pub fn validate_ingress_create(ing: &Ingress) -> ErrorList {
    let mut errs = validate_ingress(ing, validation_options(None));
    let annotation = ing
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ANNOTATION_INGRESS_CLASS));
    let class = ing
        .spec
        .as_ref()
        .and_then(|s| s.ingress_class_name.as_ref());
    if let (Some(a), Some(c)) = (annotation, class)
        && a != c
    {
        errs.push(Error::invalid(
            &Path::new("annotations").child(ANNOTATION_INGRESS_CLASS),
            a.as_str(),
            "must match `ingressClassName` when both are specified",
        ));
    }
    errs
}

/// `ValidateIngressUpdate`: metadata update rules and the new Ingress, with
/// the allowances the stored one earns.
pub fn validate_ingress_update(new: &Ingress, old: &Ingress) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_ingress(new, validation_options(Some(old))));
    errs
}

/// `ValidateIngressLoadBalancerStatus`: IPs (stored ones kept) and
/// hostnames that are DNS names, not IPs.
pub fn validate_load_balancer_status(
    status: &IngressLoadBalancerStatus,
    old: Option<&IngressLoadBalancerStatus>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let existing: Vec<&str> = old
        .iter()
        .flat_map(|o| o.ingress.iter().flatten())
        .filter_map(|i| i.ip.as_deref())
        .filter(|ip| !ip.is_empty())
        .collect();
    for (i, ing) in status.ingress.iter().flatten().enumerate() {
        let p = path.child("ingress").index(i);
        if let Some(ip) = ing.ip.as_deref().filter(|ip| !ip.is_empty()) {
            errs.append(validate_ip_sloppy(&p.child("ip"), ip, &existing));
        }
        if let Some(host) = ing.hostname.as_deref().filter(|h| !h.is_empty()) {
            for m in is_dns1123_subdomain(host) {
                errs.push(Error::invalid(&p.child("hostname"), host, m));
            }
            if parse_ip_sloppy(host).is_some() {
                errs.push(Error::invalid(
                    &p.child("hostname"),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}

/// `ValidateIngressStatusUpdate`.
pub fn validate_ingress_status_update(new: &Ingress, old: &Ingress) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    let lb = |i: &Ingress| i.status.as_ref().and_then(|s| s.load_balancer.clone());
    errs.append(validate_load_balancer_status(
        &lb(new).unwrap_or_default(),
        lb(old).as_ref(),
        &Path::new("status").child("loadBalancer"),
    ));
    errs
}

/// Ingresses hold no quantities.
impl crate::quantities::Quantities for Ingress {}

/// Create, update and status-update rules of networking.k8s.io/v1 Ingresses.
#[derive(Clone, Copy, Debug, Default)]
pub struct IngressStrategy;

impl Strategy for IngressStrategy {
    type Object = Ingress;

    /// Status cleared, generation 1.
    fn prepare_for_create(obj: &mut Ingress) {
        obj.status = Some(IngressStatus::default());
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &Ingress, _ctx: &Context<'_>) -> ErrorList {
        before_create(validate_ingress_create(obj), &obj.metadata)
    }

    /// Status kept; generation bumped when the spec changed.
    fn prepare_for_update(new: &mut Ingress, old: &Ingress) {
        new.status.clone_from(&old.status);
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
    }

    fn validate_update(new: &Ingress, old: &Ingress, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_ingress_update(new, old));
        errs
    }

    /// Spec kept.
    fn prepare_for_status_update(new: &mut Ingress, old: &Ingress) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(new: &Ingress, old: &Ingress, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_ingress_status_update(new, old));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::{admit_create, admit_update};
    use serde_json::{Value, json};

    fn ingress(spec: Value) -> Ingress {
        serde_json::from_value(json!({
            "metadata": {"name": "foo", "namespace": "default", "resourceVersion": "1"},
            "spec": spec,
        }))
        .expect("ingress")
    }

    fn svc(name: &str, port: Value) -> Value {
        json!({"service": {"name": name, "port": port}})
    }

    fn rule(host: &str, path: &str, path_type: &str, backend: Value) -> Value {
        json!({"host": host, "http": {"paths": [{"path": path, "pathType": path_type, "backend": backend}]}})
    }

    fn base() -> Value {
        json!({
            "defaultBackend": svc("default-backend", json!({"number": 80})),
            "rules": [rule("foo.bar.com", "/foo", "ImplementationSpecific", svc("default-backend", json!({"number": 80})))],
        })
    }

    fn with(mut v: Value, key: &str, value: Value) -> Value {
        if let Some(m) = v.as_object_mut() {
            if value.is_null() {
                m.remove(key);
            } else {
                m.insert(key.to_owned(), value);
            }
        }
        v
    }

    const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    /// `TestValidateIngress` and `TestValidateIngressCreate` of upstream's
    /// validation_test.go.
    #[test]
    fn validate_ingress_table() {
        let ok = [
            ("base", base()),
            (
                "no default backend",
                with(base(), "defaultBackend", Value::Null),
            ),
            ("only a default backend", with(base(), "rules", Value::Null)),
            (
                "wildcard host",
                with(
                    base(),
                    "rules",
                    json!([rule(
                        "*.bar.com",
                        "/foo",
                        "Prefix",
                        svc("default-backend", json!({"name": "http"}))
                    )]),
                ),
            ),
            (
                "resource backend",
                with(
                    base(),
                    "rules",
                    json!([rule(
                        "foo.bar.com",
                        "/foo",
                        "Exact",
                        json!({"resource": {"apiGroup": "example.com", "kind": "foo", "name": "bar"}})
                    )]),
                ),
            ),
            (
                "class name",
                with(base(), "ingressClassName", "nginx".into()),
            ),
            (
                "tls",
                with(
                    base(),
                    "tls",
                    json!([{"hosts": ["foo.bar.com", "*.bar.com"], "secretName": "tls-secret"}]),
                ),
            ),
        ];
        for (name, spec) in ok {
            let errs = validate_ingress_create(&ingress(spec));
            assert!(errs.is_empty(), "{name}: {errs}");
        }
        let mut annotated = ingress(with(base(), "ingressClassName", "bar".into()));
        annotated.metadata.annotations =
            Some([(ANNOTATION_INGRESS_CLASS.to_owned(), "foo".to_owned())].into());
        let cases: Vec<(&str, Ingress, String)> = vec![
            (
                "no rules and no default backend",
                ingress(json!({})),
                "spec: Invalid value: null: either `defaultBackend` or `rules` must be specified".into(),
            ),
            (
                "missing pathType",
                ingress(with(base(), "rules", json!([{"host": "foo.bar.com", "http": {"paths": [{"path": "/foo", "backend": svc("default-backend", json!({"number": 80}))}]}}]))),
                "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified".into(),
            ),
            (
                "unsupported pathType",
                ingress(with(base(), "rules", json!([rule("foo.bar.com", "/foo", "Regex", svc("default-backend", json!({"number": 80})))]))),
                r#"spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix""#.into(),
            ),
            (
                "Exact path not absolute",
                ingress(with(base(), "rules", json!([rule("foo.bar.com", "foo", "Exact", svc("default-backend", json!({"number": 80})))]))),
                r#"spec.rules[0].http.paths[0].path: Invalid value: "foo": must be an absolute path"#.into(),
            ),
            (
                "Prefix path with //",
                ingress(with(base(), "rules", json!([rule("foo.bar.com", "/foo//bar", "Prefix", svc("default-backend", json!({"number": 80})))]))),
                r#"spec.rules[0].http.paths[0].path: Invalid value: "/foo//bar": must not contain '//'"#.into(),
            ),
            (
                "Prefix path ending with /..",
                ingress(with(base(), "rules", json!([rule("foo.bar.com", "/foo/..", "Prefix", svc("default-backend", json!({"number": 80})))]))),
                r#"spec.rules[0].http.paths[0].path: Invalid value: "/foo/..": cannot end with '/..'"#.into(),
            ),
            (
                "both service and resource backends",
                ingress(with(base(), "defaultBackend", json!({"service": {"name": "s", "port": {"number": 80}}, "resource": {"kind": "k", "name": "n"}}))),
                r#"spec.defaultBackend: Invalid value: "": cannot set both resource and service backends"#.into(),
            ),
            (
                "no backend",
                ingress(with(base(), "defaultBackend", json!({}))),
                r#"spec.defaultBackend: Invalid value: "": resource or service backend is required"#.into(),
            ),
            (
                "both port name and number",
                ingress(with(base(), "defaultBackend", svc("default-backend", json!({"name": "http", "number": 80})))),
                r#"spec.defaultBackend: Invalid value: "": cannot set both port name & port number"#.into(),
            ),
            (
                "no port",
                ingress(with(base(), "defaultBackend", svc("default-backend", json!({})))),
                "spec.defaultBackend: Required value: port name or number is required".into(),
            ),
            (
                "invalid port number",
                ingress(with(base(), "defaultBackend", svc("default-backend", json!({"number": 70000})))),
                "spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive".into(),
            ),
            (
                "invalid service name",
                ingress(with(base(), "defaultBackend", svc("1-backend", json!({"number": 80})))),
                r#"spec.defaultBackend.service.name: Invalid value: "1-backend": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#.into(),
            ),
            (
                "missing service name",
                ingress(with(base(), "defaultBackend", svc("", json!({"number": 80})))),
                "spec.defaultBackend.service.name: Required value".into(),
            ),
            (
                "resource backend without kind",
                ingress(with(base(), "defaultBackend", json!({"resource": {"apiGroup": "example.com", "kind": "", "name": "bar"}}))),
                "spec.defaultBackend.resource.kind: Required value".into(),
            ),
            (
                "host is an IP",
                ingress(with(base(), "rules", json!([rule("127.0.0.1", "/foo", "Prefix", svc("default-backend", json!({"number": 80})))]))),
                r#"spec.rules[0].host: Invalid value: "127.0.0.1": must be a DNS name, not an IP address"#.into(),
            ),
            (
                "invalid wildcard host",
                ingress(with(base(), "rules", json!([rule("foo.*.bar.com", "/foo", "Prefix", svc("default-backend", json!({"number": 80})))]))),
                r#"spec.rules[0].host: Invalid value: "foo.*.bar.com": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#.into(),
            ),
            (
                "rule without paths",
                ingress(with(base(), "rules", json!([{"host": "foo.bar.com", "http": {"paths": []}}]))),
                "spec.rules[0].http.paths: Required value".into(),
            ),
            (
                "invalid tls host",
                ingress(with(base(), "tls", json!([{"hosts": ["foo.*.bar.com"]}]))),
                r#"spec.tls[0].hosts[0]: Invalid value: "foo.*.bar.com": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#.into(),
            ),
            (
                "invalid tls secret name",
                ingress(with(base(), "tls", json!([{"secretName": "Bad_Name"}]))),
                format!(r#"spec.tls[0].secretName: Invalid value: "Bad_Name": {SUBDOMAIN}"#),
            ),
            (
                "invalid ingressClassName",
                ingress(with(base(), "ingressClassName", "Bad_Class".into())),
                format!(r#"spec.ingressClassName: Invalid value: "Bad_Class": {SUBDOMAIN}"#),
            ),
            (
                "class annotation and field differ",
                annotated,
                r#"annotations.kubernetes.io/ingress.class: Invalid value: "foo": must match `ingressClassName` when both are specified"#.into(),
            ),
        ];
        for (name, ing, want) in cases {
            assert_eq!(validate_ingress_create(&ing).to_string(), want, "{name}");
        }
    }

    /// `TestValidateIngressUpdate`: what the stored Ingress already had stays valid.
    #[test]
    fn update_allowances() {
        let bad_wildcard = ingress(with(
            base(),
            "rules",
            json!([rule(
                "*.bar.com",
                "foo",
                "Exact",
                svc("default-backend", json!({"number": 80}))
            )]),
        ));
        let mut relabeled = bad_wildcard.clone();
        relabeled.metadata.labels = Some([("a".to_owned(), "b".to_owned())].into());
        assert!(validate_ingress_update(&relabeled, &bad_wildcard).is_empty());
        let good = ingress(base());
        assert_eq!(
            validate_ingress_update(&bad_wildcard, &good).to_string(),
            r#"spec.rules[0].http.paths[0].path: Invalid value: "foo": must be an absolute path"#
        );
        let bad_secret = ingress(with(base(), "tls", json!([{"secretName": "Bad_Name"}])));
        assert!(validate_ingress_update(&bad_secret, &bad_secret).is_empty());
        let relaxed = ingress(with(
            base(),
            "defaultBackend",
            svc("1-backend", json!({"number": 80})),
        ));
        assert!(validate_ingress_update(&relaxed, &relaxed).is_empty());
    }

    /// `TestValidateIngressStatusUpdate` of upstream's validation_test.go.
    #[test]
    fn status_update_table() {
        let old = ingress(base());
        let status = |v: Value| -> Ingress {
            let mut i = old.clone();
            i.status = Some(
                serde_json::from_value(json!({"loadBalancer": {"ingress": v}})).expect("status"),
            );
            i
        };
        assert!(
            validate_ingress_status_update(
                &status(json!([{"ip": "127.0.0.1", "hostname": "foo.com"}])),
                &old
            )
            .is_empty()
        );
        assert_eq!(
            validate_ingress_status_update(&status(json!([{"ip": "abcd"}])), &old).to_string(),
            r#"status.loadBalancer.ingress[0].ip: Invalid value: "abcd": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"#
        );
        assert_eq!(
            validate_ingress_status_update(&status(json!([{"hostname": "127.0.0.1"}])), &old)
                .to_string(),
            r#"status.loadBalancer.ingress[0].hostname: Invalid value: "127.0.0.1": must be a DNS name, not an IP address"#
        );
    }

    #[test]
    fn strategy_clears_status_and_bumps_generation() {
        let absent = Absent::default();
        let ctx = Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent: &absent,
        };
        let mut ing = ingress(base());
        ing.status = Some(
            serde_json::from_value(json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}))
                .expect("status"),
        );
        admit_create::<IngressStrategy>(&mut ing, &ctx).expect("valid");
        assert_eq!(ing.status, Some(IngressStatus::default()));
        assert_eq!(ing.metadata.generation, Some(1));
        let mut new = ingress(with(base(), "ingressClassName", "nginx".into()));
        new.metadata.generation = Some(7);
        admit_update::<IngressStrategy>(&mut new, &ing, &ctx).expect("valid");
        assert_eq!(new.metadata.generation, Some(2));
    }
}
