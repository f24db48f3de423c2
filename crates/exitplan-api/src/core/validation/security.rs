//! Pod and container security contexts (`validatePodSpecSecurityContext`,
//! `ValidateSecurityContext`), seccomp and AppArmor profiles, sysctls.

use k8s_openapi::api::core::v1::{
    AppArmorProfile, PodSecurityContext, PodSpec, SeccompProfile, SecurityContext,
    WindowsSecurityContextOptions,
};

use super::strings::{invalid_each, invalid_each_int, is_valid_id};
use super::volume::validate_local_descending_path;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::render;

fn validate_seccomp(sp: Option<&SeccompProfile>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(sp) = sp else {
        return errs;
    };
    let t = sp.type_.as_str();
    match t {
        "Localhost" | "RuntimeDefault" | "Unconfined" => {}
        "" => errs.push(Error::required(
            &path.child("type"),
            "type is required when seccompProfile is set",
        )),
        other => errs.push(Error::not_supported(
            &path.child("type"),
            other,
            &["Localhost", "RuntimeDefault", "Unconfined"],
        )),
    }
    if t == "Localhost" {
        match sp.localhost_profile.as_deref() {
            None => errs.push(Error::required(
                &path.child("localhostProfile"),
                "must be set when seccomp type is Localhost",
            )),
            Some(p) => errs.append(validate_local_descending_path(
                p,
                &path.child("localhostProfile"),
            )),
        }
    } else if sp.localhost_profile.is_some() {
        errs.push(Error::invalid(
            &path.child("localhostProfile"),
            BadValue::Json(render::json(sp)),
            "can only be set when seccomp type is Localhost",
        ));
    }
    errs
}

fn validate_app_armor(p: Option<&AppArmorProfile>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(p) = p else {
        return errs;
    };
    match p.type_.as_str() {
        "Localhost" => match p.localhost_profile.as_deref() {
            None => errs.push(Error::required(
                &path.child("localhostProfile"),
                "must be set when AppArmor type is Localhost",
            )),
            Some(lp) => {
                if lp.trim() != lp {
                    errs.push(Error::invalid(
                        &path.child("localhostProfile"),
                        lp,
                        "must not be padded with whitespace",
                    ));
                } else if lp.is_empty() {
                    errs.push(Error::required(
                        &path.child("localhostProfile"),
                        "must be set when AppArmor type is Localhost",
                    ));
                }
                if lp.len() > 4095 {
                    errs.push(Error::too_long(&path.child("localhostProfile"), 4095));
                }
            }
        },
        "RuntimeDefault" | "Unconfined" => {
            if let Some(lp) = p.localhost_profile.as_deref() {
                errs.push(Error::invalid(
                    &path.child("localhostProfile"),
                    lp,
                    "can only be set when AppArmor type is Localhost",
                ));
            }
        }
        "" => errs.push(Error::required(
            &path.child("type"),
            "type is required when appArmorProfile is set",
        )),
        other => errs.push(Error::not_supported(
            &path.child("type"),
            other,
            &["Localhost", "RuntimeDefault", "Unconfined"],
        )),
    }
    errs
}

fn validate_windows_options(w: Option<&WindowsSecurityContextOptions>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(w) = w else {
        return errs;
    };
    if let Some(name) = w.gmsa_credential_spec_name.as_deref() {
        errs.append(invalid_each(
            &path.child("gmsaCredentialSpecName"),
            name,
            formats::is_dns1123_subdomain(name),
        ));
    }
    if let Some(spec) = w.gmsa_credential_spec.as_deref() {
        if spec.is_empty() {
            errs.push(Error::invalid(
                &path.child("gmsaCredentialSpec"),
                spec,
                "gmsaCredentialSpec cannot be an empty string",
            ));
        } else if spec.len() > 64 * 1024 {
            errs.push(Error::invalid(
                &path.child("gmsaCredentialSpec"),
                spec,
                "gmsaCredentialSpec size must be under 64 KiB",
            ));
        }
    }
    if let Some(user) = w.run_as_user_name.as_deref() {
        let p = path.child("runAsUserName");
        if user.is_empty() {
            errs.push(Error::invalid(
                &p,
                user,
                "runAsUserName cannot be an empty string",
            ));
        } else if user.chars().any(char::is_control) {
            errs.push(Error::invalid(
                &p,
                user,
                "runAsUserName cannot contain control characters",
            ));
        } else if user.split('\\').count() > 2 {
            errs.push(Error::invalid(
                &p,
                user,
                "runAsUserName cannot contain more than one backslash",
            ));
        }
    }
    errs
}

