//! git, always hardened, under the runner.
//!
//! A repository's own config can turn a read into code execution: `core.fsmonitor` runs a
//! program on every `git status`, `core.hooksPath` picks the hooks `git commit` runs,
//! `diff.external` and `diff.<driver>.textconv` run on `git diff`, `filter.<driver>.clean`
//! runs when `git status` or `git add` reads a file, `core.pager` on any output, and
//! `gpg.program` when `commit.gpgSign` is set. Every git this module runs gets:
//! - no system or global config (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`), no
//!   discovery above the workspace (`GIT_CEILING_DIRECTORIES`), no prompt, no optional locks;
//! - command-line overrides, which beat any repository config: fsmonitor off, hooks from
//!   `/dev/null`, pager `cat`, no external diff, no gpg, no credential helper or ssh, no
//!   protocol allowed; and every filter driver the repository's config names, emptied
//!   (`filter.<name>.clean=` etc.: an empty command is no command);
//! - `--no-ext-diff --no-textconv` on every diff.
//!
//! The kernel sandbox still confines git (hooks or filters that slipped through run under
//! Landlock like any program); this is what keeps a read a read.

pub(crate) mod commit;
pub(crate) mod diff;
pub(crate) mod quote;
pub(crate) mod status;

use super::runner::{Control, ExecOutcome, ExecRequest, Runner};
use super::scratch::Scratch;
use crate::error::{ErrorCode, WsfsError};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The overrides that keep a read a read (`-c` options, before the subcommand).
const HARDENING: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=false",
    "sequence.editor=false",
    "core.askPass=",
    "core.sshCommand=false",
    "diff.external=",
    "credential.helper=",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gpg.program=false",
    "protocol.allow=never",
];

/// What the tools' parsers expect of git's output.
const OUTPUT: &[&str] = &[
    "core.quotePath=false",
    "core.untrackedCache=false",
    "status.relativePaths=false",
    "color.ui=false",
];

/// Environment for every git.
const GIT_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("GIT_EDITOR", "false"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("LC_ALL", "C"),
];

/// Git in one directory of the workspace view, with the repository's filter drivers known.
pub(crate) struct Git<'a> {
    runner: &'a Runner,
    dir: PathBuf,
    ctl: Control,
    overrides: Vec<String>,
    /// Whether the repository's config names a committer (the global config is not read).
    pub(crate) has_identity: bool,
}

impl<'a> Git<'a> {
    /// Reads the repository's config (a read that runs nothing) to learn what to override.
    pub(crate) fn open(
        runner: &'a Runner,
        dir: &Path,
        ctl: &Control,
    ) -> Result<Git<'a>, WsfsError> {
        let mut git = Git {
            runner,
            dir: dir.to_path_buf(),
            ctl: ctl.clone(),
            overrides: HARDENING
                .iter()
                .chain(OUTPUT)
                .map(|s| s.to_string())
                .collect(),
            has_identity: false,
        };
        let listing = git.run(&["config", "--null", "--name-only", "--list"], None)?;
        if listing.exit_code != Some(0) {
            return Err(git.failure("reading the repository's config", &listing));
        }
        let names = listing.stdout.text();
        let mut drivers: Vec<&str> = names
            .split('\0')
            .filter_map(|key| key.strip_prefix("filter."))
            .filter_map(|rest| rest.rsplit_once('.').map(|(name, _)| name))
            .collect();
        drivers.sort_unstable();
        drivers.dedup();
        for name in drivers {
            for field in ["clean", "smudge", "process"] {
                git.overrides.push(format!("filter.{name}.{field}="));
            }
            git.overrides.push(format!("filter.{name}.required=false"));
        }
        git.has_identity = names
            .split('\0')
            .any(|k| k.eq_ignore_ascii_case("user.email"));
        Ok(git)
    }

    /// The request for `git <args>` with every override, ready to run.
    pub(crate) fn request(&self, args: &[&str]) -> ExecRequest {
        let mut req = ExecRequest::new("git", &self.dir).under(&self.ctl);
        req.args.push("--no-pager".into());
        for o in &self.overrides {
            req.args.push("-c".into());
            req.args.push(o.into());
        }
        req.args.extend(args.iter().map(OsString::from));
        for (k, v) in GIT_ENV {
            req.env.push(((*k).into(), (*v).into()));
        }
        let ceiling = self
            .runner
            .places()
            .view_root
            .parent()
            .map(|p| p.as_os_str().to_os_string())
            .unwrap_or_default();
        req.env.push(("GIT_CEILING_DIRECTORIES".into(), ceiling));
        req
    }

    /// Runs `git <args>`; `stdout_cap` for outputs parsed whole.
    pub(crate) fn run(
        &self,
        args: &[&str],
        stdout_cap: Option<usize>,
    ) -> Result<ExecOutcome, WsfsError> {
        let mut req = self.request(args);
        req.stdout_cap = stdout_cap;
        self.run_request(&req, None)
    }

    pub(crate) fn run_request(
        &self,
        req: &ExecRequest,
        scratch: Option<&Scratch>,
    ) -> Result<ExecOutcome, WsfsError> {
        let out = match scratch {
            Some(s) => self.runner.run(req, s)?,
            None => self.runner.run_once(req)?,
        };
        if let Some(err) = out.stop_error("git") {
            return Err(err);
        }
        Ok(out)
    }

    /// A failed git as an error for the model: what was being done and git's own words.
    pub(crate) fn failure(&self, doing: &str, out: &ExecOutcome) -> WsfsError {
        let said = out.stderr.tail_text(2000);
        let said = said.trim();
        if said.contains("not a git repository") {
            return WsfsError::new(
                ErrorCode::InvalidArguments,
                "this directory is not inside a git repository rooted in the workspace; \
                 use workspace_info to see where the repository is",
            );
        }
        WsfsError::new(ErrorCode::IoError, format!("git failed {doing}: {said}"))
    }
}

/// The hardening as environment, for the git a shell or a test suite runs: config given
/// through `GIT_CONFIG_COUNT` has the command line's precedence, above the repository's.
pub(crate) fn shell_env() -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = GIT_ENV
        .iter()
        .filter(|(k, _)| *k != "LC_ALL")
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    env.push(("GIT_CONFIG_COUNT".into(), HARDENING.len().to_string()));
    for (i, setting) in HARDENING.iter().enumerate() {
        let (key, value) = setting.split_once('=').unwrap_or((setting, ""));
        env.push((format!("GIT_CONFIG_KEY_{i}"), key.to_string()));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), value.to_string()));
    }
    env
}

/// Refuses a ref that git would take as an option (`--output=...`) or that has no place in a
/// ref name; the command line also says `--end-of-options` before refs.
pub(crate) fn check_ref(what: &str, value: &str) -> Result<(), WsfsError> {
    let bad = value.is_empty()
        || value.starts_with('-')
        || value.chars().any(|c| c.is_control() || c == ' ')
        || value.len() > 256;
    if bad {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("{what} {value:?} is not a git revision; give a branch, tag or commit such as 'main' or 'HEAD~1'"),
        ));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod tests;
