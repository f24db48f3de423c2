//! `storage.k8s.io/v1`: the StorageClass strategy ([`storage_class`]).

pub mod storage_class;
