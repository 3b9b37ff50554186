//! `apply_patch` from arguments to commit: every file the patch names is resolved beneath the
//! root, the existing ones are locked (in a fixed order, so two patches cannot deadlock) and
//! read under their locks; the core applies the hunks in memory; nothing is written unless
//! the whole patch (with `strict: false`, each whole file) applies.

use super::args::ApplyPatchArgs;
use super::diff::{bounded, file_diff};
use super::output::{ApplyPatchOutput, FileChanged};
use crate::commit::{CommitError, Op, OpKind, Place};
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::audit::Change;
use crate::lines::sha256_hex;
use crate::patch::apply::apply_hunks;
use crate::patch::model::{Action, FileSection, ParsedPatch, Reason, Rejection};
use crate::patch::structured::{self, RangeEdit};
use crate::patch::text::FileText;
use crate::sandbox::fileops::{
    decode_text, lock_current, open_error, open_leaf_read, require_regular, LockedFile,
};
use crate::sandbox::gate::Access;
use crate::sandbox::resolve::Located;
use crate::sandbox::root::{Anchor, ToolPath};
use crate::tools::contract::Call;
use crate::tools::kind::FileKind;
use crate::workspace::Workspace;
use cap_std::fs::{File, Metadata, MetadataExt};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

const TOO_BIG: &str =
    "apply_patch rewrites whole files, so it only changes files within that limit";

/// Most files one patch may change. Until they all commit, a patch holds each file's lock
/// and, while committing, its staged file and a handle on its directory (twice for a move):
/// at most four descriptors a file, so a patch at this cap fits a process's usual limit of
/// 1024 open files with room to spare.
pub const MAX_PATCH_FILES: usize = 200;

/// An existing file the patch updates, deletes or moves.
struct Source<'w> {
    located: Option<Located<'w>>,
    display: String,
    opened: Option<File>,
    locked: Option<LockedFile>,
    text: String,
    sha: String,
}

/// One file section on its way to a commit.
struct Section<'w> {
    spec: FileSection,
    /// The section's file as shown (for a move, its source).
    display: String,
    /// A move's destination, as shown.
    dst_display: Option<String>,
    source: Option<usize>,
    dest: Option<Place<'w>>,
    rejections: Vec<Rejection>,
    new_text: Option<String>,
    added: u64,
    removed: u64,
    /// Hunks that matched only loosely.
    notes: Vec<String>,
}

impl Section<'_> {
    fn reject_whole(&mut self, reason: Reason, path: &str, detail: String) {
        self.rejections.push(Rejection {
            path: path.to_string(),
            hunk: 0,
            reason,
            expected: Vec::new(),
            nearest_line: None,
            detail,
            file_lines: Vec::new(),
        });
    }
}

