//! CronJob schedule syntax: a validating port of `cron.ParseStandard`
//! (github.com/robfig/cron/v3, which kube-apiserver uses), returning its
//! error texts, and of Go's `time.ParseDuration` for `@every`.
//!
//! Accepted: five fields (minute, hour, day of month, month, day of week;
//! each a comma-separated list of `*`, `?`, `N`, `N-M`, with an optional
//! `/step`; month and weekday names such as `jan` or `sun`), the
//! descriptors `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`,
//! `@midnight`, `@hourly` and `@every <duration>`, and a leading
//! `TZ=<zone>` / `CRON_TZ=<zone>` (whose zone is not looked up: exitplan
//! carries no time zone database; see [`super::cron_job`]).

use crate::field::go_quote;

/// The bounds and names of one schedule field.
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// The named schedules `ParseStandard` accepts besides `@every`.
pub const DESCRIPTORS: &[&str] = &[
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
];

/// `cron.ParseStandard(spec)`: `Ok` when the schedule parses, else the
/// library's error text (`expected exactly 5 fields, found 1: [foo]`, …).
pub fn parse_standard(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".to_owned());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        // Upstream slices up to the first space (and panics without one);
        // the zone itself is not looked up here.
        let eq = spec.find('=').unwrap_or(0);
        let end = spec.find(' ').unwrap_or(spec.len());
        if end <= eq {
            return Err(format!(
                "provided bad location {}: unknown time zone",
                &spec[eq + 1..]
            ));
        }
        spec = spec[end..].trim();
    }
    if spec.starts_with('@') {
        return parse_descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, bounds) in fields.iter().zip([&MINUTES, &HOURS, &DOM, &MONTHS, &DOW]) {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            get_range(expr, bounds)?;
        }
    }
    Ok(())
}

fn parse_descriptor(descriptor: &str) -> Result<(), String> {
    if DESCRIPTORS.contains(&descriptor) {
        return Ok(());
    }
    if let Some(duration) = descriptor.strip_prefix("@every ") {
        return parse_duration(duration)
            .map(|_| ())
            .map_err(|e| format!("failed to parse duration {descriptor}: {e}"));
    }
    Err(format!("unrecognized descriptor: {descriptor}"))
}

/// `getRange`: `number | number "-" number [ "/" number ]`, or `*`/`?`.
fn get_range(expr: &str, r: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (r.min, r.max)
    } else {
        let start = parse_int_or_name(low_and_high[0], r)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, parse_int_or_name(low_and_high[1], r)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(range_and_step[1])?;
            if single {
                end = r.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < r.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            r.min
        ));
    }
    if end > r.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            r.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

fn parse_int_or_name(expr: &str, r: &Bounds) -> Result<u64, String> {
    let lower = expr.to_lowercase();
    if let Some((_, v)) = r.names.iter().find(|(n, _)| *n == lower) {
        return Ok(*v);
    }
    must_parse_int(expr)
}

/// `mustParseInt`: Go's `strconv.Atoi`, then non-negative.
fn must_parse_int(expr: &str) -> Result<u64, String> {
    let num = atoi(expr).map_err(|e| format!("failed to parse int from {expr}: {e}"))?;
    u64::try_from(num).map_err(|_| format!("negative number ({num}) not allowed: {expr}"))
}

/// Go's `strconv.Atoi` (64-bit `int`) with its error texts.
fn atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", go_quote(s)))
}

