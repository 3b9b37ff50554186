//! The contract suite: the tools' behaviour tests run once per workspace mode, host and (when
//! the `overlay` feature is built) overlay (docs/decisions/contract-suite.md). A test file wraps its tests in
//! `backend_tests! { ... }`; each test then runs for every backend in [`BACKENDS`], with the
//! fixtures it makes on that backend, and a failure names the backend. The fixture's file
//! operations ([`Fixture::write`], [`Fixture::exists`], ...) go through the backend: for
//! `host` the plain disk under the root; a copy-on-write backend seeds its read-only base and
//! reads its view (upper, else base, minus whiteouts).

use super::Fixture;
use std::cell::Cell;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A workspace backend the behaviour tests run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The root is a host directory, changed in place.
    Host,
    /// The root is the read-only base of an overlay session (`"mode": "overlay"`): the tools
    /// work on a kernel overlay view of base + session.
    Overlay,
}

/// Every backend the behaviour tests run on: adding a backend is one line here (and its arm
/// in the fixture's operations below).
pub const BACKENDS: &[Backend] = &[
    Backend::Host,
    #[cfg(feature = "overlay")]
    Backend::Overlay,
];

/// The workspace config a fixture on `backend` starts from (the test's own is merged over
/// it). An overlay fixture keeps its session in `base/state` and mounts the view afresh
/// before every call, so what the fixture seeds shows at once.
pub fn backend_config(backend: Backend, base: &Path) -> serde_json::Value {
    match backend {
        Backend::Host => serde_json::json!({}),
        Backend::Overlay => serde_json::json!({
            "mode": "overlay",
            "state_dir": base.join("state").to_str().unwrap(),
            "session_refresh_ms": 0,
        }),
    }
}

thread_local! {
    static CURRENT: Cell<Backend> = const { Cell::new(Backend::Host) };
}

/// The backend the fixtures of the running test are made on.
pub fn current_backend() -> Backend {
    CURRENT.with(Cell::get)
}

/// Runs `body` once per backend; a panic is reported with the backend's name.
pub fn for_each_backend(mut body: impl FnMut()) {
    for &backend in BACKENDS {
        CURRENT.with(|c| c.set(backend));
        let named = Named(backend);
        body();
        std::mem::forget(named);
    }
}

/// Names the backend when a test fails (dropped only while unwinding).
struct Named(Backend);

impl Drop for Named {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("(the failing test ran on the {:?} backend)", self.0);
        }
    }
}

