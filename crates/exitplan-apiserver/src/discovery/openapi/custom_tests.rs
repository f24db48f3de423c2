//! Cases ported from upstream's `controller/openapi/builder/builder_test.go`
//! (`TestNewBuilder`, `TestBuildOpenAPIV2`, `TestBuildOpenAPIV3`) and
//! `controller/openapi/v2/conversion_test.go`
//! (`Test_ConvertJSONSchemaPropsToOpenAPIv2SchemaByType`), by their names.

use std::collections::BTreeSet;

use super::*;

const FOO: &str = "io.k8s.bar.v1.Foo";
const GVK: &str = r#"[{"group":"bar.k8s.io","kind":"Foo","version":"v1"}]"#;

/// The CRD upstream's tests build: `bar.k8s.io`, `Foo`/`foos`, namespaced.
fn crd(schema: Option<Value>, extra_version: Value) -> CustomResourceDefinition {
    let mut version = json!({"name": "v1", "served": true, "storage": true});
    if let Some(schema) = schema {
        version["schema"] = json!({"openAPIV3Schema": schema});
    }
    if let (Value::Object(v), Value::Object(extra)) = (&mut version, extra_version) {
        v.extend(extra);
    }
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.bar.k8s.io"},
        "spec": {
            "group": "bar.k8s.io",
            "names": {"plural": "foos", "singular": "foo", "kind": "Foo", "listKind": "FooList"},
            "scope": "Namespaced",
            "versions": [version],
        },
    }))
    .expect("CRD fixture")
}

/// As upstream's tests do: the meta properties' long descriptions are
/// checked once (`meta_properties_carry_upstream_descriptions`), not per case.
fn without_meta_descriptions(mut schema: Value) -> Value {
    for field in ["apiVersion", "kind", "metadata"] {
        if let Some(Value::Object(p)) = schema.pointer_mut(&format!("/properties/{field}")) {
            p.remove("description");
        }
    }
    schema
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).expect("test JSON")
}

#[derive(Clone, Copy)]
enum Doc {
    V2,
    V3,
}

fn kind_schema_of(c: &CustomResourceDefinition, doc: Doc) -> Value {
    let defs = match doc {
        Doc::V2 => custom_resource_definitions_v2(c, "v1"),
        Doc::V3 => custom_resource_schemas(c, "v1"),
    };
    without_meta_descriptions(defs.get(FOO).cloned().expect("kind schema"))
}

const WITH_EXTENSIONS: &str = r#"{
  "type":"object",
  "properties": {
    "int-or-string-1": {"x-kubernetes-int-or-string": true, "anyOf": [{"type":"integer"},{"type":"string"}]},
    "int-or-string-2": {"x-kubernetes-int-or-string": true, "allOf": [{"anyOf": [{"type":"integer"},{"type":"string"}]}, {"anyOf": [{"minimum": 42.0}]}]},
    "int-or-string-3": {"x-kubernetes-int-or-string": true, "anyOf": [{"type":"integer"},{"type":"string"}], "allOf": [{"anyOf": [{"minimum": 42.0}]}]},
    "int-or-string-4": {"x-kubernetes-int-or-string": true, "anyOf": [{"minimum": 42.0}]},
    "int-or-string-5": {"x-kubernetes-int-or-string": true, "anyOf": [{"minimum": 42.0}], "allOf": [{"minimum": 42.0}]},
    "int-or-string-6": {"x-kubernetes-int-or-string": true},
    "preserve-unknown-fields": {"x-kubernetes-preserve-unknown-fields": true},
    "embedded-object": {"x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true, "type": "object"}
  }
}"#;

