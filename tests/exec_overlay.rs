//! The runner's overlay view (issues 20 and 21): in overlay mode a program sees base + session
//! changes on a kernel overlay mounted in its own namespaces on the workspace path, writes into
//! the session's upper tree, never changes the base, reaches the upper and work directories
//! only through the mount, and is refused with `overlay_unavailable` (nothing run) where the
//! view cannot be made. The upper trees here are made by hand in the kernel's format
//! (`userxattr` flavour): a 0/0 character device is a whiteout, `user.overlay.opaque` = `y`
//! makes a directory opaque.

#[allow(unused_imports)]
use crate::common::*;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use wsfs::testing::{run_sh, TestOverlay, TestRun};
use wsfs::{ErrorCode, WsfsError};

struct View {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    state: PathBuf,
    outside: PathBuf,
    overlay: TestOverlay,
}

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

fn whiteout(p: &Path) {
    let r = unsafe { libc::mknod(cpath(p).as_ptr(), libc::S_IFCHR | 0o600, 0) };
    assert_eq!(
        r,
        0,
        "mknod {}: {}",
        p.display(),
        std::io::Error::last_os_error()
    );
}

fn opaque(p: &Path) {
    let r = unsafe {
        libc::setxattr(
            cpath(p).as_ptr(),
            c"user.overlay.opaque".as_ptr(),
            b"y".as_ptr().cast(),
            1,
            0,
        )
    };
    assert_eq!(r, 0, "setxattr: {}", std::io::Error::last_os_error());
}

/// Every entry beneath `dir` with its type and bytes (a symlink's target, a device's number).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (String, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            let t = m.file_type();
            let v = if t.is_dir() {
                stack.push(p.clone());
                ("dir".into(), Vec::new())
            } else if t.is_symlink() {
                (
                    "link".into(),
                    fs::read_link(&p).unwrap().as_os_str().as_bytes().to_vec(),
                )
            } else if t.is_char_device() {
                ("char".into(), m.rdev().to_le_bytes().to_vec())
            } else {
                (format!("file {:o}", m.mode()), fs::read(&p).unwrap())
            };
            out.insert(rel, v);
        }
    }
    out
}

impl View {
    /// The base and a session over it; `None` (with a SKIPPED line) where this kernel cannot
    /// make the view or has no Landlock.
    fn new() -> Option<View> {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        let state = tmp.path().join("state");
        let outside = tmp.path().join("outside");
        let upper = state.join("session/upper");
        let work = state.join("session/work");
        for d in [&ws, &state, &outside, &upper, &work] {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(ws.join("modified.txt"), "base\n").unwrap();
        fs::write(ws.join("deleted.txt"), "deleted in the session\n").unwrap();
        fs::write(ws.join("keep.txt"), "keep\n").unwrap();
        fs::create_dir_all(ws.join("opaque")).unwrap();
        fs::write(
            ws.join("opaque/base-only.txt"),
            "hidden by the opaque dir\n",
        )
        .unwrap();
        fs::create_dir_all(ws.join("merged")).unwrap();
        fs::write(ws.join("merged/from-base.txt"), "b\n").unwrap();
        fs::write(outside.join("secret.txt"), "outside secret\n").unwrap();

        fs::write(upper.join("modified.txt"), "session\n").unwrap();
        whiteout(&upper.join("deleted.txt"));
        fs::create_dir_all(upper.join("opaque")).unwrap();
        opaque(&upper.join("opaque"));
        fs::write(upper.join("opaque/session.txt"), "s\n").unwrap();
        fs::create_dir_all(upper.join("merged")).unwrap();
        fs::write(upper.join("merged/from-session.txt"), "s\n").unwrap();
        std::os::unix::fs::symlink(&outside, upper.join("escape")).unwrap();
        fs::create_dir_all(upper.join("session-dir")).unwrap();

        let view = View {
            _tmp: tmp,
            ws,
            state,
            outside,
            overlay: TestOverlay {
                upper,
                work,
                simulate_unavailable: false,
            },
        };
        match view.try_run(&view.ws, "true") {
            Ok(r) if r.sandbox.starts_with("landlock") => Some(view),
            Ok(r) => {
                eprintln!("SKIPPED: no Landlock here ({})", r.sandbox);
                None
            }
            Err(e) if e.code == ErrorCode::OverlayUnavailable => {
                eprintln!("SKIPPED: no overlay view on this kernel: {}", e.message);
                None
            }
            Err(e) => panic!("{e}"),
        }
    }

    fn try_run(&self, cwd: &Path, script: &str) -> Result<TestRun, WsfsError> {
        run_sh(&self.ws, Some(&self.overlay), &self.state, cwd, script)
    }

    fn run(&self, script: &str) -> TestRun {
        self.try_run(&self.ws, script)
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    }

    fn upper(&self) -> &Path {
        &self.overlay.upper
    }
}

#[test]
fn the_program_sees_the_session_view_at_the_workspace_path() {
    let Some(v) = View::new() else { return };
    let base = snapshot(&v.ws);
    let out = v.run(
        "pwd; cat modified.txt; cat keep.txt; \
         test -e deleted.txt && echo DELETED-VISIBLE; ls opaque; ls merged; \
         grep -c overlay /proc/self/mountinfo >/dev/null && echo overlay-mounted",
    );
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "{}\nsession\nkeep\nsession.txt\nfrom-base.txt\nfrom-session.txt\noverlay-mounted\n",
            v.ws.display()
        )
    );
    // From a subdirectory too: the cwd is the view's, not the base's std entered first.
    let out = v.try_run(&v.ws.join("opaque"), "pwd; ls").unwrap();
    assert_eq!(
        out.stdout,
        format!("{}\nsession.txt\n", v.ws.join("opaque").display()),
        "{}",
        out.stderr
    );
    // A directory made in the session only is a working directory like any other.
    let out = v.try_run(&v.ws.join("session-dir"), "pwd").unwrap();
    assert_eq!(
        out.stdout,
        format!("{}\n", v.ws.join("session-dir").display())
    );
    // The host never sees the mount: its workspace is the base, unchanged.
    assert_eq!(
        fs::read_to_string(v.ws.join("modified.txt")).unwrap(),
        "base\n"
    );
    assert_eq!(snapshot(&v.ws), base);
}

