//! Table tests after upstream's `validation_test.go`
//! (`TestValidateCustomResourceDefinition*`): each case names the errors
//! by type and field, as upstream's `validationMatch` does; a few also
//! pin the full rendering.

use super::*;
use crate::apiextensions::defaults::default_crd;
use crate::field::ErrorType;
use serde_json::{Value, json};

fn base() -> Value {
    json!({
        "metadata": {"name": "plural.group.com", "resourceVersion": "1"},
        "spec": {
            "group": "group.com",
            "scope": "Namespaced",
            "names": {"plural": "plural", "singular": "singular", "kind": "Plural", "listKind": "PluralList"},
            "versions": [{
                "name": "version", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}, "name": {"type": "string"}}},
                    "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
                }}}
            }]
        },
        "status": {"storedVersions": ["version"]}
    })
}

/// `base()` with JSON-pointer edits applied (`null` removes the field).
fn with(edits: &[(&str, Value)]) -> Value {
    let mut v = base();
    for (ptr, val) in edits {
        set(&mut v, ptr, val.clone());
    }
    v
}

fn set(v: &mut Value, ptr: &str, val: Value) {
    let (parent, last) = ptr.rsplit_once('/').unwrap_or(("", ptr));
    let Some(p) = v.pointer_mut(parent) else {
        panic!("no parent for {ptr}");
    };
    match p {
        Value::Object(m) if val.is_null() => {
            m.remove(last);
        }
        Value::Object(m) => {
            m.insert(last.to_owned(), val);
        }
        Value::Array(a) => {
            let i: usize = last.parse().expect("index");
            if i < a.len() {
                a[i] = val;
            } else {
                a.push(val);
            }
        }
        _ => panic!("not a container at {parent}"),
    }
}

fn crd(v: Value) -> CustomResourceDefinition {
    let mut c: CustomResourceDefinition = serde_json::from_value(v).expect("crd");
    default_crd(&mut c);
    c
}

fn matches(errs: &ErrorList) -> Vec<(ErrorType, String)> {
    let mut v: Vec<(ErrorType, String)> = errs
        .iter()
        .map(|e| (e.error_type, e.field.clone()))
        .collect();
    v.sort_by(|a, b| {
        a.1.cmp(&b.1)
            .then(format!("{:?}", a.0).cmp(&format!("{:?}", b.0)))
    });
    v
}

use ErrorType::{Duplicate, Forbidden, Invalid, NotSupported, Required, TooMany, TypeInvalid};

fn want(list: &[(ErrorType, &str)]) -> Vec<(ErrorType, String)> {
    let mut v: Vec<(ErrorType, String)> = list.iter().map(|(t, f)| (*t, (*f).to_owned())).collect();
    v.sort_by(|a, b| {
        a.1.cmp(&b.1)
            .then(format!("{:?}", a.0).cmp(&format!("{:?}", b.0)))
    });
    v
}

