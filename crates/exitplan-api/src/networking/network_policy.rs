//! networking.k8s.io/v1 NetworkPolicy: defaulting
//! (`SetDefaults_NetworkPolicy(Port)`), validation (`ValidateNetworkPolicy*`
//! of `pkg/apis/networking/validation`) and the registry strategy
//! (`pkg/registry/networking/networkpolicy`).

use k8s_openapi::api::networking::v1::{
    IPBlock, NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort, NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::formats::{is_strict_subset, parse_cidr, validate_cidr};
use crate::core::validation::strings::{is_valid_port_name, is_valid_port_num};
use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::meta::generic::{before_create, validate_common_fields};
use crate::meta::{self, NameRule};
use crate::render;
use crate::selector::validate_label_selector;
use crate::strategy::{Context, Strategy, next_generation};

/// The protocols a policy port may name.
pub const PROTOCOLS: [&str; 3] = ["TCP", "UDP", "SCTP"];
/// The policy types.
pub const POLICY_TYPES: [&str; 2] = ["Ingress", "Egress"];

/// `NetworkPolicyValidationOptions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkPolicyValidationOptions {
    /// A stored pod selector with invalid label values stays valid.
    pub allow_invalid_label_value_in_selector: bool,
    /// CIDRs of the stored policy, accepted even when invalid.
    pub allow_cidrs_even_if_invalid: Vec<String>,
}

/// `ValidationOptionsForNetworking`.
pub fn validation_options(old: Option<&NetworkPolicy>) -> NetworkPolicyValidationOptions {
    let invalid = old.is_some_and(|o| {
        let sel = o
            .spec
            .as_ref()
            .and_then(|s| s.pod_selector.clone())
            .unwrap_or_default();
        !validate_label_selector(Some(&sel), false, &Path::default()).is_empty()
    });
    NetworkPolicyValidationOptions {
        allow_invalid_label_value_in_selector: invalid,
        allow_cidrs_even_if_invalid: Vec::new(),
    }
}

