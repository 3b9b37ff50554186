//! The overlay view (issue 20's sessions, issue 21's runner): in overlay mode a program must
//! see the session's view, base + session changes, and never the base alone. It runs on a
//! kernel overlay mount made in the child's own user and mount namespaces on the workspace
//! path itself, so the program finds the view at the same absolute path and in the same cwd,
//! and no other process (the host included) sees the mount. For a workspace's session the
//! layers are, topmost first: an upper of the run's own (empty at the start), the session's
//! upper tree (read-only to the run) and the base (the workspace root). What the program
//! changed is merged into the session after it ends, each path touched first like a tool's
//! change (`wsfs_core::workspace::overlay::runs`), so the session's fingerprints and checkpoint images
//! cover it; a run never writes the session's upper tree while the view's mount uses it.
//!
//! The upper tree is in the kernel's format with the `userxattr` flavour (whiteouts are 0/0
//! character devices, opaque directories carry `user.overlay.opaque` = `y`), and `work` is an
//! empty directory on the same file system: the session store (`wsfs-overlay`) keeps both in
//! the state directory. This module checks them and builds, before fork, every string and
//! buffer the child needs ([`OverlayPlan`]); `child.rs` does the system calls.
//!
//! Where the kernel cannot (no user namespaces, no overlayfs, overlayfs refusing these
//! directories) the run is refused with `overlay_unavailable` and nothing runs: there is no
//! fallback to the base.
//!
//! Landlock: the read+write rule for the view is added, in the child, on the overlay's root
//! (a rule on the base directory does not reach files on a mount over it), and no rule is
//! given for the base directory itself, nor for the upper and work directories, so the
//! program reaches the session's files only through the mount, and the base through no path.

use super::child::OverlayPlan;
use super::mounts::NamespacePlan;
use crate::error::{ErrorCode, WsfsError};
use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The session directories a run's view is made of.
#[derive(Debug, Clone)]
pub struct OverlayDirs {
    /// A read-only layer above the base (the session's upper tree, when each run writes an
    /// upper of its own that is merged into the session after it: `wsfs_core::workspace::overlay::runs`).
    pub lower: Option<PathBuf>,
    /// The upper tree (kernel overlayfs format, `userxattr` flavour).
    pub upper: PathBuf,
    /// overlayfs's work directory: empty, on the same file system as `upper`.
    pub work: PathBuf,
    /// Tests only: make the child's `unshare` fail as a kernel without user namespaces does.
    pub simulate_unavailable: bool,
}

impl OverlayDirs {
    pub fn new(upper: impl Into<PathBuf>, work: impl Into<PathBuf>) -> OverlayDirs {
        OverlayDirs {
            lower: None,
            upper: upper.into(),
            work: work.into(),
            simulate_unavailable: false,
        }
    }
}

fn unavailable(why: impl std::fmt::Display) -> WsfsError {
    WsfsError::new(
        ErrorCode::OverlayUnavailable,
        format!(
            "the program was not started: it must run on the session's view (base + session \
             changes) and {why}; nothing ran (a program is never run on the base alone in \
             overlay mode)"
        ),
    )
}

/// Bytes overlayfs's option parser splits or unescapes on.
fn option_safe(p: &Path) -> bool {
    !p.as_os_str()
        .as_bytes()
        .iter()
        .any(|b| matches!(b, b',' | b':' | b'\\' | b'\n' | 0))
}

fn overlaps(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

fn canonical_dir(p: &Path, what: &str) -> Result<PathBuf, WsfsError> {
    let c = fs::canonicalize(p)
        .map_err(|e| unavailable(format_args!("its {what} ({}) is missing: {e}", p.display())))?;
    if !c.is_dir() {
        return Err(unavailable(format_args!(
            "its {what} ({}) is not a directory",
            p.display()
        )));
    }
    Ok(c)
}

/// Why this system cannot make the view at all, probed once (cheap: no process is started;
/// the child's own failures are the final word).
fn kernel_refusal() -> Option<&'static str> {
    static WHY: std::sync::OnceLock<Option<&'static str>> = std::sync::OnceLock::new();
    *WHY.get_or_init(|| {
        let zero = |p: &str| {
            fs::read_to_string(p)
                .ok()
                .is_some_and(|s| s.trim() == "0")
        };
        if zero("/proc/sys/user/max_user_namespaces") {
            Some("this system allows no user namespaces (user.max_user_namespaces is 0)")
        } else if zero("/proc/sys/kernel/unprivileged_userns_clone")
            && !rustix::process::geteuid().is_root()
        {
            Some("this system allows no unprivileged user namespaces (kernel.unprivileged_userns_clone is 0)")
        } else {
            None
        }
    })
}

