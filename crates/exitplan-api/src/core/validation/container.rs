//! Containers: the rules common to every container type
//! (`validateContainerCommon`), regular (`validateContainers`), init
//! (`validateInitContainers`) and ephemeral (`validateEphemeralContainers`)
//! containers, ports and host-port conflicts.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{
    Container, ContainerPort, ContainerResizePolicy, EphemeralContainer,
};

use super::env::{validate_env, validate_env_from};
use super::probe::{ProbeKind, validate_lifecycle, validate_probe_of};
use super::resources::validate_resource_requirements;
use super::security::validate_security_context;
use super::strings::{
    invalid_each, invalid_each_int, is_valid_port_name, is_valid_port_num, validate_dns1123_label,
};
use super::volume::{Volumes, validate_volume_devices, validate_volume_mounts};
use crate::field::{Error, ErrorList, Path};

/// What every container of a pod spec is validated against.
#[derive(Clone, Copy, Debug)]
pub struct SpecContext<'a> {
    /// The valid volumes by name.
    pub volumes: &'a Volumes,
    /// Names of `spec.resourceClaims`.
    pub claim_names: &'a BTreeSet<String>,
    /// `terminationGracePeriodSeconds` (sleep hooks may not exceed it).
    pub grace_period: Option<i64>,
    /// The pod-level `restartPolicy`.
    pub restart_policy: &'a str,
    /// `securityContext.hostUsers` (true when unset).
    pub host_users: bool,
}

const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];

/// `validateContainerPorts`.
pub fn validate_container_ports(ports: &[ContainerPort], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let p = path.index(i);
        if let Some(name) = port.name.as_deref().filter(|n| !n.is_empty()) {
            let msgs = is_valid_port_name(name);
            if !msgs.is_empty() {
                errs.append(invalid_each(&p.child("name"), name, msgs));
            } else if !names.insert(name) {
                errs.push(Error::duplicate(&p.child("name"), name));
            }
        }
        if port.container_port == 0 {
            errs.push(Error::required(&p.child("containerPort"), ""));
        } else {
            let cp = i64::from(port.container_port);
            errs.append(invalid_each_int(
                &p.child("containerPort"),
                cp,
                is_valid_port_num(cp),
            ));
        }
        if let Some(hp) = port.host_port.filter(|h| *h != 0) {
            let hp = i64::from(hp);
            errs.append(invalid_each_int(
                &p.child("hostPort"),
                hp,
                is_valid_port_num(hp),
            ));
        }
        match port.protocol.as_deref().unwrap_or_default() {
            "" => errs.push(Error::required(&p.child("protocol"), "")),
            proto if !PROTOCOLS.contains(&proto) => {
                errs.push(Error::not_supported(&p.child("protocol"), proto, PROTOCOLS));
            }
            _ => {}
        }
    }
    errs
}

/// `AccumulateUniqueHostPorts` over `containers` (paths under `path`).
pub fn check_host_port_conflicts(containers: &[&Container], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen = BTreeSet::new();
    for (ci, c) in containers.iter().enumerate() {
        for (pi, port) in c.ports.iter().flatten().enumerate() {
            let hp = port.host_port.unwrap_or(0);
            if hp == 0 {
                continue;
            }
            let key = format!(
                "{}/{}/{hp}",
                port.protocol.as_deref().unwrap_or_default(),
                port.host_ip.as_deref().unwrap_or_default()
            );
            if !seen.insert(key.clone()) {
                errs.push(Error::duplicate(
                    &path.index(ci).child("ports").index(pi).child("hostPort"),
                    key,
                ));
            }
        }
    }
    errs
}

fn validate_pull_policy(policy: &str, path: &Path) -> ErrorList {
    match policy {
        "Always" | "IfNotPresent" | "Never" => ErrorList::new(),
        "" => ErrorList(vec![Error::required(path, "")]),
        other => ErrorList(vec![Error::not_supported(
            path,
            other,
            &["Always", "IfNotPresent", "Never"],
        )]),
    }
}

