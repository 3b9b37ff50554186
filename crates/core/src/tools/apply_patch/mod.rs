//! `apply_patch`: several changes to several files, applied together or not at all.
//!
//! The patch is parsed and applied in memory by the planning core ([`crate::patch`]), under
//! the locks of the files it changes; the result commits through [`crate::commit`].

mod args;
mod diff;
mod output;
mod plan;

use crate::error::Result;
use crate::tools::contract::{Annotations, Call, Tool, Warning};

pub use args::ApplyPatchArgs;
pub use output::ApplyPatchOutput;

pub struct ApplyPatch;

impl Tool for ApplyPatch {
    const NAME: &'static str = "apply_patch";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
    };
    type Args = ApplyPatchArgs;
    type Output = ApplyPatchOutput;

    fn description() -> String {
        format!("Apply a patch: several changes to one or more files (update, add, delete, move), committed together: all files change or none do (at most {max} files per patch). Accepts a unified diff or the '*** Begin Patch' format; hunks are found by their context lines (at the stated line numbers first, then nearby, then ignoring whitespace), so copy 3 lines of context around each change exactly from the file, and add an '@@ <enclosing function or class line>' anchor when the context is not unique. A patch that does not apply returns applied: false with each rejected hunk and why, and writes nothing: read the file again and resend. Line endings, BOM and final newline are kept. For a single exact replacement edit_file is simpler; for a new or rewritten file use write_file. {}", crate::tools::fields::PATHS, max = plan::MAX_PATCH_FILES)
    }

    fn run(call: &mut Call<'_>, args: ApplyPatchArgs) -> Result<(ApplyPatchOutput, Vec<Warning>)> {
        let (out, messages) = plan::apply_patch(call, args)?;
        Ok((out, crate::tools::contract::warnings(messages)))
    }
}