/// Checks the session directories against the workspace and the places a run is granted, and
/// builds the child's plan. `granted` are every other path the ruleset names (temp directory,
/// home, `exec_read_paths`): none may hold, or lie in, the upper or work directory, or the
/// program could reach the session's files beside the mount.
pub fn plan(
    view_root: &Path,
    dirs: &OverlayDirs,
    granted: &[PathBuf],
    writable: bool,
    view_access: u64,
) -> Result<OverlayPlan, WsfsError> {
    if let Some(why) = kernel_refusal() {
        return Err(unavailable(why));
    }
    let root = canonical_dir(view_root, "workspace root")?;
    let upper = canonical_dir(&dirs.upper, "session's upper directory")?;
    let work = canonical_dir(&dirs.work, "session's work directory")?;
    let lower = match &dirs.lower {
        Some(l) => Some(canonical_dir(l, "session's upper directory")?),
        None => None,
    };
    // A session's run: its layers were named by their canonical paths when the run's
    // directories were made; a path that resolves elsewhere now had a name swapped for a
    // symlink, and the mount would take a directory outside the session.
    if let Some(given) = &dirs.lower {
        let same = [
            (given, &lower),
            (&dirs.upper, &Some(upper.clone())),
            (&dirs.work, &Some(work.clone())),
        ]
        .iter()
        .all(|(g, c)| c.as_ref() == Some(*g));
        if !same {
            return Err(unavailable(
                "a name in the session's state directory now leads elsewhere (replaced by a \
                 symlink?)",
            ));
        }
    }
    let mut named = vec![
        (&root, "workspace root"),
        (&upper, "upper"),
        (&work, "work"),
    ];
    if let Some(l) = &lower {
        named.push((l, "session layer"));
    }
    for (p, what) in named {
        if !option_safe(p) {
            return Err(unavailable(format_args!(
                "the {what} path {} holds a ',', ':', '\\' or newline, which overlayfs's \
                 options cannot carry",
                p.display()
            )));
        }
    }
    let mut layers = vec![&root, &upper, &work];
    layers.extend(&lower);
    for (i, a) in layers.iter().enumerate() {
        if layers[i + 1..].iter().any(|b| overlaps(a, b)) {
            return Err(unavailable(
                "the workspace, the session's layer, the upper and the work directories must \
                 not contain one another",
            ));
        }
    }
    let dev = |p: &Path| fs::metadata(p).map(|m| m.dev()).ok();
    if dev(&upper) != dev(&work) {
        return Err(unavailable(
            "the upper and work directories are on different file systems",
        ));
    }
    for g in granted {
        let g = fs::canonicalize(g).unwrap_or_else(|_| g.clone());
        if overlaps(&g, &upper)
            || overlaps(&g, &work)
            || lower.as_ref().is_some_and(|l| overlaps(&g, l))
        {
            return Err(unavailable(format_args!(
                "{} is granted to programs and overlaps the session's directories, which \
                 programs must reach only through the view",
                g.display()
            )));
        }
    }
    // Layers are listed topmost first: the session's layer hides what it changed in the base.
    let mut options = b"lowerdir=".to_vec();
    if let Some(l) = &lower {
        options.extend_from_slice(l.as_os_str().as_bytes());
        options.push(b':');
    }
    options.extend_from_slice(root.as_os_str().as_bytes());
    options.extend_from_slice(b",upperdir=");
    options.extend_from_slice(upper.as_os_str().as_bytes());
    options.extend_from_slice(b",workdir=");
    options.extend_from_slice(work.as_os_str().as_bytes());
    options.extend_from_slice(b",userxattr");
    // mount(2) copies one page of options.
    if options.len() >= 4000 {
        return Err(unavailable(
            "the paths are too long for overlayfs's options",
        ));
    }
    let cstr = |b: Vec<u8>| CString::new(b).map_err(|_| unavailable("a path holds a NUL byte"));
    let mut mount_flags = libc::MS_NOSUID | libc::MS_NODEV;
    if !writable {
        mount_flags |= libc::MS_RDONLY;
    }
    Ok(OverlayPlan {
        target: cstr(root.as_os_str().as_bytes().to_vec())?,
        options: cstr(options)?,
        mount_flags,
        view_access,
    })
}

