//! (placeholder — filled in with its spec section's cases)
