//! Index-interval strings of Indexed Jobs (`"0,2-4,7"`): the format check
//! used for `status.completedIndexes`, `status.failedIndexes` and
//! `successPolicy.rules[*].succeededIndexes` (`validateIndexesFormat`,
//! `parseIndexInterval`, `validateFailedIndexesNotOverlapCompleted`), with
//! upstream's error texts.

/// Parses one interval (`"3"` or `"2-5"`) below `completions`, returning
/// its inclusive bounds or upstream's error text.
pub fn parse_index_interval(interval: &str, completions: i32) -> Result<(i64, i64), String> {
    let limits: Vec<&str> = interval.split('-').collect();
    if limits.len() > 2 {
        return Err(format!(
            "the fragment {} violates the requirement that an index interval can have at most two parts separated by '-'",
            crate::field::go_quote(interval)
        ));
    }
    let parse = |s: &str| -> Result<i64, String> {
        s.parse::<i64>().map_err(|_| {
            format!(
                "cannot convert string to integer for index: {}",
                crate::field::go_quote(s)
            )
        })
    };
    let first = limits.first().copied().unwrap_or_default();
    let x = parse(first)?;
    if x >= i64::from(completions) {
        return Err(format!(
            "too large index: {}",
            crate::field::go_quote(first)
        ));
    }
    if let Some(second) = limits.get(1).copied() {
        let y = parse(second)?;
        if y >= i64::from(completions) {
            return Err(format!(
                "too large index: {}",
                crate::field::go_quote(second)
            ));
        }
        if x >= y {
            return Err(format!("non-increasing order, previous: {x}, current: {y}"));
        }
        return Ok((x, y));
    }
    Ok((x, x))
}

/// `validateIndexesFormat`: the number of indexes named, or the first error.
/// The empty string names no index.
pub fn validate_indexes_format(indexes: &str, completions: i32) -> Result<i64, String> {
    if indexes.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total: i64 = 0;
    for interval in indexes.split(',') {
        let (x, y) = parse_index_interval(interval, completions)?;
        if let Some(prev) = last.filter(|prev| *prev >= x) {
            return Err(format!(
                "non-increasing order, previous: {prev}, current: {x}"
            ));
        }
        total = total.saturating_add(y - x + 1);
        last = Some(y);
    }
    Ok(total)
}

/// `validateFailedIndexesNotOverlapCompleted`: walks both interval lists in
/// order and reports the first shared index. Unparsable intervals are
/// skipped (the format check reports them).
pub fn failed_indexes_overlap_completed(
    completed: &str,
    failed: &str,
    completions: i32,
) -> Result<(), String> {
    if completed.is_empty() || failed.is_empty() {
        return Ok(());
    }
    let c_list: Vec<&str> = completed.split(',').collect();
    let f_list: Vec<&str> = failed.split(',').collect();
    let parse = |list: &[&str], pos: usize| {
        list.get(pos)
            .map(|s| parse_index_interval(s, completions))
            .unwrap_or(Err(String::new()))
    };
    let (mut c_pos, mut f_pos) = (0usize, 0usize);
    let mut c = parse(&c_list, c_pos);
    let mut f = parse(&f_list, f_pos);
    while c_pos < c_list.len() && f_pos < f_list.len() {
        match (&c, &f) {
            (Err(_), _) => {
                c_pos += 1;
                if c_pos < c_list.len() {
                    c = parse(&c_list, c_pos);
                }
            }
            (_, Err(_)) => {
                f_pos += 1;
                if f_pos < f_list.len() {
                    f = parse(&f_list, f_pos);
                }
            }
            (Ok((cx, cy)), Ok((fx, fy))) => {
                if cx <= fy && fx <= cy {
                    return Err(format!(
                        "failedIndexes and completedIndexes overlap at index: {}",
                        (*cx).max(*fx)
                    ));
                }
                if cx <= fx {
                    c_pos += 1;
                    if c_pos < c_list.len() {
                        c = parse(&c_list, c_pos);
                    }
                } else {
                    f_pos += 1;
                    if f_pos < f_list.len() {
                        f = parse(&f_list, f_pos);
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_errors() {
        assert_eq!(validate_indexes_format("", 5), Ok(0));
        assert_eq!(validate_indexes_format("0,2-4", 5), Ok(4));
        assert_eq!(
            validate_indexes_format("invalid-format", 5),
            Err(r#"cannot convert string to integer for index: "invalid""#.to_owned())
        );
        assert_eq!(
            validate_indexes_format("1-2-3", 5),
            Err(r#"the fragment "1-2-3" violates the requirement that an index interval can have at most two parts separated by '-'"#.to_owned())
        );
        assert_eq!(
            validate_indexes_format("5", 5),
            Err(r#"too large index: "5""#.to_owned())
        );
        assert_eq!(
            validate_indexes_format("2,1", 5),
            Err("non-increasing order, previous: 2, current: 1".to_owned())
        );
        assert_eq!(
            validate_indexes_format("3-1", 5),
            Err("non-increasing order, previous: 3, current: 1".to_owned())
        );
    }

    #[test]
    fn overlap() {
        assert_eq!(failed_indexes_overlap_completed("3-4", "0,2", 5), Ok(()));
        assert_eq!(
            failed_indexes_overlap_completed("2-4", "0,2", 5),
            Err("failedIndexes and completedIndexes overlap at index: 2".to_owned())
        );
        assert_eq!(failed_indexes_overlap_completed("x,3", "1,x", 5), Ok(()));
    }
}
