//! The declarative list-level rules of lists keyed by `name`
//! (`+listType=map`, `+listMapKey=name`, `+k8s:maxItems`): a list over its
//! maximum gets only `TooMany`; otherwise every repeated name is a
//! `Duplicate` showing the item as JSON. Used by Pod
//! `spec.evictionResponders` and the Eviction status lists.

use crate::field::{BadValue, Error, ErrorList, Path};

/// The list-level rules of a list keyed by name: more than `max`
/// items is only `TooMany` (origin `maxItems`; `Err`, the items are not
/// validated further); otherwise `Duplicate <path>[j]` for every item whose
/// name an earlier item already has (`json` renders item `j`).
pub fn validate_keyed_list<T>(
    list: &[T],
    path: &Path,
    max: usize,
    name: impl Fn(&T) -> &str,
    json: impl Fn(usize, &T) -> String,
) -> Result<ErrorList, ErrorList> {
    if list.len() > max {
        return Err(ErrorList(vec![
            Error::too_many(path, list.len(), max).with_origin("maxItems"),
        ]));
    }
    let mut errs = ErrorList::new();
    for (j, item) in list.iter().enumerate() {
        if list[..j].iter().any(|earlier| name(earlier) == name(item)) {
            errs.push(Error::duplicate(
                &path.index(j),
                BadValue::Json(json(j, item)),
            ));
        }
    }
    Ok(errs)
}
