//! Tests of the sandbox crate's resolution and records that need a workspace over them.

mod new_dirs;
mod resolve;
