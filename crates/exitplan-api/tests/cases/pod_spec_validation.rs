//! PodSpec rules ported from upstream's `pkg/apis/core/validation`
//! (`validatePodResources` / `validatePodResourceConsistency`,
//! `validateResourceClaimNames`, `validateWindows`,
//! `validateWindowsHostProcessPod`, `ValidateHostSysctl`, and for pod
//! templates `ValidatePodSpecificAnnotations`,
//! `validateSeccompAnnotationsAndFields`,
//! `validateAppArmorAnnotationsAndFieldsMatchOnCreate`). Each case is a
//! submitted object and its full expected error list, `(type, field,
//! body)` in order, with the cases of upstream's `validation_test.go`
//! tables where they exist.

use exitplan_api::absent::Absent;
use exitplan_api::core::pod::PodStrategy;
use exitplan_api::core::validation::PodValidationOptions;
use exitplan_api::core::validation::defaults::default_pod_spec;
use exitplan_api::core::validation::pod_spec::validate_pod_template_spec;
use exitplan_api::field::{ErrorList, ErrorType, Path};
use exitplan_api::strategy::{Context, admit_create};
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use serde_json::{Value, json};

use ErrorType::{Forbidden, Invalid, NotFound, NotSupported, Required};

use crate::pod_fixture::{Want, check, submitted};
use crate::support::now;

/// A valid pod with `spec` merged over one container `ctr`.
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

fn ctr(resources: Value) -> Value {
    json!({"name": "ctr", "image": "image", "resources": resources})
}

