//! Checkpoints with lazy before-images (`wsfs::overlay`, issue 20): a checkpoint only starts
//! an epoch; a path's before-image is taken at its first touch after the newest checkpoint,
//! and a rewind to k restores each path changed after k from the oldest image at or after k.
//! Also: images kept across a commit, a directory's replacement, reopen, a torn image log,
//! SIGKILL during the image capture, and a full disk during copy-up, capture and commit.
use crate::common::*;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wsfs::overlay::{CheckpointOptions, CommitOptions, DiffOptions, RewindOptions, Session};
use wsfs::{CallControl, ErrorCode};

struct Case {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    state: PathBuf,
}

impl Case {
    fn new() -> Case {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        Case::at(tmp, base.join("ws"), base.join("state"))
    }

    fn at(tmp: tempfile::TempDir, root: PathBuf, state: PathBuf) -> Case {
        fs::create_dir_all(&root).unwrap();
        Case {
            _tmp: tmp,
            root,
            state,
        }
    }

    fn open(&self, name: &str) -> Session {
        Session::open(&self.root, Some(self.state.to_str().unwrap()), name).unwrap()
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }

    fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.root.join(rel)).unwrap()
    }

    fn session_dir(&self, name: &str) -> PathBuf {
        let ids: Vec<_> = fs::read_dir(&self.state)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("sessions").is_dir())
            .collect();
        ids[0].join("sessions").join(name)
    }

    /// What the session shows at `rel`: its upper entry's content, else the base's; `None`
    /// for a whiteout or nothing.
    fn view(&self, name: &str, rel: &str) -> Option<String> {
        let upper = self.session_dir(name).join("upper").join(rel);
        match fs::symlink_metadata(&upper) {
            Ok(m) if m.is_file() => Some(fs::read_to_string(upper).unwrap()),
            Ok(_) => None,
            Err(_) => fs::read_to_string(self.root.join(rel)).ok(),
        }
    }
}

fn ctl() -> CallControl {
    CallControl::new(Duration::from_secs(600), None)
}

fn ckpt(s: &mut Session, label: &str) -> String {
    s.checkpoint(&CheckpointOptions {
        label: Some(label.into()),
    })
    .unwrap()
    .id
}

fn rewind(s: &mut Session, id: &str) {
    s.rewind(&RewindOptions { id: id.into() }).unwrap();
}

fn changed(s: &Session) -> Vec<(String, &'static str)> {
    s.diff(&DiffOptions::default())
        .unwrap()
        .changes
        .into_iter()
        .map(|c| (c.path, c.status))
        .collect()
}

/// The rule: a rewind to k restores a path from the OLDEST image at or after k (its state
/// at k); a path changed only before k is left alone; a path created after k goes. The
/// newest image at or after k, or the newest at or before k, gives other answers here.
#[test]
fn a_rewind_restores_each_path_from_the_oldest_image_at_or_after_the_checkpoint() {
    let c = Case::new();
    c.write("p.txt", "p0\n");
    c.write("r.txt", "r0\n");
    let mut s = c.open("lazy");
    s.write_file("r.txt", b"r1\n", 0o644).unwrap();
    let a = ckpt(&mut s, "A");
    s.write_file("p.txt", b"p1\n", 0o644).unwrap();
    let b = ckpt(&mut s, "B");
    s.write_file("p.txt", b"p2\n", 0o644).unwrap();
    // Reopened mid-epoch: the images already taken are known (not taken again).
    drop(s);
    let mut s = c.open("lazy");
    s.write_file("p.txt", b"p2b\n", 0o644).unwrap();
    let cc = ckpt(&mut s, "C");
    s.write_file("p.txt", b"p3\n", 0o644).unwrap();
    s.write_file("q.txt", b"q\n", 0o644).unwrap();
    let list = s.checkpoints().unwrap();
    let covered: Vec<_> = list.iter().map(|i| i.paths.clone()).collect();
    assert_eq!(
        covered,
        [vec!["r.txt"], vec!["p.txt"], vec!["p.txt"]],
        "each checkpoint lists the paths changed in the step it closed"
    );
    assert_eq!(list[1].label.as_deref(), Some("B"));

    rewind(&mut s, &cc);
    assert_eq!(c.view("lazy", "p.txt").as_deref(), Some("p2b\n"));
    assert_eq!(c.view("lazy", "q.txt"), None, "created after C: gone");
    s.write_file("q.txt", b"q again\n", 0o644).unwrap();
    rewind(&mut s, &b);
    assert_eq!(c.view("lazy", "p.txt").as_deref(), Some("p1\n"), "p at B");
    assert_eq!(c.view("lazy", "q.txt"), None);
    assert_eq!(c.view("lazy", "r.txt").as_deref(), Some("r1\n"));
    assert_eq!(s.checkpoints().unwrap().len(), 2);
    // Changed again after the rewind, and again reopened: the rewind to A still works.
    s.write_file("p.txt", b"p4\n", 0o644).unwrap();
    drop(s);
    let mut s = c.open("lazy");
    rewind(&mut s, &a);
    assert_eq!(
        c.view("lazy", "p.txt").as_deref(),
        Some("p0\n"),
        "p at A: not in the session"
    );
    assert_eq!(
        c.view("lazy", "r.txt").as_deref(),
        Some("r1\n"),
        "r changed only before A: left alone"
    );
    assert_eq!(changed(&s), [("r.txt".to_string(), "M")]);
    assert!(!s.fingerprints().contains_key("p.txt"));
    assert!(!s.fingerprints().contains_key("q.txt"));
    assert_eq!(c.read("p.txt"), b"p0\n", "the base never changed");
}

