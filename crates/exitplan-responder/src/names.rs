//! Names, label values and limits of the Eviction API the SDK relies on
//! (spec `eviction.md` §5.1, §5.4, §7.4), and the checks on a responder name.

use std::time::Duration;

use crate::Error;

/// The role label value of a responder (`<responderName>: responder`).
pub const ROLE_RESPONDER: &str = "responder";
/// The role label value of a responder that is also a requester.
pub const ROLE_REQUESTER_RESPONDER: &str = "requester-responder";

/// `TargetResponder.state` of the responder allowed to work.
pub const STATE_ACTIVE: &str = "Active";
/// Final state: the responder finished (it reported `completionTime`).
pub const STATE_COMPLETED: &str = "Completed";
/// Final state: the controller gave up on a silent responder (§7.4).
pub const STATE_INTERRUPTED: &str = "Interrupted";
/// Final state: no requester wants the eviction any more.
pub const STATE_CANCELED: &str = "Canceled";
/// Not (yet) reached.
pub const STATE_INACTIVE: &str = "Inactive";

/// Conditions that make an Eviction final once `True`.
pub const FINAL_CONDITIONS: &[&str] = &["TargetEvicted", "Failed"];

/// The controller interrupts an Active responder whose `heartbeatTime`
/// (else `startTime`) is this old (§7.4).
pub const HEARTBEAT_DEADLINE: Duration = Duration::from_secs(20 * 60);
/// The clock skew the API server tolerates on responder-written times (§5.4).
pub const ALLOWED_CLOCK_SKEW: Duration = Duration::from_secs(30);
/// The default interval of automatic heartbeats.
pub const DEFAULT_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(3 * 60);
/// Heartbeats more frequent than this load the control plane (API guidance).
pub const MIN_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(20);
/// The longest useful heartbeat interval: the deadline minus the skew.
pub const MAX_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(19 * 60);
/// `status.responders[].message` limit, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;
/// `expectedCompletionTime` may be at most this far ahead (10 × 365 days).
pub const MAX_EXPECTED_COMPLETION: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
/// The longest field manager kube-rs and kube-apiserver accept (bytes).
pub const MAX_FIELD_MANAGER: usize = 128;

/// Checks that `name` is a domain-prefixed label key (`prefix/name`: a DNS
/// subdomain ≤ 253, `/`, a qualified name ≤ 63), as the Eviction API requires
/// of responder names.
pub fn validate_responder_name(name: &str) -> Result<(), Error> {
    let invalid = |reason: &str| Error::InvalidName {
        name: name.to_owned(),
        reason: reason.to_owned(),
    };
    let Some((prefix, key)) = name.split_once('/') else {
        return Err(invalid(
            "must be a domain-prefixed key such as example.com/name",
        ));
    };
    if prefix.is_empty() || prefix.len() > 253 {
        return Err(invalid(
            "prefix must be a DNS subdomain of 1-253 characters",
        ));
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if !prefix.split('.').all(label_ok) {
        return Err(invalid(
            "prefix must be a lowercase DNS subdomain (a-z, 0-9, '-', '.')",
        ));
    }
    let alnum = |b: u8| b.is_ascii_alphanumeric();
    let key_ok = !key.is_empty()
        && key.len() <= 63
        && key
            .bytes()
            .all(|b| alnum(b) || b == b'-' || b == b'_' || b == b'.')
        && key.bytes().next().is_some_and(alnum)
        && key.bytes().last().is_some_and(alnum);
    if !key_ok {
        return Err(invalid(
            "name part must be 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric",
        ));
    }
    Ok(())
}

/// The SSA field manager for `name`: the name itself, cut to the 128 bytes
/// kube-rs and kube-apiserver accept (responder names are ASCII).
pub fn field_manager(name: &str) -> String {
    let mut end = name.len().min(MAX_FIELD_MANAGER);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_owned()
}

/// The label selector of the Evictions a responder takes part in
/// (`<name> in (responder,requester-responder)`, §7.5).
pub fn label_selector(name: &str) -> String {
    format!("{name} in ({ROLE_RESPONDER},{ROLE_REQUESTER_RESPONDER})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responder_names() {
        assert!(validate_responder_name("example.com/migrator").is_ok());
        assert!(validate_responder_name("imperative-eviction.k8s.io/evictor").is_ok());
        for bad in [
            "migrator",
            "/migrator",
            "example.com/",
            "Example.com/m",
            "example.com/-m",
            "exa_mple.com/m",
            "example.com/a/b",
        ] {
            assert!(validate_responder_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn field_manager_is_the_name_up_to_128_bytes() {
        assert_eq!(
            field_manager("example.com/migrator"),
            "example.com/migrator"
        );
        let long = format!("{}.com/x", "a".repeat(200));
        assert_eq!(field_manager(&long).len(), 128);
    }

    #[test]
    fn selector() {
        assert_eq!(
            label_selector("example.com/m"),
            "example.com/m in (responder,requester-responder)"
        );
    }
}
