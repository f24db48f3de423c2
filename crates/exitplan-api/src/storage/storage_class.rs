//! storage.k8s.io/v1 StorageClass: defaulting (`SetDefaults_StorageClass`),
//! validation (`ValidateStorageClass(Update)` of `pkg/apis/storage/validation`)
//! and the registry strategy (`pkg/registry/storage/storageclass`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::TopologySelectorTerm;
use k8s_openapi::api::storage::v1::StorageClass;

use crate::equality::semantic_eq;
use crate::field::{BadValue, Error, ErrorList, Path};
use crate::formats;
use crate::meta::generic::{before_create_scoped, validate_common_fields_scoped};
use crate::meta::{self, FIELD_IMMUTABLE, NameRule};
use crate::strategy::{Context, Strategy};

/// Most parameters a class may have (`maxProvisionerParameterLen`).
pub const MAX_PROVISIONER_PARAMETER_LEN: usize = 512;
/// Largest summed size of parameter keys and values (`maxProvisionerParameterSize`).
pub const MAX_PROVISIONER_PARAMETER_SIZE: usize = 256 * 1024;
/// The reclaim policies a class may name, sorted as upstream lists them.
pub const RECLAIM_POLICIES: [&str; 2] = ["Delete", "Retain"];
/// The binding modes, sorted as upstream lists them.
pub const VOLUME_BINDING_MODES: [&str; 2] = ["Immediate", "WaitForFirstConsumer"];

/// `validateProvisioner`: required, a qualified name (compared lowercased).
pub fn validate_provisioner(provisioner: &str, path: &Path) -> ErrorList {
    if provisioner.is_empty() {
        return ErrorList(vec![Error::required(path, "")]);
    }
    formats::validate_qualified_name(path, &provisioner.to_lowercase())
}

/// `validateParameters`: at most 512 entries, no empty key, 256 KiB in all;
/// with `allow_empty` false at least one entry.
pub fn validate_parameters(
    params: Option<&BTreeMap<String, String>>,
    allow_empty: bool,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let params = params.cloned().unwrap_or_default();
    if params.len() > MAX_PROVISIONER_PARAMETER_LEN {
        errs.push(Error::too_long(path, MAX_PROVISIONER_PARAMETER_LEN));
        return errs;
    }
    let mut total = 0usize;
    for (k, v) in &params {
        if k.is_empty() {
            errs.push(Error::invalid(path, k, "field can not be empty."));
        }
        total += k.len() + v.len();
    }
    if total > MAX_PROVISIONER_PARAMETER_SIZE {
        errs.push(Error::too_long(path, MAX_PROVISIONER_PARAMETER_SIZE));
    }
    if !allow_empty && params.is_empty() {
        errs.push(Error::required(
            path,
            "must contain at least one key/value pair",
        ));
    }
    errs
}

/// `validateReclaimPolicy`: empty, `Delete` or `Retain`.
pub fn validate_reclaim_policy(policy: Option<&str>, path: &Path) -> ErrorList {
    match policy {
        Some(p) if !p.is_empty() && !RECLAIM_POLICIES.contains(&p) => {
            ErrorList(vec![Error::not_supported(path, p, &RECLAIM_POLICIES)])
        }
        _ => ErrorList::new(),
    }
}

/// `validateVolumeBindingMode`: required, `Immediate` or `WaitForFirstConsumer`.
pub fn validate_volume_binding_mode(mode: Option<&str>, path: &Path) -> ErrorList {
    match mode {
        None => ErrorList(vec![Error::required(path, "")]),
        Some(m) if !VOLUME_BINDING_MODES.contains(&m) => {
            ErrorList(vec![Error::not_supported(path, m, &VOLUME_BINDING_MODES)])
        }
        Some(_) => ErrorList::new(),
    }
}

type ExprMap = BTreeMap<String, BTreeSet<String>>;

