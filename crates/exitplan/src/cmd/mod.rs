//! One module per subcommand, and the argument parsers they share.

use std::time::Duration;

pub mod bench;
pub mod controller;
pub mod demo;
pub mod drain;
pub mod explain;
pub mod responder;
pub mod simulate;
pub mod up;
pub mod validate;

/// Parses `2s`, `10m`, `1h30m` (and jiff's other friendly/ISO 8601 forms).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d: jiff::SignedDuration = s
        .parse()
        .map_err(|e| format!("invalid duration {s:?}: {e}"))?;
    Duration::try_from(d).map_err(|_| format!("invalid duration {s:?}: must not be negative"))
}
