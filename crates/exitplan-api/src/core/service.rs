//! Service: defaulting (`SetDefaults_Service`), the registry strategy
//! (`pkg/registry/core/service/strategy.go`) and the REST layer's field
//! fix-ups upstream runs before allocation (`normalizeClusterIPs`,
//! `patchAllocatedValues` in `pkg/registry/core/service/storage`).
//! Validation is in [`super::service_validation`]; ClusterIP and NodePort
//! allocation in [`super::service_alloc`].
//!
//! Order for a write of the main resource, as kube-apiserver runs it:
//! decode + [`ServiceStrategy::default`] → allocation
//! ([`super::service_alloc::ServiceAllocator::allocate_service`] on create,
//! `allocate_service_update` on update; both also normalize `clusterIP(s)`
//! and fill `ipFamilies` / `ipFamilyPolicy`) → `admit_create` / `admit_update`
//! with this strategy.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    ClientIPConfig, LoadBalancerStatus, Service, ServiceSpec, ServiceStatus, SessionAffinityConfig,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::service_validation::{
    validate_service, validate_service_status_update, validate_service_update,
};
use crate::field::ErrorList;
use crate::strategy::{Context, Strategy};

/// `ClusterIP`.
pub const TYPE_CLUSTER_IP: &str = "ClusterIP";
/// `NodePort`.
pub const TYPE_NODE_PORT: &str = "NodePort";
/// `LoadBalancer`.
pub const TYPE_LOAD_BALANCER: &str = "LoadBalancer";
/// `ExternalName`.
pub const TYPE_EXTERNAL_NAME: &str = "ExternalName";
/// The `clusterIP` of a headless service.
pub const CLUSTER_IP_NONE: &str = "None";
/// Session affinity `None`.
pub const AFFINITY_NONE: &str = "None";
/// Session affinity `ClientIP`.
pub const AFFINITY_CLIENT_IP: &str = "ClientIP";
/// Traffic policy `Cluster` (external and internal).
pub const TRAFFIC_POLICY_CLUSTER: &str = "Cluster";
/// Traffic policy `Local` (external and internal).
pub const TRAFFIC_POLICY_LOCAL: &str = "Local";
/// `DefaultClientIPServiceAffinitySeconds` (3 hours).
pub const DEFAULT_CLIENT_IP_AFFINITY_SECONDS: i32 = 10800;
/// `MaxClientIPServiceAffinitySeconds` (1 day).
pub const MAX_CLIENT_IP_AFFINITY_SECONDS: i32 = 86400;
/// `IPv4`.
pub const IPV4: &str = "IPv4";
/// `IPv6`.
pub const IPV6: &str = "IPv6";
/// `SingleStack`.
pub const SINGLE_STACK: &str = "SingleStack";
/// `PreferDualStack`.
pub const PREFER_DUAL_STACK: &str = "PreferDualStack";
/// `RequireDualStack`.
pub const REQUIRE_DUAL_STACK: &str = "RequireDualStack";
/// Load-balancer ingress IP mode `VIP`.
pub const IP_MODE_VIP: &str = "VIP";

/// The spec, or an empty one.
pub fn spec(svc: &Service) -> std::borrow::Cow<'_, ServiceSpec> {
    match &svc.spec {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(ServiceSpec::default()),
    }
}

/// `spec.type` ("" when unset).
pub fn service_type(spec: &ServiceSpec) -> &str {
    spec.type_.as_deref().unwrap_or_default()
}

/// `spec.clusterIPs` (empty when unset).
pub fn cluster_ips(spec: &ServiceSpec) -> &[String] {
    spec.cluster_ips.as_deref().unwrap_or_default()
}

/// `isHeadlessService`: `clusterIPs` is exactly `["None"]`.
pub fn is_headless(spec: &ServiceSpec) -> bool {
    matches!(cluster_ips(spec), [ip] if ip == CLUSTER_IP_NONE)
}

