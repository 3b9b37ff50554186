//! Checkpoints and rewind.
//!
//! A checkpoint stores before-images of only the paths changed since the previous one (the
//! touch log's "changed since the last checkpoint" set): for each, what the upper tree held
//! (nothing, a file's bytes and mode, a whiteout, a directory and whether it is opaque, a
//! symlink's target) and the path's base fingerprint record. Files are copied (a reflink
//! where the file system has them), never hard-linked: append_file and programs on a kernel
//! overlay mount write upper files in place. The images are made durable with one `syncfs`,
//! then `meta.json` is written and the directory renamed from `.tmp-<n>` to `<n>`: the
//! checkpoint's commit point.
//!
//! Rewinding to checkpoint k restores every path changed after it (those of the newer
//! checkpoints and those changed since the last one) to its image in the newest checkpoint
//! at or before k that has one (none: the path was not in the session then), removes the
//! newer checkpoints, and clears the changed set. It runs under an intent
//! (`meta/rewind.json`) and every step is idempotent, so a crash part-way is finished at the
//! next open.

use super::session::{machinery, on_path, open_beneath, open_sub, parent_leaf, Session, UpperKind};
use super::store::{self, Fingerprint, Record};
use crate::error::{ErrorCode, Result, WsfsError};
use crate::sandbox::tempfile::{temp_name, Staged};
use cap_std::fs::Dir;
use rustix::fs::Mode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io;
use std::os::fd::AsFd;

