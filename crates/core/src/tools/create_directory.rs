//! `create_directory`: make a directory (and, by default, its missing parents), idempotently.
//!
//! An existing directory is success with `created: false`; anything else in the way is
//! `not_a_directory`. Parents are created by handle (`create_dirs`, which fsyncs each into its
//! parent) and removed again if the call fails or is stopped before the leaf's `mkdirat`, its
//! commit point; the leaf is fsynced into its parent after it.

use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::audit::Change;
use crate::render;
use crate::sandbox::fileops::sync_dir;
use crate::sandbox::gate::Access;
use crate::sandbox::resolve::Located;
use crate::sandbox::root::ToolPath;
use crate::tools::contract::{Annotations, Call, Tool, ToolOutput, Warning};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::io;

pub struct CreateDirectory;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateDirectoryArgs {
    /// Directory to create, e.g. 'src/utils'.
    pub path: String,
    /// Also create missing parent directories, like 'mkdir -p'. Default true; with false a missing parent is path_not_found.
    #[serde(default = "crate::tools::fields::yes")]
    pub parents: bool,
}

#[derive(Debug, Serialize)]
pub struct CreateDirectoryOutput {
    pub path: String,
    /// False when the directory already existed (nothing changed).
    pub created: bool,
    /// How many missing parent directories were created on the way.
    pub parents_created: u64,
}

impl Tool for CreateDirectory {
    const NAME: &'static str = "create_directory";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: true,
    };
    type Args = CreateDirectoryArgs;
    type Output = CreateDirectoryOutput;

    fn description() -> String {
        format!("Create a directory, and by default its missing parent directories. An existing directory is fine (nothing changes and created is false); a file in the way is not_a_directory. write_file creates parent directories by itself, so this is only needed for empty directories. {}", crate::tools::fields::PATHS)
    }

    fn run(
        call: &mut Call<'_>,
        args: CreateDirectoryArgs,
    ) -> Result<(CreateDirectoryOutput, Vec<Warning>)> {
        let path = call.path(&args.path)?;
        let (out, messages) = create_directory(call, &path, args.parents)?;
        Ok((out, crate::tools::contract::warnings(messages)))
    }
}

impl ToolOutput for CreateDirectoryOutput {
    fn text(&self) -> Cow<'_, str> {
        Cow::Owned(match (self.created, self.parents_created) {
            (false, 0) => format!(
                "{} already exists (a directory); nothing changed",
                self.path
            ),
            // `x/..` with `x` missing: the path needed `x` made to lead where it leads.
            (false, n) => format!(
                "{} already exists (a directory); created {} on the way to it",
                self.path,
                render::count(n, "directory", "directories")
            ),
            (true, 0) => format!("created directory {}", self.path),
            (true, n) => format!(
                "created directory {} (and {})",
                self.path,
                render::count(n, "parent directory", "parent directories")
            ),
        })
    }
}

pub fn create_directory(
    call: &mut Call<'_>,
    path: &ToolPath,
    parents: bool,
) -> Result<(CreateDirectoryOutput, Vec<String>)> {
    let ws = call.ws;
    let display = &path.display;
    let located = ws.resolve(path, Access::CREATE_DIR, parents, call.ctl)?;
    let created = match make_leaf(call, &located, display) {
        Ok(created) => created,
        Err(e) => {
            ws.undo_created(located);
            return Err(e);
        }
    };
    // Committed (or nothing to do). Durability failures are warnings from here on.
    let mut warnings = Vec::new();
    if created {
        if let Err(e) = sync_dir(&located.dir) {
            warnings.push(format!(
                "created, but syncing its parent directory failed: {e}"
            ));
        }
    }
    if call.audits() {
        for dir in &located.created {
            call.record_change(Change::dir(ws.shown_anchored(located.anchor, dir.rel())));
        }
        if created {
            let shown = ws.shown_resolved(&located.dir, located.leaf.as_deref(), display);
            call.record_change(Change::dir(shown));
        }
    }
    Ok((
        CreateDirectoryOutput {
            path: display.clone(),
            created,
            parents_created: located.created.len() as u64,
        },
        warnings,
    ))
}

/// Creates the leaf directory (the commit point); false when a directory is already there.
fn make_leaf(call: &Call<'_>, located: &Located<'_>, display: &str) -> Result<bool> {
    // `.`, `a/..`: the path names a directory that was just opened.
    let Some(leaf) = &located.leaf else {
        return Ok(false);
    };
    if let Some(meta) = &located.leaf_meta {
        return match meta.is_dir() {
            true => Ok(false),
            false => Err(in_the_way(display)),
        };
    }
    call.ctl.check()?;
    match call.ws.make_dir(&located.dir, leaf) {
        Ok(()) => Ok(true),
        // Made by someone else since resolution: fine if it is a directory (not followed).
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            match located.dir.symlink_metadata(leaf) {
                Ok(meta) if meta.is_dir() => Ok(false),
                _ => Err(in_the_way(display)),
            }
        }
        Err(e) => Err(WsfsError::from_io(&e, display)),
    }
}

fn in_the_way(display: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::NotADirectory,
        format!(
            "{display} exists and is not a directory (a file, or something else); choose another \
             name, or remove or rename what is there first"
        ),
    )
}
