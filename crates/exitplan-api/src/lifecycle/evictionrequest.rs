//! (placeholder — filled in by the lifecycle validation work)