/// `ExternallyAccessible`: NodePort, LoadBalancer, or ClusterIP with external IPs.
pub fn externally_accessible(spec: &ServiceSpec) -> bool {
    let t = service_type(spec);
    t == TYPE_LOAD_BALANCER
        || t == TYPE_NODE_PORT
        || (t == TYPE_CLUSTER_IP && !spec.external_ips.as_deref().unwrap_or_default().is_empty())
}

/// `NeedsHealthCheck`: a LoadBalancer with `externalTrafficPolicy: Local`.
pub fn needs_health_check(spec: &ServiceSpec) -> bool {
    service_type(spec) == TYPE_LOAD_BALANCER
        && spec.external_traffic_policy.as_deref() == Some(TRAFFIC_POLICY_LOCAL)
}

/// `needsClusterIP`: every type but ExternalName.
pub fn needs_cluster_ip(spec: &ServiceSpec) -> bool {
    service_type(spec) != TYPE_EXTERNAL_NAME
}

/// `needsNodePort`: NodePort and LoadBalancer.
pub fn needs_node_port(spec: &ServiceSpec) -> bool {
    matches!(service_type(spec), TYPE_NODE_PORT | TYPE_LOAD_BALANCER)
}

/// The non-zero node ports of the spec.
pub fn node_ports(spec: &ServiceSpec) -> BTreeSet<i32> {
    spec.ports
        .iter()
        .flatten()
        .filter_map(|p| p.node_port.filter(|n| *n != 0))
        .collect()
}

/// `SetDefaults_Service`.
pub fn default_service(svc: &mut Service) {
    let spec = svc.spec.get_or_insert_with(ServiceSpec::default);
    if spec
        .session_affinity
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        spec.session_affinity = Some(AFFINITY_NONE.to_owned());
    }
    match spec.session_affinity.as_deref() {
        Some(AFFINITY_NONE) => spec.session_affinity_config = None,
        Some(AFFINITY_CLIENT_IP) => {
            let has_timeout = spec
                .session_affinity_config
                .as_ref()
                .and_then(|c| c.client_ip.as_ref())
                .and_then(|c| c.timeout_seconds)
                .is_some();
            if !has_timeout {
                spec.session_affinity_config = Some(SessionAffinityConfig {
                    client_ip: Some(ClientIPConfig {
                        timeout_seconds: Some(DEFAULT_CLIENT_IP_AFFINITY_SECONDS),
                    }),
                });
            }
        }
        _ => {}
    }
    if spec.type_.as_deref().unwrap_or_default().is_empty() {
        spec.type_ = Some(TYPE_CLUSTER_IP.to_owned());
    }
    for port in spec.ports.iter_mut().flatten() {
        if port.protocol.as_deref().unwrap_or_default().is_empty() {
            port.protocol = Some("TCP".to_owned());
        }
        let unset = match &port.target_port {
            None => true,
            Some(IntOrString::Int(0)) => true,
            Some(IntOrString::String(s)) => s.is_empty(),
            Some(IntOrString::Int(_)) => false,
        };
        if unset {
            port.target_port = Some(IntOrString::Int(port.port));
        }
    }
    if externally_accessible(spec)
        && spec
            .external_traffic_policy
            .as_deref()
            .unwrap_or_default()
            .is_empty()
    {
        spec.external_traffic_policy = Some(TRAFFIC_POLICY_CLUSTER.to_owned());
    }
    let t = service_type(spec).to_owned();
    if spec.internal_traffic_policy.is_none()
        && matches!(
            t.as_str(),
            TYPE_NODE_PORT | TYPE_LOAD_BALANCER | TYPE_CLUSTER_IP
        )
    {
        spec.internal_traffic_policy = Some(TRAFFIC_POLICY_CLUSTER.to_owned());
    }
    if t == TYPE_LOAD_BALANCER {
        if spec.allocate_load_balancer_node_ports.is_none() {
            spec.allocate_load_balancer_node_ports = Some(true);
        }
        let ingress = svc
            .status
            .as_mut()
            .and_then(|s| s.load_balancer.as_mut())
            .and_then(|lb| lb.ingress.as_mut());
        for ing in ingress.into_iter().flatten() {
            if !ing.ip.as_deref().unwrap_or_default().is_empty() && ing.ip_mode.is_none() {
                ing.ip_mode = Some(IP_MODE_VIP.to_owned());
            }
        }
    }
}

