//! A tool's stdout and stderr: in-memory pipes with a byte limit.
//!
//! stdout carries the result, so going over its limit stops the tool at once (`too_large`)
//! instead of letting it spend its fuel on output nobody reads. stderr is for diagnostics: what
//! fits is kept (shown when the tool fails) and the rest dropped silently.

use super::watch::Watch;
use crate::error::{ErrorCode, WsfsError};
use std::any::Any;
use std::io::IoSlice;
use std::sync::{Arc, Mutex};
use wasmi_wasi::wasi_common::file::{FileType, WasiFile};
use wasmi_wasi::wasi_common::Error;

/// What a tool wrote on one of its output streams.
pub type Captured = Arc<Mutex<Vec<u8>>>;

pub struct OutputPipe {
    buffer: Captured,
    limit: usize,
    /// stdout: going over the limit stops the tool. stderr: the excess is dropped.
    stop_when_full: Option<Arc<Watch>>,
}

impl OutputPipe {
    pub fn stdout(limit: usize, watch: Arc<Watch>) -> (OutputPipe, Captured) {
        Self::new(limit, Some(watch))
    }

    pub fn stderr(limit: usize) -> (OutputPipe, Captured) {
        Self::new(limit, None)
    }

    fn new(limit: usize, stop_when_full: Option<Arc<Watch>>) -> (OutputPipe, Captured) {
        let buffer = Captured::default();
        let pipe = OutputPipe {
            buffer: buffer.clone(),
            limit,
            stop_when_full,
        };
        (pipe, buffer)
    }
}

#[wiggle::async_trait]
impl WasiFile for OutputPipe {
    fn as_any(&self) -> &dyn Any {
        self
    }

    async fn get_filetype(&self) -> Result<FileType, Error> {
        Ok(FileType::Pipe)
    }

    async fn write_vectored<'a>(&self, bufs: &[IoSlice<'a>]) -> Result<u64, Error> {
        let mut buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        let mut written = 0u64;
        for buf in bufs {
            let room = self.limit.saturating_sub(buffer.len());
            if buf.len() > room {
                if let Some(watch) = &self.stop_when_full {
                    let reason = WsfsError::new(
                        ErrorCode::TooLarge,
                        format!(
                            "{} wrote more than {} bytes on stdout (the host's max_output_bytes) \
                             and was stopped; make its result smaller",
                            watch.tool(),
                            self.limit
                        ),
                    );
                    watch.stop(reason);
                    return Err(Error::trap(wiggle::anyhow::anyhow!("stdout limit reached")));
                }
                buffer.extend_from_slice(&buf[..room]);
            } else {
                buffer.extend_from_slice(buf);
            }
            written += buf.len() as u64;
        }
        Ok(written)
    }

    async fn writable(&self) -> Result<(), Error> {
        Ok(())
    }
}