/// Go's `time.ParseDuration`, returning nanoseconds or its error text.
pub fn parse_duration(orig: &str) -> Result<i128, String> {
    let invalid = || format!("time: invalid duration {}", go_quote(orig));
    let mut s = orig.as_bytes();
    let mut neg = false;
    if let Some(&c) = s.first()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        s = &s[1..];
    }
    if s == b"0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let limit: u128 = 1 << 63;
    let mut total: u128 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(invalid());
        }
        let int_len = s.iter().take_while(|b| b.is_ascii_digit()).count();
        let mut v: u128 = 0;
        for &b in &s[..int_len] {
            v = v * 10 + u128::from(b - b'0');
            if v > limit {
                return Err(invalid());
            }
        }
        s = &s[int_len..];
        let (mut frac, mut scale, mut post) = (0u128, 1u128, false);
        if s.first() == Some(&b'.') {
            s = &s[1..];
            let frac_len = s.iter().take_while(|b| b.is_ascii_digit()).count();
            for &b in &s[..frac_len] {
                if scale < 1_000_000_000_000_000_000 {
                    frac = frac * 10 + u128::from(b - b'0');
                    scale *= 10;
                }
            }
            post = frac_len > 0;
            s = &s[frac_len..];
        }
        if int_len == 0 && !post {
            return Err(invalid());
        }
        let unit_len = s
            .iter()
            .take_while(|b| !(**b == b'.' || b.is_ascii_digit()))
            .count();
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", go_quote(orig)));
        }
        let unit = String::from_utf8_lossy(&s[..unit_len]).into_owned();
        s = &s[unit_len..];
        let nanos: u128 = match unit.as_str() {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    go_quote(&unit),
                    go_quote(orig)
                ));
            }
        };
        let value = v * nanos + frac * nanos / scale;
        total += value;
        if value > limit || total > limit {
            return Err(invalid());
        }
    }
    if !neg && total > limit - 1 {
        return Err(invalid());
    }
    let total = i128::try_from(total).map_err(|_| invalid())?;
    Ok(if neg { -total } else { total })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Upstream robfig/cron TestParseScheduleErrors / TestStandardSpecSchedule
    // and the CronJob schedule cases of TestValidateCronJob.
    #[test]
    fn schedules() {
        for ok in [
            "* * * * ?",
            "0 0 * * *",
            "*/5 * * * *",
            "5/15 1-3 1,15 jan-mar mon-fri",
            "0 0 1 1 0",
            "@hourly",
            "@every 1h30m",
            "@every 5m",
            "CRON_TZ=UTC 0 0 * * *",
            "TZ=America/New_York 0 0 * * *",
            "0 0 * * SUN",
        ] {
            assert_eq!(parse_standard(ok), Ok(()), "{ok}");
        }
        for (bad, want) in [
            ("", "empty spec string"),
            ("error", "expected exactly 5 fields, found 1: [error]"),
            ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
            (
                "* * * * * *",
                "expected exactly 5 fields, found 6: [* * * * * *]",
            ),
            ("60 * * * *", "end of range (60) above maximum (59): 60"),
            ("* 24 * * *", "end of range (24) above maximum (23): 24"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            (
                "5-3 * * * *",
                "beginning of range (5) beyond end of range (3): 5-3",
            ),
            (
                "*/0 * * * *",
                "step of range should be a positive number: */0",
            ),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("1/2/3 * * * *", "too many slashes: 1/2/3"),
            (
                "a * * * *",
                r#"failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax"#,
            ),
            (
                "* * * * foo",
                r#"failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax"#,
            ),
            ("@unknown", "unrecognized descriptor: @unknown"),
            (
                "@every 5",
                r#"failed to parse duration @every 5: time: missing unit in duration "5""#,
            ),
            (
                "@every x",
                r#"failed to parse duration @every x: time: invalid duration "x""#,
            ),
            (
                "@every 5y",
                r#"failed to parse duration @every 5y: time: unknown unit "y" in duration "5y""#,
            ),
        ] {
            assert_eq!(parse_standard(bad), Err(want.to_owned()), "{bad:?}");
        }
    }

    // Go's TestParseDuration (a selection).
    #[test]
    fn durations() {
        for (s, want) in [
            ("0", 0),
            ("5s", 5_000_000_000),
            ("-5s", -5_000_000_000),
            ("1.5h", 5_400_000_000_000),
            ("1h30m", 5_400_000_000_000),
            (".5s", 500_000_000),
            ("1\u{b5}s", 1_000),
            ("10ns", 10),
        ] {
            assert_eq!(parse_duration(s), Ok(want), "{s}");
        }
        for bad in ["", "3", "-", "s", ".", ".s", "+.s", "9223372036854775810ns"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }
}
