// `/workspace` for tools: the workspace through wsfs's resolver and policy, hostile paths,
// a symlink swapped in during a walk, commits, and the handle limit.

use super::wat::{logging, Fixture};
use super::*;
use crate::fs::{GuestStat, Listing, Opened, WriteIntent};
use std::os::unix::fs::symlink;
use std::sync::Mutex;

const READ: &str = r#","capabilities":{"filesystem":"read"}"#;
const WRITE: &str = r#","capabilities":{"filesystem":"write"}"#;

/// A logging fixture running `steps`, each a closure given the fixture, with `|` between them.
fn script(steps: &[&dyn Fn(&mut Fixture) -> String]) -> String {
    logging(|f| {
        let bar = f.text("|");
        steps
            .iter()
            .map(|step| step(f))
            .collect::<Vec<_>>()
            .join(&format!("\n(call $print {bar})\n"))
    })
}

fn cat(path: &'static str) -> impl Fn(&mut Fixture) -> String {
    move |f| format!("(call $cat {})", f.text(path))
}

fn write(path: &'static str, content: &'static str) -> impl Fn(&mut Fixture) -> String {
    move |f| format!("(call $write {} {})", f.text(path), f.text(content))
}

fn list(path: &'static str) -> impl Fn(&mut Fixture) -> String {
    move |f| format!("(call $list {})", f.text(path))
}

fn stat(path: &'static str) -> impl Fn(&mut Fixture) -> String {
    move |f| format!("(call $stat {})", f.text(path))
}

/// Prints the errno of a one-path call (`path_create_directory`, `path_unlink_file`, ...).
fn path_call(function: &'static str, path: &'static str) -> impl Fn(&mut Fixture) -> String {
    move |f| {
        format!(
            "(call $print_num (call ${function} (i32.const 3) {}))",
            f.text(path)
        )
    }
}

fn rename(from: &'static str, to: &'static str) -> impl Fn(&mut Fixture) -> String {
    move |f| {
        let (from, to) = (f.text(from), f.text(to));
        format!("(call $print_num (call $path_rename (i32.const 3) {from} (i32.const 3) {to}))")
    }
}

/// Runs a script with the workspace at `access`; returns the log's steps.
fn run_script(
    tw: &TestWorkspace,
    wat: &str,
    fields: &str,
    access: FsAccess,
) -> Result<Vec<String>> {
    let call = ctl();
    let fs: Arc<dyn GuestFs> = tw.guest_fs(access, &call);
    let out = run_with(&tool(wat, fields), "{}", &call, Some(fs), None)?;
    Ok(log(&out).split('|').map(str::to_string).collect())
}

fn seed(tw: &TestWorkspace) {
    let root = tw.root();
    std::fs::write(root.join("a.txt"), "alpha").unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/b.txt"), "beta").unwrap();
    std::fs::write(tw.outside().join("secret.txt"), "TOPSECRET").unwrap();
}

#[test]
fn a_tool_reads_lists_and_writes_the_workspace() {
    let tw = TestWorkspace::new();
    seed(&tw);
    let wat = script(&[
        &cat("a.txt"),
        &list("."),
        &list("sub"),
        &write("new.txt", "fresh"),
        &cat("new.txt"),
        &stat("sub/b.txt"),
    ]);
    let steps = run_script(&tw, &wat, WRITE, FsAccess::Write).unwrap();
    assert_eq!(
        steps,
        ["alpha", "a.txt,sub,", "b.txt,", "W0", "fresh", "S0"]
    );
    assert_eq!(
        std::fs::read_to_string(tw.root().join("new.txt")).unwrap(),
        "fresh"
    );
}

