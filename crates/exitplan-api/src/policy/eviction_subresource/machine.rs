//! The eviction handler as a pure state machine (job-failure spec §12).
//!
//! Upstream's handler reads and writes storage several times: GET the pod,
//! update the PDB status (retrying conflicts), update the pod status, DELETE
//! the pod. Here every such call is an [`Action`] the API server performs;
//! it feeds the [`Outcome`] back through [`Pending::resume`] and gets the
//! next [`Step`], until a [`Step::Done`] carries the HTTP answer.
//!
//! ```text
//! begin ─► admit (400 / 422 / 500) ─► pod? (404)
//!   ├─ terminal / Pending / deleting ──► add condition + delete   (retry 409 ×20 unless caller RV)
//!   └─ otherwise ─► covering PDBs: >1 → 500 · 0 → delete
//!        ├─ unready & (AlwaysAllow | current ≥ desired > 0) → delete with RV pinned (409 → 429)
//!        └─ checkAndDecrement (429/403) ─► UpdatePdbStatus (retry 409 ×20) ─► delete
//! delete = [UpdatePodStatus DisruptionTarget (not on dry-run)] ─► DeletePod ─► 201
//! ```

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{DeleteOptions, Status};

use super::answer::{self, Answer};
use super::budget;
use super::options::{self, EvictionRequest};
use super::pod_update;
use crate::core::constants::{PHASE_FAILED, PHASE_PENDING, PHASE_SUCCEEDED};
use crate::core::podutil::{is_terminal, phase};

/// Attempts of each conflict-retry loop (`EvictionsRetry.Steps`).
pub const RETRY_STEPS: u32 = 20;
/// Pause before a retry (`EvictionsRetry.Duration`; upstream adds up to 10 % jitter).
pub const RETRY_DELAY: SignedDuration = SignedDuration::from_millis(500);

/// A storage call the API server performs for the eviction.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Read the pod (answer [`Outcome::Pod`]).
    GetPod {
        /// Namespace.
        namespace: String,
        /// Pod name.
        name: String,
    },
    /// Read a PodDisruptionBudget (answer [`Outcome::Pdb`]).
    GetPdb {
        /// Namespace.
        namespace: String,
        /// PDB name.
        name: String,
    },
    /// Write the PDB's status if it is still at `expected_resource_version`
    /// (answer [`Outcome::Pdb`] with the stored object, or [`Outcome::Conflict`]).
    UpdatePdbStatus {
        /// The PDB with its new status.
        pdb: Box<PodDisruptionBudget>,
        /// resourceVersion the write is conditional on.
        expected_resource_version: String,
    },
    /// Write the pod's status (through the status strategy) if the pod is
    /// still at `expected_resource_version` (answer [`Outcome::Pod`] with the
    /// stored pod, or [`Outcome::Conflict`] when it moved on).
    UpdatePodStatus {
        /// The pod with the `DisruptionTarget` condition added.
        pod: Box<Pod>,
        /// resourceVersion the write is conditional on.
        expected_resource_version: String,
    },
    /// DELETE the pod with these options — preconditions, grace period and
    /// dry-run are the store's to honour (answer [`Outcome::Deleted`]).
    DeletePod {
        /// Namespace.
        namespace: String,
        /// Pod name.
        name: String,
        /// Delete options, possibly with a server-added resourceVersion precondition.
        options: DeleteOptions,
    },
}

/// The result of an [`Action`].
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The pod read or written.
    Pod(Box<Pod>),
    /// The PDB read or written.
    Pdb(Box<PodDisruptionBudget>),
    /// The pod was deleted (or marked for graceful deletion).
    Deleted,
    /// 409: a resourceVersion/UID check failed; the store's `Status`.
    Conflict(Status),
    /// 404: the object does not exist; the store's `Status`.
    NotFound(Status),
    /// Any other error; its `Status` is answered unchanged.
    Failed(Status),
}