/// The expected errors of a case: type and field.
type Expected = Vec<(ErrorType, &'static str)>;

const SCHEMA: &str = "/spec/versions/0/schema/openAPIV3Schema";

fn prop(name: &str) -> String {
    format!("{SCHEMA}/properties/{name}")
}

#[test]
fn validate_crd_cases() {
    let second_version = json!({"name": "version2", "served": true, "storage": false,
        "schema": {"openAPIV3Schema": {"type": "object"}}});
    let cases: Vec<(&str, Value, Expected)> = vec![
        ("valid", base(), vec![]),
        (
            "name must be plural.group",
            with(&[("/metadata/name", json!("other.group.com"))]),
            vec![(Invalid, "metadata.name")],
        ),
        (
            "group without a dot, scope empty",
            with(&[
                ("/spec/group", json!("group")),
                ("/spec/scope", json!("")),
                ("/metadata/name", json!("plural.group")),
            ]),
            vec![(Invalid, "spec.group"), (Required, "spec.scope")],
        ),
        (
            "unsupported scope",
            with(&[("/spec/scope", json!("Global"))]),
            vec![(NotSupported, "spec.scope")],
        ),
        (
            "no storage version",
            with(&[("/spec/versions/0/storage", json!(false))]),
            vec![(Invalid, "spec.versions")],
        ),
        (
            "multiple storage versions",
            with(&[(
                "/spec/versions/1",
                json!({"name": "version2", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}),
            )]),
            vec![
                (Invalid, "spec.versions"),
                (Invalid, "status.storedVersions"),
            ],
        ),
        (
            "duplicate version names",
            with(&[(
                "/spec/versions/1",
                json!({"name": "version", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object"}}}),
            )]),
            vec![(Invalid, "spec.versions")],
        ),
        (
            "version name not a DNS-1035 label",
            with(&[
                ("/spec/versions/0/name", json!("1version")),
                ("/status/storedVersions", json!(["1version"])),
            ]),
            vec![(Invalid, "spec.versions[0].name")],
        ),
        (
            "bad names",
            with(&[
                ("/spec/names/plural", json!("Plurals")),
                ("/metadata/name", json!("Plurals.group.com")),
                ("/spec/names/singular", json!("Singular")),
                ("/spec/names/kind", json!("Bad.Kind")),
                ("/spec/names/listKind", json!("Bad.Kind")),
                ("/spec/names/shortNames", json!(["Short"])),
                ("/spec/names/categories", json!(["Cat"])),
            ]),
            vec![
                (Invalid, "metadata.name"),
                (Invalid, "spec.names.plural"),
                (Invalid, "spec.names.singular"),
                (Invalid, "spec.names.kind"),
                (Invalid, "spec.names.listKind"),
                (Invalid, "spec.names.listKind"),
                (Invalid, "spec.names.shortNames[0]"),
                (Invalid, "spec.names.categories[0]"),
            ],
        ),
        (
            "required names",
            with(&[
                ("/spec/names/plural", json!("")),
                ("/spec/names/kind", json!("")),
                ("/spec/names/listKind", json!("")),
                ("/metadata/name", json!(".group.com")),
            ]),
            vec![
                (Invalid, "metadata.name"),
                (Required, "spec.names.plural"),
                (Required, "spec.names.kind"),
                (Required, "spec.names.listKind"),
            ],
        ),
        (
            "stored versions must contain the storage version and appear in spec.versions",
            with(&[("/status/storedVersions", json!(["gone"]))]),
            vec![
                (Invalid, "status.storedVersions"),
                (Invalid, "status.storedVersions[0]"),
            ],
        ),
        (
            "schemas are required",
            with(&[("/spec/versions/0/schema", Value::Null)]),
            vec![(Required, "spec.versions[0].schema.openAPIV3Schema")],
        ),
        (
            "different per-version schemas keep per-version paths",
            with(&[
                ("/spec/versions/1", second_version.clone()),
                (
                    &format!("{SCHEMA}/properties/spec/properties/name/type"),
                    json!("foo"),
                ),
            ]),
            vec![(
                NotSupported,
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[name].type",
            )],
        ),
        (
            "a schema shared by all versions is reported at spec.validation",
            with(&[(
                &format!("{SCHEMA}/properties/spec/properties/name/type"),
                json!("foo"),
            )]),
            vec![(
                NotSupported,
                "spec.validation.openAPIV3Schema.properties[spec].properties[name].type",
            )],
        ),
        (
            "preserveUnknownFields cannot be set",
            with(&[("/spec/preserveUnknownFields", json!(true))]),
            vec![(Invalid, "spec.preserveUnknownFields")],
        ),
        (
            "structural: field without type",
            with(&[(
                &format!("{SCHEMA}/properties/spec/properties/name"),
                json!({"description": "x"}),
            )]),
            vec![(
                Required,
                "spec.validation.openAPIV3Schema.properties[spec].properties[name].type",
            )],
        ),
        (
            "additionalProperties with properties, uniqueItems",
            with(&[
                (
                    &format!("{SCHEMA}/properties/spec/additionalProperties"),
                    json!({"type": "string"}),
                ),
                (
                    &format!("{SCHEMA}/properties/spec/properties/list"),
                    json!({"type": "array", "uniqueItems": true, "items": {"type": "string"}}),
                ),
            ]),
            vec![
                (
                    Forbidden,
                    "spec.validation.openAPIV3Schema.properties[spec].additionalProperties",
                ),
                (
                    Forbidden,
                    "spec.validation.openAPIV3Schema.properties[spec].properties[list].uniqueItems",
                ),
            ],
        ),
        (
            "forbidden schema fields",
            with(&[(
                &format!("{SCHEMA}/properties/spec/properties/name"),
                json!({"type": "string", "$ref": "#/x"}),
            )]),
            vec![(
                Forbidden,
                "spec.validation.openAPIV3Schema.properties[spec].properties[name].$ref",
            )],
        ),
        (
            "x-kubernetes-preserve-unknown-fields false",
            with(&[(
                &format!("{SCHEMA}/properties/spec/x-kubernetes-preserve-unknown-fields"),
                json!(false),
            )]),
            vec![(
                Invalid,
                "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-preserve-unknown-fields",
            )],
        ),
        (
            "list-type map needs keys that are required or defaulted",
            with(&[(
                &format!("{SCHEMA}/properties/spec/properties/ports"),
                json!({
                    "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "missing"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}}
                }),
            )]),
            vec![
                (
                    Invalid,
                    "spec.validation.openAPIV3Schema.properties[spec].properties[ports].x-kubernetes-list-map-keys",
                ),
                (
                    Required,
                    "spec.validation.openAPIV3Schema.properties[spec].properties[ports].items.properties[name].default",
                ),
            ],
        ),
        (
            "list-type map without keys, list-type on a non-array",
            with(&[
                (
                    &format!("{SCHEMA}/properties/spec/properties/ports"),
                    json!({"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}}),
                ),
                (
                    &format!("{SCHEMA}/properties/spec/properties/name/x-kubernetes-list-type"),
                    json!("set"),
                ),
            ]),
            vec![
                (
                    Required,
                    "spec.validation.openAPIV3Schema.properties[spec].properties[ports].x-kubernetes-list-map-keys",
                ),
                (
                    Invalid,
                    "spec.validation.openAPIV3Schema.properties[spec].properties[name].type",
                ),
            ],
        ),
        (
            "set of objects must be atomic",
            with(&[(
                &format!("{SCHEMA}/properties/spec/properties/set"),
                json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}),
            )]),
            vec![(
                Invalid,
                "spec.validation.openAPIV3Schema.properties[spec].properties[set].items.x-kubernetes-map-type",
            )],
        ),
        (
            "defaults: forbidden in metadata, must validate, must be pruned",
            with(&[
                (
                    &prop("metadata"),
                    json!({"type": "object", "default": {"name": "x"}}),
                ),
                (
                    &format!("{SCHEMA}/properties/spec/properties/replicas/default"),
                    json!("one"),
                ),
                (
                    &format!("{SCHEMA}/properties/spec/properties/obj"),
                    json!({"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}}),
                ),
            ]),
            vec![
                (
                    Forbidden,
                    "spec.validation.openAPIV3Schema.properties[metadata].default",
                ),
                (
                    Invalid,
                    "spec.validation.openAPIV3Schema.properties[spec].properties[obj].default",
                ),
                (
                    TypeInvalid,
                    "spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default",
                ),
            ],
        ),
        (
            "status subresource restricts the root",
            with(&[
                ("/spec/versions/0/subresources", json!({"status": {}})),
                (&format!("{SCHEMA}/anyOf"), json!([{"required": ["spec"]}])),
            ]),
            vec![(Invalid, "spec.validation.openAPIV3Schema")],
        ),
        (
            "nullable root",
            with(&[(&format!("{SCHEMA}/nullable"), json!(true))]),
            vec![(Forbidden, "spec.validation.openAPIV3Schema.nullable")],
        ),
        (
            "scale paths",
            with(&[(
                "/spec/versions/0/subresources",
                json!({"scale": {"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.replicas", "labelSelectorPath": ".metadata.labels"}}),
            )]),
            vec![
                (Invalid, "spec.subresources.scale.specReplicasPath"),
                (Invalid, "spec.subresources.scale.statusReplicasPath"),
                (Invalid, "spec.subresources.scale.labelSelectorPath"),
            ],
        ),
        (
            "printer columns",
            with(&[(
                "/spec/versions/0/additionalPrinterColumns",
                json!([{"name": "", "type": "", "jsonPath": ""}, {"name": "a", "type": "int", "format": "x", "jsonPath": "spec"}]),
            )]),
            vec![
                (Required, "spec.additionalPrinterColumns[0].name"),
                (Required, "spec.additionalPrinterColumns[0].type"),
                (Required, "spec.additionalPrinterColumns[0].JSONPath"),
                (Invalid, "spec.additionalPrinterColumns[1].type"),
                (Invalid, "spec.additionalPrinterColumns[1].format"),
                (Invalid, "spec.additionalPrinterColumns[1].JSONPath"),
            ],
        ),
        (
            "selectable fields",
            with(&[(
                "/spec/versions/0/selectableFields",
                json!([
                    {"jsonPath": ".spec.name"}, {"jsonPath": ".spec.name"}, {"jsonPath": ".metadata.name"},
                    {"jsonPath": ".spec"}, {"jsonPath": ".spec.nope"}, {"jsonPath": ""}
                ]),
            )]),
            vec![
                (Duplicate, "spec.selectableFields[1].jsonPath"),
                (Invalid, "spec.selectableFields[2].jsonPath"),
                (Invalid, "spec.selectableFields[3].jsonPath"),
                (Invalid, "spec.selectableFields[4].jsonPath"),
                (Required, "spec.selectableFields[5].jsonPath"),
            ],
        ),
        (
            "too many selectable fields",
            with(&[
                (
                    &format!("{SCHEMA}/properties/spec"),
                    json!({"type": "object", "properties": {
                        "a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}, "d": {"type": "string"},
                        "e": {"type": "string"}, "f": {"type": "string"}, "g": {"type": "string"}, "h": {"type": "string"}, "i": {"type": "string"}
                    }}),
                ),
                (
                    "/spec/versions/0/selectableFields",
                    json!([
                        {"jsonPath": ".spec.a"}, {"jsonPath": ".spec.b"}, {"jsonPath": ".spec.c"}, {"jsonPath": ".spec.d"},
                        {"jsonPath": ".spec.e"}, {"jsonPath": ".spec.f"}, {"jsonPath": ".spec.g"}, {"jsonPath": ".spec.h"}, {"jsonPath": ".spec.i"}
                    ]),
                ),
            ]),
            vec![(TooMany, "spec.selectableFields")],
        ),
        (
            "webhook conversion needs a client config",
            with(&[(
                "/spec/conversion",
                json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}}),
            )]),
            vec![(Required, "spec.conversion.webhookClientConfig")],
        ),
        (
            "webhook url",
            with(&[(
                "/spec/conversion",
                json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": "http://u@/p?q=1#f"}}}),
            )]),
            vec![
                (Invalid, "spec.conversion.webhookClientConfig.url"),
                (Invalid, "spec.conversion.webhookClientConfig.url"),
                (Invalid, "spec.conversion.webhookClientConfig.url"),
                (Invalid, "spec.conversion.webhookClientConfig.url"),
                (Invalid, "spec.conversion.webhookClientConfig.url"),
            ],
        ),
        (
            "webhook service",
            with(&[(
                "/spec/conversion",
                json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v9"], "clientConfig": {"service": {"name": "", "namespace": "ns", "port": 0, "path": "/a//B"}}}}),
            )]),
            vec![
                (Required, "spec.conversion.webhookClientConfig.service.name"),
                (Invalid, "spec.conversion.webhookClientConfig.service.port"),
                (Invalid, "spec.conversion.webhookClientConfig.service.path"),
                (Invalid, "spec.conversion.webhookClientConfig.service.path"),
                (Invalid, "spec.conversion.conversionReviewVersions"),
            ],
        ),
        (
            "valid webhook",
            with(&[(
                "/spec/conversion",
                json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://example.com/convert"}}}),
            )]),
            vec![],
        ),
        (
            "None conversion with review versions",
            with(&[(
                "/spec/conversion",
                json!({"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"]}}),
            )]),
            vec![(Forbidden, "spec.conversion.conversionReviewVersions")],
        ),
        (
            "protected group needs approval",
            with(&[
                ("/spec/group", json!("sample.k8s.io")),
                ("/metadata/name", json!("plural.sample.k8s.io")),
            ]),
            vec![(Required, "metadata.annotations[api-approved.kubernetes.io]")],
        ),
        (
            "deprecationWarning only on deprecated versions",
            with(&[("/spec/versions/0/deprecationWarning", json!("old"))]),
            vec![(Invalid, "spec.versions[0].deprecationWarning")],
        ),
        (
            "x-kubernetes-validations static checks",
            with(&[(
                &format!("{SCHEMA}/properties/spec/x-kubernetes-validations"),
                json!([
                    {"rule": " "}, {"rule": "self.a", "reason": "Bad"}, {"rule": "a\nb"}
                ]),
            )]),
            vec![
                (
                    Required,
                    "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
                ),
                (
                    NotSupported,
                    "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].reason",
                ),
                (
                    Required,
                    "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[2].message",
                ),
            ],
        ),
    ];
    for (name, v, expected) in cases {
        let errs = validate_crd(&crd(v));
        assert_eq!(matches(&errs), want(&expected), "{name}: {errs}");
    }
}