/// A checkpoint copies nothing: the images are taken at the first touch after it, once.
#[test]
fn a_checkpoint_copies_nothing_and_the_first_touch_after_it_takes_the_image() {
    let c = Case::new();
    let mut s = c.open("cost");
    let big = vec![b'x'; 1 << 20];
    s.write_file("big.bin", &big, 0o644).unwrap();
    s.write_file("other.txt", b"o\n", 0o644).unwrap();
    let id = ckpt(&mut s, "x");
    let images = c
        .session_dir("cost")
        .join("checkpoints")
        .join(&id)
        .join("images");
    assert_eq!(fs::metadata(&images).unwrap().len(), 0);
    s.touch("big.bin").unwrap();
    let after = fs::metadata(&images).unwrap().len();
    assert!(after > 1 << 20, "the image of big.bin: {after} bytes");
    s.write_file("big.bin", b"small\n", 0o644).unwrap();
    s.touch("big.bin").unwrap();
    assert_eq!(
        fs::metadata(&images).unwrap().len(),
        after,
        "taken once per epoch"
    );
    rewind(&mut s, &id);
    assert_eq!(
        fs::read(c.session_dir("cost").join("upper/big.bin")).unwrap(),
        big
    );
    assert_eq!(
        fs::metadata(&images).unwrap().len(),
        0,
        "nothing changed since"
    );
}

/// A whiteout or an opaque directory over a directory of the session takes the images of
/// every entry below it first.
#[test]
fn replacing_a_directory_keeps_the_images_of_the_entries_below_it() {
    let c = Case::new();
    c.write("d/base.txt", "base\n");
    let mut s = c.open("dirs");
    s.write_file("d/a.txt", b"a1\n", 0o644).unwrap();
    s.write_file("d/sub/b.txt", b"b1\n", 0o600).unwrap();
    let id = ckpt(&mut s, "before");
    s.whiteout("d").unwrap();
    s.make_opaque("d", 0o700).unwrap();
    s.write_file("d/new.txt", b"new\n", 0o644).unwrap();
    assert!(changed(&s).contains(&("d/base.txt".to_string(), "D")));
    rewind(&mut s, &id);
    assert_eq!(c.view("dirs", "d/a.txt").as_deref(), Some("a1\n"));
    assert_eq!(c.view("dirs", "d/sub/b.txt").as_deref(), Some("b1\n"));
    assert_eq!(c.view("dirs", "d/base.txt").as_deref(), Some("base\n"));
    assert_eq!(c.view("dirs", "d/new.txt"), None);
    assert_eq!(
        changed(&s),
        [
            ("d/a.txt".to_string(), "A"),
            ("d/sub".to_string(), "A"),
            ("d/sub/b.txt".to_string(), "A")
        ]
    );
}

/// A commit changes the session's state of the paths it commits (their fingerprints, their
/// upper entries leave): it takes their images first, so a rewind across it brings the
/// session's side back (the base keeps the commit: a rewind never changes the base).
#[test]
fn a_rewind_across_a_commit_restores_the_sessions_side() {
    let c = Case::new();
    c.write("f.txt", "f0\n");
    let mut s = c.open("across");
    s.write_file("f.txt", b"f1\n", 0o644).unwrap();
    let before = s.fingerprints()["f.txt"].clone();
    let id = ckpt(&mut s, "before commit");
    let r = s.commit(&CommitOptions::default(), &ctl()).unwrap();
    assert!(r.committed);
    assert_eq!(c.read("f.txt"), b"f1\n");
    assert!(!c.session_dir("across").join("upper/f.txt").exists());
    rewind(&mut s, &id);
    assert_eq!(
        fs::read(c.session_dir("across").join("upper/f.txt")).unwrap(),
        b"f1\n"
    );
    assert_eq!(
        s.fingerprints()["f.txt"],
        before,
        "the fingerprint at the checkpoint"
    );
    assert_eq!(c.read("f.txt"), b"f1\n", "the base keeps the commit");
}

