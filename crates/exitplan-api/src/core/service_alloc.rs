//! ClusterIP and NodePort allocation for Services — what kube-apiserver's
//! service REST storage does before the strategy runs
//! (`pkg/registry/core/service/storage/alloc.go`: `initIPFamilyFields`,
//! `allocClusterIPs`, `initNodePorts`, `updateNodePorts`, the health-check
//! node port), with its error texts, on a single-stack IPv4 cluster.
//!
//! Pure and deterministic: the allocator is built from the stored Services
//! and the configured [`ServiceRanges`]; a new address or port is the lowest
//! free one of the range's dynamic band (upstream reserves the bottom of
//! each range for values clients ask for: min(max(16, size/16), 256)
//! addresses, min(max(16, size/32), 128) ports), then of the static band —
//! or, with [`ServiceAllocator::with_seed`], the first free one from a
//! position the caller's seed picks. Upstream picks at random.
//!
//! Call order for a write of the main resource (kube-apiserver's
//! `BeginCreate` / `BeginUpdate` hooks run before the strategy):
//!
//! ```text
//! create: alloc = ServiceAllocator::from_services(ranges, stored)
//!         alloc.allocate_service(&mut svc)?            // defaults, normalizes, allocates
//!         admit_create::<ServiceStrategy>(&mut svc, ctx)?
//! update: alloc.allocate_service_update(&mut new, &old)?
//!         admit_update::<ServiceStrategy>(&mut new, &old, ctx)?
//! ```
//!
//! Nothing needs undoing when a later step fails if the allocator is built
//! from the store for each write; a long-lived allocator must
//! [`ServiceAllocator::release`] what a failed write allocated and what a
//! delete frees, and re-[`ServiceAllocator::record`] on restart.

use std::collections::BTreeSet;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr};
use std::ops::RangeInclusive;
use std::str::FromStr;

use k8s_openapi::api::core::v1::{Service, ServiceSpec};

use super::service::{
    CLUSTER_IP_NONE, IPV4, IPV6, PREFER_DUAL_STACK, REQUIRE_DUAL_STACK, SINGLE_STACK,
    TYPE_CLUSTER_IP, TYPE_EXTERNAL_NAME, TYPE_LOAD_BALANCER, TYPE_NODE_PORT, cluster_ips,
    default_service, is_headless, needs_health_check, needs_node_port, normalize_cluster_ips,
    patch_allocated_values, service_type,
};
use super::service_validation::validate_cluster_ips_related_fields;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::render;
use crate::status::{GroupKind, InvalidError};

/// An IPv4 CIDR such as `10.96.0.0/12`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Cidr {
    /// The network address (host bits are cleared on parse).
    pub network: Ipv4Addr,
    /// The prefix length, 0–32.
    pub prefix: u8,
}

/// Why a CIDR did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid IPv4 CIDR {0:?}")]
pub struct CidrParseError(pub String);

impl FromStr for Ipv4Cidr {
    type Err = CidrParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || CidrParseError(s.to_owned());
        let (addr, bits) = s.split_once('/').ok_or_else(err)?;
        let addr: Ipv4Addr = addr.parse().map_err(|_| err())?;
        let prefix: u8 = bits.parse().map_err(|_| err())?;
        if prefix > 32 {
            return Err(err());
        }
        let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
        Ok(Ipv4Cidr {
            network: Ipv4Addr::from(u32::from(addr) & mask),
            prefix,
        })
    }
}

impl fmt::Display for Ipv4Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

impl Ipv4Cidr {
    /// The usable addresses as `(first, count)`: without the network and
    /// broadcast addresses when the range has more than two.
    fn usable(&self) -> (u32, u64) {
        let total = 1u64 << 32u32.saturating_sub(u32::from(self.prefix));
        let base = u32::from(self.network);
        if total > 2 {
            (base.saturating_add(1), total - 2)
        } else {
            (base, total)
        }
    }

    /// Whether `ip` is a usable address of the range.
    pub fn contains_usable(&self, ip: Ipv4Addr) -> bool {
        let (first, count) = self.usable();
        let ip = u64::from(u32::from(ip));
        ip >= u64::from(first) && ip < u64::from(first) + count
    }
}

/// The ranges the server allocates from (`--service-cluster-ip-range`,
/// `--service-node-port-range`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceRanges {
    /// ClusterIPs (IPv4 only); default `10.96.0.0/12`.
    pub cluster_ip: Ipv4Cidr,
    /// NodePorts; default `30000..=32767`.
    pub node_ports: RangeInclusive<u16>,
}

impl Default for ServiceRanges {
    fn default() -> Self {
        ServiceRanges {
            cluster_ip: Ipv4Cidr {
                network: Ipv4Addr::new(10, 96, 0, 0),
                prefix: 12,
            },
            node_ports: 30000..=32767,
        }
    }
}

/// A failed allocation, as kube-apiserver answers it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AllocationError {
    /// 422 `Invalid` (a requested IP or port is taken or out of range, or
    /// the IP family fields do not fit the cluster).
    #[error(transparent)]
    Invalid(#[from] InvalidError),
    /// 500 `InternalError` (`apierrors.NewInternalError`): a range is full.
    /// The Status message is `Internal error occurred: <this text>`.
    #[error("{0}")]
    Internal(String),
}

/// The allocated ClusterIPs and NodePorts, and the ranges they come from.
#[derive(Clone, Debug)]
pub struct ServiceAllocator {
    ranges: ServiceRanges,
    ips: BTreeSet<u32>,
    ports: BTreeSet<u16>,
    seed: Option<u64>,
}

const ALLOCATED_IP: &str = "provided IP is already allocated";
const ALLOCATED_PORT: &str = "provided port is already allocated";

/// The size of the bottom band kept for requested values.
fn static_band(size: u64, min: u64, max: u64, step: u64) -> u64 {
    if size <= min {
        0
    } else {
        (size / step).clamp(min, max)
    }
}

