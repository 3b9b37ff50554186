//! Reading a directory's names in byte order with bounded memory, and the one place where a
//! name becomes text.

use super::stats::Stop;
use crate::control::CallControl;
use crate::sys::Kind;
use rustix::fs::RawDir;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::os::fd::BorrowedFd;

/// How a file name or walk-relative path (bytes) is shown to the model and in `data`: each
/// component in the reversible form of [`crate::names::encode`], which the tools accept back.
/// Every name a walk reports goes through here.
pub fn shown(bytes: &[u8]) -> Cow<'_, str> {
    if !bytes.contains(&b'/') {
        return crate::names::encode(bytes);
    }
    let parts: Vec<Cow<'_, str>> = bytes
        .split(|&b| b == b'/')
        .map(crate::names::encode)
        .collect();
    if parts.iter().all(|p| matches!(p, Cow::Borrowed(_))) {
        // Every component is shown as it is, so the path is valid UTF-8 as a whole.
        return String::from_utf8_lossy(bytes);
    }
    Cow::Owned(parts.join("/"))
}

/// Directory entries read between deadline checks: at most one `getdents64` apart.
const CHECK_EVERY: u64 = 128;

/// Bytes of `getdents64` records fetched per system call.
pub const DIRENT_BUFFER: usize = 64 * 1024;

#[derive(Debug, Clone, Copy)]
struct Item {
    start: u32,
    len: u32,
    kind: Kind,
    /// The inode number `getdents` gave (the policy recognises the audit log by it).
    ino: u64,
}

/// Some of a directory's names, sorted in byte order, stored in one buffer.
#[derive(Debug, Default)]
pub struct Batch {
    arena: Vec<u8>,
    items: Vec<Item>,
    next: usize,
    /// Names sorting after the last one of this batch were left out (the directory holds
    /// more than the batch could keep); read again after the last one to get them.
    pub more: bool,
    /// Entries that passed the filter, including those left out.
    pub total: u64,
}

impl Batch {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn get(&self, i: usize) -> (&[u8], Kind) {
        let it = self.items[i];
        (
            &self.arena[it.start as usize..(it.start + it.len) as usize],
            it.kind,
        )
    }

    /// The inode number of name `i`, as `getdents` gave it.
    pub fn ino(&self, i: usize) -> u64 {
        self.items[i].ino
    }

    /// The next name not handed out yet.
    pub fn next_entry(&mut self) -> Option<(usize, Kind)> {
        let i = self.next;
        let item = self.items.get(i)?;
        self.next += 1;
        Some((i, item.kind))
    }

    /// The last name handed out, where a re-read continues.
    pub fn last(&self) -> Option<&[u8]> {
        self.next.checked_sub(1).map(|i| self.get(i).0)
    }

    /// Whether the batch holds `name` (it is sorted).
    pub fn find(&self, name: &[u8]) -> Option<Kind> {
        self.items
            .binary_search_by(|it| {
                self.arena[it.start as usize..(it.start + it.len) as usize].cmp(name)
            })
            .ok()
            .map(|i| self.items[i].kind)
    }

    fn push(&mut self, name: &[u8], kind: Kind, ino: u64) {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(name);
        self.items.push(Item {
            start,
            len: name.len() as u32,
            kind,
            ino,
        });
    }

    fn sort(&mut self) {
        let arena = &self.arena;
        let name = |it: &Item| &arena[it.start as usize..(it.start + it.len) as usize];
        self.items.sort_unstable_by(|a, b| name(a).cmp(name(b)));
    }
}

/// A name kept in the bounded heap once a directory outgrows its batch, ordered by name.
#[derive(PartialEq, Eq)]
struct Kept(Box<[u8]>, KindOrd);

/// An entry's kind and inode number, which take no part in the order.
#[derive(PartialEq, Eq)]
struct KindOrd(Kind, u64);

