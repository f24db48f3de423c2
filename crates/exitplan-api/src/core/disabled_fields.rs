//! Fields of feature gates that are off by default in the Kubernetes release
//! exitplan follows (1.35), dropped from a Pod's spec on write as upstream's
//! `DropDisabledPodFields` does: a new object loses them, an update keeps
//! them only when the stored object already used them.

use k8s_openapi::api::core::v1::{Lifecycle, PodSpec};

/// Drops `lifecycle.stopSignal` (gate `ContainerStopSignals`, alpha and off)
/// from every container of `spec` unless `old` (the stored spec, on update)
/// already sets one. A lifecycle left empty is removed.
pub fn drop_disabled_pod_spec_fields(spec: &mut PodSpec, old: Option<&PodSpec>) {
    if old.is_some_and(stop_signals_in_use) {
        return;
    }
    let lifecycles = spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
        .map(|c| &mut c.lifecycle)
        .chain(
            spec.ephemeral_containers
                .iter_mut()
                .flatten()
                .map(|c| &mut c.lifecycle),
        );
    for lifecycle in lifecycles {
        if let Some(l) = lifecycle
            && l.stop_signal.take().is_some()
            && *l == Lifecycle::default()
        {
            *lifecycle = None;
        }
    }
}

/// Whether any container of `spec` sets `lifecycle.stopSignal`.
fn stop_signals_in_use(spec: &PodSpec) -> bool {
    let has = |l: &Option<Lifecycle>| l.as_ref().is_some_and(|l| l.stop_signal.is_some());
    spec.containers.iter().any(|c| has(&c.lifecycle))
        || spec
            .init_containers
            .iter()
            .flatten()
            .any(|c| has(&c.lifecycle))
        || spec
            .ephemeral_containers
            .iter()
            .flatten()
            .any(|c| has(&c.lifecycle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, LifecycleHandler, SleepAction};

    fn container(stop: Option<&str>, pre_stop: bool) -> Container {
        Container {
            name: "c".into(),
            lifecycle: Some(Lifecycle {
                stop_signal: stop.map(str::to_owned),
                pre_stop: pre_stop.then(|| LifecycleHandler {
                    sleep: Some(SleepAction { seconds: 1 }),
                    ..LifecycleHandler::default()
                }),
                ..Lifecycle::default()
            }),
            ..Container::default()
        }
    }

    fn spec(containers: Vec<Container>) -> PodSpec {
        PodSpec {
            init_containers: Some(containers.clone()),
            containers,
            ..PodSpec::default()
        }
    }

    /// Upstream's TestDropContainerStopSignals, in substance: dropped on
    /// create and on an update of a spec that did not use it, kept when the
    /// stored spec did; a lifecycle emptied by the drop goes with it.
    #[test]
    fn stop_signals_are_dropped_unless_already_in_use() {
        let with_signal = spec(vec![container(Some("SIGUSR1"), false)]);
        let with_both = spec(vec![container(Some("SIGUSR1"), true)]);
        let without = spec(vec![container(None, true)]);
        let cases: [(&str, &PodSpec, Option<&PodSpec>, PodSpec); 5] = [
            (
                "create, only a stop signal",
                &with_signal,
                None,
                spec(vec![Container {
                    name: "c".into(),
                    ..Container::default()
                }]),
            ),
            ("create, with preStop", &with_both, None, without.clone()),
            (
                "update of a spec without",
                &with_both,
                Some(&without),
                without.clone(),
            ),
            (
                "update of a spec with",
                &with_both,
                Some(&with_signal),
                with_both.clone(),
            ),
            ("create, nothing to drop", &without, None, without.clone()),
        ];
        for (name, new, old, want) in cases {
            let mut got = new.clone();
            drop_disabled_pod_spec_fields(&mut got, old);
            assert_eq!(got, want, "{name}");
        }
    }
}
