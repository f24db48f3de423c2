//! core/v1 rules that exitplan owns: Pod `spec.evictionResponders` (eviction spec §3)
//! and the Pod strategy used by `exitplan validate` and the API server.

pub mod pod;
