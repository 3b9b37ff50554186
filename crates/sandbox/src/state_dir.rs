//! The state directory: where wsfs keeps what must survive a crash (the journals of
//! multi-file commits), outside the workspace so that no tool can ever reach it.
//!
//! It is `<base>/<id>`: `<base>` is the configured `state_dir`, else `$XDG_STATE_HOME/wsfs`,
//! else `~/.local/state/wsfs`; `<id>` names the workspace by its canonical root (its last
//! name and a hash of the whole path). Whether it lies inside the workspace is decided on
//! directory handles (walking `..` from the state directory and comparing device and inode
//! with the root's), not on path strings: at open, and again before anything is created for
//! a commit, on the deepest directory that exists then (`open_outside`), so a symlink on the
//! way that has come to lead into the workspace since creates nothing there.

use crate::error::{ErrorCode, Result, WsfsError};
use crate::lines::sha256_hex;
use crate::paths::{absolute_root, home_dir};
use cap_std::fs::Dir;
use rustix::fs::{Mode, OFlags, CWD};
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Where this workspace's state lives, or why it has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateDir {
    At(PathBuf),
    Unavailable(String),
}

/// The state directory of the workspace rooted at `root` (canonical), whose handle is
/// `root_dir`. A configured `state_dir` inside the workspace is refused; the default one
/// inside it (a workspace at `$HOME` or above) leaves the workspace without one, with a
/// warning.
pub fn choose(
    root_dir: &Dir,
    root: &Path,
    configured: Option<&str>,
) -> Result<(StateDir, Vec<String>)> {
    choose_with(root_dir, root, configured, default_base())
}

fn choose_with(
    root_dir: &Dir,
    root: &Path,
    configured: Option<&str>,
    default: Option<PathBuf>,
) -> Result<(StateDir, Vec<String>)> {
    let (base, is_default) = match configured {
        Some(raw) => (
            absolute_root(raw).map_err(|e| config_error(&e.message))?,
            false,
        ),
        None => match default {
            Some(base) => (base, true),
            None => {
                return Ok((
                    StateDir::Unavailable("neither $XDG_STATE_HOME nor $HOME is set".into()),
                    Vec::new(),
                ))
            }
        },
    };
    let dir = base.join(workspace_id(root));
    match inside_root(root_dir, &dir) {
        Ok(false) => Ok((StateDir::At(dir), Vec::new())),
        Ok(true) if !is_default => Err(config_error(&format!(
            "state_dir {} is inside the workspace, where the tools could reach it; choose a directory outside {}",
            base.display(),
            root.display()
        ))),
        Ok(true) => {
            let why = format!(
                "the default state directory {} is inside the workspace",
                base.display()
            );
            let warning = format!("{why}, so apply_patch commits one file per call; set state_dir to a directory outside the workspace to allow multi-file patches");
            Ok((StateDir::Unavailable(why), vec![warning]))
        }
        Err(e) => Ok((
            StateDir::Unavailable(format!("{}: {e}", base.display())),
            vec![format!("the state directory {} cannot be checked ({e}); apply_patch commits one file per call", base.display())],
        )),
    }
}

fn config_error(why: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::InvalidArguments,
        format!("invalid workspace config: {why}"),
    )
}

/// `$XDG_STATE_HOME/wsfs` (only an absolute one counts, as the XDG spec says), else
/// `~/.local/state/wsfs`.
fn default_base() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    xdg.or_else(|| home_dir().map(|h| h.join(".local/state")))
        .map(|base| base.join("wsfs"))
}

/// `<last name of the root>-<first 16 hex digits of sha256(root)>`: readable, and distinct
/// for distinct roots.
pub fn workspace_id(root: &Path) -> String {
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let hash = sha256_hex(root.as_os_str().as_bytes());
    format!("{}-{}", name.trim_start_matches('.'), &hash[..16])
}

/// Whether `path` (or, while it does not exist, its nearest existing ancestor) is the root
/// or beneath it, by walking `..` on directory handles up to `/`.
pub fn inside_root(root_dir: &Dir, path: &Path) -> io::Result<bool> {
    let (existing, _) = nearest_existing(path)?;
    is_at_or_below_root(root_dir, &existing)
}

/// Whether the directory `dir` is the workspace root or beneath it: `..` is walked on
/// handles up to `/`, comparing device and inode with the root's.
fn is_at_or_below_root(root_dir: &Dir, dir: &OwnedFd) -> io::Result<bool> {
    let root = rustix::fs::fstat(root_dir)?;
    let mut here = rustix::fs::fstat(dir)?;
    let mut up: Option<OwnedFd> = None;
    for _ in 0..4096 {
        if (here.st_dev, here.st_ino) == (root.st_dev, root.st_ino) {
            return Ok(true);
        }
        let next = match &up {
            Some(fd) => open_path_dir(fd, Path::new(".."))?,
            None => open_path_dir(dir, Path::new(".."))?,
        };
        let above = rustix::fs::fstat(&next)?;
        if (above.st_dev, above.st_ino) == (here.st_dev, here.st_ino) {
            return Ok(false); // `/`
        }
        here = above;
        up = Some(next);
    }
    Err(io::Error::other("too many directory levels"))
}

