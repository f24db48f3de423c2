//! Serving custom resources: the resources an established
//! CustomResourceDefinition adds (one per served version), and how their
//! writes are admitted — upstream's `customresource` registry: prune unknown
//! fields, default, prepare (status and generation), validate against the
//! structural schema, then the version's `x-kubernetes-validations` CEL rules.
//!
//! A CRD's resources are built once per distinct CRD spec and accepted names
//! and kept for the process's life (see [`resources_for`]): the served
//! resources are `&'static` everywhere else in the server, and CRDs change
//! rarely, so interning them costs a few kilobytes per distinct spec seen.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion, CustomResourceSubresourceScale,
};
use serde_json::Value;

use exitplan_api::apiextensions::custom_resource::{
    ResourceKind, prepare_for_create, prepare_for_status_update, prepare_for_update,
    prune_and_default, validate_create, validate_update,
};
use exitplan_api::apiextensions::structural::Structural;
use exitplan_api::field::{ErrorList, Path};
use exitplan_api::patch::TypeSchema;
use exitplan_api::status::{GroupKind, InvalidError};
use exitplan_api::strategy::{SystemFields, fill_system_fields};
use exitplan_cel::CompiledRules;

use super::admission::{Admission, AdmissionError};
use super::scale::{ScaleDef, SelectorSource};
use super::{FieldLabels, ResourceDef};
use crate::discovery::table::CustomColumns;

/// One served version of a custom resource: what its CRD says, compiled
/// once (structural schema, CEL rules, printer columns).
#[derive(Debug)]
pub struct CustomResource {
    /// The CRD's name (`<plural>.<group>`).
    pub crd_name: &'static str,
    /// The CRD as it was when this resource was built (OpenAPI reads it).
    pub crd: CustomResourceDefinition,
    /// The served version.
    pub version: &'static str,
    /// `<group>/<storage version>`: the `apiVersion` objects are stored with.
    pub storage_api_version: &'static str,
    /// The version's structural schema.
    pub structural: Structural,
    /// The version's CEL rules (`None`: it declares none).
    pub rules: Option<CompiledRules>,
    /// Whether the `status` subresource is served.
    pub status: bool,
    /// The `scale` subresource, when served.
    pub scale: Option<CustomResourceSubresourceScale>,
    /// The Table columns (`additionalPrinterColumns`).
    pub columns: Arc<CustomColumns>,
    /// The schema patches and apply use.
    pub patch_schema: TypeSchema,
    kind: GroupKind,
    namespaced: bool,
}

impl CustomResource {
    fn resource_kind(&self) -> ResourceKind<'_> {
        ResourceKind {
            group: self.kind.group,
            version: self.version,
            kind: self.kind.kind,
            namespaced: self.namespaced,
            scale: self.scale.as_ref(),
        }
    }

    fn invalid(&self, obj: &Value, errors: ErrorList) -> AdmissionError {
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        AdmissionError::Invalid(InvalidError {
            kind: self.kind,
            name,
            errors,
        })
    }

    /// The schema and CEL checks shared by every write; `old` on updates.
    fn check(
        &self,
        obj: &Value,
        old: Option<&Value>,
        mut errors: ErrorList,
    ) -> Result<(), AdmissionError> {
        if errors.is_empty()
            && let Some(rules) = &self.rules
        {
            errors.append(rules.validate(obj, old).errors);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(self.invalid(obj, errors))
        }
    }

    /// The object as stored: with the storage version's `apiVersion`
    /// (`conversion: None` changes nothing else).
    pub fn to_storage(&self, object: &Value) -> Value {
        let mut stored = object.clone();
        if let Some(m) = stored.as_object_mut() {
            m.insert("apiVersion".into(), self.storage_api_version.into());
        }
        stored
    }
}

impl CustomResource {
    /// A custom resource's `metadata` must be an object before anything
    /// else is looked at (the decoder's check), worded as the decoder's
    /// errors are (`<Kind> in version "<v>" cannot be handled as a <Kind>`).
    fn check_metadata(&self, obj: &Value) -> Result<(), AdmissionError> {
        match obj.get("metadata") {
            None | Some(Value::Object(_)) => Ok(()),
            Some(other) => Err(AdmissionError::Decode(format!(
                "{kind} in version \"{version}\" cannot be handled as a {kind}: json: cannot unmarshal {ty} into Go struct field {kind}.metadata of type v1.ObjectMeta",
                kind = self.kind.kind,
                version = self.version,
                ty = exitplan_api::render::go_json_type(other),
            ))),
        }
    }
}