/// A torn last record (a crash in the middle of an image's append, before the change) is
/// cut off at the next open; the images before it stay usable.
#[test]
fn a_torn_image_record_is_cut_off_at_open() {
    let c = Case::new();
    let mut s = c.open("torn");
    s.write_file("a.txt", b"a1\n", 0o644).unwrap();
    s.write_file("c.txt", b"c1\n", 0o644).unwrap();
    let id = ckpt(&mut s, "x");
    s.write_file("a.txt", b"a2\n", 0o644).unwrap();
    drop(s);
    let images = c
        .session_dir("torn")
        .join("checkpoints")
        .join(&id)
        .join("images");
    let good = fs::read(&images).unwrap();
    for tail in [
        &b"{\"path\":\"b.txt\",\"state\":\"fi"[..],
        &b"{\"path\":\"b.txt\",\"state\":\"file\",\"fp\":null,\"len\":4}\nab"[..],
        &b"{\"path\":\"b.txt\",\"state\":\"absent\",\"fp\":null,\"len\":0}\n0000000000000000000000000000000000000000000000000000000000000000\n"[..],
        &b"\0\0\0\0\0\0\0\0"[..],
    ] {
        let mut bytes = good.clone();
        bytes.extend_from_slice(tail);
        fs::write(&images, &bytes).unwrap();
        let s = c.open("torn");
        assert_eq!(fs::read(&images).unwrap(), good, "cut back to the intact records");
        drop(s);
    }
    let mut s = c.open("torn");
    s.write_file("b.txt", b"b\n", 0o644).unwrap();
    rewind(&mut s, &id);
    assert_eq!(c.view("torn", "a.txt").as_deref(), Some("a1\n"));
    assert_eq!(c.view("torn", "b.txt"), None);
    // A damaged record before the last one: the rewind refuses rather than restore it.
    s.write_file("a.txt", b"a3\n", 0o644).unwrap();
    s.write_file("c.txt", b"c2\n", 0o644).unwrap();
    drop(s);
    let mut bytes = fs::read(&images).unwrap();
    let at = bytes
        .windows(4)
        .position(|w| w == b"a1\n{")
        .unwrap_or_else(|| {
            bytes
                .windows(3)
                .position(|w| w == b"a1\n")
                .expect("a.txt's image")
        });
    bytes[at] = b'X';
    fs::write(&images, &bytes).unwrap();
    let mut s = c.open("torn");
    let e = s.rewind(&RewindOptions { id: id.clone() }).unwrap_err();
    assert_eq!(e.code, ErrorCode::IoError, "{}", e.message);
    assert!(e.message.contains("damaged"), "{}", e.message);
}

const KILL_ENV: &str = "WSFS_OVERLAY_CAPTURE_KILL_CHILD";
const FILES: usize = 4;
/// The checkpoint's version of each file: big, so that kills land in its image's copy.
fn at_checkpoint(i: usize) -> Vec<u8> {
    let mut v = format!("{i} S\n").into_bytes();
    v.resize(384 << 10, b's');
    v
}

fn file(i: usize) -> String {
    format!("d{}/f{i}.txt", i % 2)
}

/// Child of `sigkill_during_image_capture`: rewinds to the checkpoint, then overwrites every
/// file (each first touch after the rewind takes its big image), forever.
#[test]
#[ignore = "child process of sigkill_during_image_capture"]
fn overlay_capture_kill_child() {
    let Ok(spec) = std::env::var(KILL_ENV) else {
        return;
    };
    let (root, state) = spec.split_once('\n').unwrap();
    let mut s = Session::open(Path::new(root), Some(state), "k").unwrap();
    let mut n = 0u64;
    loop {
        s.rewind(&RewindOptions { id: "1".into() }).unwrap();
        for i in 0..FILES {
            s.write_file(&file(i), format!("{i} B{n}\n").as_bytes(), 0o644)
                .unwrap();
        }
        n += 1;
    }
}

