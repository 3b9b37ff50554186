//! What a walk reports: why reading a directory stopped, and what it found and left out.

use crate::error::WsfsError;

/// Why reading a directory stopped.
#[derive(Debug)]
pub enum Stop {
    Io(std::io::Error),
    Call(WsfsError),
}

impl Stop {
    /// The error, naming `display` for an I/O failure.
    pub fn into_error(self, display: &str) -> WsfsError {
        match self {
            Stop::Io(e) => WsfsError::from_io(&e, display),
            Stop::Call(e) => e,
        }
    }
}

/// Counts of what a walk found and left out.
#[derive(Debug, Default, Clone, Copy)]
pub struct WalkStats {
    /// Entries passed to the caller.
    pub entries: u64,
    /// Hidden names (and wsfs's own temp files) left out.
    pub hidden: u64,
    /// Entries a `.gitignore` rule left out.
    pub ignored: u64,
    /// Entries the host's deny hook left out.
    pub denied: u64,
    /// Protected system locations left out (unrestricted mode).
    pub protected: u64,
    /// Directories that could not be opened or read, or were replaced during the walk
    /// (such as a directory swapped for a symlink): skipped, never followed.
    pub refused: u64,
}
