//! What a simulated node reports about itself: a `Ready` condition with a
//! fresh heartbeat, capacity and allocatable (pods, cpu, memory), addresses
//! and node info. Written at registration and then periodically.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{NodeAddress, NodeCondition, NodeStatus, NodeSystemInfo};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use exitplan_api::time::mtime;

/// How often a simulated node refreshes its `Ready` heartbeat.
pub const HEARTBEAT_INTERVAL: SignedDuration = SignedDuration::from_secs(40);

/// The status a healthy simulated node reports at `now`, keeping the
/// transition time of an unchanged `Ready` condition from `previous`.
pub fn node_status(
    name: &str,
    index: usize,
    max_pods: usize,
    previous: Option<&NodeStatus>,
    now: Timestamp,
) -> NodeStatus {
    let since = previous
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready" && c.status == "True"))
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| mtime(now));
    let resources: BTreeMap<String, Quantity> = [
        ("cpu".to_owned(), Quantity("8".to_owned())),
        ("memory".to_owned(), Quantity("32Gi".to_owned())),
        ("pods".to_owned(), Quantity(max_pods.to_string())),
    ]
    .into();
    NodeStatus {
        conditions: Some(vec![NodeCondition {
            type_: "Ready".to_owned(),
            status: "True".to_owned(),
            reason: Some("KubeletReady".to_owned()),
            message: Some("kubelet is posting ready status".to_owned()),
            last_heartbeat_time: Some(mtime(now)),
            last_transition_time: Some(since),
        }]),
        capacity: Some(resources.clone()),
        allocatable: Some(resources),
        addresses: Some(vec![
            NodeAddress {
                type_: "InternalIP".to_owned(),
                address: format!("10.0.{}.{}", index / 250, index % 250 + 1),
            },
            NodeAddress {
                type_: "Hostname".to_owned(),
                address: name.to_owned(),
            },
        ]),
        node_info: Some(NodeSystemInfo {
            architecture: "amd64".to_owned(),
            container_runtime_version: "exitplan-sim://1".to_owned(),
            kubelet_version: "v1.37.0-exitplan".to_owned(),
            operating_system: "linux".to_owned(),
            os_image: "exitplan simulated node".to_owned(),
            ..Default::default()
        }),
        ..Default::default()
    }
}
