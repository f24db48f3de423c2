//! The keys of a raw JSON document in document order, with the duplicates
//! marked: what serde_json drops silently (it keeps a repeated key's last
//! value) and what kube-apiserver's strict decoders report
//! (`duplicate field "spec.paused"` from sigs.k8s.io/json; `line 10: key
//! "paused" already set in map` from the YAML decoder of apply bodies).
//!
//! The scanner need not explain syntax errors (serde_json or the patch
//! decoders do): on anything it does not understand, or nesting deeper than
//! serde_json accepts, it stops and returns what it found so far.

/// One key of an object, where it stands in the document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyAt {
    /// The key's path in sigs.k8s.io/json's form: `spec.containers[0].name`
    /// (the top-level key alone, array items as `[i]`).
    pub path: String,
    /// Whether an earlier key of the same object had the same (decoded) name.
    pub duplicate: bool,
    /// The 1-based line the key starts on.
    pub line: usize,
    /// The key as written (decoded from its JSON string).
    pub key: String,
}

/// How deep the scanner follows nesting: serde_json's own recursion limit,
/// so every body the server decodes is scanned whole.
const MAX_DEPTH: usize = 128;

/// Every key of `json`, in document order.
pub fn keys(json: &[u8]) -> Vec<KeyAt> {
    let mut s = Scanner {
        bytes: json,
        pos: 0,
        line: 1,
        depth: 0,
        out: Vec::new(),
    };
    s.value("");
    s.out
}

