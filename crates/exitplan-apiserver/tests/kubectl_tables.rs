//! `kubectl get` (and `-o wide`) of the built-in kinds the server serves,
//! with the real kubectl (v1.32, on PATH): the headers and cells a real
//! kube-apiserver gives for the same objects. Cells are compared after
//! kubectl's column padding; ages are whatever the clock says (`Ns`).

mod support;

use support::https::Cluster;

const MANIFEST: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: "1", b: "2"}
binaryData: {c: AAE=}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
type: Opaque
data: {password: aHVudGVyMg==}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: ClusterIP
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10]
  selector: {app: web}
  ports:
  - {name: http, port: 80, protocol: TCP, targetPort: 8080}
  - {name: dns, port: 53, protocol: UDP}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot}
secrets: [{name: robot-token}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1"}
      - {name: sidecar, image: "busybox:1"}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: postgres, image: "postgres:16"}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      containers: [{name: agent, image: "agent:2"}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  timeZone: Etc/UTC
  suspend: true
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: backup, image: "backup:1"}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: nginx
  tls: [{hosts: [a.example.com]}]
  rules:
  - host: a.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny}
spec:
  podSelector: {matchLabels: {app: web}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
globalDefault: false
preemptionPolicy: Never
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: example.com/csi
allowVolumeExpansion: true
---
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits: [{type: Container, default: {cpu: 500m}}]
---
apiVersion: v1
kind: ReplicationController
metadata: {name: old}
spec:
  replicas: 2
  selector: {app: old}
  template:
    metadata: {labels: {app: old}}
    spec:
      containers: [{name: web, image: "nginx:1"}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-1}
spec:
  replicas: 4
  selector: {matchLabels: {app: web, pod-template-hash: "1"}}
  template:
    metadata: {labels: {app: web, pod-template-hash: "1"}}
    spec:
      containers: [{name: nginx, image: "nginx:1"}]
---
apiVersion: v1
kind: PodTemplate
metadata: {name: tmpl}
template:
  metadata: {labels: {b: "2", a: "1"}}
  spec:
    containers: [{name: one, image: "one:1"}, {name: two, image: "two:2"}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: web}
subsets:
- addresses: [{ip: 10.0.0.1}, {ip: 10.0.0.2}]
  ports: [{port: 8080, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
- addresses: [10.0.0.1]
- addresses: [10.0.0.2]
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec:
  controller: k8s.io/ingress-nginx
  parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: external-lb}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: quota}
spec:
  hard: {pods: "10"}
---
apiVersion: apps/v1
kind: ControllerRevision
metadata:
  name: db-1
  ownerReferences:
  - {apiVersion: apps/v1, kind: StatefulSet, name: db, uid: 00000000-0000-0000-0000-000000000001, controller: true}
data: {}
revision: 1
"#;

/// The rows of kubectl's table output, each cell as printed (kubectl
/// pads columns with at least three spaces; cells hold single spaces).
fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|line| {
            line.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// Asserts kubectl's table: `want` cells, where `<age>` marks an age cell
/// (`0s`, `3s`, …) and `<date>` an RFC 3339 time.
fn assert_table(out: &str, want: &[&[&str]]) {
    let got = rows(out);
    assert_eq!(got.len(), want.len(), "{out}");
    for (row, want_row) in got.iter().zip(want) {
        assert_eq!(row.len(), want_row.len(), "{out}");
        for (cell, want_cell) in row.iter().zip(*want_row) {
            match *want_cell {
                "<age>" => assert!(
                    cell.ends_with('s') && cell[..cell.len() - 1].parse::<u32>().is_ok(),
                    "age {cell:?} in\n{out}"
                ),
                "<date>" => assert!(
                    cell.len() == 20 && cell.as_bytes()[10] == b'T' && cell.ends_with('Z'),
                    "date {cell:?} in\n{out}"
                ),
                w => assert_eq!(cell, w, "{out}"),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_prints_upstream_columns() {
    let c = Cluster::start("tables").await;
    c.ok(&["apply", "-f", "-"], Some(MANIFEST)).await;

    let cases: &[(&[&str], &[&[&str]])] = &[
        (
            &["get", "configmap", "settings"],
            &[&["NAME", "DATA", "AGE"], &["settings", "3", "<age>"]],
        ),
        (
            &["get", "secrets", "creds"],
            &[
                &["NAME", "TYPE", "DATA", "AGE"],
                &["creds", "Opaque", "1", "<age>"],
            ],
        ),
        (
            &["get", "svc", "web", "-o", "wide"],
            &[
                &[
                    "NAME",
                    "TYPE",
                    "CLUSTER-IP",
                    "EXTERNAL-IP",
                    "PORT(S)",
                    "AGE",
                    "SELECTOR",
                ],
                &[
                    "web",
                    "ClusterIP",
                    "10.96.0.10",
                    "<none>",
                    "80/TCP,53/UDP",
                    "<age>",
                    "app=web",
                ],
            ],
        ),
        (
            &["get", "sa", "robot"],
            &[&["NAME", "SECRETS", "AGE"], &["robot", "1", "<age>"]],
        ),
        (
            &["get", "deploy", "web"],
            &[
                &["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
                &["web", "0/2", "0", "0", "<age>"],
            ],
        ),
        (
            &["get", "deployments", "-o", "wide"],
            &[
                &[
                    "NAME",
                    "READY",
                    "UP-TO-DATE",
                    "AVAILABLE",
                    "AGE",
                    "CONTAINERS",
                    "IMAGES",
                    "SELECTOR",
                ],
                &[
                    "web",
                    "0/2",
                    "0",
                    "0",
                    "<age>",
                    "nginx,sidecar",
                    "nginx:1,busybox:1",
                    "app=web",
                ],
            ],
        ),
        (
            &["get", "sts", "db", "-o", "wide"],
            &[
                &["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"],
                &["db", "0/3", "<age>", "postgres", "postgres:16"],
            ],
        ),
        (
            &["get", "ds", "agent"],
            &[
                &[
                    "NAME",
                    "DESIRED",
                    "CURRENT",
                    "READY",
                    "UP-TO-DATE",
                    "AVAILABLE",
                    "NODE SELECTOR",
                    "AGE",
                ],
                &[
                    "agent",
                    "0",
                    "0",
                    "0",
                    "0",
                    "0",
                    "kubernetes.io/os=linux",
                    "<age>",
                ],
            ],
        ),
        (
            &["get", "cronjob", "nightly"],
            &[
                &[
                    "NAME",
                    "SCHEDULE",
                    "TIMEZONE",
                    "SUSPEND",
                    "ACTIVE",
                    "LAST SCHEDULE",
                    "AGE",
                ],
                &[
                    "nightly",
                    "0 3 * * *",
                    "Etc/UTC",
                    "True",
                    "0",
                    "<none>",
                    "<age>",
                ],
            ],
        ),
        (
            &["get", "ingress", "web"],
            &[
                &["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"],
                &["web", "nginx", "a.example.com", "80, 443", "<age>"],
            ],
        ),
        (
            &["get", "netpol", "deny"],
            &[
                &["NAME", "POD-SELECTOR", "AGE"],
                &["deny", "app=web", "<age>"],
            ],
        ),
        (
            &["get", "pc", "high"],
            &[
                &["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"],
                &["high", "1000", "false", "<age>", "Never"],
            ],
        ),
        (
            &["get", "sc"],
            &[
                &[
                    "NAME",
                    "PROVISIONER",
                    "RECLAIMPOLICY",
                    "VOLUMEBINDINGMODE",
                    "ALLOWVOLUMEEXPANSION",
                    "AGE",
                ],
                &[
                    "fast (default)",
                    "example.com/csi",
                    "Delete",
                    "Immediate",
                    "true",
                    "<age>",
                ],
            ],
        ),
        (
            &["get", "limits"],
            &[&["NAME", "CREATED AT"], &["limits", "<date>"]],
        ),
        (
            &["get", "rc", "old", "-o", "wide"],
            &[
                &[
                    "NAME",
                    "DESIRED",
                    "CURRENT",
                    "READY",
                    "AGE",
                    "CONTAINERS",
                    "IMAGES",
                    "SELECTOR",
                ],
                &["old", "2", "0", "0", "<age>", "web", "nginx:1", "app=old"],
            ],
        ),
        (
            &["get", "rs", "web-1", "-o", "wide"],
            &[
                &[
                    "NAME",
                    "DESIRED",
                    "CURRENT",
                    "READY",
                    "AGE",
                    "CONTAINERS",
                    "IMAGES",
                    "SELECTOR",
                ],
                &[
                    "web-1",
                    "4",
                    "0",
                    "0",
                    "<age>",
                    "nginx",
                    "nginx:1",
                    "app=web,pod-template-hash=1",
                ],
            ],
        ),
        (
            &["get", "podtemplates"],
            &[
                &["NAME", "CONTAINERS", "IMAGES", "POD LABELS"],
                &["tmpl", "one,two", "one:1,two:2", "a=1,b=2"],
            ],
        ),
        (
            &["get", "endpoints", "web"],
            &[
                &["NAME", "ENDPOINTS", "AGE"],
                &["web", "10.0.0.1:8080,10.0.0.2:8080", "<age>"],
            ],
        ),
        (
            &["get", "endpointslices"],
            &[
                &["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"],
                &["web-abc", "IPv4", "8080", "10.0.0.1,10.0.0.2", "<age>"],
            ],
        ),
        (
            &["get", "ingressclass"],
            &[
                &["NAME", "CONTROLLER", "PARAMETERS", "AGE"],
                &[
                    "nginx",
                    "k8s.io/ingress-nginx",
                    "IngressParameters.k8s.example.com/external-lb",
                    "<age>",
                ],
            ],
        ),
        (
            &["get", "quota"],
            &[&["NAME", "REQUEST", "LIMIT", "AGE"], &["quota", "<age>"]],
        ),
        (
            &["get", "controllerrevisions"],
            &[
                &["NAME", "CONTROLLER", "REVISION", "AGE"],
                &["db-1", "statefulset.apps/db", "1", "<age>"],
            ],
        ),
    ];
    for (args, want) in cases {
        let out = c.ok(args, None).await;
        assert_table(&out, want);
    }
    c.stop().await;
}