/// The namespaces the view is mounted in: a user and a mount namespace (overlayfs's
/// `userxattr` flavour is for a user namespace's mounts).
pub fn namespaces(dirs: &OverlayDirs) -> NamespacePlan {
    let mut plan = NamespacePlan::with_user_namespace();
    if dirs.simulate_unavailable {
        // CSIGNAL bits are invalid for unshare: EINVAL, as an old or locked-down kernel says.
        plan.unshare_flags |= 0x11;
    }
    plan
}

/// The message for a child's overlay step that failed with `errno`.
pub fn step_error(step: super::child::Step, errno: Option<i32>) -> WsfsError {
    let e = errno.map_or(String::new(), |n| {
        format!(" ({})", std::io::Error::from_raw_os_error(n))
    });
    unavailable(format_args!("{} failed{e}", step.describe()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::child::Step;

    #[test]
    fn every_overlay_step_maps_to_overlay_unavailable() {
        for step in [Step::UserNamespace, Step::IdMap, Step::OverlayMount] {
            assert!(step.is_overlay());
            let e = step_error(step, Some(libc::EPERM));
            assert_eq!(e.code, ErrorCode::OverlayUnavailable);
            assert!(e.message.contains("nothing ran"), "{}", e.message);
        }
        assert!(!Step::Landlock.is_overlay());
    }

    #[test]
    fn directories_that_overlap_or_cannot_be_said_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let p = |n: &str| {
            let d = tmp.path().join(n);
            fs::create_dir_all(&d).unwrap();
            d
        };
        let (ws, upper, work) = (p("ws"), p("state/upper"), p("state/work"));
        let ok = plan(&ws, &OverlayDirs::new(&upper, &work), &[], true, 0);
        if kernel_refusal().is_some() {
            return;
        }
        let ok = ok.unwrap();
        assert!(ok.options.to_str().unwrap().ends_with(",userxattr"));
        let inside = p("ws/upper");
        let e = plan(&ws, &OverlayDirs::new(&inside, &work), &[], true, 0).unwrap_err();
        assert_eq!(e.code, ErrorCode::OverlayUnavailable);
        let e = plan(
            &ws,
            &OverlayDirs::new(&upper, &work),
            &[tmp.path().join("state")],
            true,
            0,
        )
        .unwrap_err();
        assert!(e.message.contains("overlaps"), "{}", e.message);
        // A session run's layer whose name now leads elsewhere (swapped for a symlink).
        let session = p("state/session-upper");
        let run_upper = p("state/run-upper");
        let swapped = tmp.path().join("state/run-swapped");
        std::os::unix::fs::symlink(&run_upper, &swapped).unwrap();
        let canonical = |d: &Path| fs::canonicalize(d).unwrap();
        let exact = OverlayDirs {
            lower: Some(canonical(&session)),
            ..OverlayDirs::new(canonical(&run_upper), canonical(&work))
        };
        plan(&ws, &exact, &[], true, 0).unwrap();
        let moved = OverlayDirs {
            lower: Some(canonical(&session)),
            ..OverlayDirs::new(
                canonical(tmp.path()).join("state/run-swapped"),
                canonical(&work),
            )
        };
        let e = plan(&ws, &moved, &[], true, 0).unwrap_err();
        assert!(e.message.contains("leads elsewhere"), "{}", e.message);
        let comma = p("a,b");
        let e = plan(&comma, &OverlayDirs::new(&upper, &work), &[], true, 0).unwrap_err();
        assert!(e.message.contains("','"), "{}", e.message);
    }
}
