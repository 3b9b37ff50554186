//! The workspace policy: what the host lets an agent read and change.
//!
//! - `writes_enabled: false` refuses every tool whose annotations say it is not read-only,
//!   with `writes_disabled`, before its arguments are even parsed (in `dispatch`).
//! - `deny_read` / `deny_write` are gitignore-style globs (`wsfs_sandbox::gitignore`) matched against
//!   the **resolved** workspace-relative path: the path of the directory handle the resolver
//!   actually opened (its real path, read from `/proc/self/fd`, relative to the canonical root)
//!   plus the leaf name. When the resolver opened that directory by plain names with no
//!   symlink on the way (`DirRef::Known`), its path is the one it was opened by, and
//!   `/proc/self/fd` is not read (two system calls saved on every checked call). So `a/../.env`, `./.env` and a symlink to `.env` are all `.env`, and
//!   the model's string is never what is matched. A pattern that names a directory denies
//!   everything under it; letter case is matched loosely (see [`Rules`]). Checking costs
//!   nothing for a call the rules cannot concern: reading tools skip it when there are no
//!   `deny_read` rules (the default), changing tools when there are no `deny_write` rules.
//! - The audit log (see `audit`) is never reachable through the tools: a path whose file is the
//!   log (same device and inode) is refused, and walks leave it out (by its resolved path, and
//!   by inode wherever it is kept).
//!
//! The policy is the resolver's [`Gate`] (`sandbox::gate`): every resolution names its
//! [`Access`] and passes the policy, which the sandbox asks on the path it reached (working
//! the path out only when the rules need it), so the check cannot be forgotten and the
//! policy never calls resolution back. Walkers and listings ask a `WalkFilter`
//! (`sandbox::walk::deny`) about each entry, which asks [`Gate::walk_skip`] and also leaves
//! out the protected system locations in unrestricted mode.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::audit::AuditLog;
use crate::sandbox::gate::{Access, Gate, Reached, Skipped, WalkNeeds};
use crate::sandbox::gitignore::{Gitignore, GitignoreBuilder, Match};
use crate::sandbox::root::shown;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `policy` object of the workspace config. Every field is optional.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// `false` makes the workspace read-only: every changing tool returns `writes_disabled`.
    #[serde(default = "yes")]
    pub writes_enabled: bool,
    /// Paths no tool may read (or list, or walk into).
    #[serde(default)]
    pub deny_read: Vec<String>,
    /// Paths no tool may change. Giving the field replaces the default `[".git/**"]`.
    #[serde(default = "default_deny_write")]
    pub deny_write: Vec<String>,
    /// Where one JSON line per call is appended; `None`: no audit log.
    #[serde(default)]
    pub audit_log: Option<String>,
    /// Each audit line also records the call's arguments, with every argument that carries
    /// file content replaced by `{length, sha256}` (`guard::audit::CONTENT_ARGUMENTS`), so a
    /// call can be replayed or debugged without the log ever holding contents. Needs
    /// `audit_log`. Default false.
    #[serde(default)]
    pub audit_arguments: bool,
    /// The only tools the workspace offers and runs, by the names it offers them under (its
    /// profile's); `None`: every tool. Checked against those names at the ABI edge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_tools: Option<Vec<String>>,
    /// Tools the workspace neither offers nor runs (`policy_denied`), by the same names.
    #[serde(default)]
    pub deny_tools: Vec<String>,
    /// The developer tools (workspace_info, git_*, run_tests, run_lint, typecheck,
    /// safe_shell), which run programs in the workspace under a kernel sandbox. Off by
    /// default: every one returns `exec_disabled`.
    #[serde(default)]
    pub exec_enabled: bool,
    /// The raw `shell` tool as well (needs `exec_enabled`). Off by default.
    #[serde(default)]
    pub shell_enabled: bool,
    /// Refuse to run a program with `sandbox_unavailable` when Landlock cannot be applied
    /// (default true). `false` runs it unconfined, and results say `"sandbox": "none"`.
    #[serde(default = "yes")]
    pub exec_require_sandbox: bool,
    /// Let programs connect and bind TCP and use other sockets (default false).
    #[serde(default)]
    pub exec_network: bool,
    /// Directories programs may read and execute besides the system's (`/usr`, `/bin`,
    /// `/lib*`, `/etc`, ...): toolchain homes such as `~/.cargo`, `/opt/go`, a virtualenv.
    /// The word `"auto"` (alone or with directories) adds the toolchains found on the host's
    /// PATH when the workspace opens (a pyenv version, or pyenv's root for its shims, a
    /// virtualenv and the Python it links to,
    /// nvm's node version, `~/.cargo` and `~/.rustup`, the prefix above another `bin/`), read
    /// and execute only; `workspace_info` lists those programs cannot read.
    #[serde(default)]
    pub exec_read_paths: Vec<String>,
    /// Host environment variables programs get besides `PATH`, `HOME` and `LANG`: names, or
    /// prefixes ending in `*`.
    #[serde(default)]
    pub exec_env_allow: Vec<String>,
    /// A program's wall-clock limit in seconds, default 60; a tool's `timeout_sec` may only
    /// shorten it. The exec tools are bounded by this, not by `operation_timeout_ms`.
    #[serde(default = "default_exec_timeout")]
    pub exec_timeout_sec: u64,
    /// The host's safe_shell rules: an absolute path to a file in the shipped file's format
    /// (`config/safe_shell_policy.toml`), read once when the workspace opens and checked
    /// against its own examples; absent: the shipped rules.
    #[serde(default)]
    pub safe_shell_rules: Option<String>,
}