pub fn apply_patch(
    call: &mut Call<'_>,
    args: ApplyPatchArgs,
) -> Result<(ApplyPatchOutput, Vec<String>)> {
    let (ws, ctl) = (call.ws, call.ctl);
    let parsed = parse_args(&args)?;
    if parsed.files.len() > MAX_PATCH_FILES {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            format!(
                "this patch changes {} files; apply_patch changes at most {MAX_PATCH_FILES} files per call (each stays open and locked until they all commit); nothing was written: split it into patches of at most {MAX_PATCH_FILES} files",
                parsed.files.len()
            ),
        ));
    }
    let mut warnings = parsed.notes;
    let mut sources: Vec<Source<'_>> = Vec::new();
    let mut sections: Vec<Section<'_>> = Vec::new();
    for spec in parsed.files {
        ctl.check()?;
        sections.push(resolve_section(call, spec, &mut sources)?);
    }
    refuse_repeated_targets(&sources, &sections)?;
    lock_and_read(ws, &mut sources, ctl)?;
    for section in &mut sections {
        ctl.check()?;
        plan_section(ws, section, &sources, ctl)?;
    }
    let rejected: Vec<Rejection> = sections.iter().flat_map(|s| s.rejections.clone()).collect();
    let files_rejected = sections.iter().filter(|s| !s.rejections.is_empty()).count();
    let writable: Vec<&Section<'_>> = if !rejected.is_empty() && args.strict {
        Vec::new()
    } else {
        sections
            .iter()
            .filter(|s| s.rejections.is_empty())
            .collect()
    };
    let files_changed: Vec<FileChanged> = writable.iter().map(|s| changed(s)).collect();
    let diffs: Vec<String> = writable
        .iter()
        .map(|s| section_diff(s, &sources, ctl))
        .collect();
    let mut out = ApplyPatchOutput {
        applied: !files_changed.is_empty(),
        files_changed,
        rejected_hunks: rejected,
        diff: bounded(&diffs, ws.limits.max_read_bytes as usize),
        dry_run: args.dry_run,
        files_rejected,
        changes: Vec::new(),
    };
    warnings.extend(writable.iter().flat_map(|s| s.notes.iter().cloned()));
    if !out.applied || args.dry_run {
        return Ok((out, warnings));
    }
    let keep: Vec<bool> = sections.iter().map(|s| s.rejections.is_empty()).collect();
    let anchor = if ws.restricts_to_workspace() {
        Anchor::Root
    } else {
        Anchor::Host
    };
    let (ops, owners) = build_ops(sections, &mut sources, &keep);
    match ws.commit(anchor, ops, ctl) {
        Ok(done) => {
            warnings.extend(done.warnings);
            for c in &done.changes {
                // A patch read every file it changed, so a missing hash means a new file.
                call.record_change(Change {
                    path: c.path.clone(),
                    kind: FileKind::File,
                    existed_before: c.sha256_before.is_some(),
                    sha256_before: c.sha256_before.clone(),
                    sha256_after: c.sha256_after.clone(),
                });
            }
            out.changes = done.changes;
        }
        Err(CommitError::Exists(k)) => {
            let path = owners[k].clone();
            out.applied = false;
            out.files_changed.clear();
            out.diff.clear();
            out.rejected_hunks.push(Rejection {
                path: path.clone(),
                hunk: 0,
                reason: Reason::FileExists,
                expected: Vec::new(),
                nearest_line: None,
                detail: format!("{path} was created by something else while the patch was being applied; nothing was written"),
                file_lines: Vec::new(),
            });
        }
        Err(CommitError::Failed(e)) => return Err(e),
    }
    drop(sources);
    Ok((out, warnings))
}

fn parse_args(args: &ApplyPatchArgs) -> Result<ParsedPatch> {
    let invalid = |m: &str| WsfsError::new(ErrorCode::InvalidArguments, m.to_string());
    match (args.patch.trim().is_empty(), args.files.is_empty()) {
        (false, true) => crate::patch::parse(&args.patch),
        (true, false) => {
            let mut parsed = ParsedPatch::default();
            for f in &args.files {
                let edits: Vec<RangeEdit<'_>> = f
                    .hunks
                    .iter()
                    .map(|h| RangeEdit {
                        start_line: h.start_line,
                        end_line: h.end_line,
                        replace_with: &h.replace_with,
                    })
                    .collect();
                parsed.files.push(structured::section(&f.path, &f.file_hash, &edits)?);
            }
            crate::patch::merge_sections(parsed)
        }
        (true, true) => Err(invalid("give either patch (a unified diff or a '*** Begin Patch' patch) or files (line-range edits)")),
        (false, false) => Err(invalid("give either patch or files, not both")),
    }
}

fn resolve_section<'w>(
    call: &mut Call<'w>,
    spec: FileSection,
    sources: &mut Vec<Source<'w>>,
) -> Result<Section<'w>> {
    let mut section = Section {
        display: String::new(),
        dst_display: None,
        source: None,
        dest: None,
        rejections: Vec::new(),
        new_text: None,
        added: 0,
        removed: 0,
        notes: Vec::new(),
        spec,
    };
    let action = section.spec.action;
    if action == Action::Add {
        let path = call.path(&section.spec.path)?;
        require_file_name(&path)?;
        section.display = path.display.clone();
        section.dest = resolve_new(call.ws, &path, &mut section, call.ctl)?;
        return Ok(section);
    }
    let path = call.path(&section.spec.path)?;
    require_file_name(&path)?;
    section.display = path.display.clone();
    match open_source(call.ws, &path, action, call.ctl)? {
        Some(source) => {
            section.source = Some(sources.len());
            sources.push(source);
        }
        None => {
            let display = section.display.clone();
            section.reject_whole(
                Reason::FileNotFound,
                &display,
                format!("{display} does not exist"),
            );
        }
    }
    if let Some(to) = section.spec.move_to.clone() {
        let path = call.path(&to)?;
        require_file_name(&path)?;
        section.dst_display = Some(path.display.clone());
        section.dest = resolve_new(call.ws, &path, &mut section, call.ctl)?;
    }
    Ok(section)
}

