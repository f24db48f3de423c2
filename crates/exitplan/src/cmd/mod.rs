//! One module per subcommand.

pub mod explain;
pub mod responder;
pub mod up;
pub mod validate;
