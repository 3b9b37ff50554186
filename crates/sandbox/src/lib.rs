//! wsfs's lowest layer: a workspace root held as a directory handle, every path resolved
//! beneath it by the kernel (`resolve`, `root`), the system calls the tools need on handles
//! (`sys`, `fileops`), temp files, walks, the state directory, and the journaled multi-file
//! commit (`commit`). The base modules every layer shares (errors, cancellation, names, text)
//! live here too.

#![deny(unsafe_code)]

pub mod commit;
pub mod control;
pub mod error;
pub mod json;
pub mod lines;
pub mod names;
pub mod paths;
pub mod text;

pub mod create_dirs;
pub mod fileops;
pub mod gate;
pub mod new_dirs;
pub mod proc;
pub mod protected;
pub mod resolve;
pub mod root;
pub mod state_dir;
pub mod sys;
pub mod tempfile;
pub mod view_mount;
pub mod walk;
