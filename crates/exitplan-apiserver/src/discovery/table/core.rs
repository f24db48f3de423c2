//! core/v1 kinds beyond pods, nodes, namespaces and events: upstream's
//! `printConfigMap`, `printSecret`, `printService`, `printServiceAccount`,
//! `printEndpoints`, `printPersistentVolumeClaim`, `printPersistentVolume`,
//! `printResourceQuota`, `printPodTemplate` and
//! `printReplicationController`. (LimitRange has no printer upstream; it
//! gets the default Name / Created At table.)
//!
//! Upstream prints objects its defaulting has completed; where a stored
//! object lacks a defaulted field, the cell shows the default (a Service's
//! `ClusterIP` type and `TCP` protocol, one replica).

use std::collections::BTreeSet;
use std::net::Ipv6Addr;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    ConfigMap, Endpoints, PersistentVolume, PersistentVolumeClaim, PodTemplate,
    ReplicationController, ResourceQuota, Secret, Service, ServiceAccount,
};
use serde_json::json;

use super::cells::{self, NONE};
use super::{Column, Printer, Row, decode};
use crate::discovery::openapi::describe;

const CORE: &str = "io.k8s.api.core.v1.";

fn d(definition: &str, property: &str) -> String {
    describe(&format!("{CORE}{definition}"), property)
}

/// The wide Containers column of workload printers.
pub(super) fn containers_column() -> Column {
    Column::new(
        "Containers",
        "string",
        "Names of each container in the template.".into(),
    )
    .wide()
}

/// The wide Images column of workload printers.
pub(super) fn images_column() -> Column {
    Column::new(
        "Images",
        "string",
        "Images referenced by each container in the template.".into(),
    )
    .wide()
}

/// The ConfigMap printer: NAME DATA AGE.
pub const CONFIG_MAP: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Data", "string", d("ConfigMap", "data")),
            Column::age(),
        ]
    },
    row: |v, now| {
        let cm = decode::<ConfigMap>(v)?;
        let data = cm.data.as_ref().map_or(0, |d| d.len())
            + cm.binary_data.as_ref().map_or(0, |d| d.len());
        Some(Row::from(vec![
            cells::name(&cm.metadata),
            json!(data),
            cells::age(&cm.metadata, now),
        ]))
    },
};

/// The Secret printer: NAME TYPE DATA AGE.
pub const SECRET: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Type", "string", d("Secret", "type")),
            Column::new("Data", "string", d("Secret", "data")),
            Column::age(),
        ]
    },
    row: |v, now| {
        let s = decode::<Secret>(v)?;
        Some(Row::from(vec![
            cells::name(&s.metadata),
            json!(s.type_.clone().unwrap_or_default()),
            json!(s.data.as_ref().map_or(0, |d| d.len())),
            cells::age(&s.metadata, now),
        ]))
    },
};

/// The Service printer: NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE, wide
/// SELECTOR.
pub const SERVICE: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Type", "string", d("ServiceSpec", "type")),
            Column::new("Cluster-IP", "string", d("ServiceSpec", "clusterIP")),
            Column::new("External-IP", "string", d("ServiceSpec", "externalIPs")),
            Column::new("Port(s)", "string", d("ServiceSpec", "ports")),
            Column::age(),
            Column::new("Selector", "string", d("ServiceSpec", "selector")).wide(),
        ]
    },
    row: |v, now| decode::<Service>(v).map(|s| service_row(&s, now)),
};