fn default_exec_timeout() -> u64 {
    60
}

/// The longest `exec_timeout_sec` a host may set (one day).
pub const MAX_EXEC_TIMEOUT_SEC: u64 = 24 * 3600;

fn yes() -> bool {
    true
}

/// Agents may read a repository's history but not rewrite it with file tools.
pub const DEFAULT_DENY_WRITE: &[&str] = &[".git/**"];

fn default_deny_write() -> Vec<String> {
    DEFAULT_DENY_WRITE.iter().map(|s| s.to_string()).collect()
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            writes_enabled: true,
            deny_read: Vec::new(),
            deny_write: default_deny_write(),
            audit_log: None,
            audit_arguments: false,
            allow_tools: None,
            deny_tools: Vec::new(),
            exec_enabled: false,
            shell_enabled: false,
            exec_require_sandbox: true,
            exec_network: false,
            exec_read_paths: Vec::new(),
            exec_env_allow: Vec::new(),
            exec_timeout_sec: default_exec_timeout(),
            safe_shell_rules: None,
        }
    }
}

/// Bounds on the rules, so one config cannot ask for unbounded matching work.
const MAX_RULES: usize = 10_000;
const MAX_RULE_BYTES: usize = 4096;

impl PolicyConfig {
    /// Refuses rules that are not valid globs, or that gitignore would silently ignore.
    pub fn validate(&self) -> Result<()> {
        Rules::compile("deny_read", &self.deny_read)?;
        Rules::compile("deny_write", &self.deny_write)?;
        if self
            .audit_log
            .as_deref()
            .is_some_and(|p| p.trim().is_empty())
        {
            return Err(config_error(
                "policy.audit_log is empty; give a file path, or leave the field out",
            ));
        }
        if self.audit_arguments && self.audit_log.is_none() {
            return Err(config_error(
                "policy.audit_arguments is true but there is no policy.audit_log to record the \
                 arguments in; give audit_log a file path, or leave audit_arguments out",
            ));
        }
        if self.exec_timeout_sec == 0 || self.exec_timeout_sec > MAX_EXEC_TIMEOUT_SEC {
            return Err(config_error(format!(
                "policy.exec_timeout_sec must be between 1 and {MAX_EXEC_TIMEOUT_SEC}"
            )));
        }
        for p in &self.exec_read_paths {
            if !p.starts_with('/') && p != "auto" {
                return Err(config_error(format!(
                    "policy.exec_read_paths: {p:?} is not an absolute path; give a directory's \
                     full path on the host, or \"auto\" for the toolchains wsfs finds on the PATH"
                )));
            }
        }
        if let Some(p) = self
            .safe_shell_rules
            .as_ref()
            .filter(|p| !p.starts_with('/'))
        {
            return Err(config_error(format!(
                "policy.safe_shell_rules: {p:?} is not an absolute path; give the rules file's \
                 full path on the host"
            )));
        }
        for v in &self.exec_env_allow {
            let name = v.strip_suffix('*').unwrap_or(v);
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(config_error(format!(
                    "policy.exec_env_allow: {v:?} is not a variable name (or a prefix ending in *)"
                )));
            }
        }
        if self.exec_enabled {
            if let Some(problem) = self.exec_conflict() {
                return Err(config_error(problem));
            }
        }
        Ok(())
    }

    /// Why programs cannot honour this policy's deny rules, if they cannot. Landlock grants
    /// access to whole directory trees and cannot take a path inside a granted tree back, so
    /// a program run in the workspace could read what `deny_read` hides from the file tools
    /// and change what `deny_write` protects. `.git/**` (the default `deny_write`) is the one
    /// rule let through: git itself must write there, and wsfs's git never runs what a
    /// repository's config names (see `exec::git`).
    pub fn exec_conflict(&self) -> Option<String> {
        if !self.deny_read.is_empty() {
            return Some(format!(
                "policy.exec_enabled cannot be combined with deny_read ({}): programs run in the \
                 workspace could read those files, and the kernel sandbox cannot hide paths \
                 inside the workspace from them; drop deny_read or leave exec off",
                self.deny_read.join(", ")
            ));
        }
        let extra: Vec<&str> = self
            .deny_write
            .iter()
            .map(String::as_str)
            .filter(|r| !DEFAULT_DENY_WRITE.contains(r))
            .collect();
        if !extra.is_empty() {
            return Some(format!(
                "policy.exec_enabled cannot be combined with deny_write rules other than \
                 .git/** ({}): programs run in the workspace could change those files, and the \
                 kernel sandbox cannot protect paths inside the workspace from them; drop the \
                 rules or leave exec off",
                extra.join(", ")
            ));
        }
        None
    }
}

