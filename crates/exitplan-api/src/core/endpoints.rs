//! Endpoints (`ValidateEndpoints*` in `pkg/apis/core/validation`,
//! `SetDefaults_Endpoints`, `pkg/registry/core/endpoint/strategy.go`):
//! every subset has addresses, addresses are usable IPs, ports are named
//! when there are several, protocols are known. Also the IP rule Services
//! and EndpointSlices share ([`validate_non_special_ip`]).

use std::net::IpAddr;

use k8s_openapi::api::core::v1::{EndpointAddress, EndpointPort, EndpointSubset, Endpoints};

use super::validation::strings::{
    invalid_each, invalid_each_int, is_valid_port_num, validate_dns1123_label, validate_ip,
};
use crate::field::{Error, ErrorList, Path};
use crate::formats;
use crate::meta::{self, NameRule};
use crate::strategy::{Context, Strategy};

/// The protocols of service and endpoint ports, sorted as upstream lists them.
pub const SUPPORTED_PORT_PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];

/// `ValidateNonSpecialIP` / `ValidateEndpointIP`: not unspecified,
/// loopback, link-local or link-local multicast.
pub fn validate_non_special_ip(value: &str, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Ok(ip) = value.parse::<IpAddr>() else {
        errs.push(Error::invalid(path, value, "must be a valid IP address"));
        return errs;
    };
    let (unspecified, loopback, link_local, link_local_multicast) = match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            (
                v4.is_unspecified(),
                v4.is_loopback(),
                v4.is_link_local(),
                o[0] == 224 && o[1] == 0 && o[2] == 0,
            )
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            match v6.to_ipv4_mapped() {
                Some(v4) => {
                    let o = v4.octets();
                    (
                        v4.is_unspecified(),
                        v4.is_loopback(),
                        v4.is_link_local(),
                        o[0] == 224 && o[1] == 0 && o[2] == 0,
                    )
                }
                None => (
                    v6.is_unspecified(),
                    v6.is_loopback(),
                    s[0] & 0xffc0 == 0xfe80,
                    s[0] & 0xff0f == 0xff02,
                ),
            }
        }
    };
    if unspecified {
        errs.push(Error::invalid(
            path,
            value,
            format!("may not be unspecified ({value})"),
        ));
    }
    if loopback {
        errs.push(Error::invalid(
            path,
            value,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    if link_local {
        errs.push(Error::invalid(
            path,
            value,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if link_local_multicast {
        errs.push(Error::invalid(
            path,
            value,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
    errs.with_origin("format=non-special-ip")
}

/// A protocol: required, and one of [`SUPPORTED_PORT_PROTOCOLS`].
pub fn validate_protocol(protocol: Option<&str>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    match protocol.unwrap_or_default() {
        "" => errs.push(Error::required(path, "")),
        p if !SUPPORTED_PORT_PROTOCOLS.contains(&p) => {
            errs.push(Error::not_supported(path, p, SUPPORTED_PORT_PROTOCOLS));
        }
        _ => {}
    }
    errs
}

fn validate_endpoint_address(address: &EndpointAddress, path: &Path) -> ErrorList {
    let ip_path = path.child("ip");
    let mut errs = validate_ip(&ip_path, &address.ip);
    if let Some(h) = address.hostname.as_deref().filter(|h| !h.is_empty()) {
        errs.append(validate_dns1123_label(&path.child("hostname"), h));
    }
    if let Some(node) = &address.node_name {
        errs.append(invalid_each(
            &path.child("nodeName"),
            node,
            formats::is_dns1123_subdomain(node),
        ));
    }
    errs.append(validate_non_special_ip(&address.ip, &ip_path));
    errs
}

fn validate_endpoint_port(port: &EndpointPort, require_name: bool, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let name = port.name.as_deref().unwrap_or_default();
    if require_name && name.is_empty() {
        errs.push(Error::required(&path.child("name"), ""));
    } else if !name.is_empty() {
        errs.append(validate_dns1123_label(&path.child("name"), name));
    }
    let n = i64::from(port.port);
    errs.append(invalid_each_int(
        &path.child("port"),
        n,
        is_valid_port_num(n),
    ));
    errs.append(validate_protocol(
        port.protocol.as_deref(),
        &path.child("protocol"),
    ));
    if let Some(app) = &port.app_protocol {
        errs.append(formats::validate_qualified_name(
            &path.child("appProtocol"),
            app,
        ));
    }
    errs
}

fn validate_subsets(subsets: &[EndpointSubset], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, ss) in subsets.iter().enumerate() {
        let p = path.index(i);
        let addresses = ss.addresses.as_deref().unwrap_or_default();
        let not_ready = ss.not_ready_addresses.as_deref().unwrap_or_default();
        if addresses.is_empty() && not_ready.is_empty() {
            errs.push(Error::required(
                &p,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (j, a) in addresses.iter().enumerate() {
            errs.append(validate_endpoint_address(a, &p.child("addresses").index(j)));
        }
        for (j, a) in not_ready.iter().enumerate() {
            errs.append(validate_endpoint_address(
                a,
                &p.child("notReadyAddresses").index(j),
            ));
        }
        let ports = ss.ports.as_deref().unwrap_or_default();
        for (j, port) in ports.iter().enumerate() {
            errs.append(validate_endpoint_port(
                port,
                ports.len() > 1,
                &p.child("ports").index(j),
            ));
        }
    }
    errs
}

/// `ValidateEndpoints` (create and the second half of update).
pub fn validate_endpoints(ep: &Endpoints) -> ErrorList {
    let mut errs = meta::validate_object_meta(&ep.metadata, true, NameRule::Subdomain);
    errs.append(validate_subsets(
        ep.subsets.as_deref().unwrap_or_default(),
        &Path::new("subsets"),
    ));
    errs
}

/// `ValidateEndpointsUpdate`.
pub fn validate_endpoints_update(new: &Endpoints, old: &Endpoints) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_endpoints(new));
    errs
}

/// The Endpoints registry strategy.
#[derive(Clone, Copy, Debug, Default)]
pub struct EndpointsStrategy;

impl Strategy for EndpointsStrategy {
    type Object = Endpoints;

    /// `SetDefaults_Endpoints`: port protocol `TCP`.
    fn default(obj: &mut Endpoints) {
        for ss in obj.subsets.iter_mut().flatten() {
            for port in ss.ports.iter_mut().flatten() {
                if port.protocol.as_deref().unwrap_or_default().is_empty() {
                    port.protocol = Some("TCP".to_owned());
                }
            }
        }
    }

    fn validate_create(obj: &Endpoints, _ctx: &Context<'_>) -> ErrorList {
        validate_endpoints(obj)
    }

    fn validate_update(new: &Endpoints, old: &Endpoints, _ctx: &Context<'_>) -> ErrorList {
        validate_endpoints_update(new, old)
    }

    /// Endpoints have no `/status`; a status write is a plain update.
    fn validate_status_update(new: &Endpoints, old: &Endpoints, _ctx: &Context<'_>) -> ErrorList {
        validate_endpoints_update(new, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn addr(ip: &str) -> EndpointAddress {
        EndpointAddress {
            ip: ip.into(),
            ..Default::default()
        }
    }

    fn port(name: &str, port: i32, protocol: &str) -> EndpointPort {
        EndpointPort {
            name: (!name.is_empty()).then(|| name.to_owned()),
            port,
            protocol: (!protocol.is_empty()).then(|| protocol.to_owned()),
            ..Default::default()
        }
    }

    fn ep(subsets: Vec<EndpointSubset>) -> Endpoints {
        Endpoints {
            metadata: ObjectMeta {
                name: Some("mysvc".into()),
                namespace: Some("namespace".into()),
                ..Default::default()
            },
            subsets: Some(subsets),
        }
    }

    fn subset(addresses: Vec<EndpointAddress>, ports: Vec<EndpointPort>) -> EndpointSubset {
        EndpointSubset {
            addresses: Some(addresses),
            not_ready_addresses: None,
            ports: Some(ports),
        }
    }

    /// Upstream's `TestValidateEndpointsCreate` (success and error cases).
    #[test]
    fn validate_endpoints_table() {
        let cases: Vec<(&str, Endpoints, &str)> = vec![
            ("empty subsets", ep(vec![]), ""),
            (
                "single port",
                ep(vec![subset(
                    vec![addr("10.10.1.1")],
                    vec![port("", 8675, "TCP")],
                )]),
                "",
            ),
            (
                "multiple named ports",
                ep(vec![subset(
                    vec![addr("10.10.1.1"), addr("2001:db8::1")],
                    vec![
                        port("a", 111, "TCP"),
                        port("b", 222, "UDP"),
                        port("c", 333, "SCTP"),
                    ],
                )]),
                "",
            ),
            (
                "no addresses",
                ep(vec![subset(vec![], vec![port("a", 93, "TCP")])]),
                "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`",
            ),
            (
                "invalid port name",
                ep(vec![subset(
                    vec![addr("10.10.1.1")],
                    vec![port("INVALID", 93, "TCP")],
                )]),
                r#"subsets[0].ports[0].name: Invalid value: "INVALID""#,
            ),
            (
                "missing port name with several ports",
                ep(vec![subset(
                    vec![addr("10.10.1.1")],
                    vec![port("", 93, "TCP"), port("b", 94, "TCP")],
                )]),
                "subsets[0].ports[0].name: Required value",
            ),
            (
                "invalid port number",
                ep(vec![subset(
                    vec![addr("10.10.1.1")],
                    vec![port("a", 66000, "TCP")],
                )]),
                "subsets[0].ports[0].port: Invalid value: 66000: must be between 1 and 65535, inclusive",
            ),
            (
                "invalid protocol",
                ep(vec![subset(
                    vec![addr("10.10.1.1")],
                    vec![port("a", 93, "Protocol")],
                )]),
                r#"subsets[0].ports[0].protocol: Unsupported value: "Protocol": supported values: "SCTP", "TCP", "UDP""#,
            ),
            (
                "address missing IP",
                ep(vec![subset(vec![addr("")], vec![port("a", 93, "TCP")])]),
                r#"subsets[0].addresses[0].ip: Invalid value: "": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"#,
            ),
            (
                "address is loopback",
                ep(vec![subset(
                    vec![addr("127.0.0.1")],
                    vec![port("a", 93, "TCP")],
                )]),
                r#"subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)"#,
            ),
            (
                "address is link-local",
                ep(vec![subset(
                    vec![addr("169.254.169.254")],
                    vec![port("a", 93, "TCP")],
                )]),
                "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
            ),
            (
                "address is link-local multicast",
                ep(vec![subset(
                    vec![addr("224.0.0.1")],
                    vec![port("a", 93, "TCP")],
                )]),
                "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
            ),
            (
                "address is unspecified",
                ep(vec![subset(
                    vec![addr("0.0.0.0")],
                    vec![port("a", 93, "TCP")],
                )]),
                r#"may not be unspecified (0.0.0.0)"#,
            ),
            (
                "invalid hostname",
                ep(vec![subset(
                    vec![EndpointAddress {
                        hostname: Some("Bad.Host".into()),
                        ..addr("10.10.1.1")
                    }],
                    vec![],
                )]),
                r#"subsets[0].addresses[0].hostname: Invalid value: "Bad.Host""#,
            ),
        ];
        for (name, obj, want) in cases {
            let got = validate_endpoints(&obj).to_string();
            if want.is_empty() {
                assert_eq!(got, "", "{name}");
            } else {
                assert!(got.contains(want), "{name}: {got}");
            }
        }
    }

    #[test]
    fn protocol_defaults_to_tcp() {
        let mut e = ep(vec![subset(vec![addr("10.1.1.1")], vec![port("", 80, "")])]);
        <EndpointsStrategy as Strategy>::default(&mut e);
        assert_eq!(
            e.subsets
                .and_then(|s| s[0].ports.clone())
                .and_then(|p| p[0].protocol.clone())
                .as_deref(),
            Some("TCP")
        );
    }
}
