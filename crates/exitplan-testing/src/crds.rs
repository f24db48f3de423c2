//! Installing CustomResourceDefinitions and waiting until they are served,
//! as Go's envtest does (`CreateCRDs`, then `WaitForCRDs`): every CRD is
//! created (or, if one of that name exists, replaced), then each is polled
//! until its `Established` condition is `True` and every served version of
//! its resource answers a LIST.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionCondition,
};
use kube::api::{Api, ListParams, PostParams};
use kube::core::{ApiResource, DynamicObject};

use crate::error::Error;

/// How often a CRD's state is read while waiting (tokio time).
const POLL: Duration = Duration::from_millis(10);

/// Creates (or replaces) each CRD, then waits until each is `Established`
/// and its served versions are served, for at most `timeout` in all.
/// Returns the CRDs as last read from the server.
pub(crate) async fn install(
    client: &kube::Client,
    crds: Vec<CustomResourceDefinition>,
    timeout: Duration,
) -> Result<Vec<CustomResourceDefinition>, Error> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut names = Vec::with_capacity(crds.len());
    for crd in crds {
        names.push(create_or_replace(&api, crd).await?);
    }
    let deadline = tokio::time::Instant::now() + timeout;
    let mut installed = Vec::with_capacity(names.len());
    for name in names {
        let crd = wait_established(&api, &name, deadline, timeout).await?;
        wait_served(client, &crd, &name, deadline, timeout).await?;
        installed.push(crd);
    }
    Ok(installed)
}

/// Creates `crd`; if one of its name exists, replaces it (the new spec wins,
/// as `kubectl apply` of a changed CRD would). Returns its name.
async fn create_or_replace(
    api: &Api<CustomResourceDefinition>,
    mut crd: CustomResourceDefinition,
) -> Result<String, Error> {
    let name = crd.metadata.name.clone().ok_or(Error::CrdUnnamed)?;
    match api.create(&PostParams::default(), &crd).await {
        Ok(_) => Ok(name),
        Err(kube::Error::Api(status)) if status.reason == "AlreadyExists" => {
            let existing = api.get(&name).await?;
            crd.metadata.resource_version = existing.metadata.resource_version;
            api.replace(&name, &PostParams::default(), &crd)
                .await
                .map_err(|e| refused(&name, e))?;
            Ok(name)
        }
        Err(e) => Err(refused(&name, e)),
    }
}

/// An API error on writing the CRD named `name` as [`Error::CrdRefused`].
fn refused(name: &str, e: kube::Error) -> Error {
    match e {
        kube::Error::Api(status) => Error::CrdRefused {
            name: name.to_owned(),
            code: status.code,
            reason: status.reason,
            message: status.message,
        },
        other => Error::Api(other),
    }
}

/// The condition of `type_` on `crd`, if set.
fn condition<'a>(
    crd: &'a CustomResourceDefinition,
    type_: &str,
) -> Option<&'a CustomResourceDefinitionCondition> {
    crd.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
}

/// The conditions of `crd` in one line (`Established=False (Installing)`),
/// for the timeout error.
fn describe(crd: &CustomResourceDefinition) -> String {
    let conditions: Vec<String> = crd
        .status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .map(|c| match &c.reason {
            Some(reason) => format!("{}={} ({reason})", c.type_, c.status),
            None => format!("{}={}", c.type_, c.status),
        })
        .collect();
    if conditions.is_empty() {
        "no conditions yet".to_owned()
    } else {
        conditions.join(", ")
    }
}

/// Polls the CRD `name` until `Established=True`; fails at once on
/// `NamesAccepted=False` (such a CRD is never established).
async fn wait_established(
    api: &Api<CustomResourceDefinition>,
    name: &str,
    deadline: tokio::time::Instant,
    timeout: Duration,
) -> Result<CustomResourceDefinition, Error> {
    loop {
        let crd = api.get(name).await?;
        if condition(&crd, "Established").is_some_and(|c| c.status == "True") {
            return Ok(crd);
        }
        if let Some(c) = condition(&crd, "NamesAccepted").filter(|c| c.status == "False") {
            return Err(Error::CrdNamesNotAccepted {
                name: name.to_owned(),
                reason: c.reason.clone().unwrap_or_default(),
                message: c.message.clone().unwrap_or_default(),
            });
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::CrdNotReady {
                name: name.to_owned(),
                timeout,
                state: describe(&crd),
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Polls a LIST of each served version of the CRD's resource until the
/// server answers it (not 404).
async fn wait_served(
    client: &kube::Client,
    crd: &CustomResourceDefinition,
    name: &str,
    deadline: tokio::time::Instant,
    timeout: Duration,
) -> Result<(), Error> {
    let spec = &crd.spec;
    for version in spec.versions.iter().filter(|v| v.served) {
        let resource = ApiResource {
            group: spec.group.clone(),
            version: version.name.clone(),
            api_version: format!("{}/{}", spec.group, version.name),
            kind: spec.names.kind.clone(),
            plural: spec.names.plural.clone(),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        loop {
            match api.list(&ListParams::default().limit(1)).await {
                Ok(_) => break,
                Err(kube::Error::Api(status)) if status.code == 404 => {
                    if tokio::time::Instant::now() >= deadline {
                        return Err(Error::CrdNotReady {
                            name: name.to_owned(),
                            timeout,
                            state: format!(
                                "Established, but GET /apis/{}/{} answers 404",
                                resource.api_version, resource.plural
                            ),
                        });
                    }
                    tokio::time::sleep(POLL).await;
                }
                Err(e) => return Err(Error::Api(e)),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(conditions: &[(&str, &str, Option<&str>)]) -> CustomResourceDefinition {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionStatus;
        CustomResourceDefinition {
            status: Some(CustomResourceDefinitionStatus {
                conditions: Some(
                    conditions
                        .iter()
                        .map(|(t, s, r)| CustomResourceDefinitionCondition {
                            type_: (*t).to_owned(),
                            status: (*s).to_owned(),
                            reason: r.map(str::to_owned),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn describes_conditions_for_the_timeout_error() {
        let cases = [
            (crd(&[]), "no conditions yet"),
            (
                crd(&[
                    ("NamesAccepted", "True", Some("NoConflicts")),
                    ("Established", "False", Some("Installing")),
                ]),
                "NamesAccepted=True (NoConflicts), Established=False (Installing)",
            ),
            (crd(&[("Terminating", "True", None)]), "Terminating=True"),
        ];
        for (crd, want) in cases {
            assert_eq!(describe(&crd), want);
        }
        assert_eq!(
            describe(&CustomResourceDefinition::default()),
            "no conditions yet"
        );
    }

    #[test]
    fn finds_a_condition_by_type() {
        let c = crd(&[("Established", "True", Some("InitialNamesAccepted"))]);
        assert_eq!(
            condition(&c, "Established").map(|c| c.status.as_str()),
            Some("True")
        );
        assert!(condition(&c, "NamesAccepted").is_none());
    }
}