fn config_error(message: impl Into<String>) -> WsfsError {
    WsfsError::new(ErrorCode::InvalidArguments, message)
}

/// One list of compiled gitignore-style rules.
///
/// Rules match letter case loosely: on a case-insensitive file system (vfat, exFAT, SMB, a
/// casefolded ext4/f2fs/tmpfs directory) `.ENV` opens the file `.env`, and wsfs cannot tell
/// from a path which spelling the file system will take, so every spelling is denied. A path
/// is denied when the rules deny it with case folded (`folded`) or by exact case (`exact`):
/// a `!` exception matching loosely never re-allows what the exact rules deny.
#[derive(Debug)]
struct Rules {
    field: &'static str,
    folded: Gitignore,
    /// Only when there are `!` exceptions: without them, whatever the exact rules deny the
    /// folded ones deny too.
    exact: Option<Gitignore>,
}

impl Rules {
    /// `None` for an empty list: nothing to check, nothing to pay.
    fn compile(field: &'static str, patterns: &[String]) -> Result<Option<Rules>> {
        if patterns.is_empty() {
            return Ok(None);
        }
        if patterns.len() > MAX_RULES {
            return Err(config_error(format!(
                "policy.{field} has {} rules; the limit is {MAX_RULES}",
                patterns.len()
            )));
        }
        for (i, pattern) in patterns.iter().enumerate() {
            let at = format!("policy.{field}[{i}]");
            if pattern.trim().is_empty() || pattern.starts_with('#') {
                return Err(config_error(format!(
                    "{at} is {pattern:?}, which gitignore treats as a blank line or a comment \
                     and never matches; remove it (write \\# for a name starting with '#')"
                )));
            }
            if pattern.len() > MAX_RULE_BYTES || pattern.contains(['\n', '\r', '\0']) {
                return Err(config_error(format!(
                    "{at} must be one line without NUL bytes, at most {MAX_RULE_BYTES} bytes"
                )));
            }
        }
        let folded = Self::build(field, patterns, true)?;
        let exact = match folded.has_negations() {
            false => None,
            true => Some(Self::build(field, patterns, false)?),
        };
        Ok(Some(Rules {
            field,
            folded,
            exact,
        }))
    }

    fn build(field: &'static str, patterns: &[String], fold_case: bool) -> Result<Gitignore> {
        let mut builder = GitignoreBuilder::new();
        builder.case_insensitive(fold_case);
        for (i, pattern) in patterns.iter().enumerate() {
            builder.add_line(pattern).map_err(|e| {
                config_error(format!("policy.{field}[{i}] is not a valid glob: {e}"))
            })?;
        }
        builder
            .build()
            .map_err(|e| config_error(format!("policy.{field}: {e}")))
    }

    /// The rule denying `rel` (or a directory above it), if any. A later `!rule` that matches
    /// re-allows, as in gitignore. This is what the `ignore` crate calls `matched_path_or_any_parents` (the path,
    /// then each parent, nearest first, until one matches), with the deadline checked every
    /// 64 levels: a 2,000-level path costs milliseconds of matching.
    fn denying(&self, rel: &Path, is_dir: bool, ctl: &CallControl) -> Result<Option<&str>> {
        if let Some(found) = denying_in(&self.folded, rel, is_dir, ctl)? {
            return Ok(Some(found));
        }
        match &self.exact {
            Some(exact) => denying_in(exact, rel, is_dir, ctl),
            None => Ok(None),
        }
    }

    /// `denying` for an entry whose parent directories are known to be allowed (a walk's):
    /// only the entry itself is matched, which is what `denying` would find first anyway.
    fn denying_entry(&self, rel: &Path, is_dir: bool) -> Option<&str> {
        rule(self.folded.matched(rel, is_dir))
            .or_else(|| rule(self.exact.as_ref()?.matched(rel, is_dir)))
    }
}