#[test]
fn dot_dot_absolute_paths_and_escaping_symlinks_reach_nothing_outside() {
    let tw = TestWorkspace::new();
    seed(&tw);
    let root = tw.root();
    symlink("../outside", root.join("out_link")).unwrap();
    symlink(tw.outside().join("secret.txt"), root.join("abs_link")).unwrap();
    let wat = script(&[
        &cat("../outside/secret.txt"),
        &cat("sub/../../outside/secret.txt"),
        &cat("/etc/passwd"),
        &cat("out_link/secret.txt"),
        &cat("abs_link"),
        &list(".."),
        &list("out_link"),
        &stat("../outside/secret.txt"),
        &write("../outside/evil.txt", "x"),
        &write("out_link/evil.txt", "x"),
        &write("abs_link", "overwritten"),
        &path_call("path_create_directory", "../outside/made"),
        &path_call("path_unlink_file", "../outside/secret.txt"),
        &rename("a.txt", "../outside/moved.txt"),
    ]);
    let steps = run_script(&tw, &wat, WRITE, FsAccess::Write).unwrap();
    // 76: ENOTCAPABLE. Nothing outside was read, listed, made, changed or removed.
    let expected = [
        "E76", "E76", "E76", "E76", "E76", "E76", "E76", "S76", "W76", "W76", "W76", "76", "76",
        "76",
    ];
    assert_eq!(steps, expected);
    let outside: Vec<_> = std::fs::read_dir(tw.outside()).unwrap().collect();
    assert_eq!(outside.len(), 1, "something was created outside");
    let secret = tw.outside().join("secret.txt");
    assert_eq!(std::fs::read_to_string(secret).unwrap(), "TOPSECRET");
    assert!(root.join("a.txt").exists());
}

