//! (placeholder — filled in by the PodDisruptionBudget validation work)
