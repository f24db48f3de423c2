//! EndpointSlice (`pkg/apis/discovery/validation`,
//! `pkg/registry/discovery/endpointslice/strategy.go`): address type fixed
//! after create, addresses of that type, at most 1000 endpoints of at most
//! 100 addresses, unique port names, known protocols, zone and node hints;
//! the generation moves when anything but metadata (or the labels) changes.

use std::collections::BTreeSet;
use std::net::IpAddr;

use k8s_openapi::api::discovery::v1::{Endpoint, EndpointHints, EndpointPort, EndpointSlice};

use crate::core::endpoints::{SUPPORTED_PORT_PROTOCOLS, validate_non_special_ip};
use crate::core::validation::strings::{invalid_each, validate_dns1123_label};
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, FIELD_IMMUTABLE, NameRule};
use crate::strategy::{Context, Strategy, next_generation};

const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
const MAX_TOPOLOGY_LABELS: usize = 16;
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20000;
const MAX_ENDPOINTS: usize = 1000;
const MAX_HINTS: usize = 8;

/// `IsFullyQualifiedDomainName`.
pub fn validate_fqdn(path: &Path, name: &str) -> ErrorList {
    let mut errs = ErrorList::new();
    if name.is_empty() {
        errs.push(Error::required(path, ""));
        return errs;
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let msgs = formats::is_dns1123_subdomain(name);
    if !msgs.is_empty() {
        errs.push(Error::invalid(path, name, msgs.join(",")));
        return errs;
    }
    if name.split('.').count() < 2 {
        errs.push(Error::invalid(
            path,
            name,
            "should be a domain with at least two segments separated by dots",
        ));
        return errs;
    }
    for label in name.split('.') {
        let msgs = formats::is_dns1123_label(label);
        if !msgs.is_empty() {
            errs.push(Error::invalid(path, label, msgs.join(",")));
            return errs;
        }
    }
    errs
}

fn validate_address(addr_type: &str, address: &str, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    match addr_type {
        "IPv4" | "IPv6" => {
            let parsed = address.parse::<IpAddr>();
            let ok = match (addr_type, &parsed) {
                ("IPv4", Ok(IpAddr::V4(_))) => true,
                ("IPv4", Ok(IpAddr::V6(v6))) => v6.to_ipv4_mapped().is_some(),
                ("IPv6", Ok(IpAddr::V6(v6))) => v6.to_ipv4_mapped().is_none(),
                _ => false,
            };
            if !ok {
                errs.push(Error::invalid(
                    path,
                    address,
                    format!("must be a valid {addr_type} address"),
                ));
            }
            errs.append(validate_non_special_ip(address, path));
        }
        "FQDN" => errs.append(validate_fqdn(path, address)),
        _ => {}
    }
    errs
}

fn validate_hints(hints: &EndpointHints, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let zones = hints.for_zones.as_deref().unwrap_or_default();
    let zones_path = path.child("forZones");
    if zones.len() > MAX_HINTS {
        errs.push(Error::too_many(&zones_path, zones.len(), MAX_HINTS));
        return errs;
    }
    let mut seen = BTreeSet::new();
    for (i, zone) in zones.iter().enumerate() {
        let p = zones_path.index(i).child("name");
        if !seen.insert(zone.name.as_str()) {
            errs.push(Error::duplicate(&p, zone.name.as_str()));
        }
        errs.append(invalid_each(
            &p,
            &zone.name,
            formats::is_label_value(&zone.name),
        ));
    }
    let nodes = hints.for_nodes.as_deref().unwrap_or_default();
    let nodes_path = path.child("forNodes");
    if nodes.len() > MAX_HINTS {
        errs.push(Error::too_many(&nodes_path, nodes.len(), MAX_HINTS));
        return errs;
    }
    let mut seen = BTreeSet::new();
    for (i, node) in nodes.iter().enumerate() {
        let p = nodes_path.index(i).child("name");
        if !seen.insert(node.name.as_str()) {
            errs.push(Error::duplicate(&p, node.name.as_str()));
        }
        errs.append(invalid_each(
            &p,
            &node.name,
            formats::is_dns1123_subdomain(&node.name),
        ));
    }
    errs
}

fn validate_endpoints(endpoints: &[Endpoint], addr_type: &str, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if endpoints.len() > MAX_ENDPOINTS {
        errs.push(Error::too_many(path, endpoints.len(), MAX_ENDPOINTS));
        return errs;
    }
    for (i, ep) in endpoints.iter().enumerate() {
        let p = path.index(i);
        let addr_path = p.child("addresses");
        if ep.addresses.is_empty() {
            errs.push(Error::required(
                &addr_path,
                "must contain at least 1 address",
            ));
        } else if ep.addresses.len() > MAX_ADDRESSES {
            errs.push(Error::too_many(
                &addr_path,
                ep.addresses.len(),
                MAX_ADDRESSES,
            ));
        }
        for (j, a) in ep.addresses.iter().enumerate() {
            errs.append(validate_address(addr_type, a, &addr_path.index(j)));
        }
        if let Some(node) = &ep.node_name {
            errs.append(invalid_each(
                &p.child("nodeName"),
                node,
                formats::is_dns1123_subdomain(node),
            ));
        }
        let topo_path = p.child("deprecatedTopology");
        if let Some(topo) = &ep.deprecated_topology {
            if topo.len() > MAX_TOPOLOGY_LABELS {
                errs.push(Error::too_many(&topo_path, topo.len(), MAX_TOPOLOGY_LABELS));
            }
            errs.append(meta::validate_labels(topo, &topo_path));
        }
        if let Some(h) = &ep.hostname {
            errs.append(validate_dns1123_label(&p.child("hostname"), h));
        }
        if let Some(hints) = &ep.hints {
            errs.append(validate_hints(hints, &p.child("hints")));
        }
    }
    errs
}

fn validate_ports(ports: &[EndpointPort], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if ports.len() > MAX_PORTS {
        errs.push(Error::too_many(path, ports.len(), MAX_PORTS));
        return errs;
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let p = path.index(i);
        let name = port.name.as_deref().unwrap_or_default();
        if !name.is_empty() {
            errs.append(validate_dns1123_label(&p.child("name"), name));
        }
        if !names.insert(name) {
            errs.push(Error::duplicate(&p.child("name"), name));
        }
        match port.protocol.as_deref() {
            None => errs.push(Error::required(&p.child("protocol"), "")),
            Some(proto) if !SUPPORTED_PORT_PROTOCOLS.contains(&proto) => {
                errs.push(Error::not_supported(
                    &p.child("protocol"),
                    proto,
                    SUPPORTED_PORT_PROTOCOLS,
                ));
            }
            Some(_) => {}
        }
        if let Some(app) = &port.app_protocol {
            errs.append(formats::validate_qualified_name(
                &p.child("appProtocol"),
                app,
            ));
        }
    }
    errs
}

/// `ValidateEndpointSlice`.
pub fn validate_endpoint_slice(slice: &EndpointSlice) -> ErrorList {
    let mut errs = meta::validate_object_meta(&slice.metadata, true, NameRule::Subdomain);
    let addr_type = slice.address_type.as_str();
    let type_path = Path::new("addressType");
    if addr_type.is_empty() {
        errs.push(Error::required(&type_path, ""));
    } else if !ADDRESS_TYPES.contains(&addr_type) {
        errs.push(Error::not_supported(&type_path, addr_type, ADDRESS_TYPES));
    }
    errs.append(validate_endpoints(
        slice.endpoints.as_deref().unwrap_or_default(),
        addr_type,
        &Path::new("endpoints"),
    ));
    errs.append(validate_ports(
        slice.ports.as_deref().unwrap_or_default(),
        &Path::new("ports"),
    ));
    errs
}

/// `ValidateEndpointSliceUpdate`: the create rules, `addressType` immutable.
pub fn validate_endpoint_slice_update(new: &EndpointSlice, old: &EndpointSlice) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_endpoint_slice(new));
    if new.address_type != old.address_type {
        errs.push(
            Error::invalid(
                &Path::new("addressType"),
                BadValue::Str(new.address_type.clone()),
                FIELD_IMMUTABLE,
            )
            .with_origin("immutable"),
        );
    }
    errs
}