#[test]
fn writes_land_in_the_upper_and_the_base_stays_byte_for_byte() {
    let Some(v) = View::new() else { return };
    let base = snapshot(&v.ws);
    let out = v.run(
        "set -e; echo created > created.txt; echo more >> keep.txt; rm merged/from-base.txt; \
         mkdir -p new/dir; echo n > new/dir/f; mv modified.txt renamed.txt; \
         cat keep.txt renamed.txt",
    );
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "keep\nmore\nsession\n");
    assert_eq!(snapshot(&v.ws), base, "the base changed");
    let up = v.upper();
    assert_eq!(
        fs::read_to_string(up.join("created.txt")).unwrap(),
        "created\n"
    );
    assert_eq!(
        fs::read_to_string(up.join("keep.txt")).unwrap(),
        "keep\nmore\n"
    );
    assert_eq!(fs::read_to_string(up.join("new/dir/f")).unwrap(), "n\n");
    assert_eq!(
        fs::read_to_string(up.join("renamed.txt")).unwrap(),
        "session\n"
    );
    for gone in ["merged/from-base.txt", "modified.txt"] {
        let m = fs::symlink_metadata(up.join(gone)).unwrap();
        assert!(
            m.file_type().is_char_device() && m.rdev() == 0,
            "{gone} is not a whiteout in the upper"
        );
    }
    // A second run sees the first one's changes: the session persists in the upper.
    assert_eq!(
        v.run("cat created.txt; ls merged").stdout,
        "created\nfrom-session.txt\n"
    );
}

#[test]
fn the_base_and_the_session_directories_cannot_be_reached_beside_the_view() {
    let Some(v) = View::new() else { return };
    let base = snapshot(&v.ws);
    let upper_before = snapshot(v.upper());
    let (ws, up, work, state, outside) = (
        v.ws.display().to_string(),
        v.upper().display().to_string(),
        v.overlay.work.display().to_string(),
        v.state.display().to_string(),
        v.outside.display().to_string(),
    );
    // Every way to the base, the upper, the work directory or anywhere else: each must fail.
    let attempts = [
        format!("umount -l {ws}"),
        format!("umount {ws}"),
        format!("mount -t tmpfs none {ws}"),
        format!("echo x > {up}/injected"),
        format!("cat {up}/modified.txt"),
        format!("ls {up}"),
        format!("ls {work}"),
        format!("echo x > {work}/x"),
        format!("echo x > {state}/x"),
        format!("echo x > {outside}/x"),
        "echo x > /tmp/wsfs-overlay-escape".to_string(),
        format!("echo x > /proc/1/root{ws}/keep.txt"),
        format!("cat /proc/1/root{ws}/keep.txt"),
        format!("unshare -m sh -c 'umount -l {ws}; echo x > {ws}/keep.txt'"),
        format!("unshare -Urm sh -c 'umount -l {ws}; echo x > {ws}/keep.txt'"),
    ];
    for a in &attempts {
        let out = v.run(&format!("{a} 2>/dev/null && echo ESCAPED"));
        assert!(
            !out.stdout.contains("ESCAPED"),
            "{a}: it worked ({})",
            out.stderr
        );
    }
    assert_eq!(snapshot(&v.ws), base, "the base changed");
    assert_eq!(snapshot(v.upper()), upper_before, "the upper changed");
    assert!(!Path::new("/tmp/wsfs-overlay-escape").exists());
    assert_eq!(fs::read_dir(&v.outside).unwrap().count(), 1);
    // The view itself stays writable (the rule on the overlay's root applies).
    assert_eq!(v.run("echo ok > ok.txt && cat ok.txt").stdout, "ok\n");
}

