//! One module per subcommand.

pub mod bench;
pub mod controller;
pub mod drain;
pub mod explain;
pub mod up;
pub mod validate;
