//! Building kube-apiserver's `Status` answers from validation results.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ListMeta, Status, StatusCause, StatusDetails,
};

use crate::field::ErrorList;

/// A group-qualified kind, rendered `Kind.group` (or `Kind` for the core group).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupKind {
    /// API group (`""` for core).
    pub group: &'static str,
    /// Kind (`EvictionRequest`).
    pub kind: &'static str,
}

impl std::fmt::Display for GroupKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            f.write_str(self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}

/// A rejected object: the 422 `Invalid` error (`apierrors.NewInvalid`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", self.message())]
pub struct InvalidError {
    /// The kind of the rejected object.
    pub kind: GroupKind,
    /// The object's name.
    pub name: String,
    /// Why it was rejected.
    pub errors: ErrorList,
}

impl InvalidError {
    /// `<Kind.group> "<name>" is invalid: <aggregate>`.
    pub fn message(&self) -> String {
        match self.errors.aggregate() {
            Some(agg) => format!("{} \"{}\" is invalid: {agg}", self.kind, self.name),
            None => format!("{} \"{}\" is invalid", self.kind, self.name),
        }
    }

    /// The `Status` kube-apiserver answers with: code 422, reason `Invalid`,
    /// one cause per field error (not de-duplicated, unlike the message).
    pub fn to_status(&self) -> Status {
        let causes = self
            .errors
            .iter()
            .map(|e| StatusCause {
                field: Some(e.field.clone()),
                message: Some(e.body()),
                reason: Some(e.error_type.cause_type().to_owned()),
            })
            .collect();
        Status {
            code: Some(422),
            details: Some(StatusDetails {
                causes: Some(causes),
                group: Some(self.kind.group.to_owned()),
                kind: Some(self.kind.kind.to_owned()),
                name: Some(self.name.clone()),
                retry_after_seconds: None,
                uid: None,
            }),
            message: Some(self.message()),
            metadata: ListMeta::default(),
            reason: Some("Invalid".to_owned()),
            status: Some("Failure".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::{Error, Path};

    #[test]
    fn invalid_message_and_causes() {
        let e = InvalidError {
            kind: GroupKind {
                group: "lifecycle.k8s.io",
                kind: "EvictionRequest",
            },
            name: "x".into(),
            errors: vec![
                Error::required(&Path::new("spec").child("intent"), ""),
                Error::invalid(&Path::new("spec").child("requester"), "foo", "bad"),
            ]
            .into(),
        };
        assert_eq!(
            e.to_string(),
            r#"EvictionRequest.lifecycle.k8s.io "x" is invalid: [spec.intent: Required value, spec.requester: Invalid value: "foo": bad]"#
        );
        let s = e.to_status();
        assert_eq!(s.code, Some(422));
        let causes = s.details.and_then(|d| d.causes).unwrap_or_default();
        assert_eq!(causes.len(), 2);
        assert_eq!(causes[1].reason.as_deref(), Some("FieldValueInvalid"));
        assert_eq!(
            causes[1].message.as_deref(),
            Some(r#"Invalid value: "foo": bad"#)
        );
    }
}
