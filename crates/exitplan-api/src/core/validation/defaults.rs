//! The core/v1 pod defaults (`pkg/apis/core/v1/defaults.go`) that the
//! decoder applies to every Pod and pod template before validation:
//! `SetDefaults_Pod`, `SetDefaults_PodSpec`, `SetDefaults_Container`,
//! `SetDefaults_ContainerPort`, `SetDefaults_Probe`,
//! `SetDefaults_HTTPGetAction`, `SetDefaults_ObjectFieldSelector` and the
//! volume defaults. Admission plugins (service account, priority, default
//! tolerations) are not run.

use k8s_openapi::api::core::v1::{
    Container, EnvVar, HTTPGetAction, LifecycleHandler, PodSecurityContext, PodSpec, Probe,
    ResourceRequirements, Volume,
};

/// `DefaultTerminationGracePeriodSeconds`.
pub const DEFAULT_TERMINATION_GRACE_PERIOD: i64 = 30;
/// The default file mode of secret, configMap, downwardAPI and projected volumes (0644).
pub const DEFAULT_MODE: i32 = 0o644;

fn set_if_empty(field: &mut Option<String>, value: &str) {
    if field.as_deref().unwrap_or_default().is_empty() {
        *field = Some(value.to_owned());
    }
}

/// The image pull policy for `image`: `Always` for `:latest` or an
/// untagged image without digest, else `IfNotPresent`.
pub fn default_pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}

fn default_http_get(h: &mut HTTPGetAction) {
    set_if_empty(&mut h.path, "/");
    set_if_empty(&mut h.scheme, "HTTP");
}

fn default_probe(p: &mut Probe) {
    for (field, value) in [
        (&mut p.timeout_seconds, 1),
        (&mut p.period_seconds, 10),
        (&mut p.success_threshold, 1),
        (&mut p.failure_threshold, 3),
    ] {
        if field.unwrap_or(0) == 0 {
            *field = Some(value);
        }
    }
    if let Some(h) = &mut p.http_get {
        default_http_get(h);
    }
}

fn default_handler(h: &mut LifecycleHandler) {
    if let Some(g) = &mut h.http_get {
        default_http_get(g);
    }
}

fn default_env(env: &mut [EnvVar]) {
    for e in env {
        if let Some(f) = e.value_from.as_mut().and_then(|v| v.field_ref.as_mut()) {
            set_if_empty(&mut f.api_version, "v1");
        }
    }
}

/// `SetDefaults_Pod`'s copy of limits into unset requests.
fn default_requests(r: &mut ResourceRequirements) {
    let Some(limits) = &r.limits else {
        return;
    };
    if limits.is_empty() {
        return;
    }
    let requests = r.requests.get_or_insert_with(Default::default);
    for (k, v) in limits {
        requests.entry(k.clone()).or_insert_with(|| v.clone());
    }
}

/// `SetDefaults_Container` and the defaults of its parts.
pub fn default_container(c: &mut Container, requests_from_limits: bool) {
    if c.image_pull_policy
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        c.image_pull_policy =
            Some(default_pull_policy(c.image.as_deref().unwrap_or_default()).to_owned());
    }
    set_if_empty(&mut c.termination_message_path, "/dev/termination-log");
    set_if_empty(&mut c.termination_message_policy, "File");
    for p in c.ports.iter_mut().flatten() {
        set_if_empty(&mut p.protocol, "TCP");
    }
    for p in [
        &mut c.liveness_probe,
        &mut c.readiness_probe,
        &mut c.startup_probe,
    ]
    .into_iter()
    .flatten()
    {
        default_probe(p);
    }
    if let Some(l) = &mut c.lifecycle {
        for h in [&mut l.post_start, &mut l.pre_stop].into_iter().flatten() {
            default_handler(h);
        }
    }
    default_env(c.env.as_deref_mut().unwrap_or_default());
    if requests_from_limits && let Some(r) = &mut c.resources {
        default_requests(r);
    }
}

