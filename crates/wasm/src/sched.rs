//! `poll_oneoff`, `sched_yield` and sleeping for a tool: never past its deadline.
//!
//! wasi-common's own scheduler sleeps for whatever the guest asks, which fuel cannot stop (a
//! sleeping guest burns none). This one sleeps in short steps and checks the [`Watch`] between
//! them, so a cancel or the deadline ends a sleep within a step. A tool's files are all in
//! memory or regular files, which are always ready, so read and write subscriptions complete
//! at once.

use super::watch::Watch;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmi_wasi::wasi_common::sched::subscription::{RwEventFlags, Subscription};
use wasmi_wasi::wasi_common::sched::{Poll, WasiSched};
use wasmi_wasi::wasi_common::Error;

/// Longest uninterrupted sleep: a cancel is noticed within this.
pub const SLEEP_STEP: Duration = Duration::from_millis(2);

pub struct WatchedSched {
    watch: Arc<Watch>,
}

impl WatchedSched {
    pub fn new(watch: Arc<Watch>) -> Self {
        WatchedSched { watch }
    }

    /// Sleeps until `until`, in steps; traps (with the watch's reason recorded) when the tool
    /// must stop first.
    fn sleep_until(&self, until: Instant) -> Result<(), Error> {
        loop {
            if self.watch.check().is_err() {
                return Err(Error::trap(wiggle::anyhow::anyhow!(
                    "stopped while sleeping"
                )));
            }
            let now = Instant::now();
            if now >= until {
                return Ok(());
            }
            std::thread::sleep((until - now).min(SLEEP_STEP));
        }
    }
}

#[wiggle::async_trait]
impl WasiSched for WatchedSched {
    async fn poll_oneoff<'a>(&self, poll: &mut Poll<'a>) -> Result<(), Error> {
        let mut ready = false;
        for subscription in poll.rw_subscriptions() {
            match subscription {
                Subscription::Read(read) => {
                    let bytes = read.file.num_ready_bytes()?;
                    read.complete(bytes.max(1), RwEventFlags::empty());
                    ready = true;
                }
                Subscription::Write(write) => {
                    write.complete(0, RwEventFlags::empty());
                    ready = true;
                }
                Subscription::MonotonicClock(_) => {}
            }
        }
        if ready {
            return Ok(());
        }
        if let Some(clock) = poll.earliest_clock_deadline() {
            let wait = clock.duration_until().unwrap_or_default();
            self.sleep_until(Instant::now() + wait)?;
        }
        Ok(())
    }

    async fn sched_yield(&self) -> Result<(), Error> {
        std::thread::yield_now();
        Ok(())
    }

    async fn sleep(&self, duration: Duration) -> Result<(), Error> {
        let until = Instant::now()
            .checked_add(duration)
            .unwrap_or_else(|| self.watch.deadline() + SLEEP_STEP);
        self.sleep_until(until)
    }
}
