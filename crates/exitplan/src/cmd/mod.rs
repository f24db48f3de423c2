//! One module per subcommand.

pub mod bench;
pub mod controller;
pub mod demo;
pub mod drain;
pub mod explain;
pub mod simulate;
pub mod up;
pub mod validate;
