//! `scheduling.k8s.io/v1`: the PriorityClass strategy, the system priority
//! classes kube-apiserver creates at startup and the one-global-default rule
//! of the `Priority` admission plugin ([`priority_class`]).

pub mod priority_class;
