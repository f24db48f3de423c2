//! discovery.k8s.io EndpointSlices and networking.k8s.io Ingresses,
//! IngressClasses and NetworkPolicies: upstream's `printEndpointSlice`,
//! `printIngress`, `printIngressClass`, `printNetworkPolicy`.

use std::collections::BTreeSet;

use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass, NetworkPolicy};
use serde_json::json;

use super::cells::{self, NONE};
use super::{Column, Printer, Row, decode};
use crate::discovery::openapi::describe;

/// The EndpointSlice printer: NAME ADDRESSTYPE PORTS ENDPOINTS AGE.
pub const ENDPOINT_SLICE: Printer = Printer {
    columns: || {
        let d = |p: &str| describe("io.k8s.api.discovery.v1.EndpointSlice", p);
        vec![
            Column::name(),
            Column::new("AddressType", "string", d("addressType")),
            Column::new("Ports", "string", d("ports")),
            Column::new("Endpoints", "string", d("endpoints")),
            Column::age(),
        ]
    },
    row: |v, now| {
        let slice = decode::<EndpointSlice>(v)?;
        // formatDiscoveryPorts: the port, else its name, else `*`.
        let ports: Vec<String> = slice
            .ports
            .iter()
            .flatten()
            .map(|p| match (p.port, &p.name) {
                (Some(port), _) => port.to_string(),
                (None, Some(name)) => name.clone(),
                (None, None) => "*".to_owned(),
            })
            .collect();
        // formatDiscoveryEndpoints: every address of every endpoint.
        let addresses: Vec<String> = slice
            .endpoints
            .iter()
            .flatten()
            .flat_map(|e| e.addresses.iter().cloned())
            .collect();
        Some(Row::from(vec![
            cells::name(&slice.metadata),
            json!(slice.address_type),
            json!(cells::list_with_more(&ports, ports.len(), 3)),
            json!(cells::list_with_more(&addresses, addresses.len(), 3)),
            cells::age(&slice.metadata, now),
        ]))
    },
};

/// The Ingress printer: NAME CLASS HOSTS ADDRESS PORTS AGE.
pub const INGRESS: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "Class",
                "string",
                "The name of the IngressClass resource that should be used for additional configuration".into(),
            ),
            Column::new(
                "Hosts",
                "string",
                "Hosts that incoming requests are matched against before the ingress rule".into(),
            ),
            Column::new(
                "Address",
                "string",
                "Address is a list containing ingress points for the load-balancer".into(),
            ),
            Column::new("Ports", "string", "Ports of TLS configurations that open".into()),
            Column::age(),
        ]
    },
    row: |v, now| {
        let ing = decode::<Ingress>(v)?;
        let spec = ing.spec.clone().unwrap_or_default();
        let class = spec
            .ingress_class_name
            .clone()
            .unwrap_or_else(|| NONE.to_owned());
        // ingressLoadBalancerStatusStringer (wide: never clipped).
        let address: BTreeSet<String> = ing
            .status
            .as_ref()
            .and_then(|s| s.load_balancer.as_ref())
            .and_then(|lb| lb.ingress.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|i| {
                i.ip.clone()
                    .filter(|ip| !ip.is_empty())
                    .or_else(|| i.hostname.clone().filter(|h| !h.is_empty()))
            })
            .collect();
        let ports = if spec.tls.as_ref().is_some_and(|t| !t.is_empty()) {
            "80, 443"
        } else {
            "80"
        };
        Some(Row::from(vec![
            cells::name(&ing.metadata),
            json!(class),
            json!(format_hosts(spec.rules.as_deref().unwrap_or_default())),
            json!(address.into_iter().collect::<Vec<_>>().join(",")),
            json!(ports),
            cells::age(&ing.metadata, now),
        ]))
    },
};

/// `formatHosts`: up to three rule hosts, ` + N more...` counting every
/// rule past the third; `*` when no rule names a host.
fn format_hosts(rules: &[k8s_openapi::api::networking::v1::IngressRule]) -> String {
    const MAX: usize = 3;
    let mut list: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if list.len() == MAX {
            more = true;
        }
        match rule.host.as_deref() {
            Some(host) if !more && !host.is_empty() => list.push(host),
            _ => {}
        }
    }
    if list.is_empty() {
        return "*".to_owned();
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", rules.len() - MAX)
    } else {
        joined
    }
}

/// The IngressClass printer: NAME CONTROLLER PARAMETERS AGE.
pub const INGRESS_CLASS: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "Controller",
                "string",
                "Controller that is responsible for handling this class".into(),
            ),
            Column::new(
                "Parameters",
                "string",
                "A reference to a resource with additional parameters".into(),
            ),
            Column::age(),
        ]
    },
    row: |v, now| {
        let class = decode::<IngressClass>(v)?;
        let spec = class.spec.clone().unwrap_or_default();
        let parameters = spec.parameters.as_ref().map_or_else(
            || NONE.to_owned(),
            |p| match &p.api_group {
                Some(group) => format!("{}.{group}/{}", p.kind, p.name),
                None => format!("{}/{}", p.kind, p.name),
            },
        );
        Some(Row::from(vec![
            cells::name(&class.metadata),
            json!(spec.controller.clone().unwrap_or_default()),
            json!(parameters),
            cells::age(&class.metadata, now),
        ]))
    },
};