/// `ValidateTopologySelectorTerm`: each requirement has values (no
/// duplicates) and a qualified key, keys unique; returns the key → values map.
pub fn validate_topology_selector_term(
    term: &TopologySelectorTerm,
    path: &Path,
) -> (ExprMap, ErrorList) {
    let mut errs = ErrorList::new();
    let mut map = ExprMap::new();
    let expr_path = path.child("matchLabelExpressions");
    for (i, req) in term.match_label_expressions.iter().flatten().enumerate() {
        let p = expr_path.index(i);
        let values_path = p.child("values");
        if req.values.is_empty() {
            errs.push(Error::required(&values_path, ""));
        }
        let mut set = BTreeSet::new();
        for (j, v) in req.values.iter().enumerate() {
            if !set.insert(v.clone()) {
                errs.push(Error::duplicate(&values_path.index(j), v));
            }
        }
        errs.append(formats::validate_qualified_name(&p.child("key"), &req.key));
        if map.contains_key(&req.key) {
            errs.push(Error::duplicate(&p.child("key"), &req.key));
        }
        map.insert(req.key.clone(), set);
    }
    (map, errs)
}

/// `validateAllowedTopologies`: each term valid, no two terms equal. As
/// upstream, the comparison list starts with one empty entry per term, so a
/// term without expressions is reported as a duplicate.
pub fn validate_allowed_topologies(terms: &[TopologySelectorTerm], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if terms.is_empty() {
        return errs;
    }
    let mut raw: Vec<ExprMap> = vec![ExprMap::new(); terms.len()];
    for (i, term) in terms.iter().enumerate() {
        let p = path.index(i);
        let (map, term_errs) = validate_topology_selector_term(term, &p);
        errs.append(term_errs);
        for t in &raw {
            if *t == map {
                errs.push(Error::duplicate(&p.child("matchLabelExpressions"), ""));
            }
        }
        raw.push(map);
    }
    errs
}

/// `ValidateStorageClass`.
pub fn validate_storage_class(sc: &StorageClass) -> ErrorList {
    let mut errs = meta::validate_object_meta(&sc.metadata, false, NameRule::Subdomain);
    errs.append(validate_provisioner(
        &sc.provisioner,
        &Path::new("provisioner"),
    ));
    errs.append(validate_parameters(
        sc.parameters.as_ref(),
        true,
        &Path::new("parameters"),
    ));
    errs.append(validate_reclaim_policy(
        sc.reclaim_policy.as_deref(),
        &Path::new("reclaimPolicy"),
    ));
    errs.append(validate_volume_binding_mode(
        sc.volume_binding_mode.as_deref(),
        &Path::new("volumeBindingMode"),
    ));
    errs.append(validate_allowed_topologies(
        sc.allowed_topologies.as_deref().unwrap_or_default(),
        &Path::new("allowedTopologies"),
    ));
    errs
}

