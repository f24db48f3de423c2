//! The errors of the SDK.

use crate::StopReason;

/// What can go wrong for a responder.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The responder name is not a domain-prefixed label key (`example.com/name`),
    /// which the Eviction API requires (and the label selector needs).
    #[error("invalid responder name {name:?}: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// Why it is not accepted.
        reason: String,
    },
    /// A message longer than the API's limit (`status.responders[].message`: 4000 characters).
    #[error("message has {len} characters, at most {max} are allowed")]
    MessageTooLong {
        /// Characters in the message.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The responder is no longer Active on this Eviction (or the Eviction is
    /// gone or finished): writes are refused, the work should stop.
    #[error("responder {responder} is no longer active on eviction {eviction}: {reason}")]
    NotActive {
        /// The responder's name.
        responder: String,
        /// `namespace/name` of the Eviction.
        eviction: String,
        /// Why.
        reason: StopReason,
    },
    /// [`ActiveEviction::complete`](crate::ActiveEviction::complete) was already
    /// called: `completionTime` is immutable, nothing more may be reported.
    #[error("responder {responder} already completed eviction {eviction}")]
    AlreadyCompleted {
        /// The responder's name.
        responder: String,
        /// `namespace/name` of the Eviction.
        eviction: String,
    },
    /// The API server refused or failed a request.
    #[error("API request failed: {0}")]
    Kube(#[from] kube::Error),
    /// Building a request body failed (not expected to happen).
    #[error("encoding the status patch: {0}")]
    Encode(#[from] serde_json::Error),
}
