//! (placeholder — filled in by the controllers work item)

use crate::context::{Context, Task};

/// Registers the controller's handlers and returns its workers.
pub fn register(_ctx: &Context) -> Vec<Task> {
    Vec::new()
}