fn service_row(svc: &Service, now: Timestamp) -> Row {
    let spec = svc.spec.clone().unwrap_or_default();
    let ty = spec.type_.clone().unwrap_or_else(|| "ClusterIP".to_owned());
    let cluster_ip = spec
        .cluster_ips
        .as_ref()
        .and_then(|ips| ips.first().cloned())
        .or_else(|| spec.cluster_ip.clone().filter(|ip| !ip.is_empty()))
        .unwrap_or_else(|| NONE.to_owned());
    let external_ips = spec.external_ips.clone().unwrap_or_default();
    let external = match ty.as_str() {
        "ClusterIP" | "NodePort" if external_ips.is_empty() => NONE.to_owned(),
        "ClusterIP" | "NodePort" => external_ips.join(","),
        "LoadBalancer" => {
            // loadBalancerStatusStringer (wide: never clipped).
            let ingress: BTreeSet<String> = svc
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
            let mut all: Vec<String> = ingress.into_iter().collect();
            if all.is_empty() && external_ips.is_empty() {
                "<pending>".to_owned()
            } else {
                all.extend(external_ips);
                all.join(",")
            }
        }
        "ExternalName" => spec.external_name.clone().unwrap_or_default(),
        _ => "<unknown>".to_owned(),
    };
    let ports: Vec<String> = spec
        .ports
        .iter()
        .flatten()
        .map(|p| {
            let protocol = p.protocol.as_deref().unwrap_or("TCP");
            match p.node_port {
                Some(node) if node > 0 => format!("{}:{node}/{protocol}", p.port),
                _ => format!("{}/{protocol}", p.port),
            }
        })
        .collect();
    Row::from(vec![
        cells::name(&svc.metadata),
        json!(ty),
        json!(cluster_ip),
        json!(external),
        json!(cells::or_none(&ports.join(","))),
        cells::age(&svc.metadata, now),
        json!(cells::labels(spec.selector.as_ref())),
    ])
}

/// The ServiceAccount printer: NAME SECRETS AGE.
pub const SERVICE_ACCOUNT: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Secrets", "string", d("ServiceAccount", "secrets")),
            Column::age(),
        ]
    },
    row: |v, now| {
        let sa = decode::<ServiceAccount>(v)?;
        Some(Row::from(vec![
            cells::name(&sa.metadata),
            json!(sa.secrets.as_ref().map_or(0, Vec::len)),
            cells::age(&sa.metadata, now),
        ]))
    },
};

/// The Endpoints printer: NAME ENDPOINTS AGE.
pub const ENDPOINTS: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Endpoints", "string", d("Endpoints", "subsets")),
            Column::age(),
        ]
    },
    row: |v, now| {
        let ep = decode::<Endpoints>(v)?;
        Some(Row::from(vec![
            cells::name(&ep.metadata),
            json!(format_endpoints(&ep)),
            cells::age(&ep.metadata, now),
        ]))
    },
};

/// `net.JoinHostPort`: IPv6 hosts in brackets.
fn join_host_port(host: &str, port: i32) -> String {
    if host.contains(':') || host.parse::<Ipv6Addr>().is_ok() {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// `formatEndpoints` with every port: up to three `ip:port` (or bare IPs
/// of port-less subsets), then ` + N more...`; `<none>` without subsets.
fn format_endpoints(ep: &Endpoints) -> String {
    let subsets = ep.subsets.as_deref().unwrap_or_default();
    if subsets.is_empty() {
        return NONE.to_owned();
    }
    const MAX: usize = 3;
    let mut list: Vec<String> = Vec::new();
    let mut more = false;
    let mut count = 0;
    for ss in subsets {
        let addresses = ss.addresses.as_deref().unwrap_or_default();
        let ports = ss.ports.as_deref().unwrap_or_default();
        if ports.is_empty() {
            count += addresses.len();
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(a.ip.clone());
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(join_host_port(&a.ip, port.port));
            }
        }
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", count - MAX)
    } else {
        joined
    }
}

/// `GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order.
fn access_modes(modes: Option<&[String]>) -> String {
    let modes = modes.unwrap_or_default();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| modes.iter().any(|m| m == mode))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The beta storage-class annotation, which wins over the field.
const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

fn beta_class(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Option<String> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(BETA_STORAGE_CLASS))
        .cloned()
}