fn validate_resize_policy(
    list: &[ContainerResizePolicy],
    restart_policy: &str,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen = BTreeSet::new();
    for (i, p) in list.iter().enumerate() {
        if !seen.insert(p.resource_name.as_str()) {
            errs.push(Error::duplicate(&path.index(i), p.resource_name.as_str()));
        }
        match p.resource_name.as_str() {
            "cpu" | "memory" => {}
            "" => errs.push(Error::required(path, "")),
            other => errs.push(Error::not_supported(path, other, &["cpu", "memory"])),
        }
        match p.restart_policy.as_str() {
            "NotRequired" | "RestartContainer" => {}
            "" => errs.push(Error::required(path, "")),
            other => errs.push(Error::not_supported(
                path,
                other,
                &["NotRequired", "RestartContainer"],
            )),
        }
        if restart_policy == "Never" && p.restart_policy != "NotRequired" {
            errs.push(Error::invalid(
                path,
                p.restart_policy.as_str(),
                "must be 'NotRequired' when `restartPolicy` is 'Never'",
            ));
        }
    }
    errs
}

/// `validateContainerCommon`: name, image, termination message policy,
/// ports, env, mounts, devices, pull policy, resources, resize policy and
/// security context.
pub fn validate_container_common(c: &Container, ctx: &SpecContext<'_>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let name_path = path.child("name");
    if c.name.is_empty() {
        errs.push(Error::required(&name_path, ""));
    } else {
        errs.append(validate_dns1123_label(&name_path, &c.name));
    }
    if c.image.as_deref().unwrap_or_default().is_empty() {
        errs.push(Error::required(&path.child("image"), ""));
    }
    match c.termination_message_policy.as_deref().unwrap_or_default() {
        "File" | "FallbackToLogsOnError" => {}
        "" => errs.push(Error::required(&path.child("terminationMessagePolicy"), "")),
        other => errs.push(Error::not_supported(
            &path.child("terminationMessagePolicy"),
            other,
            &["File", "FallbackToLogsOnError"],
        )),
    }
    let mounts = c.volume_mounts.as_deref().unwrap_or_default();
    let devices = c.volume_devices.as_deref().unwrap_or_default();
    errs.append(validate_container_ports(
        c.ports.as_deref().unwrap_or_default(),
        &path.child("ports"),
    ));
    errs.append(validate_env(
        c.env.as_deref().unwrap_or_default(),
        &path.child("env"),
    ));
    errs.append(validate_env_from(
        c.env_from.as_deref().unwrap_or_default(),
        &path.child("envFrom"),
    ));
    errs.append(validate_volume_mounts(
        mounts,
        devices,
        ctx.volumes,
        Some(c),
        &path.child("volumeMounts"),
    ));
    errs.append(validate_volume_devices(
        devices,
        mounts,
        ctx.volumes,
        &path.child("volumeDevices"),
    ));
    errs.append(validate_pull_policy(
        c.image_pull_policy.as_deref().unwrap_or_default(),
        &path.child("imagePullPolicy"),
    ));
    errs.append(validate_resource_requirements(
        c.resources.as_ref(),
        ctx.claim_names,
        &path.child("resources"),
    ));
    errs.append(validate_resize_policy(
        c.resize_policy.as_deref().unwrap_or_default(),
        ctx.restart_policy,
        &path.child("resizePolicy"),
    ));
    errs.append(validate_security_context(
        c.security_context.as_ref(),
        &path.child("securityContext"),
        ctx.host_users,
    ));
    errs
}