#[test]
fn builder_cases() {
    let with_meta_v2 = |extra: &str| {
        format!(
            r##"{{"type":"object","properties":{{"apiVersion":{{"type":"string"}},"kind":{{"type":"string"}},"metadata":{{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}}{extra}}},"x-kubernetes-group-version-kind":{GVK}}}"##
        )
    };
    let with_meta_v3 = |extra: &str| {
        format!(
            r##"{{"type":"object","properties":{{"apiVersion":{{"type":"string"}},"kind":{{"type":"string"}},"metadata":{{"allOf":[{{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}}]}}{extra}}},"x-kubernetes-group-version-kind":{GVK}}}"##
        )
    };
    let bare = format!(r#"{{"type":"object","x-kubernetes-group-version-kind":{GVK}}}"#);
    let spec_status =
        r#"{"type":"object","properties":{"spec":{"type":"object"},"status":{"type":"object"}}}"#;
    let default_field = r#"{"type":"object","properties":{"spec":{"type":"object","properties":{"field":{"type":"string","default":"foo"}}},"status":{"type":"object"}}}"#;
    let one_of = r#"{"type":"object","properties":{"foo":{"type":"string","oneOf":[{"pattern":"a"},{"pattern":"b"}]}}}"#;

    let extensions_v2 = with_meta_v2(
        r#","int-or-string-1":{"x-kubernetes-int-or-string":true},
           "int-or-string-2":{"x-kubernetes-int-or-string":true},
           "int-or-string-3":{"x-kubernetes-int-or-string":true},
           "int-or-string-4":{"x-kubernetes-int-or-string":true},
           "int-or-string-5":{"x-kubernetes-int-or-string":true},
           "int-or-string-6":{"x-kubernetes-int-or-string":true},
           "preserve-unknown-fields":{"x-kubernetes-preserve-unknown-fields":true},
           "embedded-object":{"x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}"#,
    );
    let extensions_v3 = with_meta_v3(
        r##","int-or-string-1":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
           "int-or-string-2":{"x-kubernetes-int-or-string":true,"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]},{"anyOf":[{"minimum":42}]}]},
           "int-or-string-3":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}],"allOf":[{"anyOf":[{"minimum":42}]}]},
           "int-or-string-4":{"x-kubernetes-int-or-string":true,"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]}],"anyOf":[{"minimum":42}]},
           "int-or-string-5":{"x-kubernetes-int-or-string":true,"anyOf":[{"minimum":42}],"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]},{"minimum":42}]},
           "int-or-string-6":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
           "preserve-unknown-fields":{"x-kubernetes-preserve-unknown-fields":true},
           "embedded-object":{"x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"type":"object","required":["kind","apiVersion"],
             "properties":{
               "apiVersion":{"description":"apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources","type":"string"},
               "kind":{"description":"kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds","type":"string"},
               "metadata":{"description":"Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata","allOf":[{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]}}}"##,
    );

    let cases: Vec<(&str, Option<&str>, Value, Doc, String)> = vec![
        ("nil", None, json!({}), Doc::V2, bare.clone()),
        ("nil v3", None, json!({}), Doc::V3, bare.clone()),
        (
            "with properties",
            Some(spec_status),
            json!({}),
            Doc::V2,
            with_meta_v2(r#","spec":{"type":"object"},"status":{"type":"object"}"#),
        ),
        (
            "with properties v3",
            Some(spec_status),
            json!({}),
            Doc::V3,
            with_meta_v3(r#","spec":{"type":"object"},"status":{"type":"object"}"#),
        ),
        (
            "type only",
            Some(r#"{"type":"object"}"#),
            json!({}),
            Doc::V2,
            with_meta_v2(""),
        ),
        (
            "preserve unknown at root v2",
            Some(r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true}"#),
            json!({}),
            Doc::V2,
            bare.clone(),
        ),
        (
            "preserve unknown at root v3",
            Some(r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true}"#),
            json!({}),
            Doc::V3,
            with_meta_v3("").replacen(
                r#""type":"object","#,
                r#""type":"object","x-kubernetes-preserve-unknown-fields":true,"#,
                1,
            ),
        ),
        (
            "with extensions",
            Some(WITH_EXTENSIONS),
            json!({}),
            Doc::V2,
            extensions_v2,
        ),
        (
            "with extensions as v3 schema",
            Some(WITH_EXTENSIONS),
            json!({}),
            Doc::V3,
            extensions_v3,
        ),
        (
            "with invalid-typed properties",
            Some(r#"{"type":"object","properties":{"spec":{"type":"bug"},"status":{"type":"object"}}}"#),
            json!({}),
            Doc::V2,
            bare.clone(),
        ),
        (
            "with non-structural schema",
            Some(r#"{"type":"object","properties":{"foo":{"type":"array"}}}"#),
            json!({}),
            Doc::V2,
            bare.clone(),
        ),
        (
            "with non-structural schema v3",
            Some(r#"{"type":"object","properties":{"foo":{"type":"array"}}}"#),
            json!({}),
            Doc::V3,
            bare.clone(),
        ),
        (
            "with an unsupported field ($ref)",
            Some(r##"{"type":"object","properties":{"foo":{"$ref":"#/definitions/x"}}}"##),
            json!({}),
            Doc::V3,
            bare.clone(),
        ),
        (
            "with stripped defaults",
            Some(r#"{"type":"object","properties":{"foo":{"type":"string","default":"bar"}}}"#),
            json!({}),
            Doc::V2,
            with_meta_v2(r#","foo":{"type":"string"}"#),
        ),
        (
            "v2",
            Some(one_of),
            json!({}),
            Doc::V2,
            with_meta_v2(r#","foo":{"type":"string"}"#),
        ),
        (
            "v3",
            Some(one_of),
            json!({}),
            Doc::V3,
            with_meta_v3(r#","foo":{"type":"string","oneOf":[{"pattern":"a"},{"pattern":"b"}]}"#),
        ),
        (
            "with v3 nullable field",
            Some(r#"{"type":"object","properties":{"spec":{"type":"object","nullable":true},"status":{"type":"object"}}}"#),
            json!({}),
            Doc::V3,
            with_meta_v3(r#","spec":{"type":"object","nullable":true},"status":{"type":"object"}"#),
        ),
        (
            "with default not pruned for v3",
            Some(default_field),
            json!({}),
            Doc::V3,
            with_meta_v3(
                r#","spec":{"type":"object","properties":{"field":{"type":"string","default":"foo"}}},"status":{"type":"object"}"#,
            ),
        ),
        (
            "with selectable fields enabled",
            Some(r#"{"type":"object","properties":{"foo":{"type":"string"}}}"#),
            json!({"selectableFields": [{"jsonPath": "foo"}]}),
            Doc::V2,
            with_meta_v2(r#","foo":{"type":"string"}"#).replacen(
                r#""x-kubernetes-group-version-kind""#,
                r#""x-kubernetes-selectable-fields":[{"fieldPath":"foo"}],"x-kubernetes-group-version-kind""#,
                1,
            ),
        ),
        (
            "with selectable fields enabled v3",
            Some(default_field),
            json!({"selectableFields": [{"jsonPath": ".spec.field"}]}),
            Doc::V3,
            with_meta_v3(
                r#","spec":{"type":"object","properties":{"field":{"type":"string","default":"foo"}}},"status":{"type":"object"}"#,
            )
            .replacen(
                r#""x-kubernetes-group-version-kind""#,
                r#""x-kubernetes-selectable-fields":[{"fieldPath":"spec.field"}],"x-kubernetes-group-version-kind""#,
                1,
            ),
        ),
        (
            "with CEL rules kept in both documents",
            Some(
                r#"{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.replicas <= self.maxReplicas","message":"too many"}],"properties":{"replicas":{"type":"integer"},"maxReplicas":{"type":"integer"}}}}}"#,
            ),
            json!({}),
            Doc::V2,
            with_meta_v2(
                r#","spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.replicas <= self.maxReplicas","message":"too many"}],"properties":{"replicas":{"type":"integer"},"maxReplicas":{"type":"integer"}}}"#,
            ),
        ),
    ];
    for (name, schema, extra, doc, want) in cases {
        let c = crd(schema.map(parse), extra);
        assert_eq!(kind_schema_of(&c, doc), parse(&want), "{name}");
    }
}

#[test]
fn crd_preserve_unknown_fields_publishes_a_bare_v2_object() {
    let mut c = crd(
        Some(parse(
            r#"{"type":"object","properties":{"foo":{"type":"string"}}}"#,
        )),
        json!({}),
    );
    c.spec.preserve_unknown_fields = Some(true);
    let bare = format!(r#"{{"type":"object","x-kubernetes-group-version-kind":{GVK}}}"#);
    assert_eq!(kind_schema_of(&c, Doc::V2), parse(&bare));
    // v3 publishes the schema: kubectl does not validate against it.
    assert!(kind_schema_of(&c, Doc::V3)["properties"]["foo"].is_object());
}

#[test]
fn list_schemas() {
    let c = crd(Some(json!({"type": "object"})), json!({}));
    for (doc, prefix, meta) in [
        (
            custom_resource_definitions_v2(&c, "v1"),
            "#/definitions/",
            json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", "description": LIST_METADATA_DESCRIPTION}),
        ),
        (
            custom_resource_schemas(&c, "v1"),
            "#/components/schemas/",
            json!({"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}], "description": LIST_METADATA_DESCRIPTION}),
        ),
    ] {
        assert_eq!(
            doc.keys().collect::<Vec<_>>(),
            ["io.k8s.bar.v1.Foo", "io.k8s.bar.v1.FooList"]
        );
        let list = &doc["io.k8s.bar.v1.FooList"];
        assert_eq!(
            list,
            &json!({
                "description": "FooList is a list of Foo",
                "type": "object",
                "required": ["items"],
                "properties": {
                    "apiVersion": {"description": API_VERSION_DESCRIPTION, "type": "string"},
                    "kind": {"description": KIND_DESCRIPTION, "type": "string"},
                    "items": {
                        "description": "List of foos. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                        "type": "array",
                        "items": {"$ref": format!("{prefix}io.k8s.bar.v1.Foo")},
                    },
                    "metadata": meta,
                },
                "x-kubernetes-group-version-kind": [{"group": "bar.k8s.io", "kind": "FooList", "version": "v1"}],
            })
        );
    }
}

#[test]
fn meta_properties_carry_upstream_descriptions() {
    let c = crd(Some(json!({"type": "object"})), json!({}));
    let v3 = &custom_resource_schemas(&c, "v1")[FOO];
    assert_eq!(
        v3["properties"]["metadata"],
        json!({"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}], "description": OBJECT_METADATA_DESCRIPTION})
    );
    assert_eq!(
        v3["properties"]["apiVersion"],
        json!({"description": API_VERSION_DESCRIPTION, "type": "string"})
    );
    assert_eq!(
        v3["properties"]["kind"],
        json!({"description": KIND_DESCRIPTION, "type": "string"})
    );
    let v2 = &custom_resource_definitions_v2(&c, "v1")[FOO];
    assert_eq!(
        v2["properties"]["metadata"],
        json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "description": OBJECT_METADATA_DESCRIPTION})
    );
}

/// "include selectable fields with different version", and a version the
/// CRD does not have (upstream's `GetSchemaForVersion` fails: nothing published).
#[test]
fn names_follow_the_version_and_group() {
    let mut c = crd(Some(json!({"type": "object"})), json!({}));
    c.spec.versions[0].name = "v2".into();
    let v2 = custom_resource_schemas(&c, "v2");
    assert_eq!(
        v2["io.k8s.bar.v2.Foo"]["x-kubernetes-group-version-kind"],
        json!([{"group": "bar.k8s.io", "kind": "Foo", "version": "v2"}])
    );
    assert_eq!(
        v2["io.k8s.bar.v2.FooList"]["properties"]["items"]["items"]["$ref"],
        "#/components/schemas/io.k8s.bar.v2.Foo"
    );
    assert!(custom_resource_schemas(&c, "v1").is_empty());
    assert!(custom_resource_definitions_v2(&c, "v1").is_empty());

    for (group, want) in [
        ("example.com", "com.example.v1.Widget"),
        ("stable.example.com", "com.example.stable.v1.Widget"),
        ("foo-group", "foo-group.v1.Widget"),
    ] {
        assert_eq!(
            custom_definition_name(group, "v1", "Widget"),
            want,
            "{group}"
        );
    }
}

#[test]
fn list_kind_defaults_to_kind_list() {
    let mut c = crd(Some(json!({"type": "object"})), json!({}));
    c.spec.names.list_kind = None;
    let defs = custom_resource_schemas(&c, "v1");
    assert_eq!(
        defs["io.k8s.bar.v1.FooList"]["x-kubernetes-group-version-kind"][0]["kind"],
        "FooList"
    );
}

/// A property named `default` is a field, not a default value.
#[test]
fn pruning_defaults_keeps_a_field_named_default() {
    let c = crd(
        Some(
            json!({"type": "object", "properties": {"default": {"type": "string", "default": "x"}}}),
        ),
        json!({}),
    );
    let v2 = &custom_resource_definitions_v2(&c, "v1")[FOO];
    assert_eq!(v2["properties"]["default"], json!({"type": "string"}));
}

/// `Test_ConvertJSONSchemaPropsToOpenAPIv2SchemaByType`: one schema node
/// through `ToStructuralOpenAPIV2` and `ToGoOpenAPI`.
#[test]
fn v2_conversion_by_type() {
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "description",
            json!({"description": "test"}),
            json!({"description": "test"}),
        ),
        (
            "type and format",
            json!({"type": "test", "format": "test2"}),
            json!({"type": "test", "format": "test2"}),
        ),
        (
            "nullable",
            json!({"type": "object", "nullable": true}),
            json!({}),
        ),
        (
            "nullable required",
            json!({"type": "object", "properties": {"a": {"nullable": true, "type": "string"}, "b": {"nullable": true, "type": "string"}, "c": {"type": "string"}}, "required": ["a", "c"]}),
            json!({"type": "object", "properties": {"a": {}, "b": {}, "c": {"type": "string"}}, "required": ["c"]}),
        ),
        (
            "nullable required additionalProperties",
            json!({"type": "object", "additionalProperties": {"nullable": true, "type": "string"}, "required": ["a", "c"]}),
            json!({"type": "object", "additionalProperties": {}}),
        ),
        ("title", json!({"title": "test"}), json!({"title": "test"})),
        (
            "default",
            json!({"default": "test"}),
            json!({"default": "test"}),
        ),
        (
            "maximum and exclusiveMaximum",
            json!({"maximum": 6.4, "exclusiveMaximum": true}),
            json!({"maximum": 6.4, "exclusiveMaximum": true}),
        ),
        (
            "minimum and exclusiveMinimum",
            json!({"minimum": 6.4, "exclusiveMinimum": true}),
            json!({"minimum": 6.4, "exclusiveMinimum": true}),
        ),
        (
            "maxLength",
            json!({"maxLength": 64}),
            json!({"maxLength": 64}),
        ),
        (
            "minLength",
            json!({"minLength": 64}),
            json!({"minLength": 64}),
        ),
        (
            "pattern",
            json!({"pattern": "test"}),
            json!({"pattern": "test"}),
        ),
        ("maxItems", json!({"maxItems": 64}), json!({"maxItems": 64})),
        ("minItems", json!({"minItems": 64}), json!({"minItems": 64})),
        (
            "uniqueItems",
            json!({"uniqueItems": true}),
            json!({"uniqueItems": true}),
        ),
        (
            "multipleOf",
            json!({"multipleOf": 6.4}),
            json!({"multipleOf": 6.4}),
        ),
        (
            "enum",
            json!({"enum": ["test", "test2"]}),
            json!({"enum": ["test", "test2"]}),
        ),
        (
            "maxProperties",
            json!({"maxProperties": 64}),
            json!({"maxProperties": 64}),
        ),
        (
            "minProperties",
            json!({"minProperties": 64}),
            json!({"minProperties": 64}),
        ),
        (
            "required",
            json!({"required": ["test", "test2"]}),
            json!({"required": ["test", "test2"]}),
        ),
        (
            "items single props",
            json!({"items": {"type": "boolean"}}),
            json!({"items": {"type": "boolean"}}),
        ),
        // Intentionally not exported in v2.
        (
            "allOf",
            json!({"allOf": [{"type": "boolean"}, {"type": "string"}]}),
            json!({}),
        ),
        // Not supported by OpenAPI v2.
        (
            "oneOf",
            json!({"oneOf": [{"type": "boolean"}, {"type": "string"}]}),
            json!({}),
        ),
        (
            "anyOf",
            json!({"anyOf": [{"type": "boolean"}, {"type": "string"}]}),
            json!({}),
        ),
        ("not", json!({"not": {"type": "boolean"}}), json!({})),
        (
            "nested logic",
            json!({
                "allOf": [{"not": {"type": "boolean"}}, {"anyOf": [{"type": "boolean"}, {"type": "string"}]}, {"oneOf": [{"type": "boolean"}, {"type": "string"}]}, {"type": "string"}],
                "anyOf": [{"not": {"type": "boolean"}}, {"type": "string"}],
                "oneOf": [{"not": {"type": "boolean"}}, {"type": "string"}],
                "not": {"not": {"type": "boolean"}, "anyOf": [{"type": "boolean"}]},
            }),
            json!({}),
        ),
        (
            "properties",
            json!({"properties": {"test": {"type": "boolean"}}}),
            json!({"properties": {"test": {"type": "boolean"}}}),
        ),
        (
            "additionalProperties schema",
            json!({"additionalProperties": {"type": "boolean"}}),
            json!({"additionalProperties": {"type": "boolean"}}),
        ),
        (
            "additionalProperties bool",
            json!({"additionalProperties": true}),
            json!({"additionalProperties": true}),
        ),
        // NewStructural keeps neither (expectDiff upstream).
        (
            "externalDocs",
            json!({"externalDocs": {"description": "test", "url": "test2"}}),
            json!({}),
        ),
        ("example", json!({"example": "test"}), json!({})),
        // kubectl cannot take properties next to preserved unknown fields,
        // nor a typed object without properties, nor an item-less array.
        (
            "preserve unknown fields object",
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"a": {"type": "string"}}}),
            json!({"x-kubernetes-preserve-unknown-fields": true}),
        ),
        (
            "preserve unknown fields array",
            json!({"type": "array", "x-kubernetes-preserve-unknown-fields": true, "items": {"type": "string"}}),
            json!({"x-kubernetes-preserve-unknown-fields": true}),
        ),
        (
            "nullable array",
            json!({"type": "array", "nullable": true, "items": {"type": "string"}}),
            json!({}),
        ),
        (
            "nested nodes are converted",
            json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string", "nullable": true, "anyOf": [{"pattern": "x"}]}}}}}),
            json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {}}}}}),
        ),
    ];
    for (name, input, want) in cases {
        let props: JSONSchemaProps = serde_json::from_value(input).expect(name);
        let mut s = Structural::new(&props).expect(name);
        to_v2_structural(&mut s);
        assert_eq!(structural_json(&s), want, "{name}");
    }
}

/// The fields upstream's `NewStructural` rejects ("rejected by kube
/// validation and NewStructural"): nothing of the schema is published.
#[test]
fn unsupported_schemas_publish_no_properties() {
    for (name, field) in [
        ("id", json!({"id": "test"})),
        ("$schema", json!({"$schema": "test"})),
        (
            "items array props",
            json!({"items": [{"type": "boolean"}, {"type": "string"}]}),
        ),
        (
            "patternProperties",
            json!({"patternProperties": {"test": {"type": "boolean"}}}),
        ),
        (
            "dependencies string array",
            json!({"dependencies": {"test": ["test2"]}}),
        ),
        (
            "additionalItems",
            json!({"additionalItems": {"type": "boolean"}}),
        ),
        (
            "definitions",
            json!({"definitions": {"test": {"type": "boolean"}}}),
        ),
    ] {
        let mut foo = json!({"type": "string"});
        if let (Value::Object(f), Value::Object(extra)) = (&mut foo, field) {
            f.extend(extra);
        }
        let c = crd(
            Some(json!({"type": "object", "properties": {"foo": foo}})),
            json!({}),
        );
        for doc in [Doc::V2, Doc::V3] {
            assert_eq!(
                kind_schema_of(&c, doc),
                json!({"type": "object", "x-kubernetes-group-version-kind": parse(GVK)}),
                "{name}"
            );
        }
    }
}

/// Every reference the schemas make resolves in the served documents, so
/// merging them next to the built-in definitions is enough.
#[test]
fn references_resolve_against_the_builtin_definitions() {
    let c = crd(Some(parse(WITH_EXTENSIONS)), json!({}));
    let mut refs = BTreeSet::new();
    for v in custom_resource_schemas(&c, "v1").values() {
        super::super::collect_refs(v, &mut refs);
    }
    refs.remove(FOO);
    assert_eq!(
        refs.into_iter().collect::<Vec<_>>(),
        [LIST_META, OBJECT_META]
    );
    for r in [OBJECT_META, LIST_META] {
        assert!(super::super::DEFINITIONS.contains_key(r), "{r}");
    }
}

fn established(mut c: CustomResourceDefinition) -> CustomResourceDefinition {
    c.status = serde_json::from_value(json!({
        "conditions": [{"type": "Established", "status": "True", "lastTransitionTime": "2026-12-06T00:00:00Z", "reason": "InitialNamesAccepted", "message": ""}],
    }))
    .expect("status");
    c
}

/// `TestCRDRouteParameterBuilder`: the paths of a CRD version with `status`
/// and `scale`, namespaced and cluster-scoped: path parameters, actions,
/// and PATCH content types without strategic merge patch.
#[test]
fn route_parameters() {
    let subresources = json!({"subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}});
    let namespaced: &[(&str, bool, bool, &[&str])] = &[
        ("/apis/bar.k8s.io/v1/foos", false, false, &["list"]),
        (
            "/apis/bar.k8s.io/v1/namespaces/{namespace}/foos",
            true,
            false,
            &["deletecollection", "list", "post"],
        ),
        (
            "/apis/bar.k8s.io/v1/namespaces/{namespace}/foos/{name}",
            true,
            true,
            &["delete", "get", "patch", "put"],
        ),
        (
            "/apis/bar.k8s.io/v1/namespaces/{namespace}/foos/{name}/scale",
            true,
            true,
            &["get", "patch", "put"],
        ),
        (
            "/apis/bar.k8s.io/v1/namespaces/{namespace}/foos/{name}/status",
            true,
            true,
            &["get", "patch", "put"],
        ),
    ];
    let cluster: &[(&str, bool, bool, &[&str])] = &[
        (
            "/apis/bar.k8s.io/v1/foos",
            false,
            false,
            &["deletecollection", "list", "post"],
        ),
        (
            "/apis/bar.k8s.io/v1/foos/{name}",
            false,
            true,
            &["delete", "get", "patch", "put"],
        ),
        (
            "/apis/bar.k8s.io/v1/foos/{name}/scale",
            false,
            true,
            &["get", "patch", "put"],
        ),
        (
            "/apis/bar.k8s.io/v1/foos/{name}/status",
            false,
            true,
            &["get", "patch", "put"],
        ),
    ];
    for (scope, want) in [("Namespaced", namespaced), ("Cluster", cluster)] {
        let mut c = established(crd(Some(json!({"type": "object"})), subresources.clone()));
        c.spec.scope = scope.into();
        for flavor in [Flavor::V2, Flavor::V3] {
            let doc = match flavor {
                Flavor::V3 => {
                    custom_resource_v3_document(std::slice::from_ref(&c), "bar.k8s.io", "v1")
                        .expect("published")
                }
                Flavor::V2 => v2_with_custom_resources(std::slice::from_ref(&c)),
            };
            let paths = doc["paths"].as_object().expect("paths");
            let ours: Vec<&String> = paths.keys().filter(|p| p.contains("/foos")).collect();
            assert_eq!(ours.len(), want.len(), "{scope} {flavor:?}: {ours:?}");
            for (path, namespace, name, actions) in want {
                let item = &paths[*path];
                let params = item["parameters"].as_array().expect("parameters");
                let has = |n: &str| params.iter().any(|p| p["in"] == "path" && p["name"] == n);
                assert_eq!(has("namespace"), *namespace, "{path}");
                assert_eq!(has("name"), *name, "{path}");
                let mut got = Vec::new();
                for verb in ["get", "post", "put", "patch", "delete"] {
                    let Some(op) = item.get(verb) else { continue };
                    got.push(op["x-kubernetes-action"].as_str().unwrap_or_default());
                    let consumes: Vec<&str> = match flavor {
                        Flavor::V2 => op["consumes"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .collect(),
                        Flavor::V3 => op["requestBody"]["content"]
                            .as_object()
                            .into_iter()
                            .flat_map(|m| m.keys().map(String::as_str))
                            .collect(),
                    };
                    if verb == "patch" {
                        assert_eq!(
                            consumes.iter().copied().collect::<BTreeSet<_>>(),
                            BTreeSet::from([
                                "application/json-patch+json",
                                "application/merge-patch+json",
                                "application/apply-patch+yaml"
                            ]),
                            "{path}"
                        );
                    }
                }
                got.sort_unstable();
                assert_eq!(got, *actions, "{scope} {flavor:?} {path}");
            }
        }
    }
}

#[test]
fn documents_publish_established_crds_only() {
    let c = crd(
        Some(json!({"type": "object", "properties": {"spec": {"type": "object"}}})),
        json!({"subresources": {"scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}),
    );
    assert!(custom_resource_v3_document(std::slice::from_ref(&c), "bar.k8s.io", "v1").is_none());
    assert!(
        !v2_with_custom_resources(std::slice::from_ref(&c))["definitions"]
            .as_object()
            .expect("definitions")
            .contains_key(FOO)
    );
    let mut unserved = established(c.clone());
    unserved.spec.versions[0].served = false;
    assert!(custom_resource_v3_document(&[unserved], "bar.k8s.io", "v1").is_none());

    let c = established(c);
    let doc = custom_resource_v3_document(std::slice::from_ref(&c), "bar.k8s.io", "v1")
        .expect("published");
    let mut refs = BTreeSet::new();
    super::super::collect_refs(&doc, &mut refs);
    for r in &refs {
        assert!(
            doc.pointer(&format!("/components/schemas/{r}")).is_some(),
            "{r}"
        );
    }
    assert!(refs.contains(paths::SCALE));
    assert_eq!(
        doc["paths"]["/apis/bar.k8s.io/v1/namespaces/{namespace}/foos/{name}"]["patch"]["operationId"],
        "patchBarV1NamespacedFoo"
    );
    assert!(custom_resource_v3_document(std::slice::from_ref(&c), "bar.k8s.io", "v2").is_none());

    let index = v3_index_with_custom_resources(std::slice::from_ref(&c));
    let url = index["paths"]["apis/bar.k8s.io/v1"]["serverRelativeURL"]
        .as_str()
        .expect("indexed");
    assert_eq!(
        url,
        format!("/openapi/v3/apis/bar.k8s.io/v1?hash={}", fingerprint(&doc))
    );
    assert!(index["paths"]["api/v1"].is_object());

    let v2 = v2_with_custom_resources(&[c]);
    assert!(v2["definitions"][FOO]["properties"]["spec"].is_object());
    assert!(
        v2["paths"]["/apis/bar.k8s.io/v1/namespaces/{namespace}/foos/{name}/scale"].is_object()
    );
    assert!(!v2.to_string().contains("#/components/"));
    let mut refs = BTreeSet::new();
    super::super::collect_refs(
        &v2.to_string()
            .replace("#/definitions/", "#/components/schemas/")
            .parse::<Value>()
            .expect("json"),
        &mut refs,
    );
    for r in refs {
        assert!(v2["definitions"].get(&r).is_some(), "{r}");
    }
    assert!(v2_protobuf_of(&v2).is_ok_and(|b| b.len() > 1000));
}

/// Upstream's operation IDs (`GetOperationIDAndTags`): `.k8s.io` dropped,
/// every other separator capitalizes.
#[test]
fn operation_ids_spell_the_group() {
    let mut c = established(crd(Some(json!({"type": "object"})), json!({})));
    c.spec.group = "stable.example.com".into();
    let doc = custom_resource_v3_document(&[c], "stable.example.com", "v1").expect("published");
    assert_eq!(
        doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/foos"]["get"]["operationId"],
        "listStableExampleComV1NamespacedFoo"
    );
    assert_eq!(
        doc["paths"]["/apis/stable.example.com/v1/foos"]["get"]["operationId"],
        "listStableExampleComV1FooForAllNamespaces"
    );
}