/// SIGKILL at random points of touches that take before-images (and of rewinds): after
/// reopen every file shows its checkpoint version or a whole later one, and a rewind brings
/// every file back to the checkpoint's version exactly.
#[test]
fn sigkill_during_image_capture() {
    let c = Case::new();
    for i in 0..FILES {
        c.write(&file(i), format!("{i} A\n"));
    }
    {
        let mut s = c.open("k");
        for i in 0..FILES {
            s.write_file(&file(i), &at_checkpoint(i), 0o644).unwrap();
        }
        assert_eq!(ckpt(&mut s, "S"), "1");
    }
    let trials: u64 = std::env::var("WSFS_OVERLAY_KILL_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120);
    let mut seen = std::collections::BTreeMap::new();
    for t in 0..trials {
        let mut child = child_test(&crate::test_name!(overlay_capture_kill_child))
            .env(
                KILL_ENV,
                format!("{}\n{}", c.root.display(), c.state.display()),
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(15 + (t * 37) % 80));
        let running = child.try_wait().unwrap().is_none();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(running, "the child exited early (trial {t})");
        let mut s = c.open("k");
        let mut later = 0;
        for i in 0..FILES {
            let shown = fs::read(c.session_dir("k").join("upper").join(file(i))).unwrap();
            if shown != at_checkpoint(i) {
                let text = String::from_utf8(shown).unwrap();
                assert!(
                    text.starts_with(&format!("{i} B")) && text.ends_with('\n'),
                    "trial {t}: {} is {text:?}",
                    file(i)
                );
                later += 1;
            }
        }
        *seen
            .entry(if later == 0 { "at checkpoint" } else { "after" })
            .or_insert(0) += 1;
        rewind(&mut s, "1");
        for i in 0..FILES {
            assert!(
                fs::read(c.session_dir("k").join("upper").join(file(i))).unwrap()
                    == at_checkpoint(i),
                "trial {t}: {} is not at the checkpoint after the rewind",
                file(i)
            );
        }
        let stray: Vec<_> = wsfs_names(&c.session_dir("k").join("upper"));
        assert!(stray.is_empty(), "trial {t}: {stray:?}");
        assert_eq!(wsfs_names(&c.root), Vec::<PathBuf>::new());
    }
    eprintln!("{trials} kills: {seen:?}");
    assert!(seen.len() > 1, "the child never got both ways: {seen:?}");
}

/// A tmpfs of `size` mounted at `dir` (root only), unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        fs::create_dir_all(dir).unwrap();
        let ok = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }

    /// Fills it, leaving about `free` bytes; the filler is removed when the guard drops.
    fn fill(&self, free: usize) -> Filler {
        use std::io::Write;
        let reserve = self.0.join("reserve.fill");
        fs::write(&reserve, vec![0u8; free]).unwrap();
        let path = self.0.join("filler.fill");
        let mut f = fs::File::create(&path).unwrap();
        let chunk = vec![1u8; 64 << 10];
        loop {
            match f.write(&chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
                    break;
                }
            }
        }
        // Whatever is left below a chunk.
        while f.write(&[1u8; 512]).is_ok_and(|n| n > 0) {}
        fs::remove_file(reserve).unwrap();
        Filler(path)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

struct Filler(PathBuf);

