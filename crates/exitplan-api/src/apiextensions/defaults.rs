//! `SetDefaults_CustomResourceDefinition` (`pkg/apis/apiextensions/v1/defaults.go`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition,
};

/// The conversion strategy that only changes `apiVersion` (`NoneConverter`).
pub const NONE_CONVERTER: &str = "None";
/// The conversion strategy that calls a webhook (`WebhookConverter`).
pub const WEBHOOK_CONVERTER: &str = "Webhook";

/// Fills the defaults of a decoded CRD: `names.singular` (lower-case kind),
/// `names.listKind` (`<kind>List`), `conversion.strategy: None`, a
/// webhook service port of 443 and, when empty, `status.storedVersions` from
/// the storage version.
pub fn default_crd(crd: &mut CustomResourceDefinition) {
    let names = &mut crd.spec.names;
    if names.singular.as_deref().unwrap_or_default().is_empty() {
        names.singular = Some(names.kind.to_lowercase());
    }
    if names.list_kind.as_deref().unwrap_or_default().is_empty() && !names.kind.is_empty() {
        names.list_kind = Some(format!("{}List", names.kind));
    }
    let conversion = crd
        .spec
        .conversion
        .get_or_insert_with(|| CustomResourceConversion {
            strategy: NONE_CONVERTER.to_owned(),
            webhook: None,
        });
    if let Some(svc) = conversion
        .webhook
        .as_mut()
        .and_then(|w| w.client_config.as_mut())
        .and_then(|c| c.service.as_mut())
    {
        svc.port.get_or_insert(443);
    }
    let status = crd.status.get_or_insert_with(Default::default);
    if status.stored_versions.as_ref().is_none_or(Vec::is_empty)
        && let Some(v) = crd.spec.versions.iter().find(|v| v.storage)
    {
        status.stored_versions = Some(vec![v.name.clone()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_names_conversion_and_stored_versions() {
        let mut crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "foos.example.com"},
            "spec": {
                "group": "example.com", "scope": "Namespaced",
                "names": {"plural": "foos", "kind": "Foo"},
                "versions": [{"name": "v1", "served": true, "storage": false}, {"name": "v2", "served": true, "storage": true}]
            }
        }))
        .expect("crd");
        default_crd(&mut crd);
        assert_eq!(crd.spec.names.singular.as_deref(), Some("foo"));
        assert_eq!(crd.spec.names.list_kind.as_deref(), Some("FooList"));
        assert_eq!(
            crd.spec.conversion.as_ref().map(|c| c.strategy.as_str()),
            Some("None")
        );
        assert_eq!(
            crd.status.as_ref().and_then(|s| s.stored_versions.clone()),
            Some(vec!["v2".to_owned()])
        );
        // Set values stay.
        crd.spec.names.singular = Some("x".into());
        if let Some(s) = crd.status.as_mut() {
            s.stored_versions = Some(vec!["v1".into()]);
        }
        default_crd(&mut crd);
        assert_eq!(crd.spec.names.singular.as_deref(), Some("x"));
        assert_eq!(
            crd.status.and_then(|s| s.stored_versions),
            Some(vec!["v1".to_owned()])
        );
    }
}
