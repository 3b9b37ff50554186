//! Files a tool opened in `/workspace`.
//!
//! - [`ReadHandle`]: opened for reading only; holds the descriptor the resolver opened (a
//!   regular file, never followed at the leaf by the open), so what it reads is the file that
//!   was checked.
//! - [`BufferedFile`]: opened for writing; the tool writes into a buffer of at most
//!   `max_write_bytes` (and all its buffers together at most its memory limit), which is
//!   committed when the tool closes the file (or exits cleanly with it open): atomically, after
//!   the resolver and the policy are asked again. A tool that is stopped or crashes leaves its
//!   open files unchanged.

use super::run_files::{HandleSlot, RunFiles};
use super::{errno, GuestStat};
use std::any::Any;
use std::io::{IoSlice, IoSliceMut, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use wasmi_wasi::wasi_common::file::{Advice, FileType, Filestat, WasiFile};
use wasmi_wasi::wasi_common::snapshots::preview_1::types::Errno;
use wasmi_wasi::wasi_common::Error;

/// Most bytes one read or write moves, so one host call stays short (a shorter read is
/// allowed by POSIX; the tool reads again).
pub const MAX_TRANSFER: usize = 1 << 20;

fn io_error(e: std::io::Error) -> Error {
    Error::from(e)
}

/// The first buffer with room, cut to [`MAX_TRANSFER`].
fn first_buffer<'b>(bufs: &'b mut [IoSliceMut<'_>]) -> Option<&'b mut [u8]> {
    let buf = bufs.iter_mut().find(|b| !b.is_empty())?;
    let n = buf.len().min(MAX_TRANSFER);
    Some(&mut buf[..n])
}

pub struct ReadHandle {
    _slot: HandleSlot,
    file: std::fs::File,
    stat: GuestStat,
}

impl ReadHandle {
    pub fn new(slot: HandleSlot, file: std::fs::File, stat: GuestStat) -> Self {
        ReadHandle {
            _slot: slot,
            file,
            stat,
        }
    }
}

#[wiggle::async_trait]
impl WasiFile for ReadHandle {
    fn as_any(&self) -> &dyn Any {
        self
    }

    async fn get_filetype(&self) -> Result<FileType, Error> {
        Ok(FileType::RegularFile)
    }

    async fn get_filestat(&self) -> Result<Filestat, Error> {
        let mut stat = self.stat;
        stat.size = self.file.metadata().map_err(io_error)?.len();
        Ok(stat.filestat())
    }

    async fn read_vectored<'a>(&self, bufs: &mut [IoSliceMut<'a>]) -> Result<u64, Error> {
        let Some(buf) = first_buffer(bufs) else {
            return Ok(0);
        };
        Ok((&self.file).read(buf).map_err(io_error)? as u64)
    }

    async fn read_vectored_at<'a>(
        &self,
        bufs: &mut [IoSliceMut<'a>],
        offset: u64,
    ) -> Result<u64, Error> {
        let Some(buf) = first_buffer(bufs) else {
            return Ok(0);
        };
        Ok(self.file.read_at(buf, offset).map_err(io_error)? as u64)
    }

    async fn seek(&self, pos: SeekFrom) -> Result<u64, Error> {
        (&self.file).seek(pos).map_err(io_error)
    }

    async fn advise(&self, _offset: u64, _len: u64, _advice: Advice) -> Result<(), Error> {
        Ok(())
    }

    async fn readable(&self) -> Result<(), Error> {
        Ok(())
    }
}

struct Buffer {
    data: Vec<u8>,
    position: u64,
    /// Whether closing must commit: a new file, a truncated one, or any change.
    changed: bool,
}

pub struct BufferedFile {
    slot: HandleSlot,
    path: PathBuf,
    buffer: Mutex<Buffer>,
    append: bool,
    exclusive: bool,
    max: u64,
}

impl BufferedFile {
    /// `content` is what the write starts from; `changed` whether closing must commit even if
    /// the tool writes nothing (it creates or truncates the file). Its bytes count against the
    /// run's buffer budget (`ENOMEM` when they do not fit).
    pub fn new(
        slot: HandleSlot,
        path: PathBuf,
        content: Vec<u8>,
        changed: bool,
        append: bool,
        exclusive: bool,
    ) -> Result<Self, Error> {
        let max = slot.session().fs.max_file_bytes();
        slot.session().reserve_buffer(content.len() as u64, &path)?;
        Ok(BufferedFile {
            slot,
            path,
            buffer: Mutex::new(Buffer {
                data: content,
                position: 0,
                changed,
            }),
            append,
            exclusive,
            max,
        })
    }

    /// Resizes the buffer to `len`, within the run's buffer budget.
    fn resize(&self, buffer: &mut Buffer, len: usize) -> Result<(), Error> {
        let old = buffer.data.len();
        if len > old {
            self.session()
                .reserve_buffer((len - old) as u64, &self.path)?;
        } else {
            self.session().release_buffer((old - len) as u64);
        }
        buffer.data.resize(len, 0);
        Ok(())
    }

    fn session(&self) -> &Arc<RunFiles> {
        self.slot.session()
    }