/// The duplicated keys of `json`, in document order.
pub fn duplicates(json: &[u8]) -> Vec<KeyAt> {
    keys(json).into_iter().filter(|k| k.duplicate).collect()
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
    depth: usize,
    out: Vec<KeyAt>,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => return,
            }
            self.pos += 1;
        }
    }

    /// Skips a string starting at `pos` (on its opening quote); returns
    /// its decoded text. JSON strings hold no raw newlines.
    fn string(&mut self) -> Option<String> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\\' => self.pos += 2,
                _ => self.pos += 1,
            }
        }
        self.pos += 1;
        serde_json::from_slice(self.bytes.get(start..self.pos)?).ok()
    }

    /// Scans one value; `path` is where it stands. `None`: stop scanning.
    fn value(&mut self, path: &str) -> Option<()> {
        self.skip_ws();
        match self.peek()? {
            b'{' | b'[' if self.depth == MAX_DEPTH => None,
            b'{' => {
                self.depth += 1;
                let r = self.object(path);
                self.depth -= 1;
                r
            }
            b'[' => {
                self.depth += 1;
                let r = self.array(path);
                self.depth -= 1;
                r
            }
            b'"' => self.string().map(|_| ()),
            _ => {
                // A number or a literal: up to the next delimiter.
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace() {
                        break;
                    }
                    self.pos += 1;
                }
                Some(())
            }
        }
    }

    fn object(&mut self, path: &str) -> Option<()> {
        self.pos += 1;
        let mut seen: Vec<String> = Vec::new();
        loop {
            self.skip_ws();
            match self.peek()? {
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                b',' => {
                    self.pos += 1;
                    continue;
                }
                b'"' => {}
                _ => return None,
            }
            let line = self.line;
            let key = self.string()?;
            let child = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            let duplicate = seen.contains(&key);
            if !duplicate {
                seen.push(key.clone());
            }
            self.out.push(KeyAt {
                path: child.clone(),
                duplicate,
                line,
                key,
            });
            self.skip_ws();
            if self.peek()? != b':' {
                return None;
            }
            self.pos += 1;
            self.value(&child)?;
        }
    }

    fn array(&mut self, path: &str) -> Option<()> {
        self.pos += 1;
        let mut index = 0usize;
        loop {
            self.skip_ws();
            match self.peek()? {
                b']' => {
                    self.pos += 1;
                    return Some(());
                }
                b',' => {
                    self.pos += 1;
                    index += 1;
                    continue;
                }
                _ => {}
            }
            self.value(&format!("{path}[{index}]"))?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dup_paths(json: &str) -> Vec<String> {
        duplicates(json.as_bytes())
            .into_iter()
            .map(|k| k.path)
            .collect()
    }

    #[test]
    fn finds_duplicates_at_every_depth_in_document_order() {
        // Upstream's `invalidBodyJSON` (test/integration/apiserver/field_validation_test.go).
        let body = r#"
	{
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {
			"name": "dupename",
			"name": "d",
			"labels": {"app": "nginx"},
			"unknownMeta": "metaVal"
		},
		"spec": {
			"unknown1": "val1",
			"unknownDupe": "valDupe",
			"unknownDupe": "valDupe2",
			"paused": true,
			"paused": false,
			"template": {
				"spec": {
					"containers": [{
						"name":  "nginx",
						"unknownNested": "val1",
						"imagePullPolicy": "Always",
						"imagePullPolicy": "Never"
					}]
				}
			}
		}
	}"#;
        assert_eq!(
            dup_paths(body),
            [
                "metadata.name",
                "spec.unknownDupe",
                "spec.paused",
                "spec.template.spec.containers[0].imagePullPolicy"
            ]
        );
        let lines: Vec<usize> = duplicates(body.as_bytes()).iter().map(|k| k.line).collect();
        assert_eq!(lines, [7, 14, 16, 23]);
        let all = keys(body.as_bytes());
        assert_eq!(all.first().map(|k| k.path.as_str()), Some("apiVersion"));
        assert!(all.iter().any(|k| k.path == "metadata.labels.app"));
    }

    #[test]
    fn compares_decoded_keys_and_keeps_objects_apart() {
        let cases: &[(&str, &[&str])] = &[
            (r#"{}"#, &[]),
            (r#"{"a":1,"b":2}"#, &[]),
            (r#"{"a":1,"a":2}"#, &["a"]),
            (r#"{"a":1,"a":2,"a":3}"#, &["a", "a"]),
            (r#"{"a":1,"\u0061":2}"#, &["a"]),
            (r#"{"a":1,"A":2}"#, &[]),
            (r#"{"a":{"x":1},"b":{"x":1}}"#, &[]),
            (r#"{"a":[{"x":1,"x":2},{"x":1}]}"#, &["a[0].x"]),
            (r#"{"a":[[{"x":1,"x":2}]]}"#, &["a[0][0].x"]),
            (r#"[{"op":"add","path":"/a","path":"/b"}]"#, &["[0].path"]),
            (r#"{"s":"}\"{,","s":"x"}"#, &["s"]),
            (r#"{"n":-1.5e3,"t":true,"f":null,"n":0}"#, &["n"]),
            (r#"{"k.with.dots":1,"k.with.dots":2}"#, &["k.with.dots"]),
            (r#""just a string""#, &[]),
            (r#"12"#, &[]),
        ];
        for (json, want) in cases {
            assert_eq!(dup_paths(json), *want, "{json}");
        }
    }

    #[test]
    fn stops_quietly_on_what_it_does_not_understand() {
        for bad in [
            "",
            "{",
            r#"{"a""#,
            r#"{"a":1,"a""#,
            "{1:2}",
            r#"{"a" 1}"#,
            "[1,",
        ] {
            let _ = keys(bad.as_bytes());
        }
        // What came before the damage is still reported.
        assert_eq!(dup_paths(r#"{"a":1,"a":2,"b":"#), ["a"]);
    }

    #[test]
    fn follows_nesting_as_deep_as_serde_json_and_no_deeper() {
        // Deep bodies serde_json decodes are scanned whole.
        let deep = format!("{}{{\"k\":1,\"k\":2}}{}", "[".repeat(100), "]".repeat(100));
        assert!(serde_json::from_str::<serde_json::Value>(&deep).is_ok());
        assert_eq!(dup_paths(&deep), [format!("{}.k", "[0]".repeat(100))]);
        // A hostile body a million levels deep stops the scan, not the server.
        let hostile = "[".repeat(1_000_000);
        assert!(keys(hostile.as_bytes()).is_empty());
        let hostile = format!("{{\"a\":1,\"a\":2,\"b\":{}", "{\"c\":".repeat(500_000));
        assert_eq!(dup_paths(&hostile), ["a"]);
    }

    fn count_keys(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::Object(m) => m.len() + m.values().map(count_keys).sum::<usize>(),
            serde_json::Value::Array(a) => a.iter().map(count_keys).sum(),
            _ => 0,
        }
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            "[a-z\"\\\\{}\\[\\],:\u{e9}\n ]{0,6}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::from),
                proptest::collection::btree_map("[a-z\"{}.\u{e9}]{0,4}", inner, 0..5)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any document serde_json writes (so without repeated keys), compact
        /// or pretty: every key found once, none repeated, each on its line.
        #[test]
        fn finds_every_key_of_any_document(value in json_value()) {
            for text in [
                serde_json::to_string(&value).expect("json"),
                serde_json::to_string_pretty(&value).expect("json"),
            ] {
                let found = keys(text.as_bytes());
                proptest::prop_assert_eq!(found.len(), count_keys(&value));
                proptest::prop_assert!(found.iter().all(|k| !k.duplicate));
                let lines: Vec<&str> = text.lines().collect();
                for k in &found {
                    let quoted = serde_json::to_string(&k.key).expect("json");
                    proptest::prop_assert!(
                        lines.get(k.line - 1).is_some_and(|l| l.contains(&quoted)),
                        "{} not on line {}", quoted, k.line
                    );
                }
            }
        }
    }
}
