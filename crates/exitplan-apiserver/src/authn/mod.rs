//! Who a request is: kube-apiserver's authentication and impersonation
//! (`k8s.io/apiserver/pkg/authentication`, `pkg/serviceaccount`,
//! `endpoints/filters/impersonation.go`).
//!
//! Every request (but the public health checks) walks, in order:
//!
//! ```text
//!  Authorization: Bearer <token>
//!    │  authenticator::Authenticator::authenticate_request
//!    │    admin token ─► kubernetes-admin (system:masters)
//!    │    service account JWT ─► jwt (ES256 signature) ─► claims::validate
//!    │    anything else ─► 401 Unauthorized
//!    ▼
//!  impersonation::impersonate (Impersonate-* headers, each part authorized
//!    │  through the Authorize hook)
//!    ▼
//!  the user handlers see (rest::state::Call::user)
//! ```
//!
//! * [`jwt`] — the signing key (0600 PEM in the data directory) and ES256
//!   compact JWS.
//! * [`claims`] — token claims and their validation (pure).
//! * [`authenticator`] — the chain and its cache of verified tokens.
//! * [`impersonation`] — `Impersonate-*` headers, the [`Authorize`] hook
//!   and the 403 text of a denied request.

pub mod authenticator;
pub mod claims;
pub mod impersonation;
pub mod jwt;

pub use authenticator::{ADMIN_USER, Authenticated, Authenticator, admin_user};
pub use impersonation::{Authorize, MastersOnly, forbidden};
pub use jwt::SigningKey;
