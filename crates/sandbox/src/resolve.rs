//! Resolution of a tool path to a directory handle plus one leaf name.
//!
//! Confinement is the kernel's job: a confined path is only ever opened beneath the workspace's
//! directory handle (cap-std uses `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`), and the
//! final step of every tool works on a single name inside an already-open directory, with
//! `O_NOFOLLOW`. A symlink in the leaf position is read and its target resolved again the same
//! way, so links are followed only while they stay beneath the root, and nothing is ever
//! checked first and opened by path afterwards.

use crate::control::CallControl;
use crate::create_dirs::CreatedDirs;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::fileops::require_regular;
use crate::gate::{Access, Checks, Gate, Reached};
use crate::names::display_path;
use crate::proc::real_path;
use crate::root::{Anchor, DirRef, Root, ToolPath};
use crate::tempfile::is_temp_name;
use crate::walk::deny::StartPaths;
use cap_std::ambient_authority;
use cap_std::fs::{Dir, Metadata, MetadataExt};
use std::borrow::Cow;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Symlinks followed in the leaf position before giving up (Linux's own limit).
const MAX_SYMLINK_HOPS: usize = 40;

/// A resolved path: an open directory and the name inside it (`None` for the directory itself).
#[derive(Debug)]
pub struct Located<'a> {
    pub dir: DirRef<'a>,
    pub leaf: Option<OsString>,
    /// The directory, relative to the anchor (kept to resolve relative symlink targets).
    parent_rel: PathBuf,
    pub anchor: Anchor,
    /// Directories this resolution created, outermost first.
    pub created: CreatedDirs,
    /// The leaf's own metadata (`lstat`) when it existed at resolution time, so special files
    /// are refused without ever being opened.
    pub leaf_meta: Option<Metadata>,
    /// Whether the path's last name was a symlink (followed to reach `dir` and `leaf`).
    pub via_symlink: bool,
    /// The resolved workspace-relative path of the leaf (or directory), when the policy check
    /// needed it; kept so the tool need not ask the kernel again.
    pub resolved_rel: Option<PathBuf>,
    /// The absolute real path of the leaf (or directory) where the protected locations were
    /// checked on it (unrestricted mode, or a restricted root that contains them).
    host_path: Option<PathBuf>,
}

impl Located<'_> {
    /// What a walk starting at the leaf (or directory) needs of its paths, as far as known.
    pub fn start_paths(&self) -> StartPaths {
        StartPaths {
            rel: self.resolved_rel.clone(),
            host: self.host_path.clone(),
        }
    }

    /// The directory, relative to the anchor (the workspace root, or `/`), after symlinks in
    /// the leaf position were followed: resolving it again beneath the anchor reaches `dir`.
    pub fn dir_rel(&self) -> &Path {
        &self.parent_rel
    }

    /// The leaf name, or `not_a_file` when the path names a directory such as `.` or `a/..`.
    pub fn leaf_name(&self, display: &str) -> Result<&OsString> {
        self.leaf.as_ref().ok_or_else(|| {
            WsfsError::new(
                ErrorCode::NotAFile,
                format!("{display} is a directory, not a file; use list_dir"),
            )
        })
    }

    /// The leaf name of an existing regular file (or a missing leaf, when `allow_missing`):
    /// directories and special files are refused here, before anything opens them.
    pub fn file_leaf(&self, display: &str, allow_missing: bool) -> Result<&OsString> {
        let leaf = self.leaf_name(display)?;
        match &self.leaf_meta {
            Some(meta) => require_regular(meta, display)?,
            None if allow_missing => {}
            None => {
                return Err(WsfsError::new(
                    ErrorCode::PathNotFound,
                    format!("{display} does not exist; use list_dir to see what exists"),
                ))
            }
        }
        Ok(leaf)
    }
}

