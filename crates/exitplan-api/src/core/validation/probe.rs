//! Probes and lifecycle hooks (`validateProbe`, `validateHandler`,
//! `validateLifecycle`).

use k8s_openapi::api::core::v1::{
    ExecAction, HTTPGetAction, Lifecycle, LifecycleHandler, Probe, SleepAction,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::strings::{
    invalid_each, invalid_each_int, is_http_header_name, is_valid_port_name, is_valid_port_num,
};
use crate::field::{Error, ErrorList, Path};
use crate::nonnegative::validate_nonnegative_field;

const MORE_THAN_ONE: &str = "may not specify more than 1 handler type";

/// The handler fields a probe or lifecycle hook may set (`commonHandler`).
#[derive(Default)]
struct Handler<'a> {
    exec: Option<&'a ExecAction>,
    http_get: Option<&'a HTTPGetAction>,
    tcp_port: Option<&'a IntOrString>,
    grpc_port: Option<i32>,
    sleep: Option<&'a SleepAction>,
}

fn from_probe(p: &Probe) -> Handler<'_> {
    Handler {
        exec: p.exec.as_ref(),
        http_get: p.http_get.as_ref(),
        tcp_port: p.tcp_socket.as_ref().map(|t| &t.port),
        grpc_port: p.grpc.as_ref().map(|g| g.port),
        sleep: None,
    }
}

fn from_lifecycle(h: &LifecycleHandler) -> Handler<'_> {
    Handler {
        exec: h.exec.as_ref(),
        http_get: h.http_get.as_ref(),
        tcp_port: h.tcp_socket.as_ref().map(|t| &t.port),
        grpc_port: None,
        sleep: h.sleep.as_ref(),
    }
}

/// `ValidatePortNumOrName`.
pub fn validate_port_num_or_name(port: &IntOrString, path: &Path) -> ErrorList {
    match port {
        IntOrString::Int(n) => {
            invalid_each_int(path, i64::from(*n), is_valid_port_num(i64::from(*n)))
        }
        IntOrString::String(s) => invalid_each(path, s, is_valid_port_name(s)),
    }
}

fn validate_http_get(h: &HTTPGetAction, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if h.path.as_deref().unwrap_or_default().is_empty() {
        errs.push(Error::required(&path.child("path"), ""));
    }
    errs.append(validate_port_num_or_name(&h.port, &path.child("port")));
    let scheme = h.scheme.as_deref().unwrap_or_default();
    if scheme != "HTTP" && scheme != "HTTPS" {
        errs.push(Error::not_supported(
            &path.child("scheme"),
            scheme,
            &["HTTP", "HTTPS"],
        ));
    }
    for header in h.http_headers.iter().flatten() {
        errs.append(invalid_each(
            &path.child("httpHeaders"),
            &header.name,
            is_http_header_name(&header.name),
        ));
    }
    errs
}

fn validate_sleep(s: &SleepAction, grace: Option<i64>, path: &Path) -> ErrorList {
    match grace {
        Some(g) if s.seconds < 0 || s.seconds > g => ErrorList(vec![Error::invalid(
            path,
            s.seconds,
            format!("must be non-negative and less than terminationGracePeriodSeconds ({g})"),
        )]),
        _ => ErrorList::new(),
    }
}

fn validate_handler(h: &Handler<'_>, grace: Option<i64>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let n = std::cell::Cell::new(0usize);
    let one = |name: &str, errs: &mut ErrorList, check: &dyn Fn(&Path) -> ErrorList| {
        if n.get() > 0 {
            errs.push(Error::forbidden(&path.child(name), MORE_THAN_ONE));
        } else {
            n.set(n.get() + 1);
            errs.append(check(&path.child(name)));
        }
    };
    if let Some(e) = h.exec {
        one("exec", &mut errs, &|p| {
            if e.command.as_ref().is_none_or(Vec::is_empty) {
                ErrorList(vec![Error::required(&p.child("command"), "")])
            } else {
                ErrorList::new()
            }
        });
    }
    if let Some(g) = h.http_get {
        one("httpGet", &mut errs, &|p| validate_http_get(g, p));
    }
    if let Some(port) = h.tcp_port {
        one("tcpSocket", &mut errs, &|p| {
            validate_port_num_or_name(port, &p.child("port"))
        });
    }
    if let Some(port) = h.grpc_port {
        one("grpc", &mut errs, &|p| {
            validate_port_num_or_name(&IntOrString::Int(port), &p.child("port"))
        });
    }
    if let Some(s) = h.sleep {
        one("sleep", &mut errs, &|p| validate_sleep(s, grace, p));
    }
    if n.get() == 0 {
        errs.push(Error::required(path, "must specify a handler type"));
    }
    errs
}

/// `validateLifecycle`: each hook set has exactly one valid handler.
pub fn validate_lifecycle(l: &Lifecycle, grace: Option<i64>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(h) = &l.post_start {
        errs.append(validate_handler(
            &from_lifecycle(h),
            grace,
            &path.child("postStart"),
        ));
    }
    if let Some(h) = &l.pre_stop {
        errs.append(validate_handler(
            &from_lifecycle(h),
            grace,
            &path.child("preStop"),
        ));
    }
    errs
}

/// `validateProbe`: one handler, non-negative timings, a positive
/// probe-level grace period.
fn validate_probe(p: &Probe, grace: Option<i64>, path: &Path) -> ErrorList {
    let mut errs = validate_handler(&from_probe(p), grace, path);
    for (name, v) in [
        ("initialDelaySeconds", p.initial_delay_seconds),
        ("timeoutSeconds", p.timeout_seconds),
        ("periodSeconds", p.period_seconds),
        ("successThreshold", p.success_threshold),
        ("failureThreshold", p.failure_threshold),
    ] {
        errs.append(validate_nonnegative_field(
            i64::from(v.unwrap_or(0)),
            &path.child(name),
        ));
    }
    if let Some(t) = p.termination_grace_period_seconds.filter(|t| *t <= 0) {
        errs.push(Error::invalid(
            &path.child("terminationGracePeriodSeconds"),
            t,
            "must be greater than 0",
        ));
    }
    errs
}

/// Which probe is validated: liveness and startup need `successThreshold`
/// 1; readiness may not set a grace period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// `livenessProbe`.
    Liveness,
    /// `readinessProbe`.
    Readiness,
    /// `startupProbe`.
    Startup,
}

/// `validateLivenessProbe` / `validateReadinessProbe` / `validateStartupProbe`.
pub fn validate_probe_of(
    kind: ProbeKind,
    probe: Option<&Probe>,
    grace: Option<i64>,
    path: &Path,
) -> ErrorList {
    let Some(p) = probe else {
        return ErrorList::new();
    };
    let mut errs = validate_probe(p, grace, path);
    match kind {
        ProbeKind::Liveness | ProbeKind::Startup => {
            let st = p.success_threshold.unwrap_or(0);
            if st != 1 {
                errs.push(Error::invalid(
                    &path.child("successThreshold"),
                    st,
                    "must be 1",
                ));
            }
        }
        ProbeKind::Readiness => {
            if let Some(t) = p.termination_grace_period_seconds {
                errs.push(Error::invalid(
                    &path.child("terminationGracePeriodSeconds"),
                    t,
                    "must not be set for readinessProbes",
                ));
            }
        }
    }
    errs
}
