//! Go-style durations (`90s`, `5m`, `1h30m`, `250ms`): parsed from scenarios
//! and printed in the timeline (`t+6m30s`).

use std::time::Duration;

/// Parses a Go-style duration: one or more `<number><unit>` parts, units
/// `h`, `m`, `s`, `ms`; `0` alone is zero. Whole numbers only.
pub fn parse(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err("empty duration".into());
    }
    let bad = || format!("invalid duration {s:?} (Go style: 90s, 5m, 1h30m, 250ms)");
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = Duration::from_millis(match &rest[..unit_len] {
            "h" => 3_600_000,
            "m" => 60_000,
            "s" => 1_000,
            "ms" => 1,
            _ => return Err(bad()),
        });
        let part = u32::try_from(n)
            .ok()
            .and_then(|n| unit.checked_mul(n))
            .ok_or_else(bad)?;
        total = total.checked_add(part).ok_or_else(bad)?;
        rest = &rest[unit_len..];
    }
    Ok(total)
}

/// Formats `d` the way Go does: `0s`, `45s`, `6m30s`, `1h0m5s`, `1.5s`
/// (milliseconds shown only when present).
pub fn format(d: Duration) -> String {
    let ms = d.as_millis();
    let (h, m) = (ms / 3_600_000, (ms / 60_000) % 60);
    let (s, frac) = ((ms / 1000) % 60, ms % 1000);
    let secs = if frac == 0 {
        format!("{s}s")
    } else {
        let f = format!("{frac:03}");
        format!("{s}.{}s", f.trim_end_matches('0'))
    };
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if h > 0 && (m > 0 || s > 0 || frac > 0) || m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if (s > 0 || frac > 0) || out.is_empty() {
        out.push_str(&secs);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        assert_eq!(parse("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        assert!(parse("5").is_err());
        assert!(parse("5d").is_err());
        assert!(parse("m5").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn formats_like_go() {
        assert_eq!(format(Duration::ZERO), "0s");
        assert_eq!(format(Duration::from_secs(60)), "1m");
        assert_eq!(format(Duration::from_secs(390)), "6m30s");
        assert_eq!(format(Duration::from_secs(3605)), "1h0m5s");
        assert_eq!(format(Duration::from_secs(5400)), "1h30m");
        assert_eq!(format(Duration::from_secs(3600)), "1h");
        assert_eq!(format(Duration::from_millis(1500)), "1.5s");
    }
}
