//! Who a request is and what it may do, decided as kube-apiserver decides
//! it: the authenticated user ([`UserInfo`]), what the request asks
//! ([`Attributes`], upstream's `authorizer.Attributes`) and the answer
//! ([`Decision`]). Pure: the caller hands in the RBAC objects; nothing here
//! reads storage, the network or the clock.

mod attributes;
mod forbidden;
pub mod rbac;
pub mod review;
mod user;

pub use attributes::{Attributes, Decision};
pub use forbidden::{Forbidden, forbidden_message};
pub use user::{UserInfo, groups, users};