/// `ValidateNetworkPolicyPort`: protocol, port number or name, endPort.
pub fn validate_port(port: &NetworkPolicyPort, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(p) = port.protocol.as_deref()
        && !PROTOCOLS.contains(&p)
    {
        errs.push(Error::not_supported(&path.child("protocol"), p, &PROTOCOLS));
    }
    let end_path = path.child("endPort");
    match &port.port {
        Some(IntOrString::Int(n)) => {
            for m in is_valid_port_num(i64::from(*n)) {
                errs.push(Error::invalid(&path.child("port"), *n, m));
            }
            if let Some(end) = port.end_port {
                if end < *n {
                    errs.push(Error::invalid(
                        &end_path,
                        end,
                        "must be greater than or equal to `port`",
                    ));
                }
                for m in is_valid_port_num(i64::from(end)) {
                    errs.push(Error::invalid(&end_path, end, m));
                }
            }
        }
        Some(IntOrString::String(s)) => {
            if let Some(end) = port.end_port {
                errs.push(Error::invalid(
                    &end_path,
                    end,
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for m in is_valid_port_name(s) {
                errs.push(Error::invalid(&path.child("port"), s.as_str(), m));
            }
        }
        None => {
            if let Some(end) = port.end_port {
                errs.push(Error::invalid(
                    &end_path,
                    end,
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errs
}

/// `ValidateIPBlock`: a CIDR, each `except` a CIDR strictly inside it.
pub fn validate_ip_block(
    block: &IPBlock,
    opts: &NetworkPolicyValidationOptions,
    path: &Path,
) -> ErrorList {
    let cidr_path = path.child("cidr");
    if block.cidr.is_empty() {
        return ErrorList(vec![Error::required(&cidr_path, "")]);
    }
    let mut errs = validate_cidr(&cidr_path, &block.cidr, &opts.allow_cidrs_even_if_invalid);
    let Some(outer) = parse_cidr(&block.cidr) else {
        return errs;
    };
    for (i, except) in block.except.iter().flatten().enumerate() {
        let p = path.child("except").index(i);
        errs.append(validate_cidr(&p, except, &opts.allow_cidrs_even_if_invalid));
        let Some(inner) = parse_cidr(except) else {
            continue;
        };
        if !is_strict_subset(outer, inner) {
            errs.push(Error::invalid(
                &p,
                except.as_str(),
                "must be a strict subset of `cidr`",
            ));
        }
    }
    errs
}

/// `ValidateNetworkPolicyPeer`: exactly one kind of peer, or pod and
/// namespace selectors together.
pub fn validate_peer(
    peer: &NetworkPolicyPeer,
    opts: &NetworkPolicyValidationOptions,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut peers = 0;
    let allow = opts.allow_invalid_label_value_in_selector;
    if let Some(s) = &peer.pod_selector {
        peers += 1;
        errs.append(validate_label_selector(
            Some(s),
            allow,
            &path.child("podSelector"),
        ));
    }
    if let Some(s) = &peer.namespace_selector {
        peers += 1;
        errs.append(validate_label_selector(
            Some(s),
            allow,
            &path.child("namespaceSelector"),
        ));
    }
    if let Some(b) = &peer.ip_block {
        peers += 1;
        errs.append(validate_ip_block(b, opts, &path.child("ipBlock")));
    }
    if peers == 0 {
        errs.push(Error::required(path, "must specify a peer"));
    } else if peers > 1 && peer.ip_block.is_some() {
        errs.push(Error::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
    errs
}

/// `ValidateNetworkPolicySpec`: the pod selector, each rule's ports and
/// peers, and at most two known policy types.
pub fn validate_network_policy_spec(
    spec: &NetworkPolicySpec,
    opts: &NetworkPolicyValidationOptions,
    path: &Path,
) -> ErrorList {
    let selector = spec.pod_selector.clone().unwrap_or_default();
    let mut errs = validate_label_selector(
        Some(&selector),
        opts.allow_invalid_label_value_in_selector,
        &path.child("podSelector"),
    );
    for (i, rule) in spec.ingress.iter().flatten().enumerate() {
        let p = path.child("ingress").index(i);
        for (j, port) in rule.ports.iter().flatten().enumerate() {
            errs.append(validate_port(port, &p.child("ports").index(j)));
        }
        for (j, peer) in rule.from.iter().flatten().enumerate() {
            errs.append(validate_peer(peer, opts, &p.child("from").index(j)));
        }
    }
    for (i, rule) in spec.egress.iter().flatten().enumerate() {
        let p = path.child("egress").index(i);
        for (j, port) in rule.ports.iter().flatten().enumerate() {
            errs.append(validate_port(port, &p.child("ports").index(j)));
        }
        for (j, peer) in rule.to.iter().flatten().enumerate() {
            errs.append(validate_peer(peer, opts, &p.child("to").index(j)));
        }
    }
    let types = spec.policy_types.as_deref().unwrap_or_default();
    let types_path = path.child("policyTypes");
    if types.len() > POLICY_TYPES.len() {
        errs.push(Error::invalid(
            &types_path,
            BadValue::Json(render::strings(types)),
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        if !POLICY_TYPES.contains(&t.as_str()) {
            errs.push(Error::not_supported(
                &types_path.index(i),
                t.as_str(),
                &POLICY_TYPES,
            ));
        }
    }
    errs
}

/// `ValidateNetworkPolicy`: metadata (a DNS subdomain) and the spec.
pub fn validate_network_policy(
    np: &NetworkPolicy,
    opts: &NetworkPolicyValidationOptions,
) -> ErrorList {
    let mut errs = meta::validate_object_meta(&np.metadata, true, NameRule::Subdomain);
    errs.append(validate_network_policy_spec(
        &np.spec.clone().unwrap_or_default(),
        opts,
        &Path::new("spec"),
    ));
    errs
}

/// Every CIDR of a policy's peers (`cidr` and `except`).
fn cidrs(np: &NetworkPolicy) -> Vec<String> {
    let spec = np.spec.clone().unwrap_or_default();
    let from = spec
        .ingress
        .into_iter()
        .flatten()
        .flat_map(|r| r.from.into_iter().flatten());
    let to = spec
        .egress
        .into_iter()
        .flatten()
        .flat_map(|r| r.to.into_iter().flatten());
    from.chain(to)
        .filter_map(|p| p.ip_block)
        .flat_map(|b| std::iter::once(b.cidr).chain(b.except.into_iter().flatten()))
        .collect()
}

/// `ValidateNetworkPolicyUpdate`: metadata update rules and the new spec,
/// accepting CIDRs the stored policy already had.
pub fn validate_network_policy_update(
    new: &NetworkPolicy,
    old: &NetworkPolicy,
    opts: &NetworkPolicyValidationOptions,
) -> ErrorList {
    let opts = NetworkPolicyValidationOptions {
        allow_cidrs_even_if_invalid: cidrs(old),
        ..opts.clone()
    };
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    errs.append(validate_network_policy_spec(
        &new.spec.clone().unwrap_or_default(),
        &opts,
        &Path::new("spec"),
    ));
    errs
}

/// `SetDefaults_NetworkPolicy(Port)`: ports default to TCP; policyTypes to
/// `[Ingress]`, plus `Egress` when egress rules exist.
pub fn default_network_policy(np: &mut NetworkPolicy) {
    let spec = np.spec.get_or_insert_with(NetworkPolicySpec::default);
    let ingress_ports = spec
        .ingress
        .iter_mut()
        .flatten()
        .flat_map(|r| r.ports.iter_mut().flatten());
    let egress_ports = spec
        .egress
        .iter_mut()
        .flatten()
        .flat_map(|r| r.ports.iter_mut().flatten());
    for port in ingress_ports.chain(egress_ports) {
        port.protocol.get_or_insert_with(|| "TCP".to_owned());
    }
    if spec.policy_types.as_ref().is_none_or(Vec::is_empty) {
        let mut types = vec!["Ingress".to_owned()];
        if spec.egress.as_ref().is_some_and(|e| !e.is_empty()) {
            types.push("Egress".to_owned());
        }
        spec.policy_types = Some(types);
    }
}

/// NetworkPolicies hold no quantities.
impl crate::quantities::Quantities for NetworkPolicy {}

/// Create and update rules of networking.k8s.io/v1 NetworkPolicies (no status).
#[derive(Clone, Copy, Debug, Default)]
pub struct NetworkPolicyStrategy;

impl Strategy for NetworkPolicyStrategy {
    type Object = NetworkPolicy;

    fn default(obj: &mut NetworkPolicy) {
        default_network_policy(obj);
    }

    /// Generation 1.
    fn prepare_for_create(obj: &mut NetworkPolicy) {
        obj.metadata.generation = Some(1);
    }

    fn validate_create(obj: &NetworkPolicy, _ctx: &Context<'_>) -> ErrorList {
        before_create(
            validate_network_policy(obj, &validation_options(None)),
            &obj.metadata,
        )
    }

    /// Generation bumped when the spec changed.
    fn prepare_for_update(new: &mut NetworkPolicy, old: &NetworkPolicy) {
        new.metadata.generation =
            next_generation(old.metadata.generation, !semantic_eq(&new.spec, &old.spec));
    }

    /// The new policy's rules, then the update rules (upstream's order).
    fn validate_update(new: &NetworkPolicy, old: &NetworkPolicy, _ctx: &Context<'_>) -> ErrorList {
        let opts = validation_options(Some(old));
        let mut errs = validate_common_fields(&new.metadata, &old.metadata);
        errs.append(validate_network_policy(new, &opts));
        errs.append(validate_network_policy_update(new, old, &opts));
        errs
    }

    /// NetworkPolicies have no `/status`; the stored object is kept.
    fn prepare_for_status_update(new: &mut NetworkPolicy, old: &NetworkPolicy) {
        *new = old.clone();
    }

    fn validate_status_update(
        new: &NetworkPolicy,
        old: &NetworkPolicy,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_common_fields(&new.metadata, &old.metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn np(spec: Value) -> NetworkPolicy {
        serde_json::from_value(json!({
            "metadata": {"name": "bar", "namespace": "foo", "resourceVersion": "1"},
            "spec": spec,
        }))
        .expect("policy")
    }

    fn opts() -> NetworkPolicyValidationOptions {
        NetworkPolicyValidationOptions::default()
    }

    /// `TestValidateNetworkPolicy` of upstream's validation_test.go.
    #[test]
    fn validate_network_policy_table() {
        let ok = [
            json!({"podSelector": {"matchLabels": {"a": "b"}}}),
            json!({"podSelector": {}, "ingress": [{"from": [{"podSelector": {"matchLabels": {"c": "d"}}}], "ports": [{"protocol": "TCP", "port": 80}, {"protocol": "UDP", "port": "dns"}]}]}),
            json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"c": "d"}}, "podSelector": {"matchLabels": {"e": "f"}}}]}]}),
            json!({"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "192.168.0.0/16", "except": ["192.168.3.0/24", "192.168.4.0/24"]}}]}], "policyTypes": ["Egress"]}),
            json!({"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "fd00:192:168::/48", "except": ["fd00:192:168:3::/64"]}}]}], "policyTypes": ["Ingress", "Egress"]}),
            json!({"podSelector": {}, "egress": [{"ports": [{"protocol": "TCP", "port": 32000, "endPort": 32768}]}]}),
        ];
        for spec in ok {
            let errs = validate_network_policy(&np(spec.clone()), &opts());
            assert!(errs.is_empty(), "{spec}: {errs}");
        }
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "missing from and to type",
                json!({"podSelector": {}, "ingress": [{"from": [{}]}]}),
                "spec.ingress[0].from[0]: Required value: must specify a peer",
            ),
            (
                "invalid spec.podSelector",
                json!({"podSelector": {"matchLabels": {"a": "b c"}}}),
                r#"spec.podSelector.matchLabels: Invalid value: "b c": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#,
            ),
            (
                "invalid ingress.ports.protocol",
                json!({"podSelector": {}, "ingress": [{"ports": [{"protocol": "ICMP", "port": 80}]}]}),
                r#"spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP""#,
            ),
            (
                "invalid ingress.ports.port (int)",
                json!({"podSelector": {}, "ingress": [{"ports": [{"protocol": "TCP", "port": 123456789}]}]}),
                "spec.ingress[0].ports[0].port: Invalid value: 123456789: must be between 1 and 65535, inclusive",
            ),
            (
                "invalid ingress.ports.port (str)",
                json!({"podSelector": {}, "ingress": [{"ports": [{"protocol": "TCP", "port": "!@#$"}]}]}),
                r#"[spec.ingress[0].ports[0].port: Invalid value: "!@#$": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), spec.ingress[0].ports[0].port: Invalid value: "!@#$": must contain at least one letter (a-z)]"#,
            ),
            (
                "missing cidr field",
                json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": ""}}]}]}),
                "spec.ingress[0].from[0].ipBlock.cidr: Required value",
            ),
            (
                "invalid cidr format",
                json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "192.168.5.6", "except": ["192.168.1.0/24"]}}]}]}),
                r#"spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "192.168.5.6": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"#,
            ),
            (
                "except field is an empty string",
                json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "192.168.8.0/24", "except": ["", " "]}}]}]}),
                r#"[spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64), spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: " ": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)]"#,
            ),
            (
                "except IP is outside of CIDR range",
                json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "192.168.8.0/24", "except": ["192.168.9.1/24"]}}]}]}),
                r#"spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "192.168.9.1/24": must be a strict subset of `cidr`"#,
            ),
            (
                "except IP is not strictly within CIDR range",
                json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "192.168.0.0/24", "except": ["192.168.0.0/24"]}}]}]}),
                r#"spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "192.168.0.0/24": must be a strict subset of `cidr`"#,
            ),
            (
                "ipBlock with another peer",
                json!({"podSelector": {}, "ingress": [{"from": [{"podSelector": {}, "ipBlock": {"cidr": "192.168.0.0/24"}}]}]}),
                "spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer",
            ),
            (
                "invalid policyTypes",
                json!({"podSelector": {}, "policyTypes": ["foo"]}),
                r#"spec.policyTypes[0]: Unsupported value: "foo": supported values: "Ingress", "Egress""#,
            ),
            (
                "too many policyTypes",
                json!({"podSelector": {}, "policyTypes": ["Egress", "Ingress", "foo"]}),
                r#"spec.policyTypes: Invalid value: ["Egress","Ingress","foo"]: may not specify more than two policyTypes"#,
            ),
            (
                "multiple ports defined, one port range is invalid",
                json!({"podSelector": {}, "egress": [{"ports": [{"protocol": "UDP", "port": 35000, "endPort": 32768}, {"protocol": "TCP", "port": 32000, "endPort": 32768}]}]}),
                "spec.egress[0].ports[0].endPort: Invalid value: 32768: must be greater than or equal to `port`",
            ),
            (
                "endPort defined with named/string port",
                json!({"podSelector": {}, "egress": [{"ports": [{"protocol": "UDP", "port": "dns", "endPort": 32768}]}]}),
                "spec.egress[0].ports[0].endPort: Invalid value: 32768: may not be specified when `port` is non-numeric",
            ),
            (
                "endPort defined without port defined",
                json!({"podSelector": {}, "egress": [{"ports": [{"protocol": "TCP", "endPort": 32768}]}]}),
                "spec.egress[0].ports[0].endPort: Invalid value: 32768: may not be specified when `port` is not specified",
            ),
            (
                "port is greater than endPort",
                json!({"podSelector": {}, "egress": [{"ports": [{"protocol": "SCTP", "port": 35000, "endPort": 32000}]}]}),
                "spec.egress[0].ports[0].endPort: Invalid value: 32000: must be greater than or equal to `port`",
            ),
        ];
        for (name, spec, want) in cases {
            assert_eq!(
                validate_network_policy(&np(spec), &opts()).to_string(),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn update_keeps_invalid_stored_cidrs() {
        let old = np(
            json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "192.168.5.6"}}]}]}),
        );
        let mut new = old.clone();
        new.metadata.labels = Some([("a".to_owned(), "b".to_owned())].into());
        assert!(validate_network_policy_update(&new, &old, &opts()).is_empty());
        let fresh = np(
            json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.1"}}]}]}),
        );
        assert_eq!(
            validate_network_policy_update(&fresh, &old, &opts()).len(),
            1
        );
    }

    /// `TestSetDefaultNetworkPolicy` of upstream's defaults_test.go.
    #[test]
    fn defaults_policy_types_and_protocols() {
        let cases = [
            (json!({"podSelector": {}}), vec!["Ingress"]),
            (
                json!({"podSelector": {}, "egress": [{"to": [{"podSelector": {}}]}]}),
                vec!["Ingress", "Egress"],
            ),
            (
                json!({"podSelector": {}, "policyTypes": ["Egress"]}),
                vec!["Egress"],
            ),
        ];
        for (spec, want) in cases {
            let mut p = np(spec);
            default_network_policy(&mut p);
            assert_eq!(
                p.spec.and_then(|s| s.policy_types).unwrap_or_default(),
                want
            );
        }
        let mut p = np(json!({"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]}));
        default_network_policy(&mut p);
        let proto = p
            .spec
            .and_then(|s| s.ingress)
            .and_then(|i| i.into_iter().next())
            .and_then(|r| r.ports)
            .and_then(|ps| ps.into_iter().next())
            .and_then(|port| port.protocol);
        assert_eq!(proto.as_deref(), Some("TCP"));
    }
}
