//! The `labelSelector` query parameter: apimachinery's `labels.Parse` — its
//! lexer, its recursive-descent parser and `labels.NewRequirement`'s checks,
//! with the same error texts — and `Requirement.Matches`.
//!
//! ```text
//!   <selector>    ::= <requirement> | <requirement> "," <selector>
//!   <requirement> ::= [!] KEY [ ("in" | "notin") "(" VALUES ")"
//!                             | ("=" | "==" | "!=" | ">" | "<") VALUE ]
//! ```

use std::collections::BTreeMap;

use exitplan_api::field::{Error, ErrorList, Path};
use exitplan_api::formats::{is_label_key, is_label_value};

/// A requirement's operator (`selection.Operator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `key in (a,b)`.
    In,
    /// `key notin (a,b)`.
    NotIn,
    /// `key=a`.
    Equals,
    /// `key==a`.
    DoubleEquals,
    /// `key!=a`.
    NotEquals,
    /// `key>1`.
    GreaterThan,
    /// `key<1`.
    LessThan,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
}

/// One parsed requirement (`labels.Requirement`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub op: Op,
    /// The values, sorted and without duplicates (upstream's `sets.String`).
    pub values: Vec<String>,
}

impl Requirement {
    /// `Requirement.Matches`.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.op {
            Op::In | Op::Equals | Op::DoubleEquals => {
                value.is_some_and(|v| self.values.contains(v))
            }
            Op::NotIn | Op::NotEquals => value.is_none_or(|v| !self.values.contains(v)),
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
            Op::GreaterThan | Op::LessThan => {
                let (Some(have), [want]) = (value, self.values.as_slice()) else {
                    return false;
                };
                match (have.parse::<i64>(), want.parse::<i64>()) {
                    (Ok(have), Ok(want)) => {
                        if self.op == Op::GreaterThan {
                            have > want
                        } else {
                            have < want
                        }
                    }
                    _ => false,
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn literal_token(s: &[u8]) -> Option<Token> {
    Some(match s {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(ch: u8) -> bool {
    matches!(ch, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(ch: u8) -> bool {
    matches!(ch, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// apimachinery's `labels.Lexer`: bytes in, tokens out; `0` doubles as the
/// end of input, as in Go.
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    fn scan_id_or_keyword(&mut self) -> (Token, String) {
        let mut buf = Vec::new();
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special(ch) || is_whitespace(ch) {
                self.unread();
                break;
            }
            buf.push(ch);
        }
        match literal_token(&buf) {
            Some(tok) => (tok, Self::text(&buf)),
            None => (Token::Identifier, Self::text(&buf)),
        }
    }

    fn scan_special_symbol(&mut self) -> (Token, String) {
        let mut last: Option<(Token, String)> = None;
        let mut buf = Vec::new();
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if !is_special(ch) {
                self.unread();
                break;
            }
            buf.push(ch);
            if let Some(tok) = literal_token(&buf) {
                last = Some((tok, Self::text(&buf)));
            } else if last.is_some() {
                self.unread();
                break;
            }
        }
        last.unwrap_or_else(|| {
            (
                Token::Error,
                format!("error expected: keyword found '{}'", Self::text(&buf)),
            )
        })
    }

    fn lex(&mut self) -> (Token, String) {
        let mut ch = self.read();
        while is_whitespace(ch) {
            ch = self.read();
        }
        if ch == 0 {
            return (Token::EndOfString, String::new());
        }
        self.unread();
        if is_special(ch) {
            self.scan_special_symbol()
        } else {
            self.scan_id_or_keyword()
        }
    }
}

/// `in` and `notin` are identifiers where values are expected.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

impl Parser {
    fn item(&self, at: usize, ctx: Context) -> (Token, String) {
        let (tok, lit) = self
            .items
            .get(at)
            .cloned()
            .unwrap_or((Token::EndOfString, String::new()));
        match (ctx, tok) {
            (Context::Values, Token::In | Token::NotIn) => (Token::Identifier, lit),
            _ => (tok, lit),
        }
    }

    fn lookahead(&self, ctx: Context) -> (Token, String) {
        self.item(self.position, ctx)
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        let item = self.item(self.position, ctx);
        self.position += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut reqs = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(reqs),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!("found '{l}', expected: ',' or 'end of string'"));
                        }
                    }
                }
                Token::EndOfString => return Ok(reqs),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, op) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Op::Exists | Op::DoesNotExist)) = op {
            return new_requirement(key, op, Vec::new());
        }
        let op = self.parse_operator()?;
        let values = match op {
            Op::In | Op::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        new_requirement(key, op, values)
    }

    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Op>), String> {
        let mut op = None;
        let (mut tok, mut lit) = self.consume(Context::Values);
        if tok == Token::DoesNotExist {
            op = Some(Op::DoesNotExist);
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let errs = is_label_key(&lit);
        if !errs.is_empty() {
            // Upstream validates with a nil field path here.
            return Err(
                Error::invalid(&Path::new("<nil>"), lit.as_str(), errs.join("; ")).to_string(),
            );
        }
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Token::EndOfString | Token::Comma) && op.is_none() {
            op = Some(Op::Exists);
        }
        Ok((lit, op))
    }

