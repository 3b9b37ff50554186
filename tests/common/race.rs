//! The symlink-swap race tests' tools: atomic renames by path, the exchanger thread, and the
//! directory/symlink pair they swap.

use super::Fixture;
use std::ffi::{CString, OsString};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Held for the whole of a test whose threads spin for seconds (the symlink swappers, a fork
/// bomb): two such tests in the one test binary would share the machine's cores, and a swapper
/// starved by another test's swapper races nothing, so its "barely ran" check fails and the
/// test proves nothing. They take turns; every other test still runs beside them.
pub fn cpu_heavy() -> MutexGuard<'static, ()> {
    static HEAVY: Mutex<()> = Mutex::new(());
    // A test that panicked while holding it leaves nothing to repair: the lock guards no data.
    HEAVY.lock().unwrap_or_else(|p| p.into_inner())
}

/// `p` as a C string for a raw syscall (panics on an interior NUL).
pub fn c_path(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// `renameat2(a, b, flags)` on two paths; true if the kernel did it (errno is left to read).
pub fn renameat2(a: &CString, b: &CString, flags: libc::c_uint) -> bool {
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            flags,
        )
    };
    r == 0
}

/// Atomically exchanges the names `a` and `b` (`RENAME_EXCHANGE`); false if either is missing.
pub fn exchange(a: &CString, b: &CString) -> bool {
    renameat2(a, b, libc::RENAME_EXCHANGE)
}

/// Keeps atomically exchanging the names `a` and `b` (`renameat2(RENAME_EXCHANGE)`) until
/// `stop`, counting the swaps: the race partner of the symlink-swap tests.
pub fn spawn_exchanger(
    a: &Path,
    b: &Path,
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
) -> std::thread::JoinHandle<()> {
    let (a, b) = (c_path(a), c_path(b));
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            assert!(
                exchange(&a, &b),
                "renameat2: {}",
                std::io::Error::last_os_error()
            );
            swaps.fetch_add(1, Ordering::Relaxed);
        }
    })
}

/// Builds `base/outside` (`sub/`, and `f.txt` holding `outside_text`) and, in the root, `d`
/// (`sub/`, and `f.txt` holding "INSIDE\n") and `s`, a symlink to outside; returns outside.
pub fn swap_pair(f: &Fixture, outside_text: &str) -> PathBuf {
    let outside = f.base.join("outside");
    fs::create_dir_all(outside.join("sub")).unwrap();
    fs::write(outside.join("f.txt"), outside_text).unwrap();
    fs::create_dir_all(f.p("d/sub")).unwrap();
    f.write("d/f.txt", "INSIDE\n");
    std::os::unix::fs::symlink(&outside, f.p("s")).unwrap();
    outside
}

/// The names directly in `dir`, sorted: equal before and after a race only if nothing was
/// created or removed there.
pub fn sorted_names(dir: &Path) -> Vec<OsString> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    names
}

/// How many calls a swap-race test makes on the current backend, given the host's number:
/// a quarter on the overlay. An overlay fixture mounts a fresh view of the base before
/// every call (`session_refresh_ms` 0), about 10 ms here (most of it the kernel freeing the
/// old mount) against microseconds for a host call; each overlay call still meets the base
/// as the swaps left it at that moment, as a host call does.
pub fn race_attempts(host: u64) -> u64 {
    match super::current_backend() {
        super::Backend::Host => host,
        super::Backend::Overlay => host / 4,
    }
}

/// How long a race test runs and what it aims for (issue 30 item 12: a safety check must not
/// fail because the machine is slow). The calls go on until both the target attempts and the
/// target swaps are reached, or the time budget runs out, whichever comes first; the test then
/// reports how many ran and fails only on a wrong outcome, or when the race was not exercised
/// at all ([`RaceReport::assert_exercised`]), which any machine reaches in the budget.
pub struct RaceBudget {
    test: &'static str,
    started: std::time::Instant,
    budget: std::time::Duration,
    target_attempts: u64,
    target_swaps: u64,
    swaps_at_start: u64,
}

impl RaceBudget {
    /// Starts the clock; `swaps` is the swappers' counter (the swaps the calls overlap are
    /// those after this point).
    pub fn start(
        test: &'static str,
        target_attempts: u64,
        target_swaps: u64,
        budget: std::time::Duration,
        swaps: &AtomicU64,
    ) -> RaceBudget {
        RaceBudget {
            test,
            started: std::time::Instant::now(),
            budget,
            target_attempts,
            target_swaps,
            swaps_at_start: swaps.load(Ordering::Relaxed),
        }
    }

    fn swaps_since_start(&self, swaps: &AtomicU64) -> u64 {
        swaps
            .load(Ordering::Relaxed)
            .saturating_sub(self.swaps_at_start)
    }

    /// Whether to make more attempts: a target not reached and time left.
    pub fn go_on(&self, attempts: u64, swaps: &AtomicU64) -> bool {
        let short =
            attempts < self.target_attempts || self.swaps_since_start(swaps) < self.target_swaps;
        short && self.started.elapsed() < self.budget
    }

    /// Call when the attempts are over, before stopping the swappers: prints how many attempts
    /// and swaps overlapped. Check the report once the swappers are stopped.
    pub fn finish(&self, attempts: u64, swaps: &AtomicU64) -> RaceReport {
        let overlapped_swaps = self.swaps_since_start(swaps);
        eprintln!(
            "{}: {attempts} attempts (target {}) and {overlapped_swaps} swaps (target {}) in \
             {:?} (budget {:?})",
            self.test,
            self.target_attempts,
            self.target_swaps,
            self.started.elapsed(),
            self.budget
        );
        RaceReport {
            test: self.test,
            attempts,
            overlapped_swaps,
        }
    }
}

/// What a race test ran, from [`RaceBudget::finish`].
pub struct RaceReport {
    test: &'static str,
    pub attempts: u64,
    pub overlapped_swaps: u64,
}

impl RaceReport {
    /// Fails only if no attempt ran or no swap happened while they ran: the test then checked
    /// nothing. Any machine gets past this within the budget, however slow.
    pub fn assert_exercised(&self) {
        assert!(self.attempts > 0, "{}: no attempt ran", self.test);
        assert!(
            self.overlapped_swaps > 0,
            "{}: no swap happened while the calls ran: the race was not exercised",
            self.test
        );
    }
}
