package wsfs

import "context"

// The developer tools run programs in the workspace under a kernel sandbox
// (docs/devtools.md). They are off unless
// the workspace's Policy sets ExecEnabled (ToolShell also needs
// ShellEnabled): off, every call fails with CodeExecDisabled, and
// Workspace.ToolEnabled reports false.
const (
	// ToolWorkspaceInfo reports the runtimes and tools the sandbox offers.
	ToolWorkspaceInfo = "workspace_info"
	// ToolGitStatus is the repository's status as data.
	ToolGitStatus = "git_status"
	// ToolGitDiff is the repository's changes as a diff with per-file counts.
	ToolGitDiff = "git_diff"
	// ToolGitCommit stages paths and commits (needs Confirmed).
	ToolGitCommit = "git_commit"
	// ToolRunTests runs the project's tests and parses the failures.
	ToolRunTests = "run_tests"
	// ToolRunLint runs the project's linter and parses its issues.
	ToolRunLint = "run_lint"
	// ToolTypecheck runs the project's type checker and parses its errors.
	ToolTypecheck = "typecheck"
	// ToolSafeShell runs a simple command line the shipped policy allows.
	ToolSafeShell = "safe_shell"
	// ToolShell runs a command line with bash as it is.
	ToolShell = "shell"
)

// ExecToolNames are the developer tools, in ToolNames order.
var ExecToolNames = []string{
	ToolWorkspaceInfo, ToolGitStatus, ToolGitDiff, ToolGitCommit, ToolRunTests, ToolRunLint,
	ToolTypecheck, ToolSafeShell, ToolShell,
}

// ExecSwitchOn reports whether the policy's exec switches let the tool
// named name run: the developer tools need Policy.ExecEnabled (ToolShell
// also ShellEnabled); every other tool is always on.
func (ws *Workspace) ExecSwitchOn(name string) bool {
	p := ws.policy
	switch name {
	case ToolShell:
		return p.ExecEnabled && p.ShellEnabled
	case ToolWorkspaceInfo, ToolGitStatus, ToolGitDiff, ToolGitCommit, ToolRunTests, ToolRunLint, ToolTypecheck, ToolSafeShell:
		return p.ExecEnabled
	}
	return true
}

// ToolEnabled reports whether the workspace's policy lets the tool named
// name run at all: its exec switch is on (ExecSwitchOn), and while the
// policy disables writes, the workspace offers it (Workspace.ToolSpecs): a
// read-only tool, or a program tool (run_tests, run_lint, typecheck,
// safe_shell, shell), whose programs then get a read-only view.
func (ws *Workspace) ToolEnabled(name string) bool {
	if !ws.ExecSwitchOn(name) {
		return false
	}
	if p := ws.policy; p.WritesEnabled != nil && !*p.WritesEnabled {
		specs, err := ws.ToolSpecs()
		if err != nil {
			return false
		}
		for _, s := range specs {
			if s.Name == name {
				return s.ReadOnly()
			}
		}
		return false
	}
	return true
}

// Sandbox is the confinement a program ran under.
type Sandbox struct {
	// Sandbox is "landlock-v<N>", or "none" where the host allowed running
	// without Landlock (Policy.ExecRequireSandbox false).
	Sandbox string `json:"sandbox"`
	// Network is "denied", "tcp-denied", "allowed" or "unrestricted".
	Network string `json:"network"`
	// Processes is "cgroup", "rlimit" or "unbounded".
	Processes string   `json:"processes"`
	Notes     []string `json:"notes,omitempty"`
}

// WorkspaceInfoInput is the argument of workspace_info.
type WorkspaceInfoInput struct {
	Refresh bool `json:"refresh,omitempty" description:"Probe again instead of answering from the cache (after installing a tool). Default false."`
}

// Probe is one runtime or tool as workspace_info found it.
type Probe struct {
	Available bool   `json:"available"`
	Version   string `json:"version,omitempty"`
	Path      string `json:"path,omitempty"`
	// Note says why an installed program is not available (it does not
	// run inside the sandbox).
	Note string `json:"note,omitempty"`
}