    fn parse_operator(&mut self) -> Result<Op, String> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Op::In,
            Token::Equals => Op::Equals,
            Token::DoubleEquals => Op::DoubleEquals,
            Token::GreaterThan => Op::GreaterThan,
            Token::LessThan => Op::LessThan,
            Token::NotIn => Op::NotIn,
            Token::NotEquals => Op::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let values = self.parse_identifiers_list()?;
                let (tok, _) = self.consume(Context::Values);
                if tok != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut set = std::collections::BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    set.insert(lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set.into_iter().collect()),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Token::ClosedPar {
                        set.insert(String::new());
                        return Ok(set.into_iter().collect());
                    }
                    if tok2 == Token::Comma {
                        set.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(Context::Values);
        if matches!(tok, Token::EndOfString | Token::Comma) {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            Ok(vec![lit])
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

/// `labels.NewRequirement` with a nil path: the checks that the grammar does
/// not already guarantee (integer values of `>`/`<`, label value format).
fn new_requirement(key: String, op: Op, values: Vec<String>) -> Result<Requirement, String> {
    let mut errs = ErrorList::new();
    let key_errs = is_label_key(&key);
    if !key_errs.is_empty() {
        errs.push(Error::invalid(
            &Path::new("key"),
            key.as_str(),
            key_errs.join("; "),
        ));
    }
    let values_path = Path::new("values");
    if matches!(op, Op::GreaterThan | Op::LessThan) {
        for (i, v) in values.iter().enumerate() {
            if v.parse::<i64>().is_err() {
                errs.push(Error::invalid(
                    &values_path.index(i),
                    v.as_str(),
                    "for 'Gt', 'Lt' operators, the value must be an integer",
                ));
            }
        }
    }
    for (i, v) in values.iter().enumerate() {
        let value_errs = is_label_value(v);
        if !value_errs.is_empty() {
            errs.push(Error::invalid(
                &values_path.index(i).key(&key),
                v.as_str(),
                value_errs.join("; "),
            ));
        }
    }
    match errs.aggregate() {
        Some(msg) => Err(msg),
        None => Ok(Requirement { key, op, values }),
    }
}

/// `labels.Parse`: the requirements sorted by key, or upstream's error text.
pub fn parse(selector: &str) -> Result<Vec<Requirement>, String> {
    let mut lexer = Lexer {
        s: selector.as_bytes(),
        pos: 0,
    };
    let mut items = Vec::new();
    loop {
        let item = lexer.lex();
        let end = item.0 == Token::EndOfString;
        items.push(item);
        if end {
            break;
        }
    }
    let mut parser = Parser { items, position: 0 };
    let mut reqs = parser.parse()?;
    reqs.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(reqs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn matches(selector: &str, pairs: &[(&str, &str)]) -> bool {
        let l = labels(pairs);
        parse(selector)
            .expect("parses")
            .iter()
            .all(|r| r.matches(&l))
    }

    #[test]
    fn parses_every_operator() {
        let reqs =
            parse("x in (foo,,baz),y,z notin (), !w, a=b, c==d, e!=f, g>1, h<2").expect("parses");
        let ops: Vec<(&str, Op, Vec<&str>)> = reqs
            .iter()
            .map(|r| {
                (
                    r.key.as_str(),
                    r.op,
                    r.values.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            ops,
            vec![
                ("a", Op::Equals, vec!["b"]),
                ("c", Op::DoubleEquals, vec!["d"]),
                ("e", Op::NotEquals, vec!["f"]),
                ("g", Op::GreaterThan, vec!["1"]),
                ("h", Op::LessThan, vec!["2"]),
                ("w", Op::DoesNotExist, vec![]),
                ("x", Op::In, vec!["", "baz", "foo"]),
                ("y", Op::Exists, vec![]),
                ("z", Op::NotIn, vec![""]),
            ]
        );
        assert_eq!(parse("").expect("empty"), vec![]);
        assert_eq!(parse("  ").expect("blank"), vec![]);
        assert_eq!(
            parse("in in (in, notin)").expect("keywords as values")[0].values,
            vec!["in", "notin"]
        );
        assert_eq!(parse("a=").expect("empty value")[0].values, vec![""]);
    }

    #[test]
    fn matching_follows_upstream() {
        assert!(matches("app=web", &[("app", "web")]));
        assert!(!matches("app=web", &[("app", "db")]));
        assert!(!matches("app=web", &[]));
        assert!(matches("app!=web", &[]));
        assert!(matches("app notin (web)", &[("app", "db")]));
        assert!(!matches("app in (web,db)", &[("app", "x")]));
        assert!(matches("app in (web,db)", &[("app", "db")]));
        assert!(matches("app", &[("app", "")]));
        assert!(!matches("!app", &[("app", "")]));
        assert!(matches("n>5", &[("n", "6")]));
        assert!(!matches("n>5", &[("n", "5")]));
        assert!(!matches("n>5", &[("n", "x")]));
        assert!(!matches("n<5", &[]));
        assert!(matches("n<5,app", &[("n", "-1"), ("app", "a")]));
        assert!(matches("", &[]));
    }

    #[test]
    fn errors_are_upstreams() {
        let cases = [
            ("x=a,", "found '', expected: identifier after ','"),
            ("x=a b", "found 'b', expected: ',' or 'end of string'"),
            (
                ",x",
                "found ',', expected: !, identifier, or 'end of string'",
            ),
            (
                "x in a",
                "unable to parse requirement: found 'a' expected: '('",
            ),
            (
                "x (",
                "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt",
            ),
            (
                "x in (a b)",
                "unable to parse requirement: found 'b', expected: ',' or ')'",
            ),
            (
                "x in (=)",
                "unable to parse requirement: found '=', expected: ',', ')' or identifier",
            ),
            (
                "x in (a,=)",
                "unable to parse requirement: found '=', expected: ',', or identifier",
            ),
            (
                "x=(",
                "unable to parse requirement: found '(', expected: identifier",
            ),
            (
                "!,x",
                "unable to parse requirement: found ',', expected: identifier",
            ),
            (
                "!=a",
                "found '!=', expected: !, identifier, or 'end of string'",
            ),
            (
                "n>a",
                "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer",
            ),
            (
                "-x=a",
                "unable to parse requirement: <nil>: Invalid value: \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
            (
                "x=a$",
                "unable to parse requirement: values[0][x]: Invalid value: \"a$\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(parse(input).expect_err(input), want, "input {input:?}");
        }
    }
}
