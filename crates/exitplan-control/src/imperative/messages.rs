//! The evictor's user-visible `status.responders[].message` texts (spec §8),
//! the `(attempts=N)` parser, and the 4000-byte truncation.
//!
//! The texts reproduce upstream byte for byte, including the doubled
//! "been" of the "marked for deletion" messages (spec §11 #19) and Go's `%q`
//! quoting of the pod name and phase.

use exitplan_api::field::go_quote;
use exitplan_api::lifecycle::constants::MAX_RESPONDER_MESSAGE;

/// Substring of the previous message that shows the pod was marked for
/// deletion by this responder's own `/eviction` call; it selects the
/// " via the /eviction subresource" variant of [`pod_terminating`].
pub const MARKED_VIA_EVICTION: &str =
    "pod has been been marked for deletion via the /eviction subresource";

/// The pod is missing, or was replaced (its UID differs from the target's).
pub fn pod_deleted(pod_name: &str) -> String {
    format!(
        "{} pod has been deleted and fully terminated",
        go_quote(pod_name)
    )
}

/// The pod has a deletionTimestamp and reached a terminal phase.
pub fn pod_deleted_terminal(pod_name: &str, phase: &str) -> String {
    format!(
        "{} pod has been deleted and fully terminated (pod phase={})",
        go_quote(pod_name),
        go_quote(phase)
    )
}

/// The pod has a deletionTimestamp and is still running. `via_eviction`
/// adds " via the /eviction subresource" (when [`MARKED_VIA_EVICTION`] is in
/// the previous message).
pub fn pod_terminating(pod_name: &str, via_eviction: bool) -> String {
    let via = if via_eviction {
        " via the /eviction subresource"
    } else {
        ""
    };
    format!(
        "{} pod has been been marked for deletion{via} and is being terminated gracefully",
        go_quote(pod_name)
    )
}

/// The pod reached a terminal phase without being deleted.
pub fn pod_terminal(pod_name: &str, phase: &str) -> String {
    format!(
        "{} pod has been fully terminated (pod phase={})",
        go_quote(pod_name),
        go_quote(phase)
    )
}

/// The `/eviction` call failed; `attempts` counts this failure too.
pub fn eviction_failed(pod_name: &str, attempts: u64, error_message: &str) -> String {
    format!(
        "{} pod deletion via the /eviction subresource failed (attempts={attempts}): {error_message}",
        go_quote(pod_name)
    )
}

/// The `/eviction` call succeeded.
pub fn eviction_succeeded(pod_name: &str) -> String {
    format!(
        "{} pod has been been marked for deletion via the /eviction subresource and will be terminated gracefully",
        go_quote(pod_name)
    )
}

/// The number of failed attempts recorded in a message: the digits of the
/// first match of `\(attempts=(\d+)\)` parsed as `u64`; `0` when there is no
/// match or the number does not fit (upstream `getRecordedAttempts`).
pub fn recorded_attempts(message: &str) -> u64 {
    const OPEN: &str = "(attempts=";
    let mut from = 0;
    while let Some(found) = message.get(from..).and_then(|rest| rest.find(OPEN)) {
        let start = from + found;
        let digits_from = start + OPEN.len();
        let rest = message.get(digits_from..).unwrap_or("");
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest.as_bytes().get(digits) == Some(&b')') {
            // The leftmost match decides, even when its number overflows.
            return rest
                .get(..digits)
                .and_then(|d| d.parse::<u64>().ok())
                .unwrap_or(0);
        }
        // Try the next occurrence (a regex would restart one byte later;
        // `(` cannot start inside "(attempts=" again before its end).
        from = start + 1;
    }
    0
}

/// `message` cut to at most [`MAX_RESPONDER_MESSAGE`] characters. Upstream
/// slices bytes (`message[:4000]`), which can split a UTF-8 sequence; the spec
/// (§8 step 3, §11 #20) counts the limit in characters and cuts on a character
/// boundary, which is what status validation accepts.
pub fn truncate_message(mut message: String) -> String {
    if let Some((end, _)) = message.char_indices().nth(MAX_RESPONDER_MESSAGE) {
        message.truncate(end);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(go_quote("foo.pod"), "\"foo.pod\"");
        assert_eq!(go_quote(""), "\"\"");
        assert_eq!(go_quote("a\"b\\c\n\u{7f}"), "\"a\\\"b\\\\c\\n\\x7f\"");
        assert_eq!(go_quote("\u{a0}é"), "\"\\u00a0é\"");
    }

    #[test]
    fn truncates_to_4000_characters() {
        let ascii = "a".repeat(MAX_RESPONDER_MESSAGE + 10);
        assert_eq!(truncate_message(ascii).len(), MAX_RESPONDER_MESSAGE);
        let wide = "é".repeat(MAX_RESPONDER_MESSAGE + 1);
        let cut = truncate_message(wide);
        assert_eq!(cut.chars().count(), MAX_RESPONDER_MESSAGE);
        assert_eq!(cut.len(), 2 * MAX_RESPONDER_MESSAGE);
        let short = "é".repeat(10);
        assert_eq!(truncate_message(short.clone()), short);
    }

    #[test]
    fn attempts_leftmost_match() {
        assert_eq!(recorded_attempts("(attempts=(attempts=5)"), 5);
        assert_eq!(recorded_attempts("(attempts=3) (attempts=9)"), 3);
        assert_eq!(recorded_attempts("(attempts=)"), 0);
        assert_eq!(recorded_attempts("(attempts=4"), 0);
        assert_eq!(recorded_attempts("é(attempts=2)é"), 2);
        assert_eq!(recorded_attempts("(attempts=١)"), 0);
    }
}