/// The NetworkPolicy printer: NAME POD-SELECTOR AGE.
pub const NETWORK_POLICY: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "Pod-Selector",
                "string",
                describe("io.k8s.api.networking.v1.NetworkPolicySpec", "podSelector"),
            ),
            Column::age(),
        ]
    },
    row: |v, now| {
        let np = decode::<NetworkPolicy>(v)?;
        // Upstream formats `&spec.podSelector`: never nil.
        let selector = np
            .spec
            .as_ref()
            .and_then(|s| s.pod_selector.clone())
            .unwrap_or_default();
        Some(Row::from(vec![
            cells::name(&np.metadata),
            json!(cells::label_selector(Some(&selector))),
            cells::age(&np.metadata, now),
        ]))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;
    use serde_json::Value;

    fn now() -> Timestamp {
        "2026-01-03T00:00:00Z".parse().expect("time")
    }

    fn cells_of(p: Printer, v: Value) -> Vec<Value> {
        (p.row)(&v, now()).expect("decodes").cells
    }

    /// Upstream `TestPrintEndpointSlice`.
    #[test]
    fn endpoint_slices() {
        let cases = [
            (
                "ipv4, two ports, one endpoint",
                json!({"addressType": "IPv4",
                       "ports": [{"name": "http", "port": 80, "protocol": "TCP"}, {"name": "named", "protocol": "TCP"}, {"protocol": "TCP"}],
                       "endpoints": [{"addresses": ["10.1.2.3", "2001:db8::1234:5678"]}]}),
                ["IPv4", "80,named,*", "10.1.2.3,2001:db8::1234:5678"],
            ),
            (
                "more than three of each",
                json!({"addressType": "IPv6",
                       "ports": [{"port": 80}, {"port": 443}, {"port": 8080}, {"port": 8443}],
                       "endpoints": [{"addresses": ["fd00::1", "fd00::2"]}, {"addresses": ["fd00::3", "fd00::4", "fd00::5"]}]}),
                [
                    "IPv6",
                    "80,443,8080 + 1 more...",
                    "fd00::1,fd00::2,fd00::3 + 2 more...",
                ],
            ),
            (
                "nothing yet",
                json!({"addressType": "FQDN", "endpoints": []}),
                ["FQDN", "<unset>", "<unset>"],
            ),
        ];
        for (name, body, want) in cases {
            let mut obj = body;
            obj["metadata"] = json!({"name": "abcslice.123"});
            let c = cells_of(ENDPOINT_SLICE, obj);
            assert_eq!(
                (&c[0], &c[1], &c[2], &c[3]),
                (
                    &json!("abcslice.123"),
                    &json!(want[0]),
                    &json!(want[1]),
                    &json!(want[2])
                ),
                "{name}"
            );
        }
    }

    /// Upstream `TestPrintIngress`.
    #[test]
    fn ingresses() {
        let c = cells_of(
            INGRESS,
            json!({"metadata": {"name": "test1", "creationTimestamp": "2026-01-02T00:00:00Z"},
                   "spec": {"ingressClassName": "foo",
                            "defaultBackend": {"service": {"name": "default-backend", "port": {"name": "default-backend"}}}},
                   "status": {"loadBalancer": {"ingress": [{"ip": "2.3.4.5", "hostname": "localhost.localdomain"}]}}}),
        );
        assert_eq!(
            c,
            vec![
                json!("test1"),
                json!("foo"),
                json!("*"),
                json!("2.3.4.5"),
                json!("80"),
                json!("24h")
            ]
        );
        let rules = |hosts: &[&str]| -> Value {
            hosts
                .iter()
                .map(|h| json!({"host": h}))
                .collect::<Vec<_>>()
                .into()
        };
        let c = cells_of(
            INGRESS,
            json!({"metadata": {"name": "t"},
                   "spec": {"rules": rules(&["a.com", "", "b.com", "c.com", "d.com"]), "tls": [{"hosts": ["a.com"]}]},
                   "status": {"loadBalancer": {"ingress": [{"hostname": "z.lb"}, {"ip": "1.1.1.1"}, {"ip": "1.1.1.1"}]}}}),
        );
        assert_eq!(
            (&c[1], &c[2], &c[3], &c[4]),
            (
                &json!("<none>"),
                &json!("a.com,b.com,c.com + 2 more..."),
                &json!("1.1.1.1,z.lb"),
                &json!("80, 443")
            )
        );
    }

    /// Upstream `TestPrintIngressClass`.
    #[test]
    fn ingress_classes() {
        let class = |params: Value| {
            cells_of(
                INGRESS_CLASS,
                json!({"metadata": {"name": "test1"}, "spec": {"controller": "example.com/controller", "parameters": params}}),
            )
        };
        assert_eq!(
            class(json!({"apiGroup": "example.com", "kind": "customgroup", "name": "example"}))
                [1..3],
            [
                json!("example.com/controller"),
                json!("customgroup.example.com/example")
            ]
        );
        assert_eq!(
            class(json!({"kind": "customgroup", "name": "example"}))[2],
            json!("customgroup/example")
        );
        assert_eq!(class(Value::Null)[2], json!("<none>"));
    }

    /// Upstream `TestPrintNetworkPolicy`.
    #[test]
    fn network_policies() {
        let np = |spec: Value| {
            cells_of(
                NETWORK_POLICY,
                json!({"metadata": {"name": "policy1"}, "spec": spec}),
            )[1]
            .clone()
        };
        assert_eq!(
            np(json!({"podSelector": {"matchLabels": {"foo": "bar"}}})),
            json!("foo=bar")
        );
        assert_eq!(np(json!({"podSelector": {}})), json!("<none>"));
        assert_eq!(np(json!({})), json!("<none>"));
    }
}
