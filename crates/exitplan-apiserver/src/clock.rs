//! The one clock (see the `exitplan-clock` crate), re-exported where the server has always had it.

pub use exitplan_clock::*;
