//! The real `kubectl` reading a custom resource's OpenAPI: `kubectl explain`
//! (v3, and v2 with `--output=plaintext-openapiv2`) and `kubectl get --raw`
//! of the v3 index and the group-version document, once the CRD is
//! established.

mod support;

use serde_json::json;

use support::https::Cluster;

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    selectableFields:
    - jsonPath: .spec.color
    schema:
      openAPIV3Schema:
        type: object
        description: A Widget is a thing.
        properties:
          spec:
            type: object
            description: What the widget should be.
            required: [color]
            x-kubernetes-validations:
            - rule: self.replicas <= 5
              message: at most 5 replicas
            properties:
              color: {type: string, enum: [red, green, blue], description: The colour.}
              replicas: {type: integer, minimum: 0, description: How many.}
          status:
            type: object
            properties:
              replicas: {type: integer}
";

async fn cluster_with_crd(tag: &str) -> Cluster {
    let c = Cluster::start(tag).await;
    c.ok(&["apply", "-f", "-"], Some(CRD)).await;
    c.ok(
        &[
            "wait",
            "--for",
            "condition=established",
            "crd/widgets.example.com",
            "--timeout=10s",
        ],
        None,
    )
    .await;
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_reads_the_custom_resource_schema() {
    let c = cluster_with_crd("crd-explain").await;
    let fields = "FIELDS:
  color\t<string> -required-
  enum: red, green, blue
    The colour.

  replicas\t<integer>
    How many.


";
    for (output, header, description) in [
        (
            "plaintext",
            "GROUP:      example.com\nKIND:       Widget\nVERSION:    v1\n\nFIELD: spec <Object>\n",
            "DESCRIPTION:\n    What the widget should be.\n",
        ),
        (
            "plaintext-openapiv2",
            "KIND:     Widget\nVERSION:  example.com/v1\n\nRESOURCE: spec <Object>\n",
            "DESCRIPTION:\n     What the widget should be.\n",
        ),
    ] {
        let out = c
            .ok(
                &["explain", "widgets.spec", &format!("--output={output}")],
                None,
            )
            .await;
        assert!(out.starts_with(header), "{output}: {out}");
        assert!(out.contains(description), "{output}: {out}");
        if output == "plaintext" {
            assert!(out.ends_with(fields), "{output}: {out:?}");
        } else {
            assert!(
                out.contains("   color\t<string> -required-\n     The colour.\n"),
                "{output}: {out}"
            );
            assert!(
                out.contains("   replicas\t<integer>\n     How many.\n"),
                "{output}: {out}"
            );
        }
    }
    let out = c.ok(&["explain", "widgets"], None).await;
    assert!(out.contains("A Widget is a thing."), "{out}");
    assert!(out.contains("metadata\t<ObjectMeta>"), "{out}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_v3_documents_carry_the_custom_resource() {
    let c = cluster_with_crd("crd-openapi").await;
    let index = c.json(&["get", "--raw", "/openapi/v3"]).await;
    let url = index["paths"]["apis/example.com/v1"]["serverRelativeURL"]
        .as_str()
        .expect("the CRD's group-version is indexed");
    assert!(
        url.starts_with("/openapi/v3/apis/example.com/v1?hash="),
        "{url}"
    );

    let doc = c
        .json(&["get", "--raw", "/openapi/v3/apis/example.com/v1"])
        .await;
    let widget = &doc["components"]["schemas"]["com.example.v1.Widget"];
    assert_eq!(
        widget["x-kubernetes-group-version-kind"],
        json!([{"group": "example.com", "kind": "Widget", "version": "v1"}])
    );
    assert_eq!(
        widget["x-kubernetes-selectable-fields"],
        json!([{"fieldPath": "spec.color"}])
    );
    assert_eq!(
        widget["properties"]["spec"]["x-kubernetes-validations"],
        json!([{"rule": "self.replicas <= 5", "message": "at most 5 replicas"}])
    );
    assert_eq!(
        widget["properties"]["metadata"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert!(
        doc["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].is_object()
    );
    assert_eq!(
        doc["components"]["schemas"]["com.example.v1.WidgetList"]["x-kubernetes-group-version-kind"]
            [0]["kind"],
        "WidgetList"
    );
    let patch =
        &doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"];
    assert_eq!(patch["operationId"], "patchExampleComV1NamespacedWidget");
    assert!(patch["requestBody"]["content"]["application/strategic-merge-patch+json"].is_null());
    assert!(
        doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status"]
            .is_object()
    );

    let v2 = c.json(&["get", "--raw", "/openapi/v2"]).await;
    assert!(v2["definitions"]["com.example.v1.Widget"]["properties"]["spec"].is_object());
    assert!(v2["definitions"]["io.k8s.api.core.v1.Pod"].is_object());

    c.ok(&["delete", "crd", "widgets.example.com"], None).await;
    let missing = c
        .fails(&["get", "--raw", "/openapi/v3/apis/example.com/v1"])
        .await;
    assert!(
        missing.contains("NotFound") || missing.contains("not found"),
        "{missing}"
    );
    c.stop().await;
}