// WorkspaceInfoResult is the result of WorkspaceInfo.
type WorkspaceInfoResult struct {
	ToolReply
	OS       string `json:"os"`
	Platform string `json:"platform"`
	// Runtimes has python, node, go, rust and java.
	Runtimes map[string]Probe `json:"runtimes"`
	// Tools has git, pytest, npm, ruff, eslint, mypy, pyright, tsc, cargo
	// and go.
	Tools map[string]Probe `json:"tools"`
	// GitRepoRoot is the repository's root relative to the workspace ("."
	// for the root); "" outside a repository.
	GitRepoRoot string `json:"git_repo_root"`
	// GitPresent reports whether the workspace is in a git repository.
	GitPresent bool `json:"git_present"`
	// Project is what the project looks like: python, node, go, rust.
	Project []string `json:"project"`
	// UnreadableToolchains are the toolchains on the programs' PATH that
	// they may not read (pyenv, a virtualenv, nvm, rustup), each with the
	// policy entry that grants it (see Policy.ExecReadPaths).
	UnreadableToolchains []UnreadableToolchain `json:"unreadable_toolchains"`
	Sandbox              Sandbox               `json:"sandbox"`
}

// UnreadableToolchain is a toolchain programs may not read: Program, found
// at Path, needs Root (Kind: pyenv, venv, nvm, rustup, prefix or
// directory); Policy is the entry the host adds, {"exec_read_paths":
// [Root]}, or Policy.ExecReadPaths ["auto"] grants every one found.
type UnreadableToolchain struct {
	Program string         `json:"program"`
	Path    string         `json:"path"`
	Kind    string         `json:"kind"`
	Root    string         `json:"root"`
	Policy  map[string]any `json:"policy"`
}

// WorkspaceInfo reports the OS, the runtimes and tools that run inside the
// sandbox (with versions), the repository root and the project's kind.
// Probed once per workspace, then cached; Refresh probes again.
func (ws *Workspace) WorkspaceInfo(ctx context.Context, in WorkspaceInfoInput) (WorkspaceInfoResult, error) {
	return callTyped[WorkspaceInfoResult](ctx, ws, ToolWorkspaceInfo, in, ".")
}

// GitStatusInput is the argument of git_status (it has none).
type GitStatusInput struct{}

// GitChange is one changed path of GitStatusResult.
type GitChange struct {
	// Path is relative to the repository's root.
	Path string `json:"path"`
	// Change is modified, added, deleted, renamed, copied or type_changed.
	Change string `json:"change"`
	// From is the old name of a renamed or copied file.
	From string `json:"from,omitempty"`
}

// GitStatusResult is the result of GitStatus.
type GitStatusResult struct {
	ToolReply
	// Branch is "" when HEAD is detached (Detached).
	Branch   string `json:"branch"`
	Detached bool   `json:"detached"`
	// Commit is HEAD's commit; "" before the first commit.
	Commit     string      `json:"commit"`
	Upstream   string      `json:"upstream"`
	Ahead      int         `json:"ahead"`
	Behind     int         `json:"behind"`
	Staged     []GitChange `json:"staged"`
	Unstaged   []GitChange `json:"unstaged"`
	Untracked  []string    `json:"untracked"`
	Conflicted []string    `json:"conflicted"`
	Clean      bool        `json:"clean"`
	// Omitted counts the entries left out past the first 2000.
	Omitted int `json:"omitted,omitempty"`
}

// GitStatus runs hardened `git status --porcelain=v2 --branch -z` at the
// workspace root and returns it as data.
func (ws *Workspace) GitStatus(ctx context.Context, in GitStatusInput) (GitStatusResult, error) {
	return callTyped[GitStatusResult](ctx, ws, ToolGitStatus, in, ".")
}

// GitDiffInput is the argument of git_diff.
type GitDiffInput struct {
	Staged    bool     `json:"staged,omitempty" description:"Show what is staged (the index against HEAD, or against base_ref) instead of the unstaged changes in the work tree. Default false."`
	Pathspec  []string `json:"pathspec,omitempty" description:"Only these files or directories (workspace paths, taken literally: no globs)."`
	BaseRef   string   `json:"base_ref,omitempty" description:"Compare from this revision (a branch, tag or commit such as 'main' or 'HEAD~1') instead of the index."`
	TargetRef string   `json:"target_ref,omitempty" description:"Compare base_ref to this revision instead of to the work tree. Needs base_ref."`
}

