//! A run's private temp directory (`TMPDIR`): made fresh (mode 0700) for one call beneath the
//! state directory, writable by the sandboxed program, removed with everything in it when the
//! call ends. Report files a tool asks a program to write (pytest's JUnit XML) are read back
//! from it without following a symlink or opening anything but a regular file: the program
//! wrote that directory, and the host reading a planted link to `/etc/shadow` would hand the
//! model a file the sandbox kept from the program.

use rustix::fs::{Mode, OFlags};
use std::fs;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(1);

#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
    dir: OwnedFd,
}

/// A file read back from the scratch directory.
#[derive(Debug, PartialEq, Eq)]
pub enum ScratchFile {
    Missing,
    /// Not a regular file (a symlink, a FIFO, a directory): never opened for reading.
    NotRegular,
    TooLarge(u64),
    Contents(Vec<u8>),
}

impl Scratch {
    pub fn create(parent: &Path) -> io::Result<Scratch> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
        loop {
            let path = parent.join(format!(
                "run-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            match fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    let dir = rustix::fs::open(
                        &path,
                        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )?;
                    return Ok(Scratch { path, dir });
                }
                // A leftover of a crashed host with the same pid: take the next number.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads `name` (one plain name, no slash) as the program left it, up to `max` bytes.
    pub fn read(&self, name: &str, max: u64) -> io::Result<ScratchFile> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        let fd = match rustix::fs::openat(
            &self.dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(ScratchFile::Missing),
            Err(rustix::io::Errno::LOOP) => return Ok(ScratchFile::NotRegular),
            Err(e) => return Err(e.into()),
        };
        let file = fs::File::from(fd);
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Ok(ScratchFile::NotRegular);
        }
        if meta.len() > max {
            return Ok(ScratchFile::TooLarge(meta.len()));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(max + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > max {
            return Ok(ScratchFile::TooLarge(bytes.len() as u64));
        }
        Ok(ScratchFile::Contents(bytes))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if fs::remove_dir_all(&self.path).is_ok() {
            return;
        }
        // A program may leave directories it made unwritable (chmod 000); as the owner the host
        // can give them back their write bit and try once more.
        restore_write_bits(&self.path);
        if let Err(e) = fs::remove_dir_all(&self.path) {
            log::warn!(target: "wsfs", "temp directory left behind: dir={} error={e}", self.path.display());
        }
    }
}

fn restore_write_bits(dir: &Path) {
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            restore_write_bits(&entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_regular_files_only_and_removes_everything() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        let p = scratch.path().to_path_buf();
        fs::write(p.join("report.xml"), "<x/>").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", p.join("link.xml")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            p.join("fifo.xml"),
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        fs::create_dir_all(p.join("locked/inner")).unwrap();
        fs::set_permissions(p.join("locked"), fs::Permissions::from_mode(0o000)).unwrap();
        assert_eq!(
            scratch.read("report.xml", 100).unwrap(),
            ScratchFile::Contents(b"<x/>".to_vec())
        );
        assert_eq!(
            scratch.read("report.xml", 3).unwrap(),
            ScratchFile::TooLarge(4)
        );
        assert_eq!(
            scratch.read("link.xml", 100).unwrap(),
            ScratchFile::NotRegular
        );
        assert_eq!(
            scratch.read("fifo.xml", 100).unwrap(),
            ScratchFile::NotRegular
        );
        assert_eq!(scratch.read("none.xml", 100).unwrap(), ScratchFile::Missing);
        assert!(scratch.read("../x", 100).is_err());
        drop(scratch);
        assert!(!p.exists());
        assert_eq!(fs::read_dir(parent.path()).unwrap().count(), 0);
    }
}