impl Drop for Filler {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// What the session holds: its upper tree and its diff.
fn session_state(c: &Case, s: &Session) -> (Snapshot, Vec<(String, &'static str)>) {
    let mut upper = snapshot(&c.session_dir("full").join("upper"));
    // Inode numbers of unchanged entries stay; only what the entries are matters here.
    for v in upper.values_mut() {
        v.3 = 0;
    }
    (upper, changed(s))
}

fn base_state(c: &Case) -> Snapshot {
    let mut base = snapshot(&c.root);
    base.retain(|p, _| !p.to_string_lossy().ends_with(".fill"));
    base
}

/// A full disk (a small tmpfs filled up) during copy-up, `write_file`, the image capture of
/// a touch after a checkpoint (the session's file system full) and during commit (the
/// base's): a clean `no_space`, the base and the session unchanged, and the same calls
/// succeed once there is room. Needs root for the mounts (skipped with a message otherwise).
#[test]
fn a_full_disk_during_copy_up_capture_and_commit_is_no_space_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let top = fs::canonicalize(tmp.path()).unwrap();
    let (root, state) = (top.join("ws"), top.join("state"));
    let Some(base_fs) = Tmpfs::mount(&root, "4m") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let Some(state_fs) = Tmpfs::mount(&state, "4m") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let c = Case::at(tmp, root, state);
    let big = vec![b'b'; 1 << 20];
    c.write("big.bin", &big);
    c.write("keep.txt", "k\n");
    let mut s = c.open("full");
    s.write_file("keep.txt", b"k1\n", 0o644).unwrap();
    s.write_file("half.bin", &vec![b'h'; 512 << 10], 0o644)
        .unwrap();
    let id = ckpt(&mut s, "before the disk filled");
    let session_before = session_state(&c, &s);
    let base_before = base_state(&c);

    // The session's file system is full.
    let filler = state_fs.fill(128 << 10);
    let no_space = |r: Result<(), wsfs::WsfsError>, what: &str| {
        let e = r.expect_err(what);
        assert_eq!(e.code, ErrorCode::NoSpace, "{what}: {}", e.message);
    };
    no_space(s.copy_up("big.bin"), "copy_up");
    assert_eq!(session_state(&c, &s), session_before, "copy_up");
    no_space(s.write_file("new.bin", &big, 0o644), "write_file");
    assert_eq!(session_state(&c, &s), session_before, "write_file");
    // The first touch of half.bin since the checkpoint takes its 512 KiB image: no room.
    no_space(s.write_file("half.bin", b"h\n", 0o644), "the image capture");
    assert_eq!(session_state(&c, &s), session_before, "the image capture");
    assert_eq!(base_state(&c), base_before);
    drop(filler);
    drop(s);
    // Reopened: consistent, and the calls go through now.
    let mut s = c.open("full");
    assert_eq!(session_state(&c, &s), session_before, "after reopen");
    s.copy_up("big.bin").unwrap();
    s.write_file("half.bin", b"h\n", 0o644).unwrap();
    rewind(&mut s, &id);
    assert_eq!(session_state(&c, &s), session_before, "rewound");

    // The base's file system is full: the commit stages half.bin beside its target.
    let filler = base_fs.fill(128 << 10);
    let e = s.commit(&CommitOptions::default(), &ctl()).unwrap_err();
    assert_eq!(e.code, ErrorCode::NoSpace, "{}", e.message);
    assert_eq!(base_state(&c), base_before, "the base is unchanged");
    assert_eq!(
        session_state(&c, &s),
        session_before,
        "the session is unchanged"
    );
    assert_eq!(wsfs_names(&c.root), Vec::<PathBuf>::new());
    drop(filler);
    let r = s.commit(&CommitOptions::default(), &ctl()).unwrap();
    assert!(r.committed, "{r:?}");
    assert_eq!(c.read("half.bin"), vec![b'h'; 512 << 10]);
    assert_eq!(c.read("keep.txt"), b"k1\n");
}

/// A path first touched while not in the session has its "absent" image in the touch log
/// (the `t` record's checkpoint): it survives the log's compaction, and a rewind consumes
/// those of its target and of the later checkpoints, whose ids a new checkpoint reuses.
#[test]
fn absent_images_in_the_touch_log_survive_compaction_and_rewinds_consume_them() {
    let c = Case::new();
    c.write("base.txt", "b0\n");
    let mut s = c.open("absent");
    let one = ckpt(&mut s, "one");
    s.write_file("new.txt", b"n\n", 0o644).unwrap();
    let only_base = CommitOptions {
        paths: Some(vec!["base.txt".into()]),
        ..Default::default()
    };
    for k in 1..=60 {
        s.write_file("base.txt", format!("b{k}\n").as_bytes(), 0o644)
            .unwrap();
        assert!(s.commit(&only_base, &ctl()).unwrap().committed);
    }
    drop(s);
    let log = c.session_dir("absent").join("meta/touched.log");
    let lines = |p: &Path| fs::read_to_string(p).unwrap().lines().count();
    let before = lines(&log);
    let s = c.open("absent");
    assert!(
        lines(&log) < before / 2,
        "compacted: {before} -> {}",
        lines(&log)
    );
    drop(s);
    // Read back from the compacted log.
    let mut s = c.open("absent");
    rewind(&mut s, &one);
    assert_eq!(
        c.view("absent", "new.txt"),
        None,
        "created after the checkpoint"
    );
    assert!(changed(&s).is_empty(), "{:?}", changed(&s));
    assert_eq!(c.read("base.txt"), b"b60\n", "the base keeps its commits");

    // Ids are reused after a rewind: the old epoch's "absent" images must not apply.
    let two = ckpt(&mut s, "two");
    s.write_file("z.txt", b"z0\n", 0o644).unwrap();
    rewind(&mut s, &one);
    assert_eq!(c.view("absent", "z.txt"), None);
    s.write_file("z.txt", b"z1\n", 0o644).unwrap();
    assert_eq!(ckpt(&mut s, "two again"), two);
    drop(s);
    let mut s = c.open("absent");
    s.write_file("other.txt", b"o\n", 0o644).unwrap();
    rewind(&mut s, &two);
    assert_eq!(
        c.view("absent", "z.txt").as_deref(),
        Some("z1\n"),
        "z.txt was there at the new checkpoint two"
    );
    assert_eq!(c.view("absent", "other.txt"), None);
}

/// Session paths are the escaped names the tools show (`caf\xe9.txt` for the byte E9): the
/// store keeps, checkpoints and rewinds such paths, refuses a path not in that form, and
/// keeps a symlink's target that is not UTF-8 byte for byte in a before-image.
#[test]
fn session_paths_are_escaped_names_and_before_images_keep_raw_bytes() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let c = Case::new();
    let raw = |rel: &[u8]| c.root.join(OsStr::from_bytes(rel));
    fs::write(raw(b"caf\xe9.txt"), "base\n").unwrap();
    std::os::unix::fs::symlink(OsStr::from_bytes(b"t\xff/x"), raw(b"ln\xfe")).unwrap();
    let mut s = c.open("esc");
    for bad in [r"caf\xE9.txt", r"a\xff\x2fb", r"a\xff\x00"] {
        let e = s.write_file(bad, b"x", 0o644).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidPath, "{bad}: {e:?}");
    }
    s.write_file(r"caf\xe9.txt", b"one\n", 0o644).unwrap();
    s.copy_up(r"ln\xfe").unwrap();
    assert!(s.fingerprints().contains_key(r"caf\xe9.txt"));
    let one = ckpt(&mut s, "one");
    s.write_file(r"caf\xe9.txt", b"two\n", 0o644).unwrap();
    s.whiteout(r"ln\xfe").unwrap();
    drop(s);
    let mut s = c.open("esc");
    assert_eq!(
        changed(&s),
        [
            (r"ln\xfe".to_string(), "D"),
            (r"caf\xe9.txt".to_string(), "M")
        ]
    );
    rewind(&mut s, &one);
    let upper = c.session_dir("esc").join("upper");
    let up = |rel: &[u8]| upper.join(OsStr::from_bytes(rel));
    assert_eq!(fs::read(up(b"caf\xe9.txt")).unwrap(), b"one\n");
    assert_eq!(
        fs::read_link(up(b"ln\xfe")).unwrap().as_os_str().as_bytes(),
        b"t\xff/x"
    );
    assert_eq!(changed(&s), [(r"caf\xe9.txt".to_string(), "M")]);
    assert!(
        s.commit(&CommitOptions::default(), &ctl())
            .unwrap()
            .committed
    );
    assert_eq!(fs::read(raw(b"caf\xe9.txt")).unwrap(), b"one\n");
}