/// The PersistentVolumeClaim printer: NAME STATUS VOLUME CAPACITY ACCESS
/// MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE, wide VOLUMEMODE.
pub const PVC: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "Status",
                "string",
                d("PersistentVolumeClaimStatus", "phase"),
            ),
            Column::new(
                "Volume",
                "string",
                d("PersistentVolumeClaimSpec", "volumeName"),
            ),
            Column::new(
                "Capacity",
                "string",
                d("PersistentVolumeClaimStatus", "capacity"),
            ),
            Column::new(
                "Access Modes",
                "string",
                d("PersistentVolumeClaimStatus", "accessModes"),
            ),
            Column::new("StorageClass", "string", "StorageClass of the pvc".into()),
            Column::new(
                "VolumeAttributesClass",
                "string",
                "VolumeAttributesClass of the pvc".into(),
            ),
            Column::age(),
            Column::new(
                "VolumeMode",
                "string",
                d("PersistentVolumeClaimSpec", "volumeMode"),
            )
            .wide(),
        ]
    },
    row: |v, now| decode::<PersistentVolumeClaim>(v).map(|c| pvc_row(&c, now)),
};

fn pvc_row(claim: &PersistentVolumeClaim, now: Timestamp) -> Row {
    let spec = claim.spec.clone().unwrap_or_default();
    let status = claim.status.clone().unwrap_or_default();
    let phase = if claim.metadata.deletion_timestamp.is_some() {
        "Terminating".to_owned()
    } else {
        status.phase.clone().unwrap_or_default()
    };
    let volume = spec.volume_name.clone().unwrap_or_default();
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            cells::quantity(status.capacity.as_ref().and_then(|c| c.get("storage"))),
            access_modes(status.access_modes.as_deref()),
        )
    };
    let class = beta_class(&claim.metadata)
        .or(spec.storage_class_name.clone())
        .unwrap_or_default();
    Row::from(vec![
        cells::name(&claim.metadata),
        json!(phase),
        json!(volume),
        json!(capacity),
        json!(modes),
        json!(class),
        json!(
            spec.volume_attributes_class_name
                .clone()
                .unwrap_or_else(|| "<unset>".to_owned())
        ),
        cells::age(&claim.metadata, now),
        json!(
            spec.volume_mode
                .clone()
                .unwrap_or_else(|| "<unset>".to_owned())
        ),
    ])
}

/// The PersistentVolume printer: NAME CAPACITY ACCESS MODES RECLAIM POLICY
/// STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE, wide
/// VOLUMEMODE.
pub const PV: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new("Capacity", "string", d("PersistentVolumeSpec", "capacity")),
            Column::new(
                "Access Modes",
                "string",
                d("PersistentVolumeSpec", "accessModes"),
            ),
            Column::new(
                "Reclaim Policy",
                "string",
                d("PersistentVolumeSpec", "persistentVolumeReclaimPolicy"),
            ),
            Column::new("Status", "string", d("PersistentVolumeStatus", "phase")),
            Column::new("Claim", "string", d("PersistentVolumeSpec", "claimRef")),
            Column::new("StorageClass", "string", "StorageClass of the pv".into()),
            Column::new(
                "VolumeAttributesClass",
                "string",
                "VolumeAttributesClass of the pv".into(),
            ),
            Column::new("Reason", "string", d("PersistentVolumeStatus", "reason")),
            Column::age(),
            Column::new(
                "VolumeMode",
                "string",
                d("PersistentVolumeSpec", "volumeMode"),
            )
            .wide(),
        ]
    },
    row: |v, now| decode::<PersistentVolume>(v).map(|p| pv_row(&p, now)),
};