fn same_cluster_ips(a: &ServiceSpec, b: &ServiceSpec) -> bool {
    cluster_ips(a) == cluster_ips(b)
}

/// `normalizeClusterIPs`: keeps `clusterIP` and `clusterIPs` in step. On
/// create (`old` is `None`) a lone `clusterIP` becomes `clusterIPs`; on
/// update a client that only knows `clusterIP` keeps the stored
/// `clusterIPs`, and clearing or changing `clusterIP` follows into
/// `clusterIPs` when the client left those as stored.
pub fn normalize_cluster_ips(new: &mut Service, old: Option<&Service>) {
    let new_spec = new.spec.get_or_insert_with(ServiceSpec::default);
    let new_ip = new_spec.cluster_ip.clone().unwrap_or_default();
    let Some(old) = old else {
        if !new_ip.is_empty() && cluster_ips(new_spec).is_empty() {
            new_spec.cluster_ips = Some(vec![new_ip]);
        }
        return;
    };
    let old_spec = spec(old);
    let old_ip = old_spec.cluster_ip.clone().unwrap_or_default();
    if !cluster_ips(&old_spec).is_empty() && cluster_ips(new_spec).is_empty() && old_ip == new_ip {
        new_spec.cluster_ips.clone_from(&old_spec.cluster_ips);
    }
    if old_ip != new_ip {
        if !old_ip.is_empty() && new_ip.is_empty() {
            if same_cluster_ips(&old_spec, new_spec) {
                new_spec.cluster_ips = None;
            }
        } else if same_cluster_ips(&old_spec, new_spec) {
            new_spec.cluster_ips = Some(vec![new_ip]);
        }
    }
}

/// `patchAllocatedValues`: values the server allocated and the client left
/// out (ClusterIP, node ports by port name, health-check node port) are
/// kept, so re-applying the same manifest succeeds.
pub fn patch_allocated_values(new: &mut Service, old: &Service) {
    let old_spec = spec(old);
    let new_spec = new.spec.get_or_insert_with(ServiceSpec::default);
    if needs_cluster_ip(&old_spec) && needs_cluster_ip(new_spec) {
        if new_spec
            .cluster_ip
            .as_deref()
            .unwrap_or_default()
            .is_empty()
        {
            new_spec.cluster_ip.clone_from(&old_spec.cluster_ip);
        }
        if cluster_ips(new_spec).is_empty() && !cluster_ips(&old_spec).is_empty() {
            new_spec.cluster_ips.clone_from(&old_spec.cluster_ips);
        }
    }
    if needs_node_port(&old_spec) && needs_node_port(new_spec) {
        let old_ports = node_ports(&old_spec);
        let used: BTreeSet<i32> = node_ports(new_spec)
            .intersection(&old_ports)
            .copied()
            .collect();
        let by_name: BTreeMap<String, i32> = old_spec
            .ports
            .iter()
            .flatten()
            .map(|p| (p.name.clone().unwrap_or_default(), p.node_port.unwrap_or(0)))
            .collect();
        for p in new_spec.ports.iter_mut().flatten() {
            if p.node_port.unwrap_or(0) == 0 {
                let old_val = by_name
                    .get(p.name.as_deref().unwrap_or_default())
                    .copied()
                    .unwrap_or(0);
                if !used.contains(&old_val) {
                    p.node_port = (old_val != 0).then_some(old_val);
                }
            }
        }
    }
    if needs_health_check(&old_spec)
        && needs_health_check(new_spec)
        && new_spec.health_check_node_port.unwrap_or(0) == 0
    {
        new_spec.health_check_node_port = old_spec.health_check_node_port;
    }
}

