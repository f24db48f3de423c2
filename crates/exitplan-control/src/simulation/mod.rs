//! Decisions of the simulated cluster: which node a pending pod is bound to
//! ([`scheduler`]), how a simulated node runs its pods through their lifecycle
//! ([`kubelet`], scripted per pod by annotations — [`script`]), and what a
//! simulated node reports about itself ([`node`]).
//!
//! Like every decision in this crate they are pure: the pod, node and `now`
//! go in; the status to write, the binding to create, or the deletion to
//! confirm come out, with the time to look again. Container lifetimes are
//! derived from the timestamps already in the pod's status, so a node that
//! restarts (or syncs late) resumes exactly where it was.

pub mod kubelet;
pub mod node;
pub mod scheduler;
pub mod script;
