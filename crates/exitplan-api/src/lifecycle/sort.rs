//! The responder order (spec §6): who runs first.
//!
//! 1. priority, descending; a missing priority sorts after every number;
//! 2. the domain (before the first `/`), compared label by label from the top
//!    level down (`a.example.com` → `[com, example, a]`), byte-wise; when one
//!    list is a prefix of the other the shorter sorts first;
//! 3. the key (after the first `/`), byte-wise.
//!
//! Used by the controller to pick the next Active responder and by status
//! validation to judge transitions independently of list order.

use std::cmp::Ordering;

use k8s_openapi::api::lifecycle::v1alpha1::TargetResponder;

fn split(name: &str) -> (&str, &str) {
    name.split_once('/').unwrap_or((name, ""))
}

/// Compares two responders by `(priority, name)`; `Less` runs first.
pub fn compare(
    a_priority: Option<i32>,
    a_name: &str,
    b_priority: Option<i32>,
    b_name: &str,
) -> Ordering {
    let by_priority = match (a_priority, b_priority) {
        (Some(a), Some(b)) => b.cmp(&a),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    by_priority.then_with(|| {
        let (a_domain, a_key) = split(a_name);
        let (b_domain, b_key) = split(b_name);
        // Reversed label lists compared lexicographically: element-wise, and a
        // proper prefix sorts first — exactly Iterator::cmp's semantics.
        a_domain
            .rsplit('.')
            .map(str::as_bytes)
            .cmp(b_domain.rsplit('.').map(str::as_bytes))
            .then_with(|| a_key.as_bytes().cmp(b_key.as_bytes()))
    })
}

/// Sorts items into activation order, given how to read `(priority, name)`.
pub fn sort_by_order<T>(items: &mut [T], key: impl Fn(&T) -> (Option<i32>, &str)) {
    items.sort_by(|a, b| {
        let (ap, an) = key(a);
        let (bp, bn) = key(b);
        compare(ap, an, bp, bn)
    });
}

/// Sorts `status.targetResponders` into activation order.
pub fn sort_target_responders(list: &mut [TargetResponder]) {
    sort_by_order(list, |t| (Some(t.priority), t.name.as_str()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorter_domain_prefix_first() {
        assert_eq!(
            compare(Some(1), "example.com/b", Some(1), "zeta.example.com/a"),
            Ordering::Less
        );
        assert_eq!(
            compare(
                Some(1),
                "zeta.example.com/a",
                Some(1),
                "alpha.example.org/a"
            ),
            Ordering::Less
        );
        assert_eq!(
            compare(Some(1), "a.io/x", Some(2), "b.io/x"),
            Ordering::Greater
        );
        assert_eq!(
            compare(None, "a.io/x", Some(-5), "b.io/x"),
            Ordering::Greater
        );
        assert_eq!(
            compare(Some(1), "e.com/bar12", Some(1), "e.com/bar6"),
            Ordering::Less
        );
        assert_eq!(
            compare(Some(1), "e.com/x", Some(1), "e.com/x"),
            Ordering::Equal
        );
    }
}
