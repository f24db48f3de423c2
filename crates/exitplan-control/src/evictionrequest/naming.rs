//! Names of new Evictions (§7.6, upstream `newEvictionName`).
//!
//! `pod-<n>-<podName>`, truncated to 253 bytes, where `n` is one more than
//! the highest counter among the namespace's Evictions whose name matches
//! upstream's regular expression `pod-([0-9]+)-(.*)$` for this pod name. The
//! expression is hand-parsed here with Go's RE2 semantics:
//!
//! * not anchored at the start: the **leftmost** `pod-<digits>-` occurrence
//!   that leads to a match is used (`xpod-2-foo` counts as counter 2 of `foo`);
//! * `[0-9]+` is ASCII digits; it is always the maximal digit run, because it
//!   must be followed by `-`;
//! * `(.*)$` takes the rest of the name, which must not contain `\n` (`.` does
//!   not match a newline and `$` is the end of the text);
//! * a counter that does not fit Go's `int` (`strconv.Atoi` fails) is ignored.
//!
//! The name part must equal the pod name, or — when the existing name is
//! exactly 253 bytes long, i.e. was truncated — be a prefix of it, so long
//! pod names can share one counter space. Gaps are never filled.

use exitplan_api::formats::DNS1123_SUBDOMAIN_MAX_LENGTH;
use exitplan_api::lifecycle::constants::EVICTION_NAME_POD_PREFIX;

/// The name for a new Eviction of pod `pod_name`, given the names of all
/// Evictions in the namespace; `None` for an empty pod name (upstream returns
/// `""`, which the API server would reject).
pub fn new_eviction_name<'a>(
    pod_name: &str,
    existing: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    if pod_name.is_empty() {
        return None;
    }
    let mut counter: i64 = 0;
    for name in existing {
        let Some((digits, name_part)) = match_eviction_name(name) else {
            continue;
        };
        let matches_name = name_part == pod_name
            || (name.len() == DNS1123_SUBDOMAIN_MAX_LENGTH && pod_name.starts_with(name_part));
        if !matches_name {
            continue;
        }
        if let Ok(n) = digits.parse::<i64>()
            && n > counter
        {
            counter = n;
        }
    }
    // Go's `int` wraps on overflow; reproduce rather than panic.
    let mut out = format!(
        "{EVICTION_NAME_POD_PREFIX}{}-{pod_name}",
        counter.wrapping_add(1)
    );
    if out.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        let mut end = DNS1123_SUBDOMAIN_MAX_LENGTH;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
    Some(out)
}

/// The index key under which an Eviction named `name` in `namespace` is
/// filed so that [`name_index_keys`] finds every Eviction that
/// [`new_eviction_name`] could count for a pod: `"<ns>/<name part>"`, or,
/// for a 253-byte (possibly truncated) name, whose name part may be a mere
/// prefix of the pod name, the namespace's one bucket of such names.
/// `None` for a name that never counts.
pub fn eviction_name_index_key(namespace: &str, name: &str) -> Option<String> {
    let (_, name_part) = match_eviction_name(name)?;
    Some(if name.len() == DNS1123_SUBDOMAIN_MAX_LENGTH {
        long_names_key(namespace)
    } else {
        format!("{namespace}/{name_part}")
    })
}

/// The index keys to look up for a new Eviction of pod `pod_name` in
/// `namespace` (see [`eviction_name_index_key`]): the Evictions filed under
/// them are a superset of the names [`new_eviction_name`] counts, so passing
/// only those gives the same name as passing the whole namespace.
pub fn name_index_keys(namespace: &str, pod_name: &str) -> [String; 2] {
    [format!("{namespace}/{pod_name}"), long_names_key(namespace)]
}

/// The bucket of a namespace's 253-byte Eviction names (`\n` cannot occur in
/// a name part that matches, so this never collides with a pod's key).
fn long_names_key(namespace: &str) -> String {
    format!("{namespace}/\n253")
}