impl Root {
    /// Resolves `path` to its directory and leaf, following a symlinked leaf while it stays
    /// allowed. The leaf need not exist. With `create_parents`, missing directories are made;
    /// if resolution then fails, they are removed again. The workspace policy is checked on
    /// the resolved path for `access` (see `policy`): a denied path is `policy_denied`.
    pub fn resolve(
        &self,
        path: &ToolPath,
        access: Access,
        create_parents: bool,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Result<Located<'_>> {
        let mut created = CreatedDirs::default();
        let checks = Checks {
            access,
            gate,
            display: &path.display,
            ctl,
        };
        let resolved = self
            .follow_leaf_links(path, create_parents, checks, &mut created)
            .and_then(|mut located| {
                located.resolved_rel = self.check(&located, checks)?;
                Ok(located)
            });
        match resolved {
            Ok(mut located) => {
                located.created = created;
                Ok(located)
            }
            Err(e) => {
                self.remove_created(path.anchor, &created);
                Err(e)
            }
        }
    }

    fn follow_leaf_links(
        &self,
        path: &ToolPath,
        create_parents: bool,
        checks: Checks<'_>,
        created: &mut CreatedDirs,
    ) -> Result<Located<'_>> {
        let ctl = checks.ctl;
        let io_err = |e: io::Error| WsfsError::from_io(&e, &path.display);
        let mut rel = path.rel.clone();
        for hop in 0..MAX_SYMLINK_HOPS {
            ctl.check()?;
            // Before anything is opened or created: the name, or a symlink's target, is one
            // of wsfs's own temp names.
            if let Some(Component::Normal(name)) = rel.components().next_back() {
                refuse_temp_name(name, &path.display)?;
            }
            let create = create_parents.then_some(&mut *created);
            let located = self.locate(path.anchor, &rel, create, checks);
            let mut located = self.or_unreached(located, path.anchor, &rel, checks)?;
            located.via_symlink = hop > 0;
            let Some(leaf) = &located.leaf else {
                return Ok(located);
            };
            match located.dir.symlink_metadata(leaf) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    let target = match located.dir.read_link_contents(leaf) {
                        Ok(target) => target,
                        // EINVAL: no longer a symlink (swapped since the lstat): look again,
                        // as one more hop, rather than fail a racing call with `io_error`.
                        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => continue,
                        Err(e) => return Err(io_err(e)),
                    };
                    rel = self.symlink_target(&located, &target, &path.display)?;
                }
                Ok(meta) => {
                    located.leaf_meta = Some(meta);
                    return Ok(located);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(located),
                Err(e) => return Err(io_err(e)),
            }
        }
        Err(WsfsError::new(
            ErrorCode::InvalidPath,
            format!("{}: too many levels of symbolic links", path.display),
        ))
    }

    /// Opens the directory part of `rel` and splits off the leaf. Missing directories are
    /// created (and recorded) only when `created` is given.
    fn locate(
        &self,
        anchor: Anchor,
        rel: &Path,
        created: Option<&mut CreatedDirs>,
        checks: Checks<'_>,
    ) -> Result<Located<'_>> {
        let Checks {
            access,
            gate,
            display,
            ctl,
        } = checks;
        let (parent_rel, leaf) = split_leaf(rel);
        let io_err = |e: io::Error| WsfsError::from_io(&e, display);
        let symlink_free = match anchor {
            Anchor::Root => self.open_symlink_free(&parent_rel),
            Anchor::Host => None,
        };
        let opened = symlink_free.map_or_else(|| self.open_anchored_dir(anchor, &parent_rel), Ok);
        let dir = match (opened, created) {
            (Err(e), Some(created)) if e.kind() == io::ErrorKind::NotFound => {
                // New directories cannot be symlinks, so the path they lead to is known (unless
                // '..' follows): refuse a denied one before creating anything.
                let guard = |existing: &DirRef<'_>, rest: &Path| {
                    let mut target = rest.to_path_buf();
                    target.extend(&leaf);
                    if target.components().any(|c| c == Component::ParentDir) {
                        return Ok(());
                    }
                    let at = Reached::below(self, existing, Some(&target), access.new_is_dir, None);
                    gate.check(&at, access, display, ctl)
                };
                self.create_dirs(anchor, &parent_rel, checks, created, &guard)?
            }
            (opened, _) => opened.map_err(io_err)?,
        };
        let host_path = match anchor {
            Anchor::Host => {
                let real = real_path(&*dir).map_err(io_err)?;
                let full = match &leaf {
                    Some(name) => real.join(name),
                    None => real,
                };
                self.check_host_path(&full, display)?;
                Some(full)
            }
            // A restricted root that contains protected locations (`/`): refused as in
            // unrestricted mode, on the path the kernel resolved.
            Anchor::Root if self.protects => {
                let (rel, inside) = self.path_of(&dir, leaf.as_deref())?;
                let full = match inside {
                    true => self.path.join(rel),
                    false => Path::new("/").join(rel),
                };
                self.check_host_path(&full, display)?;
                Some(full)
            }
            Anchor::Root => None,
        };
        Ok(Located {
            dir,
            leaf,
            parent_rel,
            anchor,
            created: CreatedDirs::default(),
            leaf_meta: None,
            via_symlink: false,
            resolved_rel: None,
            host_path,
        })
    }

    /// Opens the directory `rel` (plain names only: no `.` or `..`) beneath the root if no
    /// symlink is on the way (`walk::sys::open_dir_path_beneath`: one `openat2` with
    /// `RESOLVE_NO_SYMLINKS`, an `O_PATH` handle), as a `DirRef::Known` by `rel`. `None` for
    /// any other path or any failure: the caller then opens it the general way, which also
    /// reports the error.
    fn open_symlink_free(&self, rel: &Path) -> Option<DirRef<'_>> {
        use std::os::fd::AsFd;
        use std::os::unix::ffi::OsStrExt;
        if rel.as_os_str().is_empty() {
            return Some(DirRef::Root(&self.dir));
        }
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return None;
        }
        let bytes = rel.as_os_str().as_bytes();
        let fd = crate::sys::open_dir_path_beneath(self.dir.as_fd(), bytes).ok()?;
        Some(DirRef::Known(Dir::from(fd), rel.to_path_buf()))
    }

    pub fn open_anchored_dir(&self, anchor: Anchor, rel: &Path) -> io::Result<DirRef<'_>> {
        match anchor {
            Anchor::Root if rel.as_os_str().is_empty() => Ok(DirRef::Root(&self.dir)),
            Anchor::Root => self.open_dir_beneath(rel).map(DirRef::Opened),
            Anchor::Host => Dir::open_ambient_dir(Path::new("/").join(rel), ambient_authority())
                .map(DirRef::Opened),
        }
    }

    /// Opens the directory `rel` beneath the root handle: one `openat2(RESOLVE_BENEATH)`.
    /// When the kernel refuses it as an escape because a symlink on the way has an absolute
    /// target, and that target lies inside the workspace (by the root's real path, or the root
    /// as configured), the link's part of the path is replaced by the target with the root's
    /// prefix stripped and the result is opened beneath the root handle again, as any path: the
    /// prefix comparison only ever turns an absolute target into a relative one, and the
    /// kernel decides where that leads, so a link swapped meanwhile (to `/etc`, or to
    /// `<root>/../x`) is refused by the open itself. Up to `MAX_SYMLINK_HOPS` such links.
    pub fn open_dir_beneath(&self, rel: &Path) -> io::Result<Dir> {
        if leaves_root(rel) {
            return Err(io::Error::from_raw_os_error(libc::EXDEV));
        }
        let mut rel = Cow::Borrowed(rel);
        for _ in 0..MAX_SYMLINK_HOPS {
            match self.dir.open_dir(&*rel) {
                Err(e) if is_escape(&e) => match self.through_absolute_link(&rel)? {
                    Some(next) => rel = Cow::Owned(next),
                    None => return Err(e),
                },
                other => return other,
            }
        }
        Err(io::Error::from_raw_os_error(libc::ELOOP))
    }

    /// For a path whose beneath-resolution escapes: the first directory on the way whose open
    /// escapes is found (each shorter prefix opens); if it is a symlink, the path with that
    /// link replaced by what it says (an absolute target inside the root made relative to it;
    /// a relative one joined to the link's directory, whose own links are looked at in the
    /// next round). `None`: the escape is real (a `..` above the root, a target outside).
    fn through_absolute_link(&self, rel: &Path) -> io::Result<Option<PathBuf>> {
        let names: Vec<Component<'_>> = rel.components().collect();
        let mut done = PathBuf::new();
        for (i, name) in names.iter().enumerate() {
            let mut prefix = done.clone();
            prefix.push(name);
            match self.dir.open_dir(&prefix) {
                Ok(_) => {
                    done = prefix;
                    continue;
                }
                Err(e) if is_escape(&e) => {}
                Err(_) => return Ok(None),
            }
            let Component::Normal(link) = name else {
                return Ok(None);
            };
            let parent = match done.as_os_str().is_empty() {
                true => None,
                false => Some(self.dir.open_dir(&done)?),
            };
            let parent = parent.as_ref().unwrap_or(&self.dir);
            let Ok(target) = parent.read_link_contents(link) else {
                return Ok(None);
            };
            let mut next = match target.is_absolute() {
                true => match self.inside_target(&target) {
                    Some(inside) => inside,
                    None => return Ok(None),
                },
                false => done.join(&target),
            };
            next.extend(&names[i + 1..]);
            if next.as_os_str().is_empty() {
                next.push("."); // the root itself
            }
            return Ok(Some(next));
        }
        Ok(None)
    }

    /// An absolute symlink target made relative to the root, when it names the root or a
    /// path below it: by the root's real path, or the root as configured. Only ever used to
    /// turn the target into a path that is then resolved beneath the root handle.
    fn inside_target(&self, target: &Path) -> Option<PathBuf> {
        [&self.path, &self.configured]
            .into_iter()
            .find_map(|root| target.strip_prefix(root).ok())
            .map(Path::to_path_buf)
    }

    /// Resolves `path` to its directory and leaf without following a symlink in the leaf
    /// position: the leaf's own metadata (`lstat`) is in `leaf_meta` when it exists. For tools
    /// that describe a name rather than what it leads to (`get_path_info`). The policy is
    /// checked for reading on the entry itself (a symlink leaf is the link, as in
    /// `resolve_entry`), whether it exists or not.
    pub fn resolve_no_follow(
        &self,
        path: &ToolPath,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Result<Located<'_>> {
        ctl.check()?;
        let checks = Checks {
            access: Access::READ,
            gate,
            display: &path.display,
            ctl,
        };
        let located = self.locate(path.anchor, &path.rel, None, checks);
        let mut located = self.or_unreached(located, path.anchor, &path.rel, checks)?;
        if let Some(leaf) = &located.leaf {
            match located.dir.symlink_metadata(leaf) {
                Ok(meta) => located.leaf_meta = Some(meta),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(WsfsError::from_io(&e, &path.display)),
            }
        }
        located.resolved_rel = self.check(&located, checks)?;
        Ok(located)
    }

    /// `located`, or when its directory could not be opened (a directory on the way is
    /// missing, or is a file) the policy's refusal of the path it names, if it has one, before
    /// that error: a denied path is refused whether or not it exists, so `path_not_found` says
    /// nothing about what a denied directory holds, nor `exists: false` about a protected one.
    fn or_unreached<'w>(
        &'w self,
        located: Result<Located<'w>>,
        anchor: Anchor,
        rel: &Path,
        checks: Checks<'_>,
    ) -> Result<Located<'w>> {
        match located {
            Err(e) if matches!(e.code, ErrorCode::PathNotFound | ErrorCode::NotADirectory) => {
                self.refuse_climb_out(anchor, rel, checks)?;
                self.refuse_unreached(anchor, rel, checks)?;
                Err(e)
            }
            other => other,
        }
    }

    /// `outside_workspace` for a root path whose `..` climbs above the root past a directory
    /// that does not open (`nosuchdir/../../x`), as the writers find by creating it: the
    /// deepest directory on the way that opens is placed by the kernel, and each name after it
    /// counts as one directory down, each `..` as one up.
    fn refuse_climb_out(&self, anchor: Anchor, rel: &Path, checks: Checks<'_>) -> Result<()> {
        if anchor != Anchor::Root || !rel.components().any(|c| c == Component::ParentDir) {
            return Ok(());
        }
        let names: Vec<Component<'_>> = rel.components().collect();
        let Some((dir, depth)) = self.deepest_open_dir(anchor, &names, checks.ctl)? else {
            return Ok(());
        };
        let (below, inside) = self.path_of(&dir, None)?;
        if !inside {
            return Ok(());
        }
        let mut level = below.components().count();
        for name in &names[depth..] {
            match name {
                Component::Normal(_) => level += 1,
                Component::ParentDir if level == 0 => {
                    let exdev = io::Error::from_raw_os_error(libc::EXDEV);
                    return Err(WsfsError::from_io(&exdev, checks.display));
                }
                Component::ParentDir => level -= 1,
                _ => {}
            }
        }
        Ok(())
    }

    /// What the policy says of `rel` (anchor-relative), whose directory does not open: the
    /// deepest directory on the way that opens is resolved by the kernel as usual, and the
    /// names after it are matched as they are (a symlink among them is followed as the
    /// resolver would, up to `MAX_SYMLINK_HOPS`; a `..` ends them, since only the kernel could
    /// say where it leads, and the names before it are matched as directories). Costs nothing
    /// unless there are rules for `access` or the path is a host path; only failing calls get
    /// here.
    fn refuse_unreached(&self, anchor: Anchor, rel: &Path, checks: Checks<'_>) -> Result<()> {
        let Checks {
            access,
            gate,
            display,
            ctl,
        } = checks;
        let rules = gate.wants_path(access);
        let protects = anchor == Anchor::Host || self.protects;
        if !rules && !protects {
            return Ok(());
        }
        let mut rel = rel.to_path_buf();
        for _ in 0..MAX_SYMLINK_HOPS {
            ctl.check()?;
            let names: Vec<Component<'_>> = rel.components().collect();
            let Some((dir, depth)) = self.deepest_open_dir(anchor, &names, ctl)? else {
                return Ok(());
            };
            let (done, rest) = names.split_at(depth);
            if let [Component::Normal(first), after @ ..] = rest {
                let is_link = dir
                    .symlink_metadata(first)
                    .is_ok_and(|m| m.file_type().is_symlink());
                if is_link && !after.is_empty() {
                    let Ok(target) = dir.read_link_contents(first) else {
                        return Ok(());
                    };
                    let mut next = match (target.is_absolute(), anchor) {
                        (false, _) => done.iter().collect::<PathBuf>().join(&target),
                        (true, Anchor::Host) => target.strip_prefix("/").unwrap_or(&target).into(),
                        // Followed only into the root, as every resolution does.
                        (true, Anchor::Root) => match self.inside_target(&target) {
                            Some(inside) => inside,
                            None => return Ok(()),
                        },
                    };
                    next.extend(after);
                    rel = next;
                    continue;
                }
            }
            let (mut target, inside) = self.path_of(&dir, None)?;
            let mut cut = false;
            for name in rest {
                match name {
                    Component::Normal(name) => target.push(name),
                    Component::ParentDir => {
                        cut = true;
                        break;
                    }
                    _ => {}
                }
            }
            if protects {
                let absolute = match inside {
                    true => self.path.join(&target),
                    false => Path::new("/").join(&target),
                };
                self.check_host_path(&absolute, display)?;
            }
            if rules {
                let is_dir = cut || access.new_is_dir;
                let at = Reached::given(target, inside, is_dir);
                gate.check(&at, access, display, ctl)?;
            }
            return Ok(());
        }
        Ok(())
    }

    /// The directory of `names[..depth]` for the largest `depth` below `names.len()` that opens
    /// (the anchor itself always does), with that depth: a binary search, so a long path costs
    /// a few resolutions (a prefix that opens is followed by one that does not).
    fn deepest_open_dir(
        &self,
        anchor: Anchor,
        names: &[Component<'_>],
        ctl: &CallControl,
    ) -> Result<Option<(DirRef<'_>, usize)>> {
        let open = |depth: usize| {
            let prefix: PathBuf = names[..depth].iter().collect();
            self.open_anchored_dir(anchor, &prefix).ok()
        };
        let Some(mut found) = open(0) else {
            return Ok(None);
        };
        let (mut low, mut high) = (0, names.len());
        while high - low > 1 {
            ctl.check()?;
            let mid = low + (high - low) / 2;
            match open(mid) {
                Some(dir) => {
                    found = dir;
                    low = mid;
                }
                None => high = mid,
            }
        }
        Ok(Some((found, low)))
    }

    /// Resolves `path` to its directory and leaf for a tool that changes the name itself
    /// (`move_file`, `delete_file`): the leaf is never followed (a symlink there is the entry
    /// to move or remove), its own metadata (`lstat`) is in `leaf_meta` when it exists, and a
    /// leaf with one of wsfs's temp names is refused. With `create_parents`, missing
    /// directories are made (and removed again if resolution fails).
    pub fn resolve_entry(
        &self,
        path: &ToolPath,
        access: Access,
        create_parents: bool,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Result<Located<'_>> {
        ctl.check()?;
        if let Some(Component::Normal(name)) = path.rel.components().next_back() {
            refuse_temp_name(name, &path.display)?;
        }
        let mut created = CreatedDirs::default();
        let create = create_parents.then_some(&mut created);
        let checks = Checks {
            access,
            gate,
            display: &path.display,
            ctl,
        };
        let located = self.locate(path.anchor, &path.rel, create, checks);
        let located = self.or_unreached(located, path.anchor, &path.rel, checks);
        let mut located = match located {
            Ok(located) => located,
            Err(e) => {
                self.remove_created(path.anchor, &created);
                return Err(e);
            }
        };
        located.created = created;
        if let Some(leaf) = &located.leaf {
            match located.dir.symlink_metadata(leaf) {
                Ok(meta) => located.leaf_meta = Some(meta),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => {
                    let err = WsfsError::from_io(&e, &path.display);
                    self.undo_created(located);
                    return Err(err);
                }
            }
        }
        // The policy, on the entry itself (a symlink leaf is the link, never its target).
        match self.check(&located, checks) {
            Ok(rel) => located.resolved_rel = rel,
            Err(e) => {
                self.undo_created(located);
                return Err(e);
            }
        }
        Ok(located)
    }

    /// Where the symlink `located` names leads, workspace-relative, when following it (as the
    /// tools would: beneath the root, relative targets only in a confined workspace) ends
    /// inside the workspace. The last name need not exist. `None` otherwise.
    pub fn link_target(
        &self,
        located: &Located<'_>,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Option<String> {
        let leaf = located.leaf.as_ref()?;
        let target = located.dir.read_link_contents(leaf).ok()?;
        let rel = self.symlink_target(located, &target, "").ok()?;
        let path = ToolPath {
            anchor: located.anchor,
            rel,
            display: String::new(),
            trailing_slash: false,
        };
        let reached = self.resolve(&path, Access::READ, false, gate, ctl).ok()?;
        self.shown_location(&reached)
    }

    /// The workspace-relative path of a resolved location, from the kernel's path of its open
    /// directory. For display only: confinement was decided by the kernel when it was opened.
    /// `None` when the location is not inside the workspace (unrestricted mode, or a
    /// directory moved out meanwhile).
    pub fn shown_location(&self, located: &Located<'_>) -> Option<String> {
        let real = real_path(&*located.dir).ok()?;
        let rel = real.strip_prefix(&self.kernel_path).ok()?;
        let full = match &located.leaf {
            Some(leaf) => rel.join(leaf),
            None => rel.to_path_buf(),
        };
        Some(display_path(&full))
    }

    /// The gate's check of a resolved location: the leaf (or the directory) it reached, with
    /// the leaf's identity. Returns the resolved path when the gate worked it out.
    fn check(&self, located: &Located<'_>, checks: Checks<'_>) -> Result<Option<PathBuf>> {
        let Checks {
            access,
            gate,
            display,
            ctl,
        } = checks;
        let is_dir = match (&located.leaf, &located.leaf_meta) {
            (None, _) => true,
            (Some(_), Some(meta)) => meta.is_dir(),
            (Some(_), None) => access.new_is_dir,
        };
        let file = located.leaf_meta.as_ref().map(|m| (m.dev(), m.ino()));
        let leaf = located.leaf.as_deref().map(Path::new);
        let at = Reached::below(self, &located.dir, leaf, is_dir, file);
        gate.check(&at, access, display, ctl)?;
        Ok(at.into_path())
    }

    /// Removes the directories `located`'s resolution created, for a call that failed or was
    /// stopped before its commit point. Takes `located` so its directory handle is closed
    /// first: a call that failed for want of a file descriptor can still clean up.
    pub fn undo_created(&self, located: Located<'_>) {
        let Located {
            anchor, created, ..
        } = located;
        self.remove_created(anchor, &created);
    }

    /// The anchor-relative path a symlink in the leaf position points to.
    fn symlink_target(
        &self,
        located: &Located<'_>,
        target: &Path,
        display: &str,
    ) -> Result<PathBuf> {
        if !target.is_absolute() {
            return Ok(located.parent_rel.join(target));
        }
        match located.anchor {
            Anchor::Host => Ok(target.strip_prefix("/").unwrap_or(target).to_path_buf()),
            // An absolute target inside the root is followed: made relative to the root and
            // resolved beneath its handle like any path (the kernel decides where it leads).
            Anchor::Root => self.inside_target(target).ok_or_else(|| {
                WsfsError::new(
                    ErrorCode::OutsideWorkspace,
                    format!(
                        "{display} is a symlink with an absolute target outside the workspace; \
                         only symlinks that stay inside the workspace are followed"
                    ),
                )
            }),
        }
    }
}