// GitFileDiff is one file of GitDiffResult.
type GitFileDiff struct {
	// Path is relative to the repository's root (the new name of a
	// renamed file).
	Path string `json:"path"`
	// Status is modified, added, deleted, renamed, copied or mode_changed.
	Status    string `json:"status"`
	From      string `json:"from,omitempty"`
	Binary    bool   `json:"binary"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	// Diff is this file's part of the diff (cut past 20,000 bytes).
	Diff string `json:"diff"`
}

// GitDiffResult is the result of GitDiff.
type GitDiffResult struct {
	ToolReply
	// DiffText is the unified diff, cut at a line boundary past 100,000
	// bytes (with a note saying so).
	DiffText     string        `json:"diff_text"`
	FilesChanged []GitFileDiff `json:"files_changed"`
	Additions    int           `json:"additions"`
	Deletions    int           `json:"deletions"`
	// Truncated is true when DiffText or a file's diff was cut, or files
	// were left out (OmittedFiles).
	Truncated    bool `json:"truncated"`
	OmittedFiles int  `json:"omitted_files,omitempty"`
}

// GitDiff runs hardened git diff at the workspace root.
func (ws *Workspace) GitDiff(ctx context.Context, in GitDiffInput) (GitDiffResult, error) {
	return callTyped[GitDiffResult](ctx, ws, ToolGitDiff, in, ".")
}

// GitCommitInput is the argument of git_commit.
type GitCommitInput struct {
	Message   string   `json:"message" description:"The commit message (first line a short summary)."`
	Paths     []string `json:"paths,omitempty" description:"Files or directories to stage before committing (workspace paths; deletions are staged too). Without paths, what is already staged is committed."`
	Signoff   bool     `json:"signoff,omitempty" description:"Add a Signed-off-by line. Default false."`
	Confirmed bool     `json:"confirmed,omitempty" description:"Must be true: says you mean to commit. A soft gate, not a human's approval."`
}

// GitCommitResult is the result of GitCommit.
type GitCommitResult struct {
	ToolReply
	// Committed is always true: a commit that does not happen is an error.
	Committed  bool   `json:"committed"`
	CommitHash string `json:"commit_hash"`
	// FilesCommitted are relative to the repository's root.
	FilesCommitted []string `json:"files_committed"`
	Message        string   `json:"message"`
	OmittedFiles   int      `json:"omitted_files,omitempty"`
}

// GitCommit stages in.Paths (resolved like every tool path: ".git/**"
// stays write-denied) and commits what is staged, without hooks or
// signing. Without Confirmed it is CodeConfirmationRequired (a soft gate,
// not a human's approval); with nothing staged, CodeNothingToCommit.
func (ws *Workspace) GitCommit(ctx context.Context, in GitCommitInput) (GitCommitResult, error) {
	return callTyped[GitCommitResult](ctx, ws, ToolGitCommit, in, ".")
}

// RunTestsInput is the argument of run_tests.
type RunTestsInput struct {
	Command    string   `json:"command,omitempty" description:"The test command, e.g. 'pytest -x tests/test_api.py' or 'go test ./pkg/...'. Empty: detected from the workspace (pytest, go test, cargo test, npm test)."`
	Focus      []string `json:"focus,omitempty" description:"Only these tests: files or node ids for pytest ('tests/test_a.py::test_x'), packages or test names for go ('./pkg/...', 'TestParse'), name filters for cargo and npm."`
	TimeoutSec int      `json:"timeout_sec,omitempty" description:"Seconds before the run is killed (default and most: the host's limit, 60 s unless it set another)."`
}

// TestFailure is one failing test of RunTestsResult.
type TestFailure struct {
	File string `json:"file"`
	// Line is where it failed, 0 if unknown.
	Line   int    `json:"line"`
	Test   string `json:"test"`
	Reason string `json:"reason"`
	// Snippet is the runner's own lines about it, bounded.
	Snippet string `json:"snippet"`
}

// RunTestsResult is the result of RunTests.
type RunTestsResult struct {
	ToolReply
	Passed       bool          `json:"passed"`
	Total        int           `json:"total"`
	PassedCount  int           `json:"passed_count"`
	FailedCount  int           `json:"failed_count"`
	SkippedCount int           `json:"skipped_count"`
	Summary      string        `json:"summary"`
	Failures     []TestFailure `json:"failures"`
	RawOutput    string        `json:"raw_output"`
	// Runner is pytest, go, cargo, npm, or command (a command of the
	// model's own, read as text).
	Runner   string  `json:"runner"`
	Command  string  `json:"command"`
	ExitCode *int    `json:"exit_code"`
	Sandbox  Sandbox `json:"sandbox"`
}

// RunTests runs the project's tests (pytest, go test, cargo test or npm
// test, detected, or in.Command) and parses the failures.
func (ws *Workspace) RunTests(ctx context.Context, in RunTestsInput) (RunTestsResult, error) {
	return callTyped[RunTestsResult](ctx, ws, ToolRunTests, in, ".")
}

// CheckInput is the argument of run_lint and typecheck.
type CheckInput struct {
	Command string   `json:"command,omitempty" description:"The command, e.g. 'ruff check src' or 'mypy app'. Empty: detected from the workspace."`
	Paths   []string `json:"paths,omitempty" description:"Only these files or directories (workspace paths). Empty: the whole project."`
}

// CheckIssue is one issue of CheckResult. Line and Col are 1-based.
type CheckIssue struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	// Rule is the tool's rule or error code (F401, no-unused-vars,
	// arg-type, TS2322); "" where it gave none.
	Rule    string `json:"rule"`
	Message string `json:"message"`
	// Severity is error, warning or info.
	Severity string `json:"severity"`
}

// CheckResult is the result of RunLint and Typecheck.
type CheckResult struct {
	ToolReply
	Clean      bool         `json:"clean"`
	IssueCount int          `json:"issue_count"`
	Issues     []CheckIssue `json:"issues"`
	RawOutput  string       `json:"raw_output"`
	// ParserUsed is ruff, eslint, mypy, pyright, tsc, or fallback.
	ParserUsed string  `json:"parser_used"`
	Command    string  `json:"command"`
	ExitCode   *int    `json:"exit_code"`
	Sandbox    Sandbox `json:"sandbox"`
}

// RunLint runs the project's linter (ruff or eslint, detected, or
// in.Command) and parses its issues.
func (ws *Workspace) RunLint(ctx context.Context, in CheckInput) (CheckResult, error) {
	return callTyped[CheckResult](ctx, ws, ToolRunLint, in, ".")
}

// Typecheck runs the project's type checker (mypy, pyright or tsc,
// detected, or in.Command) and parses its errors.
func (ws *Workspace) Typecheck(ctx context.Context, in CheckInput) (CheckResult, error) {
	return callTyped[CheckResult](ctx, ws, ToolTypecheck, in, ".")
}

// SafeShellInput is the argument of safe_shell.
type SafeShellInput struct {
	Command string `json:"command" description:"The command line: plain words joined by && || ; | (for example 'ls -la src' or 'git log --oneline -5')."`
	Cwd     string `json:"cwd,omitempty" description:"Directory to run in (a workspace path). Default: the workspace root."`
}

// ShellInput is the argument of shell.
type ShellInput struct {
	Command    string `json:"command" description:"The command line, run by bash as it is."`
	Cwd        string `json:"cwd,omitempty" description:"Directory to run in (a workspace path). Default: the workspace root."`
	TimeoutSec int    `json:"timeout_sec,omitempty" description:"Seconds before it is killed (default and most: the host's limit)."`
}

// ShellResult is the result of SafeShell and Shell. A command safe_shell
// blocked has Blocked true, Reason, MatchedPattern and
// SuggestedSafeAlternative, and nothing else.
type ShellResult struct {
	ToolReply
	Blocked  bool   `json:"blocked"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode *int   `json:"exit_code"`
	// CommandRun is what bash ran (safe_shell rebuilds the command from
	// what it judged).
	CommandRun string  `json:"command_run"`
	Sandbox    Sandbox `json:"sandbox"`

	// ReasonCode says why a command was blocked, as a stable code:
	// NOT_IN_ALLOWLIST, DENYLIST_MATCH, OPTION_NOT_ALLOWED, ENV_NOT_ALLOWED,
	// UNSUPPORTED_SYNTAX or TOO_COMPLEX; Reason says it in words.
	ReasonCode               string `json:"reason_code"`
	Reason                   string `json:"reason"`
	MatchedPattern           string `json:"matched_pattern"`
	SuggestedSafeAlternative string `json:"suggested_safe_alternative"`
}

// SafeShell judges in.Command against the shipped policy file and runs it
// when allowed; a blocked command is a result with Blocked true, not an
// error.
func (ws *Workspace) SafeShell(ctx context.Context, in SafeShellInput) (ShellResult, error) {
	return callTyped[ShellResult](ctx, ws, ToolSafeShell, in, in.Cwd)
}

// Shell runs in.Command with bash as it is (Policy.ShellEnabled).
func (ws *Workspace) Shell(ctx context.Context, in ShellInput) (ShellResult, error) {
	return callTyped[ShellResult](ctx, ws, ToolShell, in, in.Cwd)
}
