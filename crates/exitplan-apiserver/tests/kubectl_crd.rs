//! The real `kubectl` on CustomResourceDefinitions and their custom
//! resources: `apply` of a CRD, `wait --for condition=established`,
//! `apply` (client- and server-side), `get` with the CRD's printer columns
//! and short names, `get -l`/`--field-selector`, `patch`, `scale`, `edit`-
//! style replace, CEL and schema errors as kubectl prints them, and
//! `delete crd` removing the objects.

mod support;

use support::https::Cluster;

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    selectableFields:
    - jsonPath: .spec.color
    additionalPrinterColumns:
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [color]
            x-kubernetes-validations:
            - rule: self.replicas <= 5
              message: at most 5 replicas
            properties:
              color: {type: string, enum: [red, green, blue]}
              replicas: {type: integer, minimum: 0, default: 1}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer}
";

const WIDGETS: &str = "apiVersion: example.com/v1
kind: Widget
metadata:
  name: a
  labels: {team: x}
spec:
  color: red
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: b
spec:
  color: green
  replicas: 2
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_on_a_crd_and_its_custom_resources() {
    let c = Cluster::start("crd").await;
    let out = c.ok(&["apply", "-f", "-"], Some(CRD)).await;
    assert_eq!(
        out,
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n"
    );
    let out = c
        .ok(
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
    assert_eq!(
        out,
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com condition met\n"
    );
    let out = c.ok(&["apply", "-f", "-"], Some(WIDGETS)).await;
    assert_eq!(
        out,
        "widget.example.com/a created\nwidget.example.com/b created\n"
    );
    let out = c.ok(&["apply", "-f", "-"], Some(WIDGETS)).await;
    assert_eq!(
        out,
        "widget.example.com/a unchanged\nwidget.example.com/b unchanged\n"
    );

    let out = c.ok(&["get", "widgets"], None).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["NAME", "COLOR", "REPLICAS"],
        "{out}"
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["a", "red", "1"]
    );
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        ["b", "green", "2"]
    );
    let out = c
        .ok(&["get", "wd", "-l", "team=x", "-o", "name"], None)
        .await;
    assert_eq!(out, "widget.example.com/a\n");
    let out = c
        .ok(
            &[
                "get",
                "widgets",
                "--field-selector",
                "spec.color=green",
                "-o",
                "name",
            ],
            None,
        )
        .await;
    assert_eq!(out, "widget.example.com/b\n");
    let out = c.ok(&["get", "crd"], None).await;
    assert!(out.starts_with("NAME"), "{out}");
    assert!(out.contains("widgets.example.com"), "{out}");

    let out = c.ok(&["scale", "widget", "b", "--replicas=3"], None).await;
    assert_eq!(out, "widget.example.com/b scaled\n");
    let out = c
        .ok(
            &["get", "widget", "b", "-o", "jsonpath={.spec.replicas}"],
            None,
        )
        .await;
    assert_eq!(out, "3");

    let err = c
        .fails(&[
            "patch",
            "widget",
            "b",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":9}}"#,
        ])
        .await;
    assert_eq!(
        err,
        "The Widget \"b\" is invalid: spec: Invalid value: \"object\": at most 5 replicas\n"
    );
    let err = c
        .fails(&["patch", "widget", "b", "-p", r#"{"spec":{"replicas":1}}"#])
        .await;
    assert!(
        err.starts_with(
            "error: application/strategic-merge-patch+json is not supported by example.com/v1, Kind=Widget: the body of the request was in an unknown format"
        ),
        "{err}"
    );
    let out = c
        .ok(
            &[
                "patch",
                "widget",
                "b",
                "--type=json",
                "-p",
                r#"[{"op":"add","path":"/spec/tags","value":["x","y"]}]"#,
            ],
            None,
        )
        .await;
    assert_eq!(out, "widget.example.com/b patched\n");

    let bad =
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: c}\nspec: {color: pink}\n";
    let path = c.file("bad.yaml", bad);
    let err = c.fails(&["create", "-f", &path]).await;
    assert!(
        err.contains(
            "The Widget \"c\" is invalid: spec.color: Unsupported value: \"pink\": supported values: \"red\", \"green\", \"blue\""
        ),
        "{err}"
    );

    // Server-side apply takes ownership of the fields it sets.
    let applied = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: d}\nspec: {color: blue, tags: [p]}\n";
    let path = c.file("d.yaml", applied);
    let out = c.ok(&["apply", "--server-side", "-f", &path], None).await;
    assert_eq!(out, "widget.example.com/d serverside-applied\n");
    let managers = c
        .ok(
            &[
                "get",
                "widget",
                "d",
                "--show-managed-fields",
                "-o",
                "jsonpath={.metadata.managedFields[*].manager}",
            ],
            None,
        )
        .await;
    assert_eq!(managers, "kubectl");

    let out = c.ok(&["delete", "crd", "widgets.example.com"], None).await;
    assert_eq!(
        out,
        "customresourcedefinition.apiextensions.k8s.io \"widgets.example.com\" deleted\n"
    );
    // kubectl's discovery cache may still know the resource: either way
    // the server no longer serves it.
    let err = c.fails(&["get", "widgets"]).await;
    assert!(
        err.contains("the server doesn't have a resource type \"widgets\"")
            || err.contains("the server could not find the requested resource"),
        "{err}"
    );
    c.stop().await;
}
