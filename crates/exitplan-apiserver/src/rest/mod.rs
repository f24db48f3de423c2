//! The HTTP API: routing, authentication, handlers for every verb and
//! subresource, and `Status` errors.
//!
//! (filled in by the REST work item)
