//! The pod eviction subresource, `POST pods/{name}/eviction` (job-failure
//! spec §12), as a pure decision the API server drives.
//!
//! * [`machine`] — [`begin`] → [`Step`]: either the final [`Answer`] or an
//!   [`Action`] (read pod / PDB, write PDB status, write pod status, delete
//!   pod) to perform and [`Pending::resume`] with its [`Outcome`].
//! * [`options`] — the request, name check, dry-run merge, precondition helpers.
//! * [`budget`] — covering PDBs, unhealthy-pod rules, `checkAndDecrement`.
//! * [`pod_update`] — preconditions on the latest pod, the `DisruptionTarget` condition.
//! * [`answer`] — the exact `Status` answers (codes, reasons, causes, `Retry-After`).

pub mod answer;
pub mod budget;
pub mod machine;
pub mod options;
pub mod pod_update;

pub use answer::Answer;
pub use machine::{Action, Outcome, Pending, Step, begin};
pub use options::EvictionRequest;
