//! `resource.Quantity` as far as validation needs it: parsing with
//! upstream's errors, exact comparison, and the canonical rendering of
//! `Quantity.String()` (`500m`, `1536Mi`, `1e3`).

use std::cmp::Ordering;
use std::fmt;

/// The regex quantities must match (`ErrFormatWrong`).
pub const ERR_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `ErrSuffix`.
pub const ERR_SUFFIX: &str = "unable to parse quantity's suffix";
/// `ErrNumeric`.
pub const ERR_NUMERIC: &str = "unable to parse numeric part of quantity";

/// How a quantity is written back (`resource.Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `1e3`.
    DecimalExponent,
    /// `1Ki`.
    BinarySi,
    /// `1k`, `500m`.
    DecimalSi,
}

/// A parsed quantity: `mantissa × 10^exp`, exactly.
#[derive(Clone, Copy, Debug)]
pub struct Quantity {
    mantissa: i128,
    exp: i32,
    format: Format,
}

/// Largest decimal exponent difference aligned exactly (beyond it values
/// are compared by magnitude).
const MAX_ALIGN: i32 = 30;

impl Quantity {
    /// Parses `s` as `resource.ParseQuantity` does.
    pub fn parse(s: &str) -> Result<Quantity, &'static str> {
        if s.is_empty() {
            return Err(ERR_FORMAT_WRONG);
        }
        let (negative, rest) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, suffix) = rest.split_at(num_end);
        if num.is_empty() {
            return Err(ERR_FORMAT_WRONG);
        }
        // The suffix must match `[eEinumkKMGTP]*[-+]?[0-9]*`.
        let letters_end = suffix
            .find(|c: char| !"eEinumkKMGTP".contains(c))
            .unwrap_or(suffix.len());
        let tail = &suffix[letters_end..];
        let tail = tail.strip_prefix(['-', '+']).unwrap_or(tail);
        if !tail.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ERR_FORMAT_WRONG);
        }
        let mut parts = num.splitn(2, '.');
        let whole = parts.next().unwrap_or_default();
        let frac = parts.next().unwrap_or_default();
        if frac.contains('.') {
            return Err(ERR_FORMAT_WRONG);
        }
        let digits = format!("{whole}{frac}");
        let digits = digits.trim_start_matches('0');
        let digits = if digits.is_empty() { "0" } else { digits };
        if digits.len() > 36 {
            return Err(ERR_NUMERIC);
        }
        let mut mantissa: i128 = digits.parse().map_err(|_| ERR_NUMERIC)?;
        let mut exp = -i32::try_from(frac.len()).map_err(|_| ERR_NUMERIC)?;
        let format;
        match suffix {
            "" => format = Format::DecimalSi,
            "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => {
                format = Format::DecimalSi;
                exp += match suffix {
                    "n" => -9,
                    "u" => -6,
                    "m" => -3,
                    "k" => 3,
                    "M" => 6,
                    "G" => 9,
                    "T" => 12,
                    "P" => 15,
                    _ => 18,
                };
            }
            "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
                format = Format::BinarySi;
                let power = match suffix {
                    "Ki" => 1,
                    "Mi" => 2,
                    "Gi" => 3,
                    "Ti" => 4,
                    "Pi" => 5,
                    _ => 6,
                };
                for _ in 0..power {
                    mantissa = mantissa.checked_mul(1024).ok_or(ERR_NUMERIC)?;
                }
            }
            _ => {
                let e = suffix
                    .strip_prefix(['e', 'E'])
                    .filter(|e| !e.is_empty())
                    .ok_or(ERR_SUFFIX)?;
                let e: i32 = e.parse().map_err(|_| ERR_SUFFIX)?;
                format = Format::DecimalExponent;
                exp = exp.checked_add(e).ok_or(ERR_NUMERIC)?;
            }
        }
        if negative {
            mantissa = -mantissa;
        }
        let mut q = Quantity {
            mantissa,
            exp,
            format,
        };
        q.normalize();
        Ok(q)
    }

    /// Strips trailing zeros of the mantissa into the exponent.
    fn normalize(&mut self) {
        if self.mantissa == 0 {
            self.exp = 0;
            return;
        }
        while self.mantissa % 10 == 0 {
            self.mantissa /= 10;
            self.exp += 1;
        }
    }

    /// Whether the quantity is below zero.
    pub fn is_negative(&self) -> bool {
        self.mantissa < 0
    }

    /// Whether the quantity is zero.
    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// Whether the value is a whole number (`MilliValue() % 1000 == 0`).
    pub fn is_integer(&self) -> bool {
        self.exp >= 0
    }

    /// The value as `mantissa × 10^exp` with `exp` lowered to `to`, when
    /// it fits.
    fn scaled(&self, to: i32) -> Option<i128> {
        let shift = u32::try_from(self.exp - to).ok()?;
        10i128.checked_pow(shift)?.checked_mul(self.mantissa)
    }

    /// The value when it is a whole number that fits.
    pub fn value(&self) -> Option<i128> {
        if self.exp >= 0 { self.scaled(0) } else { None }
    }

    /// Whether the value is a whole multiple of `unit` (an integer ≥ 1).
    pub fn is_multiple_of(&self, unit: i128) -> bool {
        self.scaled(0).is_some_and(|v| unit != 0 && v % unit == 0)
    }

    /// The value as a float (for ratios such as LimitRange's max/min).
    pub fn as_f64(&self) -> f64 {
        // Mantissas beyond 2^53 lose precision, as Go's float64 does.
        #[allow(clippy::cast_precision_loss)]
        let m = self.mantissa as f64;
        m * 10f64.powi(self.exp)
    }

    /// A zero quantity (`resource.Quantity{}`).
    pub fn zero() -> Quantity {
        Quantity {
            mantissa: 0,
            exp: 0,
            format: Format::DecimalSi,
        }
    }

    /// `Quantity.Add`: the exact sum, in the receiver's format (or
    /// `other`'s when the receiver is zero); `None` when it does not fit.
    pub fn checked_add(&self, other: &Quantity) -> Option<Quantity> {
        let to = self.exp.min(other.exp);
        let mantissa = self.scaled(to)?.checked_add(other.scaled(to)?)?;
        let format = if self.is_zero() {
            other.format
        } else {
            self.format
        };
        let mut q = Quantity {
            mantissa,
            exp: to,
            format,
        };
        q.normalize();
        Some(q)
    }

    /// `Quantity.String()`: the canonical form in the quantity's format.
    pub fn canonical(&self) -> String {
        self.to_string()
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        let to = self.exp.min(other.exp);
        if (self.exp - to) <= MAX_ALIGN
            && (other.exp - to) <= MAX_ALIGN
            && let (Some(a), Some(b)) = (self.scaled(to), other.scaled(to))
        {
            return a.cmp(&b);
        }
        // Far apart: the signs and then the magnitudes decide.
        let sign = |q: &Quantity| q.mantissa.signum();
        match sign(self).cmp(&sign(other)) {
            Ordering::Equal => {}
            o => return o,
        }
        let mag = |q: &Quantity| {
            let digits = i32::try_from(q.mantissa.unsigned_abs().to_string().len()).unwrap_or(0);
            q.exp + digits
        };
        let by_mag = mag(self).cmp(&mag(other));
        if sign(self) < 0 {
            by_mag.reverse()
        } else {
            by_mag
        }
    }
}