/// What the API server does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Answer the request.
    Done(Answer),
    /// Perform an action, then [`Pending::resume`] with its outcome.
    Perform(Box<Pending>),
}

/// An action waiting for its outcome, with the state to continue from.
#[derive(Clone, Debug, PartialEq)]
pub struct Pending {
    action: Action,
    delay: Option<SignedDuration>,
    machine: Machine,
}

impl Pending {
    /// The storage call to perform.
    pub fn action(&self) -> &Action {
        &self.action
    }

    /// How long to wait before performing it (a conflict-retry back-off), if at all.
    pub fn delay(&self) -> Option<SignedDuration> {
        self.delay
    }

    /// Continues with the action's outcome; `now` stamps anything written next.
    pub fn resume(self: Box<Self>, outcome: Outcome, now: Timestamp) -> Step {
        let Pending {
            action, machine, ..
        } = *self;
        machine.resume(&action, outcome, now)
    }
}

/// Starts an eviction: `pod` is the pod named in the URL as read from
/// storage (`None`: not found), `pdbs` the PodDisruptionBudgets of its
/// namespace.
pub fn begin(
    request: &EvictionRequest,
    pod: Option<&Pod>,
    pdbs: &[PodDisruptionBudget],
    now: Timestamp,
) -> Step {
    let original = match options::admit(request) {
        Ok(o) => o,
        Err(a) => return Step::Done(a),
    };
    let Some(pod) = pod else {
        return Step::Done(answer::not_found("", "pods", &request.url_name));
    };
    let ctx = Ctx {
        namespace: request.namespace.clone(),
        name: request.url_name.clone(),
        dry_run: options::is_dry_run(&original),
        retry_conflicts: options::resource_version_unset(&original),
        original,
        pdbs: pdbs.to_vec(),
    };
    ctx.bypass_attempt(pod, 1, now)
}

/// What stays fixed for the whole request.
#[derive(Clone, Debug, PartialEq)]
struct Ctx {
    namespace: String,
    name: String,
    /// Delete options after the dry-run merge (`originalDeleteOptions`).
    original: DeleteOptions,
    dry_run: bool,
    /// Conflicts are retried unless the caller set a resourceVersion precondition.
    retry_conflicts: bool,
    pdbs: Vec<PodDisruptionBudget>,
}

/// Where in the handler the pending action was issued.
#[derive(Clone, Debug, PartialEq)]
enum Phase {
    /// Bypass loop: re-reading the pod for attempt `attempt`.
    BypassGetPod { attempt: u32 },
    /// Bypass loop: deleting a pod whose PDBs are ignored.
    BypassDelete { attempt: u32, delete: Delete },
    /// checkAndDecrement: re-reading the PDB for attempt `attempt`.
    PdbGet { attempt: u32, pod: Pod, pdb: String },
    /// checkAndDecrement: writing the spent budget.
    PdbWrite { attempt: u32, pod: Pod, pdb: String },
    /// The final delete of the PDB path.
    FinalDelete {
        delete: Delete,
        pdb: String,
        pinned_rv: bool,
    },
}

/// `addConditionAndDeletePod` in progress.
#[derive(Clone, Debug, PartialEq)]
struct Delete {
    options: DeleteOptions,
    stage: DeleteStage,
}

#[derive(Clone, Debug, PartialEq)]
enum DeleteStage {
    /// Reading the latest pod for the status update.
    LatestPod,
    /// Writing the DisruptionTarget condition.
    StatusWrite,
    /// Deleting.
    Deleting,
}

/// A failed storage call or check, with whether it was a conflict.
#[derive(Clone, Debug, PartialEq)]
struct Failure {
    conflict: bool,
    answer: Answer,
}

/// The delete sub-machine's step.
enum DeleteStep {
    Perform(Box<Action>, Delete),
    Done(Result<(), Failure>),
}

#[derive(Clone, Debug, PartialEq)]
struct Machine {
    ctx: Ctx,
    phase: Phase,
}

