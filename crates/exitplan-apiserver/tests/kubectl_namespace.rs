//! The real `kubectl` on the namespace lifecycle: `delete ns --wait=false`
//! leaves a namespace `Terminating` with the deleter's conditions while a
//! pod holds a finalizer, `create` in it is refused with upstream's
//! message, and removing the finalizer lets the namespace go.

mod support;

use support::https::Cluster;

const POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: held
  namespace: team
  finalizers: [example.com/f]
spec:
  containers:
  - name: c
    image: busybox
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_delete_namespace_terminating_then_gone() {
    let c = Cluster::start("namespace").await;
    assert_eq!(
        c.ok(&["create", "namespace", "team"], None).await,
        "namespace/team created\n"
    );
    assert_eq!(
        c.ok(
            &["get", "ns", "team", "-o", "jsonpath={.spec.finalizers}"],
            None
        )
        .await,
        r#"["kubernetes"]"#
    );
    c.ok(&["apply", "-f", "-"], Some(POD)).await;

    assert_eq!(
        c.ok(&["delete", "ns", "team", "--wait=false"], None).await,
        "namespace \"team\" deleted\n"
    );
    assert_eq!(
        c.ok(
            &["get", "ns", "team", "-o", "jsonpath={.status.phase}"],
            None
        )
        .await,
        "Terminating"
    );
    let remaining = c
        .ok(
            &[
                "get",
                "ns",
                "team",
                "-o",
                r#"jsonpath={.status.conditions[?(@.type=="NamespaceFinalizersRemaining")].message}"#,
            ],
            None,
        )
        .await;
    assert_eq!(
        remaining,
        "Some content in the namespace has finalizers remaining: example.com/f in 1 resource instances"
    );
    let content = c
        .ok(
            &[
                "get",
                "ns",
                "team",
                "-o",
                r#"jsonpath={.status.conditions[?(@.type=="NamespaceContentRemaining")].reason}"#,
            ],
            None,
        )
        .await;
    assert_eq!(content, "SomeResourcesRemain");
    let table = c.ok(&["get", "ns", "team"], None).await;
    assert!(table.contains("Terminating"), "{table}");

    let err = c.fails(&["create", "configmap", "x", "-n", "team"]).await;
    assert_eq!(
        err,
        "error: failed to create configmap: configmaps \"x\" is forbidden: unable to create new content in namespace team because it is being terminated\n"
    );

    c.ok(
        &[
            "patch",
            "pod",
            "held",
            "-n",
            "team",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ],
        None,
    )
    .await;
    let gone = c.fails(&["get", "ns", "team"]).await;
    assert_eq!(
        gone,
        "Error from server (NotFound): namespaces \"team\" not found\n"
    );
    c.stop().await;
}