/// `denying` in one set: the path, then each parent, with deadline checks.
fn denying_in<'s>(
    set: &'s Gitignore,
    rel: &Path,
    is_dir: bool,
    ctl: &CallControl,
) -> Result<Option<&'s str>> {
    let mut found = set.matched(rel, is_dir);
    let mut path = rel;
    let mut levels = 0u32;
    while found.is_none() {
        let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) else {
            break; // the workspace root itself is never denied
        };
        levels += 1;
        if levels.is_multiple_of(64) {
            ctl.check()?;
        }
        found = set.matched(parent, true);
        path = parent;
    }
    Ok(rule(found))
}

fn rule(found: Match<'_>) -> Option<&str> {
    match found {
        Match::Ignored(pattern) => Some(pattern.original()),
        Match::Included(_) | Match::None => None,
    }
}

/// The compiled policy of an open workspace.
#[derive(Debug)]
pub struct Policy {
    pub writes_enabled: bool,
    deny_read: Option<Rules>,
    deny_write: Option<Rules>,
    pub audit: Option<AuditLog>,
    /// The audit log's resolved path relative to the root, if it lies inside the workspace.
    audit_rel: Option<PathBuf>,
    config: PolicyConfig,
}

impl Policy {
    /// Compiles the rules and opens the audit log. `root` is the canonical workspace root.
    pub fn open(config: &PolicyConfig, root: &Path) -> Result<Policy> {
        let audit = config
            .audit_log
            .as_deref()
            .map(AuditLog::open)
            .transpose()?;
        let audit_rel = audit
            .as_ref()
            .and_then(|log| log.path().strip_prefix(root).ok().map(Path::to_path_buf));
        if config.exec_enabled {
            if let Some(rel) = &audit_rel {
                return Err(config_error(format!(
                    "policy.exec_enabled cannot be combined with an audit log inside the \
                     workspace ({}): programs run in the workspace could rewrite it; keep the \
                     log outside the workspace or leave exec off",
                    rel.display()
                )));
            }
        }
        let mut config = config.clone();
        if let Some(log) = &audit {
            config.audit_log = Some(log.path().display().to_string());
        }
        Ok(Policy {
            writes_enabled: config.writes_enabled,
            deny_read: Rules::compile("deny_read", &config.deny_read)?,
            deny_write: Rules::compile("deny_write", &config.deny_write)?,
            audit,
            audit_rel,
            config,
        })
    }

    /// The effective policy, as `wsfs_workspace_open` reports it (the audit log absolute).
    pub fn config(&self) -> &PolicyConfig {
        &self.config
    }

    /// Whether `allow_tools` and `deny_tools` let the tool named `tool` run (by the name the
    /// workspace offers it under).
    pub fn tool_allowed(&self, tool: &str) -> bool {
        let allow = &self.config.allow_tools;
        allow.as_ref().is_none_or(|a| a.iter().any(|t| t == tool))
            && !self.config.deny_tools.iter().any(|t| t == tool)
    }

    /// The refusal of a tool `allow_tools` or `deny_tools` leaves out.
    pub fn tool_denied(tool: &str) -> WsfsError {
        let shown: String = tool.chars().take(64).collect();
        WsfsError::new(
            ErrorCode::PolicyDenied,
            format!(
                "{shown} is not available: the host's policy for this workspace does not allow \
                 it (policy.allow_tools / deny_tools); do not retry, use the tools offered"
            ),
        )
    }

    /// Whether resolving a path with `access` needs the resolved path at all.
    pub fn needs_path(&self, access: Access) -> bool {
        (access.reads && self.deny_read.is_some()) || (access.writes && self.deny_write.is_some())
    }

    /// The rule that refuses `access` to `rel`, with the list it comes from.
    fn refusal(
        &self,
        rel: &Path,
        is_dir: bool,
        access: Access,
        ctl: &CallControl,
    ) -> Result<Option<(&'static str, &str)>> {
        let lists = [
            (access.reads, &self.deny_read),
            (access.writes, &self.deny_write),
        ];
        for (_, rules) in lists.iter().filter(|(wanted, _)| *wanted) {
            if let Some(r) = rules {
                if let Some(rule) = r.denying(rel, is_dir, ctl)? {
                    return Ok(Some((r.field, rule)));
                }
            }
        }
        Ok(None)
    }
}

impl Policy {
    /// Refuses `access` to the resolved `rel` (`inside` the root, else relative to `/`) if a
    /// rule denies it; `display` is the path as the model wrote it.
    fn refuse_denied(
        &self,
        rel: &Path,
        inside: bool,
        is_dir: bool,
        access: Access,
        display: &str,
        ctl: &CallControl,
    ) -> Result<()> {
        let Some((field, rule)) = self.refusal(rel, is_dir, access, ctl)? else {
            return Ok(());
        };
        let resolved = shown(rel, inside);
        let shown = if resolved == display {
            display.to_string()
        } else {
            format!("{display} (which resolves to {resolved})")
        };
        let (what, next) = match field {
            "deny_read" => ("reading", "Work with other files"),
            _ => (
                "changing",
                "It can still be read if reading is allowed; change other files",
            ),
        };
        Err(WsfsError::new(
            ErrorCode::PolicyDenied,
            format!(
                "{shown} is closed to {what} by the workspace policy ({field} rule '{rule}'). \
                 The host set this rule; retrying will not help. {next}"
            ),
        ))
    }

