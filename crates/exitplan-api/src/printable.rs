//! Go's `unicode.IsPrint` (and `strconv.IsPrint`, the same set): letters,
//! marks, numbers, punctuation and symbols (Unicode general categories L, M,
//! N, P, S) and the ASCII space. Everything else — controls, format
//! characters (U+200B, U+FEFF, …), separators other than U+0020 (U+00A0,
//! U+2028, …), surrogates, private use and unassigned code points — is not
//! printable. kube-apiserver checks `fieldManager` with it, and `%q` escapes
//! what it rejects.
//!
//! The category tables are the Unicode tables of `regex-syntax` (already
//! built into the workspace for `regex`), read once.

use std::sync::OnceLock;

use regex_syntax::hir::{Class, HirKind};

/// The printable ranges besides ASCII, sorted.
fn ranges() -> &'static [(char, char)] {
    static RANGES: OnceLock<Vec<(char, char)>> = OnceLock::new();
    RANGES.get_or_init(|| {
        let parsed = regex_syntax::ParserBuilder::new()
            .build()
            .parse(r"[\p{L}\p{M}\p{N}\p{P}\p{S}]");
        match parsed.as_ref().map(|h| h.kind()) {
            Ok(HirKind::Class(Class::Unicode(class))) => class
                .ranges()
                .iter()
                .map(|r| (r.start(), r.end()))
                .collect(),
            // The pattern is a constant the parser always reads as a class.
            _ => Vec::new(),
        }
    })
}

/// Whether Go's `unicode.IsPrint` holds for `c`.
pub fn is_print(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_graphic() || c == ' ';
    }
    ranges()
        .binary_search_by(|&(start, end)| {
            if end < c {
                std::cmp::Ordering::Less
            } else if start > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's `TestIsPrint` cases (unicode/graphic_test.go) and the
    /// categories they stand for.
    #[test]
    fn matches_go_on_each_category() {
        let printable = [
            ('a', "Ll"),
            ('Z', "Lu"),
            ('5', "Nd"),
            ('~', "Sm"),
            ('!', "Po"),
            (' ', "ASCII space"),
            ('é', "Ll"),
            ('ǅ', "Lt"),
            ('ʰ', "Lm"),
            ('中', "Lo"),
            ('\u{0301}', "Mn"),
            ('\u{0903}', "Mc"),
            ('\u{20DD}', "Me"),
            ('Ⅻ', "Nl"),
            ('½', "No"),
            ('¿', "Po"),
            ('«', "Pi"),
            ('»', "Pf"),
            ('‐', "Pd"),
            ('(', "Ps"),
            ('€', "Sc"),
            ('^', "Sk"),
            ('©', "So"),
            ('😀', "So (astral)"),
            ('𝔸', "Lu (astral)"),
        ];
        for (c, cat) in printable {
            assert!(is_print(c), "U+{:04X} ({cat}) is printable", u32::from(c));
        }
        let not_printable = [
            ('\u{0}', "Cc"),
            ('\u{7}', "Cc"),
            ('\t', "Cc"),
            ('\n', "Cc"),
            ('\u{7f}', "Cc"),
            ('\u{85}', "Cc"),
            ('\u{9f}', "Cc"),
            ('\u{a0}', "Zs (no-break space)"),
            ('\u{ad}', "Cf (soft hyphen)"),
            ('\u{2000}', "Zs"),
            ('\u{3000}', "Zs (ideographic space)"),
            ('\u{200B}', "Cf (zero-width space)"),
            ('\u{200E}', "Cf (left-to-right mark)"),
            ('\u{2028}', "Zl"),
            ('\u{2029}', "Zp"),
            ('\u{FEFF}', "Cf (BOM)"),
            ('\u{E000}', "Co"),
            ('\u{F8FF}', "Co"),
            ('\u{10FFFD}', "Co"),
            ('\u{0378}', "Cn (unassigned)"),
            ('\u{FFFF}', "Cn (noncharacter)"),
            ('\u{E0001}', "Cf (language tag)"),
        ];
        for (c, cat) in not_printable {
            assert!(
                !is_print(c),
                "U+{:04X} ({cat}) is not printable",
                u32::from(c)
            );
        }
    }

    /// On ASCII, Go's rule is "graphic or space".
    #[test]
    fn ascii_is_graphic_or_space() {
        for b in 0u8..=127 {
            let c = char::from(b);
            assert_eq!(is_print(c), (0x20..0x7f).contains(&b), "{b:#x}");
        }
    }
}