fn pv_row(pv: &PersistentVolume, now: Timestamp) -> Row {
    let spec = pv.spec.clone().unwrap_or_default();
    let status = pv.status.clone().unwrap_or_default();
    let claim = spec.claim_ref.as_ref().map_or_else(String::new, |c| {
        format!(
            "{}/{}",
            c.namespace.clone().unwrap_or_default(),
            c.name.clone().unwrap_or_default()
        )
    });
    let phase = if pv.metadata.deletion_timestamp.is_some() {
        "Terminating".to_owned()
    } else {
        status.phase.clone().unwrap_or_default()
    };
    let class = beta_class(&pv.metadata)
        .or(spec.storage_class_name.clone())
        .unwrap_or_default();
    Row::from(vec![
        cells::name(&pv.metadata),
        json!(cells::quantity(
            spec.capacity.as_ref().and_then(|c| c.get("storage"))
        )),
        json!(access_modes(spec.access_modes.as_deref())),
        json!(
            spec.persistent_volume_reclaim_policy
                .clone()
                .unwrap_or_default()
        ),
        json!(phase),
        json!(claim),
        json!(class),
        json!(
            spec.volume_attributes_class_name
                .clone()
                .unwrap_or_else(|| "<unset>".to_owned())
        ),
        json!(status.reason.clone().unwrap_or_default()),
        cells::age(&pv.metadata, now),
        json!(
            spec.volume_mode
                .clone()
                .unwrap_or_else(|| "<unset>".to_owned())
        ),
    ])
}

/// The ResourceQuota printer: NAME REQUEST LIMIT AGE, each cell the
/// `resource: used/hard` pairs of `status.hard` in name order (`limits.*`
/// in LIMIT, the rest in REQUEST).
pub const RESOURCE_QUOTA: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "Request",
                "string",
                "Request represents a minimum amount of cpu/memory that a container may consume."
                    .into(),
            ),
            Column::new(
                "Limit",
                "string",
                "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."
                    .into(),
            ),
            Column::age(),
        ]
    },
    row: |v, now| {
        let rq = decode::<ResourceQuota>(v)?;
        let status = rq.status.clone().unwrap_or_default();
        let hard = status.hard.clone().unwrap_or_default();
        let used = status.used.clone().unwrap_or_default();
        let (mut request, mut limit) = (Vec::new(), Vec::new());
        for (resource, hard) in &hard {
            let pair = format!(
                "{resource}: {}/{}",
                cells::quantity(used.get(resource)),
                cells::quantity(Some(hard))
            );
            let pieces: Vec<&str> = resource.split('.').collect();
            if pieces.len() > 1 && pieces[0] == "limits" {
                limit.push(pair);
            } else {
                request.push(pair);
            }
        }
        Some(Row::from(vec![
            cells::name(&rq.metadata),
            json!(request.join(", ")),
            json!(limit.join(", ")),
            cells::age(&rq.metadata, now),
        ]))
    },
};

/// The PodTemplate printer: NAME CONTAINERS IMAGES POD LABELS.
pub const POD_TEMPLATE: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "Containers",
                "string",
                "Names of each container in the template.".into(),
            ),
            Column::new(
                "Images",
                "string",
                "Images referenced by each container in the template.".into(),
            ),
            Column::new(
                "Pod Labels",
                "string",
                "The labels for the pod template.".into(),
            ),
        ]
    },
    row: |v, _now| {
        let pt = decode::<PodTemplate>(v)?;
        let (names, images) = cells::containers(pt.template.as_ref());
        let labels = pt
            .template
            .as_ref()
            .and_then(|t| t.metadata.as_ref())
            .and_then(|m| m.labels.as_ref());
        Some(Row::from(vec![
            cells::name(&pt.metadata),
            json!(names),
            json!(images),
            json!(cells::labels(labels)),
        ]))
    },
};

