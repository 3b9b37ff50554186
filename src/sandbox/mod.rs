pub mod create_dirs;
pub mod fileops;
pub mod new_dirs;
pub mod resolve;
pub mod state_dir;
pub mod sys;
pub mod tempfile;
pub mod walk;