/// Whether `rel` certainly leads out of the directory it is resolved beneath: it starts with
/// `..`. The kernel refuses that too (`openat2(RESOLVE_BENEATH)` answers `EXDEV` for any `..`
/// above the starting directory), so this only spares the system call, with the same error.
/// It never decides that a path is inside: `a/../..` may be (when `a` is a symlink to a
/// deeper directory), and is left to the kernel. Tool paths reach here with `.` components
/// dropped, and an escaped name (`\x2e\x2e`) is never read back as `..` (see `names`).
fn leaves_root(rel: &Path) -> bool {
    rel.components().next() == Some(Component::ParentDir)
}

/// Whether an open beneath the root failed because the path led outside it: cap-std's escape
/// error (no OS error number) or the kernel's `EXDEV`.
fn is_escape(e: &io::Error) -> bool {
    match e.raw_os_error() {
        Some(code) => code == libc::EXDEV,
        None => e.kind() == io::ErrorKind::PermissionDenied,
    }
}

/// The wsfs temp-file names are reserved: no tool reads, writes or lists one.
fn refuse_temp_name(leaf: &std::ffi::OsStr, display: &str) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    if is_temp_name(leaf.as_bytes()) {
        return Err(WsfsError::new(
            ErrorCode::InvalidPath,
            format!(
                "{display}: names like .wsfs-0123456789abcdef.tmp are reserved for wsfs's own \
                 temporary files and cannot be used; choose another name"
            ),
        ));
    }
    Ok(())
}