/// The ReplicationController printer: NAME DESIRED CURRENT READY AGE, wide
/// CONTAINERS IMAGES SELECTOR.
pub const REPLICATION_CONTROLLER: Printer = Printer {
    columns: || {
        vec![
            Column::name(),
            Column::new(
                "Desired",
                "integer",
                d("ReplicationControllerSpec", "replicas"),
            ),
            Column::new(
                "Current",
                "integer",
                d("ReplicationControllerStatus", "replicas"),
            ),
            Column::new(
                "Ready",
                "integer",
                d("ReplicationControllerStatus", "readyReplicas"),
            ),
            Column::age(),
            containers_column(),
            images_column(),
            Column::new(
                "Selector",
                "string",
                d("ReplicationControllerSpec", "selector"),
            )
            .wide(),
        ]
    },
    row: |v, now| {
        let rc = decode::<ReplicationController>(v)?;
        let spec = rc.spec.clone().unwrap_or_default();
        let status = rc.status.clone().unwrap_or_default();
        let (names, images) = cells::containers(spec.template.as_ref());
        Some(Row::from(vec![
            cells::name(&rc.metadata),
            json!(spec.replicas.unwrap_or(1)),
            json!(status.replicas),
            json!(status.ready_replicas.unwrap_or(0)),
            cells::age(&rc.metadata, now),
            json!(names),
            json!(images),
            json!(cells::labels(spec.selector.as_ref())),
        ]))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn now() -> Timestamp {
        "2026-01-03T00:00:00Z".parse().expect("time")
    }

    fn cells_of(p: Printer, v: Value) -> Vec<Value> {
        (p.row)(&v, now()).expect("decodes").cells
    }

    #[test]
    fn config_maps_and_secrets_count_their_keys() {
        assert_eq!(
            cells_of(
                CONFIG_MAP,
                json!({"metadata": {"name": "cm", "creationTimestamp": "2026-01-02T23:00:00Z"},
                       "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}})
            ),
            vec![json!("cm"), json!(3), json!("60m")]
        );
        assert_eq!(
            cells_of(CONFIG_MAP, json!({"metadata": {"name": "empty"}})),
            vec![json!("empty"), json!(0), json!("<unknown>")]
        );
        assert_eq!(
            cells_of(
                SECRET,
                json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {"k": "dg=="}})
            ),
            vec![json!("s"), json!("Opaque"), json!(1), json!("<unknown>")]
        );
        assert_eq!(
            cells_of(
                SERVICE_ACCOUNT,
                json!({"metadata": {"name": "default"}, "secrets": [{"name": "a"}, {"name": "b"}]})
            )[1],
            json!(2)
        );
    }

    /// Upstream `TestPrintService`, `TestPrintServiceLoadBalancer`.
    #[test]
    fn services() {
        let cases = [
            (
                "ClusterIP with ports and a node port",
                json!({"type": "ClusterIP", "clusterIPs": ["10.9.8.7"],
                       "ports": [{"protocol": "TCP", "port": 2233}, {"protocol": "UDP", "port": 53, "nodePort": 30053}],
                       "selector": {"foo": "bar"}}),
                json!({}),
                [
                    "ClusterIP",
                    "10.9.8.7",
                    "<none>",
                    "2233/TCP,53:30053/UDP",
                    "foo=bar",
                ],
            ),
            (
                "NodePort with external IPs",
                json!({"type": "NodePort", "clusterIPs": ["10.9.8.7"], "externalIPs": ["80.11.12.10", "80.11.12.11"],
                       "ports": [{"protocol": "TCP", "port": 8888, "nodePort": 9999}]}),
                json!({}),
                [
                    "NodePort",
                    "10.9.8.7",
                    "80.11.12.10,80.11.12.11",
                    "8888:9999/TCP",
                    "<none>",
                ],
            ),
            (
                "LoadBalancer pending",
                json!({"type": "LoadBalancer", "clusterIPs": ["10.9.8.7"], "ports": [{"protocol": "TCP", "port": 8888}]}),
                json!({}),
                [
                    "LoadBalancer",
                    "10.9.8.7",
                    "<pending>",
                    "8888/TCP",
                    "<none>",
                ],
            ),
            (
                "LoadBalancer with ingress and external IPs",
                json!({"type": "LoadBalancer", "clusterIPs": ["10.9.8.7"], "externalIPs": ["80.11.12.10"],
                       "ports": [{"protocol": "TCP", "port": 8888}]}),
                json!({"loadBalancer": {"ingress": [{"ip": "3.4.5.6"}, {"hostname": "lb.example.com"}, {"ip": "2.3.4.5"}]}}),
                [
                    "LoadBalancer",
                    "10.9.8.7",
                    "2.3.4.5,3.4.5.6,lb.example.com,80.11.12.10",
                    "8888/TCP",
                    "<none>",
                ],
            ),
            (
                "ExternalName, no ports, no cluster IP",
                json!({"type": "ExternalName", "externalName": "my.database.example.com"}),
                json!({}),
                [
                    "ExternalName",
                    "<none>",
                    "my.database.example.com",
                    "<none>",
                    "<none>",
                ],
            ),
            (
                "type and protocol defaulted, only clusterIP",
                json!({"clusterIP": "10.0.0.1", "ports": [{"port": 80}]}),
                json!({}),
                ["ClusterIP", "10.0.0.1", "<none>", "80/TCP", "<none>"],
            ),
        ];
        for (name, spec, status, want) in cases {
            let c = cells_of(
                SERVICE,
                json!({"metadata": {"name": "svc"}, "spec": spec, "status": status}),
            );
            let got: Vec<Value> = [&c[1], &c[2], &c[3], &c[4], &c[6]]
                .into_iter()
                .cloned()
                .collect();
            let want: Vec<Value> = want.iter().map(|s| json!(s)).collect();
            assert_eq!(got, want, "{name}");
        }
    }

    /// Upstream `TestPrintEndpoint`.
    #[test]
    fn endpoints() {
        let cases = [
            ("no subsets", json!([]), "<none>"),
            (
                "single port",
                json!([{"addresses": [{"ip": "1.2.3.4"}, {"ip": "5.6.7.8"}], "ports": [{"port": 8001, "protocol": "TCP"}]}]),
                "1.2.3.4:8001,5.6.7.8:8001",
            ),
            (
                "no ports",
                json!([{"addresses": [{"ip": "1.2.3.4"}, {"ip": "5.6.7.8"}]}]),
                "1.2.3.4,5.6.7.8",
            ),
            (
                "more than three",
                json!([
                    {"addresses": [{"ip": "1.2.3.4"}, {"ip": "5.6.7.8"}],
                     "ports": [{"port": 8001, "protocol": "TCP"}, {"port": 8002, "protocol": "TCP"}, {"port": 8003, "protocol": "TCP"}]},
                    {"addresses": [{"ip": "9.8.7.6"}, {"ip": "5.4.3.2"}, {"ip": "1.1.1.1"}],
                     "ports": [{"port": 8001, "protocol": "TCP"}, {"port": 8002, "protocol": "TCP"}, {"port": 8003, "protocol": "TCP"}]}
                ]),
                "1.2.3.4:8001,5.6.7.8:8001,1.2.3.4:8002 + 12 more...",
            ),
            (
                "ipv6",
                json!([{"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 80}]}]),
                "[fd00::1]:80",
            ),
        ];
        for (name, subsets, want) in cases {
            let c = cells_of(
                ENDPOINTS,
                json!({"metadata": {"name": "ep"}, "subsets": subsets}),
            );
            assert_eq!(c[1], json!(want), "{name}");
        }
    }

    /// Upstream `TestPrintPersistentVolume`, `TestPrintPersistentVolumeClaim`.
    #[test]
    fn volumes_and_claims() {
        let pv = cells_of(
            PV,
            json!({"metadata": {"name": "test1"},
                   "spec": {"claimRef": {"name": "test", "namespace": "default"},
                            "accessModes": ["ReadOnlyMany", "ReadWriteOnce"],
                            "capacity": {"storage": "4Gi"}, "persistentVolumeReclaimPolicy": "Retain",
                            "storageClassName": "fast", "volumeMode": "Filesystem"},
                   "status": {"phase": "Bound", "reason": "r"}}),
        );
        let want: Vec<Value> = [
            "test1",
            "4Gi",
            "RWO,ROX",
            "Retain",
            "Bound",
            "default/test",
            "fast",
            "<unset>",
            "r",
            "<unknown>",
            "Filesystem",
        ]
        .iter()
        .map(|s| json!(s))
        .collect();
        assert_eq!(pv, want);
        let deleting = cells_of(
            PV,
            json!({"metadata": {"name": "test2", "deletionTimestamp": "2026-01-01T00:00:00Z",
                                "annotations": {BETA_STORAGE_CLASS: "beta"}},
                   "spec": {"storageClassName": "fast", "volumeAttributesClassName": "gold"},
                   "status": {"phase": "Released"}}),
        );
        assert_eq!(
            (
                &deleting[1],
                &deleting[4],
                &deleting[5],
                &deleting[6],
                &deleting[7],
                &deleting[10]
            ),
            (
                &json!("0"),
                &json!("Terminating"),
                &json!(""),
                &json!("beta"),
                &json!("gold"),
                &json!("<unset>")
            )
        );

        let bound = cells_of(
            PVC,
            json!({"metadata": {"name": "test1"},
                   "spec": {"volumeName": "my-volume", "storageClassName": "fast",
                            "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Block"},
                   "status": {"phase": "Bound", "accessModes": ["ReadOnlyMany"], "capacity": {"storage": "4Gi"}}}),
        );
        let want: Vec<Value> = [
            "test1",
            "Bound",
            "my-volume",
            "4Gi",
            "ROX",
            "fast",
            "<unset>",
            "<unknown>",
            "Block",
        ]
        .iter()
        .map(|s| json!(s))
        .collect();
        assert_eq!(bound, want);
        let pending = cells_of(
            PVC,
            json!({"metadata": {"name": "test2"},
                   "spec": {"resources": {"requests": {"storage": "1Gi"}}},
                   "status": {"phase": "Pending", "accessModes": ["ReadWriteOncePod"], "capacity": {"storage": "1Gi"}}}),
        );
        assert_eq!(
            (
                &pending[1],
                &pending[2],
                &pending[3],
                &pending[4],
                &pending[5]
            ),
            (
                &json!("Pending"),
                &json!(""),
                &json!(""),
                &json!(""),
                &json!("")
            )
        );
    }

    /// Upstream `TestPrintResourceQuota`.
    #[test]
    fn resource_quotas() {
        let c = cells_of(
            RESOURCE_QUOTA,
            json!({"metadata": {"name": "q", "creationTimestamp": "2026-01-02T23:59:00Z"},
                   "status": {
                     "hard": {"cpu": "1", "memory": "1Gi", "limits.cpu": "2", "limits.memory": "2Gi",
                              "requests.cpu": "500m", "pods": "10"},
                     "used": {"cpu": "200m", "memory": "512Mi", "limits.cpu": "1", "pods": "3"}}}),
        );
        assert_eq!(
            c,
            vec![
                json!("q"),
                json!("cpu: 200m/1, memory: 512Mi/1Gi, pods: 3/10, requests.cpu: 0/500m"),
                json!("limits.cpu: 1/2, limits.memory: 0/2Gi"),
                json!("60s")
            ]
        );
    }

    /// Upstream `TestPrintPodTemplate`, `TestPrintReplicationController`.
    #[test]
    fn pod_templates_and_replication_controllers() {
        let pt = cells_of(
            POD_TEMPLATE,
            json!({"metadata": {"name": "pod-template-1"},
                   "template": {"metadata": {"labels": {"b": "2", "a": "1"}},
                                "spec": {"containers": [{"name": "fake-container1", "image": "fake-image1"},
                                                        {"name": "fake-container2", "image": "fake-image2"}]}}}),
        );
        assert_eq!(
            pt,
            vec![
                json!("pod-template-1"),
                json!("fake-container1,fake-container2"),
                json!("fake-image1,fake-image2"),
                json!("a=1,b=2")
            ]
        );
        assert_eq!(
            cells_of(POD_TEMPLATE, json!({"metadata": {"name": "t"}}))[3],
            json!("<none>")
        );
        let rc = cells_of(
            REPLICATION_CONTROLLER,
            json!({"metadata": {"name": "rc1"},
                   "spec": {"replicas": 5, "selector": {"a": "b"},
                            "template": {"spec": {"containers": [{"name": "test", "image": "test_image"}]}}},
                   "status": {"replicas": 3, "readyReplicas": 1}}),
        );
        assert_eq!(
            rc,
            vec![
                json!("rc1"),
                json!(5),
                json!(3),
                json!(1),
                json!("<unknown>"),
                json!("test"),
                json!("test_image"),
                json!("a=b")
            ]
        );
    }
}