/// `dropTypeDependentFields`: on a type change, fields the new type does
/// not use and the client left as stored are cleared (ClusterIPs and IP
/// families when leaving for ExternalName, node ports, the health-check
/// node port, `allocateLoadBalancerNodePorts`, `loadBalancerClass`,
/// `externalTrafficPolicy`), and the load-balancer status of a service that
/// is no longer a LoadBalancer.
pub fn drop_type_dependent_fields(new: &mut Service, old: &Service) {
    let old_spec = spec(old);
    let new_spec = new.spec.get_or_insert_with(ServiceSpec::default);
    if needs_cluster_ip(&old_spec) && !needs_cluster_ip(new_spec) {
        if old_spec.cluster_ip.as_deref().unwrap_or_default()
            == new_spec.cluster_ip.as_deref().unwrap_or_default()
            && same_cluster_ips(&old_spec, new_spec)
        {
            new_spec.cluster_ip = None;
            new_spec.cluster_ips = None;
        }
        if old_spec.ip_families.as_deref().unwrap_or_default()
            == new_spec.ip_families.as_deref().unwrap_or_default()
        {
            new_spec.ip_families = None;
        }
        if old_spec.ip_family_policy.as_deref().unwrap_or_default()
            == new_spec.ip_family_policy.as_deref().unwrap_or_default()
        {
            new_spec.ip_family_policy = None;
        }
    }
    if needs_node_port(&old_spec)
        && !needs_node_port(new_spec)
        && node_ports(&old_spec).is_superset(&node_ports(new_spec))
    {
        for p in new_spec.ports.iter_mut().flatten() {
            p.node_port = None;
        }
    }
    if needs_health_check(&old_spec)
        && !needs_health_check(new_spec)
        && old_spec.health_check_node_port.unwrap_or(0)
            == new_spec.health_check_node_port.unwrap_or(0)
    {
        new_spec.health_check_node_port = None;
    }
    if service_type(&old_spec) == TYPE_LOAD_BALANCER && service_type(new_spec) != TYPE_LOAD_BALANCER
    {
        if let (Some(n), Some(o)) = (
            new_spec.allocate_load_balancer_node_ports,
            old_spec.allocate_load_balancer_node_ports,
        ) && n == o
        {
            new_spec.allocate_load_balancer_node_ports = None;
        }
        if old_spec.load_balancer_class == new_spec.load_balancer_class {
            new_spec.load_balancer_class = None;
        }
    }
    if needs_node_port(&old_spec)
        && !needs_node_port(new_spec)
        && old_spec
            .external_traffic_policy
            .as_deref()
            .unwrap_or_default()
            == new_spec
                .external_traffic_policy
                .as_deref()
                .unwrap_or_default()
    {
        new_spec.external_traffic_policy = None;
    }
    if service_type(new_spec) != TYPE_LOAD_BALANCER
        && let Some(status) = new.status.as_mut()
    {
        status.load_balancer = Some(LoadBalancerStatus::default());
    }
}

/// The Service registry strategy. Allocation is not part of it: call
/// [`super::service_alloc::ServiceAllocator`] first (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct ServiceStrategy;

impl Strategy for ServiceStrategy {
    type Object = Service;

    fn default(obj: &mut Service) {
        default_service(obj);
    }

    /// Status cleared; `clusterIPs` follows a lone `clusterIP` (a no-op
    /// when the allocator already ran).
    fn prepare_for_create(obj: &mut Service) {
        // Go always writes the (non-pointer) `loadBalancer` struct: `status: {loadBalancer: {}}`.
        obj.status = Some(ServiceStatus {
            load_balancer: Some(LoadBalancerStatus::default()),
            ..ServiceStatus::default()
        });
        normalize_cluster_ips(obj, None);
    }

    fn validate_create(obj: &Service, _ctx: &Context<'_>) -> ErrorList {
        validate_service(obj)
    }

    /// Status kept; allocated values the client omitted kept; fields of a
    /// former type dropped.
    fn prepare_for_update(new: &mut Service, old: &Service) {
        new.status.clone_from(&old.status);
        patch_allocated_values(new, old);
        normalize_cluster_ips(new, Some(old));
        drop_type_dependent_fields(new, old);
    }

    fn validate_update(new: &Service, old: &Service, _ctx: &Context<'_>) -> ErrorList {
        validate_service_update(new, old)
    }