    /// Whether a change that reaches below a directory (a recursive deletion, a directory
    /// move) must ask [`Policy::refuses_inside`] about each entry.
    pub fn checks_inside(&self, access: Access) -> bool {
        self.needs_path(access) || self.audit_rel.is_some()
    }

    /// For an entry a recursive deletion or a directory move reaches (`rel`: resolved,
    /// workspace-relative): what refuses `access` to it, as a phrase for the model (`deny_write
    /// rule '.git/**'`), or `None`. The audit log is always refused. A deadline passing
    /// while rules are matched counts as refused: the caller keeps the entry.
    pub fn refuses_inside(
        &self,
        rel: &Path,
        is_dir: bool,
        access: Access,
        ctl: &CallControl,
    ) -> Option<String> {
        if self.audit_rel.as_deref() == Some(rel) {
            return Some("it is the workspace's audit log".to_string());
        }
        match self.refusal(rel, is_dir, access, ctl) {
            Ok(found) => found.map(|(field, rule)| format!("{field} rule '{rule}'")),
            Err(_) => Some("the deadline passed while the policy was checked".to_string()),
        }
    }

    /// Whether the directory `rel` (resolved, workspace-relative) is denied to reading, with
    /// the directories above it: for a listing that starts without the resolver (the
    /// suggestions after `path_not_found`). A deadline passing counts as denied.
    pub fn dir_denied(&self, rel: &Path, ctl: &CallControl) -> bool {
        match &self.deny_read {
            Some(rules) => !matches!(rules.denying(rel, true, ctl), Ok(None)),
            None => false,
        }
    }
}

/// The policy is the gate of every resolution (see `sandbox::gate`): the audit log by
/// identity, then the deny rules on the path the resolver actually reached.
impl Gate for Policy {
    fn wants_path(&self, access: Access) -> bool {
        self.needs_path(access)
    }

    fn check(
        &self,
        at: &Reached<'_>,
        access: Access,
        display: &str,
        ctl: &CallControl,
    ) -> Result<()> {
        if let (Some(log), Some((dev, ino))) = (&self.audit, at.file) {
            if log.is_file(dev, ino) {
                return Err(reserved(display));
            }
        }
        if !self.needs_path(access) {
            return Ok(());
        }
        let (rel, inside) = at.path()?;
        self.refuse_denied(rel, inside, at.is_dir, access, display, ctl)
    }

    /// Refuses the directory `at` if `deny_write` denies the path it will have (resolved, as
    /// every check). Each directory is checked as it is made, so no path (a `..` after a
    /// missing directory, a `!` rule re-allowing a file inside a denied directory) can leave
    /// one in a denied area.
    fn check_new_dir(&self, at: &Reached<'_>, display: &str, ctl: &CallControl) -> Result<()> {
        if !self.needs_path(Access::CREATE_DIR) {
            return Ok(());
        }
        let (rel, inside) = at.path()?;
        let refusal = self.refusal(rel, true, Access::CREATE_DIR, ctl)?;
        let Some((field, rule)) = refusal else {
            return Ok(());
        };
        Err(WsfsError::new(
            ErrorCode::PolicyDenied,
            format!(
                "{display} would create the directory {}, which is closed to changing by the \
                 workspace policy ({field} rule '{rule}'). The host set this rule; retrying will \
                 not help. Nothing was created; use a path that does not pass through it",
                shown(rel, inside)
            ),
        ))
    }

    fn walk_needs(&self) -> WalkNeeds {
        WalkNeeds {
            paths: self.deny_read.is_some() || self.audit_rel.is_some(),
            hidden_file: self.audit.as_ref().map(AuditLog::id),
        }
    }

    /// The rules and the audit log's path for one entry of a walk (`rel`: resolved,
    /// workspace-relative; walks never follow symlinks, so a walk's relative paths are
    /// resolved paths once prefixed with its start's). `file` also catches a hard link to the
    /// audit log.
    fn walk_skip(&self, rel: &Path, is_dir: bool, file: Option<(u64, u64)>) -> Option<Skipped> {
        let is_log = match (&self.audit, file) {
            (Some(log), Some((dev, ino))) => log.is_file(dev, ino),
            _ => false,
        };
        if is_log || self.audit_rel.as_deref() == Some(rel) {
            return Some(Skipped::Reserved);
        }
        let rules = self.deny_read.as_ref()?;
        rules
            .denying_entry(rel, is_dir)
            .map(|rule| Skipped::Denied(rule.to_string()))
    }
}

