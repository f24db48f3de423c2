//! Admission of CustomResourceDefinitions: the CRD strategy of
//! `exitplan_api`, plus the compile errors of each version's
//! `x-kubernetes-validations` CEL rules (`exitplan-cel`), which upstream's
//! CRD validation reports in the same list.

use jiff::Timestamp;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

use exitplan_api::apiextensions::strategy::CrdStrategy;
use exitplan_api::apiextensions::structural::Structural;
use exitplan_api::field::{ErrorList, Path};
use exitplan_api::status::{GroupKind, InvalidError};
use exitplan_api::strategy::SystemFields;
use exitplan_cel::CompiledRules;

use super::admission::{Admission, AdmissionError, Typed};

/// The kind CRD errors name.
const CRD_KIND: GroupKind = GroupKind {
    group: "apiextensions.k8s.io",
    kind: "CustomResourceDefinition",
};

/// CRD admission (main resource and `/status`).
#[derive(Debug, Default)]
pub struct CrdAdmission;

/// The CEL compile errors of every version whose schema is structural
/// (upstream compiles rules only then).
fn cel_errors(obj: &Value) -> ErrorList {
    let mut errs = ErrorList::new();
    let Ok(crd) = serde_json::from_value::<CustomResourceDefinition>(obj.clone()) else {
        return errs;
    };
    for (i, v) in crd.spec.versions.iter().enumerate() {
        let Some(schema) = v
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        else {
            continue;
        };
        if Structural::from_crd_version(v).is_err() {
            continue;
        }
        let path = Path::new("spec")
            .child("versions")
            .index(i)
            .child("schema")
            .child("openAPIV3Schema");
        if let Err(e) = CompiledRules::compile(schema, &path) {
            errs.append(e);
        }
    }
    errs
}

/// The strategy's outcome with the CEL errors of `submitted` added.
fn with_cel(
    result: Result<(), AdmissionError>,
    submitted: &Value,
    admitted: &Value,
) -> Result<(), AdmissionError> {
    match result {
        Ok(()) => {
            let errors = cel_errors(admitted);
            if errors.is_empty() {
                return Ok(());
            }
            let name = admitted
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            Err(AdmissionError::Invalid(InvalidError {
                kind: CRD_KIND,
                name,
                errors,
            }))
        }
        Err(AdmissionError::Invalid(mut invalid)) => {
            invalid.errors.append(cel_errors(submitted));
            Err(AdmissionError::Invalid(invalid))
        }
        Err(other) => Err(other),
    }
}

impl Admission for CrdAdmission {
    fn create(
        &self,
        obj: &mut Value,
        system: &SystemFields,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        let submitted = obj.clone();
        let result = Typed::<CrdStrategy>::new().create(obj, system, now);
        with_cel(result, &submitted, obj)
    }

    fn update(&self, new: &mut Value, old: &Value, now: Timestamp) -> Result<(), AdmissionError> {
        let submitted = new.clone();
        let result = Typed::<CrdStrategy>::new().update(new, old, now);
        with_cel(result, &submitted, new)
    }

    fn decode_error(&self, obj: &Value) -> Option<String> {
        Typed::<CrdStrategy>::new().decode_error(obj)
    }

    fn round_trip(&self, obj: &Value) -> Option<Value> {
        Typed::<CrdStrategy>::new().round_trip(obj)
    }

    fn update_status(
        &self,
        new: &mut Value,
        old: &Value,
        now: Timestamp,
    ) -> Result<(), AdmissionError> {
        Typed::<CrdStrategy>::new().update_status(new, old, now)
    }
}
