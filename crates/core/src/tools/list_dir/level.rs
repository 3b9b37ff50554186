//! One directory level: its entries in byte order, at most a bound of them kept in memory
//! however large the directory, what the policy leaves out counted.

use super::output::{Entry, ListOutput};
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::sandbox::gate::{Access, Skipped};
use crate::sandbox::gitignore::Gitignore;
use crate::sandbox::root::ToolPath;
use crate::sandbox::sys;
use crate::sandbox::tempfile::is_temp_name;
use crate::sandbox::walk::deny::WalkFilter;
use crate::sandbox::walk::filter::{self, Candidate, Skip, WalkOptions};
use crate::sandbox::walk::names::shown;
use crate::sandbox::walk::Kind;
use crate::tools::contract::Call;
use crate::workspace::Workspace;
use cap_std::fs::Dir;
use std::collections::BinaryHeap;
use std::ffi::{OsStr, OsString};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

pub fn list_dir(ws: &Workspace, path: &ToolPath, ctl: &CallControl) -> Result<ListOutput> {
    list_filtered(ws, path, ctl, ws.limits.max_list_entries, |_, _, _| true)
}

/// One directory level, keeping only the names `keep` accepts (given the name and its
/// `getdents` type), at most `max`.
fn list_filtered(
    ws: &Workspace,
    path: &ToolPath,
    ctl: &CallControl,
    max: u64,
    keep: impl FnMut(&Dir, &[u8], Kind) -> bool,
) -> Result<ListOutput> {
    let display = &path.display;
    let io_err = |e: std::io::Error| WsfsError::from_io(&e, display);
    let located = ws.resolve(path, Access::READ, false, ctl)?;
    let known = located.start_paths();
    let dir = match &located.leaf {
        None => located.dir,
        Some(leaf) => match ws.open_child_dir(&located.dir, leaf) {
            Ok(dir) => dir,
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
                return Err(WsfsError::new(
                    ErrorCode::NotADirectory,
                    format!("{display} is not a directory; use read_file for files"),
                ))
            }
            Err(e) => return Err(io_err(e)),
        },
    };
    let filter = ws.walk_filter(&dir, known)?;
    let filter = filter.map(|filter| PolicyFilter { filter, dir: &dir });
    let (names, total, left_out) =
        smallest_names(ws, &dir, display, max, filter.as_ref(), ctl, keep)?;
    let mut entries = Vec::with_capacity(names.len());
    for name in names {
        ctl.check()?;
        entries.extend(describe(&dir, name));
    }
    Ok(ListOutput {
        path: display.clone(),
        entries,
        total,
        truncated: total > max,
        tree: None,
        denied: left_out.denied,
        protected: left_out.protected,
        hidden: 0,
        ignored: 0,
    })
}

/// One level with filters: the same listing and shape as the plain one.
pub(super) fn list_level(
    call: &mut Call<'_>,
    path: &ToolPath,
    opts: &WalkOptions<'_>,
    cap: u64,
) -> Result<(ListOutput, Vec<String>)> {
    let mut warnings = Vec::new();
    let mut rules: Option<Option<Gitignore>> = None;
    let (mut hidden, mut ignored) = (0u64, 0u64);
    let mut out = list_filtered(call.ws, path, call.ctl, cap, |dir, name, kind| {
        let rules = rules.get_or_insert_with(|| match opts.respect_gitignore {
            true => filter::load_gitignore(dir.as_fd(), b"", &mut warnings),
            false => None,
        });
        let kind = match kind {
            Kind::Unknown => sys::lstat(dir.as_fd(), name).map_or(Kind::Other, |s| s.kind),
            k => k,
        };
        let chain = rules.iter().map(|g| (0, g));
        let candidate = Candidate {
            dir: dir.as_fd(),
            name,
            rel: name,
            kind,
            ino: 0, // the listing's own policy filter looks at the inode
        };
        match filter::skip(opts, &candidate, chain) {
            Some(Skip::Hidden) => hidden += 1,
            Some(Skip::Ignored) => ignored += 1,
            Some(_) => {}
            None => return true,
        }
        false
    })?;
    (out.hidden, out.ignored) = (hidden, ignored);
    Ok((out, warnings))
}

/// The policy's say over a listing's entries (`Workspace::walk_filter`): denied entries and
/// protected locations are left out and counted, the audit log left out silently.
struct PolicyFilter<'a> {
    filter: WalkFilter<'a>,
    dir: &'a Dir,
}

