//! policy/v1: PodDisruptionBudget validation and the pod eviction subresource
//! decision (job-failure spec §12).
