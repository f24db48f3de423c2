//! One module per subcommand.

pub mod explain;
pub mod up;
pub mod validate;
