//! core/v1 rules that exitplan owns: Pod `spec.evictionResponders` (eviction spec §3)
//! and the Pod strategy used by `exitplan validate` and the API server
//! ([`pod`]); the well-known core strings ([`constants`]) and the pod
//! predicates other modules share ([`podutil`]); the strategies of the simple
//! core kinds: [`namespace`], [`node`], [`event`].

pub mod constants;
pub mod event;
pub mod namespace;
pub mod node;
pub mod pod;
pub mod podutil;