/// Refuses a path that names a directory by its last name (`x/..`, `.`, or a trailing `/`),
/// before anything is resolved or created: a commit, and the journal it may write, works on
/// file names only.
fn require_file_name(path: &ToolPath) -> Result<()> {
    path.refuse_trailing_slash()?;
    match path.rel.components().next_back() {
        Some(Component::Normal(_)) => Ok(()),
        _ => Err(WsfsError::new(
            ErrorCode::NotAFile,
            format!("{} is a directory, not a file; use list_dir", path.display),
        )),
    }
}

/// Resolves and opens a file to update, delete or move; `None` when it does not exist.
fn open_source<'w>(
    ws: &'w Workspace,
    path: &ToolPath,
    action: Action,
    ctl: &CallControl,
) -> Result<Option<Source<'w>>> {
    let display = &path.display;
    path.refuse_trailing_slash()?;
    let located = match ws.resolve(path, Access::READ_WRITE, false, ctl) {
        Ok(located) => located,
        Err(e) if e.code == ErrorCode::PathNotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    located.leaf_name(display)?;
    if located.leaf_meta.is_none() {
        return Ok(None);
    }
    if located.via_symlink && action != Action::Update {
        return Err(WsfsError::new(
            ErrorCode::NotAFile,
            format!("{display} is a symlink; apply_patch deletes and moves regular files only (it updates a symlink's target)"),
        ));
    }
    let leaf = located.file_leaf(display, false)?.clone();
    let file = open_leaf_read(&located.dir, &leaf).map_err(|e| open_error(e, display))?;
    require_regular(
        &file
            .metadata()
            .map_err(|e| WsfsError::from_io(&e, display))?,
        display,
    )?;
    Ok(Some(Source {
        located: Some(located),
        display: display.clone(),
        opened: Some(file),
        locked: None,
        text: String::new(),
        sha: String::new(),
    }))
}

/// Resolves a file to create: where it will go, or `None` (with a rejection) when the
/// name is taken. Missing parent directories are only planned here; the commit creates them.
fn resolve_new<'w>(
    ws: &'w Workspace,
    path: &ToolPath,
    section: &mut Section<'w>,
    ctl: &CallControl,
) -> Result<Option<Place<'w>>> {
    let display = &path.display;
    path.refuse_trailing_slash()?;
    match ws.resolve(path, Access::WRITE, false, ctl) {
        Ok(located) => {
            located.leaf_name(display)?;
            if located.leaf_meta.is_some() || located.via_symlink {
                section.reject_whole(
                    Reason::FileExists,
                    display,
                    format!("{display} already exists"),
                );
                return Ok(None);
            }
            Ok(Some(Place::Resolved(Box::new(located))))
        }
        Err(e) if e.code == ErrorCode::PathNotFound => Ok(Some(Place::Pending {
            path: path.clone(),
            missing: missing_dirs(ws, path),
        })),
        Err(e) => Err(e),
    }
}

/// The parent directories of `path` that do not exist yet, outermost first, as the resolver
/// would create them.
fn missing_dirs(ws: &Workspace, path: &ToolPath) -> Vec<PathBuf> {
    let parent = path.rel.parent().unwrap_or(Path::new(""));
    let mut prefix = PathBuf::new();
    let mut missing = Vec::new();
    for component in parent.components() {
        prefix.push(component);
        if !matches!(component, Component::Normal(_)) {
            continue;
        }
        let exists = match path.anchor {
            Anchor::Root => ws.exists(&prefix),
            Anchor::Host => std::fs::metadata(Path::new("/").join(&prefix)).is_ok(),
        };
        if !exists {
            missing.push(prefix.clone());
        }
    }
    missing
}

