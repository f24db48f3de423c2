//! `discovery.k8s.io/v1`: EndpointSlice validation and strategy
//! ([`endpoint_slice`]).

pub mod endpoint_slice;
