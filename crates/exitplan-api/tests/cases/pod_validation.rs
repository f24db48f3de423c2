//! Pod validation: cases ported from upstream's
//! `pkg/apis/core/validation/validation_test.go` (`TestValidatePodCreate`,
//! `TestValidateContainers`, `TestValidatePodSpec`, `TestValidatePorts`,
//! `TestValidateEnv`, `TestValidateTolerations`, `TestValidateVolumes`,
//! `TestValidatePodUpdate`, `TestValidatePodStatusUpdate`,
//! `TestValidatePodBinding`). Each case is an object in its submitted JSON
//! form, run through the Pod strategy (defaults, then validation), and the
//! full expected error list: `(type, field, body)` in order.

use exitplan_api::absent::Absent;
use exitplan_api::core::pod::PodStrategy;
use exitplan_api::core::validation::pod::validate_pod_binding;
use exitplan_api::field::{ErrorList, ErrorType};
use exitplan_api::strategy::{Context, admit_create, admit_status_update, admit_update};
use k8s_openapi::api::core::v1::{Binding, Pod};
use serde_json::{Value, json};

use ErrorType::{Duplicate, Forbidden, Invalid, NotFound, NotSupported, Required};

use crate::pod_fixture::{Want, check, merge, submitted};
use crate::support::now;

/// A valid pod (upstream's `podtest.MakePod`) with `spec` merged in.
fn pod(spec: Value) -> Pod {
    submitted(json!({}), spec)
}

fn create_errors(p: Pod) -> ErrorList {
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    let mut p = p;
    match admit_create::<PodStrategy>(&mut p, &ctx) {
        Ok(()) => ErrorList::new(),
        Err(e) => e.errors,
    }
}

fn run(cases: &[(&str, Value, &[Want])]) {
    for (name, spec, want) in cases {
        check(name, &create_errors(pod(spec.clone())), want);
    }
}