/// `(counter digits, name part)` of the leftmost match of `pod-([0-9]+)-(.*)$`.
fn match_eviction_name(name: &str) -> Option<(&str, &str)> {
    let mut from = 0;
    while let Some(offset) = name.get(from..)?.find(EVICTION_NAME_POD_PREFIX) {
        let start = from + offset;
        let after_prefix = start + EVICTION_NAME_POD_PREFIX.len();
        let rest = name.get(after_prefix..)?;
        let digits_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits_len > 0 && rest.as_bytes().get(digits_len) == Some(&b'-') {
            let tail = rest.get(digits_len + 1..)?;
            if !tail.contains('\n') {
                return Some((rest.get(..digits_len)?, tail));
            }
        }
        // "pod-" is ASCII, so start + 1 is a char boundary.
        from = start + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftmost_match_wins() {
        assert_eq!(match_eviction_name("xpod-2-foo"), Some(("2", "foo")));
        assert_eq!(match_eviction_name("pod-pod-3-x"), Some(("3", "x")));
        assert_eq!(
            match_eviction_name("pod-12-pod-3-x"),
            Some(("12", "pod-3-x"))
        );
        assert_eq!(match_eviction_name("pod-1a-foo"), None);
        assert_eq!(match_eviction_name("pod--foo"), None);
        assert_eq!(match_eviction_name("pod-1-"), Some(("1", "")));
        assert_eq!(match_eviction_name("pod-1-a\nb"), None);
        assert_eq!(match_eviction_name("pod-1-a\npod-2-b"), Some(("2", "b")));
    }

    /// Names built to hit the matcher's corners: prefixes, long digit runs,
    /// truncation at 253 bytes, newlines.
    fn arb_name() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let part = prop_oneof![
            Just("foo".to_owned()),
            Just("fo".to_owned()),
            Just("x".repeat(240)),
            Just("x".repeat(230)),
            "[a-z0-9.-]{0,12}",
        ];
        (
            prop_oneof![
                Just(String::new()),
                Just("x".to_owned()),
                Just("pod-".to_owned())
            ],
            prop_oneof![Just("pod-".to_owned()), Just("pod".to_owned())],
            "[0-9]{0,22}",
            prop_oneof![Just("-".to_owned()), Just("\n".to_owned())],
            part,
        )
            .prop_map(|(lead, prefix, digits, sep, part)| {
                let mut s = format!("{lead}{prefix}{digits}{sep}{part}");
                s.truncate(DNS1123_SUBDOMAIN_MAX_LENGTH);
                s
            })
    }

    proptest::proptest! {
        /// Looking up only the index keys of a pod gives the same new name
        /// as scanning every Eviction of the namespace.
        #[test]
        fn index_lookup_names_like_a_full_scan(
            names in proptest::collection::vec(arb_name(), 0..12),
            pod in proptest::prop_oneof![
                proptest::strategy::Just("foo".to_owned()),
                proptest::strategy::Just("x".repeat(240)),
                proptest::strategy::Just("x".repeat(260)),
                "[a-z]{1,4}",
            ],
        ) {
            let keys = name_index_keys("ns", &pod);
            let filed: Vec<&str> = names
                .iter()
                .filter(|n| eviction_name_index_key("ns", n).is_some_and(|k| keys.contains(&k)))
                .map(String::as_str)
                .collect();
            proptest::prop_assert_eq!(
                new_eviction_name(&pod, filed),
                new_eviction_name(&pod, names.iter().map(String::as_str))
            );
        }
    }

    #[test]
    fn long_names_share_one_bucket() {
        let long = format!("pod-7-{}", "x".repeat(247));
        assert_eq!(long.len(), DNS1123_SUBDOMAIN_MAX_LENGTH);
        assert_eq!(
            eviction_name_index_key("ns", &long),
            Some("ns/\n253".to_owned())
        );
        assert_eq!(
            eviction_name_index_key("ns", "pod-2-web"),
            Some("ns/web".to_owned())
        );
        assert_eq!(eviction_name_index_key("ns", "web"), None);
    }

    #[test]
    fn overflowing_counter_is_ignored() {
        let names = ["pod-99999999999999999999-foo", "pod-3-foo"];
        assert_eq!(
            new_eviction_name("foo", names).as_deref(),
            Some("pod-4-foo")
        );
    }

    #[test]
    fn max_counter_wraps_like_go() {
        let max = format!("pod-{}-foo", i64::MAX);
        assert_eq!(
            new_eviction_name("foo", [max.as_str()]).as_deref(),
            Some("pod--9223372036854775808-foo")
        );
    }
}