const INTENT: &str = "rewind.json";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointOptions {
    #[serde(default)]
    pub label: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckpointResult {
    pub id: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewindOptions {
    pub id: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckpointInfo {
    pub id: String,
    pub label: Option<String>,
    /// RFC 3339, UTC.
    pub time: String,
    /// The paths whose before-images it holds (changed since the previous checkpoint).
    pub paths: Vec<String>,
}

/// One path's before-image.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Image {
    path: String,
    /// `absent`, `file`, `whiteout`, `dir`, `symlink`.
    state: String,
    #[serde(default)]
    opaque: bool,
    #[serde(default)]
    mode: u32,
    /// The file holding a file's bytes, in the checkpoint's directory.
    #[serde(default)]
    image: Option<String>,
    #[serde(default)]
    target: Option<String>,
    fp: Option<Fingerprint>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Meta {
    id: u64,
    label: Option<String>,
    time: String,
    entries: Vec<Image>,
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Copies `src` into the new file `dst` (a reflink where possible).
fn copy_into(src: &std::fs::File, dst: &mut std::fs::File) -> io::Result<()> {
    if rustix::fs::ioctl_ficlone(&*dst, src).is_ok() {
        return Ok(());
    }
    let mut src = src.try_clone()?;
    std::io::copy(&mut src, dst)?;
    Ok(())
}

impl Session {
    fn checkpoint_metas(&self) -> Result<Vec<(Meta, Dir)>> {
        let mut out = Vec::new();
        let entries = self
            .ckpts
            .entries()
            .map_err(|e| machinery("cannot list the session's checkpoints", &e))?;
        for entry in entries {
            let entry =
                entry.map_err(|e| machinery("cannot list the session's checkpoints", &e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.parse::<u64>().is_err() {
                continue;
            }
            let dir = open_sub(&self.ckpts, &name)
                .map_err(|e| machinery("cannot open a checkpoint", &e))?;
            let bytes = dir
                .read("meta.json")
                .map_err(|e| machinery("cannot read a checkpoint", &e))?;
            let meta: Meta = serde_json::from_slice(&bytes).map_err(|e| {
                WsfsError::new(
                    ErrorCode::IoError,
                    format!("checkpoint {name} is damaged: {e}"),
                )
            })?;
            out.push((meta, dir));
        }
        out.sort_by_key(|(m, _)| m.id);
        Ok(out)
    }

    /// `checkpoints`: every checkpoint, oldest first.
    pub fn checkpoints(&self) -> Result<Vec<CheckpointInfo>> {
        Ok(self
            .checkpoint_metas()?
            .into_iter()
            .map(|(m, _)| CheckpointInfo {
                id: m.id.to_string(),
                label: m.label,
                time: m.time,
                paths: m.entries.into_iter().map(|e| e.path).collect(),
            })
            .collect())
    }

    /// `checkpoint {label?}`: see the module documentation.
    pub fn checkpoint(&mut self, opts: &CheckpointOptions) -> Result<CheckpointResult> {
        let id = self.checkpoint_metas()?.last().map_or(1, |(m, _)| m.id + 1);
        let tmp_name = format!(".tmp-{id}");
        let err =
            |e: io::Error| machinery("cannot write the checkpoint; the session is unchanged", &e);
        let _ = self.ckpts.remove_dir_all(&tmp_name);
        let dir = open_sub(&self.ckpts, &tmp_name).map_err(err)?;
        let made = self.fill_checkpoint(&dir, id, opts);
        let meta = match made {
            Ok(m) => m,
            Err(e) => {
                let _ = self.ckpts.remove_dir_all(&tmp_name);
                return Err(e);
            }
        };
        let done = (|| -> io::Result<()> {
            rustix::fs::syncfs(&dir)?;
            store::write_atomic(
                &dir,
                "meta.json",
                &serde_json::to_vec(&meta).expect("serializes"),
            )?;
            self.ckpts.rename(&tmp_name, &self.ckpts, id.to_string())?;
            store::fsync_dir(&self.ckpts)
        })();
        if let Err(e) = done {
            let _ = self.ckpts.remove_dir_all(&tmp_name);
            return Err(err(e));
        }
        self.append(&[Record {
            op: 'c',
            path: None,
            fp: None,
        }])?;
        Ok(CheckpointResult { id: id.to_string() })
    }

    fn fill_checkpoint(&self, dir: &Dir, id: u64, opts: &CheckpointOptions) -> Result<Meta> {
        let mut entries = Vec::new();
        for (k, path) in self.touched.dirty.iter().enumerate() {
            let (parent, leaf) = parent_leaf(path);
            let fp = self.touched.fps.get(path).cloned();
            let mut image = Image {
                path: path.clone(),
                state: "absent".into(),
                opaque: false,
                mode: 0,
                image: None,
                target: None,
                fp,
            };
            let io = |e: io::Error| on_path(&e, path);
            if let Some(udir) = open_beneath(self.upper(), parent).map_err(io)? {
                if let Some((kind, stat)) = super::session::upper_kind(&udir, leaf).map_err(io)? {
                    image.mode = stat.st_mode & 0o7777;
                    match kind {
                        UpperKind::File => {
                            let src = crate::sandbox::sys::open_file(udir.as_fd(), leaf.as_bytes())
                                .map_err(io)?;
                            let name = k.to_string();
                            let mut dst = dir
                                .open_with(
                                    &name,
                                    cap_std::fs::OpenOptions::new().write(true).create_new(true),
                                )
                                .map_err(|e| {
                                    machinery(
                                        "cannot write the checkpoint; the session is unchanged",
                                        &e,
                                    )
                                })?
                                .into_std();
                            copy_into(&src, &mut dst).map_err(|e| {
                                machinery(
                                    "cannot write the checkpoint; the session is unchanged",
                                    &e,
                                )
                            })?;
                            image.state = "file".into();
                            image.image = Some(name);
                        }
                        UpperKind::Whiteout => image.state = "whiteout".into(),
                        UpperKind::Dir { opaque } => {
                            image.state = "dir".into();
                            image.opaque = opaque;
                        }
                        UpperKind::Symlink => {
                            let t = rustix::fs::readlinkat(&udir, leaf, Vec::new())
                                .map_err(|e| io(e.into()))?;
                            image.state = "symlink".into();
                            image.target = Some(t.to_string_lossy().into_owned());
                        }
                        UpperKind::Other => image.state = "absent".into(),
                    }
                }
            }
            entries.push(image);
        }
        Ok(Meta {
            id,
            label: opts.label.clone(),
            time: now_rfc3339(),
            entries,
        })
    }

    /// `rewind {id}`: see the module documentation.
    pub fn rewind(&mut self, opts: &RewindOptions) -> Result<()> {
        let target: u64 = opts.id.parse().map_err(|_| no_such(&opts.id))?;
        if !self.checkpoint_metas()?.iter().any(|(m, _)| m.id == target) {
            return Err(no_such(&opts.id));
        }
        store::write_atomic(&self.meta, INTENT, target.to_string().as_bytes()).map_err(|e| {
            machinery(
                "cannot record the rewind's intent; the session is unchanged",
                &e,
            )
        })?;
        self.do_rewind(target)?;
        let _ = self.meta.remove_file(INTENT);
        let _ = store::fsync_dir(&self.meta);
        Ok(())
    }

    fn do_rewind(&mut self, target: u64) -> Result<()> {
        let metas = self.checkpoint_metas()?;
        let mut paths: BTreeSet<String> = self.touched.dirty.clone();
        for (m, _) in metas.iter().filter(|(m, _)| m.id > target) {
            paths.extend(m.entries.iter().map(|e| e.path.clone()));
        }
        // Each path's image at the target: the newest checkpoint at or before it that has one.
        let mut plan: Vec<(String, Option<(Image, usize)>)> = Vec::new();
        for p in &paths {
            let found = metas
                .iter()
                .enumerate()
                .rev()
                .filter(|(_, (m, _))| m.id <= target)
                .find_map(|(i, (m, _))| {
                    m.entries
                        .iter()
                        .find(|e| &e.path == p)
                        .map(|e| (e.clone(), i))
                });
            plan.push((p.clone(), found));
        }
        // Removals deepest first, then creations shallowest first.
        plan.sort_by_key(|(p, _)| std::cmp::Reverse(p.matches('/').count()));
        for (p, img) in &plan {
            let (parent, leaf) = parent_leaf(p);
            let io = |e: io::Error| on_path(&e, p);
            let Some(udir) = open_beneath(self.upper(), parent).map_err(io)? else {
                continue;
            };
            let current = super::session::upper_kind(&udir, leaf).map_err(io)?;
            let keep_dir = matches!(
                (&current, img),
                (Some((UpperKind::Dir { .. }, _)), Some((i, _))) if i.state == "dir"
            );
            if current.is_some() && !keep_dir {
                super::session::remove_entry(&udir, leaf).map_err(io)?;
            }
        }
        plan.reverse();
        let mut records = Vec::new();
        for (p, img) in &plan {
            let io = |e: io::Error| on_path(&e, p);
            let (parent, leaf) = parent_leaf(p);
            if let Some((image, i)) = img {
                let udir = self.upper_dir_all(parent).map_err(io)?;
                self.restore(&udir, leaf, image, &metas[*i].1).map_err(io)?;
                let _ = store::fsync_dir(&udir);
            }
            let fp = img.as_ref().and_then(|(i, _)| i.fp.clone());
            records.push(match fp {
                Some(fp) => Record {
                    op: 's',
                    path: Some(p.clone()),
                    fp: Some(fp),
                },
                None => Record {
                    op: 'f',
                    path: Some(p.clone()),
                    fp: None,
                },
            });
        }
        records.push(Record {
            op: 'c',
            path: None,
            fp: None,
        });
        self.append(&records)?;
        for (m, _) in metas.iter().filter(|(m, _)| m.id > target) {
            let name = m.id.to_string();
            let aside = format!(".tmp-gone-{name}");
            self.ckpts
                .rename(&name, &self.ckpts, &aside)
                .map_err(|e| machinery("cannot remove a newer checkpoint", &e))?;
            let _ = self.ckpts.remove_dir_all(&aside);
        }
        let _ = store::fsync_dir(&self.ckpts);
        Ok(())
    }

    /// The upper directory `rel`, made (plain, 0755) where missing.
    fn upper_dir_all(&self, rel: &str) -> io::Result<Dir> {
        let mut here = self.upper().try_clone()?;
        for name in rel.split('/').filter(|n| !n.is_empty()) {
            match rustix::fs::mkdirat(&here, name, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            here = Dir::from(crate::sandbox::sys::open_child_dir(
                here.as_fd(),
                name.as_bytes(),
            )?);
        }
        Ok(here)
    }

    /// Puts `image` at `leaf` in `udir` (whatever is there is replaced; a directory kept).
    fn restore(&self, udir: &Dir, leaf: &str, image: &Image, ckpt: &Dir) -> io::Result<()> {
        match image.state.as_str() {
            "file" => {
                let name = image.image.as_deref().unwrap_or_default();
                let src = crate::sandbox::sys::open_file(ckpt.as_fd(), name.as_bytes())?;
                let mut staged = Staged::create(udir)?;
                copy_into(&src, staged.file())?;
                rustix::fs::fchmod(&*staged.file(), Mode::from_raw_mode(image.mode))?;
                staged.file().sync_all()?;
                staged.commit(OsStr::new(leaf), false)
            }
            "whiteout" => super::session::place_whiteout(udir, leaf),
            "dir" => {
                match rustix::fs::mkdirat(udir, leaf, Mode::from_raw_mode(0o700)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                let fd = crate::sandbox::sys::open_child_dir(udir.as_fd(), leaf.as_bytes())?;
                rustix::fs::fchmod(&fd, Mode::from_raw_mode(image.mode))?;
                if image.opaque {
                    rustix::fs::fsetxattr(
                        &fd,
                        super::session::OPAQUE_XATTR,
                        b"y",
                        rustix::fs::XattrFlags::empty(),
                    )?;
                } else {
                    match rustix::fs::fremovexattr(&fd, super::session::OPAQUE_XATTR) {
                        Ok(()) | Err(rustix::io::Errno::NODATA) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Ok(())
            }
            "symlink" => {
                let tmp = temp_name();
                rustix::fs::symlinkat(
                    image.target.as_deref().unwrap_or_default(),
                    udir,
                    tmp.as_str(),
                )?;
                rustix::fs::renameat(udir, tmp.as_str(), udir, leaf)?;
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

fn no_such(id: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::InvalidArguments,
        format!("there is no checkpoint {id:?} in this session; call checkpoints for the ids"),
    )
}

/// At open: finishes a rewind a crash interrupted.
pub(crate) fn recover(session: &mut Session) -> Result<()> {
    let bytes = match session.meta.read(INTENT) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(machinery("cannot read the session's rewind intent", &e)),
    };
    if let Some(id) = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
    {
        session.do_rewind(id)?;
    }
    let _ = session.meta.remove_file(INTENT);
    let _ = store::fsync_dir(&session.meta);
    // Newer checkpoints set aside and not yet removed.
    if let Ok(entries) = session.ckpts.entries() {
        for entry in entries.flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(".tmp-gone-")
            {
                let _ = session.ckpts.remove_dir_all(entry.file_name());
            }
        }
    }
    Ok(())
}
