//! `networking.k8s.io/v1`: the Ingress ([`ingress`]), IngressClass
//! ([`ingress_class`]) and NetworkPolicy ([`network_policy`]) strategies, and
//! the string formats they check ([`formats`]).

pub mod formats;
pub mod ingress;
pub mod ingress_class;
pub mod network_policy;