/// `SetDefaults_EndpointPort` (discovery/v1): name `""`, protocol `TCP`.
pub fn default_endpoint_slice(slice: &mut EndpointSlice) {
    for port in slice.ports.iter_mut().flatten() {
        if port.name.is_none() {
            port.name = Some(String::new());
        }
        if port.protocol.is_none() {
            port.protocol = Some("TCP".to_owned());
        }
    }
}

/// The label a v1beta1 client stored the node name under in `topology`.
const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";

/// `dropTopologyOnV1`: a v1 write never stores `deprecatedTopology`; when
/// the endpoints changed, a node name the old slice recorded there moves to
/// `nodeName` (if that is unset and the name is valid).
fn drop_topology_on_v1(new: &mut EndpointSlice, old: Option<&EndpointSlice>) {
    if let Some(old) = old
        && semantic_eq(&new.endpoints, &old.endpoints)
    {
        return;
    }
    let prev: BTreeSet<String> = old
        .and_then(|o| o.endpoints.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|e| e.deprecated_topology.as_ref()?.get(LABEL_HOSTNAME).cloned())
        .collect();
    for ep in new.endpoints.iter_mut().flatten() {
        if let Some(name) = ep
            .deprecated_topology
            .as_ref()
            .and_then(|t| t.get(LABEL_HOSTNAME))
            .filter(|n| ep.node_name.is_none() && prev.contains(*n))
            .filter(|n| formats::is_dns1123_subdomain(n).is_empty())
            .cloned()
        {
            ep.node_name = Some(name);
        }
        ep.deprecated_topology = None;
    }
}

