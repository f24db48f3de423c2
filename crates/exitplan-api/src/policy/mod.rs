//! policy/v1: PodDisruptionBudget validation and strategy ([`pdb`]), the pod
//! eviction subresource decision ([`eviction_subresource`], job-failure spec
//! §12) and the PDB strings both use ([`constants`]).

pub mod constants;
pub mod eviction_subresource;
pub mod pdb;