impl Machine {
    fn resume(self, action: &Action, outcome: Outcome, now: Timestamp) -> Step {
        let Machine { ctx, phase } = self;
        match phase {
            Phase::BypassGetPod { attempt } => match outcome {
                Outcome::Pod(pod) => ctx.bypass_attempt(&pod, attempt, now),
                other => match failure(action, other) {
                    f if f.conflict && ctx.retry_conflicts && attempt < RETRY_STEPS => {
                        ctx.reread_pod(attempt + 1)
                    }
                    f => Step::Done(f.answer),
                },
            },
            Phase::BypassDelete { attempt, delete } => {
                let next = ctx.delete_resume(delete, action, outcome, now);
                ctx.after_bypass_delete(next, attempt)
            }
            Phase::PdbGet { attempt, pod, pdb } => match outcome {
                Outcome::Pdb(fresh) => ctx.check_attempt(pod, &fresh, attempt, now),
                other => ctx.pdb_retry_or_fail(failure(action, other), attempt, pod, pdb),
            },
            Phase::PdbWrite { attempt, pod, pdb } => match outcome {
                Outcome::Pdb(_) => ctx.final_delete(&pod, pdb, false, now),
                other => ctx.pdb_retry_or_fail(failure(action, other), attempt, pod, pdb),
            },
            Phase::FinalDelete {
                delete,
                pdb,
                pinned_rv,
            } => {
                let next = ctx.delete_resume(delete, action, outcome, now);
                ctx.after_final_delete(next, pdb, pinned_rv)
            }
        }
    }
}

impl Ctx {
    fn perform(&self, action: Action, delay: Option<SignedDuration>, phase: Phase) -> Step {
        Step::Perform(Box::new(Pending {
            action,
            delay,
            machine: Machine {
                ctx: self.clone(),
                phase,
            },
        }))
    }

