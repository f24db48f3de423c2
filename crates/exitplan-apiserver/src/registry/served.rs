//! What one server serves right now: the built-in resources and the custom
//! resources its established CRDs add. Each server has its own (tests run
//! several servers in one process); readers take a cheap snapshot.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use super::{RESOURCES, ResourceDef};

/// A snapshot of the served resources.
#[derive(Debug)]
pub struct Served {
    /// Every served resource: built-in ones first, then custom ones by CRD name.
    pub defs: Vec<&'static ResourceDef>,
    /// Bumped on every change (caches of derived documents key on it).
    pub generation: u64,
    custom: BTreeMap<String, Vec<&'static ResourceDef>>,
}

impl Served {
    /// The resource served at `/api[s]/<group>/<version>/<plural>`.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<&'static ResourceDef> {
        self.defs
            .iter()
            .copied()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
    }

    /// The custom resources of each CRD (by CRD name).
    pub fn custom(&self) -> &BTreeMap<String, Vec<&'static ResourceDef>> {
        &self.custom
    }

    /// Whether any custom resource is served.
    pub fn has_custom(&self) -> bool {
        !self.custom.is_empty()
    }
}

/// The served resources of one server.
#[derive(Debug)]
pub struct Registry {
    served: RwLock<Arc<Served>>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl Registry {
    /// The built-in resources only.
    pub fn new() -> Registry {
        Registry {
            served: RwLock::new(Arc::new(Served {
                defs: RESOURCES.iter().collect(),
                generation: 0,
                custom: BTreeMap::new(),
            })),
        }
    }

    /// The current snapshot.
    pub fn served(&self) -> Arc<Served> {
        self.served
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The resource served at `/api[s]/<group>/<version>/<plural>`.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<&'static ResourceDef> {
        self.served().find(group, version, plural)
    }

    /// Replaces the custom resources (by CRD name); returns whether anything
    /// changed.
    pub fn set_custom(&self, custom: BTreeMap<String, Vec<&'static ResourceDef>>) -> bool {
        let mut guard = self.served.write().unwrap_or_else(|p| p.into_inner());
        let same = guard.custom.len() == custom.len()
            && guard.custom.iter().zip(&custom).all(|((a, x), (b, y))| {
                a == b && x.len() == y.len() && x.iter().zip(y).all(|(p, q)| std::ptr::eq(*p, *q))
            });
        if same {
            return false;
        }
        let mut defs: Vec<&'static ResourceDef> = RESOURCES.iter().collect();
        defs.extend(custom.values().flatten().copied());
        *guard = Arc::new(Served {
            defs,
            generation: guard.generation + 1,
            custom,
        });
        true
    }
}