impl PolicyFilter<'_> {
    fn skip(&self, name: &[u8], kind: Kind, ino: u64) -> Option<Skipped> {
        let is_dir = match kind {
            Kind::Dir => true,
            Kind::Unknown => self
                .dir
                .symlink_metadata(OsStr::from_bytes(name))
                .is_ok_and(|m| m.is_dir()),
            _ => false,
        };
        self.filter.skip(self.dir.as_fd(), name, name, is_dir, ino)
    }
}

/// Entries the policy left out of a listing, by reason.
#[derive(Default)]
struct LeftOut {
    denied: u64,
    protected: u64,
}

/// The `max` smallest names in byte order, the number of entries, and what `filter` left
/// out. A max-heap of `max` names keeps memory bounded by the limit however large the
/// directory is.
fn smallest_names(
    ws: &Workspace,
    dir: &Dir,
    display: &str,
    max: u64,
    filter: Option<&PolicyFilter<'_>>,
    ctl: &CallControl,
    mut keep: impl FnMut(&Dir, &[u8], Kind) -> bool,
) -> Result<(Vec<OsString>, u64, LeftOut)> {
    let cap = usize::try_from(max).unwrap_or(usize::MAX);
    let mut heap: BinaryHeap<Vec<u8>> = BinaryHeap::with_capacity(cap.min(4096) + 1);
    let mut total = 0u64;
    let mut left_out = LeftOut::default();
    // Entries come straight from the kernel's buffer, so a name is copied only when kept.
    ws.list(dir.as_fd(), display, ctl, |entry| {
        let name = entry.name;
        // wsfs's own temp files are never shown (nor counted): they are not the agent's.
        if is_temp_name(name) || !keep(dir, name, entry.kind) {
            return Ok(true);
        }
        match filter.and_then(|f| f.skip(name, entry.kind, entry.ino)) {
            Some(Skipped::Denied(_)) => {
                left_out.denied += 1;
                return Ok(true);
            }
            Some(Skipped::Protected) => {
                left_out.protected += 1;
                return Ok(true);
            }
            Some(Skipped::Reserved) => return Ok(true),
            None => {}
        }
        total += 1;
        if heap.len() < cap {
            heap.push(name.to_vec());
        } else if heap.peek().is_some_and(|largest| name < largest.as_slice()) {
            heap.pop();
            heap.push(name.to_vec());
        }
        Ok(true)
    })?;
    let names = heap
        .into_sorted_vec()
        .into_iter()
        .map(|b| OsString::from(std::ffi::OsStr::from_bytes(&b)))
        .collect();
    Ok((names, total, left_out))
}

/// The entry's own type and size (`lstat`, as `fstatat(AT_SYMLINK_NOFOLLOW)` on the one name
/// beneath the directory handle: only the type and size are needed, which `statx` with its
/// fuller set of fields costs more for); `None` if it vanished since it was listed.
fn describe(dir: &Dir, name: OsString) -> Option<Entry> {
    use rustix::fs::AtFlags;
    let st = rustix::fs::statat(dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW).ok()?;
    let kind = crate::tools::kind::FileKind::of_mode(st.st_mode);
    Some(Entry {
        name: shown(name.as_bytes()).into_owned(),
        kind,
        size: u64::try_from(st.st_size).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cap_std::ambient_authority;
    use std::time::Duration;

    #[test]
    fn keeps_the_smallest_names_in_byte_order() {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["b", "a", "C", "é", "aa", "z"] {
            std::fs::write(tmp.path().join(name), b"").unwrap();
        }
        let dir = Dir::open_ambient_dir(tmp.path(), ambient_authority()).unwrap();
        let config = crate::config::Config {
            root: tmp.path().to_string_lossy().into_owned(),
            create_root: false,
            restrict_to_workspace: true,
            limits: Default::default(),
            state_dir: None,
            policy: Default::default(),
            profile: "wsfs".into(),
            wasm_tools: Vec::new(),
            wasm_policy: Default::default(),
            mode: Default::default(),
            session: None,
            session_refresh_ms: None,
            model_gateway: None,
        };
        let ws = Workspace::open(&config).unwrap().0;
        let ctl = CallControl::new(Duration::from_secs(10), None);
        let listed = smallest_names(&ws, &dir, ".", 3, None, &ctl, |_, _, _| true);
        let (names, total, _) = match listed {
            Ok(found) => found,
            Err(_) => panic!("listing failed"),
        };
        assert_eq!(total, 6);
        assert_eq!(names, vec![OsString::from("C"), "a".into(), "aa".into()]);
    }
}