fn invalid(svc: &Service, errors: Vec<Error>) -> AllocationError {
    AllocationError::Invalid(InvalidError {
        kind: GroupKind {
            group: "",
            kind: "Service",
        },
        name: svc.metadata.name.clone().unwrap_or_default(),
        errors: ErrorList(errors),
    })
}

fn ipv4_of(ip: &str) -> Option<Ipv4Addr> {
    match ip.parse::<IpAddr>().ok()? {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => v6.to_ipv4_mapped(),
    }
}

fn family_of(ip: &str) -> &'static str {
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => IPV4,
        Ok(IpAddr::V6(_)) => IPV6,
        Err(_) => "unknown",
    }
}

fn policy(spec: &ServiceSpec) -> &str {
    spec.ip_family_policy.as_deref().unwrap_or_default()
}

fn families(spec: &ServiceSpec) -> &[String] {
    spec.ip_families.as_deref().unwrap_or_default()
}

fn policy_value(spec: &ServiceSpec) -> BadValue {
    spec.ip_family_policy
        .as_ref()
        .map_or(BadValue::Null, |p| BadValue::Str(p.clone()))
}

/// `isMatchingPreferDualStackClusterIPFields`.
fn matching_prefer_dual_stack(new: &ServiceSpec, old: &ServiceSpec) -> bool {
    new.ip_family_policy.is_some()
        && service_type(old) == service_type(new)
        && matches!(
            service_type(new),
            TYPE_CLUSTER_IP | TYPE_NODE_PORT | TYPE_LOAD_BALANCER
        )
        && policy(new) == PREFER_DUAL_STACK
        && old
            .ip_family_policy
            .as_deref()
            .is_none_or(|p| p == PREFER_DUAL_STACK)
        && cluster_ips(old) == cluster_ips(new)
        && families(old) == families(new)
}

/// `initIPFamilyFields` on a single-stack IPv4 cluster: `ipFamilyPolicy`
/// defaults (the stored one on update; `RequireDualStack` for a headless
/// service without selector; else `SingleStack`), `ipFamilies` follows the
/// cluster IPs or defaults to `[IPv4]`; families this cluster lacks are
/// refused.
pub fn init_ip_family_fields(
    svc: &mut Service,
    old: Option<&Service>,
) -> Result<(), AllocationError> {
    let snapshot = svc.clone();
    let spec = svc.spec.get_or_insert_with(ServiceSpec::default);
    if service_type(spec) == TYPE_EXTERNAL_NAME {
        return Ok(());
    }
    let old_spec = old.and_then(|o| o.spec.as_ref());
    if old_spec.is_some_and(|o| matching_prefer_dual_stack(spec, o)) {
        return Ok(());
    }
    let headless_selectorless = spec.cluster_ip.as_deref() == Some(CLUSTER_IP_NONE)
        && spec.selector.as_ref().is_none_or(|s| s.is_empty());
    if spec.ip_family_policy.is_none() {
        spec.ip_family_policy = match old_spec.and_then(|o| o.ip_family_policy.clone()) {
            Some(p) => Some(p),
            None if headless_selectorless => Some(REQUIRE_DUAL_STACK.to_owned()),
            None => Some(SINGLE_STACK.to_owned()),
        };
    }
    let pre = validate_cluster_ips_related_fields(spec);
    if !pre.is_empty() {
        return Err(invalid(&snapshot, pre.0));
    }
    let mut el = Vec::new();
    let policy_path = Path::new("spec").child("ipFamilyPolicy");
    if let Some(old_spec) = old_spec {
        if policy(spec) == SINGLE_STACK {
            if cluster_ips(old_spec) == cluster_ips(spec)
                && cluster_ips(spec).len() > 1
                && let Some(ips) = spec.cluster_ips.as_mut()
            {
                ips.truncate(1);
            }
            if families(old_spec) == families(spec)
                && families(spec).len() > 1
                && let Some(f) = spec.ip_families.as_mut()
            {
                f.truncate(1);
            }
        } else {
            let n = cluster_ips(spec).len();
            if n != 0 && n < cluster_ips(old_spec).len() {
                el.push(Error::invalid(
                    &policy_path,
                    policy_value(spec),
                    "must be 'SingleStack' to release the secondary cluster IP",
                ));
            }
            let n = families(spec).len();
            if n != 0 && n < families(old_spec).len() {
                el.push(Error::invalid(
                    &policy_path,
                    policy_value(spec),
                    "must be 'SingleStack' to release the secondary IP family",
                ));
            }
        }
    }
    if policy(spec) == SINGLE_STACK {
        if cluster_ips(spec).len() == 2 {
            el.push(Error::invalid(
                &policy_path,
                policy_value(spec),
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
            ));
        }
        if families(spec).len() == 2 {
            el.push(Error::invalid(
                &policy_path,
                policy_value(spec),
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
            ));
        }
    }
    let ips = cluster_ips(spec).to_vec();
    for (i, ip) in ips.iter().enumerate() {
        if ip == CLUSTER_IP_NONE {
            break;
        }
        if i >= families(spec).len() {
            let fam = family_of(ip);
            if fam == IPV4 {
                spec.ip_families
                    .get_or_insert_with(Vec::new)
                    .push(IPV4.to_owned());
            } else {
                el.push(Error::invalid(
                    &Path::new("spec").child("clusterIPs").index(i),
                    BadValue::Json(render::strings(&ips)),
                    format!("{fam} is not configured on this cluster"),
                ));
            }
        }
    }
    if !el.is_empty() {
        return Err(invalid(&snapshot, el));
    }
    if headless_selectorless {
        let fams = spec.ip_families.get_or_insert_with(Vec::new);
        if fams.is_empty() {
            fams.push(IPV4.to_owned());
        }
        if fams.len() < 2 && spec.ip_family_policy.as_deref() != Some(SINGLE_STACK) {
            let other = if fams[0] == IPV4 { IPV6 } else { IPV4 };
            fams.push(other.to_owned());
        }
        return Ok(());
    }
    if policy(spec) == REQUIRE_DUAL_STACK {
        el.push(Error::invalid(
            &policy_path,
            policy_value(spec),
            "this cluster is not configured for dual-stack services",
        ));
    }
    for (i, fam) in families(spec).iter().enumerate() {
        if fam != IPV4 {
            el.push(Error::invalid(
                &Path::new("spec").child("ipFamilies").index(i),
                fam.as_str(),
                "not configured on this cluster",
            ));
        }
    }
    if !el.is_empty() {
        return Err(invalid(&snapshot, el));
    }
    if families(spec).is_empty() {
        spec.ip_families = Some(vec![IPV4.to_owned()]);
    }
    Ok(())
}