/// `TestValidatePodResourceConsistency` and the pod-level cases of
/// `TestValidatePodSpec` (PodLevelResources on, as by default since 1.34).
#[test]
fn pod_level_resources() {
    run(&[
        (
            "pod requests cover the containers",
            json!({
                "resources": {"requests": {"cpu": "2", "memory": "2Gi"}},
                "containers": [ctr(json!({"requests": {"cpu": "1", "memory": "1Gi"}})),
                               {"name": "c2", "image": "image", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]
            }),
            &[],
        ),
        (
            "pod limits only, containers below them",
            json!({
                "resources": {"limits": {"cpu": "2", "memory": "2Gi"}},
                "containers": [ctr(json!({"limits": {"cpu": "1", "memory": "1Gi"}}))]
            }),
            &[],
        ),
        (
            "a resource without a pod-level request is not compared",
            json!({
                "resources": {"requests": {"cpu": "2"}},
                "containers": [ctr(json!({"requests": {"cpu": "1", "memory": "1Gi"}}))]
            }),
            &[],
        ),
        (
            "aggregate requests above pod requests",
            json!({
                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                "containers": [ctr(json!({"requests": {"cpu": "1", "memory": "1Gi"}})),
                               {"name": "c2", "image": "image", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]
            }),
            &[
                (
                    Invalid,
                    "spec.resources.requests[cpu]",
                    "Invalid value: \"1\": must be greater than or equal to aggregate container requests of 1500m",
                ),
                (
                    Invalid,
                    "spec.resources.requests[memory]",
                    "Invalid value: \"1Gi\": must be greater than or equal to aggregate container requests of 1536Mi",
                ),
            ],
        ),
        (
            "a sidecar adds to the regular containers",
            json!({
                "resources": {"requests": {"cpu": "1500m"}},
                "initContainers": [{"name": "sidecar", "image": "image", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}],
                "containers": [ctr(json!({"requests": {"cpu": "1"}}))]
            }),
            &[(
                Invalid,
                "spec.resources.requests[cpu]",
                "Invalid value: \"1500m\": must be greater than or equal to aggregate container requests of 2",
            )],
        ),
        (
            "the largest init container counts",
            json!({
                "resources": {"requests": {"cpu": "2"}},
                "initContainers": [{"name": "init", "image": "image", "resources": {"requests": {"cpu": "3"}}}],
                "containers": [ctr(json!({"requests": {"cpu": "1"}}))]
            }),
            &[(
                Invalid,
                "spec.resources.requests[cpu]",
                "Invalid value: \"2\": must be greater than or equal to aggregate container requests of 3",
            )],
        ),
        (
            "container limit above pod limit",
            json!({
                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                "containers": [ctr(json!({"limits": {"cpu": "2", "memory": "1Gi"}}))]
            }),
            &[(
                Invalid,
                "spec.resources.containers[0][cpu].limits",
                "Invalid value: \"2\": must be less than or equal to pod limits of 1",
            )],
        ),
        (
            "unsupported pod-level resource",
            json!({
                "resources": {"requests": {"ephemeral-storage": "1Gi"}, "limits": {"example.com/gpu": "1"}}
            }),
            &[
                (
                    NotSupported,
                    "spec.resources.limits[example.com/gpu]",
                    "Unsupported value: \"example.com/gpu\": supported values: \"cpu\", \"hugepages-\", \"memory\"",
                ),
                (
                    NotSupported,
                    "spec.resources.requests[ephemeral-storage]",
                    "Unsupported value: \"ephemeral-storage\": supported values: \"cpu\", \"hugepages-\", \"memory\"",
                ),
            ],
        ),
        (
            "non-standard unqualified pod-level resource",
            json!({
                "resources": {"requests": {"cpus": "1"}}
            }),
            &[(
                Invalid,
                "spec.resources.requests[cpus]",
                "Invalid value: \"cpus\": must be a standard resource type or fully qualified",
            )],
        ),
        (
            "negative pod-level request",
            json!({
                "resources": {"requests": {"cpu": "-1"}}
            }),
            &[(
                Invalid,
                "spec.resources.requests[cpu]",
                "Invalid value: \"-1\": must be greater than or equal to 0",
            )],
        ),
        (
            "pod-level request above pod-level limit",
            json!({
                "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}
            }),
            &[(
                Invalid,
                "spec.resources.requests",
                "Invalid value: \"2\": must be less than or equal to cpu limit of 1",
            )],
        ),
        (
            "claims at pod level",
            json!({
                "resourceClaims": [{"name": "my-claim", "resourceClaimName": "c"}],
                "resources": {"claims": [{"name": "my-claim"}], "requests": {"cpu": "1"}}
            }),
            &[(
                Forbidden,
                "spec.resources.claims",
                "Forbidden: claims cannot be set for Resources at pod-level",
            )],
        ),
        (
            "pod hugepages limit below the containers'",
            json!({
                "resources": {"limits": {"cpu": "2", "memory": "2Gi", "hugepages-2Mi": "2Mi"}},
                "containers": [ctr(json!({"limits": {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "2Mi"}})),
                               {"name": "c2", "image": "image", "resources": {"limits": {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "2Mi"}}}]
            }),
            &[(
                Invalid,
                "spec.resources.limits[hugepages-2Mi]",
                "Invalid value: \"2Mi\": must be greater than or equal to aggregate container limits of 4Mi",
            )],
        ),
    ]);
}

/// `validateResourceClaimNames` (`TestValidateResourceRequirements`'
/// claim cases): a missing name is reported at the entry, an unknown name
/// lists the pod's claims.
#[test]
fn container_resource_claims() {
    let claims = json!([{"name": "my-claim", "resourceClaimName": "c"}, {"name": "other", "resourceClaimName": "c"}]);
    run(&[
        (
            "claim and a request of another",
            json!({
                "resourceClaims": claims,
                "containers": [ctr(json!({"claims": [{"name": "my-claim"}, {"name": "other", "request": "foo"}]}))]
            }),
            &[],
        ),
        (
            "empty claim name",
            json!({
                "resourceClaims": claims,
                "containers": [ctr(json!({"claims": [{"name": ""}]}))]
            }),
            &[(
                Required,
                "spec.containers[0].resources.claims[0]",
                "Required value",
            )],
        ),
        (
            "unknown claim",
            json!({
                "resourceClaims": claims,
                "containers": [ctr(json!({"claims": [{"name": "no-such-claim"}]}))]
            }),
            &[(
                NotFound,
                "spec.containers[0].resources.claims[0]",
                "Not found: \"no-such-claim\": must be one of the names in pod.spec.resourceClaims: my-claim, other",
            )],
        ),
        (
            "unknown claim, none declared",
            json!({
                "containers": [ctr(json!({"claims": [{"name": "my-claim"}]}))]
            }),
            &[(
                NotFound,
                "spec.containers[0].resources.claims[0]",
                "Not found: \"my-claim\": must be one of the names in pod.spec.resourceClaims which is empty",
            )],
        ),
        (
            "duplicate claim",
            json!({
                "resourceClaims": claims,
                "containers": [ctr(json!({"claims": [{"name": "my-claim"}, {"name": "my-claim"}]}))]
            }),
            &[(
                ErrorType::Duplicate,
                "spec.containers[0].resources.claims[1]",
                "Duplicate value: \"my-claim\"",
            )],
        ),
        (
            "duplicate request",
            json!({
                "resourceClaims": claims,
                "containers": [ctr(json!({"claims": [{"name": "my-claim", "request": "foo"}, {"name": "my-claim", "request": "foo"}]}))]
            }),
            &[(
                ErrorType::Duplicate,
                "spec.containers[0].resources.claims[1]",
                "Duplicate value: \"my-claim/foo\"",
            )],
        ),
        (
            "whole claim after one of its requests",
            json!({
                "resourceClaims": claims,
                "containers": [ctr(json!({"claims": [{"name": "my-claim", "request": "foo"}, {"name": "my-claim"}]}))]
            }),
            &[(
                ErrorType::Duplicate,
                "spec.containers[0].resources.claims[1]",
                "Duplicate value: \"my-claim\"",
            )],
        ),
        (
            "invalid request name",
            json!({
                "resourceClaims": claims,
                "containers": [ctr(json!({"claims": [{"name": "my-claim", "request": "Foo"}]}))]
            }),
            &[(
                Invalid,
                "spec.containers[0].resources.claims[0].request",
                "Invalid value: \"Foo\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            )],
        ),
        (
            "hugepages value names the resource",
            json!({
                "containers": [ctr(json!({"limits": {"memory": "1Gi", "hugepages-2Mi": "3Mi"}, "requests": {"memory": "1Gi", "hugepages-2Mi": "3Mi"}}))]
            }),
            &[
                (
                    Invalid,
                    "spec.containers[0].resources.limits[hugepages-2Mi]",
                    "Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi",
                ),
                (
                    Invalid,
                    "spec.containers[0].resources.requests[hugepages-2Mi]",
                    "Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi",
                ),
            ],
        ),
    ]);
}

/// `validatePodResourceClaim` (`TestValidatePodSpec`'s resource claim
/// cases): exactly one source, each a subdomain.
#[test]
fn pod_resource_claim_sources() {
    run(&[
        (
            "template source",
            json!({
                "resourceClaims": [{"name": "my-claim", "resourceClaimTemplateName": "my-template"}]
            }),
            &[],
        ),
        (
            "no source",
            json!({
                "resourceClaims": [{"name": "my-claim"}]
            }),
            &[(
                Invalid,
                "spec.resourceClaims[0]",
                "Invalid value: {\"name\":\"my-claim\"}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            )],
        ),
        (
            "both sources",
            json!({
                "resourceClaims": [{"name": "my-claim", "resourceClaimName": "c", "resourceClaimTemplateName": "t"}]
            }),
            &[(
                Invalid,
                "spec.resourceClaims[0]",
                "Invalid value: {\"name\":\"my-claim\",\"resourceClaimName\":\"c\",\"resourceClaimTemplateName\":\"t\"}: at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
            )],
        ),
        (
            "invalid names",
            json!({
                "resourceClaims": [{"name": "a", "resourceClaimName": "X_"}, {"name": "b", "resourceClaimTemplateName": "Y_"}]
            }),
            &[
                (
                    Invalid,
                    "spec.resourceClaims[0].resourceClaimName",
                    "Invalid value: \"X_\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                ),
                (
                    Invalid,
                    "spec.resourceClaims[1].resourceClaimTemplateName",
                    "Invalid value: \"Y_\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                ),
            ],
        ),
    ]);
}

/// `validateWindows` (`TestValidateWindowsPodSecurityContext` and the
/// windows cases of `TestValidatePodSpec`).
#[test]
fn windows_pods() {
    run(&[
        (
            "windows pod with windows options",
            json!({
                "os": {"name": "windows"},
                "securityContext": {"windowsOptions": {"runAsUserName": "User"}},
                "containers": [{"name": "ctr", "image": "image", "securityContext": {"windowsOptions": {"hostProcess": false}}}]
            }),
            &[],
        ),
        (
            "linux fields on a windows pod",
            json!({
                "os": {"name": "windows"},
                "hostPID": true,
                "hostIPC": true,
                "hostUsers": true,
                "shareProcessNamespace": false,
                "securityContext": {
                    "runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000, "supplementalGroups": [1],
                    "seLinuxOptions": {"role": "r"}, "seccompProfile": {"type": "RuntimeDefault"},
                    "appArmorProfile": {"type": "RuntimeDefault"}, "fsGroupChangePolicy": "Always",
                    "sysctls": [{"name": "vm.overcommit_memory", "value": "1"}],
                    "supplementalGroupsPolicy": "Merge", "seLinuxChangePolicy": "Recursive"
                },
                "containers": [{"name": "ctr", "image": "image", "securityContext": {
                    "runAsUser": 1000, "runAsGroup": 1000, "privileged": false, "allowPrivilegeEscalation": false,
                    "capabilities": {}, "readOnlyRootFilesystem": true, "procMount": "Default",
                    "seLinuxOptions": {"role": "r"}, "seccompProfile": {"type": "RuntimeDefault"},
                    "appArmorProfile": {"type": "RuntimeDefault"}
                }}]
            }),
            &[
                (
                    Forbidden,
                    "spec.securityContext.appArmorProfile",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.securityContext.seLinuxOptions",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.hostUsers",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.hostPID",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.hostIPC",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.securityContext.seccompProfile",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.securityContext.fsGroup",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.securityContext.fsGroupChangePolicy",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.securityContext.sysctls",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.shareProcessNamespace",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.securityContext.runAsUser",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.securityContext.runAsGroup",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.securityContext.supplementalGroups",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.securityContext.supplementalGroupsPolicy",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.securityContext.seLinuxChangePolicy",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.containers[0].securityContext.appArmorProfile",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.containers[0].securityContext.seLinuxOptions",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.containers[0].securityContext.seccompProfile",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.containers[0].securityContext.capabilities",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.containers[0].securityContext.readOnlyRootFilesystem",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.containers[0].securityContext.privileged",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.containers[0].securityContext.allowPrivilegeEscalation",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.containers[0].securityContext.procMount",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.containers[0].securityContext.runAsUser",
                    "Forbidden: cannot be set for a windows pod",
                ),
                (
                    Forbidden,
                    "spec.containers[0].securityContext.runAsGroup",
                    "Forbidden: cannot be set for a windows pod",
                ),
            ],
        ),
        (
            "init container of a linux pod with windows options",
            json!({
                "os": {"name": "linux"},
                "initContainers": [{"name": "init", "image": "image", "securityContext": {"windowsOptions": {"runAsUserName": "User"}}}]
            }),
            &[(
                Forbidden,
                "spec.initContainers[0].securityContext.windowsOptions",
                "Forbidden: windows options cannot be set for a linux pod",
            )],
        ),
    ]);
}

/// `TestValidateWindowsHostProcessPod`.
#[test]
fn windows_host_process_pods() {
    let hp = |v: bool| json!({"windowsOptions": {"hostProcess": v}});
    run(&[
        (
            "all containers HostProcess through the pod",
            json!({
                "hostNetwork": true,
                "securityContext": hp(true),
                "initContainers": [{"name": "init", "image": "image"}]
            }),
            &[],
        ),
        (
            "every container HostProcess",
            json!({
                "hostNetwork": true,
                "containers": [{"name": "ctr", "image": "image", "securityContext": hp(true)},
                               {"name": "c2", "image": "image", "securityContext": hp(true)}]
            }),
            &[],
        ),
        (
            "container disagrees with the pod",
            json!({
                "hostNetwork": true,
                "securityContext": hp(true),
                "containers": [{"name": "ctr", "image": "image", "securityContext": hp(false)}]
            }),
            &[(
                Invalid,
                "spec.containers[0].securityContext.windowsOptions.hostProcess",
                "Invalid value: false: pod hostProcess value must be identical if both are specified, was true",
            )],
        ),
        (
            "some but not all containers, no host network",
            json!({
                "containers": [{"name": "ctr", "image": "image", "securityContext": hp(true)},
                               {"name": "c2", "image": "image"}]
            }),
            &[
                (
                    Invalid,
                    "spec",
                    "Invalid value: \"\": If pod contains any hostProcess containers then all containers must be HostProcess containers",
                ),
                (
                    Invalid,
                    "spec.hostNetwork",
                    "Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers",
                ),
            ],
        ),
    ]);
}

/// `ValidateHostSysctl` (`TestValidateSysctls`' host cases).
#[test]
fn namespaced_sysctls_next_to_host_namespaces() {
    run(&[
        (
            "net sysctl without host network",
            json!({
                "securityContext": {"sysctls": [{"name": "net.ipv4.ip_forward", "value": "1"}]}
            }),
            &[],
        ),
        (
            "kernel sysctl with host network",
            json!({
                "hostNetwork": true,
                "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}
            }),
            &[],
        ),
        (
            "net sysctl with host network",
            json!({
                "hostNetwork": true,
                "securityContext": {"sysctls": [{"name": "net.ipv4.ip_forward", "value": "1"},
                                                {"name": "net/ipv4/conf/eno2.100/rp_filter", "value": "1"}]}
            }),
            &[
                (
                    Invalid,
                    "spec.securityContext.sysctls[0].name",
                    "Invalid value: \"net.ipv4.ip_forward\": may not be specified when 'hostNetwork' is true",
                ),
                (
                    Invalid,
                    "spec.securityContext.sysctls[1].name",
                    "Invalid value: \"net/ipv4/conf/eno2.100/rp_filter\": may not be specified when 'hostNetwork' is true",
                ),
            ],
        ),
        (
            "ipc sysctls with host IPC",
            json!({
                "hostIPC": true,
                "securityContext": {"sysctls": [{"name": "kernel.shmmax", "value": "1"},
                                                {"name": "fs.mqueue.msg_max", "value": "1"}]}
            }),
            &[
                (
                    Invalid,
                    "spec.securityContext.sysctls[0].name",
                    "Invalid value: \"kernel.shmmax\": may not be specified when 'hostIPC' is true",
                ),
                (
                    Invalid,
                    "spec.securityContext.sysctls[1].name",
                    "Invalid value: \"fs.mqueue.msg_max\": may not be specified when 'hostIPC' is true",
                ),
            ],
        ),
    ]);
}

fn template_errors(template: Value) -> ErrorList {
    let mut t: PodTemplateSpec = serde_json::from_value(template).expect("template fixture");
    if let Some(spec) = &mut t.spec {
        default_pod_spec(spec, false);
    }
    validate_pod_template_spec(
        &t,
        &Path::new("spec").child("template"),
        PodValidationOptions::default(),
    )
}

fn template(annotations: Value, spec: Value) -> Value {
    let mut base = json!({
        "metadata": {"annotations": annotations},
        "spec": {"containers": [{"name": "ctr", "image": "image"}]}
    });
    if let (Some(a), Value::Object(b)) = (base["spec"].as_object_mut(), spec) {
        a.extend(b);
    }
    base
}

/// `ValidatePodTemplateSpec`'s annotation rules:
/// `TestValidateSeccompAnnotationsAndFields`,
/// `TestValidateSeccompAnnotationsAndFieldsMatch`,
/// `TestValidateAppArmorAnnotationsAndFieldsMatchOnCreate` and the seccomp
/// and AppArmor cases of `TestValidatePodSpecificAnnotations`.
#[test]
fn template_seccomp_and_app_armor_annotations() {
    let cases: &[(&str, Value, &[Want])] = &[
        (
            "annotations matching the fields",
            template(
                json!({"seccomp.security.alpha.kubernetes.io/pod": "runtime/default",
                   "container.seccomp.security.alpha.kubernetes.io/ctr": "localhost/a.json",
                   "container.apparmor.security.beta.kubernetes.io/ctr": "localhost/prof"}),
                json!({"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                   "containers": [{"name": "ctr", "image": "image", "securityContext": {
                       "seccompProfile": {"type": "Localhost", "localhostProfile": "a.json"},
                       "appArmorProfile": {"type": "Localhost", "localhostProfile": "prof"}}}]}),
            ),
            &[],
        ),
        (
            "docker/default matches RuntimeDefault",
            template(
                json!({"seccomp.security.alpha.kubernetes.io/pod": "docker/default"}),
                json!({"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}),
            ),
            &[],
        ),
        (
            "invalid seccomp annotations",
            template(
                json!({"seccomp.security.alpha.kubernetes.io/pod": "foo",
                   "container.seccomp.security.alpha.kubernetes.io/ctr": "localhost/../etc"}),
                json!({}),
            ),
            &[
                (
                    Invalid,
                    "spec.template.annotations.seccomp.security.alpha.kubernetes.io/pod",
                    "Invalid value: \"foo\": must be a valid seccomp profile",
                ),
                (
                    Invalid,
                    "spec.template.annotations.container.seccomp.security.alpha.kubernetes.io/ctr",
                    "Invalid value: \"../etc\": must not contain '..'",
                ),
            ],
        ),
        (
            "pod seccomp type mismatch",
            template(
                json!({"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}),
                json!({"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}),
            ),
            &[(
                Forbidden,
                "spec.template.spec.securityContext.seccompProfile.type",
                "Forbidden: seccomp type in annotation and field must match",
            )],
        ),
        (
            "container seccomp profile mismatch",
            template(
                json!({"container.seccomp.security.alpha.kubernetes.io/ctr": "localhost/b.json"}),
                json!({"containers": [{"name": "ctr", "image": "image", "securityContext": {
                "seccompProfile": {"type": "Localhost", "localhostProfile": "a.json"}}}]}),
            ),
            &[(
                Forbidden,
                "spec.template.spec.containers[0].securityContext.seccompProfile.localhostProfile",
                "Forbidden: seccomp profile in annotation and field must match",
            )],
        ),
        (
            "container seccomp Localhost against unconfined annotation",
            template(
                json!({"container.seccomp.security.alpha.kubernetes.io/ctr": "unconfined"}),
                json!({"containers": [{"name": "ctr", "image": "image", "securityContext": {
                "seccompProfile": {"type": "Localhost", "localhostProfile": "a.json"}}}]}),
            ),
            &[(
                Forbidden,
                "spec.template.spec.containers[0].securityContext.seccompProfile.type",
                "Forbidden: seccomp type in annotation and field must match",
            )],
        ),
        (
            "pod AppArmor profile against the container annotation",
            template(
                json!({"container.apparmor.security.beta.kubernetes.io/ctr": "unconfined"}),
                json!({"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}),
            ),
            &[(
                Forbidden,
                "spec.template.spec.containers[0].securityContext.appArmorProfile.type",
                "Forbidden: apparmor type in annotation and field must match",
            )],
        ),
        (
            "container AppArmor localhost profile mismatch",
            template(
                json!({"container.apparmor.security.beta.kubernetes.io/ctr": "localhost/other"}),
                json!({"containers": [{"name": "ctr", "image": "image", "securityContext": {
                "appArmorProfile": {"type": "Localhost", "localhostProfile": "prof"}}}]}),
            ),
            &[(
                Forbidden,
                "spec.template.spec.containers[0].securityContext.appArmorProfile.localhostProfile",
                "Forbidden: apparmor profile in annotation and field must match",
            )],
        ),
        (
            "windows pods skip the AppArmor match",
            template(
                json!({"container.apparmor.security.beta.kubernetes.io/ctr": "unconfined"}),
                json!({"os": {"name": "windows"}, "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}),
            ),
            &[(
                Forbidden,
                "spec.template.spec.securityContext.appArmorProfile",
                "Forbidden: cannot be set for a windows pod",
            )],
        ),
        (
            "AppArmor annotation for no container, bad profile",
            template(
                json!({"container.apparmor.security.beta.kubernetes.io/nope": "bad"}),
                json!({}),
            ),
            &[
                (
                    Invalid,
                    "spec.template.annotations[container.apparmor.security.beta.kubernetes.io/nope]",
                    "Invalid value: \"nope\": container not found",
                ),
                (
                    Invalid,
                    "spec.template.annotations[container.apparmor.security.beta.kubernetes.io/nope]",
                    "Invalid value: \"bad\": invalid AppArmor profile name: \"bad\"",
                ),
            ],
        ),
        (
            "mirror annotation and deletion cost in a template",
            template(
                json!({"kubernetes.io/config.mirror": "x", "controller.kubernetes.io/pod-deletion-cost": "abc"}),
                json!({}),
            ),
            &[
                (
                    Invalid,
                    "spec.template.annotations[kubernetes.io/config.mirror]",
                    "Invalid value: \"x\": must set spec.nodeName if mirror pod annotation is set",
                ),
                (
                    Invalid,
                    "spec.template.annotations[controller.kubernetes.io/pod-deletion-cost]",
                    "Invalid value: \"abc\": must be a 32bit integer",
                ),
            ],
        ),
    ];
    for (name, t, want) in cases {
        check(name, &template_errors(t.clone()), want);
    }
}