const VALID_SYSCTL_MAX: usize = 253;

fn is_valid_sysctl_name(name: &str) -> bool {
    if name.len() > VALID_SYSCTL_MAX {
        return false;
    }
    name.split(['.', '/']).all(|seg| {
        let b = seg.as_bytes();
        match (b.first(), b.last()) {
            (Some(f), Some(l)) => {
                (f.is_ascii_lowercase() || f.is_ascii_digit())
                    && (l.is_ascii_lowercase() || l.is_ascii_digit())
                    && b.iter().all(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'_'
                    })
            }
            _ => false,
        }
    })
}

/// `utilsysctl.NormalizeName`: a name written with `/` separators
/// (`net/ipv4/conf/eno2.100/rp_filter`) in its dotted form.
fn normalize_sysctl(name: &str) -> String {
    match name.find(['.', '/']) {
        Some(i) if name.as_bytes().get(i) == Some(&b'/') => name
            .chars()
            .map(|c| match c {
                '.' => '/',
                '/' => '.',
                c => c,
            })
            .collect(),
        _ => name.to_owned(),
    }
}

/// The host namespace a sysctl lives in (`utilsysctl.GetNamespace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SysctlNamespace {
    Net,
    Ipc,
}

fn sysctl_namespace(name: &str) -> Option<SysctlNamespace> {
    const IPC: &[&str] = &[
        "kernel.sem",
        "kernel.shmall",
        "kernel.shmmax",
        "kernel.shmmni",
        "kernel.shm_rmid_forced",
        "kernel.msgmax",
        "kernel.msgmnb",
        "kernel.msgmni",
    ];
    let name = normalize_sysctl(name);
    if IPC.contains(&name.as_str()) || name.starts_with("fs.mqueue.") {
        Some(SysctlNamespace::Ipc)
    } else if name.starts_with("net.") {
        Some(SysctlNamespace::Net)
    } else {
        None
    }
}

/// `ValidateHostSysctl`: no namespaced sysctl of a namespace the pod shares
/// with the host.
fn validate_host_sysctl(name: &str, spec: &PodSpec, path: &Path) -> Option<Error> {
    match sysctl_namespace(name) {
        Some(SysctlNamespace::Net) if spec.host_network.unwrap_or(false) => Some(Error::invalid(
            path,
            name,
            "may not be specified when 'hostNetwork' is true",
        )),
        Some(SysctlNamespace::Ipc) if spec.host_ipc.unwrap_or(false) => Some(Error::invalid(
            path,
            name,
            "may not be specified when 'hostIPC' is true",
        )),
        _ => None,
    }
}