/// `validateContainers`: at least one; names unique among regular
/// containers; probes and lifecycle; no container-level `restartPolicy`.
pub fn validate_containers(
    containers: &[Container],
    ctx: &SpecContext<'_>,
    path: &Path,
) -> ErrorList {
    if containers.is_empty() {
        return ErrorList(vec![Error::required(path, "")]);
    }
    let mut errs = ErrorList::new();
    let mut names = BTreeSet::new();
    for (i, c) in containers.iter().enumerate() {
        let p = path.index(i);
        errs.append(validate_container_common(c, ctx, &p));
        if !names.insert(c.name.as_str()) {
            errs.push(Error::duplicate(&p.child("name"), c.name.as_str()));
        }
        if let Some(l) = &c.lifecycle {
            errs.append(validate_lifecycle(
                l,
                ctx.grace_period,
                &p.child("lifecycle"),
            ));
        }
        errs.append(validate_probe_of(
            ProbeKind::Liveness,
            c.liveness_probe.as_ref(),
            ctx.grace_period,
            &p.child("livenessProbe"),
        ));
        errs.append(validate_probe_of(
            ProbeKind::Readiness,
            c.readiness_probe.as_ref(),
            ctx.grace_period,
            &p.child("readinessProbe"),
        ));
        errs.append(validate_probe_of(
            ProbeKind::Startup,
            c.startup_probe.as_ref(),
            ctx.grace_period,
            &p.child("startupProbe"),
        ));
        if c.restart_policy.is_some() {
            errs.push(Error::forbidden(
                &p.child("restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    let all: Vec<&Container> = containers.iter().collect();
    errs.append(check_host_port_conflicts(&all, path));
    errs
}

/// `validateInitContainers`: names unique across regular and init
/// containers; only restartable (sidecar) init containers may have probes
/// and lifecycle hooks.
pub fn validate_init_containers(
    init: &[Container],
    regular: &[Container],
    ctx: &SpecContext<'_>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut names: BTreeSet<&str> = regular.iter().map(|c| c.name.as_str()).collect();
    for (i, c) in init.iter().enumerate() {
        let p = path.index(i);
        errs.append(validate_container_common(c, ctx, &p));
        let mut restart_always = false;
        if let Some(rp) = c.restart_policy.as_deref() {
            if rp != "Always" {
                errs.push(Error::not_supported(
                    &p.child("restartPolicy"),
                    rp,
                    &["Always"],
                ));
            }
            restart_always = rp == "Always";
        }
        if names.contains(c.name.as_str()) {
            errs.push(Error::duplicate(&p.child("name"), c.name.as_str()));
        } else if !c.name.is_empty() {
            names.insert(c.name.as_str());
        }
        errs.append(check_host_port_conflicts(&[c], path));
        if restart_always {
            if let Some(l) = &c.lifecycle {
                errs.append(validate_lifecycle(
                    l,
                    ctx.grace_period,
                    &p.child("lifecycle"),
                ));
            }
            errs.append(validate_probe_of(
                ProbeKind::Liveness,
                c.liveness_probe.as_ref(),
                ctx.grace_period,
                &p.child("livenessProbe"),
            ));
            errs.append(validate_probe_of(
                ProbeKind::Readiness,
                c.readiness_probe.as_ref(),
                ctx.grace_period,
                &p.child("readinessProbe"),
            ));
            errs.append(validate_probe_of(
                ProbeKind::Startup,
                c.startup_probe.as_ref(),
                ctx.grace_period,
                &p.child("startupProbe"),
            ));
        } else {
            const WHY: &str = "may not be set for init containers without restartPolicy=Always";
            for (name, set) in [
                ("lifecycle", c.lifecycle.is_some()),
                ("livenessProbe", c.liveness_probe.is_some()),
                ("readinessProbe", c.readiness_probe.is_some()),
                ("startupProbe", c.startup_probe.is_some()),
            ] {
                if set {
                    errs.push(Error::forbidden(&p.child(name), WHY));
                }
            }
        }
    }
    errs
}

/// An ephemeral container as a [`Container`] (their common fields).
pub fn ephemeral_as_container(ec: &EphemeralContainer) -> Container {
    Container {
        args: ec.args.clone(),
        command: ec.command.clone(),
        env: ec.env.clone(),
        env_from: ec.env_from.clone(),
        image: ec.image.clone(),
        image_pull_policy: ec.image_pull_policy.clone(),
        lifecycle: ec.lifecycle.clone(),
        liveness_probe: ec.liveness_probe.clone(),
        name: ec.name.clone(),
        ports: ec.ports.clone(),
        readiness_probe: ec.readiness_probe.clone(),
        resize_policy: ec.resize_policy.clone(),
        resources: ec.resources.clone(),
        restart_policy: ec.restart_policy.clone(),
        restart_policy_rules: ec.restart_policy_rules.clone(),
        security_context: ec.security_context.clone(),
        startup_probe: ec.startup_probe.clone(),
        stdin: ec.stdin,
        stdin_once: ec.stdin_once,
        termination_message_path: ec.termination_message_path.clone(),
        termination_message_policy: ec.termination_message_policy.clone(),
        tty: ec.tty,
        volume_devices: ec.volume_devices.clone(),
        volume_mounts: ec.volume_mounts.clone(),
        working_dir: ec.working_dir.clone(),
    }
}

/// `validateContainerOnlyForPod`: no whitespace around the image.
pub fn validate_container_only_for_pod(c: &Container, path: &Path) -> ErrorList {
    let image = c.image.as_deref().unwrap_or_default();
    if image.trim() != image {
        ErrorList(vec![Error::invalid(
            &path.child("image"),
            image,
            "must not have leading or trailing whitespace",
        )])
    } else {
        ErrorList::new()
    }
}

/// `validateEphemeralContainers`: common rules, names unique across all
/// containers, an existing target, and only the allowed fields.
pub fn validate_ephemeral_containers(
    ephemeral: &[EphemeralContainer],
    containers: &[Container],
    init: &[Container],
    ctx: &SpecContext<'_>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let others: BTreeSet<&str> = containers
        .iter()
        .chain(init)
        .map(|c| c.name.as_str())
        .collect();
    let mut all = others.clone();
    for (i, ec) in ephemeral.iter().enumerate() {
        let p = path.index(i);
        let c = ephemeral_as_container(ec);
        errs.append(validate_container_common(&c, ctx, &p));
        errs.append(validate_container_only_for_pod(&c, &p));
        if all.contains(ec.name.as_str()) {
            errs.push(Error::duplicate(&p.child("name"), ec.name.as_str()));
        } else {
            all.insert(ec.name.as_str());
        }
        if let Some(t) = ec
            .target_container_name
            .as_deref()
            .filter(|t| !t.is_empty())
            && !others.contains(t)
        {
            errs.push(Error::not_found(&p.child("targetContainerName"), t));
        }
        const WHY: &str = "cannot be set for an Ephemeral Container";
        for (name, set) in [
            ("ports", c.ports.is_some()),
            (
                "resources",
                c.resources
                    .as_ref()
                    .is_some_and(|r| r != &Default::default()),
            ),
            ("resizePolicy", c.resize_policy.is_some()),
            ("lifecycle", c.lifecycle.is_some()),
            ("livenessProbe", c.liveness_probe.is_some()),
            ("readinessProbe", c.readiness_probe.is_some()),
            ("startupProbe", c.startup_probe.is_some()),
            ("restartPolicy", c.restart_policy.is_some()),
            ("restartPolicyRules", c.restart_policy_rules.is_some()),
        ] {
            if set {
                errs.push(Error::forbidden(&p.child(name), WHY));
            }
        }
        for (j, vm) in c.volume_mounts.iter().flatten().enumerate() {
            let vp = p.child("volumeMounts").index(j);
            if vm.sub_path.as_deref().is_some_and(|s| !s.is_empty()) {
                errs.push(Error::forbidden(&vp.child("subPath"), WHY));
            }
            if vm.sub_path_expr.as_deref().is_some_and(|s| !s.is_empty()) {
                errs.push(Error::forbidden(&vp.child("subPathExpr"), WHY));
            }
        }
    }
    errs
}
