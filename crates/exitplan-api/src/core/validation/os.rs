//! Operating-system rules of a pod spec: `validateOS` (`spec.os.name`),
//! `validateLinux` and `validateWindows` (fields that a pod of the other OS
//! cannot set), and `validateWindowsHostProcessPod` (HostProcess containers
//! all or none, and only with `hostNetwork`).

use k8s_openapi::api::core::v1::{PodSpec, SecurityContext};

use crate::field::{Error, ErrorList, Path};

const WINDOWS: &str = "cannot be set for a windows pod";
const LINUX: &str = "windows options cannot be set for a linux pod";

/// Every container's security context with its path, in upstream's
/// `VisitContainersWithPath` order: init, regular, ephemeral containers.
pub fn container_security_contexts<'a>(
    spec: &'a PodSpec,
    path: &Path,
) -> Vec<(Option<&'a SecurityContext>, Path)> {
    let mut out = Vec::new();
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        out.push((
            c.security_context.as_ref(),
            path.child("initContainers").index(i),
        ));
    }
    for (i, c) in spec.containers.iter().enumerate() {
        out.push((
            c.security_context.as_ref(),
            path.child("containers").index(i),
        ));
    }
    for (i, c) in spec.ephemeral_containers.iter().flatten().enumerate() {
        out.push((
            c.security_context.as_ref(),
            path.child("ephemeralContainers").index(i),
        ));
    }
    out
}

/// `validateOS` and then, when the OS is valid, `validateLinux` or
/// `validateWindows` (`spec_path` is the pod spec's path).
pub fn validate_os(spec: &PodSpec, spec_path: &Path) -> ErrorList {
    let path = &spec_path.child("os");
    let Some(os) = &spec.os else {
        return ErrorList::new();
    };
    if os.name.is_empty() {
        return ErrorList(vec![Error::required(
            &path.child("name"),
            "cannot be empty",
        )]);
    }
    match os.name.as_str() {
        "linux" => validate_linux(spec, spec_path),
        "windows" => validate_windows(spec, spec_path),
        other => ErrorList(vec![Error::not_supported(
            path,
            other,
            &["linux", "windows"],
        )]),
    }
}

fn validate_linux(spec: &PodSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if spec
        .security_context
        .as_ref()
        .is_some_and(|s| s.windows_options.is_some())
    {
        errs.push(Error::forbidden(
            &path.child("securityContext").child("windowsOptions"),
            LINUX,
        ));
    }
    for (sc, cp) in container_security_contexts(spec, path) {
        if sc.is_some_and(|s| s.windows_options.is_some()) {
            errs.push(Error::forbidden(
                &cp.child("securityContext").child("windowsOptions"),
                LINUX,
            ));
        }
    }
    errs
}

fn validate_windows(spec: &PodSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let sc_path = path.child("securityContext");
    let sc = spec.security_context.clone().unwrap_or_default();
    // Upstream keeps the host namespaces and hostUsers in the internal
    // pod security context, so the security context's checks include them.
    for (set, p) in [
        (
            sc.app_armor_profile.is_some(),
            sc_path.child("appArmorProfile"),
        ),
        (
            sc.se_linux_options.is_some(),
            sc_path.child("seLinuxOptions"),
        ),
        (spec.host_users.is_some(), path.child("hostUsers")),
        (spec.host_pid.unwrap_or(false), path.child("hostPID")),
        (spec.host_ipc.unwrap_or(false), path.child("hostIPC")),
        (
            sc.seccomp_profile.is_some(),
            sc_path.child("seccompProfile"),
        ),
        (sc.fs_group.is_some(), sc_path.child("fsGroup")),
        (
            sc.fs_group_change_policy.is_some(),
            sc_path.child("fsGroupChangePolicy"),
        ),
        (
            sc.sysctls.as_ref().is_some_and(|s| !s.is_empty()),
            sc_path.child("sysctls"),
        ),
        (
            spec.share_process_namespace.is_some(),
            path.child("shareProcessNamespace"),
        ),
        (sc.run_as_user.is_some(), sc_path.child("runAsUser")),
        (sc.run_as_group.is_some(), sc_path.child("runAsGroup")),
        (
            sc.supplemental_groups.is_some(),
            sc_path.child("supplementalGroups"),
        ),
        (
            sc.supplemental_groups_policy.is_some(),
            sc_path.child("supplementalGroupsPolicy"),
        ),
        (
            sc.se_linux_change_policy.is_some(),
            sc_path.child("seLinuxChangePolicy"),
        ),
    ] {
        if set {
            errs.push(Error::forbidden(&p, WINDOWS));
        }
    }
    for (sc, cp) in container_security_contexts(spec, path) {
        let Some(sc) = sc else { continue };
        let p = cp.child("securityContext");
        for (set, name) in [
            (sc.app_armor_profile.is_some(), "appArmorProfile"),
            (sc.se_linux_options.is_some(), "seLinuxOptions"),
            (sc.seccomp_profile.is_some(), "seccompProfile"),
            (sc.capabilities.is_some(), "capabilities"),
            (
                sc.read_only_root_filesystem.is_some(),
                "readOnlyRootFilesystem",
            ),
            (sc.privileged.is_some(), "privileged"),
            (
                sc.allow_privilege_escalation.is_some(),
                "allowPrivilegeEscalation",
            ),
            (sc.proc_mount.is_some(), "procMount"),
            (sc.run_as_user.is_some(), "runAsUser"),
            (sc.run_as_group.is_some(), "runAsGroup"),
        ] {
            if set {
                errs.push(Error::forbidden(&p.child(name), WINDOWS));
            }
        }
    }
    errs
}

/// `validateWindowsHostProcessPod` at the pod spec's `path`: a container's
/// `hostProcess` agrees with the pod's; if any container is a HostProcess
/// container, all are, and the pod uses the host network.
pub fn validate_windows_host_process_pod(spec: &PodSpec, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let pod_host_process = spec
        .security_context
        .as_ref()
        .and_then(|s| s.windows_options.as_ref())
        .and_then(|w| w.host_process);
    let host_network = spec.host_network.unwrap_or(false);
    let (mut containers, mut host_process) = (0, 0);
    for (sc, cp) in container_security_contexts(spec, path) {
        containers += 1;
        let ctr = sc
            .and_then(|s| s.windows_options.as_ref())
            .and_then(|w| w.host_process);
        if let (Some(pod), Some(ctr)) = (pod_host_process, ctr)
            && pod != ctr
        {
            errs.push(Error::invalid(
                &cp.child("securityContext")
                    .child("windowsOptions")
                    .child("hostProcess"),
                ctr,
                format!("pod hostProcess value must be identical if both are specified, was {pod}"),
            ));
        }
        if ctr.or(pod_host_process) == Some(true) {
            host_process += 1;
        }
    }
    if host_process > 0 {
        if host_process != containers {
            errs.push(Error::invalid(
                path,
                "",
                "If pod contains any hostProcess containers then all containers must be HostProcess containers",
            ));
        }
        if !host_network {
            errs.push(Error::invalid(
                &path.child("hostNetwork"),
                false,
                "hostNetwork must be true if pod contains any hostProcess containers",
            ));
        }
    }
    errs
}
