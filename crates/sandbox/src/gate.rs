//! The gate: what the host lets a call reach, asked by the resolver on the path it actually
//! reached. The sandbox resolves and the gate decides; the sandbox computes what the gate
//! needs (the resolved path, only when asked for), so the gate never calls resolution back.
//!
//! Every resolution takes a `&dyn Gate`, never an `Option`: there is no unchecked
//! resolution. What works beneath the root without resolving a tool path (recovery at open,
//! the sweep of temp files, the removal of directories a failed call made) opens nothing a
//! tool named.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::root::{DirRef, Root};
use std::cell::OnceCell;
use std::path::{Path, PathBuf};

/// What a tool does with the path it resolves. Every resolution names one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub reads: bool,
    pub writes: bool,
    /// What the path will name if it does not exist yet (gitignore's `dir/` rules match only
    /// directories). An existing leaf is matched as what it is.
    pub new_is_dir: bool,
}

impl Access {
    /// `read_file`, `list_dir`: reads only.
    pub const READ: Access = Access {
        reads: true,
        writes: false,
        new_is_dir: false,
    };
    /// `write_file`, `append_file`: changes a file without returning its content.
    pub const WRITE: Access = Access {
        reads: false,
        writes: true,
        new_is_dir: false,
    };
    /// `edit_file`: reads the file (its errors show what it contains) and changes it.
    pub const READ_WRITE: Access = Access {
        reads: true,
        writes: true,
        new_is_dir: false,
    };
    /// `create_directory`.
    pub const CREATE_DIR: Access = Access {
        reads: false,
        writes: true,
        new_is_dir: true,
    };
}

/// How one resolution is checked: what it is for, the gate that decides, the path as the
/// model wrote it (for messages) and the call's deadline.
#[derive(Clone, Copy)]
pub struct Checks<'a> {
    pub access: Access,
    pub gate: &'a dyn Gate,
    pub display: &'a str,
    pub ctl: &'a CallControl,
}

/// Why a walk leaves an entry out (see `walk::deny`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skipped {
    /// A `deny_read` rule matches (the rule is named): skip it, do not descend, count it.
    Denied(String),
    /// The audit log: skip it and do not count it, as if it were not there.
    Reserved,
    /// In unrestricted mode, a protected system location (`check_host_path` refuses it):
    /// skip it, do not descend, count it apart from `Denied`.
    Protected,
}

/// What a gate needs to filter walks (see `walk::deny`).
#[derive(Debug, Clone, Copy, Default)]
pub struct WalkNeeds {
    /// Entries are matched by their resolved path ([`Gate::walk_skip`]).
    pub paths: bool,
    /// A file (device, inode) that no walk shows, wherever it is (the audit log).
    pub hidden_file: Option<(u64, u64)>,
}

/// The host's say over what a call reaches. Implemented by the policy (`guard::policy`).
pub trait Gate {
    /// Whether a check of `access` looks at the resolved path at all: `false` when no rule can
    /// concern it, so failing resolutions need not work it out (see `resolve::or_unreached`).
    fn wants_path(&self, access: Access) -> bool;

    /// The check of every resolution, on the location it reached: a refusal is the error.
    fn check(
        &self,
        at: &Reached<'_>,
        access: Access,
        display: &str,
        ctl: &CallControl,
    ) -> Result<()>;

    /// Before `create_dirs` makes the directory `at` on the way to a path.
    fn check_new_dir(&self, at: &Reached<'_>, display: &str, ctl: &CallControl) -> Result<()>;

    /// What a walk must ask [`Gate::walk_skip`] about.
    fn walk_needs(&self) -> WalkNeeds;

    /// Whether the entry at the resolved, workspace-relative `rel` (a directory if `is_dir`;
    /// `file`: its device and inode when known) is left out of a walk. Only `rel` itself is
    /// matched: a walk never enters a directory this denied.
    fn walk_skip(&self, rel: &Path, is_dir: bool, file: Option<(u64, u64)>) -> Option<Skipped>;
}

/// A location a resolution reached, as the gate sees it: its resolved path is worked out
/// only if the gate asks for it ([`Reached::path`]), once.
pub struct Reached<'a> {
    at: At<'a>,
    /// What the location is (or will be, if it does not exist yet): a directory or not.
    pub is_dir: bool,
    /// The existing leaf's device and inode.
    pub file: Option<(u64, u64)>,
    path: OnceCell<(PathBuf, bool)>,
}

enum At<'a> {
    /// The open directory `dir` of `root`, and the names after it (a leaf, or directories
    /// still to create and the leaf).
    Below {
        root: &'a Root,
        dir: &'a DirRef<'a>,
        names: Option<&'a Path>,
    },
    /// A path worked out by the caller.
    Given,
}

impl<'a> Reached<'a> {
    /// `names` below the open directory `dir` of `root`.
    pub fn below(
        root: &'a Root,
        dir: &'a DirRef<'a>,
        names: Option<&'a Path>,
        is_dir: bool,
        file: Option<(u64, u64)>,
    ) -> Self {
        Reached {
            at: At::Below { root, dir, names },
            is_dir,
            file,
            path: OnceCell::new(),
        }
    }

    /// A resolved path the caller has (`inside`: below the root, else relative to `/`).
    pub fn given(rel: PathBuf, inside: bool, is_dir: bool) -> Self {
        Reached {
            at: At::Given,
            is_dir,
            file: None,
            path: OnceCell::from((rel, inside)),
        }
    }

    /// The resolved path, relative to the root when `inside` (else to `/`): what the kernel
    /// resolved, never what the model wrote.
    pub fn path(&self) -> Result<(&Path, bool)> {
        if let Some((rel, inside)) = self.path.get() {
            return Ok((rel, *inside));
        }
        let At::Below { root, dir, names } = &self.at else {
            return Err(WsfsError::new(ErrorCode::IoError, "no resolved path"));
        };
        let (mut rel, inside) = root.path_of(dir, None)?;
        if let Some(names) = names {
            rel.push(names);
        }
        let (rel, inside) = self.path.get_or_init(|| (rel, inside));
        Ok((rel, *inside))
    }

    /// The resolved path, if the gate asked for it.
    pub fn into_path(self) -> Option<PathBuf> {
        self.path.into_inner().map(|(rel, _)| rel)
    }
}