/// Splits `rel` into its directory part and last name; `.`/`..` endings name directories.
fn split_leaf(rel: &Path) -> (PathBuf, Option<OsString>) {
    match rel.components().next_back() {
        Some(Component::Normal(name)) => {
            let parent = rel.parent().map(Path::to_path_buf).unwrap_or_default();
            (parent, Some(name.to_os_string()))
        }
        _ => (rel.to_path_buf(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A leading `..` is refused before any system call, with the error the kernel gives;
    /// `..` further in is left to the kernel, which follows it physically.
    #[test]
    fn leading_parent_is_refused_without_the_kernel() {
        assert!(leaves_root(Path::new("..")));
        assert!(leaves_root(Path::new("../x")));
        assert!(leaves_root(Path::new("../../x/y")));
        assert!(!leaves_root(Path::new("a/../..")));
        assert!(!leaves_root(Path::new("x")));
        assert!(!leaves_root(Path::new("...")));
        assert!(!leaves_root(Path::new("..x/y")));
    }

    #[test]
    fn split_leaf_forms() {
        assert_eq!(
            split_leaf(Path::new("a/b.txt")),
            (PathBuf::from("a"), Some(OsString::from("b.txt")))
        );
        assert_eq!(
            split_leaf(Path::new("b.txt")),
            (PathBuf::new(), Some(OsString::from("b.txt")))
        );
        assert_eq!(split_leaf(Path::new("a/..")), (PathBuf::from("a/.."), None));
        assert_eq!(split_leaf(Path::new("")), (PathBuf::new(), None));
    }
}