/// Metadata outside (mode, times, xattrs, flags) stays as it was in overlay mode too: every
/// mount but the view, the temp directory and the home is read-only in the run's namespace.
#[test]
fn metadata_outside_and_of_the_base_cannot_be_changed() {
    let Some(v) = View::new() else { return };
    let secret = v.outside.join("secret.txt");
    let base_file = v.ws.join("keep.txt");
    let stat = |p: &Path| {
        let m = fs::metadata(p).unwrap();
        (m.mode(), m.mtime(), m.mtime_nsec(), m.atime())
    };
    let before = (stat(&secret), stat(&base_file));
    let (s, b) = (secret.display(), base_file.display());
    let attempts = [
        format!("chmod 4777 {s}"),
        format!("touch -d 2001-01-01 {s}"),
        format!("chattr +d {s}"),
        format!("python3 -c \"import os; os.setxattr('{s}', 'user.x', b'y')\""),
        format!("chmod 4777 /proc/1/root{b}"),
        format!("touch -d 2001-01-01 /proc/1/root{b}"),
    ];
    for a in &attempts {
        let out = v.run(&format!("{a} 2>/dev/null && echo CHANGED"));
        assert!(
            !out.stdout.contains("CHANGED"),
            "{a}: it worked ({})",
            out.stderr
        );
    }
    assert_eq!((stat(&secret), stat(&base_file)), before);
    // In the view the same calls work (and land in the run's upper, not the base).
    let out = v.run("chmod 600 keep.txt && touch -d 2001-01-01 keep.txt && echo ok");
    assert_eq!(out.stdout, "ok\n", "{}", out.stderr);
    assert_eq!(stat(&base_file), before.1, "the base changed");
}

#[test]
fn a_symlink_in_the_upper_pointing_outside_is_not_followed_out() {
    let Some(v) = View::new() else { return };
    let out = v.run(
        "cat escape/secret.txt && echo READ; echo x > escape/planted && echo WROTE; \
         ls escape && echo LISTED",
    );
    assert!(!out.stdout.contains("outside secret"), "{}", out.stdout);
    for bad in ["READ", "WROTE", "LISTED"] {
        assert!(!out.stdout.contains(bad), "{bad}: {}", out.stdout);
    }
    assert!(out.stderr.contains("Permission denied"), "{}", out.stderr);
    assert_eq!(fs::read_dir(&v.outside).unwrap().count(), 1);
    // Nor as the working directory: the view's cwd is opened with no symlink followed.
    let e = v.try_run(&v.ws.join("escape"), "pwd").unwrap_err();
    assert_eq!(e.code, ErrorCode::OutsideWorkspace, "{e}");
}

#[test]
fn where_the_view_cannot_be_made_nothing_runs_on_the_base() {
    let Some(mut v) = View::new() else { return };
    v.overlay.simulate_unavailable = true;
    let base = snapshot(&v.ws);
    let e = v.try_run(&v.ws, "echo ran > ran.txt").unwrap_err();
    assert_eq!(e.code, ErrorCode::OverlayUnavailable, "{e}");
    assert_eq!(e.code.as_str(), "overlay_unavailable");
    assert!(e.message.contains("nothing ran"), "{}", e.message);
    assert_eq!(snapshot(&v.ws), base);
    assert!(!v.upper().join("ran.txt").exists());

    // Session directories the program could reach beside the view: refused before fork.
    v.overlay.simulate_unavailable = false;
    let inside = TestOverlay {
        upper: v.ws.join("opaque"),
        ..v.overlay.clone()
    };
    let e = run_sh(&v.ws, Some(&inside), &v.state, &v.ws, "true").unwrap_err();
    assert_eq!(e.code, ErrorCode::OverlayUnavailable, "{e}");
    // The tools' home (state/home, writable by programs) holding the session's directories.
    let in_home = TestOverlay {
        upper: v.state.join("home/upper"),
        work: v.state.join("home/work"),
        simulate_unavailable: false,
    };
    fs::create_dir_all(&in_home.upper).unwrap();
    fs::create_dir_all(&in_home.work).unwrap();
    let e = run_sh(&v.ws, Some(&in_home), &v.state, &v.ws, "true").unwrap_err();
    assert_eq!(e.code, ErrorCode::OverlayUnavailable, "{e}");
    assert!(e.message.contains("overlaps"), "{}", e.message);
}