/// `validatePodSpecSecurityContext`; `allow_host_sysctls` is
/// `AllowNamespacedSysctlsForHostNetAndHostIPC`.
pub fn validate_pod_security_context(
    sc: Option<&PodSecurityContext>,
    spec: &PodSpec,
    path: &Path,
    allow_host_sysctls: bool,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(sc) = sc else {
        return errs;
    };
    for (name, v) in [
        ("fsGroup", sc.fs_group),
        ("runAsUser", sc.run_as_user),
        ("runAsGroup", sc.run_as_group),
    ] {
        if let Some(v) = v {
            errs.append(invalid_each_int(&path.child(name), v, is_valid_id(v)));
        }
    }
    for (i, g) in sc.supplemental_groups.iter().flatten().enumerate() {
        errs.append(invalid_each_int(
            &path.child("supplementalGroups").index(i),
            *g,
            is_valid_id(*g),
        ));
    }
    if sc_share_process_namespace(spec) && spec.host_pid.unwrap_or(false) {
        errs.push(Error::invalid(
            &path.child("shareProcessNamespace"),
            true,
            "ShareProcessNamespace and HostPID cannot both be enabled",
        ));
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, s) in sc.sysctls.iter().flatten().enumerate() {
        let p = path.child("sysctls").index(i).child("name");
        if s.name.is_empty() {
            errs.push(Error::required(&p, ""));
        } else if !is_valid_sysctl_name(&s.name) {
            errs.push(Error::invalid(
                &p,
                s.name.as_str(),
                "must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$",
            ));
        } else if names.contains(&s.name) {
            errs.push(Error::duplicate(&p, s.name.as_str()));
        }
        if !allow_host_sysctls {
            errs.0.extend(validate_host_sysctl(&s.name, spec, &p));
        }
        names.insert(s.name.clone());
    }
    if let Some(policy) = sc.fs_group_change_policy.as_deref()
        && policy != "OnRootMismatch"
        && policy != "Always"
    {
        errs.push(Error::not_supported(
            &path.child("fsGroupChangePolicy"),
            policy,
            &["Always", "OnRootMismatch"],
        ));
    }
    errs.append(validate_seccomp(
        sc.seccomp_profile.as_ref(),
        &path.child("seccompProfile"),
    ));
    errs.append(validate_windows_options(
        sc.windows_options.as_ref(),
        &path.child("windowsOptions"),
    ));
    errs.append(validate_app_armor(
        sc.app_armor_profile.as_ref(),
        &path.child("appArmorProfile"),
    ));
    if let Some(p) = sc.supplemental_groups_policy.as_deref()
        && p != "Merge"
        && p != "Strict"
    {
        errs.push(Error::not_supported(
            &path.child("supplementalGroupsPolicy"),
            p,
            &["Merge", "Strict"],
        ));
    }
    if let Some(p) = sc.se_linux_change_policy.as_deref()
        && p != "MountOption"
        && p != "Recursive"
    {
        errs.push(Error::not_supported(
            &path.child("seLinuxChangePolicy"),
            p,
            &["MountOption", "Recursive"],
        ));
    }
    errs
}

fn sc_share_process_namespace(spec: &PodSpec) -> bool {
    spec.share_process_namespace.unwrap_or(false)
}

/// `ValidateSecurityContext` of a container (`host_users` is the pod's
/// `hostUsers`, true when unset).
pub fn validate_security_context(
    sc: Option<&SecurityContext>,
    path: &Path,
    host_users: bool,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(sc) = sc else {
        return errs;
    };
    for (name, v) in [
        ("runAsUser", sc.run_as_user),
        ("runAsGroup", sc.run_as_group),
    ] {
        if let Some(v) = v {
            errs.append(invalid_each_int(&path.child(name), v, is_valid_id(v)));
        }
    }
    if let Some(pm) = sc.proc_mount.as_deref() {
        if pm != "Default" && pm != "Unmasked" {
            errs.push(Error::not_supported(
                &path.child("procMount"),
                pm,
                &["Default", "Unmasked"],
            ));
        }
        if host_users && pm == "Unmasked" {
            errs.push(Error::invalid(
                &path.child("procMount"),
                pm,
                "`hostUsers` must be false to use `Unmasked`",
            ));
        }
    }
    errs.append(validate_seccomp(
        sc.seccomp_profile.as_ref(),
        &path.child("seccompProfile"),
    ));
    if sc.allow_privilege_escalation == Some(false) {
        if sc.privileged == Some(true) {
            errs.push(Error::invalid(
                path,
                BadValue::Json(render::json(sc)),
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        if sc
            .capabilities
            .as_ref()
            .and_then(|c| c.add.as_ref())
            .is_some_and(|a| a.iter().any(|c| c == "CAP_SYS_ADMIN"))
        {
            errs.push(Error::invalid(
                path,
                BadValue::Json(render::json(sc)),
                "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
            ));
        }
    }
    errs.append(validate_windows_options(
        sc.windows_options.as_ref(),
        &path.child("windowsOptions"),
    ));
    errs.append(validate_app_armor(
        sc.app_armor_profile.as_ref(),
        &path.child("appArmorProfile"),
    ));
    errs
}