impl Admission for CustomResource {
    fn create(
        &self,
        obj: &mut Value,
        system: &SystemFields,
        _now: Timestamp,
    ) -> Result<(), AdmissionError> {
        self.check_metadata(obj)?;
        prune_and_default(&self.structural, obj);
        let mut meta = exitplan_api::apiextensions::custom_resource::object_meta(obj)
            .map_err(|e| self.invalid(obj, ErrorList::from(vec![e])))?;
        fill_system_fields(&mut meta, system);
        write_meta(obj, &meta)?;
        prepare_for_create(obj, self.status);
        let errors = validate_create(&self.structural, obj, &self.resource_kind());
        self.check(obj, None, errors)
    }

    fn update(&self, new: &mut Value, old: &Value, _now: Timestamp) -> Result<(), AdmissionError> {
        self.check_metadata(new)?;
        prune_and_default(&self.structural, new);
        prepare_for_update(new, old, self.status);
        let errors = validate_update(&self.structural, new, old, &self.resource_kind());
        self.check(new, Some(old), errors)
    }

    fn decode_error(&self, obj: &Value) -> Option<String> {
        self.check_metadata(obj).err().map(|e| e.to_string())
    }

    fn round_trip(&self, obj: &Value) -> Option<Value> {
        let mut pruned = obj.clone();
        exitplan_api::apiextensions::pruning::prune(&self.structural, &mut pruned);
        Some(pruned)
    }

    fn update_status(
        &self,
        new: &mut Value,
        old: &Value,
        _now: Timestamp,
    ) -> Result<(), AdmissionError> {
        self.check_metadata(new)?;
        prune_and_default(&self.structural, new);
        prepare_for_status_update(new, old);
        let errors = validate_update(&self.structural, new, old, &self.resource_kind());
        self.check(new, Some(old), errors)
    }
}

/// Writes typed metadata back into a custom resource.
fn write_meta(
    obj: &mut Value,
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Result<(), AdmissionError> {
    let value = serde_json::to_value(meta).map_err(|e| AdmissionError::Decode(e.to_string()))?;
    if let Some(m) = obj.as_object_mut() {
        m.insert("metadata".into(), value);
    }
    Ok(())
}

fn leak(s: impl Into<String>) -> &'static str {
    Box::leak(s.into().into_boxed_str())
}

fn leak_all(items: &[String]) -> &'static [&'static str] {
    Box::leak(
        items
            .iter()
            .map(|s| leak(s.as_str()))
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    )
}

/// `.spec.replicas` → `/spec/replicas` (the paths a CRD's scale names are
/// simple dotted paths; validation refused anything else).
fn pointer(path: &str) -> &'static str {
    leak(format!(
        "/{}",
        path.trim_start_matches('.').replace('.', "/")
    ))
}

fn scale_def(scale: &CustomResourceSubresourceScale) -> &'static ScaleDef {
    Box::leak(Box::new(ScaleDef {
        spec_replicas: pointer(&scale.spec_replicas_path),
        status_replicas: pointer(&scale.status_replicas_path),
        selector: match scale.label_selector_path.as_deref() {
            Some(p) if !p.is_empty() => SelectorSource::String(pointer(p)),
            _ => SelectorSource::None,
        },
    }))
}

/// Why a CRD version cannot be served (a CRD that passed validation always
/// can; this guards stored CRDs written by older builds).
#[derive(Debug, thiserror::Error)]
#[error("{crd} version {version} cannot be served: {reason}")]
pub struct Unservable {
    /// The CRD's name.
    pub crd: String,
    /// The version.
    pub version: String,
    /// Why.
    pub reason: String,
}

