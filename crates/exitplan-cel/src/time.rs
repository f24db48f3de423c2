//! Timestamp and duration accessors as cel-go defines them: a timestamp's
//! calendar fields are read in UTC unless a time zone is given
//! (`getHours('+01:00')`, `getDate('UTC')`), and a duration's are its total
//! hours, minutes, seconds or milliseconds. (The `cel` interpreter reads a
//! timestamp in its own UTC offset and takes no time zone.) Fixed offsets
//! and `UTC` are supported; IANA zone names are not.

use kube_cel::cel::extractors::{Arguments, This};
use kube_cel::cel::{Context, ExecutionError, ResolveResult, Value};

/// One accessor.
#[derive(Clone, Copy)]
enum Part {
    FullYear,
    Month,
    DayOfYear,
    DayOfMonth,
    Date,
    DayOfWeek,
    Hours,
    Minutes,
    Seconds,
    Milliseconds,
}

const ACCESSORS: &[(&str, Part)] = &[
    ("getFullYear", Part::FullYear),
    ("getMonth", Part::Month),
    ("getDayOfYear", Part::DayOfYear),
    ("getDayOfMonth", Part::DayOfMonth),
    ("getDate", Part::Date),
    ("getDayOfWeek", Part::DayOfWeek),
    ("getHours", Part::Hours),
    ("getMinutes", Part::Minutes),
    ("getSeconds", Part::Seconds),
    ("getMilliseconds", Part::Milliseconds),
];

/// Replaces the interpreter's accessors with cel-go's.
pub(crate) fn register(ctx: &mut Context<'_>) {
    for &(name, part) in ACCESSORS {
        ctx.add_function(
            name,
            move |This(this): This<Value>, Arguments(args): Arguments| -> ResolveResult {
                accessor(name, part, &this, &args)
            },
        );
    }
}

fn accessor(name: &str, part: Part, this: &Value, args: &[Value]) -> ResolveResult {
    match this {
        Value::Timestamp(ts) => {
            let offset = match args {
                [] => 0,
                [Value::String(tz)] => utc_offset(tz).ok_or_else(|| {
                    ExecutionError::function_error(name, format!("unknown time zone {tz}"))
                })?,
                _ => return Err(ExecutionError::NoSuchOverload),
            };
            let secs = ts.timestamp().saturating_add(offset);
            let millis = i64::from(ts.timestamp_subsec_millis());
            Ok(Value::Int(calendar(part, secs, millis)))
        }
        Value::Duration(d) if args.is_empty() => Ok(Value::Int(match part {
            Part::Hours => d.num_hours(),
            Part::Minutes => d.num_minutes(),
            Part::Seconds => d.num_seconds(),
            Part::Milliseconds => d.num_milliseconds(),
            _ => return Err(ExecutionError::NoSuchOverload),
        })),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

/// The offset from UTC in seconds of `UTC`, `+HH:MM`, `-HH:MM` or `HH:MM`.
fn utc_offset(tz: &str) -> Option<i64> {
    if tz == "UTC" || tz == "Z" {
        return Some(0);
    }
    let (sign, rest) = match tz.as_bytes().first()? {
        b'+' => (1, &tz[1..]),
        b'-' => (-1, &tz[1..]),
        _ => (1, tz),
    };
    let (h, m) = rest.split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    let h: i64 = h.parse().ok()?;
    let m: i64 = m.parse().ok()?;
    (h < 24 && m < 60).then_some(sign * (h * 3600 + m * 60))
}

/// The field `part` of the instant `secs` (seconds since the epoch, already
/// shifted to the wanted zone) with `millis` past the second.
fn calendar(part: Part, secs: i64, millis: i64) -> i64 {
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy_mar = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy_mar + 2) / 153;
    let day = doy_mar - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    match part {
        Part::FullYear => year,
        Part::Month => month - 1,
        Part::DayOfYear => {
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
            const BEFORE: [i64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
            let idx = usize::try_from(month - 1).unwrap_or(0).min(11);
            BEFORE[idx] + i64::from(leap && month > 2) + day - 1
        }
        Part::DayOfMonth => day - 1,
        Part::Date => day,
        Part::DayOfWeek => (days + 4).rem_euclid(7),
        Part::Hours => of_day / 3600,
        Part::Minutes => of_day % 3600 / 60,
        Part::Seconds => of_day % 60,
        Part::Milliseconds => millis,
    }
}

#[cfg(test)]
mod tests {
    use super::{Part, calendar, utc_offset};

    #[test]
    fn calendar_fields() {
        // 2011-08-18T18:03:37Z, a Thursday, day 229 of a non-leap year.
        let t = 1_313_690_617;
        let cases = [
            (Part::FullYear, 2011),
            (Part::Month, 7),
            (Part::DayOfYear, 229),
            (Part::DayOfMonth, 17),
            (Part::Date, 18),
            (Part::DayOfWeek, 4),
            (Part::Hours, 18),
            (Part::Minutes, 3),
            (Part::Seconds, 37),
        ];
        for (part, want) in cases {
            assert_eq!(calendar(part, t, 0), want);
        }
        // Leap year, before the epoch.
        assert_eq!(calendar(Part::DayOfYear, 951_782_400, 0), 59); // 2000-02-29
        assert_eq!(calendar(Part::FullYear, -86_400, 0), 1969);
        assert_eq!(calendar(Part::DayOfWeek, -86_400, 0), 3);
    }

    #[test]
    fn time_zones() {
        assert_eq!(utc_offset("UTC"), Some(0));
        assert_eq!(utc_offset("+01:00"), Some(3600));
        assert_eq!(utc_offset("01:00"), Some(3600));
        assert_eq!(utc_offset("-05:30"), Some(-19_800));
        assert_eq!(utc_offset("America/Los_Angeles"), None);
        assert_eq!(utc_offset("+1:00"), None);
    }
}