/// The gate of a session commit (overlay mode): the policy, less its `deny_write` when
/// programs run. With `exec_enabled` the only `deny_write` rule allowed is `.git/**`
/// ([`PolicyConfig::exec_conflict`]), which keeps the file tools out of `.git` but which git
/// itself writes: in host mode wsfs's git writes `.git` directly, in overlay mode it writes
/// the session, and the host's commit carries those changes to the base as it does every
/// other. `deny_read` and the audit log stay closed.
pub struct SessionCommitGate<'a>(pub &'a Policy);

impl SessionCommitGate<'_> {
    fn access(&self, access: Access) -> Access {
        if self.0.config().exec_enabled {
            Access {
                writes: false,
                ..access
            }
        } else {
            access
        }
    }
}

impl Gate for SessionCommitGate<'_> {
    fn wants_path(&self, access: Access) -> bool {
        self.0.wants_path(self.access(access))
    }

    fn check(
        &self,
        at: &Reached<'_>,
        access: Access,
        display: &str,
        ctl: &CallControl,
    ) -> Result<()> {
        self.0.check(at, self.access(access), display, ctl)
    }

    fn check_new_dir(&self, at: &Reached<'_>, display: &str, ctl: &CallControl) -> Result<()> {
        if self.0.config().exec_enabled {
            return Ok(());
        }
        self.0.check_new_dir(at, display, ctl)
    }

    fn walk_needs(&self) -> WalkNeeds {
        self.0.walk_needs()
    }

    fn walk_skip(&self, rel: &Path, is_dir: bool, file: Option<(u64, u64)>) -> Option<Skipped> {
        self.0.walk_skip(rel, is_dir, file)
    }
}

