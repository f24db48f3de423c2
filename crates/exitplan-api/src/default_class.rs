//! The choice the `DefaultStorageClass` and `DefaultIngressClass` admission
//! plugins make (`GetDefaultClass`): among the classes annotated as the
//! default, the newest (by `creationTimestamp`), ties broken by the smaller
//! name. The per-kind callers are
//! [`crate::storage::storage_class::set_default_storage_class`] and
//! [`crate::networking::ingress_class::set_default_ingress_class`].

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Whether `meta` carries one of `annotations` with the value `"true"`.
pub fn is_marked_default(meta: &ObjectMeta, annotations: &[&str]) -> bool {
    meta.annotations.as_ref().is_some_and(|a| {
        annotations
            .iter()
            .any(|k| a.get(*k).map(String::as_str) == Some("true"))
    })
}

/// The default among `classes`: marked by one of `annotations`, newest
/// first, then by name.
pub fn newest_default<'a, T>(classes: &'a [T], annotations: &[&str]) -> Option<&'a T>
where
    T: k8s_openapi::Metadata<Ty = ObjectMeta>,
{
    classes
        .iter()
        .filter(|c| is_marked_default(c.metadata(), annotations))
        .min_by(|a, b| {
            let key = |c: &T| {
                let m = c.metadata();
                (
                    m.creation_timestamp.as_ref().map(|t| t.0),
                    m.name.clone().unwrap_or_default(),
                )
            };
            let (ta, na) = key(a);
            let (tb, nb) = key(b);
            tb.cmp(&ta).then(na.cmp(&nb))
        })
}
