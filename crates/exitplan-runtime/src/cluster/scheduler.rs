//! (placeholder — filled in by the simulated cluster work item)

use crate::context::{Context, Task};

/// Registers the scheduler's handlers and returns its workers.
pub fn register(_ctx: &Context) -> Vec<Task> {
    Vec::new()
}