/// The EndpointSlice registry strategy.
#[derive(Clone, Copy, Debug, Default)]
pub struct EndpointSliceStrategy;

impl Strategy for EndpointSliceStrategy {
    type Object = EndpointSlice;

    fn default(obj: &mut EndpointSlice) {
        default_endpoint_slice(obj);
    }

    /// Generation 1; `deprecatedTopology` dropped (v1 writes).
    fn prepare_for_create(obj: &mut EndpointSlice) {
        obj.metadata.generation = Some(1);
        drop_topology_on_v1(obj, None);
    }

    fn validate_create(obj: &EndpointSlice, _ctx: &Context<'_>) -> ErrorList {
        validate_endpoint_slice(obj)
    }

    /// Generation bumped when anything but metadata, or the labels, changed.
    fn prepare_for_update(new: &mut EndpointSlice, old: &EndpointSlice) {
        let changed = !semantic_eq(&new.address_type, &old.address_type)
            || !semantic_eq(&new.endpoints, &old.endpoints)
            || !semantic_eq(&new.ports, &old.ports)
            || !semantic_eq(&new.metadata.labels, &old.metadata.labels);
        new.metadata.generation = next_generation(old.metadata.generation, changed);
        drop_topology_on_v1(new, Some(old));
    }

    fn validate_update(new: &EndpointSlice, old: &EndpointSlice, _ctx: &Context<'_>) -> ErrorList {
        validate_endpoint_slice_update(new, old)
    }

