//! The admissionregistration.k8s.io kinds with the real kubectl (on PATH):
//! apply, `get` columns (NAME WEBHOOKS AGE; NAME VALIDATIONS PARAMKIND AGE;
//! NAME POLICYNAME PARAMREF AGE), the `api-extensions` category, and a
//! refused configuration's message as kube-apiserver words it.

mod support;

use support::https::Cluster;

const MANIFEST: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: deny-pods}
webhooks:
- name: deny.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig: {service: {namespace: default, name: hooks}}
  rules:
  - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods, pods/eviction]}
- name: audit.example.com
  sideEffects: NoneOnDryRun
  admissionReviewVersions: [v1]
  clientConfig: {url: "https://hooks.example.com/audit"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: inject}
webhooks:
- name: inject.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig: {url: "https://hooks.example.com/inject"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {operations: [CREATE, UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}
  validations:
  - expression: "object.spec.replicas <= int(params.data.max)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas}
spec:
  policyName: replicas
  validationActions: [Deny]
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: Deny}
"#;

fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_and_prints_admission_configuration() {
    let c = Cluster::start("admissionreg").await;
    let manifest = c.file("admission.yaml", MANIFEST);
    c.ok(&["apply", "-f", &manifest], None).await;

    let vwc = rows(
        &c.ok(&["get", "validatingwebhookconfigurations"], None)
            .await,
    );
    assert_eq!(vwc[0], ["NAME", "WEBHOOKS", "AGE"]);
    assert_eq!(vwc[1][..2], ["deny-pods", "2"]);
    let mwc = rows(&c.ok(&["get", "mutatingwebhookconfigurations"], None).await);
    assert_eq!(mwc[1][..2], ["inject", "1"]);
    let vap = rows(&c.ok(&["get", "validatingadmissionpolicies"], None).await);
    assert_eq!(vap[0], ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]);
    assert_eq!(vap[1][..3], ["replicas", "1", "v1/ConfigMap"]);
    let vapb = rows(
        &c.ok(&["get", "validatingadmissionpolicybindings"], None)
            .await,
    );
    assert_eq!(vapb[0], ["NAME", "POLICYNAME", "PARAMREF", "AGE"]);
    assert_eq!(vapb[1][..3], ["replicas", "replicas", "default/limits"]);

    let category = c.ok(&["get", "api-extensions", "-o", "name"], None).await;
    for name in [
        "validatingwebhookconfiguration.admissionregistration.k8s.io/deny-pods",
        "mutatingwebhookconfiguration.admissionregistration.k8s.io/inject",
        "validatingadmissionpolicy.admissionregistration.k8s.io/replicas",
        "validatingadmissionpolicybinding.admissionregistration.k8s.io/replicas",
    ] {
        assert!(category.contains(name), "{name} in\n{category}");
    }

    let bad = c.file(
        "bad.yaml",
        "apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: bad}
webhooks:
- name: bad.example.com
  admissionReviewVersions: [v1]
  timeoutSeconds: 40
  clientConfig: {url: \"https://hooks.example.com/x\"}
",
    );
    let stderr = c.fails(&["create", "-f", &bad]).await;
    assert!(
        stderr.contains(
            "The ValidatingWebhookConfiguration \"bad\" is invalid: \n* webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun\n* webhooks[0].timeoutSeconds: Invalid value: 40: the timeout value must be between 1 and 30 seconds"
        ),
        "{stderr}"
    );
    c.stop().await;
}