#[test]
fn validate_pod_create_success_cases() {
    for spec in [
        json!({}),
        json!({"restartPolicy": "Never", "dnsPolicy": "Default"}),
        json!({"initContainers": [{"name": "init", "image": "image"}]}),
        json!({"initContainers": [{"name": "sidecar", "image": "image", "restartPolicy": "Always",
               "readinessProbe": {"exec": {"command": ["true"]}}}]}),
        json!({"volumes": [{"name": "vol", "emptyDir": {}}],
               "containers": [{"name": "ctr", "image": "image",
                               "volumeMounts": [{"name": "vol", "mountPath": "/data"}]}]}),
        json!({"containers": [{"name": "ctr", "image": "image",
               "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "64Mi"}},
               "ports": [{"containerPort": 80, "name": "http"}],
               "env": [{"name": "A", "value": "b"}, {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
               "livenessProbe": {"httpGet": {"port": 80}}}]}),
        json!({"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]}),
        json!({"activeDeadlineSeconds": 1, "hostname": "host", "subdomain": "sub"}),
    ] {
        check(&spec.to_string(), &create_errors(pod(spec.clone())), &[]);
    }
}

/// `TestValidateContainers` error cases.
#[test]
fn validate_containers_errors() {
    run(&[
        (
            "zero-length name",
            json!({"containers": [{"name": "", "image": "image"}]}),
            &[(Required, "spec.containers[0].name", "Required value")],
        ),
        (
            "name > 63 characters",
            json!({"containers": [{"name": "a".repeat(64), "image": "image"}]}),
            &[(
                Invalid,
                "spec.containers[0].name",
                "Invalid value: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": must be no more than 63 bytes",
            )],
        ),
        (
            "name not a DNS label",
            json!({"containers": [{"name": "a.b.c", "image": "image"}]}),
            &[(
                Invalid,
                "spec.containers[0].name",
                "Invalid value: \"a.b.c\": must not contain dots",
            )],
        ),
        (
            "name not unique",
            json!({"containers": [{"name": "abc", "image": "image"}, {"name": "abc", "image": "image"}]}),
            &[(
                Duplicate,
                "spec.containers[1].name",
                "Duplicate value: \"abc\"",
            )],
        ),
        (
            "zero-length image",
            json!({"containers": [{"name": "abc"}]}),
            &[(Required, "spec.containers[0].image", "Required value")],
        ),
        (
            "image with leading whitespace",
            json!({"containers": [{"name": "abc", "image": " image"}]}),
            &[(
                Invalid,
                "spec.containers[0].image",
                "Invalid value: \" image\": must not have leading or trailing whitespace",
            )],
        ),
        (
            "host port not unique",
            json!({"containers": [
                {"name": "abc", "image": "image", "ports": [{"containerPort": 80, "hostPort": 80}]},
                {"name": "def", "image": "image", "ports": [{"containerPort": 81, "hostPort": 80}]}]}),
            &[(
                Duplicate,
                "spec.containers[1].ports[0].hostPort",
                "Duplicate value: \"TCP//80\"",
            )],
        ),
        (
            "invalid env var name",
            json!({"containers": [{"name": "abc", "image": "image", "env": [{"name": "ev!1=x"}]}]}),
            &[(
                Invalid,
                "spec.containers[0].env[0].name",
                "Invalid value: \"ev!1=x\": a valid environment variable name must consist only of printable ASCII characters other than '='",
            )],
        ),
        (
            "unknown volume name",
            json!({"containers": [{"name": "abc", "image": "image", "volumeMounts": [{"name": "anything", "mountPath": "/foo"}]}]}),
            &[(
                NotFound,
                "spec.containers[0].volumeMounts[0].name",
                "Not found: \"anything\"",
            )],
        ),
        (
            "invalid lifecycle, no exec command",
            json!({"containers": [{"name": "abc", "image": "image", "lifecycle": {"preStop": {"exec": {}}}}]}),
            &[(
                Required,
                "spec.containers[0].lifecycle.preStop.exec.command",
                "Required value",
            )],
        ),
        (
            "invalid lifecycle, no handler",
            json!({"containers": [{"name": "abc", "image": "image", "lifecycle": {"preStop": {}}}]}),
            &[(
                Required,
                "spec.containers[0].lifecycle.preStop",
                "Required value: must specify a handler type",
            )],
        ),
        (
            "invalid liveness probe, successThreshold",
            json!({"containers": [{"name": "abc", "image": "image", "livenessProbe": {"tcpSocket": {"port": "http"}, "successThreshold": 2}}]}),
            &[(
                Invalid,
                "spec.containers[0].livenessProbe.successThreshold",
                "Invalid value: 2: must be 1",
            )],
        ),
        (
            "invalid readiness probe, terminationGracePeriodSeconds",
            json!({"containers": [{"name": "abc", "image": "image", "readinessProbe": {"tcpSocket": {"port": "http"}, "terminationGracePeriodSeconds": 10}}]}),
            &[(
                Invalid,
                "spec.containers[0].readinessProbe.terminationGracePeriodSeconds",
                "Invalid value: 10: must not be set for readinessProbes",
            )],
        ),
        (
            "probe with two handlers",
            json!({"containers": [{"name": "abc", "image": "image", "livenessProbe": {"exec": {"command": ["x"]}, "tcpSocket": {"port": 80}}}]}),
            &[(
                Forbidden,
                "spec.containers[0].livenessProbe.tcpSocket",
                "Forbidden: may not specify more than 1 handler type",
            )],
        ),
        (
            "invalid image pull policy",
            json!({"containers": [{"name": "abc", "image": "image", "imagePullPolicy": "funky"}]}),
            &[(
                NotSupported,
                "spec.containers[0].imagePullPolicy",
                "Unsupported value: \"funky\": supported values: \"Always\", \"IfNotPresent\", \"Never\"",
            )],
        ),
        (
            "request > limit",
            json!({"containers": [{"name": "abc", "image": "image", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]}),
            &[(
                Invalid,
                "spec.containers[0].resources.requests",
                "Invalid value: \"2\": must be less than or equal to cpu limit of 1",
            )],
        ),
        (
            "negative request",
            json!({"containers": [{"name": "abc", "image": "image", "resources": {"requests": {"memory": "-1"}}}]}),
            &[(
                Invalid,
                "spec.containers[0].resources.requests[memory]",
                "Invalid value: \"-1\": must be greater than or equal to 0",
            )],
        ),
        (
            "unknown resource name",
            json!({"containers": [{"name": "abc", "image": "image", "resources": {"limits": {"disk": "10G"}}}]}),
            &[
                (
                    Invalid,
                    "spec.containers[0].resources.limits[disk]",
                    "Invalid value: \"disk\": must be a standard resource type or fully qualified",
                ),
                (
                    Invalid,
                    "spec.containers[0].resources.limits[disk]",
                    "Invalid value: \"disk\": must be a standard resource for containers",
                ),
                // The defaulted request (copied from the limit) is checked too.
                (
                    Invalid,
                    "spec.containers[0].resources.requests[disk]",
                    "Invalid value: \"disk\": must be a standard resource type or fully qualified",
                ),
                (
                    Invalid,
                    "spec.containers[0].resources.requests[disk]",
                    "Invalid value: \"disk\": must be a standard resource for containers",
                ),
            ],
        ),
        (
            "restartPolicy on a regular container",
            json!({"containers": [{"name": "abc", "image": "image", "restartPolicy": "Always"}]}),
            &[(
                Forbidden,
                "spec.containers[0].restartPolicy",
                "Forbidden: may not be set for non-init containers",
            )],
        ),
        (
            "probe on a non-sidecar init container",
            json!({"initContainers": [{"name": "init", "image": "image", "readinessProbe": {"exec": {"command": ["x"]}}}]}),
            &[(
                Forbidden,
                "spec.initContainers[0].readinessProbe",
                "Forbidden: may not be set for init containers without restartPolicy=Always",
            )],
        ),
        (
            "init container name shared with a container",
            json!({"initContainers": [{"name": "ctr", "image": "image"}]}),
            &[(
                Duplicate,
                "spec.initContainers[0].name",
                "Duplicate value: \"ctr\"",
            )],
        ),
    ]);
}

/// `TestValidatePorts` and `TestValidateEnv` error cases.
#[test]
fn validate_ports_and_env() {
    run(&[
        (
            "name > 15 characters",
            json!({"containers": [{"name": "ctr", "image": "image", "ports": [{"name": "a".repeat(16), "containerPort": 80}]}]}),
            &[(
                Invalid,
                "spec.containers[0].ports[0].name",
                "Invalid value: \"aaaaaaaaaaaaaaaa\": must be no more than 15 bytes",
            )],
        ),
        (
            "name contains invalid characters",
            json!({"containers": [{"name": "ctr", "image": "image", "ports": [{"name": "a.b.c", "containerPort": 80}]}]}),
            &[(
                Invalid,
                "spec.containers[0].ports[0].name",
                "Invalid value: \"a.b.c\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
            )],
        ),
        (
            "name is a number",
            json!({"containers": [{"name": "ctr", "image": "image", "ports": [{"name": "80", "containerPort": 80}]}]}),
            &[(
                Invalid,
                "spec.containers[0].ports[0].name",
                "Invalid value: \"80\": must contain at least one letter (a-z)",
            )],
        ),
        (
            "name not unique",
            json!({"containers": [{"name": "ctr", "image": "image", "ports": [{"name": "abc", "containerPort": 80}, {"name": "abc", "containerPort": 81}]}]}),
            &[(
                Duplicate,
                "spec.containers[0].ports[1].name",
                "Duplicate value: \"abc\"",
            )],
        ),
        (
            "zero container port",
            json!({"containers": [{"name": "ctr", "image": "image", "ports": [{"containerPort": 0}]}]}),
            &[(
                Required,
                "spec.containers[0].ports[0].containerPort",
                "Required value",
            )],
        ),
        (
            "invalid container port",
            json!({"containers": [{"name": "ctr", "image": "image", "ports": [{"containerPort": 65536}]}]}),
            &[(
                Invalid,
                "spec.containers[0].ports[0].containerPort",
                "Invalid value: 65536: must be between 1 and 65535, inclusive",
            )],
        ),
        (
            "invalid host port",
            json!({"containers": [{"name": "ctr", "image": "image", "ports": [{"containerPort": 80, "hostPort": 65536}]}]}),
            &[(
                Invalid,
                "spec.containers[0].ports[0].hostPort",
                "Invalid value: 65536: must be between 1 and 65535, inclusive",
            )],
        ),
        (
            "invalid protocol",
            json!({"containers": [{"name": "ctr", "image": "image", "ports": [{"containerPort": 80, "protocol": "ICMP"}]}]}),
            &[(
                NotSupported,
                "spec.containers[0].ports[0].protocol",
                "Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
            )],
        ),
        (
            "zero-length env name",
            json!({"containers": [{"name": "ctr", "image": "image", "env": [{"name": ""}]}]}),
            &[(Required, "spec.containers[0].env[0].name", "Required value")],
        ),
        (
            "value and valueFrom",
            json!({"containers": [{"name": "ctr", "image": "image", "env": [{"name": "a", "value": "x", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}]}]}),
            &[(
                Invalid,
                "spec.containers[0].env[0].valueFrom",
                "Invalid value: \"\": may not be specified when `value` is not empty",
            )],
        ),
        (
            "valueFrom without a source",
            json!({"containers": [{"name": "ctr", "image": "image", "env": [{"name": "a", "valueFrom": {}}]}]}),
            &[(
                Invalid,
                "spec.containers[0].env[0].valueFrom",
                "Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
            )],
        ),
        (
            "unsupported fieldPath",
            json!({"containers": [{"name": "ctr", "image": "image", "env": [{"name": "a", "valueFrom": {"fieldRef": {"fieldPath": "metadata.whoops"}}}]}]}),
            &[(
                NotSupported,
                "spec.containers[0].env[0].valueFrom.fieldRef.fieldPath",
                "Unsupported value: \"metadata.whoops\": supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", \"spec.nodeName\", \"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", \"status.podIP\", \"status.podIPs\"",
            )],
        ),
        (
            "configMapKeyRef without key",
            json!({"containers": [{"name": "ctr", "image": "image", "env": [{"name": "a", "valueFrom": {"configMapKeyRef": {"name": "cm"}}}]}]}),
            &[(
                Required,
                "spec.containers[0].env[0].valueFrom.configMapKeyRef.key",
                "Required value",
            )],
        ),
    ]);
}

/// `TestValidateTolerations` and `TestValidateVolumes` error cases.
#[test]
fn validate_tolerations_and_volumes() {
    run(&[
        (
            "invalid toleration key",
            json!({"tolerations": [{"key": "nospecialchars^=@", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}]}),
            &[(
                Invalid,
                "spec.tolerations[0].key",
                "Invalid value: \"nospecialchars^=@\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            )],
        ),
        (
            "empty key with Equal",
            json!({"tolerations": [{"operator": "Equal", "value": "bar"}]}),
            &[(
                Invalid,
                "spec.tolerations[0].operator",
                "Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            )],
        ),
        (
            "value with Exists",
            json!({"tolerations": [{"key": "foo", "operator": "Exists", "value": "bar"}]}),
            &[(
                Invalid,
                "spec.tolerations[0].operator",
                "Invalid value: \"bar\": value must be empty when `operator` is 'Exists'",
            )],
        ),
        (
            "tolerationSeconds without NoExecute",
            json!({"tolerations": [{"key": "foo", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 20}]}),
            &[(
                Invalid,
                "spec.tolerations[0].effect",
                "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
            )],
        ),
        (
            "invalid effect",
            json!({"tolerations": [{"key": "foo", "operator": "Exists", "effect": "Bogus"}]}),
            &[(
                NotSupported,
                "spec.tolerations[0].effect",
                "Unsupported value: \"Bogus\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
            )],
        ),
        (
            "volume name not unique",
            json!({"volumes": [{"name": "abc", "emptyDir": {}}, {"name": "abc", "emptyDir": {}}]}),
            &[(
                Duplicate,
                "spec.volumes[1].name",
                "Duplicate value: \"abc\"",
            )],
        ),
        (
            "volume name not a DNS label",
            json!({"volumes": [{"name": "a.b", "emptyDir": {}}]}),
            &[(
                Invalid,
                "spec.volumes[0].name",
                "Invalid value: \"a.b\": must not contain dots",
            )],
        ),
        (
            "two volume types",
            json!({"volumes": [{"name": "v", "emptyDir": {}, "hostPath": {"path": "/x"}}]}),
            &[(
                Forbidden,
                "spec.volumes[0].hostPath",
                "Forbidden: may not specify more than 1 volume type",
            )],
        ),
        (
            "secret without name",
            json!({"volumes": [{"name": "v", "secret": {}}]}),
            &[(
                Required,
                "spec.volumes[0].secret.secretName",
                "Required value",
            )],
        ),
        (
            "configMap item with absolute path",
            json!({"volumes": [{"name": "v", "configMap": {"name": "cm", "items": [{"key": "k", "path": "/abs"}]}}]}),
            &[(
                Invalid,
                "spec.volumes[0].configMap.items[0].path",
                "Invalid value: \"/abs\": must be a relative path",
            )],
        ),
        (
            "invalid defaultMode",
            json!({"volumes": [{"name": "v", "secret": {"secretName": "s", "defaultMode": 512}}]}),
            &[(
                Invalid,
                "spec.volumes[0].secret.defaultMode",
                "Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive",
            )],
        ),
        (
            "hostPath with backsteps",
            json!({"volumes": [{"name": "v", "hostPath": {"path": "/a/../b"}}]}),
            &[(
                Invalid,
                "spec.volumes[0].hostPath.path",
                "Invalid value: \"/a/../b\": must not contain '..'",
            )],
        ),
        (
            "duplicate mount path",
            json!({"volumes": [{"name": "v", "emptyDir": {}}],
                "containers": [{"name": "ctr", "image": "image", "volumeMounts": [{"name": "v", "mountPath": "/d"}, {"name": "v", "mountPath": "/d"}]}]}),
            &[(
                Invalid,
                "spec.containers[0].volumeMounts[1].mountPath",
                "Invalid value: \"/d\": must be unique",
            )],
        ),
    ]);
}

/// `TestValidatePodSpec` error cases.
#[test]
fn validate_pod_spec_errors() {
    run(&[
        (
            "no containers",
            json!({"containers": []}),
            &[(Required, "spec.containers", "Required value")],
        ),
        (
            "bad restart policy",
            json!({"restartPolicy": "UnknowPolicy"}),
            &[(
                NotSupported,
                "spec.restartPolicy",
                "Unsupported value: \"UnknowPolicy\": supported values: \"Always\", \"OnFailure\", \"Never\"",
            )],
        ),
        (
            "bad dns policy",
            json!({"dnsPolicy": "invalid"}),
            &[(
                NotSupported,
                "spec.dnsPolicy",
                "Unsupported value: \"invalid\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\"",
            )],
        ),
        (
            "dnsPolicy None without config",
            json!({"dnsPolicy": "None"}),
            &[(
                Required,
                "spec.dnsConfig",
                "Required value: must provide `dnsConfig` when `dnsPolicy` is None",
            )],
        ),
        (
            "bad activeDeadlineSeconds",
            json!({"activeDeadlineSeconds": 0}),
            &[(
                Invalid,
                "spec.activeDeadlineSeconds",
                "Invalid value: 0: must be between 1 and 2147483647, inclusive",
            )],
        ),
        (
            "bad nodeName",
            json!({"nodeName": "node_name"}),
            &[(
                Invalid,
                "spec.nodeName",
                "Invalid value: \"node_name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            )],
        ),
        (
            "bad hostname",
            json!({"hostname": "Bad"}),
            &[(
                Invalid,
                "spec.hostname",
                "Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            )],
        ),
        (
            "hostNetwork with a different hostPort",
            json!({"hostNetwork": true, "containers": [{"name": "ctr", "image": "image", "ports": [{"containerPort": 80, "hostPort": 8080}]}]}),
            &[(
                Invalid,
                "spec.containers[0].ports[0].hostPort",
                "Invalid value: 8080: must match `containerPort` when `hostNetwork` is true",
            )],
        ),
        (
            "bad runAsUser",
            json!({"securityContext": {"runAsUser": -1}}),
            &[(
                Invalid,
                "spec.securityContext.runAsUser",
                "Invalid value: -1: must be between 0 and 2147483647, inclusive",
            )],
        ),
        (
            "node affinity without terms",
            json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}}),
            &[(
                Required,
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                "Required value: must have at least one node selector term",
            )],
        ),
        (
            "topology spread maxSkew 0",
            json!({"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}]}),
            &[(
                Invalid,
                "spec.topologySpreadConstraints[0].maxSkew",
                "Invalid value: 0: must be greater than zero",
            )],
        ),
        (
            "ephemeral containers on create",
            json!({"ephemeralContainers": [{"name": "debug", "image": "image"}]}),
            &[(
                Forbidden,
                "spec.ephemeralContainers",
                "Forbidden: cannot be set on create",
            )],
        ),
        (
            "nodeName with scheduling gates",
            json!({"nodeName": "node", "schedulingGates": [{"name": "foo"}]}),
            &[(
                Forbidden,
                "spec.nodeName",
                "Forbidden: cannot be set until all schedulingGates have been cleared",
            )],
        ),
    ]);
}

fn admit(p: Pod) -> Pod {
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    let mut p = p;
    admit_create::<PodStrategy>(&mut p, &ctx).expect("valid pod");
    p
}

fn update_errors(new: Pod, old: &Pod) -> ErrorList {
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    let mut new = new;
    new.metadata.resource_version = Some("2".into());
    match admit_update::<PodStrategy>(&mut new, old, &ctx) {
        Ok(()) => ErrorList::new(),
        Err(e) => e.errors,
    }
}

/// `TestValidatePodUpdate`.
#[test]
fn validate_pod_update() {
    let old = admit(pod(
        json!({"activeDeadlineSeconds": 30, "tolerations": [{"key": "a", "operator": "Exists"}]}),
    ));
    let with = |spec: Value| {
        let mut p = pod(
            json!({"activeDeadlineSeconds": 30, "tolerations": [{"key": "a", "operator": "Exists"}]}),
        );
        let mut v = serde_json::to_value(&p).expect("pod");
        merge(&mut v["spec"], spec);
        p = serde_json::from_value(v).expect("pod");
        p
    };
    // Allowed: image, lower activeDeadlineSeconds, added toleration.
    check(
        "image change",
        &update_errors(
            with(json!({"containers": [{"name": "ctr", "image": "image:latest"}]})),
            &old,
        ),
        &[],
    );
    check(
        "lower deadline",
        &update_errors(with(json!({"activeDeadlineSeconds": 10})), &old),
        &[],
    );
    check(
        "added toleration",
        &update_errors(
            with(
                json!({"tolerations": [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}]}),
            ),
            &old,
        ),
        &[],
    );
    check(
        "adding a container",
        &update_errors(
            with(
                json!({"containers": [{"name": "ctr", "image": "image"}, {"name": "two", "image": "image"}]}),
            ),
            &old,
        ),
        &[(
            Forbidden,
            "spec.containers",
            "Forbidden: pod updates may not add or remove containers",
        )],
    );
    check(
        "higher deadline",
        &update_errors(with(json!({"activeDeadlineSeconds": 60})), &old),
        &[(
            Invalid,
            "spec.activeDeadlineSeconds",
            "Invalid value: 60: must be less than or equal to previous value",
        )],
    );
    check(
        "removed toleration",
        &update_errors(with(json!({"tolerations": []})), &old),
        &[(
            Forbidden,
            "spec.tolerations",
            "Forbidden: existing toleration can not be modified except its tolerationSeconds",
        )],
    );
    let errs = update_errors(with(json!({"nodeName": "node-1"})), &old);
    assert_eq!(errs.len(), 1, "{errs}");
    let e = &errs.0[0];
    assert_eq!((e.error_type, e.field.as_str()), (Forbidden, "spec"));
    let (head, diff) = e.detail.split_once('\n').expect("a diff follows");
    assert_eq!(
        head,
        "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
    );
    assert!(diff.starts_with("  core.PodSpec{\n"), "{diff}");
    assert!(diff.contains("- \tNodeName:"), "{diff}");
    assert!(
        diff.contains("+ \tNodeName:") && diff.contains("\"node-1\","),
        "{diff}"
    );
}

/// `TestValidatePodStatusUpdate`.
#[test]
fn validate_pod_status_update() {
    let absent = Absent::default();
    let ctx = Context {
        now: now(),
        absent: &absent,
    };
    let old = admit(pod(json!({"restartPolicy": "Never"})));
    let status_errors = |status: Value| {
        let mut v = serde_json::to_value(&old).expect("pod");
        v["status"] = status;
        v["metadata"]["resourceVersion"] = json!("2");
        let mut new: Pod = serde_json::from_value(v).expect("pod");
        match admit_status_update::<PodStrategy>(&mut new, &old, &ctx) {
            Ok(()) => ErrorList::new(),
            Err(e) => e.errors,
        }
    };
    check(
        "nominatedNodeName valid",
        &status_errors(json!({"nominatedNodeName": "node1"})),
        &[],
    );
    check(
        "nominatedNodeName invalid",
        &status_errors(json!({"nominatedNodeName": "Node1"})),
        &[(
            Invalid,
            "status.nominatedNodeName",
            "Invalid value: \"Node1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        )],
    );
    check(
        "bad pod IP",
        &status_errors(json!({"podIPs": [{"ip": "1.1.1.1.1"}]})),
        &[(
            Invalid,
            "status.podIPs[0]",
            "Invalid value: \"1.1.1.1.1\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        )],
    );
    check(
        "custom condition type",
        &status_errors(json!({"conditions": [{"type": "bad type", "status": "True"}]})),
        &[(
            Invalid,
            "metadata.conditions[0].Type",
            "Invalid value: \"bad type\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        )],
    );
}

/// `TestValidatePodBinding`.
#[test]
fn validate_binding() {
    let b = |target: Value| -> Binding {
        serde_json::from_value(json!({"metadata": {"name": "p"}, "target": target}))
            .expect("binding")
    };
    check(
        "valid",
        &validate_pod_binding(&b(json!({"name": "node"}))),
        &[],
    );
    check(
        "empty kind",
        &validate_pod_binding(&b(json!({"kind": "", "name": "node"}))),
        &[],
    );
    check(
        "no name",
        &validate_pod_binding(&b(json!({}))),
        &[(Required, "target.name", "Required value")],
    );
    check(
        "wrong kind",
        &validate_pod_binding(&b(json!({"kind": "Pod", "name": "node"}))),
        &[(
            NotSupported,
            "target.kind",
            "Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\"",
        )],
    );
}
