//! `delete_file` and `move_file` under attack: a directory inside the tree keeps being swapped
//! (`RENAME_EXCHANGE`) with a symlink to an outside directory holding canary files, thousands
//! of times, while the tools run. Nothing outside may ever be removed, moved or added to:
//! the outside tree is compared with its first snapshot after every attempt.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// `levels` nested directories, each with a file, and a file at the bottom.
fn nested(top: &Path, levels: usize, content: &str) {
    let mut dir = top.to_path_buf();
    for level in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
        .iter()
        .take(levels)
    {
        fs::create_dir_all(dir.join(level)).unwrap();
        fs::write(dir.join("0.txt"), content).unwrap();
        dir = dir.join(level);
    }
    fs::write(dir.join("bottom.txt"), content).unwrap();
}

/// A thread exchanging `a` and `b` whenever `active`; `pause` (held while the test rebuilds
/// the tree) is also held around every exchange, so the two never overlap.
struct Swapper {
    active: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    pause: Arc<Mutex<()>>,
    swaps: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    fn start(a: PathBuf, b: PathBuf) -> Swapper {
        let active = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let pause = Arc::new(Mutex::new(()));
        let swaps = Arc::new(AtomicU64::new(0));
        let thread = {
            let (active, stop, pause, swaps) =
                (active.clone(), stop.clone(), pause.clone(), swaps.clone());
            let (a, b) = (c_path(&a), c_path(&b));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if !active.load(Ordering::Relaxed) {
                        // Idle without taking a core from the call under test.
                        std::thread::park_timeout(std::time::Duration::from_millis(5));
                        continue;
                    }
                    let _g = pause.lock().unwrap();
                    if active.load(Ordering::Relaxed) && exchange(&a, &b) {
                        swaps.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        };
        Swapper {
            active,
            stop,
            pause,
            swaps,
            thread: Some(thread),
        }
    }

    /// Runs `f` with the swapper stopped.
    fn paused<T>(&self, f: impl FnOnce() -> T) -> T {
        self.active.store(false, Ordering::Relaxed);
        let _g = self.pause.lock().unwrap();
        f()
    }

    /// Runs `f` while the swapper swaps; returns its result and how many swaps happened.
    fn racing<T>(&self, f: impl FnOnce() -> T) -> (T, u64) {
        let woken = self.swaps.load(Ordering::Relaxed);
        self.active.store(true, Ordering::Relaxed);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
        // Start the call while the swapper is busy swapping, from either state.
        let waiting = std::time::Instant::now();
        while self.swaps.load(Ordering::Relaxed) == woken
            && waiting.elapsed() < std::time::Duration::from_millis(100)
        {
            std::thread::yield_now();
        }
        let before = self.swaps.load(Ordering::Relaxed);
        let out = f();
        self.active.store(false, Ordering::Relaxed);
        (out, self.swaps.load(Ordering::Relaxed) - before)
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Arena {
    f: Fixture,
    outside: PathBuf,
    canaries: Snapshot,
}

impl Arena {
    fn new() -> Arena {
        let f = Fixture::on_tmpfs();
        let outside = f.base.join("outside");
        nested(&outside, 3, "canary\n");
        let canaries = snapshot(&outside);
        Arena {
            f,
            outside,
            canaries,
        }
    }

    #[track_caller]
    fn check_outside(&self, attempt: usize, what: &Value) {
        assert_eq!(
            snapshot(&self.outside),
            self.canaries,
            "attempt {attempt}: something outside changed after {}",
            short(what)
        );
    }

    /// `t/sw` (a nested directory) and `t/sw_link` (a symlink to the outside directory; an
    /// absolute one on even attempts, a relative one on odd ones).
    fn build(&self, attempt: usize) {
        // Overlay: the last attempt's deletions and moves are in the session, and would hide
        // the tree rebuilt in the base.
        self.f.discard_session();
        let t = self.f.p("t");
        if t.exists() {
            fs::remove_dir_all(&t).unwrap();
        }
        // Deeper than the deletion keeps handles for: it reopens `sw` beneath `t` on its way
        // back up, after the swap may have happened.
        nested(&t.join("sw"), 10, "inside\n");
        fs::write(t.join("g.txt"), "g").unwrap();
        let target = if attempt.is_multiple_of(2) {
            self.outside.clone()
        } else {
            PathBuf::from("../../outside")
        };
        std::os::unix::fs::symlink(target, t.join("sw_link")).unwrap();
    }
}

const ATTEMPTS: usize = 2000;

/// The two tests take turns: each needs a core for its swapper and one for its calls.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

crate::backend_tests! {
#[test]
fn deleting_while_a_directory_becomes_a_symlink_never_touches_outside() {
    let _heavy = cpu_heavy();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let arena = Arena::new();
    let swapper = Swapper::start(arena.f.p("t/sw"), arena.f.p("t/sw_link"));
    let (mut raced, mut complete, mut partial) = (0, 0, 0);
    for attempt in 0..ATTEMPTS {
        swapper.paused(|| arena.build(attempt));
        // Alternate: the whole tree (the swap happens inside it), or the swapped name itself.
        let path = if attempt % 3 == 2 { "t/sw" } else { "t" };
        let (v, swaps) = swapper.racing(|| {
            call(
                arena.f.ws,
                "delete_file",
                json!({"path": path, "recursive": true}),
            )
        });
        arena.check_outside(attempt, &v);
        if swaps > 0 {
            raced += 1;
        }
        match v["ok"].as_bool() {
            Some(true) if v["data"]["deleted"] == json!(true) => complete += 1,
            Some(true) => partial += 1,
            _ => {
                assert_err_in(&v, &["io_error", "path_not_found"]);
            }
        }
    }
    eprintln!(
        "{ATTEMPTS} attempts, {raced} raced with a swap: {complete} complete, {partial} partial, the rest refused"
    );
    assert!(
        raced > ATTEMPTS / 20,
        "the swap rarely raced the deletions ({raced})"
    );
}

#[test]
fn moving_while_a_directory_becomes_a_symlink_never_touches_outside() {
    let _heavy = cpu_heavy();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let arena = Arena::new();
    let swapper = Swapper::start(arena.f.p("t/sw"), arena.f.p("t/sw_link"));
    let mut raced = 0;
    let (mut moved_in, mut moved_out, mut gave_up) = (0, 0, 0);
    let outside_before = fs::read_dir(&arena.outside).unwrap().count();
    for attempt in 0..ATTEMPTS {
        swapper.paused(|| {
            for name in ["moved_f", "moved_dir", "moved_deep"] {
                let p = arena.f.p(name);
                match fs::symlink_metadata(&p) {
                    Ok(m) if m.is_dir() => fs::remove_dir_all(&p).unwrap(),
                    Ok(_) => fs::remove_file(&p).unwrap(),
                    Err(_) => {}
                }
            }
            arena.build(attempt);
        });
        let calls = [
            json!({"src": "t/sw/0.txt", "dst": "moved_f"}),
            json!({"src": "t/sw/a/b/c/0.txt", "dst": "moved_deep"}),
            json!({"src": "t/g.txt", "dst": "t/sw/g.txt"}),
            json!({"src": "t/g.txt", "dst": "t/sw/new/g.txt"}),
            json!({"src": "t/sw", "dst": "moved_dir"}),
        ];
        let call_at = attempt % calls.len();
        let (v, swaps) = swapper.racing(|| call(arena.f.ws, "move_file", calls[call_at].clone()));
        arena.check_outside(attempt, &v);
        assert_eq!(
            fs::read_dir(&arena.outside).unwrap().count(),
            outside_before,
            "attempt {attempt}: something was moved outside: {}",
            short(&v)
        );
        if swaps > 0 {
            raced += 1;
        }
        if v["ok"] == json!(true) {
            if call_at == 2 || call_at == 3 {
                moved_in += 1;
            }
        } else if arena.f.overlay_gave_up_on_a_changing_base(&v) {
            gave_up += 1;
        } else {
            assert_err_in(
                &v,
                &["outside_workspace", "path_not_found", "not_a_directory"],
            );
            if call_at < 2 {
                moved_out += 1;
            }
        }
    }
    eprintln!(
        "{ATTEMPTS} attempts, {raced} raced with a swap; {moved_in} moves into sw succeeded, {moved_out} moves out of sw were refused, {gave_up} gave up on a base changing faster than the view could follow (overlay only)"
    );
    assert!(
        raced > ATTEMPTS / 20,
        "the swap rarely raced the moves ({raced})"
    );
    // Both states were seen: sw as the directory (moves into it), and as the symlink.
    assert!(
        moved_in > 0 && moved_out > 0,
        "the swap never raced the moves"
    );
}
}