    /// EndpointSlices have no `/status`; a status write is a plain update.
    fn validate_status_update(
        new: &EndpointSlice,
        old: &EndpointSlice,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_endpoint_slice_update(new, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use k8s_openapi::api::discovery::v1::{ForNode, ForZone};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn slice(addr_type: &str, endpoints: Vec<Endpoint>, ports: Vec<EndpointPort>) -> EndpointSlice {
        EndpointSlice {
            metadata: ObjectMeta {
                name: Some("hello".into()),
                namespace: Some("world".into()),
                resource_version: Some("1".into()),
                ..Default::default()
            },
            address_type: addr_type.into(),
            endpoints: Some(endpoints),
            ports: Some(ports),
        }
    }

    fn ep(addresses: &[&str]) -> Endpoint {
        Endpoint {
            addresses: addresses.iter().map(|a| (*a).to_owned()).collect(),
            ..Default::default()
        }
    }

    fn port(name: &str, protocol: Option<&str>) -> EndpointPort {
        EndpointPort {
            name: Some(name.into()),
            protocol: protocol.map(str::to_owned),
            port: Some(80),
            app_protocol: None,
        }
    }

    /// Upstream's `TestValidateEndpointSlice`, with kube-apiserver's messages.
    #[test]
    fn validate_endpoint_slice_table() {
        let tcp = Some("TCP");
        let cases: Vec<(&str, EndpointSlice, &str)> = vec![
            (
                "good-slice",
                slice("IPv4", vec![ep(&["10.1.2.3"])], vec![port("http", tcp)]),
                "",
            ),
            (
                "fqdn-cname",
                slice(
                    "FQDN",
                    vec![ep(&["foo.example.com", "example.com."])],
                    vec![],
                ),
                "",
            ),
            (
                "all-protocols",
                slice(
                    "IPv4",
                    vec![ep(&["10.1.2.3"])],
                    vec![
                        port("a", tcp),
                        port("b", Some("UDP")),
                        port("c", Some("SCTP")),
                    ],
                ),
                "",
            ),
            (
                "empty-port-name",
                slice("IPv6", vec![ep(&["2001:db8::1"])], vec![port("", tcp)]),
                "",
            ),
            (
                "empty-ports-and-endpoints",
                slice("IPv4", vec![], vec![]),
                "",
            ),
            (
                "duplicate-port-name",
                slice(
                    "IPv4",
                    vec![],
                    vec![port("http", tcp), port("http", Some("UDP"))],
                ),
                r#"ports[1].name: Duplicate value: "http""#,
            ),
            (
                "bad-port-name-caps",
                slice("IPv4", vec![], vec![port("aCapital", tcp)]),
                r#"ports[0].name: Invalid value: "aCapital""#,
            ),
            (
                "invalid-port-protocol",
                slice("IPv4", vec![], vec![port("http", Some("foo"))]),
                r#"ports[0].protocol: Unsupported value: "foo": supported values: "SCTP", "TCP", "UDP""#,
            ),
            (
                "missing-port-protocol",
                slice("IPv4", vec![], vec![port("http", None)]),
                "ports[0].protocol: Required value",
            ),
            (
                "too-many-endpoints",
                slice(
                    "IPv4",
                    (0..1001).map(|_| ep(&["10.1.2.3"])).collect(),
                    vec![],
                ),
                "endpoints: Too many: 1001: must have at most 1000 items",
            ),
            (
                "no-endpoint-addresses",
                slice("IPv4", vec![ep(&[])], vec![]),
                "endpoints[0].addresses: Required value: must contain at least 1 address",
            ),
            (
                "too-many-addresses",
                slice("IPv4", vec![ep(&["10.1.2.3"; 101])], vec![]),
                "endpoints[0].addresses: Too many: 101: must have at most 100 items",
            ),
            (
                "bad-ipv4",
                slice("IPv4", vec![ep(&["2001:db8::1"])], vec![]),
                r#"endpoints[0].addresses[0]: Invalid value: "2001:db8::1": must be a valid IPv4 address"#,
            ),
            (
                "bad-ipv6",
                slice("IPv6", vec![ep(&["10.1.2.3"])], vec![]),
                r#"endpoints[0].addresses[0]: Invalid value: "10.1.2.3": must be a valid IPv6 address"#,
            ),
            (
                "special-ip",
                slice("IPv4", vec![ep(&["127.0.0.1"])], vec![]),
                r#"endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)"#,
            ),
            (
                "bad-fqdn",
                slice("FQDN", vec![ep(&["foo.*", "single"])], vec![]),
                r#"endpoints[0].addresses[1]: Invalid value: "single": should be a domain with at least two segments separated by dots"#,
            ),
            (
                "bad-hostname",
                slice(
                    "IPv4",
                    vec![Endpoint {
                        hostname: Some("--INVALID".into()),
                        ..ep(&["10.1.2.3"])
                    }],
                    vec![],
                ),
                r#"endpoints[0].hostname: Invalid value: "--INVALID""#,
            ),
            (
                "bad-topology-key",
                slice(
                    "IPv4",
                    vec![Endpoint {
                        deprecated_topology: Some(BTreeMap::from([(
                            "--INVALID".to_owned(),
                            "x".to_owned(),
                        )])),
                        ..ep(&["10.1.2.3"])
                    }],
                    vec![],
                ),
                r#"endpoints[0].deprecatedTopology: Invalid value: "--INVALID""#,
            ),
            (
                "duplicate-zone-hint",
                slice(
                    "IPv4",
                    vec![Endpoint {
                        hints: Some(EndpointHints {
                            for_zones: Some(vec![
                                ForZone {
                                    name: "zone-a".into(),
                                },
                                ForZone {
                                    name: "zone-a".into(),
                                },
                            ]),
                            for_nodes: Some(vec![ForNode {
                                name: "Node_1".into(),
                            }]),
                        }),
                        ..ep(&["10.1.2.3"])
                    }],
                    vec![],
                ),
                r#"[endpoints[0].hints.forZones[1].name: Duplicate value: "zone-a", endpoints[0].hints.forNodes[0].name: Invalid value: "Node_1""#,
            ),
            (
                "bad-addressType",
                slice("IP", vec![], vec![]),
                r#"addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6""#,
            ),
            (
                "empty-addressType",
                slice("", vec![], vec![]),
                "addressType: Required value",
            ),
        ];
        for (name, obj, want) in cases {
            let got = validate_endpoint_slice(&obj).to_string();
            if want.is_empty() {
                assert_eq!(got, "", "{name}");
            } else {
                assert!(got.contains(want), "{name}:\n got {got}\nwant {want}");
            }
        }
    }

    #[test]
    fn defaults_and_v1_topology() {
        let absent = crate::absent::Absent::default();
        let ctx = Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent: &absent,
        };
        let mut s = slice(
            "IPv4",
            vec![Endpoint {
                deprecated_topology: Some(BTreeMap::from([(
                    LABEL_HOSTNAME.to_owned(),
                    "node-1".to_owned(),
                )])),
                ..ep(&["10.1.2.3"])
            }],
            vec![EndpointPort {
                name: None,
                protocol: None,
                port: Some(80),
                app_protocol: None,
            }],
        );
        crate::strategy::admit_create::<EndpointSliceStrategy>(&mut s, &ctx).expect("valid");
        let port = &s.ports.as_ref().expect("ports")[0];
        assert_eq!(port.name.as_deref(), Some(""));
        assert_eq!(port.protocol.as_deref(), Some("TCP"));
        let endpoints = s.endpoints.as_ref().expect("endpoints");
        assert_eq!(endpoints[0].deprecated_topology, None);
        assert_eq!(endpoints[0].node_name, None);
        assert_eq!(s.metadata.generation, Some(1));

        // A node name the stored slice kept in deprecatedTopology moves to nodeName.
        let mut old = s.clone();
        if let Some(e) = old.endpoints.as_mut() {
            e[0].deprecated_topology = Some(BTreeMap::from([(
                LABEL_HOSTNAME.to_owned(),
                "node-1".to_owned(),
            )]));
        }
        let mut new = old.clone();
        if let Some(e) = new.endpoints.as_mut() {
            e[0].addresses = vec!["10.1.2.4".into()];
        }
        EndpointSliceStrategy::prepare_for_update(&mut new, &old);
        let e = &new.endpoints.expect("endpoints")[0];
        assert_eq!(e.node_name.as_deref(), Some("node-1"));
        assert_eq!(e.deprecated_topology, None);
    }

    #[test]
    fn update_keeps_address_type_and_bumps_generation() {
        let mut old = slice("IPv4", vec![ep(&["10.1.2.3"])], vec![]);
        old.metadata.generation = Some(1);
        let mut new = old.clone();
        new.address_type = "IPv6".into();
        new.endpoints = Some(vec![ep(&["2001:db8::1"])]);
        assert_eq!(
            validate_endpoint_slice_update(&new, &old).to_string(),
            r#"addressType: Invalid value: "IPv6": field is immutable"#
        );
        let mut same = old.clone();
        EndpointSliceStrategy::prepare_for_update(&mut same, &old);
        assert_eq!(same.metadata.generation, Some(1));
        let mut relabelled = old.clone();
        relabelled.metadata.labels = Some(BTreeMap::from([("a".to_owned(), "b".to_owned())]));
        EndpointSliceStrategy::prepare_for_update(&mut relabelled, &old);
        assert_eq!(relabelled.metadata.generation, Some(2));
        let mut annotated = old.clone();
        annotated.metadata.annotations = Some(BTreeMap::from([("a".to_owned(), "b".to_owned())]));
        EndpointSliceStrategy::prepare_for_update(&mut annotated, &old);
        assert_eq!(annotated.metadata.generation, Some(1));
    }
}
