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
//!   `/dev/null`, pager `cat`, no gpg or signature checks, no credential helper or ssh, no
//!   protocol allowed;
//! - for every program the repository's config names (read with `git config --list`, which
//!   follows `include.path`): filter drivers emptied (`filter.<name>.clean=` etc.: an empty
//!   command is no command), `diff.<name>.textconv` made `cat`, an external diff
//!   (`diff.external`, `diff.<name>.command`) made plain `diff -u`, merge drivers made
//!   `git merge-file`. An empty value would not do for these: git runs it and fails;
//! - `--no-ext-diff --no-textconv` on every diff the tools run.
//!
//! The kernel sandbox still confines git (hooks or filters that slipped through run under
//! Landlock like any program); this is what keeps a read a read.

pub mod quote;

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
    "credential.helper=",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "log.showSignature=false",
    "gpg.program=false",
    "gpg.openpgp.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "protocol.allow=never",
];

/// An external diff that runs nothing of the repository's: git calls it with `path old-file
/// old-hex old-mode new-file new-hex new-mode` (only `path` for an unmerged one), through `sh`.
const PLAIN_DIFF: &str = "wsfs_plain_diff() { if [ $# -lt 7 ]; then echo \"* Unmerged path $1\"; \
     return 0; fi; echo \"diff --git a/$1 b/$1\"; \
     diff -u --label \"a/$1\" --label \"b/$1\" \"$2\" \"$5\" || :; }; wsfs_plain_diff";

/// git's own three-way merge, for a merge driver the repository defines.
const PLAIN_MERGE: &str = "git merge-file --marker-size=%L %A %O %B";

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

/// Git in one directory of the workspace view, with the repository's own programs known.
pub struct Git<'a> {
    runner: &'a Runner,
    dir: PathBuf,
    ctl: Control,
    overrides: Vec<String>,
    /// The overrides for what the repository's config names, as (key, value).
    repository_overrides: Vec<(String, String)>,
    /// Whether the repository's config names a committer (the global config is not read).
    pub has_identity: bool,
}

impl<'a> Git<'a> {
    /// Reads the repository's config (a read that runs nothing) to learn what to override.
    pub fn open(runner: &'a Runner, dir: &Path, ctl: &Control) -> Result<Git<'a>, WsfsError> {
        let mut git = Git {
            runner,
            dir: dir.to_path_buf(),
            ctl: ctl.clone(),
            overrides: HARDENING
                .iter()
                .chain(OUTPUT)
                .map(|s| s.to_string())
                .collect(),
            repository_overrides: Vec::new(),
            has_identity: false,
        };
        let listing = git.run(&["config", "--null", "--name-only", "--list"], None)?;
        if listing.exit_code != Some(0) {
            return Err(git.failure("reading the repository's config", &listing));
        }
        let names = listing.stdout.text();
        git.repository_overrides = repository_overrides(&names);
        git.overrides.extend(
            git.repository_overrides
                .iter()
                .map(|(key, value)| format!("{key}={value}")),
        );
        git.has_identity = names
            .split('\0')
            .any(|k| k.eq_ignore_ascii_case("user.email"));
        Ok(git)
    }

    /// The request for `git <args>` with every override, ready to run.
    pub fn request(&self, args: &[&str]) -> ExecRequest {
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
    pub fn run(&self, args: &[&str], stdout_cap: Option<usize>) -> Result<ExecOutcome, WsfsError> {
        let mut req = self.request(args);
        req.stdout_cap = stdout_cap;
        self.run_request(&req, None)
    }

    pub fn run_request(
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
    pub fn failure(&self, doing: &str, out: &ExecOutcome) -> WsfsError {
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

/// Overrides for every program the repository's config names, from `git config --null
/// --name-only --list` (keys `section.subsection.variable`, the subsection as written).
/// Driver names are the repository's own, so they can only be learned from its config.
fn repository_overrides(names: &str) -> Vec<(String, String)> {
    let mut overrides = Vec::new();
    let mut set = |key: String, value: &str| overrides.push((key, value.to_string()));
    for key in names.split('\0') {
        if key == "diff.external" {
            set(key.to_string(), PLAIN_DIFF);
        } else if let Some((name, _)) = key
            .strip_prefix("filter.")
            .and_then(|rest| rest.rsplit_once('.'))
        {
            for field in ["clean", "smudge", "process"] {
                set(format!("filter.{name}.{field}"), "");
            }
            set(format!("filter.{name}.required"), "false");
        } else if let Some((name, field)) = key
            .strip_prefix("diff.")
            .and_then(|rest| rest.rsplit_once('.'))
        {
            // Only the fields it sets: a textconv added to a driver that has none would
            // change how git shows its binary files.
            match field {
                "textconv" => {
                    set(format!("diff.{name}.textconv"), "cat");
                    set(format!("diff.{name}.cachetextconv"), "false");
                }
                "command" => set(format!("diff.{name}.command"), PLAIN_DIFF),
                _ => {}
            }
        } else if let Some((name, "driver")) = key
            .strip_prefix("merge.")
            .and_then(|rest| rest.rsplit_once('.'))
        {
            set(format!("merge.{name}.driver"), PLAIN_MERGE);
        }
    }
    overrides.sort_unstable();
    overrides.dedup();
    overrides
}

/// The hardening as environment, for the git a shell or a test suite runs in `dir`: config
/// given through `GIT_CONFIG_COUNT` has the command line's precedence, above the
/// repository's. The repository's config is read first, as `Git::open` does, to override the
/// programs it names; where it cannot be read (no git, a config git rejects) the shell's git
/// cannot read it either, and the fixed hardening is all there is to give.
pub fn shell_env(runner: &Runner, dir: &Path, ctl: &Control) -> Vec<(String, String)> {
    let from_repository = Git::open(runner, dir, ctl)
        .map(|git| git.repository_overrides)
        .unwrap_or_default();
    let mut env: Vec<(String, String)> = GIT_ENV
        .iter()
        .filter(|(k, _)| *k != "LC_ALL")
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let settings: Vec<(String, String)> = HARDENING
        .iter()
        .map(|setting| {
            let (key, value) = setting.split_once('=').unwrap_or((setting, ""));
            (key.to_string(), value.to_string())
        })
        .chain(from_repository)
        .collect();
    env.push(("GIT_CONFIG_COUNT".into(), settings.len().to_string()));
    for (i, (key, value)) in settings.into_iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), key));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), value));
    }
    env
}

/// Refuses a ref that git would take as an option (`--output=...`) or that has no place in a
/// ref name; the command line also says `--end-of-options` before refs.
pub fn check_ref(what: &str, value: &str) -> Result<(), WsfsError> {
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

#[cfg(any(test, feature = "test-support"))]
pub mod fixture;