/// Decimal rendering with an exponent that is a multiple of 3, rounding
/// values finer than nano up as upstream does.
fn decimal_parts(q: &Quantity) -> (i128, i32) {
    let (mut m, mut e) = (q.mantissa, q.exp);
    if e < -9 {
        // Round away from zero to nano precision (`Quantity.RoundUp(-9)`).
        let shift = u32::try_from(-9 - e).unwrap_or(0);
        let div = 10i128.checked_pow(shift).unwrap_or(i128::MAX);
        let rounded = m / div + if m % div != 0 { m.signum() } else { 0 };
        m = rounded;
        e = -9;
    }
    // Lower the exponent to a multiple of 3.
    while e.rem_euclid(3) != 0 {
        m = m.saturating_mul(10);
        e -= 1;
    }
    // Raise it while the mantissa stays whole.
    while m != 0 && m % 1000 == 0 && e < 18 {
        m /= 1000;
        e += 3;
    }
    (m, e)
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mantissa == 0 {
            return f.write_str("0");
        }
        let binary = self.format == Format::BinarySi
            && self.is_integer()
            && self.scaled(0).is_some_and(|v| v.abs() >= 1024);
        if binary && let Some(mut v) = self.scaled(0) {
            let mut i = 0;
            while i < 6 && v % 1024 == 0 {
                v /= 1024;
                i += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][i];
            return write!(f, "{v}{suffix}");
        }
        let (m, e) = decimal_parts(self);
        if self.format == Format::DecimalExponent {
            return if e == 0 {
                write!(f, "{m}")
            } else {
                write!(f, "{m}e{e}")
            };
        }
        let suffix = match e {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            0 => "",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            _ => "E",
        };
        write!(f, "{m}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).expect("valid quantity")
    }

    #[test]
    fn canonical_forms() {
        for (input, want) in [
            ("100m", "100m"),
            ("1000m", "1"),
            ("0.1", "100m"),
            ("1.5", "1500m"),
            ("1536Mi", "1536Mi"),
            ("1Gi", "1Gi"),
            ("1.5Gi", "1536Mi"),
            ("1000", "1k"),
            ("1e3", "1e3"),
            ("512", "512"),
            ("-1", "-1"),
            ("0", "0"),
            ("10Ki", "10Ki"),
        ] {
            assert_eq!(q(input).to_string(), want, "{input}");
        }
    }

    #[test]
    fn comparison_and_errors() {
        assert!(q("1") > q("500m"));
        assert!(q("1Gi") > q("1G"));
        assert_eq!(q("1k"), q("1000"));
        assert!(q("-1") < q("0"));
        assert_eq!(Quantity::parse("1Mb").err(), Some(ERR_FORMAT_WRONG));
        assert_eq!(Quantity::parse("1kk").err(), Some(ERR_SUFFIX));
        assert_eq!(Quantity::parse("abc").err(), Some(ERR_FORMAT_WRONG));
        assert!(q("2").is_integer());
        let sum = q("500m").checked_add(&q("1")).expect("fits");
        assert_eq!(sum.to_string(), "1500m");
        assert_eq!(
            Quantity::zero()
                .checked_add(&q("1Gi"))
                .expect("fits")
                .to_string(),
            "1Gi"
        );
        assert_eq!(
            q("1Gi").checked_add(&q("1Gi")).expect("fits").to_string(),
            "2Gi"
        );
        assert!(!q("1.5").is_integer());
    }
}
