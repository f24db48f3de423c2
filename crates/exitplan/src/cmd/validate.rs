//! `exitplan validate`: run an object through the API server's admission
//! (defaulting, strategy, validation) offline.
//!
//! Exit status: 0 valid, 1 invalid (one upstream-formatted field error per
//! line), 2 the input is not a supported Kubernetes object.

use std::path::PathBuf;
use std::process::ExitCode;

use jiff::Timestamp;

use crate::input::{InputError, read_one};
use crate::kinds::{self, Doc, Kind, Operation};
use crate::output::{self, Format};

/// Arguments of `exitplan validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The object to validate (YAML or JSON; `-` reads stdin).
    #[arg(short = 'f', long = "filename", value_name = "NEW.yaml")]
    file: PathBuf,
    /// The stored object this one replaces: validates an update instead of a create.
    #[arg(long, value_name = "OLD.yaml")]
    old: Option<PathBuf>,
    /// Validate a write to this subresource instead of the main resource.
    #[arg(long, value_parser = ["status"], requires = "old")]
    subresource: Option<String>,
    /// The server clock to validate against (RFC 3339); defaults to the current time.
    #[arg(long, value_name = "RFC3339")]
    now: Option<Timestamp>,
    /// Output format: text (default) prints `valid` or one error per line; json
    /// and yaml print what the API server would answer (the stored object, or
    /// the 422 Status).
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    output: Format,
}

/// Runs the command; `clock` is the process's one reading of the current time.
pub fn run(args: ValidateArgs, clock: Timestamp) -> Result<ExitCode, InputError> {
    let now = args.now.unwrap_or(clock);
    let (src, value) = read_one(&args.file)?;
    let kind = Kind::of(&src, &value)?;
    let old = match &args.old {
        None => None,
        Some(path) => {
            let (old_src, old_value) = read_one(path)?;
            let old_kind = Kind::of(&old_src, &old_value)?;
            if old_kind != kind {
                return Err(InputError::Mismatch(format!(
                    "--old {old_src} is kind {old_kind:?} but {src} is kind {kind:?}"
                )));
            }
            Some(Doc {
                src: old_src,
                value: old_value,
            })
        }
    };
    let op = match (&old, args.subresource.as_deref()) {
        (None, _) => Operation::Create,
        (Some(_), Some("status")) => Operation::UpdateStatus,
        (Some(_), _) => Operation::Update,
    };
    let admitted = kinds::admit(kind, op, Doc { src, value }, old, now)?;
    output::print_admission(&admitted, args.output);
    Ok(if admitted.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