/// The deepest directory of `path` that exists, opened (symlinks followed, as a configured
/// path may hold them), and the names below it that do not exist yet, outermost first (a
/// `..` among them names the parent of the one before).
fn nearest_existing(path: &Path) -> io::Result<(OwnedFd, Vec<OsString>)> {
    let mut existing = path.to_path_buf();
    let mut missing = Vec::new();
    loop {
        match open_path_dir(CWD, &existing) {
            Ok(fd) => {
                missing.reverse();
                return Ok((fd, missing));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let name = match existing.components().next_back() {
                    Some(Component::Normal(name)) => name.to_os_string(),
                    Some(Component::ParentDir) => OsString::from(".."),
                    _ => return Err(e),
                };
                missing.push(name);
                existing.pop();
            }
            Err(e) => return Err(e),
        }
    }
}

fn open_path_dir<Fd: std::os::fd::AsFd>(at: Fd, path: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    Ok(rustix::fs::openat(at, path, flags, Mode::empty())?)
}

fn inside_error() -> io::Error {
    io::Error::other("the state directory is inside the workspace")
}

/// Opens the state directory `path` (or any directory wsfs keeps state in), creating what is
/// missing (mode 0700), and never creating anything inside the workspace, whatever symlinks
/// on the way lead to by now: the deepest directory that exists is opened and checked, by
/// handle, to be outside the workspace before anything is made in it; each missing directory
/// is then made beneath the handle of the one before and opened without following symlinks
/// (a name that turns out to be a symlink is followed and checked again).
pub fn open_outside(root_dir: &Dir, path: &Path) -> io::Result<Dir> {
    let (mut dir, missing) = nearest_existing(path)?;
    if is_at_or_below_root(root_dir, &dir)? {
        return Err(inside_error());
    }
    for name in &missing {
        if name == ".." {
            // As `mkdir -p` takes it: the parent of the directory just made, outside too.
            dir = open_path_dir(&dir, Path::new(".."))?;
            continue;
        }
        match rustix::fs::mkdirat(&dir, name.as_os_str(), Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        dir = match rustix::fs::openat(&dir, name.as_os_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            // Made by someone else meanwhile, as a symlink: where it leads is checked anew.
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                let followed = open_path_dir(&dir, Path::new(name))?;
                if is_at_or_below_root(root_dir, &followed)? {
                    return Err(inside_error());
                }
                followed
            }
            Err(e) => return Err(e.into()),
        };
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let readable = rustix::fs::openat(&dir, ".", flags, Mode::empty())?;
    Ok(Dir::from_std_file(std::fs::File::from(readable)))
}

/// Opens the directory `path` if it exists, checked by handle to lie outside the workspace
/// (an error if it does not); `None` if it does not exist. Nothing is created.
pub fn open_existing_outside(root_dir: &Dir, path: &Path) -> io::Result<Option<Dir>> {
    let dir = match open_path_dir(CWD, path) {
        Ok(fd) => fd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if is_at_or_below_root(root_dir, &dir)? {
        return Err(inside_error());
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let readable = rustix::fs::openat(&dir, ".", flags, Mode::empty())?;
    Ok(Some(Dir::from_std_file(std::fs::File::from(readable))))
}

/// Where the workspaces' state directories are (`<base>`), and this workspace's id, the name
/// of its own in there; `None` without a state directory.
pub fn base_and_id(state: &StateDir) -> Option<(&Path, &std::ffi::OsStr)> {
    match state {
        StateDir::At(path) => Some((path.parent()?, path.file_name()?)),
        StateDir::Unavailable(_) => None,
    }
}

/// A state directory wsfs made itself below a directory it holds open (an overlay view's
/// `view-state`, in the session's directory below the sessions' one): found again beneath
/// that handle at every use, never through a symlink (a name on the way swapped for one is
/// an error, whatever it leads to), and made again (mode 0700) where it is missing (after a
/// discard of the session). Never cached: a discarded session's directory is gone.
#[derive(Debug, Clone)]
pub struct PinnedState {
    pub under: std::sync::Arc<Dir>,
    /// Plain names, relative to `under`.
    pub rel: PathBuf,
}

impl PinnedState {
    /// The directory `rel` below `under` (`parent`: its parent's), made where missing.
    pub fn open(&self, parent: bool) -> io::Result<Dir> {
        let mut names: Vec<_> = self.rel.components().collect();
        if parent {
            names.pop();
        }
        let mut dir: OwnedFd = rustix::io::fcntl_dupfd_cloexec(&*self.under, 0)?;
        for name in names {
            let Component::Normal(name) = name else {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            };
            match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            dir = crate::sys::open_child_dir(dir.as_fd(), name.as_bytes())?;
        }
        Ok(Dir::from_std_file(std::fs::File::from(dir)))
    }
}

/// Creates (mode 0700) and opens the state directory for a commit, checking again, before
/// anything is created, that it is not inside the workspace (a symlink on the way could lead
/// there by now).
pub fn open_for_commit(root_dir: &Dir, path: &Path) -> io::Result<Dir> {
    open_outside(root_dir, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cap_std::ambient_authority;

    fn root(tmp: &Path) -> (Dir, PathBuf) {
        let root = tmp.join("ws");
        std::fs::create_dir_all(&root).unwrap();
        let root = root.canonicalize().unwrap();
        (
            Dir::open_ambient_dir(&root, ambient_authority()).unwrap(),
            root,
        )
    }

    #[test]
    fn inside_is_decided_on_handles() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, root) = root(tmp.path());
        assert!(inside_root(&dir, &root).unwrap());
        assert!(inside_root(&dir, &root.join("a/b/not/yet")).unwrap());
        assert!(!inside_root(&dir, &tmp.path().join("state/x")).unwrap());
        // A symlink outside that leads inside is inside.
        std::os::unix::fs::symlink(&root, tmp.path().join("link")).unwrap();
        assert!(inside_root(&dir, &tmp.path().join("link/state")).unwrap());
    }

    /// A state directory reached through a symlink that dangled at open and leads into the
    /// workspace by the time of a commit: refused before anything is made there.
    #[test]
    fn nothing_is_created_inside_through_a_symlink_that_leads_there_later() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let (dir, root) = root(tmp.path());
        std::os::unix::fs::symlink(root.join("later"), tmp.path().join("later")).unwrap();
        let state = tmp.path().join("later/st/ws-0123");
        assert!(
            !inside_root(&dir, &state).unwrap(),
            "dangling: outside for now"
        );
        assert!(open_for_commit(&dir, &state).is_err(), "mkdir -p fails too");
        std::fs::create_dir(root.join("later")).unwrap();
        let e = open_for_commit(&dir, &state).unwrap_err();
        assert!(e.to_string().contains("inside the workspace"), "{e}");
        assert_eq!(std::fs::read_dir(root.join("later")).unwrap().count(), 0);
        // Outside, every missing directory is made, private to the user.
        let outside = tmp.path().join("state/a/b");
        open_for_commit(&dir, &outside).unwrap();
        for made in ["state", "state/a", "state/a/b"] {
            let mode = std::fs::metadata(tmp.path().join(made))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "{made} is open to others: {mode:o}");
        }
        open_for_commit(&dir, &outside).unwrap();
        // `..` after a missing directory, as `mkdir -p` takes it.
        open_for_commit(&dir, &tmp.path().join("state/m/../n")).unwrap();
        assert!(tmp.path().join("state/m").is_dir() && tmp.path().join("state/n").is_dir());
    }

    #[test]
    fn configured_state_dir_inside_is_refused_and_outside_is_used() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, root) = root(tmp.path());
        let inside = root.join("state");
        let e = choose(&dir, &root, Some(inside.to_str().unwrap())).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert!(e.message.contains("inside the workspace"), "{}", e.message);
        let outside = tmp.path().join("state");
        let (state, warnings) = choose(&dir, &root, Some(outside.to_str().unwrap())).unwrap();
        assert_eq!(state, StateDir::At(outside.join(workspace_id(&root))));
        assert!(warnings.is_empty());
    }

    #[test]
    fn a_default_inside_the_workspace_leaves_it_without_one() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, root) = root(tmp.path());
        let default = Some(root.join(".local/state/wsfs"));
        let (state, warnings) = choose_with(&dir, &root, None, default).unwrap();
        assert!(matches!(state, StateDir::Unavailable(_)), "{state:?}");
        assert!(warnings[0].contains("one file per call"), "{warnings:?}");
        let (state, _) = choose_with(&dir, &root, None, None).unwrap();
        assert!(matches!(state, StateDir::Unavailable(_)));
    }

    #[test]
    fn ids_are_readable_and_distinct() {
        let a = workspace_id(Path::new("/home/u/my proj"));
        assert!(
            a.starts_with("my_proj-") && a.len() == "my_proj-".len() + 16,
            "{a}"
        );
        assert_ne!(a, workspace_id(Path::new("/other/my proj")));
        assert!(workspace_id(Path::new("/")).starts_with("root-"));
    }
}