fn build_version(
    crd: &CustomResourceDefinition,
    v: &CustomResourceDefinitionVersion,
) -> Result<&'static ResourceDef, Unservable> {
    let fail = |reason: String| Unservable {
        crd: crd.metadata.name.clone().unwrap_or_default(),
        version: v.name.clone(),
        reason,
    };
    let names = crd
        .status
        .as_ref()
        .and_then(|s| s.accepted_names.clone())
        .unwrap_or_else(|| crd.spec.names.clone());
    let group = leak(crd.spec.group.as_str());
    let kind = leak(names.kind.as_str());
    let plural = leak(names.plural.as_str());
    let singular = leak(
        names
            .singular
            .clone()
            .unwrap_or_else(|| names.kind.to_lowercase()),
    );
    let namespaced = crd.spec.scope == "Namespaced";
    let structural = Structural::from_crd_version(v).map_err(|e| fail(e.to_string()))?;
    let schema = v
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref());
    let rules = match schema {
        Some(s) => {
            let index = crd.spec.versions.iter().position(|x| x.name == v.name);
            let path = Path::new("spec")
                .child("versions")
                .index(index.unwrap_or_default())
                .child("schema")
                .child("openAPIV3Schema");
            let rules = CompiledRules::compile(s, &path).map_err(|e| fail(e.to_string()))?;
            (!rules.is_empty()).then_some(rules)
        }
        None => None,
    };
    let subresources = v.subresources.clone().unwrap_or_default();
    let status = subresources.status.is_some();
    let scale = subresources.scale.clone();
    let (columns, _) =
        CustomColumns::serving(v.additional_printer_columns.as_deref().unwrap_or_default());
    let storage_version = crd
        .spec
        .versions
        .iter()
        .find(|v| v.storage)
        .map_or(v.name.as_str(), |s| s.name.as_str());
    let selectable: Vec<String> = v
        .selectable_fields
        .iter()
        .flatten()
        .map(|f| f.json_path.trim_start_matches('.').to_owned())
        .collect();
    let selectable_fields = leak_all(&selectable);
    let mut labels: Vec<(&'static str, &'static str)> = vec![
        ("metadata.name", "metadata.name"),
        ("metadata.namespace", "metadata.namespace"),
    ];
    labels.extend(selectable_fields.iter().map(|f| (*f, *f)));
    let mut subs = Vec::new();
    if status {
        subs.push("status".to_owned());
    }
    if scale.is_some() {
        subs.push("scale".to_owned());
    }
    let custom: &'static CustomResource = Box::leak(Box::new(CustomResource {
        crd_name: leak(crd.metadata.name.clone().unwrap_or_default()),
        crd: crd.clone(),
        version: leak(v.name.as_str()),
        storage_api_version: leak(format!("{group}/{storage_version}")),
        structural,
        rules,
        status,
        scale: scale.clone(),
        columns: Arc::new(columns),
        patch_schema: TypeSchema::custom_resource(&v.name, schema, status),
        kind: GroupKind { group, kind },
        namespaced,
    }));
    Ok(Box::leak(Box::new(ResourceDef {
        group,
        version: custom.version,
        kind,
        plural,
        singular,
        namespaced,
        short_names: leak_all(names.short_names.as_deref().unwrap_or_default()),
        categories: leak_all(names.categories.as_deref().unwrap_or_default()),
        subresources: leak_all(&subs),
        selectable_fields,
        field_labels: FieldLabels::Convert(Box::leak(labels.into_boxed_slice())),
        attrs_hook: None,
        storage: leak(format!("{plural}.{group}")),
        conversion: None,
        admission: custom,
        scale: scale.as_ref().map(scale_def),
        custom: Some(custom),
    })))
}

/// The resources an established CRD serves (its served versions), built
/// once per distinct CRD spec and accepted names.
pub fn resources_for(
    crd: &CustomResourceDefinition,
) -> Result<Vec<&'static ResourceDef>, Unservable> {
    static INTERNED: Mutex<Option<HashMap<String, Vec<&'static ResourceDef>>>> = Mutex::new(None);
    let key = serde_json::to_string(&(
        &crd.metadata.name,
        &crd.spec,
        crd.status.as_ref().map(|s| &s.accepted_names),
    ))
    .unwrap_or_default();
    let mut interned = INTERNED.lock().unwrap_or_else(|p| p.into_inner());
    let map = interned.get_or_insert_with(HashMap::new);
    if let Some(defs) = map.get(&key) {
        return Ok(defs.clone());
    }
    let mut defs = Vec::new();
    for v in crd.spec.versions.iter().filter(|v| v.served) {
        defs.push(build_version(crd, v)?);
    }
    map.insert(key, defs.clone());
    Ok(defs)
}