    /// The spec is the stored one.
    fn prepare_for_status_update(new: &mut Service, old: &Service) {
        new.spec.clone_from(&old.spec);
    }

    fn validate_status_update(new: &Service, old: &Service, _ctx: &Context<'_>) -> ErrorList {
        validate_service_status_update(new, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ServicePort;

    fn port(port: i32) -> ServicePort {
        ServicePort {
            port,
            ..Default::default()
        }
    }

    /// Upstream's `TestSetDefaultService` and friends in `defaults_test.go`.
    #[test]
    fn defaults() {
        let mut svc = Service {
            spec: Some(ServiceSpec {
                ports: Some(vec![port(80)]),
                ..Default::default()
            }),
            ..Default::default()
        };
        default_service(&mut svc);
        let s = svc.spec.clone().expect("spec");
        assert_eq!(s.type_.as_deref(), Some("ClusterIP"));
        assert_eq!(s.session_affinity.as_deref(), Some("None"));
        assert_eq!(s.internal_traffic_policy.as_deref(), Some("Cluster"));
        assert_eq!(s.external_traffic_policy, None);
        let p = &s.ports.expect("ports")[0];
        assert_eq!(p.protocol.as_deref(), Some("TCP"));
        assert_eq!(p.target_port, Some(IntOrString::Int(80)));

        // TestSetDefaultServiceSessionAffinityConfig
        let mut svc = Service {
            spec: Some(ServiceSpec {
                session_affinity: Some("ClientIP".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        default_service(&mut svc);
        assert_eq!(
            svc.spec
                .and_then(|s| s.session_affinity_config)
                .and_then(|c| c.client_ip)
                .and_then(|c| c.timeout_seconds),
            Some(10800)
        );

        // TestSetDefaultServiceExternalTraffic / LoadBalancer defaults.
        for t in ["NodePort", "LoadBalancer"] {
            let mut svc = Service {
                spec: Some(ServiceSpec {
                    type_: Some(t.into()),
                    ..Default::default()
                }),
                ..Default::default()
            };
            default_service(&mut svc);
            let s = svc.spec.expect("spec");
            assert_eq!(s.external_traffic_policy.as_deref(), Some("Cluster"), "{t}");
            assert_eq!(
                s.allocate_load_balancer_node_ports,
                (t == "LoadBalancer").then_some(true),
                "{t}"
            );
        }
        // ExternalName gets no internal traffic policy.
        let mut svc = Service {
            spec: Some(ServiceSpec {
                type_: Some("ExternalName".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        default_service(&mut svc);
        assert_eq!(svc.spec.and_then(|s| s.internal_traffic_policy), None);
        // A named target port stays.
        let mut svc = Service {
            spec: Some(ServiceSpec {
                ports: Some(vec![ServicePort {
                    target_port: Some(IntOrString::String("http".into())),
                    ..port(80)
                }]),
                ..Default::default()
            }),
            ..Default::default()
        };
        default_service(&mut svc);
        assert_eq!(
            svc.spec
                .and_then(|s| s.ports)
                .map(|p| p[0].target_port.clone()),
            Some(Some(IntOrString::String("http".into())))
        );
    }

    #[test]
    fn normalize_and_patch() {
        let mut created = Service {
            spec: Some(ServiceSpec {
                cluster_ip: Some("10.96.0.10".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        normalize_cluster_ips(&mut created, None);
        assert_eq!(
            created.spec.as_ref().and_then(|s| s.cluster_ips.clone()),
            Some(vec!["10.96.0.10".to_owned()])
        );
        // Re-applying the manifest without clusterIP keeps the allocated one.
        let mut reapplied = Service {
            spec: Some(ServiceSpec::default()),
            ..Default::default()
        };
        patch_allocated_values(&mut reapplied, &created);
        normalize_cluster_ips(&mut reapplied, Some(&created));
        assert_eq!(
            reapplied.spec.as_ref().and_then(|s| s.cluster_ips.clone()),
            Some(vec!["10.96.0.10".to_owned()])
        );
    }
}
