//! apps/v1 workloads: defaulting, validation and registry strategies —
//! upstream's `pkg/apis/apps/{v1,validation}` and `pkg/registry/apps/*`.
//!
//! * [`defaults`] — `SetDefaults_Deployment`, `_ReplicaSet`,
//!   `_StatefulSet`, `_DaemonSet` and the pod defaults of their templates;
//! * [`workload`] — the rules the workload kinds share (selectors that must
//!   match the template labels, the pod template through the Pod rules,
//!   int-or-percent fields, status counters);
//! * one file per kind with its validation and strategy: [`deployment`],
//!   [`replica_set`], [`stateful_set`], [`daemon_set`],
//!   [`controller_revision`];
//! * [`scale`] — the `scale` subresource of Deployments, ReplicaSets,
//!   StatefulSets and ReplicationControllers.
//!
//! Every feature gate is treated as on. Upstream validates the internal
//! types after the v1 defaults ran; exitplan validates the v1 types after
//! the same defaults, reading an unset optional as Go's zero value.

pub mod controller_revision;
pub mod daemon_set;
pub mod defaults;
pub mod deployment;
pub mod replica_set;
pub mod scale;
pub mod stateful_set;
pub mod workload;

pub use controller_revision::ControllerRevisionStrategy;
pub use daemon_set::DaemonSetStrategy;
pub use deployment::DeploymentStrategy;
pub use replica_set::ReplicaSetStrategy;
pub use stateful_set::StatefulSetStrategy;
