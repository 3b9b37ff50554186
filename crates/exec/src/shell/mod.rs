//! safe_shell's judge: a command line parsed with bash's grammar, judged against a policy file
//! (`config/safe_shell_policy.toml`), and rebuilt from what was judged for `bash -c`. The run
//! itself goes through the same confined runner as everything else, so an allowed command
//! still cannot write outside the workspace: the judge is about intent and good habits, the
//! kernel is the boundary.

pub mod judge;
mod load;
pub mod options;
pub mod policy;
pub mod words;
pub mod wrappers;

pub use judge::{judge, ReasonCode, Verdict};
pub use policy::ShellRules;