    fn buffer(&self) -> std::sync::MutexGuard<'_, Buffer> {
        self.buffer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes `bufs` at `at` (the end, in append mode); refuses to grow past `max` (`EFBIG`).
    fn write_at(&self, buffer: &mut Buffer, bufs: &[IoSlice<'_>], at: u64) -> Result<u64, Error> {
        let len: u64 = bufs.iter().map(|b| b.len() as u64).sum();
        let at = if self.append {
            buffer.data.len() as u64
        } else {
            at
        };
        let end = at.checked_add(len).ok_or_else(|| errno(Errno::Fbig))?;
        if end > self.max {
            let refusal = crate::error::WsfsError::new(
                crate::error::ErrorCode::TooLarge,
                format!(
                    "{} would grow past max_write_bytes ({} bytes)",
                    self.path.display(),
                    self.max
                ),
            );
            return Err(self.session().refused("write", refusal));
        }
        let (start, end) = (at as usize, end as usize);
        if buffer.data.len() < end {
            self.resize(buffer, end)?;
        }
        let mut offset = start;
        for buf in bufs {
            buffer.data[offset..offset + buf.len()].copy_from_slice(buf);
            offset += buf.len();
        }
        buffer.changed |= len > 0;
        Ok(len)
    }

    fn read_at(buffer: &Buffer, bufs: &mut [IoSliceMut<'_>], at: u64) -> u64 {
        let Some(buf) = first_buffer(bufs) else {
            return 0;
        };
        let start = (at as usize).min(buffer.data.len());
        let n = buf.len().min(buffer.data.len() - start);
        buf[..n].copy_from_slice(&buffer.data[start..start + n]);
        n as u64
    }
}

#[wiggle::async_trait]
impl WasiFile for BufferedFile {
    fn as_any(&self) -> &dyn Any {
        self
    }

    async fn get_filetype(&self) -> Result<FileType, Error> {
        Ok(FileType::RegularFile)
    }

    async fn get_filestat(&self) -> Result<Filestat, Error> {
        Ok(Filestat {
            device_id: 0,
            inode: 0,
            filetype: FileType::RegularFile,
            nlink: 1,
            size: self.buffer().data.len() as u64,
            atim: None,
            mtim: None,
            ctim: None,
        })
    }

    async fn set_filestat_size(&self, size: u64) -> Result<(), Error> {
        if size > self.max {
            return Err(errno(Errno::Fbig));
        }
        let mut buffer = self.buffer();
        self.resize(&mut buffer, size as usize)?;
        buffer.changed = true;
        Ok(())
    }

    async fn read_vectored<'a>(&self, bufs: &mut [IoSliceMut<'a>]) -> Result<u64, Error> {
        let mut buffer = self.buffer();
        let n = Self::read_at(&buffer, bufs, buffer.position);
        buffer.position += n;
        Ok(n)
    }

    async fn read_vectored_at<'a>(
        &self,
        bufs: &mut [IoSliceMut<'a>],
        offset: u64,
    ) -> Result<u64, Error> {
        Ok(Self::read_at(&self.buffer(), bufs, offset))
    }

    async fn write_vectored<'a>(&self, bufs: &[IoSlice<'a>]) -> Result<u64, Error> {
        let mut buffer = self.buffer();
        let at = buffer.position;
        let n = self.write_at(&mut buffer, bufs, at)?;
        buffer.position = match self.append {
            true => buffer.data.len() as u64,
            false => at + n,
        };
        Ok(n)
    }

    async fn write_vectored_at<'a>(&self, bufs: &[IoSlice<'a>], offset: u64) -> Result<u64, Error> {
        let mut buffer = self.buffer();
        self.write_at(&mut buffer, bufs, offset)
    }

    async fn seek(&self, pos: SeekFrom) -> Result<u64, Error> {
        let mut buffer = self.buffer();
        let target = match pos {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::Current(d) => buffer.position.checked_add_signed(d),
            SeekFrom::End(d) => (buffer.data.len() as u64).checked_add_signed(d),
        };
        let target = target.ok_or_else(|| errno(Errno::Inval))?;
        buffer.position = target;
        Ok(target)
    }

    async fn advise(&self, _offset: u64, _len: u64, _advice: Advice) -> Result<(), Error> {
        Ok(())
    }

    async fn readable(&self) -> Result<(), Error> {
        Ok(())
    }

    async fn writable(&self) -> Result<(), Error> {
        Ok(())
    }
}

impl Drop for BufferedFile {
    /// The commit, when the tool closes the file while it runs, or exits cleanly with it open.
    fn drop(&mut self) {
        let session = self.session().clone();
        let buffer = self.buffer.get_mut().unwrap_or_else(|p| p.into_inner());
        session.release_buffer(buffer.data.len() as u64);
        if !buffer.changed || !session.commits_on_close() || session.watch.check().is_err() {
            return;
        }
        let committed = session
            .fs
            .commit_write(&self.path, &buffer.data, self.exclusive);
        if let Err(e) = committed {
            session.note_failed_commit(e);
        }
    }
}
