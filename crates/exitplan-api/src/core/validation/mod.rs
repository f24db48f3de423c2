//! Pod validation ported from upstream's `pkg/apis/core/validation`
//! (`ValidatePodCreate`, `ValidatePodUpdate`, `ValidatePodStatusUpdate`,
//! `ValidatePodBinding`, `ValidatePodSpec` and the rules every pod template
//! shares), with the same field paths and texts as kube-apiserver.
//!
//! Upstream validates the *internal* types after the v1 defaults ran
//! ([`defaults`]); exitplan validates the k8s-openapi v1 types after the same
//! defaults, reading an unset optional as Go's zero value.
//!
//! One job per file:
//!
//! * [`strings`] — the apimachinery string checks pods need (ports, env
//!   names, config keys, IPs, user IDs);
//! * [`quantity`] — `resource.Quantity` parsing, comparison and rendering;
//! * [`container`] — regular, init and ephemeral containers (names, image,
//!   ports, pull and termination message policies, lifecycle);
//! * [`env`] — `env`, `envFrom` and `valueFrom`;
//! * [`probe`] — probes and lifecycle handlers;
//! * [`resources`] — resource requirements and resource names;
//! * [`volume`] — volumes, volume mounts and devices;
//! * [`security`] — pod and container security contexts;
//! * [`security_annotations`] — the seccomp and AppArmor annotations and
//!   their agreement with the fields, pod-specific annotations;
//! * [`os`] — `spec.os`, the Linux and Windows field rules, HostProcess pods;
//! * [`pod_resources`] — pod-level `spec.resources`;
//! * [`scheduling`] — affinity, tolerations, topology spread, scheduling gates;
//! * [`pod_spec`] — `ValidatePodSpec` and `ValidatePodTemplateSpec`;
//! * [`pod`] — create, update (with its spec diff, [`diff`]) and binding;
//! * [`pod_annotations`] — the pod-specific annotations;
//! * [`pod_status`] — status updates;
//! * [`pod_subresources`] — `pods/ephemeralcontainers` and `pods/resize`;
//! * [`qos`] — the pod QoS class;
//! * [`defaults`] — the core/v1 pod defaults validation relies on.

pub mod container;
pub mod defaults;
pub mod diff;
pub mod env;
pub mod os;
pub mod pod;
pub mod pod_annotations;
pub mod pod_resources;
pub mod pod_spec;
pub mod pod_status;
pub mod pod_subresources;
pub mod probe;
pub mod qos;
pub mod quantity;
pub mod resources;
pub mod scheduling;
pub mod security;
pub mod security_annotations;
pub mod strings;
pub mod volume;

/// Options of upstream's `PodValidationOptions` that exitplan honours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodValidationOptions {
    /// The spec belongs to a Pod (not a template): `hostPort` must equal
    /// `containerPort` under `hostNetwork` and pod-only checks run.
    pub resource_is_pod: bool,
    /// Tolerate invalid label values in label selectors (update ratcheting).
    pub allow_invalid_label_value_in_selector: bool,
    /// Tolerate namespaced sysctls next to `hostNetwork` / `hostIPC`
    /// (`AllowNamespacedSysctlsForHostNetAndHostIPC`: an update of a pod
    /// that already had them).
    pub allow_namespaced_sysctls_for_host_net_and_host_ipc: bool,
}