/// `ValidateStorageClassUpdate`: parameters, provisioner, reclaimPolicy and
/// volumeBindingMode are immutable.
pub fn validate_storage_class_update(new: &StorageClass, old: &StorageClass) -> ErrorList {
    let mut errs = meta::validate_object_meta_update(&new.metadata, &old.metadata);
    if !semantic_eq(&new.parameters, &old.parameters) {
        errs.push(Error::forbidden(
            &Path::new("parameters"),
            "updates to parameters are forbidden.",
        ));
    }
    if new.provisioner != old.provisioner {
        errs.push(Error::forbidden(
            &Path::new("provisioner"),
            "updates to provisioner are forbidden.",
        ));
    }
    if new.reclaim_policy != old.reclaim_policy {
        errs.push(Error::forbidden(
            &Path::new("reclaimPolicy"),
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    if new.volume_binding_mode != old.volume_binding_mode {
        errs.push(Error::invalid(
            &Path::new("volumeBindingMode"),
            BadValue::from(new.volume_binding_mode.as_deref()),
            FIELD_IMMUTABLE,
        ));
    }
    errs
}

/// The annotation marking the default StorageClass.
pub const ANNOTATION_IS_DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
/// Its beta form, still honoured.
pub const BETA_ANNOTATION_IS_DEFAULT_CLASS: &str =
    "storageclass.beta.kubernetes.io/is-default-class";

/// `GetDefaultClass`: the newest StorageClass annotated as the default.
pub fn default_storage_class(classes: &[StorageClass]) -> Option<&StorageClass> {
    crate::default_class::newest_default(
        classes,
        &[
            ANNOTATION_IS_DEFAULT_CLASS,
            BETA_ANNOTATION_IS_DEFAULT_CLASS,
        ],
    )
}

/// The `DefaultStorageClass` admission plugin, for a PersistentVolumeClaim
/// being created: a claim naming no class (neither `storageClassName` nor
/// the beta annotation) gets the default class's name. Call it before
/// [`crate::strategy::admit_create`]; returns whether it set one.
pub fn set_default_storage_class(
    pvc: &mut k8s_openapi::api::core::v1::PersistentVolumeClaim,
    classes: &[StorageClass],
) -> bool {
    let annotated = pvc.metadata.annotations.as_ref().is_some_and(|a| {
        a.contains_key(crate::core::persistent_volume_claim::BETA_STORAGE_CLASS_ANNOTATION)
    });
    let spec = pvc.spec.get_or_insert_with(Default::default);
    if annotated || spec.storage_class_name.is_some() {
        return false;
    }
    let Some(name) = default_storage_class(classes).and_then(|c| c.metadata.name.clone()) else {
        return false;
    };
    spec.storage_class_name = Some(name);
    true
}

/// StorageClasses hold no quantities.
impl crate::quantities::Quantities for StorageClass {}

/// Create and update rules of storage.k8s.io/v1 StorageClasses
/// (cluster-scoped, no status).
#[derive(Clone, Copy, Debug, Default)]
pub struct StorageClassStrategy;

impl Strategy for StorageClassStrategy {
    type Object = StorageClass;
    const NAMESPACED: bool = false;

    /// `SetDefaults_StorageClass`: reclaimPolicy `Delete`, volumeBindingMode
    /// `Immediate`.
    fn default(obj: &mut StorageClass) {
        obj.reclaim_policy
            .get_or_insert_with(|| "Delete".to_owned());
        obj.volume_binding_mode
            .get_or_insert_with(|| "Immediate".to_owned());
    }

    fn validate_create(obj: &StorageClass, _ctx: &Context<'_>) -> ErrorList {
        before_create_scoped(validate_storage_class(obj), &obj.metadata, false)
    }

    /// The new object's rules, then the immutable fields.
    fn validate_update(new: &StorageClass, old: &StorageClass, _ctx: &Context<'_>) -> ErrorList {
        let mut errs = validate_common_fields_scoped(&new.metadata, &old.metadata, false);
        errs.append(validate_storage_class(new));
        errs.append(validate_storage_class_update(new, old));
        errs
    }

    /// StorageClasses have no `/status`; the stored object is kept.
    fn prepare_for_status_update(new: &mut StorageClass, old: &StorageClass) {
        *new = old.clone();
    }

    fn validate_status_update(
        new: &StorageClass,
        old: &StorageClass,
        _ctx: &Context<'_>,
    ) -> ErrorList {
        validate_common_fields_scoped(&new.metadata, &old.metadata, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absent::Absent;
    use crate::strategy::admit_create;
    use k8s_openapi::api::core::v1::TopologySelectorLabelRequirement;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn sc(name: &str, provisioner: &str, params: &[(&str, &str)]) -> StorageClass {
        StorageClass {
            metadata: ObjectMeta {
                name: Some(name.into()),
                resource_version: Some("1".into()),
                ..ObjectMeta::default()
            },
            provisioner: provisioner.into(),
            parameters: Some(
                params
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            reclaim_policy: Some("Delete".into()),
            volume_binding_mode: Some("Immediate".into()),
            ..StorageClass::default()
        }
    }

    fn term(exprs: &[(&str, &[&str])]) -> TopologySelectorTerm {
        TopologySelectorTerm {
            match_label_expressions: Some(
                exprs
                    .iter()
                    .map(|(k, vs)| TopologySelectorLabelRequirement {
                        key: (*k).into(),
                        values: vs.iter().map(|v| (*v).to_owned()).collect(),
                    })
                    .collect(),
            ),
        }
    }

    /// `TestValidateStorageClass` of upstream's validation_test.go.
    #[test]
    fn validate_storage_class_table() {
        let ok = [
            sc("foo", "kubernetes.io/foo-provisioner", &[]),
            sc(
                "foo",
                "kubernetes.io/foo-provisioner",
                &[
                    ("kubernetes.io/foo-parameter", "free/form/string"),
                    ("foo-parameter", "free-form-string"),
                    (
                        "foo-parameter2",
                        "{\"embedded\": \"json\", \"with\": {\"structures\":\"inside\"}}",
                    ),
                ],
            ),
            StorageClass {
                reclaim_policy: Some("Retain".into()),
                ..sc("foo", "kubernetes.io/foo-provisioner", &[])
            },
        ];
        for s in &ok {
            assert!(validate_storage_class(s).is_empty(), "{s:?}");
        }
        let mut ns = sc("foo", "kubernetes.io/foo-provisioner", &[]);
        ns.metadata.namespace = Some("foo".into());
        let many: Vec<(String, String)> = (0..=MAX_PROVISIONER_PARAMETER_LEN)
            .map(|i| (format!("key{i}"), format!("value{i}")))
            .collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let big = "x".repeat(MAX_PROVISIONER_PARAMETER_SIZE);
        let cases: Vec<(&str, StorageClass, &str)> = vec![
            (
                "namespace is present",
                ns,
                "metadata.namespace: Forbidden: not allowed on this type",
            ),
            (
                "invalid provisioner",
                sc("foo", "kubernetes.io/invalid/provisioner", &[]),
                r#"provisioner: Invalid value: "kubernetes.io/invalid/provisioner": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"#,
            ),
            (
                "invalid empty provisioner",
                sc("foo", "", &[]),
                "provisioner: Required value",
            ),
            (
                "invalid empty parameter name",
                sc("foo", "kubernetes.io/foo", &[("", "value")]),
                r#"parameters: Invalid value: "": field can not be empty."#,
            ),
            (
                "provisioner: Required value",
                sc("foo", "", &[("", "value")]),
                r#"[provisioner: Required value, parameters: Invalid value: "": field can not be empty.]"#,
            ),
            (
                "too many parameters",
                sc("foo", "kubernetes.io/foo", &many),
                "parameters: Too long: may not be more than 512 bytes",
            ),
            (
                "parameters too big",
                sc("foo", "kubernetes.io/foo", &[("k", big.as_str())]),
                "parameters: Too long: may not be more than 262144 bytes",
            ),
            (
                "invalid reclaimpolicy",
                StorageClass {
                    reclaim_policy: Some("bogus-reclaim-policy".into()),
                    ..sc("foo", "kubernetes.io/foo", &[])
                },
                r#"reclaimPolicy: Unsupported value: "bogus-reclaim-policy": supported values: "Delete", "Retain""#,
            ),
            (
                "invalid volumeBindingMode",
                StorageClass {
                    volume_binding_mode: Some("invalid".into()),
                    ..sc("foo", "kubernetes.io/foo", &[])
                },
                r#"volumeBindingMode: Unsupported value: "invalid": supported values: "Immediate", "WaitForFirstConsumer""#,
            ),
            (
                "missing volumeBindingMode",
                StorageClass {
                    volume_binding_mode: None,
                    ..sc("foo", "kubernetes.io/foo", &[])
                },
                "volumeBindingMode: Required value",
            ),
        ];
        for (name, s, want) in cases {
            assert_eq!(validate_storage_class(&s).to_string(), want, "{name}");
        }
    }

    /// `TestValidateAllowedTopologies` of upstream's validation_test.go.
    #[test]
    fn allowed_topologies_table() {
        let p = Path::new("allowedTopologies");
        let zone = "failure-domain.beta.kubernetes.io/zone";
        let ok: Vec<Vec<TopologySelectorTerm>> = vec![
            vec![term(&[(zone, &["zone1"])])],
            vec![term(&[(zone, &["zone1"])]), term(&[(zone, &["zone2"])])],
            vec![term(&[
                (zone, &["zone1", "zone2"]),
                ("kubernetes.io/hostname", &["node1"]),
            ])],
        ];
        for t in ok {
            assert!(validate_allowed_topologies(&t, &p).is_empty(), "{t:?}");
        }
        let cases: Vec<(&str, Vec<TopologySelectorTerm>, &str)> = vec![
            (
                "empty values",
                vec![term(&[(zone, &[])])],
                "allowedTopologies[0].matchLabelExpressions[0].values: Required value",
            ),
            (
                "duplicate values",
                vec![term(&[(zone, &["zone1", "zone1"])])],
                r#"allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: "zone1""#,
            ),
            (
                "invalid key",
                vec![term(&[("/invalidkey", &["zone1"])])],
                r#"allowedTopologies[0].matchLabelExpressions[0].key: Invalid value: "/invalidkey": prefix part must be non-empty"#,
            ),
            (
                "duplicate keys",
                vec![term(&[(zone, &["zone1"]), (zone, &["zone2"])])],
                r#"allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "failure-domain.beta.kubernetes.io/zone""#,
            ),
            (
                "duplicate terms",
                vec![term(&[(zone, &["zone1"])]), term(&[(zone, &["zone1"])])],
                r#"allowedTopologies[1].matchLabelExpressions: Duplicate value: """#,
            ),
        ];
        for (name, t, want) in cases {
            assert_eq!(
                validate_allowed_topologies(&t, &p).to_string(),
                want,
                "{name}"
            );
        }
    }

    /// `TestValidateStorageClassUpdate` of upstream's validation_test.go.
    #[test]
    fn validate_storage_class_update_table() {
        let old = sc("foo", "kubernetes.io/foo", &[("foo", "bar")]);
        let cases: Vec<(&str, StorageClass, &str)> = vec![
            ("no change", old.clone(), ""),
            (
                "parameters changed",
                sc("foo", "kubernetes.io/foo", &[("foo", "baz")]),
                "parameters: Forbidden: updates to parameters are forbidden.",
            ),
            (
                "provisioner changed",
                sc("foo", "kubernetes.io/bar", &[("foo", "bar")]),
                "provisioner: Forbidden: updates to provisioner are forbidden.",
            ),
            (
                "reclaimPolicy changed",
                StorageClass {
                    reclaim_policy: Some("Retain".into()),
                    ..old.clone()
                },
                "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
            ),
            (
                "volumeBindingMode changed",
                StorageClass {
                    volume_binding_mode: Some("WaitForFirstConsumer".into()),
                    ..old.clone()
                },
                r#"volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable"#,
            ),
        ];
        for (name, new, want) in cases {
            assert_eq!(
                validate_storage_class_update(&new, &old).to_string(),
                want,
                "{name}"
            );
        }
    }

    /// `TestAdmission` of upstream's setdefault admission plugin.
    #[test]
    fn default_class_for_claims() {
        let mark = |mut c: StorageClass, key: &str, value: &str, created: &str| {
            c.metadata.annotations = Some([(key.to_owned(), value.to_owned())].into());
            c.metadata.creation_timestamp =
                Some(crate::time::mtime(created.parse().expect("time")));
            c
        };
        let old = mark(
            sc("old", "p", &[]),
            ANNOTATION_IS_DEFAULT_CLASS,
            "true",
            "2026-01-01T00:00:00Z",
        );
        let new = mark(
            sc("new", "p", &[]),
            BETA_ANNOTATION_IS_DEFAULT_CLASS,
            "true",
            "2026-01-02T00:00:00Z",
        );
        let twin = mark(
            sc("a-twin", "p", &[]),
            ANNOTATION_IS_DEFAULT_CLASS,
            "true",
            "2026-01-02T00:00:00Z",
        );
        let not_default = mark(
            sc("nope", "p", &[]),
            ANNOTATION_IS_DEFAULT_CLASS,
            "false",
            "2026-01-03T00:00:00Z",
        );
        let name =
            |cs: &[StorageClass]| default_storage_class(cs).and_then(|c| c.metadata.name.clone());
        assert_eq!(name(&[]), None);
        assert_eq!(name(std::slice::from_ref(&not_default)), None);
        assert_eq!(
            name(&[old.clone(), new.clone(), not_default.clone()]).as_deref(),
            Some("new")
        );
        assert_eq!(
            name(&[new.clone(), twin.clone()]).as_deref(),
            Some("a-twin")
        );

        let classes = [old, new];
        let mut claim = k8s_openapi::api::core::v1::PersistentVolumeClaim::default();
        assert!(set_default_storage_class(&mut claim, &classes));
        assert_eq!(
            claim.spec.and_then(|s| s.storage_class_name).as_deref(),
            Some("new")
        );
        let mut explicit_empty = k8s_openapi::api::core::v1::PersistentVolumeClaim {
            spec: Some(k8s_openapi::api::core::v1::PersistentVolumeClaimSpec {
                storage_class_name: Some(String::new()),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(
            !set_default_storage_class(&mut explicit_empty, &classes),
            "\"\" means no class"
        );
    }

    #[test]
    fn create_defaults_reclaim_and_binding_mode() {
        let absent = Absent::default();
        let ctx = Context {
            now: "2026-01-01T00:00:00Z".parse().expect("time"),
            absent: &absent,
        };
        let mut s = StorageClass {
            reclaim_policy: None,
            volume_binding_mode: None,
            ..sc("standard", "example.com/csi", &[])
        };
        admit_create::<StorageClassStrategy>(&mut s, &ctx).expect("valid");
        assert_eq!(s.reclaim_policy.as_deref(), Some("Delete"));
        assert_eq!(s.volume_binding_mode.as_deref(), Some("Immediate"));
    }
}
