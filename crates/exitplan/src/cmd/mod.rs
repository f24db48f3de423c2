//! One module per subcommand.

pub mod demo;
pub mod explain;
pub mod simulate;
pub mod up;
pub mod validate;
