//! core/v1 rules that exitplan owns: Pod `spec.evictionResponders` (eviction spec §3)
//! and the Pod strategy used by `exitplan validate` and the API server
//! ([`pod`]); the well-known core strings ([`constants`]) and the pod
//! predicates other modules share ([`podutil`]).

pub mod constants;
pub mod pod;
pub mod podutil;
