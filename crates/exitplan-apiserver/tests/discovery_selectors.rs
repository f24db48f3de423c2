//! Selectors through the public API: parsed for a resource, matched against
//! the attributes the registry extracts from stored objects.

use exitplan_apiserver::discovery::{FieldSelector, LabelSelector};
use exitplan_apiserver::registry::find;
use serde_json::json;

#[test]
fn label_and_field_selectors_match_stored_pods() {
    let pods = find("", "v1", "pods").expect("pods");
    let pod = json!({
        "metadata": {"name": "web-0", "namespace": "shop", "labels": {"app": "web", "tier": "3"}},
        "spec": {"nodeName": "n1"},
        "status": {"phase": "Running"}
    });
    let attrs = pods.attrs(&pod);
    let labels = |s: &str| LabelSelector::parse(s).expect(s).matches(&attrs);
    assert!(labels("app=web,tier>2"));
    assert!(labels("app in (web,db),!canary"));
    assert!(!labels("tier<3"));
    assert!(!labels("app notin (web)"));
    let fields = |s: &str| FieldSelector::parse(s, pods).expect(s).matches(&attrs);
    assert!(fields("spec.nodeName=n1,status.phase!=Pending"));
    assert!(fields("spec.hostNetwork=false,metadata.namespace==shop"));
    assert!(fields("spec.host=n1"));
    assert!(!fields("metadata.name=web-1"));
    assert_eq!(
        FieldSelector::parse("spec.containers=a", pods).expect_err("unsupported"),
        "field label not supported: spec.containers"
    );
    assert_eq!(
        LabelSelector::parse("app=web,").expect_err("trailing comma"),
        "found '', expected: identifier after ','"
    );
}

#[test]
fn events_k8s_io_selects_stored_core_events() {
    let core = find("", "v1", "events").expect("core events");
    let events = find("events.k8s.io", "v1", "events").expect("events.k8s.io");
    assert_eq!(core.storage, events.storage);
    let written = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "web-0.1", "namespace": "shop"},
        "regarding": {"kind": "Pod", "name": "web-0", "namespace": "shop"},
        "reportingController": "acme.io/drain", "reportingInstance": "i", "reason": "Evicting",
        "action": "Evict", "type": "Normal", "note": "draining"
    });
    let stored = events.to_storage(&written).expect("converts");
    assert_eq!(stored["apiVersion"], "v1");
    assert_eq!(stored["message"], "draining");
    assert_eq!(events.from_storage(&stored), written);
    let attrs = events.attrs(&stored);
    let select = |def, s: &str| FieldSelector::parse(s, def).expect(s).matches(&attrs);
    assert!(select(
        events,
        "regarding.name=web-0,reportingController=acme.io/drain"
    ));
    assert!(select(
        core,
        "involvedObject.name=web-0,source=acme.io/drain,reason=Evicting"
    ));
    assert_eq!(
        FieldSelector::parse("involvedObject.name=x", events).expect_err("core name"),
        "field label not supported: involvedObject.name"
    );
}
