//! `expectedPods` and `desiredHealthy` of a PodDisruptionBudget
//! (job-failure spec §13 step 2): integer `minAvailable` counts the pods,
//! everything else sums the scale of the pods' controllers; percentages
//! round up.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use exitplan_api::field::go_quote;

use super::scale::{ControllerScale, ScaleError, controller_of};

/// Why the expected pod count cannot be computed; `Display` is upstream's text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExpectedError {
    /// A pod's controller reference resolves to nothing.
    #[error("found no controllers for pod {}", go_quote(.0))]
    NoController(String),
    /// The controller's scale could not be read.
    #[error(transparent)]
    Scale(#[from] ScaleError),
    /// `minAvailable` / `maxUnavailable` is not an integer or a percentage.
    #[error("invalid value for IntOrString: {0}")]
    IntOrString(String),
}

/// The denominators of a budget.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    /// `status.expectedPods`.
    pub expected_pods: i32,
    /// `status.desiredHealthy`.
    pub desired_healthy: i32,
    /// Names of matching pods without a controller (excluded from the scale sum).
    pub unmanaged: Vec<String>,
}

/// `getExpectedPodCount` over the budget's matching `pods`.
pub fn expected_pod_count(
    pdb: &PodDisruptionBudget,
    pods: &[&Pod],
    scale_lookup: &impl Fn(&OwnerReference) -> Result<Option<ControllerScale>, ScaleError>,
) -> Result<Expected, ExpectedError> {
    let spec = pdb.spec.clone().unwrap_or_default();
    if let Some(max_unavailable) = spec.max_unavailable.as_ref() {
        let (expected_pods, unmanaged) = expected_scale(pods, scale_lookup)?;
        let max = scaled_value(max_unavailable, expected_pods)?;
        let desired = i64::from(expected_pods) - max;
        return Ok(Expected {
            expected_pods,
            desired_healthy: clamp_i32(desired.max(0)),
            unmanaged,
        });
    }
    match spec.min_available.as_ref() {
        Some(IntOrString::Int(n)) => Ok(Expected {
            expected_pods: clamp_i32(i64::try_from(pods.len()).unwrap_or(i64::MAX)),
            desired_healthy: *n,
            unmanaged: Vec::new(),
        }),
        Some(min @ IntOrString::String(_)) => {
            let (expected_pods, unmanaged) = expected_scale(pods, scale_lookup)?;
            Ok(Expected {
                expected_pods,
                desired_healthy: clamp_i32(scaled_value(min, expected_pods)?),
                unmanaged,
            })
        }
        None => Ok(Expected::default()),
    }
}

/// `getExpectedScale`: Σ replicas over the distinct controllers of `pods`;
/// pods without a controller are returned as unmanaged.
pub fn expected_scale(
    pods: &[&Pod],
    scale_lookup: &impl Fn(&OwnerReference) -> Result<Option<ControllerScale>, ScaleError>,
) -> Result<(i32, Vec<String>), ExpectedError> {
    let mut scales: BTreeMap<String, i32> = BTreeMap::new();
    let mut unmanaged = Vec::new();
    for pod in pods {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let Some(owner) = controller_of(&pod.metadata) else {
            unmanaged.push(name);
            continue;
        };
        if scales.contains_key(&owner.uid) {
            continue;
        }
        match scale_lookup(owner)? {
            Some(found) => {
                scales.insert(found.uid, found.replicas);
            }
            None => return Err(ExpectedError::NoController(name)),
        }
    }
    let total = scales.values().fold(0_i32, |acc, n| acc.saturating_add(*n));
    Ok((total, unmanaged))
}

/// `intstr.GetScaledValueFromIntOrPercent(v, total, roundUp=true)`.
pub fn scaled_value(value: &IntOrString, total: i32) -> Result<i64, ExpectedError> {
    match value {
        IntOrString::Int(n) => Ok(i64::from(*n)),
        IntOrString::String(s) => {
            let Some(number) = s.strip_suffix('%') else {
                return Err(ExpectedError::IntOrString(
                    "invalid type: string is not a percentage".to_owned(),
                ));
            };
            let pct = go_atoi(number).map_err(|e| {
                ExpectedError::IntOrString(format!("invalid value {}: {e}", go_quote(s)))
            })?;
            let scaled = (pct as f64 * f64::from(total) / 100.0).ceil() as i64;
            Ok(scaled)
        }
    }
}

/// `strconv.Atoi` for 64-bit ints, with its error texts.
fn go_atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", go_quote(s)))
}

fn clamp_i32(v: i64) -> i32 {
    i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_up() {
        let pct = |s: &str| IntOrString::String(s.to_owned());
        assert_eq!(scaled_value(&pct("30%"), 7), Ok(3));
        assert_eq!(scaled_value(&pct("30%"), 3), Ok(1));
        assert_eq!(scaled_value(&pct("34%"), 3), Ok(2));
        assert_eq!(scaled_value(&pct("0%"), 3), Ok(0));
        assert_eq!(scaled_value(&IntOrString::Int(2), 7), Ok(2));
        assert_eq!(
            scaled_value(&pct("30"), 7).map_err(|e| e.to_string()),
            Err(
                "invalid value for IntOrString: invalid type: string is not a percentage"
                    .to_owned()
            )
        );
        assert_eq!(
            scaled_value(&pct("x%"), 7).map_err(|e| e.to_string()),
            Err("invalid value for IntOrString: invalid value \"x%\": strconv.Atoi: parsing \"x\": invalid syntax".to_owned())
        );
    }
}