#[test]
fn validate_crd_renderings() {
    let c = crd(with(&[
        ("/spec/versions/0/storage", json!(false)),
        ("/metadata/name", json!("x.group.com")),
    ]));
    let text = validate_crd(&c).to_string();
    assert!(text.contains(r#"metadata.name: Invalid value: "x.group.com": must be spec.names.plural+"."+spec.group"#), "{text}");
    assert!(text.contains("spec.versions: Invalid value: "), "{text}");
    assert!(
        text.contains(": must have exactly one version marked as storage version"),
        "{text}"
    );

    let c = crd(with(&[(
        "/status/storedVersions",
        json!(["version", "gone"]),
    )]));
    assert_eq!(
        validate_crd(&c).to_string(),
        r#"status.storedVersions[1]: Invalid value: "gone": missing from spec.versions; gone was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in gone and removes gone from status.storedVersions"#
    );

    let c = crd(with(&[(
        &format!("{SCHEMA}/properties/spec/properties/replicas/default"),
        json!("one"),
    )]));
    assert_eq!(
        validate_crd(&c).to_string(),
        r#"spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: "string": in body must be of type integer: "string""#
    );

    let c = crd(with(&[
        ("/spec/group", json!("group")),
        ("/metadata/name", json!("plural.group")),
    ]));
    assert_eq!(
        validate_crd(&c).to_string(),
        r#"spec.group: Invalid value: "group": should be a domain with at least one dot"#
    );

    let c = crd(with(&[(
        &format!("{SCHEMA}/properties/spec/properties/name"),
        json!({}),
    )]));
    assert_eq!(
        validate_crd(&c).to_string(),
        "spec.validation.openAPIV3Schema.properties[spec].properties[name].type: Required value: must not be empty for specified object fields"
    );
}

#[test]
fn validate_crd_update_cases() {
    let established = |mut v: Value| {
        set(
            &mut v,
            "/status/conditions",
            json!([{"type": "Established", "status": "True"}]),
        );
        v
    };
    let cases: Vec<(&str, Value, Value, Expected)> = vec![
        ("unchanged", base(), base(), vec![]),
        (
            "group and plural are immutable",
            base(),
            with(&[
                ("/spec/group", json!("other.com")),
                ("/spec/names/plural", json!("others")),
            ]),
            vec![(Invalid, "spec.group"), (Invalid, "spec.names.plural")],
        ),
        (
            "scope and kind change before established",
            base(),
            with(&[
                ("/spec/scope", json!("Cluster")),
                ("/spec/names/kind", json!("Other")),
            ]),
            vec![],
        ),
        (
            "scope and kind are immutable once established",
            established(base()),
            established(with(&[
                ("/spec/scope", json!("Cluster")),
                ("/spec/names/kind", json!("Other")),
            ])),
            vec![(Invalid, "spec.scope"), (Invalid, "spec.names.kind")],
        ),
        (
            "a version that was stored cannot be removed",
            with(&[
                (
                    "/spec/versions/1",
                    json!({"name": "v2", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object"}}}),
                ),
                ("/status/storedVersions", json!(["version", "v2"])),
            ]),
            with(&[("/status/storedVersions", json!(["version", "v2"]))]),
            vec![(Invalid, "status.storedVersions[1]")],
        ),
        (
            "ratcheting: an old schema-less version may stay schema-less",
            with(&[("/spec/versions/0/schema", Value::Null)]),
            with(&[
                ("/spec/versions/0/schema", Value::Null),
                ("/metadata/labels", json!({"a": "b"})),
            ]),
            vec![(Required, "spec.versions[0].schema.openAPIV3Schema")],
        ),
    ];
    for (name, old, new, expected) in cases {
        let errs = validate_crd_update(&crd(new), &crd(old));
        assert_eq!(matches(&errs), want(&expected), "{name}: {errs}");
    }
}

#[test]
fn validate_crd_status_update_checks_accepted_names() {
    let old = crd(base());
    let new = crd(with(&[(
        "/status/acceptedNames",
        json!({"plural": "Bad", "kind": "K", "listKind": "K"}),
    )]));
    assert_eq!(
        matches(&validate_crd_status_update(&new, &old)),
        want(&[
            (Invalid, "status.acceptedNames.plural"),
            (Invalid, "status.acceptedNames.listKind")
        ])
    );
}
