//! (placeholder — filled in by the simulated cluster work item)

use crate::context::{Context, Task};

/// Registers the simulated node `name` and returns its workers.
pub fn register(_ctx: &Context, _name: &str) -> Vec<Task> {
    Vec::new()
}