fn default_volume(v: &mut Volume) {
    let has_source = v.aws_elastic_block_store.is_some()
        || v.azure_disk.is_some()
        || v.azure_file.is_some()
        || v.cephfs.is_some()
        || v.cinder.is_some()
        || v.config_map.is_some()
        || v.csi.is_some()
        || v.downward_api.is_some()
        || v.empty_dir.is_some()
        || v.ephemeral.is_some()
        || v.fc.is_some()
        || v.flex_volume.is_some()
        || v.flocker.is_some()
        || v.gce_persistent_disk.is_some()
        || v.git_repo.is_some()
        || v.glusterfs.is_some()
        || v.host_path.is_some()
        || v.image.is_some()
        || v.iscsi.is_some()
        || v.nfs.is_some()
        || v.persistent_volume_claim.is_some()
        || v.photon_persistent_disk.is_some()
        || v.portworx_volume.is_some()
        || v.projected.is_some()
        || v.quobyte.is_some()
        || v.rbd.is_some()
        || v.scale_io.is_some()
        || v.secret.is_some()
        || v.storageos.is_some()
        || v.vsphere_volume.is_some();
    if !has_source {
        v.empty_dir = Some(Default::default());
    }
    if let Some(s) = &mut v.secret {
        s.default_mode.get_or_insert(DEFAULT_MODE);
    }
    if let Some(c) = &mut v.config_map {
        c.default_mode.get_or_insert(DEFAULT_MODE);
    }
    if let Some(d) = &mut v.downward_api {
        d.default_mode.get_or_insert(DEFAULT_MODE);
        for f in d.items.iter_mut().flatten() {
            if let Some(fr) = &mut f.field_ref {
                set_if_empty(&mut fr.api_version, "v1");
            }
        }
    }
    if let Some(p) = &mut v.projected {
        p.default_mode.get_or_insert(DEFAULT_MODE);
        for s in p.sources.iter_mut().flatten() {
            if let Some(t) = &mut s.service_account_token
                && t.expiration_seconds.is_none()
            {
                t.expiration_seconds = Some(3600);
            }
            for f in s
                .downward_api
                .iter_mut()
                .flat_map(|d| d.items.iter_mut().flatten())
            {
                if let Some(fr) = &mut f.field_ref {
                    set_if_empty(&mut fr.api_version, "v1");
                }
            }
        }
    }
    if let Some(h) = &mut v.host_path
        && h.type_.is_none()
    {
        h.type_ = Some(String::new());
    }
}

/// `SetDefaults_PodSpec` with its containers and volumes; `is_pod` adds
/// `SetDefaults_Pod` (service links, requests from limits).
pub fn default_pod_spec(spec: &mut PodSpec, is_pod: bool) {
    set_if_empty(&mut spec.dns_policy, "ClusterFirst");
    set_if_empty(&mut spec.restart_policy, "Always");
    set_if_empty(&mut spec.scheduler_name, "default-scheduler");
    if spec.security_context.is_none() {
        spec.security_context = Some(PodSecurityContext::default());
    }
    if spec.termination_grace_period_seconds.is_none() {
        spec.termination_grace_period_seconds = Some(DEFAULT_TERMINATION_GRACE_PERIOD);
    }
    if is_pod && spec.enable_service_links.is_none() {
        spec.enable_service_links = Some(true);
    }
    let host_network = spec.host_network.unwrap_or(false);
    for c in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        default_container(c, is_pod);
        if host_network {
            for p in c.ports.iter_mut().flatten() {
                if p.host_port.unwrap_or(0) == 0 {
                    p.host_port = Some(p.container_port);
                }
            }
        }
    }
    for e in spec.ephemeral_containers.iter_mut().flatten() {
        if e.image_pull_policy
            .as_deref()
            .unwrap_or_default()
            .is_empty()
        {
            e.image_pull_policy =
                Some(default_pull_policy(e.image.as_deref().unwrap_or_default()).to_owned());
        }
        set_if_empty(&mut e.termination_message_path, "/dev/termination-log");
        set_if_empty(&mut e.termination_message_policy, "File");
        default_env(e.env.as_deref_mut().unwrap_or_default());
    }
    for v in spec.volumes.iter_mut().flatten() {
        default_volume(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_follows_the_tag() {
        assert_eq!(default_pull_policy("nginx"), "Always");
        assert_eq!(default_pull_policy("nginx:latest"), "Always");
        assert_eq!(default_pull_policy("nginx:1.25"), "IfNotPresent");
        assert_eq!(default_pull_policy("registry:5000/nginx"), "Always");
        assert_eq!(default_pull_policy("nginx@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn spec_defaults() {
        let mut spec = PodSpec {
            containers: vec![Container {
                name: "c".into(),
                image: Some("busybox:1".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        default_pod_spec(&mut spec, true);
        assert_eq!(spec.dns_policy.as_deref(), Some("ClusterFirst"));
        assert_eq!(spec.restart_policy.as_deref(), Some("Always"));
        assert_eq!(spec.termination_grace_period_seconds, Some(30));
        let c = &spec.containers[0];
        assert_eq!(c.termination_message_policy.as_deref(), Some("File"));
        assert_eq!(c.image_pull_policy.as_deref(), Some("IfNotPresent"));
    }
}
