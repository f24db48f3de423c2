//! The simulated cluster: a scheduler and simulated nodes (kubelets) driven
//! by the pure decisions of `exitplan_control::simulation`.

pub mod nodes;
pub mod scheduler;