/// Two sections must not name one file (through different spellings or a symlink): the
/// second write would silently replace the first.
fn refuse_repeated_targets(sources: &[Source<'_>], sections: &[Section<'_>]) -> Result<()> {
    let mut seen: Vec<((u64, u64), std::ffi::OsString, String)> = Vec::new();
    let located = sources
        .iter()
        .filter_map(|s| s.located.as_ref().map(|l| (l, s.display.as_str())))
        .chain(sections.iter().filter_map(|s| match &s.dest {
            Some(Place::Resolved(l)) => {
                Some((&**l, s.dst_display.as_deref().unwrap_or(&s.display)))
            }
            _ => None,
        }));
    for (l, display) in located {
        let Ok(stat) = rustix::fs::fstat(&*l.dir) else {
            continue;
        };
        let key = (
            (stat.st_dev, stat.st_ino),
            l.leaf.clone().unwrap_or_default(),
        );
        if let Some((_, _, first)) = seen
            .iter()
            .find(|(k, leaf, _)| *k == key.0 && *leaf == key.1)
        {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("{first} and {display} are the same file; give each file one section"),
            ));
        }
        seen.push((key.0, key.1, display.to_string()));
    }
    Ok(())
}

/// Locks every source in (device, inode) order, then reads it under its lock.
fn lock_and_read(ws: &Workspace, sources: &mut [Source<'_>], ctl: &CallControl) -> Result<()> {
    let mut order: Vec<(u64, u64, usize)> = Vec::with_capacity(sources.len());
    for (i, s) in sources.iter().enumerate() {
        let meta = s
            .opened
            .as_ref()
            .map(|f| f.metadata())
            .transpose()
            .map_err(|e| WsfsError::from_io(&e, &s.display))?;
        let (dev, ino) = meta.map(|m| (m.dev(), m.ino())).unwrap_or_default();
        order.push((dev, ino, i));
    }
    order.sort_unstable();
    for (_, _, i) in order {
        ctl.check()?;
        let s = &mut sources[i];
        let (Some(located), Some(file)) = (s.located.as_ref(), s.opened.take()) else {
            continue;
        };
        let leaf = located.leaf_name(&s.display)?;
        let reopen = || open_leaf_read(&located.dir, leaf);
        let mut locked = lock_current(&located.dir, leaf, file, reopen, &s.display, ctl)?;
        let size = locked.meta.len();
        ws.limits.check_write(size, &s.display, TOO_BIG)?;
        let mut bytes = Vec::with_capacity(size as usize);
        (&mut locked.file)
            .take(ws.limits.max_write_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| WsfsError::from_io(&e, &s.display))?;
        ws.limits
            .check_write(bytes.len() as u64, &s.display, TOO_BIG)?;
        s.sha = sha256_hex(&bytes);
        s.text = decode_text(bytes, &s.display)?;
        s.locked = Some(locked);
    }
    Ok(())
}

/// Applies a section's hunks to its file's text (in memory), or records why not.
fn plan_section(
    ws: &Workspace,
    section: &mut Section<'_>,
    sources: &[Source<'_>],
    ctl: &CallControl,
) -> Result<()> {
    if !section.rejections.is_empty() {
        return Ok(());
    }
    let action = section.spec.action;
    if action == Action::Add {
        let text = section
            .spec
            .add
            .as_ref()
            .map(|f| f.render())
            .unwrap_or_default();
        section.added = FileText::parse(&text).lines.len() as u64;
        ws.limits
            .check_write(text.len() as u64, &section.display, TOO_BIG)?;
        section.new_text = Some(text);
        return Ok(());
    }
    let Some(source) = section.source.map(|i| &sources[i]) else {
        return Ok(());
    };
    let display = section.display.clone();
    if let Some(want) = &section.spec.file_hash {
        if *want != source.sha {
            for (i, hunk) in section.spec.hunks.iter().enumerate() {
                section.rejections.push(Rejection {
                    path: display.clone(),
                    hunk: i + 1,
                    reason: Reason::Stale,
                    expected: hunk.expected(),
                    nearest_line: None,
                    detail: format!("{display} changed since it was read: its sha256 is {}, file_hash was {want}", source.sha),
                    file_lines: Vec::new(),
                });
            }
            return Ok(());
        }
    }
    if section.spec.hunks.is_empty() {
        if action == Action::Delete {
            section.removed = FileText::parse(&source.text).lines.len() as u64;
        } else {
            section.new_text = Some(source.text.clone());
        }
        return Ok(());
    }
    match apply_hunks(&display, &source.text, &section.spec.hunks, ctl)? {
        Err(rejections) => section.rejections = rejections,
        Ok(patched) => {
            section.added = patched.added;
            section.removed = patched.removed;
            if action == Action::Delete {
                if !patched.text.trim_start_matches('\u{feff}').is_empty() {
                    section.reject_whole(
                        Reason::Stale,
                        &display,
                        format!("the patch deletes {display} but its lines do not cover the whole file, which has changed since the diff was made"),
                    );
                }
                return Ok(());
            }
            ws.limits.check_write(
                patched.text.len() as u64,
                &format!("the patched {display}"),
                TOO_BIG,
            )?;
            section.notes = patched.notes;
            section.new_text = Some(patched.text);
        }
    }
    Ok(())
}

fn changed(s: &Section<'_>) -> FileChanged {
    let (path, from) = match &s.dst_display {
        Some(dst) => (dst.clone(), Some(s.display.clone())),
        None => (s.display.clone(), None),
    };
    FileChanged {
        path,
        action: s.spec.action,
        from,
        added_lines: s.added,
        removed_lines: s.removed,
    }
}

fn section_diff(s: &Section<'_>, sources: &[Source<'_>], ctl: &CallControl) -> String {
    let old = s.source.map(|i| sources[i].text.as_str());
    let new = match s.spec.action {
        Action::Delete => None,
        _ => s.new_text.as_deref(),
    };
    let dst = s.dst_display.as_deref().unwrap_or(&s.display);
    file_diff(&s.display, dst, old, new, ctl)
}

/// The commit's operations for the sections to write, and for each op the path a
/// `file_exists` race would be reported on.
fn build_ops<'w>(
    sections: Vec<Section<'w>>,
    sources: &mut [Source<'w>],
    keep: &[bool],
) -> (Vec<Op<'w>>, Vec<String>) {
    let mut ops = Vec::new();
    let mut owners = Vec::new();
    for (section, keep) in sections.into_iter().zip(keep) {
        if !keep {
            continue;
        }
        let source = section.source.map(|i| &mut sources[i]);
        let (src_place, src_meta, src_sha) = match source {
            Some(s) => (
                s.located.take().map(|l| Place::Resolved(Box::new(l))),
                s.locked.as_ref().map(|l| l.meta.clone()),
                Some(s.sha.clone()),
            ),
            None => (None, None, None),
        };
        let new_sha = section
            .new_text
            .as_deref()
            .map(|t| sha256_hex(t.as_bytes()));
        let content = section.new_text.clone().unwrap_or_default().into_bytes();
        let dst_display = section
            .dst_display
            .clone()
            .unwrap_or_else(|| section.display.clone());
        match section.spec.action {
            Action::Update => push(
                &mut ops,
                &mut owners,
                OpKind::Replace,
                src_place,
                content,
                src_meta,
                section.display,
                src_sha,
                new_sha,
            ),
            Action::Delete => push(
                &mut ops,
                &mut owners,
                OpKind::Remove,
                src_place,
                Vec::new(),
                None,
                section.display,
                src_sha,
                None,
            ),
            Action::Add => push(
                &mut ops,
                &mut owners,
                OpKind::Create,
                section.dest,
                content,
                None,
                section.display,
                None,
                new_sha,
            ),
            Action::Move => {
                push(
                    &mut ops,
                    &mut owners,
                    OpKind::Create,
                    section.dest,
                    content,
                    src_meta,
                    dst_display,
                    None,
                    new_sha,
                );
                push(
                    &mut ops,
                    &mut owners,
                    OpKind::Remove,
                    src_place,
                    Vec::new(),
                    None,
                    section.display,
                    src_sha,
                    None,
                );
            }
        }
    }
    (ops, owners)
}

#[allow(clippy::too_many_arguments)]
fn push<'w>(
    ops: &mut Vec<Op<'w>>,
    owners: &mut Vec<String>,
    kind: OpKind,
    place: Option<Place<'w>>,
    content: Vec<u8>,
    keep: Option<Metadata>,
    display: String,
    sha256_before: Option<String>,
    sha256_after: Option<String>,
) {
    // Every section kept for the commit has its places (a missing one was rejected).
    let Some(place) = place else { return };
    owners.push(display.clone());
    ops.push(Op {
        kind,
        place,
        content,
        keep,
        display,
        sha256_before,
        sha256_after,
    });
}