impl Ord for Kept {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

impl PartialOrd for Kept {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Reads the directory `fd` from its start and returns its smallest `cap` names sorting after
/// `after` (all names when `after` is `None`) that `keep` accepts, sorted. Memory is bounded
/// by `cap`, not by the directory: past `cap` names a max-heap keeps the smallest.
/// `buf` is the reused `getdents` buffer. `keep` gets each name, its kind and its inode.
pub fn read_batch(
    fd: BorrowedFd<'_>,
    after: Option<&[u8]>,
    cap: usize,
    buf: &mut Vec<u8>,
    ctl: &CallControl,
    mut keep: impl FnMut(&[u8], Kind, u64) -> bool,
) -> Result<Batch, Stop> {
    rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(0)).map_err(|e| Stop::Io(e.into()))?;
    if buf.capacity() < DIRENT_BUFFER {
        buf.reserve(DIRENT_BUFFER);
    }
    let mut batch = Batch::default();
    let mut heap: Option<BinaryHeap<Kept>> = None;
    let mut seen = 0u64;
    let mut entries = RawDir::new(fd, buf.spare_capacity_mut());
    while let Some(entry) = entries.next() {
        let entry = entry.map_err(|e| Stop::Io(e.into()))?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        if seen.is_multiple_of(CHECK_EVERY) {
            ctl.check().map_err(Stop::Call)?;
        }
        seen += 1;
        if after.is_some_and(|a| name <= a) {
            continue;
        }
        let kind = Kind::from_file_type(entry.file_type());
        let ino = entry.ino();
        if !keep(name, kind, ino) {
            continue;
        }
        batch.total += 1;
        match &mut heap {
            None if batch.items.len() < cap => batch.push(name, kind, ino),
            None => {
                // Outgrew the batch: keep the smallest `cap` names in a heap from here on.
                let mut h = BinaryHeap::with_capacity(cap + 1);
                for i in 0..batch.items.len() {
                    let (n, k) = batch.get(i);
                    h.push(Kept(n.into(), KindOrd(k, batch.ino(i))));
                }
                batch.arena = Vec::new();
                batch.items = Vec::new();
                push_bounded(&mut h, name, KindOrd(kind, ino), cap);
                heap = Some(h);
            }
            Some(h) => push_bounded(h, name, KindOrd(kind, ino), cap),
        }
    }
    match heap {
        Some(h) => {
            batch.more = (h.len() as u64) < batch.total;
            for Kept(name, KindOrd(kind, ino)) in h.into_sorted_vec() {
                batch.push(&name, kind, ino);
            }
        }
        None => batch.sort(),
    }
    Ok(batch)
}

fn push_bounded(heap: &mut BinaryHeap<Kept>, name: &[u8], what: KindOrd, cap: usize) {
    if heap.len() < cap {
        heap.push(Kept(name.into(), what));
    } else if let Some(mut largest) = heap.peek_mut() {
        if name < &*largest.0 {
            *largest = Kept(name.into(), what);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::time::Duration;

    #[test]
    fn batches_cover_a_directory_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let mut want = Vec::new();
        for i in 0..50 {
            let name = format!("n{:02}", (i * 37) % 50);
            std::fs::write(tmp.path().join(&name), b"").unwrap();
            want.push(name.into_bytes());
        }
        want.sort();
        let dir = std::fs::File::open(tmp.path()).unwrap();
        let ctl = CallControl::new(Duration::from_secs(10), None);
        let mut buf = Vec::new();
        let mut got: Vec<Vec<u8>> = Vec::new();
        let mut after: Option<Vec<u8>> = None;
        loop {
            let mut b = match read_batch(
                dir.as_fd(),
                after.as_deref(),
                7,
                &mut buf,
                &ctl,
                |_, _, _| true,
            ) {
                Ok(b) => b,
                Err(_) => panic!("read failed"),
            };
            while let Some((i, _)) = b.next_entry() {
                got.push(b.get(i).0.to_vec());
            }
            if !b.more {
                break;
            }
            after = b.last().map(<[u8]>::to_vec);
        }
        assert_eq!(got, want);
    }
}
