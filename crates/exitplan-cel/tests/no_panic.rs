//! `validate` never panics, whatever JSON it is given (it runs after schema
//! validation, but must not trust that), with or without an old object.

mod common;

use common::compile;
use proptest::prelude::*;
use serde_json::{Value, json};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1e300f64..1e300).prop_map(|f| json!(f)),
        "[a-z0-9%./:\\[\\]()*+?\\\\ -]{0,12}".prop_map(Value::String),
        "\\PC{0,6}".prop_map(Value::String),
        prop_oneof![
            Just("2011-08-18T19:03:37Z"),
            Just("1h2m"),
            Just("QUI="),
            Just("1997-07-16"),
            Just("1.5Gi"),
            Just("https://x.io/p"),
            Just("10.0.0.1"),
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("spec".to_owned()),
                    Just("replicas".to_owned()),
                    Just("name".to_owned()),
                    Just("items".to_owned()),
                    Just("labels".to_owned()),
                    Just("when".to_owned()),
                    Just("k".to_owned()),
                    "[a-z]{1,3}",
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn schema() -> Value {
    json!({"type": "object",
    "x-kubernetes-validations": [{"rule": "self.metadata.name.size() < 5"}],
    "properties": {"spec": {"type": "object",
    "x-kubernetes-validations": [
        {"rule": "self.replicas < 10", "messageExpression": "'got ' + string(self.replicas)"},
        {"rule": "has(self.name) && self.name.matches('^[a-z]+$')", "fieldPath": ".name", "reason": "FieldValueForbidden"},
        {"rule": "self == oldSelf", "message": "immutable"},
        {"rule": "!oldSelf.hasValue() || oldSelf.value().replicas <= self.replicas", "optionalOldSelf": true},
    ],
    "properties": {
        "replicas": {"type": "integer", "x-kubernetes-validations": [{"rule": "100 / self > 1"}]},
        "name": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self.size() > 0"},
            {"rule": "self.substring(3) != '' || self.charAt(10) != 'x'"},
            {"rule": "self.matches(self) || self.indexOf('a', 20) >= -1"},
            {"rule": "url(self).getHost() != '' && ip(self).family() == 4"},
            {"rule": "quantity(self).isInteger() || semver(self).major() >= 0"},
            {"rule": "self.split('/', 3).size() >= 0 && '%s %d'.format([self, self]) != ''"},
            {"rule": "cidr(self).containsIP(self) || base64.decode(self).size() > 0"},
            {"rule": "self.lastIndexOf(self, 100) > 0 || self.replace(self, self, -5) != ''"},
        ]},
        "when": {"type": "string", "format": "date-time", "x-kubernetes-validations": [
                {"rule": "self > timestamp('2000-01-01T00:00:00Z')"},
                {"rule": "self.getHours('+01:00') >= 0 && self.getDayOfYear() >= 0 && self.getFullYear('bad') > 0"},
            ]},
        "q": {"x-kubernetes-int-or-string": true, "x-kubernetes-validations": [{"rule": "isQuantity(self) && quantity(self).isLessThan(quantity('1Gi'))"}]},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 3"}]}},
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}, "v": {"type": "number"}},
                "x-kubernetes-validations": [{"rule": "self.v >= oldSelf.v"}, {"rule": "self.all(f, f.size() > 0)"}]}},
    }}}})
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn validate_never_panics(new in arb_json(), old in proptest::option::of(arb_json()), spec in arb_json()) {
        let rules = compile(schema());
        let _ = rules.validate(&new, old.as_ref());
        let wrapped = json!({"metadata": {"name": "abc"}, "spec": spec});
        let _ = rules.validate(&wrapped, old.as_ref());
        let _ = rules.validate(&wrapped, Some(&wrapped));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Library functions called with user-controlled strings and numbers.
    #[test]
    fn library_functions_never_panic(name in any::<String>(), pattern in "[a-z0-9%./:\\[\\]()*+?{},\\\\ -]{0,10}", n in any::<i64>()) {
        let rules = compile(schema());
        for name in [name, pattern] {
            let obj = json!({"metadata": {"name": name}, "spec": {"name": name, "replicas": n, "q": name, "when": name, "labels": {"a": name}}});
            let old = json!({"spec": {"replicas": n.wrapping_add(1), "items": [{"k": name, "v": 1.5}]}});
            let _ = rules.validate(&obj, Some(&old));
            let _ = rules.validate(&obj, None);
        }
    }
}