/// `shouldAllocateNodePorts`.
fn should_allocate_node_ports(spec: &ServiceSpec) -> bool {
    match service_type(spec) {
        TYPE_NODE_PORT => true,
        TYPE_LOAD_BALANCER => spec.allocate_load_balancer_node_ports.unwrap_or(true),
        _ => false,
    }
}

impl ServiceAllocator {
    /// An allocator with nothing allocated.
    pub fn new(ranges: ServiceRanges) -> Self {
        ServiceAllocator {
            ranges,
            ips: BTreeSet::new(),
            ports: BTreeSet::new(),
            seed: None,
        }
    }

    /// An allocator holding what the stored `services` use.
    pub fn from_services<'a>(
        ranges: ServiceRanges,
        services: impl IntoIterator<Item = &'a Service>,
    ) -> Self {
        let mut a = Self::new(ranges);
        for svc in services {
            a.record(svc);
        }
        a
    }

    /// Picks new values from a position derived from `seed` instead of the
    /// lowest free one (still the first free value from there on).
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The configured ranges.
    pub fn ranges(&self) -> &ServiceRanges {
        &self.ranges
    }

    /// Whether `ip` is allocated.
    pub fn is_ip_allocated(&self, ip: Ipv4Addr) -> bool {
        self.ips.contains(&u32::from(ip))
    }

    /// Whether `port` is allocated.
    pub fn is_port_allocated(&self, port: u16) -> bool {
        self.ports.contains(&port)
    }

    fn service_values(spec: &ServiceSpec) -> (Vec<Ipv4Addr>, Vec<u16>) {
        let ips = if service_type(spec) == TYPE_EXTERNAL_NAME || is_headless(spec) {
            Vec::new()
        } else {
            cluster_ips(spec)
                .iter()
                .filter_map(|ip| ipv4_of(ip))
                .collect()
        };
        let mut ports: Vec<u16> = spec
            .ports
            .iter()
            .flatten()
            .filter_map(|p| p.node_port.and_then(|n| u16::try_from(n).ok()))
            .filter(|n| *n != 0)
            .collect();
        if needs_health_check(spec)
            && let Some(hc) = spec
                .health_check_node_port
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| *n != 0)
        {
            ports.push(hc);
        }
        (ips, ports)
    }

    /// Marks what a stored service uses as allocated (values outside the
    /// ranges are ignored).
    pub fn record(&mut self, svc: &Service) {
        let Some(spec) = &svc.spec else { return };
        let (ips, ports) = Self::service_values(spec);
        for ip in ips {
            if self.ranges.cluster_ip.contains_usable(ip) {
                self.ips.insert(u32::from(ip));
            }
        }
        for port in ports {
            if self.ranges.node_ports.contains(&port) {
                self.ports.insert(port);
            }
        }
    }

    /// Frees what a service used (after a delete, or to undo an allocation).
    pub fn release(&mut self, svc: &Service) {
        let Some(spec) = &svc.spec else { return };
        let (ips, ports) = Self::service_values(spec);
        for ip in ips {
            self.ips.remove(&u32::from(ip));
        }
        for port in ports {
            self.ports.remove(&port);
        }
    }

    /// The first free offset in `lo..hi`, starting from the seed's position.
    fn scan(&self, lo: u64, hi: u64, used: impl Fn(u64) -> bool) -> Option<u64> {
        if lo >= hi {
            return None;
        }
        let len = hi - lo;
        let start = self.seed.map_or(0, |s| s % len);
        (0..len).map(|i| lo + (start + i) % len).find(|o| !used(*o))
    }

    fn next_ip(&self) -> Option<Ipv4Addr> {
        let (first, count) = self.ranges.cluster_ip.usable();
        let band = static_band(count, 16, 256, 16);
        let used =
            |o: u64| u32::try_from(u64::from(first) + o).map_or(true, |ip| self.ips.contains(&ip));
        let o = self
            .scan(band, count, used)
            .or_else(|| self.scan(0, band, used))?;
        u32::try_from(u64::from(first) + o).ok().map(Ipv4Addr::from)
    }

    fn next_port(&self) -> Option<u16> {
        let lo = u64::from(*self.ranges.node_ports.start());
        let count = (u64::from(*self.ranges.node_ports.end()) + 1).saturating_sub(lo);
        let band = static_band(count, 16, 128, 32);
        let used = |o: u64| u16::try_from(lo + o).map_or(true, |p| self.ports.contains(&p));
        let o = self
            .scan(band, count, used)
            .or_else(|| self.scan(0, band, used))?;
        u16::try_from(lo + o).ok()
    }

    fn port_range_text(&self) -> String {
        format!(
            "{}-{}",
            self.ranges.node_ports.start(),
            self.ranges.node_ports.end()
        )
    }

    /// `Allocate(port)`: the error text when `port` cannot be taken.
    fn take_port(&mut self, port: i32) -> Result<(), String> {
        let p = u16::try_from(port)
            .ok()
            .filter(|p| self.ranges.node_ports.contains(p));
        let Some(p) = p else {
            return Err(format!(
                "provided port is not in the valid range. The range of valid ports is {}",
                self.port_range_text()
            ));
        };
        if !self.ports.insert(p) {
            return Err(ALLOCATED_PORT.to_owned());
        }
        Ok(())
    }

    fn take_next_port(&mut self, what: &str) -> Result<i32, AllocationError> {
        let p = self.next_port().ok_or_else(|| {
            AllocationError::Internal(format!("failed to allocate {what}: range is full"))
        })?;
        self.ports.insert(p);
        Ok(i32::from(p))
    }

    /// `allocClusterIPs` for the IPv4 family (the only one configured).
    fn alloc_cluster_ips(&mut self, svc: &mut Service) -> Result<(), AllocationError> {
        let snapshot = svc.clone();
        let spec = svc.spec.get_or_insert_with(ServiceSpec::default);
        if service_type(spec) == TYPE_EXTERNAL_NAME
            || cluster_ips(spec)
                .first()
                .is_some_and(|ip| ip == CLUSTER_IP_NONE)
        {
            return Ok(());
        }
        let fams = families(spec).to_vec();
        let ips = spec.cluster_ips.get_or_insert_with(Vec::new);
        while ips.len() < fams.len() {
            ips.push(String::new());
        }
        for (i, fam) in fams.iter().enumerate() {
            if fam != IPV4 {
                continue;
            }
            let requested = ips[i].clone();
            let ip = if requested.is_empty() {
                let ip = self.next_ip().ok_or_else(|| {
                    AllocationError::Internal(
                        "failed to allocate a serviceIP: range is full".to_owned(),
                    )
                })?;
                self.ips.insert(u32::from(ip));
                ip
            } else {
                let fail = |detail: String| {
                    invalid(
                        &snapshot,
                        vec![Error::invalid(
                            &Path::new("spec").child("clusterIPs"),
                            BadValue::Json(render::strings(ips)),
                            format!("failed to allocate IP {requested}: {detail}"),
                        )],
                    )
                };
                let Some(ip) = ipv4_of(&requested) else {
                    return Err(AllocationError::Internal(format!(
                        "failed to parse service IP {}",
                        crate::field::go_quote(&requested)
                    )));
                };
                if !self.ranges.cluster_ip.contains_usable(ip) {
                    return Err(fail(format!(
                        "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {}",
                        self.ranges.cluster_ip
                    )));
                }
                if !self.ips.insert(u32::from(ip)) {
                    return Err(fail(ALLOCATED_IP.to_owned()));
                }
                ip
            };
            ips[i] = ip.to_string();
            if i == 0 {
                spec.cluster_ip = Some(ip.to_string());
            }
        }
        Ok(())
    }

    /// `initNodePorts` and the health-check node port of a new service.
    fn alloc_node_ports(&mut self, svc: &mut Service) -> Result<(), AllocationError> {
        let snapshot = svc.clone();
        let spec = svc.spec.get_or_insert_with(ServiceSpec::default);
        if needs_node_port(spec) {
            let should = should_allocate_node_ports(spec);
            let all: Vec<(i32, i32)> = spec
                .ports
                .iter()
                .flatten()
                .map(|p| (p.port, p.node_port.unwrap_or(0)))
                .collect();
            let mut by_port: Vec<(i32, i32)> = Vec::new();
            for (i, p) in spec.ports.iter_mut().flatten().enumerate() {
                let np = p.node_port.unwrap_or(0);
                if np == 0 && !should {
                    continue;
                }
                let path = Path::new("spec").child("ports").index(i).child("nodePort");
                let allocated = by_port
                    .iter()
                    .find(|(port, _)| *port == p.port)
                    .map(|(_, n)| *n);
                match allocated {
                    None => {
                        let requested = all
                            .iter()
                            .find(|(port, n)| *port == p.port && *n != 0)
                            .map(|(_, n)| *n);
                        let n = match requested {
                            Some(n) => {
                                self.take_port(n).map_err(|d| {
                                    invalid(&snapshot, vec![Error::invalid(&path, n, d)])
                                })?;
                                n
                            }
                            None => self.take_next_port("a nodePort")?,
                        };
                        p.node_port = Some(n);
                        by_port.push((p.port, n));
                    }
                    Some(n) if n != np => {
                        if np == 0 {
                            p.node_port = Some(n);
                        } else {
                            self.take_port(np).map_err(|d| {
                                invalid(&snapshot, vec![Error::invalid(&path, np, d)])
                            })?;
                        }
                    }
                    Some(_) => {}
                }
            }
        }
        if needs_health_check(spec) {
            self.alloc_health_check_node_port(spec)?;
        }
        Ok(())
    }

    fn alloc_health_check_node_port(
        &mut self,
        spec: &mut ServiceSpec,
    ) -> Result<(), AllocationError> {
        let hc = spec.health_check_node_port.unwrap_or(0);
        if hc != 0 {
            self.take_port(hc).map_err(|e| {
                AllocationError::Internal(format!(
                    "failed to allocate requested HealthCheck NodePort {hc}: {e}"
                ))
            })?;
        } else {
            spec.health_check_node_port = Some(self.take_next_port("a HealthCheck NodePort 0")?);
        }
        Ok(())
    }

    /// Allocation for a create (`allocateCreate`): defaults the service,
    /// normalizes `clusterIP(s)`, fills the IP family fields, takes a
    /// ClusterIP (the requested one, which must be in range and free, or the
    /// next free one; none for ExternalName and headless services) and the
    /// node ports of NodePort and LoadBalancer services. All or nothing: on
    /// error the allocator is unchanged.
    pub fn allocate_service(&mut self, svc: &mut Service) -> Result<(), AllocationError> {
        default_service(svc);
        normalize_cluster_ips(svc, None);
        init_ip_family_fields(svc, None)?;
        let mut next = self.clone();
        next.alloc_cluster_ips(svc)?;
        next.alloc_node_ports(svc)?;
        *self = next;
        Ok(())
    }

    /// Allocation for an update of the main resource (`allocateUpdate`):
    /// values the client omitted are kept (`patchAllocatedValues`), a
    /// change from ExternalName takes a ClusterIP, a change to ExternalName
    /// frees it, node ports are kept, taken or freed by type and port, and
    /// the health-check node port follows `externalTrafficPolicy`. All or
    /// nothing.
    pub fn allocate_service_update(
        &mut self,
        new: &mut Service,
        old: &Service,
    ) -> Result<(), AllocationError> {
        default_service(new);
        patch_allocated_values(new, old);
        normalize_cluster_ips(new, Some(old));
        init_ip_family_fields(new, Some(old))?;
        let mut next = self.clone();
        next.update_cluster_ips(new, old)?;
        next.update_node_ports(new, old)?;
        *self = next;
        Ok(())
    }

    fn update_cluster_ips(
        &mut self,
        new: &mut Service,
        old: &Service,
    ) -> Result<(), AllocationError> {
        let old_spec = old.spec.clone().unwrap_or_default();
        let new_spec = new.spec.clone().unwrap_or_default();
        if matching_prefer_dual_stack(&new_spec, &old_spec) {
            return Ok(());
        }
        if service_type(&old_spec) == TYPE_EXTERNAL_NAME
            && service_type(&new_spec) != TYPE_EXTERNAL_NAME
        {
            return self.alloc_cluster_ips(new);
        }
        if cluster_ips(&old_spec)
            .first()
            .is_some_and(|ip| ip == CLUSTER_IP_NONE)
        {
            return Ok(());
        }
        if service_type(&new_spec) == TYPE_EXTERNAL_NAME {
            for ip in cluster_ips(&old_spec).iter().filter_map(|ip| ipv4_of(ip)) {
                self.ips.remove(&u32::from(ip));
            }
            return Ok(());
        }
        // Single-stack cluster: no dual-stack upgrade; a downgrade frees the
        // secondary IP.
        if families(&old_spec).len() == 2
            && families(&new_spec).len() == 1
            && let Some(ip) = cluster_ips(&old_spec).get(1).and_then(|ip| ipv4_of(ip))
        {
            self.ips.remove(&u32::from(ip));
        }
        Ok(())
    }

    fn update_node_ports(
        &mut self,
        new: &mut Service,
        old: &Service,
    ) -> Result<(), AllocationError> {
        let snapshot = new.clone();
        let old_spec = old.spec.clone().unwrap_or_default();
        let spec = new.spec.get_or_insert_with(ServiceSpec::default);
        let old_ports: Vec<i32> = old_spec
            .ports
            .iter()
            .flatten()
            .filter_map(|p| p.node_port.filter(|n| *n != 0))
            .collect();
        let free = |a: &mut Self, port: i32| {
            if let Ok(p) = u16::try_from(port) {
                a.ports.remove(&p);
            }
        };
        if needs_node_port(&old_spec)
            && matches!(service_type(spec), TYPE_EXTERNAL_NAME | TYPE_CLUSTER_IP)
        {
            for p in &old_ports {
                free(self, *p);
            }
        }
        if needs_node_port(spec) {
            let should = should_allocate_node_ports(spec);
            let mut taken_now: BTreeSet<i32> = BTreeSet::new();
            let mut seen: Vec<(String, i32)> = Vec::new();
            for (i, p) in spec.ports.iter_mut().flatten().enumerate() {
                let np = p.node_port.unwrap_or(0);
                if np == 0 && !should {
                    continue;
                }
                let n = if np != 0 {
                    if !old_ports.contains(&np) && !taken_now.contains(&np) {
                        let path = Path::new("spec").child("ports").index(i).child("nodePort");
                        self.take_port(np)
                            .map_err(|d| invalid(&snapshot, vec![Error::invalid(&path, np, d)]))?;
                        taken_now.insert(np);
                    }
                    np
                } else {
                    let n = self.take_next_port("a nodePort")?;
                    p.node_port = Some(n);
                    n
                };
                let key = (p.protocol.clone().unwrap_or_default(), n);
                if seen.contains(&key) {
                    return Err(AllocationError::Internal(format!(
                        "duplicate nodePort: {{{} {}}}",
                        key.0, key.1
                    )));
                }
                seen.push(key);
            }
            let new_ports: BTreeSet<i32> = spec
                .ports
                .iter()
                .flatten()
                .filter_map(|p| p.node_port.filter(|n| *n != 0))
                .collect();
            for p in &old_ports {
                if !new_ports.contains(p) {
                    free(self, *p);
                }
            }
        }
        let needed = needs_health_check(&old_spec);
        let needs = needs_health_check(spec);
        if !needed && needs {
            self.alloc_health_check_node_port(spec)?;
        } else if needed && !needs {
            free(self, old_spec.health_check_node_port.unwrap_or(0));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::ServicePort;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use proptest::prelude::*;

    fn svc(name: &str, ty: &str, ports: &[(i32, i32)]) -> Service {
        Service {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            spec: Some(ServiceSpec {
                type_: Some(ty.into()),
                selector: Some(BTreeMap::from([("app".to_owned(), name.to_owned())])),
                ports: Some(
                    ports
                        .iter()
                        .enumerate()
                        .map(|(i, (port, node_port))| ServicePort {
                            name: Some(format!("p{i}")),
                            port: *port,
                            node_port: (*node_port != 0).then_some(*node_port),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
            status: None,
        }
    }

    fn with_cluster_ip(mut s: Service, ip: &str) -> Service {
        if let Some(spec) = s.spec.as_mut() {
            spec.cluster_ip = Some(ip.into());
        }
        s
    }

    fn spec_of(s: &Service) -> ServiceSpec {
        s.spec.clone().unwrap_or_default()
    }

    fn node_ports_of(s: &Service) -> Vec<i32> {
        spec_of(s)
            .ports
            .unwrap_or_default()
            .iter()
            .map(|p| p.node_port.unwrap_or(0))
            .collect()
    }

    fn message(e: AllocationError) -> String {
        match e {
            AllocationError::Invalid(i) => i.message(),
            AllocationError::Internal(m) => format!("Internal error occurred: {m}"),
        }
    }

    #[test]
    fn cluster_ip_from_the_dynamic_band_and_family_fields() {
        let mut alloc = ServiceAllocator::new(ServiceRanges::default());
        let mut a = svc("a", "", &[(80, 0)]);
        alloc.allocate_service(&mut a).expect("allocates");
        let s = spec_of(&a);
        assert_eq!(s.cluster_ip.as_deref(), Some("10.96.1.1"));
        assert_eq!(s.cluster_ips, Some(vec!["10.96.1.1".to_owned()]));
        assert_eq!(s.ip_families, Some(vec!["IPv4".to_owned()]));
        assert_eq!(s.ip_family_policy.as_deref(), Some("SingleStack"));
        assert_eq!(s.type_.as_deref(), Some("ClusterIP"));
        let mut b = svc("b", "", &[(80, 0)]);
        alloc.allocate_service(&mut b).expect("allocates");
        assert_eq!(spec_of(&b).cluster_ip.as_deref(), Some("10.96.1.2"));
        assert!(alloc.is_ip_allocated(Ipv4Addr::new(10, 96, 1, 1)));
        // A rebuilt allocator sees the same state.
        let rebuilt = ServiceAllocator::from_services(ServiceRanges::default(), [&a, &b]);
        assert!(rebuilt.is_ip_allocated(Ipv4Addr::new(10, 96, 1, 2)));
        assert_eq!(rebuilt.next_ip(), Some(Ipv4Addr::new(10, 96, 1, 3)));
    }

    #[test]
    fn requested_cluster_ips() {
        let mut alloc = ServiceAllocator::new(ServiceRanges::default());
        let mut a = with_cluster_ip(svc("a", "", &[(80, 0)]), "10.96.0.10");
        alloc
            .allocate_service(&mut a)
            .expect("in the static band and free");
        assert_eq!(spec_of(&a).cluster_ips, Some(vec!["10.96.0.10".to_owned()]));

        let mut b = with_cluster_ip(svc("b", "", &[(80, 0)]), "10.96.0.10");
        assert_eq!(
            message(alloc.allocate_service(&mut b).expect_err("taken")),
            r#"Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated"#
        );
        let mut c = with_cluster_ip(svc("c", "", &[(80, 0)]), "192.168.1.1");
        assert_eq!(
            message(alloc.allocate_service(&mut c).expect_err("out of range")),
            r#"Service "c" is invalid: spec.clusterIPs: Invalid value: ["192.168.1.1"]: failed to allocate IP 192.168.1.1: the provided IP (192.168.1.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12"#
        );
        let mut d = with_cluster_ip(svc("d", "", &[(80, 0)]), "10.96.0.0");
        assert!(
            message(alloc.allocate_service(&mut d).expect_err("network address"))
                .contains("is not in the valid range")
        );
        let mut v6 = with_cluster_ip(svc("v6", "", &[(80, 0)]), "2001:db8::1");
        assert_eq!(
            message(alloc.allocate_service(&mut v6).expect_err("no IPv6")),
            r#"Service "v6" is invalid: spec.clusterIPs[0]: Invalid value: ["2001:db8::1"]: IPv6 is not configured on this cluster"#
        );
        let mut dual = svc("dual", "", &[(80, 0)]);
        if let Some(s) = dual.spec.as_mut() {
            s.ip_family_policy = Some("RequireDualStack".into());
        }
        assert_eq!(
            message(alloc.allocate_service(&mut dual).expect_err("single stack")),
            r#"Service "dual" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services"#
        );
        let mut fam6 = svc("fam6", "", &[(80, 0)]);
        if let Some(s) = fam6.spec.as_mut() {
            s.ip_families = Some(vec!["IPv6".into()]);
        }
        assert_eq!(
            message(alloc.allocate_service(&mut fam6).expect_err("no IPv6")),
            r#"Service "fam6" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster"#
        );
    }

    #[test]
    fn headless_external_name_and_full_range() {
        let mut alloc = ServiceAllocator::new(ServiceRanges {
            cluster_ip: "192.168.0.0/30".parse().expect("cidr"),
            node_ports: 30000..=30001,
        });
        let mut headless = with_cluster_ip(svc("h", "", &[(80, 0)]), "None");
        alloc.allocate_service(&mut headless).expect("no IP needed");
        let s = spec_of(&headless);
        assert_eq!(s.cluster_ips, Some(vec!["None".to_owned()]));
        assert_eq!(s.ip_families, Some(vec!["IPv4".to_owned()]));
        let mut selectorless = with_cluster_ip(svc("sl", "", &[]), "None");
        if let Some(s) = selectorless.spec.as_mut() {
            s.selector = None;
        }
        alloc
            .allocate_service(&mut selectorless)
            .expect("no IP needed");
        let s = spec_of(&selectorless);
        assert_eq!(s.ip_family_policy.as_deref(), Some("RequireDualStack"));
        assert_eq!(
            s.ip_families,
            Some(vec!["IPv4".to_owned(), "IPv6".to_owned()])
        );

        let mut en = svc("en", "ExternalName", &[]);
        alloc.allocate_service(&mut en).expect("no IP needed");
        assert_eq!(spec_of(&en).cluster_ips, None);
        assert_eq!(spec_of(&en).ip_families, None);

        for name in ["a", "b"] {
            let mut s = svc(name, "", &[(80, 0)]);
            alloc
                .allocate_service(&mut s)
                .expect("two usable addresses");
        }
        let mut full = svc("c", "", &[(80, 0)]);
        assert_eq!(
            message(alloc.allocate_service(&mut full).expect_err("full")),
            "Internal error occurred: failed to allocate a serviceIP: range is full"
        );
    }

    #[test]
    fn node_ports() {
        let mut alloc = ServiceAllocator::new(ServiceRanges::default());
        let mut a = svc("a", "NodePort", &[(80, 0), (443, 0)]);
        alloc.allocate_service(&mut a).expect("allocates");
        assert_eq!(node_ports_of(&a), vec![30086, 30087]);
        assert_eq!(
            spec_of(&a).external_traffic_policy.as_deref(),
            Some("Cluster")
        );

        let mut b = svc("b", "NodePort", &[(80, 30080)]);
        alloc.allocate_service(&mut b).expect("requested, free");
        assert_eq!(node_ports_of(&b), vec![30080]);
        let mut c = svc("c", "NodePort", &[(80, 30080)]);
        assert_eq!(
            message(alloc.allocate_service(&mut c).expect_err("taken")),
            r#"Service "c" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"#
        );
        let mut d = svc("d", "NodePort", &[(80, 80)]);
        assert_eq!(
            message(alloc.allocate_service(&mut d).expect_err("out of range")),
            r#"Service "d" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"#
        );
        // The failed creates took nothing (not even their ClusterIP).
        let mut e = svc("e", "", &[(80, 0)]);
        alloc.allocate_service(&mut e).expect("allocates");
        assert_eq!(spec_of(&e).cluster_ip.as_deref(), Some("10.96.1.3"));

        // TCP and UDP on the same port share one node port.
        let mut dns = svc("dns", "NodePort", &[(53, 0), (53, 0)]);
        if let Some(p) = dns.spec.as_mut().and_then(|s| s.ports.as_mut()) {
            p[1].protocol = Some("UDP".into());
        }
        alloc.allocate_service(&mut dns).expect("allocates");
        assert_eq!(node_ports_of(&dns), vec![30088, 30088]);

        // ClusterIP services get none; LoadBalancers may opt out.
        let mut plain = svc("plain", "", &[(80, 0)]);
        alloc.allocate_service(&mut plain).expect("allocates");
        assert_eq!(node_ports_of(&plain), vec![0]);
        let mut lb = svc("lb", "LoadBalancer", &[(80, 0)]);
        if let Some(s) = lb.spec.as_mut() {
            s.allocate_load_balancer_node_ports = Some(false);
            s.external_traffic_policy = Some("Local".into());
        }
        alloc.allocate_service(&mut lb).expect("allocates");
        assert_eq!(node_ports_of(&lb), vec![0]);
        assert_eq!(spec_of(&lb).health_check_node_port, Some(30089));
    }

    #[test]
    fn seeded_picks_are_deterministic() {
        let pick = |seed| {
            let mut alloc = ServiceAllocator::new(ServiceRanges::default()).with_seed(seed);
            let mut s = svc("a", "NodePort", &[(80, 0)]);
            alloc.allocate_service(&mut s).expect("allocates");
            (spec_of(&s).cluster_ip, node_ports_of(&s))
        };
        assert_eq!(pick(7), pick(7));
        assert_ne!(pick(7), pick(8));
        assert_ne!(pick(7).0.as_deref(), Some("10.96.1.1"));
    }

    #[test]
    fn updates_keep_release_and_allocate() {
        let mut alloc = ServiceAllocator::new(ServiceRanges::default());
        let mut np = svc("a", "NodePort", &[(80, 0)]);
        alloc.allocate_service(&mut np).expect("allocates");
        let ip = spec_of(&np).cluster_ip;

        // Re-applying the manifest without the allocated values keeps them.
        let mut again = svc("a", "NodePort", &[(80, 0)]);
        alloc
            .allocate_service_update(&mut again, &np)
            .expect("keeps");
        assert_eq!(spec_of(&again).cluster_ip, ip);
        assert_eq!(node_ports_of(&again), node_ports_of(&np));

        // NodePort → ClusterIP frees the node port.
        let mut cip = svc("a", "ClusterIP", &[(80, 0)]);
        alloc
            .allocate_service_update(&mut cip, &np)
            .expect("updates");
        assert!(!alloc.is_port_allocated(30086));
        assert_eq!(spec_of(&cip).cluster_ip, ip);

        // ClusterIP → NodePort with a requested port.
        let mut np2 = svc("a", "NodePort", &[(80, 30500)]);
        alloc
            .allocate_service_update(&mut np2, &cip)
            .expect("updates");
        assert!(alloc.is_port_allocated(30500));

        // Changing the requested port frees the old one.
        let mut np3 = svc("a", "NodePort", &[(80, 30501)]);
        alloc
            .allocate_service_update(&mut np3, &np2)
            .expect("updates");
        assert!(!alloc.is_port_allocated(30500));
        assert!(alloc.is_port_allocated(30501));

        // → ExternalName frees the IP and the port; back → a new IP.
        let mut en = svc("a", "ExternalName", &[]);
        if let Some(s) = en.spec.as_mut() {
            s.external_name = Some("example.com".into());
        }
        alloc
            .allocate_service_update(&mut en, &np3)
            .expect("updates");
        assert!(!alloc.is_ip_allocated(Ipv4Addr::new(10, 96, 1, 1)));
        assert!(!alloc.is_port_allocated(30501));
        let mut back = svc("a", "ClusterIP", &[(80, 0)]);
        alloc
            .allocate_service_update(&mut back, &en)
            .expect("updates");
        assert_eq!(spec_of(&back).cluster_ip.as_deref(), Some("10.96.1.1"));
        assert_eq!(spec_of(&back).ip_families, Some(vec!["IPv4".to_owned()]));

        // A port another service holds cannot be taken on update.
        let mut other = svc("b", "NodePort", &[(80, 30600)]);
        alloc.allocate_service(&mut other).expect("allocates");
        let mut grab = svc("a", "NodePort", &[(80, 30600)]);
        assert_eq!(
            message(
                alloc
                    .allocate_service_update(&mut grab, &back)
                    .expect_err("taken")
            ),
            r#"Service "a" is invalid: spec.ports[0].nodePort: Invalid value: 30600: provided port is already allocated"#
        );
    }

    #[derive(Clone, Debug)]
    enum Op {
        Create {
            ip: Option<u8>,
            node_port: Option<u16>,
            node_port_type: bool,
        },
        Delete(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (proptest::option::of(0u8..20), proptest::option::of(29995u16..30030), any::<bool>())
                .prop_map(|(ip, node_port, node_port_type)| Op::Create { ip, node_port, node_port_type }),
            1 => (0usize..64).prop_map(Op::Delete),
        ]
    }

    proptest! {
        /// Allocation never hands out an IP or port a live service holds,
        /// and a rebuilt allocator agrees with the incremental one.
        #[test]
        fn never_hands_out_an_allocated_value(ops in proptest::collection::vec(op(), 1..60), seed in proptest::option::of(any::<u64>())) {
            let ranges = ServiceRanges {
                cluster_ip: "10.0.0.0/28".parse().expect("cidr"),
                node_ports: 30000..=30020,
            };
            let mut alloc = ServiceAllocator::new(ranges.clone());
            if let Some(seed) = seed {
                alloc = alloc.with_seed(seed);
            }
            let mut live: Vec<Service> = Vec::new();
            for (n, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Create { ip, node_port, node_port_type } => {
                        let ty = if node_port_type { "NodePort" } else { "ClusterIP" };
                        let np = if node_port_type { node_port.map_or(0, i32::from) } else { 0 };
                        let mut s = svc(&format!("s{n}"), ty, &[(80, np)]);
                        if let Some(ip) = ip {
                            s = with_cluster_ip(s, &format!("10.0.0.{ip}"));
                        }
                        if alloc.allocate_service(&mut s).is_ok() {
                            let spec = spec_of(&s);
                            let new_ip = spec.cluster_ip.clone();
                            let new_ports: Vec<i32> = node_ports_of(&s).into_iter().filter(|p| *p != 0).collect();
                            for other in &live {
                                let o = spec_of(other);
                                prop_assert_ne!(&o.cluster_ip, &new_ip);
                                for p in node_ports_of(other).into_iter().filter(|p| *p != 0) {
                                    prop_assert!(!new_ports.contains(&p));
                                }
                            }
                            let ip: Ipv4Addr = new_ip.as_deref().unwrap_or_default().parse().expect("an IPv4");
                            prop_assert!(ranges.cluster_ip.contains_usable(ip));
                            for p in &new_ports {
                                prop_assert!(u16::try_from(*p).is_ok_and(|p| ranges.node_ports.contains(&p)));
                            }
                            live.push(s);
                        }
                    }
                    Op::Delete(i) => {
                        if !live.is_empty() {
                            let s = live.remove(i % live.len());
                            alloc.release(&s);
                        }
                    }
                }
                let rebuilt = ServiceAllocator::from_services(ranges.clone(), &live);
                prop_assert_eq!(&rebuilt.ips, &alloc.ips);
                prop_assert_eq!(&rebuilt.ports, &alloc.ports);
            }
        }
    }
}

/// The whole write path the API server runs: allocation, then the strategy.
#[cfg(test)]
mod admission_tests {
    use super::*;
    use crate::absent::Absent;
    use crate::core::service::ServiceStrategy;
    use crate::strategy::{Context, admit_create, admit_update};

    fn parse(yaml: &str) -> Service {
        serde_saphyr::from_str(yaml).expect("a Service")
    }

    fn ctx(absent: &Absent) -> Context<'_> {
        Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent,
        }
    }

    const MANIFESTS: &[&str] = &[
        "metadata: {name: web, namespace: default}\nspec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}",
        "metadata: {name: np, namespace: default}\nspec: {type: NodePort, selector: {app: web}, ports: [{name: http, port: 80}, {name: https, port: 443, nodePort: 30443}]}",
        "metadata: {name: lb, namespace: default}\nspec: {type: LoadBalancer, externalTrafficPolicy: Local, selector: {app: web}, ports: [{port: 80}]}",
        "metadata: {name: db, namespace: default}\nspec: {clusterIP: None, selector: {app: db}, ports: [{port: 5432}]}",
        "metadata: {name: ext, namespace: default}\nspec: {clusterIP: None}",
        "metadata: {name: alias, namespace: default}\nspec: {type: ExternalName, externalName: db.example.com}",
        "metadata: {name: fixed, namespace: default}\nspec: {clusterIP: 10.96.0.10, ports: [{port: 53, protocol: UDP, name: dns}, {port: 53, name: dns-tcp}]}",
    ];

    #[test]
    fn allocated_services_pass_validation_and_reapply_cleanly() {
        let absent = Absent::default();
        let mut alloc = ServiceAllocator::new(ServiceRanges::default());
        for manifest in MANIFESTS {
            let mut svc = parse(manifest);
            alloc.allocate_service(&mut svc).expect("allocates");
            admit_create::<ServiceStrategy>(&mut svc, &ctx(&absent))
                .unwrap_or_else(|e| panic!("{manifest}: {e}"));
            assert_eq!(
                serde_json::to_value(&svc.status).expect("json"),
                serde_json::json!({"loadBalancer": {}}),
                "{manifest}"
            );
            svc.metadata.resource_version = Some("1".into());
            // `kubectl apply` of the same manifest again.
            let mut again = parse(manifest);
            again.metadata.resource_version = Some("1".into());
            alloc
                .allocate_service_update(&mut again, &svc)
                .unwrap_or_else(|e| panic!("{manifest}: {e}"));
            admit_update::<ServiceStrategy>(&mut again, &svc, &ctx(&absent))
                .unwrap_or_else(|e| panic!("{manifest}: {e}"));
            assert_eq!(again.spec, svc.spec, "{manifest}");
        }
    }

    #[test]
    fn type_change_to_cluster_ip_drops_node_ports() {
        let absent = Absent::default();
        let mut alloc = ServiceAllocator::new(ServiceRanges::default());
        let mut svc = parse(MANIFESTS[1]);
        alloc.allocate_service(&mut svc).expect("allocates");
        admit_create::<ServiceStrategy>(&mut svc, &ctx(&absent)).expect("valid");
        svc.metadata.resource_version = Some("1".into());
        let mut new = svc.clone();
        if let Some(s) = new.spec.as_mut() {
            s.type_ = Some("ClusterIP".into());
        }
        alloc
            .allocate_service_update(&mut new, &svc)
            .expect("updates");
        admit_update::<ServiceStrategy>(&mut new, &svc, &ctx(&absent)).expect("valid");
        let spec = new.spec.expect("spec");
        assert!(spec.ports.iter().flatten().all(|p| p.node_port.is_none()));
        assert_eq!(spec.external_traffic_policy, None);
        assert!(!alloc.is_port_allocated(30443));
    }
}