/// The workspace with a hook run after the first directory listing: the moment a walking tool
/// has seen a directory and is about to go into it.
struct SwapAfterListing {
    inner: Arc<WorkspaceFs>,
    hook: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl GuestFs for SwapAfterListing {
    fn access(&self) -> FsAccess {
        self.inner.access()
    }
    fn max_file_bytes(&self) -> u64 {
        self.inner.max_file_bytes()
    }
    fn stat(&self, path: &Path, follow: bool) -> Result<GuestStat> {
        self.inner.stat(path, follow)
    }
    fn open_read(&self, path: &Path) -> Result<Opened> {
        self.inner.open_read(path)
    }
    fn open_write(&self, path: &Path, intent: WriteIntent) -> Result<Vec<u8>> {
        self.inner.open_write(path, intent)
    }
    fn commit_write(&self, path: &Path, content: &[u8], exclusive: bool) -> Result<()> {
        self.inner.commit_write(path, content, exclusive)
    }
    fn list_entries(&self, path: &Path) -> Result<Listing> {
        let listing = self.inner.list_entries(path);
        if let Some(hook) = self.hook.lock().unwrap().take() {
            hook();
        }
        listing
    }
    fn make_dir(&self, path: &Path) -> Result<()> {
        self.inner.make_dir(path)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        self.inner.remove_file(path)
    }
    fn remove_dir(&self, path: &Path) -> Result<()> {
        self.inner.remove_dir(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.rename(from, to)
    }
    fn read_link(&self, path: &Path) -> Result<PathBuf> {
        self.inner.read_link(path)
    }
}

#[test]
fn a_symlink_swapped_in_during_a_walk_leads_nowhere_outside() {
    for target in ["relative", "absolute"] {
        let tw = TestWorkspace::new();
        seed(&tw);
        let root = tw.root();
        std::fs::create_dir(root.join("d")).unwrap();
        std::fs::create_dir(root.join("d/inner")).unwrap();
        std::fs::write(root.join("d/inner/secret.txt"), "inside").unwrap();
        std::fs::write(tw.outside().join("keep.txt"), "untouched").unwrap();
        let outside = tw.outside();
        let link_target = match target {
            "relative" => PathBuf::from("../../outside"),
            _ => outside.clone(),
        };
        let d = root.join("d");
        let swap = move || {
            // The tool listed d and saw inner, a directory; now inner leads outside.
            std::fs::rename(d.join("inner"), d.join("inner.old")).unwrap();
            symlink(&link_target, d.join("inner")).unwrap();
        };
        let call = ctl();
        let fs = Arc::new(SwapAfterListing {
            inner: tw.guest_fs(FsAccess::Write, &call),
            hook: Mutex::new(Some(Box::new(swap))),
        });
        let wat = script(&[
            &list("d"),
            &cat("d/inner/secret.txt"),
            &list("d/inner"),
            &write("d/inner/keep.txt", "changed"),
            &write("d/inner/planted.txt", "x"),
            &path_call("path_unlink_file", "d/inner/keep.txt"),
        ]);
        let out = run_with(&tool(&wat, WRITE), "{}", &call, Some(fs), None).unwrap();
        let steps: Vec<String> = log(&out).split('|').map(str::to_string).collect();
        assert_eq!(steps[0], "inner,", "{target}");
        // The walk goes on into d/inner: every step is refused (76: ENOTCAPABLE).
        assert_eq!(steps[1..], ["E76", "E76", "W76", "W76", "76"], "{target}");
        assert_eq!(
            std::fs::read_to_string(outside.join("keep.txt")).unwrap(),
            "untouched"
        );
        assert!(!outside.join("planted.txt").exists(), "{target}");
        assert!(!log(&out).contains("TOPSECRET"));
    }
}

#[test]
fn a_read_only_tool_changes_nothing() {
    let tw = TestWorkspace::new();
    seed(&tw);
    let wat = script(&[
        &cat("a.txt"),
        &write("a.txt", "changed"),
        &write("b.txt", "new"),
        &path_call("path_create_directory", "d"),
        &path_call("path_unlink_file", "a.txt"),
        &rename("a.txt", "c.txt"),
    ]);
    let steps = run_script(&tw, &wat, READ, FsAccess::Read).unwrap();
    // 69: EROFS.
    assert_eq!(steps, ["alpha", "W69", "W69", "69", "69", "69"]);
    assert_eq!(
        std::fs::read_to_string(tw.root().join("a.txt")).unwrap(),
        "alpha"
    );
    assert!(!tw.root().join("b.txt").exists() && !tw.root().join("d").exists());
    // And a read-only tool given write access is refused before it runs.
    let call = ctl();
    let fs: Arc<dyn GuestFs> = tw.guest_fs(FsAccess::Write, &call);
    let result = run_with(&tool(&wat, READ), "{}", &call, Some(fs), None);
    assert_eq!(code(&result), ErrorCode::CapabilityDenied);
}

#[test]
fn the_workspace_policy_applies_to_tools() {
    let tw = TestWorkspace::with(|config| {
        config.policy.deny_read = vec![".env".into()];
    });
    seed(&tw);
    std::fs::write(tw.root().join(".env"), "TOKEN=1").unwrap();
    std::fs::create_dir(tw.root().join(".git")).unwrap();
    let wat = script(&[
        &cat(".env"),
        &list("."),
        &write(".git/config", "x"),
        &write(".env", "x"),
    ]);
    let steps = run_script(&tw, &wat, WRITE, FsAccess::Write).unwrap();
    // 2: EACCES (the default deny_write has .git/**). Replacing .env reads nothing of it, so
    // deny_read allows it, as it allows write_file.
    assert_eq!(steps, ["E2", ".git,a.txt,sub,", "W2", "W0"]);
    assert!(!tw.root().join(".git/config").exists());
}

#[test]
fn namespace_changes_follow_posix_and_the_built_in_tools() {
    let tw = TestWorkspace::new();
    seed(&tw);
    let wat = script(&[
        &path_call("path_create_directory", "d"),
        &path_call("path_create_directory", "d"),
        &rename("a.txt", "d/moved.txt"),
        &path_call("path_remove_directory", "d"),
        &path_call("path_unlink_file", "d"),
        &rename("sub/b.txt", "missing/b.txt"),
        &path_call("path_unlink_file", "d/moved.txt"),
        &path_call("path_remove_directory", "d"),
        &path_call("path_remove_directory", "."),
    ]);
    let steps = run_script(&tw, &wat, WRITE, FsAccess::Write).unwrap();
    // EEXIST 20, EISDIR 31, ENOENT 44, EINVAL 28.
    assert_eq!(steps, ["0", "20", "0", "20", "31", "44", "0", "0", "28"]);
    let root = tw.root();
    assert!(!root.join("a.txt").exists() && !root.join("d").exists());
    assert!(root.join("sub/b.txt").exists() && root.exists());
}

#[test]
fn open_files_are_committed_on_close_and_discarded_when_the_tool_fails() {
    let tw = TestWorkspace::new();
    seed(&tw);
    // Opens a.txt for writing, writes, and traps without closing it.
    let mut f = Fixture::new();
    let path = f.text("a.txt");
    let (data, len) = f.place("half-written");
    let traps = f.wat(&format!(
        "(local $fd i32) (local.set $fd (call $open {path} (i32.const 9) (i64.const 64)))
         (i32.store (i32.const 16) (i32.const {data})) (i32.store (i32.const 20) (i32.const {len}))
         (drop (call $fd_write (local.get $fd) (i32.const 16) (i32.const 1) (i32.const 24)))
         unreachable"
    ));
    let call = ctl();
    let fs: Arc<dyn GuestFs> = tw.guest_fs(FsAccess::Write, &call);
    let result = run_with(&tool(&traps, WRITE), "{}", &call, Some(fs), None);
    assert_eq!(code(&result), ErrorCode::ToolTrap);
    assert_eq!(
        std::fs::read_to_string(tw.root().join("a.txt")).unwrap(),
        "alpha"
    );
    // The same, exiting cleanly with the file still open: committed.
    let ok = f.text("{}");
    let exits = f.wat(&format!(
        "(local $fd i32) (local.set $fd (call $open {path} (i32.const 9) (i64.const 64)))
         (i32.store (i32.const 16) (i32.const {data})) (i32.store (i32.const 20) (i32.const {len}))
         (drop (call $fd_write (local.get $fd) (i32.const 16) (i32.const 1) (i32.const 24)))
         (call $print {ok})"
    ));
    let fs: Arc<dyn GuestFs> = tw.guest_fs(FsAccess::Write, &call);
    run_with(&tool(&exits, WRITE), "{}", &call, Some(fs), None).unwrap();
    assert_eq!(
        std::fs::read_to_string(tw.root().join("a.txt")).unwrap(),
        "half-written"
    );
}

#[test]
fn a_tool_cannot_hold_more_handles_than_the_limit() {
    let tw = TestWorkspace::new();
    seed(&tw);
    // Opens a.txt 300 times without closing; prints the first failure's errno.
    let wat = logging(|f| {
        let path = f.text("a.txt");
        format!(
            "(local $i i32) (local $fd i32)
             (block $done (loop $more
               (local.set $fd (call $open {path} (i32.const 0) (i64.const 2)))
               (if (i32.lt_s (local.get $fd) (i32.const 0))
                 (then (call $print_num (i32.sub (i32.const 0) (local.get $fd))) (br $done)))
               (local.set $i (i32.add (local.get $i) (i32.const 1)))
               (br_if $more (i32.lt_u (local.get $i) (i32.const 300)))))"
        )
    });
    let steps = run_script(&tw, &wat, READ, FsAccess::Read).unwrap();
    // 33: EMFILE, once 63 files and /workspace are open.
    assert_eq!(steps, ["33"]);
}

#[test]
fn tools_get_a_confined_workspace_only() {
    let tmp = tempfile::tempdir().unwrap();
    let config = Config {
        root: tmp.path().join("ws").to_string_lossy().into_owned(),
        create_root: true,
        restrict_to_workspace: false,
        limits: Limits::default(),
        state_dir: Some(tmp.path().join("state").to_string_lossy().into_owned()),
        policy: Default::default(),
        wasm_tools: Vec::new(),
        wasm_policy: Default::default(),
        mode: Default::default(),
        session: None,
        session_refresh_ms: None,
        model_gateway: None,
        profile: "wsfs".into(),
    };
    let ws = Arc::new(Workspace::open(&config).unwrap().0);
    let e = WorkspaceFs::new(ws, &ctl(), FsAccess::Read, "t")
        .err()
        .unwrap();
    assert_eq!(e.code, ErrorCode::CapabilityDenied);
}

#[test]
fn changes_are_recorded_for_the_audit_log() {
    let tw = TestWorkspace::with(|config| {
        let log = config.state_dir.clone().unwrap() + "/../audit.log";
        config.policy.audit_log = Some(log);
    });
    seed(&tw);
    let call = ctl();
    let fs = tw.guest_fs(FsAccess::Write, &call);
    let wat = script(&[&write("new.txt", "fresh"), &rename("a.txt", "sub/a.txt")]);
    let out = run_with(&tool(&wat, WRITE), "{}", &call, Some(fs.clone()), None).unwrap();
    assert_eq!(log(&out), "W0|0");
    let noted = fs.take_notes();
    let changed: Vec<&str> = noted
        .notes
        .changes
        .iter()
        .map(|c| c.path.as_str())
        .collect();
    assert!(
        changed.contains(&"new.txt") && changed.contains(&"sub/a.txt"),
        "{changed:?}"
    );
    let written = noted
        .notes
        .changes
        .iter()
        .find(|c| c.path == "new.txt")
        .unwrap();
    assert_eq!(
        written.sha256_after.as_deref(),
        Some(sha256_hex(b"fresh").as_str())
    );
    assert!(noted.notes.paths.contains(&"new.txt".to_string()));
}

#[test]
fn a_symlink_swapped_in_between_open_and_close_gets_no_write_outside() {
    let tw = TestWorkspace::new();
    seed(&tw);
    let root = tw.root();
    std::fs::create_dir_all(root.join("d/inner")).unwrap();
    let d = root.join("d");
    let swap = move || {
        std::fs::rename(d.join("inner"), d.join("inner.old")).unwrap();
        symlink("../../outside", d.join("inner")).unwrap();
    };
    // Opens d/inner/new.txt for writing while d/inner is a directory, writes, lists d (the
    // swap happens then), and closes the file: the commit asks the resolver again.
    let mut f = Fixture::new();
    let path = f.text("d/inner/new.txt");
    let (data, len) = f.place("planted");
    let dir = f.text("d");
    let ok = f.text("{}");
    let wat = f.wat(&format!(
        "(local $fd i32) (local.set $fd (call $open {path} (i32.const 9) (i64.const 64)))
         (i32.store (i32.const 16) (i32.const {data})) (i32.store (i32.const 20) (i32.const {len}))
         (drop (call $fd_write (local.get $fd) (i32.const 16) (i32.const 1) (i32.const 24)))
         (call $list {dir})
         (drop (call $fd_close (local.get $fd)))
         (call $print {ok})"
    ));
    let call = ctl();
    let fs = Arc::new(SwapAfterListing {
        inner: tw.guest_fs(FsAccess::Write, &call),
        hook: Mutex::new(Some(Box::new(swap))),
    });
    let result = run_with(&tool(&wat, WRITE), "{}", &call, Some(fs), None);
    assert_eq!(
        code(&result),
        ErrorCode::OutsideWorkspace,
        "{}",
        err_message(&result)
    );
    assert!(err_message(&result).contains("could not be saved"));
    assert!(!tw.outside().join("new.txt").exists());
    assert!(!root.join("d/inner.old/new.txt").exists());
}

#[test]
fn the_files_a_tool_writes_share_its_memory_limit() {
    let tw = TestWorkspace::new();
    // Writes 64 KiB at a time to two files in turn; prints the first error (0: none).
    let wat = logging(|f| {
        let (one, two) = (f.text("one.bin"), f.text("two.bin"));
        format!(
            "(local $fd1 i32) (local $fd2 i32) (local $i i32) (local $e i32)
             (local.set $fd1 (call $open {one} (i32.const 9) (i64.const 64)))
             (local.set $fd2 (call $open {two} (i32.const 9) (i64.const 64)))
             (i32.store (i32.const 16) (i32.const 65536)) (i32.store (i32.const 20) (i32.const 65536))
             (block $done (loop $more
               (local.set $e (call $fd_write (local.get $fd1) (i32.const 16) (i32.const 1) (i32.const 24)))
               (br_if $done (local.get $e))
               (local.set $e (call $fd_write (local.get $fd2) (i32.const 16) (i32.const 1) (i32.const 24)))
               (br_if $done (local.get $e))
               (local.set $i (i32.add (local.get $i) (i32.const 1)))
               (br_if $more (i32.lt_u (local.get $i) (i32.const 16)))))
             (call $print_num (local.get $e))"
        )
    });
    // 1 MiB of memory: 512 KiB each fits, the next 64 KiB does not (48: ENOMEM), although
    // each file is under max_write_bytes.
    let fields = r#","capabilities":{"filesystem":"write"},"limits":{"memory_mb":1}"#;
    let steps = run_script(&tw, &wat, fields, FsAccess::Write).unwrap();
    assert_eq!(steps, ["48"]);
}