/// Wraps `#[test]` functions so that each runs once per backend (see [`BACKENDS`]); test
/// names are unchanged, so `test_name!` names them for `run_child_test`.
#[macro_export]
macro_rules! backend_tests {
    ($($(#[$attr:meta])* fn $name:ident() $body:block)*) => {$(
        $(#[$attr])*
        fn $name() {
            $crate::common::for_each_backend(|| $body)
        }
    )*};
}

impl Fixture {
    /// Where `rel` is as the workspace shows it: for host the root itself; for overlay the
    /// path through a fresh mount of the view (base + the session's upper tree), held until
    /// the next call here.
    fn host_path(&self, rel: &str) -> PathBuf {
        match self.backend {
            Backend::Host => self.root.join(rel),
            Backend::Overlay => {
                use std::os::fd::AsRawFd;
                use std::sync::atomic::Ordering;
                // The kernel caches what it looked up: a mount is reused only while nothing
                // (no wsfs call, no change by the fixture) may have changed base or session.
                let now = super::WSFS_RESULTS.load(Ordering::SeqCst);
                let mut cached = self.view.borrow_mut();
                if !matches!(&*cached, Some((_, Some(at))) if *at == now) {
                    *cached = None; // unmounted before the next one is made
                    let session = self.session_dir();
                    let work = session.join("test-work");
                    let _ = fs::remove_dir_all(&work);
                    fs::create_dir(&work).unwrap();
                    let view = wsfs::testing::mount_view(&self.root, &session.join("upper"), &work)
                        .unwrap_or_else(|e| panic!("mounting the session's view: {e}"));
                    *cached = Some((view, Some(now)));
                }
                let fd = cached.as_ref().map(|(fd, _)| fd.as_raw_fd()).unwrap();
                PathBuf::from(format!("/proc/self/fd/{fd}")).join(rel)
            }
        }
    }

    /// Where a change to `rel` made by the fixture goes: in the base, unless the session
    /// already decides what the view shows there (an upper entry at `rel`, or a whiteout or
    /// opaque directory above it), then through the view.
    fn change_path(&self, rel: &str) -> PathBuf {
        let at = match self.backend {
            Backend::Host => return self.root.join(rel),
            Backend::Overlay if self.upper_decides(rel) => self.host_path(rel),
            Backend::Overlay => self.root.join(rel),
        };
        // What the fixture is about to change: the next look mounts afresh.
        if let Some((_, made_at)) = self.view.borrow_mut().as_mut() {
            *made_at = None;
        }
        at
    }

    /// The overlay session's directory (`<state>/<workspace id>/sessions/default`).
    pub fn session_dir(&self) -> PathBuf {
        let state = self.base.join("state");
        for entry in fs::read_dir(&state).unwrap_or_else(|e| panic!("no state dir: {e}")) {
            let dir = entry.unwrap().path().join("sessions").join("default");
            if dir.is_dir() {
                return dir;
            }
        }
        panic!("no overlay session under {}", state.display());
    }

    fn upper_decides(&self, rel: &str) -> bool {
        use std::os::unix::fs::FileTypeExt;
        let mut at = self.session_dir().join("upper");
        let names: Vec<&str> = rel
            .split('/')
            .filter(|n| !n.is_empty() && *n != ".")
            .collect();
        for (i, name) in names.iter().enumerate() {
            at.push(name);
            let Ok(meta) = fs::symlink_metadata(&at) else {
                return false;
            };
            if i + 1 == names.len() || meta.file_type().is_char_device() || !meta.is_dir() {
                return true;
            }
            if super::is_opaque(&at) {
                return true;
            }
        }
        false
    }

    /// Where a test makes on the host what the fixture has no operation for (a socket it
    /// binds, a FIFO it opens, a file it writes through a handle): for host under the root;
    /// a copy-on-write backend gives the place in its base, so the view shows it.
    pub fn disk_path(&self, rel: &str) -> PathBuf {
        self.change_path(rel)
    }

    /// Writes a file (parents created), as seen by the workspace.
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.change_path(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(p, bytes).unwrap();
    }

    /// A file's bytes as the workspace shows them.
    pub fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.host_path(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
    }

    /// The bytes of the file at the raw path `rel` (names of any bytes, not only UTF-8) as the
    /// workspace shows it.
    pub fn read_raw(&self, rel: &[u8]) -> Vec<u8> {
        use std::os::unix::ffi::OsStrExt;
        let p = self.host_path("").join(std::ffi::OsStr::from_bytes(rel));
        fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
    }

    /// A file's text as the workspace shows it.
    pub fn read_string(&self, rel: &str) -> String {
        String::from_utf8(self.read(rel)).unwrap_or_else(|e| panic!("{rel} is not UTF-8: {e}"))
    }

    /// Whether `rel` names anything (a dangling symlink included, not followed).
    pub fn exists(&self, rel: &str) -> bool {
        fs::symlink_metadata(self.host_path(rel)).is_ok()
    }

    /// Whether `rel`, followed, names anything (`Path::exists`).
    pub fn target_exists(&self, rel: &str) -> bool {
        self.host_path(rel).exists()
    }

    /// Whether `rel`, followed, is a directory (`Path::is_dir`).
    pub fn is_dir(&self, rel: &str) -> bool {
        self.host_path(rel).is_dir()
    }

    /// Whether `rel`, followed, is a regular file (`Path::is_file`).
    pub fn is_file(&self, rel: &str) -> bool {
        self.host_path(rel).is_file()
    }

    /// Whether `rel` is a symlink.
    pub fn is_symlink(&self, rel: &str) -> bool {
        fs::symlink_metadata(self.host_path(rel)).is_ok_and(|m| m.is_symlink())
    }

    /// Creates the directory `rel` and its missing parents.
    pub fn mkdir(&self, rel: &str) {
        fs::create_dir_all(self.change_path(rel)).unwrap();
    }

    /// Creates the symlink `rel` (parents created) pointing at `target`, as given.
    pub fn symlink(&self, target: impl AsRef<Path>, rel: &str) {
        let p = self.change_path(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        std::os::unix::fs::symlink(target, p).unwrap();
    }

    /// Where the symlink `rel` points.
    pub fn read_link(&self, rel: &str) -> PathBuf {
        fs::read_link(self.host_path(rel)).unwrap_or_else(|e| panic!("read_link {rel}: {e}"))
    }

    /// Sets the permission bits of `rel`.
    pub fn set_mode(&self, rel: &str, mode: u32) {
        fs::set_permissions(self.change_path(rel), fs::Permissions::from_mode(mode)).unwrap();
    }

    /// The permission bits of `rel` (not followed).
    pub fn mode(&self, rel: &str) -> u32 {
        fs::symlink_metadata(self.host_path(rel))
            .unwrap_or_else(|e| panic!("stat {rel}: {e}"))
            .permissions()
            .mode()
    }

    /// The names in the directory `rel`, sorted.
    pub fn names(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.host_path(rel))
            .unwrap_or_else(|e| panic!("listing {rel}: {e}"))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Makes a FIFO at `rel`.
    pub fn mkfifo(&self, rel: &str) {
        super::mkfifo(&self.change_path(rel));
    }

    /// The entry `rel` itself (`lstat`).
    pub fn lstat(&self, rel: &str) -> fs::Metadata {
        fs::symlink_metadata(self.host_path(rel)).unwrap_or_else(|e| panic!("lstat {rel}: {e}"))
    }

    /// What `rel` names, followed (`stat`).
    pub fn stat(&self, rel: &str) -> fs::Metadata {
        fs::metadata(self.host_path(rel)).unwrap_or_else(|e| panic!("stat {rel}: {e}"))
    }

    /// Creates (or truncates) the file `rel` and hands it out for writing.
    pub fn create_file(&self, rel: &str) -> fs::File {
        fs::File::create(self.change_path(rel)).unwrap_or_else(|e| panic!("create {rel}: {e}"))
    }

    /// Makes `link` a second name of the file `existing`.
    pub fn hard_link(&self, existing: &str, link: &str) {
        let through_view = self.backend == Backend::Overlay
            && (self.upper_decides(existing) || self.upper_decides(link));
        let at = match through_view {
            true => self.host_path(""),
            false => self.root.clone(),
        };
        if let Some((_, made_at)) = self.view.borrow_mut().as_mut() {
            *made_at = None;
        }
        fs::hard_link(at.join(existing), at.join(link)).unwrap();
    }

    /// Removes the empty directory `rel`.
    pub fn remove_dir(&self, rel: &str) {
        fs::remove_dir(self.change_path(rel)).unwrap_or_else(|e| panic!("rmdir {rel}: {e}"));
    }

    /// Removes the file or symlink `rel`.
    pub fn remove_file(&self, rel: &str) {
        fs::remove_file(self.change_path(rel)).unwrap_or_else(|e| panic!("unlink {rel}: {e}"));
    }

    /// The SHA-256 of the file `rel` as `sha256sum` prints it.
    pub fn sha256(&self, rel: &str) -> String {
        // The file is its stdin: an overlay view's path lives in this process only.
        let out = std::process::Command::new("sha256sum")
            .stdin(self.open(rel))
            .output()
            .expect("sha256sum");
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()[..64].to_string()
    }

    /// Opens the file `rel` for reading (a handle a test holds, e.g. to keep a lock).
    pub fn open(&self, rel: &str) -> fs::File {
        fs::File::open(self.host_path(rel)).unwrap_or_else(|e| panic!("open {rel}: {e}"))
    }

    /// What the tree below `rel` looks like (see `common::snapshot`).
    /// On overlay the inode numbers are left out (0): the kernel copies a base file up to the
    /// session before its first change, so a first rename or edit gives it a new inode there.
    pub fn snapshot(&self, rel: &str) -> super::Snapshot {
        let mut snap = super::snapshot(&self.host_path(rel));
        if self.backend == Backend::Overlay {
            for entry in snap.values_mut() {
                entry.3 = 0;
            }
        }
        snap
    }

    /// Skips the rest of a test on `backend`, saying why (a property that backend cannot
    /// have, e.g. a lock held on a workspace file by another program: nothing outside the
    /// process can open the overlay view).
    pub fn skip_on(&self, backend: Backend, why: &str) -> bool {
        let skip = self.backend == backend;
        if skip {
            eprintln!("not on the {backend:?} backend: {why}");
        }
        skip
    }

    /// wsfs's temp, staged and backup names anywhere in the view (see `common::wsfs_names`).
    /// On the overlay: the refusal of a call whose base kept changing under it faster than the
    /// view could be mounted afresh, every time it ran (nothing changed; docs/sessions.md,
    /// "Outside changes to the base"). Never on the host.
    pub fn overlay_gave_up_on_a_changing_base(&self, v: &serde_json::Value) -> bool {
        self.backend == Backend::Overlay
            && v["error"]["code"] == "io_error"
            && v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("nothing was changed: retry the call"))
    }

    pub fn wsfs_names(&self) -> Vec<PathBuf> {
        super::wsfs_names(&self.host_path(""))
    }
}

impl Fixture {
    /// Overlay: drops every change of the session, so that the view shows the base alone
    /// again (a test that rebuilds its tree in the base between attempts, where the
    /// session's whiteouts and copies would hide it); host: nothing.
    pub fn discard_session(&self) {
        if self.backend == Backend::Overlay {
            discard_session(self.ws);
        }
    }
}

/// `wsfs_session_discard` on the overlay workspace `ws`, which must succeed.
pub fn discard_session(ws: u64) {
    // SAFETY: the result is taken (and freed) by take_envelope.
    let v = super::take_envelope(unsafe { super::ffi::wsfs_session_discard(ws) });
    super::assert_ok(&v);
}
