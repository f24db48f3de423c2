//! (placeholder — filled in by the eviction subresource work)
