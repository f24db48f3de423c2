//! The one error type of the crate.

use std::time::Duration;

/// Why a [`TestEnv`](crate::TestEnv) could not start or a CRD could not be
/// installed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The in-memory store could not be made.
    #[error("creating the in-memory store: {0}")]
    Store(#[from] exitplan_apiserver::storage::StorageError),
    /// The API server could not start.
    #[error("starting the API server: {0}")]
    Server(#[from] exitplan_apiserver::server::ServerError),
    /// `listen()`: binding `127.0.0.1:0` failed.
    #[error("listening on 127.0.0.1: {0}")]
    Listen(#[source] std::io::Error),
    /// `listen()`: the certificate or TLS configuration could not be made.
    #[error("preparing TLS for the listener: {0}")]
    Tls(#[from] exitplan_apiserver::tls::TlsError),
    /// `listen()`: the bearer token could not be made (no OS random source).
    #[error("making the bearer token: {0}")]
    Token(String),
    /// `listen()`: the kubeconfig (or its directory) could not be written.
    #[error("writing the kubeconfig {path}: {source}")]
    Kubeconfig {
        /// The file.
        path: std::path::PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The API server refused the CustomResourceDefinition (an invalid CRD
    /// gets kube-apiserver's 422 `Invalid` with its field causes).
    #[error("CustomResourceDefinition {name:?} was refused ({code} {reason}): {message}")]
    CrdRefused {
        /// The CRD's `metadata.name`.
        name: String,
        /// The HTTP status code.
        code: u16,
        /// The Status reason (`Invalid`, `AlreadyExists`, `NotFound`, …).
        reason: String,
        /// The Status message, as kubectl would print it.
        message: String,
    },
    /// The CRD's names conflict with another's: it never becomes
    /// `Established` (condition `NamesAccepted=False`).
    #[error("CustomResourceDefinition {name:?} names were not accepted ({reason}): {message}")]
    CrdNamesNotAccepted {
        /// The CRD's `metadata.name`.
        name: String,
        /// The condition's reason.
        reason: String,
        /// The condition's message.
        message: String,
    },
    /// The CRD was created but did not become `Established` (or its
    /// resources were not served) in time.
    #[error("CustomResourceDefinition {name:?} not ready after {timeout:?}: {state}")]
    CrdNotReady {
        /// The CRD's `metadata.name`.
        name: String,
        /// How long it was waited for.
        timeout: Duration,
        /// What was last seen (its conditions, or the resource not served).
        state: String,
    },
    /// A CRD has no `metadata.name` (`CustomResourceExt::crd()` always sets one).
    #[error("a CustomResourceDefinition has no metadata.name")]
    CrdUnnamed,
    /// Another request to the API server failed.
    #[error("API request failed: {0}")]
    Api(#[from] kube::Error),
}
