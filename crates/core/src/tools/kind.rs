//! What an entry is, as every tool's data names it (`"type"`: `file`, `dir`, `symlink`,
//! `other`): one type from the file system's answer to the wire and the texts.

use cap_std::fs::Metadata;
use serde::Serialize;

/// The kind of a directory entry, from its own `lstat` (a symlink is itself, never its
/// target).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

impl FileKind {
    /// The kind `meta` (not followed) describes.
    pub fn of(meta: &Metadata) -> FileKind {
        let ft = meta.file_type();
        if ft.is_symlink() {
            FileKind::Symlink
        } else if ft.is_dir() {
            FileKind::Dir
        } else if ft.is_file() {
            FileKind::File
        } else {
            FileKind::Other
        }
    }

    /// The kind of a raw `st_mode`.
    pub fn of_mode(mode: u32) -> FileKind {
        use rustix::fs::FileType;
        match FileType::from_raw_mode(mode) {
            FileType::Symlink => FileKind::Symlink,
            FileType::Directory => FileKind::Dir,
            FileType::RegularFile => FileKind::File,
            _ => FileKind::Other,
        }
    }

    /// A file or a directory, for what a change made or removed.
    pub fn file_or_dir(is_dir: bool) -> FileKind {
        match is_dir {
            true => FileKind::Dir,
            false => FileKind::File,
        }
    }

    /// The kind in a sentence: "a file", "a directory", ...
    pub fn phrase(self) -> &'static str {
        match self {
            FileKind::Symlink => "a symlink",
            FileKind::Dir => "a directory",
            FileKind::File => "a file",
            FileKind::Other => "a special file (FIFO, socket or device)",
        }
    }
}
