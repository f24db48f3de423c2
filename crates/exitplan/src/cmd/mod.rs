//! One module per subcommand.

pub mod bench;
pub mod explain;
pub mod up;
pub mod validate;