    fn get_pod(&self) -> Action {
        Action::GetPod {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }

    fn reread_pod(&self, attempt: u32) -> Step {
        self.perform(
            self.get_pod(),
            Some(RETRY_DELAY),
            Phase::BypassGetPod { attempt },
        )
    }

    /// One attempt of the bypass loop (step 5) with the pod just read.
    fn bypass_attempt(&self, pod: &Pod, attempt: u32, now: Timestamp) -> Step {
        if !can_ignore_pdb(pod) {
            return self.pdb_path(pod, now);
        }
        let mut options = self.original.clone();
        if should_enforce_resource_version(pod) && self.retry_conflicts {
            options = options::with_resource_version(&options, resource_version(pod));
        }
        let next = self.delete_start(pod, options, now);
        self.after_bypass_delete(next, attempt)
    }

    fn after_bypass_delete(&self, next: DeleteStep, attempt: u32) -> Step {
        match next {
            DeleteStep::Perform(action, delete) => {
                self.perform(*action, None, Phase::BypassDelete { attempt, delete })
            }
            DeleteStep::Done(Ok(())) => Step::Done(answer::success()),
            DeleteStep::Done(Err(f))
                if f.conflict && self.retry_conflicts && attempt < RETRY_STEPS =>
            {
                self.reread_pod(attempt + 1)
            }
            DeleteStep::Done(Err(f)) => Step::Done(f.answer),
        }
    }

    /// Step 6: the budgets covering a pod that cannot skip them.
    fn pdb_path(&self, pod: &Pod, now: Timestamp) -> Step {
        let covering = budget::covering(pod, &self.pdbs);
        let pdb = match covering.as_slice() {
            [] => return self.final_delete(pod, String::new(), false, now),
            [pdb] => *pdb,
            _ => return Step::Done(answer::multiple_pdbs()),
        };
        let name = pdb.metadata.name.clone().unwrap_or_default();
        if budget::unhealthy_pod_skips_budget(pod, pdb) {
            return self.final_delete(pod, name, true, now);
        }
        self.check_attempt(pod.clone(), pdb, 1, now)
    }

    /// One attempt of checkAndDecrement (step 7).
    fn check_attempt(
        &self,
        pod: Pod,
        pdb: &PodDisruptionBudget,
        attempt: u32,
        now: Timestamp,
    ) -> Step {
        let name = pdb.metadata.name.clone().unwrap_or_default();
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        match budget::check_and_decrement(pdb, &pod_name, self.dry_run, now) {
            Err(refusal) => Step::Done(refusal),
            Ok(None) => self.final_delete(&pod, name, false, now),
            Ok(Some(updated)) => {
                let expected_resource_version =
                    pdb.metadata.resource_version.clone().unwrap_or_default();
                self.perform(
                    Action::UpdatePdbStatus {
                        pdb: Box::new(updated),
                        expected_resource_version,
                    },
                    None,
                    Phase::PdbWrite {
                        attempt,
                        pod,
                        pdb: name,
                    },
                )
            }
        }
    }

    /// `retry.RetryOnConflict` around checkAndDecrement: a conflict re-reads
    /// the PDB, up to [`RETRY_STEPS`] attempts; the last conflict is answered.
    fn pdb_retry_or_fail(&self, f: Failure, attempt: u32, pod: Pod, pdb: String) -> Step {
        if f.conflict && attempt < RETRY_STEPS {
            let action = Action::GetPdb {
                namespace: self.namespace.clone(),
                name: pdb.clone(),
            };
            return self.perform(
                action,
                Some(RETRY_DELAY),
                Phase::PdbGet {
                    attempt: attempt + 1,
                    pod,
                    pdb,
                },
            );
        }
        Step::Done(f.answer)
    }

    /// Step 8 on the PDB path; `pin_rv` adds the pod's resourceVersion as
    /// precondition (unhealthy-pod shortcut), which turns a conflict into the
    /// retryable 429 of step 9.
    fn final_delete(&self, pod: &Pod, pdb: String, pin_rv: bool, now: Timestamp) -> Step {
        let options = if pin_rv {
            options::with_resource_version(&self.original, resource_version(pod))
        } else {
            self.original.clone()
        };
        let next = self.delete_start(pod, options, now);
        self.after_final_delete(next, pdb, pin_rv)
    }

    fn after_final_delete(&self, next: DeleteStep, pdb: String, pinned_rv: bool) -> Step {
        match next {
            DeleteStep::Perform(action, delete) => self.perform(
                *action,
                None,
                Phase::FinalDelete {
                    delete,
                    pdb,
                    pinned_rv,
                },
            ),
            DeleteStep::Done(Ok(())) => Step::Done(answer::success()),
            DeleteStep::Done(Err(f)) if f.conflict && pinned_rv && self.retry_conflicts => {
                Step::Done(answer::still_processing(&pdb))
            }
            DeleteStep::Done(Err(f)) => Step::Done(f.answer),
        }
    }

    /// `addConditionAndDeletePod`, starting from `pod` (the latest copy we hold).
    fn delete_start(&self, pod: &Pod, options: DeleteOptions, now: Timestamp) -> DeleteStep {
        if options::is_dry_run(&options) {
            return self.delete_pod(options);
        }
        self.status_write(pod, options, false, now)
    }

    fn delete_pod(&self, options: DeleteOptions) -> DeleteStep {
        let action = Action::DeletePod {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            options: options.clone(),
        };
        DeleteStep::Perform(
            Box::new(action),
            Delete {
                options,
                stage: DeleteStage::Deleting,
            },
        )
    }

    /// The guaranteed status update: preconditions are enforced on the latest
    /// pod (a copy that was not read for this update is re-read once before a
    /// precondition failure counts), then the condition is written.
    fn status_write(
        &self,
        latest: &Pod,
        options: DeleteOptions,
        fresh: bool,
        now: Timestamp,
    ) -> DeleteStep {
        if let Err(answer) = pod_update::check_preconditions(latest, &options) {
            if fresh {
                return DeleteStep::Done(Err(Failure {
                    conflict: true,
                    answer,
                }));
            }
            return self.latest_pod(options);
        }
        match pod_update::with_disruption_target(latest, now) {
            // Nothing to write: storage keeps the object and its resourceVersion.
            None => self.delete_pod(bump_resource_version(options, latest)),
            Some(pod) => DeleteStep::Perform(
                Box::new(Action::UpdatePodStatus {
                    pod: Box::new(pod),
                    expected_resource_version: resource_version(latest).to_owned(),
                }),
                Delete {
                    options,
                    stage: DeleteStage::StatusWrite,
                },
            ),
        }
    }

    fn latest_pod(&self, options: DeleteOptions) -> DeleteStep {
        DeleteStep::Perform(
            Box::new(self.get_pod()),
            Delete {
                options,
                stage: DeleteStage::LatestPod,
            },
        )
    }

    fn delete_resume(
        &self,
        delete: Delete,
        action: &Action,
        outcome: Outcome,
        now: Timestamp,
    ) -> DeleteStep {
        let Delete { options, stage } = delete;
        match (stage, outcome) {
            (DeleteStage::LatestPod, Outcome::Pod(latest)) => {
                self.status_write(&latest, options, true, now)
            }
            (DeleteStage::StatusWrite, Outcome::Pod(written)) => {
                self.delete_pod(bump_resource_version(options, &written))
            }
            // The pod moved on under the write: read it again and retry.
            (DeleteStage::StatusWrite, Outcome::Conflict(_)) => self.latest_pod(options),
            (DeleteStage::Deleting, Outcome::Deleted) => DeleteStep::Done(Ok(())),
            (_, other) => DeleteStep::Done(Err(failure(action, other))),
        }
    }
}

/// With a resourceVersion precondition in force, require the version the
/// condition write produced instead (we modified the pod ourselves).
fn bump_resource_version(options: DeleteOptions, written: &Pod) -> DeleteOptions {
    if options::resource_version_unset(&options) {
        return options;
    }
    options::with_resource_version(&options, resource_version(written))
}

/// An outcome that is not the expected success, as a failure.
fn failure(action: &Action, outcome: Outcome) -> Failure {
    match outcome {
        Outcome::Conflict(status) => Failure {
            conflict: true,
            answer: Answer::from_status(status),
        },
        Outcome::NotFound(status) | Outcome::Failed(status) => {
            let answer = Answer::from_status(status);
            Failure {
                conflict: answer.is_conflict(),
                answer,
            }
        }
        unexpected => Failure {
            conflict: false,
            answer: answer::internal_error(&format!(
                "unexpected outcome {} for {}",
                outcome_name(&unexpected),
                action_name(action)
            )),
        },
    }
}

fn outcome_name(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Pod(_) => "Pod",
        Outcome::Pdb(_) => "Pdb",
        Outcome::Deleted => "Deleted",
        Outcome::Conflict(_) => "Conflict",
        Outcome::NotFound(_) => "NotFound",
        Outcome::Failed(_) => "Failed",
    }
}

fn action_name(action: &Action) -> &'static str {
    match action {
        Action::GetPod { .. } => "GetPod",
        Action::GetPdb { .. } => "GetPdb",
        Action::UpdatePdbStatus { .. } => "UpdatePdbStatus",
        Action::UpdatePodStatus { .. } => "UpdatePodStatus",
        Action::DeletePod { .. } => "DeletePod",
    }
}

fn resource_version(pod: &Pod) -> &str {
    pod.metadata.resource_version.as_deref().unwrap_or_default()
}

/// `canIgnorePDB`: Succeeded, Failed, Pending or already deleting.
pub fn can_ignore_pdb(pod: &Pod) -> bool {
    matches!(phase(pod), PHASE_SUCCEEDED | PHASE_FAILED | PHASE_PENDING)
        || pod.metadata.deletion_timestamp.is_some()
}

/// `shouldEnforceResourceVersion`: not terminal and not deleting.
pub fn should_enforce_resource_version(pod: &Pod) -> bool {
    !is_terminal(pod) && pod.metadata.deletion_timestamp.is_none()
}