/// The refusal for the audit log, whatever the access.
fn reserved(display: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::PolicyDenied,
        format!(
            "{display} is the workspace's audit log, which the host keeps out of reach of every \
             tool; work with other files"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(patterns: &[&str]) -> Rules {
        let patterns: Vec<String> = patterns.iter().map(|s| s.to_string()).collect();
        Rules::compile("deny_read", &patterns).unwrap().unwrap()
    }

    #[test]
    fn gitignore_semantics() {
        let r = rules(&[".env", "**/*.pem", "secrets/**", "build/", "!keep.pem"]);
        let ctl = CallControl::new(std::time::Duration::from_secs(10), None);
        let denied = |p: &str, dir: bool| {
            r.denying(Path::new(p), dir, &ctl)
                .unwrap()
                .map(str::to_owned)
        };
        // No slash: the name at any depth; a directory so named denies what is under it.
        assert_eq!(denied(".env", false).as_deref(), Some(".env"));
        assert_eq!(denied("app/.env", false).as_deref(), Some(".env"));
        assert_eq!(denied(".env/inner.txt", false).as_deref(), Some(".env"));
        assert_eq!(denied(".envrc", false), None);
        assert_eq!(denied("a/b/c.pem", false).as_deref(), Some("**/*.pem"));
        assert_eq!(denied("keep.pem", false), None, "a later ! rule re-allows");
        // Anchored: only at the root.
        assert_eq!(
            denied("secrets/a/b.txt", false).as_deref(),
            Some("secrets/**")
        );
        assert_eq!(denied("x/secrets/a.txt", false), None);
        assert_eq!(
            denied("secrets", true),
            None,
            "secrets/** is what is under it"
        );
        // A trailing slash: directories only, and everything under them.
        assert_eq!(denied("build", true).as_deref(), Some("build/"));
        assert_eq!(denied("build", false), None);
        assert_eq!(denied("src/build/out.o", false).as_deref(), Some("build/"));
        assert_eq!(denied("", true), None, "the root is never denied");
    }

    /// Letter case is folded (a case-insensitive file system opens `.env` as `.ENV`); a `!`
    /// exception re-allows only what its exact case also re-allows.
    #[test]
    fn letter_case_is_folded_and_exceptions_stay_exact() {
        let ctl = CallControl::new(std::time::Duration::from_secs(10), None);
        let r = rules(&[
            ".env",
            "Secrets/",
            "*.pem",
            "!public.pem",
            "tok*",
            "!Tok-open",
        ]);
        let denied = |p: &str, dir: bool| {
            r.denying(Path::new(p), dir, &ctl)
                .unwrap()
                .map(str::to_owned)
        };
        assert_eq!(denied(".ENV", false).as_deref(), Some(".env"));
        assert_eq!(denied("a/.eNv/x", false).as_deref(), Some(".env"));
        assert_eq!(denied("secrets/k", false).as_deref(), Some("Secrets/"));
        assert_eq!(denied("K.PEM", false).as_deref(), Some("*.pem"));
        assert_eq!(denied("PUBLIC.PEM", false), None, "no exact rule denies it");
        assert_eq!(denied("public.pem", false), None);
        assert_eq!(denied("Tok-open", false), None);
        // The folded exception would re-allow it; the exact rules still deny it.
        assert_eq!(denied("tok-open", false).as_deref(), Some("tok*"));
        assert_eq!(r.denying_entry(Path::new("tok-open"), false), Some("tok*"));
        assert_eq!(r.denying_entry(Path::new(".Env"), false), Some(".env"));
        assert!(r.exact.is_some());
        assert!(rules(&[".env"]).exact.is_none(), "no exceptions, one set");
    }

    /// `denying` is the `ignore` crate's `matched_path_or_any_parents` (a dev-dependency, the
    /// reference) with deadline checks: same answers, and a deep path stops at the deadline.
    #[test]
    fn the_parent_walk_matches_the_library_and_stops_at_the_deadline() {
        let patterns = [
            "*.pem",
            "!keep/",
            "secrets",
            "a/b/",
            "!a/b/open.txt",
            "x/**/y",
        ];
        let r = rules(&patterns);
        let reference = |fold: bool| {
            let mut b = ignore::gitignore::GitignoreBuilder::new(".");
            b.case_insensitive(fold).unwrap();
            for p in patterns {
                b.add_line(None, p).unwrap();
            }
            b.build().unwrap()
        };
        let (folded, exact) = (reference(true), reference(false));
        let original = |found: ignore::Match<&ignore::gitignore::Glob>| match found {
            ignore::Match::Ignore(glob) => Some(glob.original().to_string()),
            _ => None,
        };
        let ctl = CallControl::new(std::time::Duration::from_secs(10), None);
        let paths = [
            "k.pem",
            "keep/k.pem",
            "keep",
            "s/secrets/t",
            "a/b",
            "a/b/c/d",
            "a/b/open.txt",
            "x/1/2/y/z",
            "x/y",
            "plain/file",
            "secrets",
        ];
        for p in paths {
            for is_dir in [false, true] {
                for (set, theirs) in [(&r.folded, &folded), (r.exact.as_ref().unwrap(), &exact)] {
                    let ours = denying_in(set, Path::new(p), is_dir, &ctl).unwrap();
                    let theirs = original(theirs.matched_path_or_any_parents(p, is_dir));
                    assert_eq!(ours.map(str::to_string), theirs, "{p} (dir: {is_dir})");
                }
                let either = r.denying(Path::new(p), is_dir, &ctl).unwrap();
                let exact = original(exact.matched_path_or_any_parents(p, is_dir));
                assert_eq!(
                    either.map(str::to_string),
                    exact,
                    "{p} (dir: {is_dir}): lower case, so the same"
                );
            }
        }
        let deep = "d/".repeat(2000) + "f";
        let expired = CallControl::new(std::time::Duration::ZERO, None);
        let e = r.denying(Path::new(&deep), false, &expired).unwrap_err();
        assert_eq!(e.code, ErrorCode::Timeout);
        assert_eq!(r.denying(Path::new(&deep), false, &ctl).unwrap(), None);
    }

    #[test]
    fn defaults_and_validation() {
        let c: PolicyConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c, PolicyConfig::default());
        assert_eq!(c.deny_write, vec![".git/**".to_string()]);
        assert!(c.writes_enabled && c.deny_read.is_empty() && c.audit_log.is_none());
        let c: PolicyConfig = serde_json::from_str(r#"{"deny_write":[]}"#).unwrap();
        assert!(
            c.deny_write.is_empty(),
            "an explicit list replaces the default"
        );
        assert!(serde_json::from_str::<PolicyConfig>(r#"{"deny":[]}"#).is_err());
        for bad in [
            r#"{"deny_read":["{a,b"]}"#,
            r#"{"deny_read":[""]}"#,
            r##"{"deny_write":["# comment"]}"##,
            r#"{"deny_read":["a\nb"]}"#,
            r#"{"audit_log":"  "}"#,
        ] {
            let c: PolicyConfig = serde_json::from_str(bad).unwrap();
            let e = c.validate().unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArguments, "{bad}");
            assert!(e.message.contains("policy."), "{bad}: {}", e.message);
        }
    }

    /// The hook the walkers call: denied paths and directories (counted), the audit log by
    /// path and by identity (not counted), nothing without rules.
    #[test]
    fn the_walk_hook() {
        use crate::config::Config;
        use crate::sandbox::root::DirRef;
        use crate::sandbox::walk::deny::StartPaths;
        use crate::workspace::Workspace;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let config = |policy: serde_json::Value| {
            let json = serde_json::json!({"root": root, "policy": policy}).to_string();
            Workspace::open(&Config::from_json(&json).unwrap())
                .unwrap()
                .0
        };
        let plain_root =
            cap_std::fs::Dir::open_ambient_dir(&root, cap_std::ambient_authority()).unwrap();
        let start = || DirRef::Root(&plain_root);
        let plain = config(serde_json::json!({}));
        let filter = plain.walk_filter(&start(), StartPaths::default()).unwrap();
        assert!(filter.is_none(), "a default walk pays nothing");
        assert_eq!(plain.policy.walk_skip(Path::new(".env"), false, None), None);
        let ws = config(serde_json::json!({
            "deny_read": [".env", "secrets/", "*.pem", "!public.pem"],
            "audit_log": root.join("logs/audit.jsonl"),
        }));
        assert!(ws
            .walk_filter(&start(), StartPaths::default())
            .unwrap()
            .is_some());
        let skip = |p: &str, dir: bool| ws.policy.walk_skip(Path::new(p), dir, None);
        let denied = |rule: &str| Some(Skipped::Denied(rule.to_string()));
        assert_eq!(skip(".env", false), denied(".env"));
        assert_eq!(skip("a/b/.env", false), denied(".env"));
        assert_eq!(skip("secrets", true), denied("secrets/"));
        assert_eq!(
            skip("secrets", false),
            None,
            "secrets/ names directories only"
        );
        assert_eq!(skip("x/secrets", true), denied("secrets/"));
        // Under a denied directory a walk never asks; the entry alone is matched.
        assert_eq!(skip("x/secrets/y.txt", false), None);
        assert_eq!(skip("k/server.pem", false), denied("*.pem"));
        assert_eq!(skip("public.pem", false), None);
        assert_eq!(skip("src/main.rs", false), None);
        assert_eq!(skip("logs/audit.jsonl", false), Some(Skipped::Reserved));
        assert_eq!(skip("logs", true), None);
        // A hard link to the log elsewhere is recognised by identity.
        let log = std::fs::metadata(root.join("logs/audit.jsonl")).unwrap();
        use std::os::unix::fs::MetadataExt as _;
        let id = Some((log.dev(), log.ino()));
        assert_eq!(
            ws.policy.walk_skip(Path::new("elsewhere.txt"), false, id),
            Some(Skipped::Reserved)
        );
        // The walk's filter finds it by inode, wherever it is, with an audit log alone.
        std::fs::hard_link(root.join("logs/audit.jsonl"), root.join("copy.txt")).unwrap();
        let log_only = config(serde_json::json!({"audit_log": tmp.path().join("logs/a.jsonl")}));
        let filter = log_only.walk_filter(&start(), StartPaths::default());
        let filter = filter.unwrap().expect("an audit log filters every walk");
        let log = std::fs::metadata(tmp.path().join("logs/a.jsonl")).unwrap();
        std::fs::hard_link(tmp.path().join("logs/a.jsonl"), root.join("other.txt")).unwrap();
        use std::os::fd::AsFd;
        let fd = plain_root.as_fd();
        assert_eq!(
            filter.skip(fd, b"other.txt", b"other.txt", false, log.ino()),
            Some(Skipped::Reserved)
        );
        let other = std::fs::metadata(root.join("copy.txt")).unwrap();
        assert_eq!(
            filter.skip(fd, b"copy.txt", b"copy.txt", false, other.ino()),
            None,
            "another workspace's log is a file like any other"
        );
        assert_eq!(filter.skip(fd, b"x", b"x", false, log.ino() + 1), None);
    }

    #[test]
    fn access_picks_the_list() {
        let config = PolicyConfig {
            deny_read: vec![".env".into()],
            ..PolicyConfig::default()
        };
        let p = Policy::open(&config, Path::new("/nonexistent-root")).unwrap();
        let ctl = CallControl::new(std::time::Duration::from_secs(10), None);
        let at = |path: &str, access| {
            let found = p.refusal(Path::new(path), false, access, &ctl).unwrap();
            found.map(|r| r.0)
        };
        assert_eq!(at(".env", Access::READ), Some("deny_read"));
        assert_eq!(
            at(".env", Access::WRITE),
            None,
            "writing is a separate list"
        );
        assert_eq!(at(".git/config", Access::WRITE), Some("deny_write"));
        assert_eq!(at(".git/config", Access::READ), None);
        assert_eq!(at(".env", Access::READ_WRITE), Some("deny_read"));
        assert_eq!(at(".git/HEAD", Access::READ_WRITE), Some("deny_write"));
        assert!(p.needs_path(Access::READ) && p.needs_path(Access::WRITE));
        let default = Policy::open(&PolicyConfig::default(), Path::new("/x")).unwrap();
        assert!(
            !default.needs_path(Access::READ),
            "by default a read pays nothing"
        );
    }
}
