//! The controllers: each registers handlers on the shared informers, feeds a
//! work queue, and runs workers that call the pure decisions of
//! `exitplan-control` and apply their plans.

pub mod disruption;
pub mod evictionrequest;
pub mod gc;
pub mod imperative;
pub mod job;