/// A session written before session paths were escaped (its paths plain UTF-8, no `v` record
/// in its log, no `escaped` in its images and checkpoint) is read with its paths escaped: a
/// UTF-8 name that looks escaped (`lit\xe9.txt` with a literal backslash) keeps naming its
/// own file, not the one with byte E9.
#[test]
fn a_session_written_before_paths_were_escaped_is_upgraded_at_open() {
    use serde_json::Value;
    use sha2::Digest;
    let c = Case::new();
    c.write("lit\\xe9.txt", "l0\n");
    let shown = r"lit\\xe9.txt"; // how the tools show that name
    let old = r"lit\xe9.txt"; // how the earlier store recorded it
    let mut s = c.open("old");
    s.write_file(shown, b"l1\n", 0o644).unwrap();
    let one = ckpt(&mut s, "one");
    s.write_file(shown, b"l2\n", 0o644).unwrap();
    drop(s);
    // Make the session's files what the earlier store wrote.
    let dir = c.session_dir("old");
    let to_old = |v: &mut Value, key: &str| {
        if v[key] == shown {
            v[key] = Value::from(old);
        }
        v.as_object_mut().unwrap().remove("escaped");
    };
    let log = dir.join("meta/touched.log");
    let mut lines = String::new();
    for line in fs::read_to_string(&log).unwrap().lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if v["op"] == "v" {
            continue;
        }
        to_old(&mut v, "path");
        lines.push_str(&format!("{v}\n"));
    }
    let old_json = Value::from(old).to_string();
    assert!(lines.contains(&old_json), "{lines}");
    fs::write(&log, lines).unwrap();
    let ck = dir.join("checkpoints").join(&one);
    let mut meta: Value = serde_json::from_slice(&fs::read(ck.join("meta.json")).unwrap()).unwrap();
    meta["paths"] = serde_json::json!([old]);
    meta.as_object_mut().unwrap().remove("escaped");
    fs::write(ck.join("meta.json"), meta.to_string()).unwrap();
    let images = fs::read(ck.join("images")).unwrap();
    let (mut rest, mut out) = (&images[..], Vec::new());
    while !rest.is_empty() {
        let nl = rest.iter().position(|&b| b == b'\n').unwrap();
        let mut header: Value = serde_json::from_slice(&rest[..nl]).unwrap();
        let len = header["len"].as_u64().unwrap() as usize;
        let content = &rest[nl + 1..nl + 1 + len];
        to_old(&mut header, "path");
        let mut record = format!("{header}\n").into_bytes();
        record.extend_from_slice(content);
        let sha: String = sha2::Sha256::digest(&record)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        out.extend_from_slice(&record);
        out.extend_from_slice(format!("{sha}\n").as_bytes());
        rest = &rest[nl + 1 + len + 65..];
    }
    assert!(String::from_utf8_lossy(&out).contains(&old_json));
    fs::write(ck.join("images"), out).unwrap();

    let mut s = c.open("old");
    assert!(fs::read_to_string(&log)
        .unwrap()
        .starts_with(r#"{"op":"v","i":2}"#));
    assert_eq!(s.fingerprints().keys().collect::<Vec<_>>(), [shown]);
    assert_eq!(changed(&s), [(shown.to_string(), "M")]);
    assert_eq!(s.checkpoints().unwrap()[0].paths, [shown]);
    rewind(&mut s, &one);
    assert_eq!(c.view("old", "lit\\xe9.txt").as_deref(), Some("l1\n"));
    assert!(
        s.commit(&CommitOptions::default(), &ctl())
            .unwrap()
            .committed
    );
    assert_eq!(c.read("lit\\xe9.txt"), b"l1\n");
}

const STARVED_ENV: &str = "WSFS_REWIND_STARVED_CHILD";
/// More files than a rewind keeps in flight (64), so its batches fill and its descriptors for
/// them run out.
const STARVED_FILES: usize = 150;

/// Child of `a_rewind_short_of_descriptors_restores_all_or_nothing`: RLIMIT_NOFILE is
/// process-wide, so it runs alone. Prints `succeeded <n> failed <m> least <k>` (`least`: the
/// fewest free descriptors a rewind succeeded with).
#[test]
#[ignore = "child process of a_rewind_short_of_descriptors_restores_all_or_nothing"]
fn rewind_starved_child() {
    if std::env::var(STARVED_ENV).is_err() {
        return;
    }
    lower_open_file_limit(256);
    let (mut succeeded, mut failed, mut least) = (0, 0, usize::MAX);
    // Far fewer than the files restored: a rewind that held a descriptor per file in flight
    // fails at every count.
    for free in 0..16 {
        let c = Case::new();
        for i in 0..STARVED_FILES {
            c.write(&file(i), "base\n");
        }
        let mut s = c.open("starved");
        for i in 0..STARVED_FILES {
            s.write_file(&file(i), format!("{i} at k\n").as_bytes(), 0o644)
                .unwrap();
        }
        let k = ckpt(&mut s, "k");
        for i in 0..STARVED_FILES {
            s.write_file(&file(i), format!("{i} later\n").as_bytes(), 0o644)
                .unwrap();
        }
        let held = take_all_descriptors_but(free);
        let outcome = s.rewind(&RewindOptions { id: k.clone() });
        drop(held);
        drop(s);
        // A failed rewind either changed nothing or is finished by the next open.
        let s = c.open("starved");
        let shown: Vec<String> = (0..STARVED_FILES)
            .map(|i| c.view("starved", &file(i)).unwrap())
            .collect();
        let at_k = (0..STARVED_FILES).all(|i| shown[i] == format!("{i} at k\n"));
        let later = (0..STARVED_FILES).all(|i| shown[i] == format!("{i} later\n"));
        match outcome {
            Ok(()) => {
                succeeded += 1;
                least = least.min(free);
                assert!(at_k, "{free} free: the rewind succeeded but {shown:?}");
            }
            Err(e) => {
                failed += 1;
                eprintln!("{free}: {e:?}");
                assert!(at_k || later, "{free} free: {e:?} left a mix: {shown:?}");
            }
        }
        assert_eq!(changed(&s).len(), STARVED_FILES, "{free} free");
    }
    println!("succeeded {succeeded} failed {failed} least {least}");
}

/// With few descriptors left, a rewind restores every file or none (after the next open),
/// and it needs a few descriptors, not one per restored file whose writes are in flight.
#[test]
fn a_rewind_short_of_descriptors_restores_all_or_nothing() {
    let log = run_child_test(&crate::test_name!(rewind_starved_child), STARVED_ENV, "1");
    let counts: Vec<usize> = log
        .split_once("succeeded ")
        .expect("the child's counts")
        .1
        .split_whitespace()
        .step_by(2)
        .take(3)
        .map(|n| n.parse().unwrap())
        .collect();
    let (succeeded, failed, least) = (counts[0], counts[1], counts[2]);
    assert!(
        failed > 0,
        "no descriptor count was too few: the test proves nothing\n{log}"
    );
    assert!(
        succeeded > 0,
        "no rewind of {STARVED_FILES} files succeeded with up to 15 free descriptors\n{log}"
    );
    assert!(least > 0, "a rewind succeeded without a descriptor\n{log}");
}

const MANY_DIRS_ENV: &str = "WSFS_MANY_DIRS_CHILD";
/// More directories than the child's descriptor limit.
const MANY_DIRS: usize = 300;

/// Child of `a_rewind_across_more_directories_than_descriptors_succeeds`.
#[test]
#[ignore = "child process of a_rewind_across_more_directories_than_descriptors_succeeds"]
fn many_directories_child() {
    if std::env::var(MANY_DIRS_ENV).is_err() {
        return;
    }
    let before = lower_open_file_limit(128);
    let c = Case::new();
    let path = |i: usize| format!("d{i:03}/f.txt");
    for i in 0..MANY_DIRS {
        c.write(&path(i), "base\n");
    }
    let mut s = c.open("wide");
    for i in 0..MANY_DIRS {
        s.write_file(&path(i), format!("{i} at k\n").as_bytes(), 0o644)
            .unwrap();
    }
    let k = ckpt(&mut s, "k");
    for i in 0..MANY_DIRS {
        s.write_file(&path(i), format!("{i} later\n").as_bytes(), 0o644)
            .unwrap();
    }
    rewind(&mut s, &k);
    for i in 0..MANY_DIRS {
        assert_eq!(c.view("wide", &path(i)).unwrap(), format!("{i} at k\n"));
    }
    // A commit holds each base file it replaces, locked, until all commit (as apply_patch
    // does): 300 do not fit in 128 descriptors. It fails before anything changes.
    let e = s.commit(&CommitOptions::default(), &ctl()).unwrap_err();
    assert!(e.message.contains("no file descriptor left"), "{e:?}");
    assert_eq!(changed(&s).len(), MANY_DIRS);
    for i in 0..MANY_DIRS {
        assert_eq!(c.read(&path(i)), b"base\n");
    }
    rustix::process::setrlimit(rustix::process::Resource::Nofile, before).unwrap();
    let r = s.commit(&CommitOptions::default(), &ctl()).unwrap();
    assert!(r.committed && r.warnings.is_empty(), "{r:?}");
    assert_eq!(r.files.len(), MANY_DIRS);
    assert!(
        changed(&s).is_empty(),
        "the session still holds {:?}",
        changed(&s)
    );
    for i in 0..MANY_DIRS {
        assert_eq!(c.read(&path(i)), format!("{i} at k\n").as_bytes());
    }
    println!("many directories: done");
}

/// A rewind fsyncs each directory it changed once; it must not hold a descriptor per
/// directory until then (with 300 directories under a limit of 128, holding them failed the
/// rewind with `Too many open files`). A commit of 300 files does need more than 128 (it
/// holds each file it replaces): it fails changing nothing, and commits once the limit is
/// back.
#[test]
fn a_rewind_across_more_directories_than_descriptors_succeeds() {
    let log = run_child_test(
        &crate::test_name!(many_directories_child),
        MANY_DIRS_ENV,
        "1",
    );
    assert!(log.contains("many directories: done"), "{log}");
}

const MANY_CKPTS_ENV: &str = "WSFS_MANY_CHECKPOINTS_CHILD";

/// Child of `a_rewind_across_more_checkpoints_than_descriptors_succeeds`.
#[test]
#[ignore = "child process of a_rewind_across_more_checkpoints_than_descriptors_succeeds"]
fn many_checkpoints_child() {
    if std::env::var(MANY_CKPTS_ENV).is_err() {
        return;
    }
    const N: usize = 300;
    lower_open_file_limit(128);
    let c = Case::new();
    let path = |i: usize| format!("f{i:03}.txt");
    for i in 0..N {
        c.write(&path(i), "base\n");
    }
    let mut s = c.open("deep");
    for i in 0..N {
        s.write_file(&path(i), format!("{i} first\n").as_bytes(), 0o644)
            .unwrap();
    }
    // Checkpoint i holds the one image of file i: a rewind to the first reads all N logs.
    let first = ckpt(&mut s, "0");
    s.write_file(&path(0), b"0 later\n", 0o644).unwrap();
    for i in 1..N {
        ckpt(&mut s, &i.to_string());
        s.write_file(&path(i), format!("{i} later\n").as_bytes(), 0o644)
            .unwrap();
    }
    assert_eq!(s.checkpoints().unwrap().len(), N);
    rewind(&mut s, &first);
    for i in 0..N {
        assert_eq!(c.view("deep", &path(i)).unwrap(), format!("{i} first\n"));
    }
    assert_eq!(s.checkpoints().unwrap().len(), 1);
    println!("many checkpoints: done");
}

/// A rewind reads the image logs of every checkpoint after its target; it opens them a few
/// at a time (holding all 300 under a limit of 128 failed it).
#[test]
fn a_rewind_across_more_checkpoints_than_descriptors_succeeds() {
    let log = run_child_test(
        &crate::test_name!(many_checkpoints_child),
        MANY_CKPTS_ENV,
        "1",
    );
    assert!(log.contains("many checkpoints: done"), "{log}");
}
