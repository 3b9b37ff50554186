//! Programs on the session (the developer tools in overlay mode): each run gets directories
//! of its own beside the session's upper tree (`overlay::adopt`), and what it changed is
//! adopted into the session when it ends. The view's mount then shows less than the upper
//! tree holds, so it is marked dirty: the next call mounts it afresh before it starts.

use super::SessionView;
use crate::error::Result;
use crate::overlay::adopt::{Adopted, RunDirs};
use std::sync::atomic::Ordering;

/// One program run on the session.
#[derive(Debug)]
pub struct Run(RunDirs);

impl Run {
    pub fn dirs(&self) -> &RunDirs {
        &self.0
    }
}

impl SessionView {
    /// Makes the directories of a run (empty upper and work).
    pub fn begin_run(&self) -> Result<Run> {
        self.with(|s| s.start_run()).map(Run)
    }

    /// Adopts what the run changed into the session when the program `ran` (it may have
    /// changed files even if it failed), then removes the run's directories.
    pub fn end_run(&self, run: Run, ran: bool) -> Result<Adopted> {
        self.with(|s| {
            let adopted = if ran {
                s.adopt_run(&run.0)
            } else {
                Ok(Adopted::default())
            };
            s.end_run(&run.0);
            if adopted.as_ref().map_or(true, |a| a.paths > 0) {
                self.dirty.store(true, Ordering::Release);
            }
            adopted
        })
    }
}
