package wsfs

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// gitRepo makes a repository with one commit in dir, with plain git.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "a.txt"), "one\n")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.email", "t@example.com"},
		{"config", "user.name", "t"},
		{"add", "a.txt"},
		{"commit", "-q", "-m", "first"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir, "PATH=/usr/bin:/bin"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func TestDevToolsAreOffByDefault(t *testing.T) {
	ws := openTest(t, Config{})
	ctx := context.Background()
	_, err := ws.GitStatus(ctx, GitStatusInput{})
	wantCode(t, err, CodeExecDisabled)
	_, err = ws.RunTests(ctx, RunTestsInput{})
	wantCode(t, err, CodeExecDisabled)
	for _, name := range ExecToolNames {
		if ws.ToolEnabled(name) || ws.ExecSwitchOn(name) {
			t.Errorf("%s is enabled without exec", name)
		}
	}
	if !ws.ToolEnabled(ToolReadFile) || !ws.ExecSwitchOn(ToolWriteFile) {
		t.Error("the file tools are not enabled")
	}
	on := openTest(t, Config{Policy: Policy{ExecEnabled: true}})
	_, err = on.Shell(ctx, ShellInput{Command: "true"})
	wantCode(t, err, CodeExecDisabled)
	if on.ToolEnabled(ToolShell) || !on.ToolEnabled(ToolGitStatus) {
		t.Error("exec without shell: shell must be off, git_status on")
	}
	ro := openTest(t, Config{Policy: Policy{ExecEnabled: true, WritesEnabled: Bool(false)}})
	// Read-only: the program tools run on a read-only view; git_commit could only fail.
	if !ro.ToolEnabled(ToolRunTests) || !ro.ToolEnabled(ToolGitDiff) || ro.ToolEnabled(ToolGitCommit) || ro.ToolEnabled(ToolShell) {
		t.Error("read-only: run_tests and git_diff must be on, git_commit off, shell off (no shell_enabled)")
	}
}

func TestDevToolsPolicyRoundTrip(t *testing.T) {
	ws := openTest(t, Config{Policy: Policy{
		ExecEnabled: true, ShellEnabled: true, ExecRequireSandbox: Bool(true),
		ExecReadPaths: []string{"/opt"}, ExecEnvAllow: []string{"GOFLAGS", "CARGO_*"},
		ExecTimeout: 1500 * time.Millisecond,
	}})
	p := ws.Policy()
	if !p.ExecEnabled || !p.ShellEnabled || !*p.ExecRequireSandbox || p.ExecNetwork ||
		!slices.Equal(p.ExecReadPaths, []string{"/opt"}) || !slices.Equal(p.ExecEnvAllow, []string{"GOFLAGS", "CARGO_*"}) ||
		p.ExecTimeout != 2*time.Second {
		t.Fatalf("effective policy %+v", p)
	}
	def := openTest(t, Config{}).Policy()
	if def.ExecEnabled || !*def.ExecRequireSandbox || def.ExecTimeout != 60*time.Second || def.ExecReadPaths == nil {
		t.Fatalf("default policy %+v", def)
	}
	// What programs could not honour is refused at open.
	_, err := Open(Config{Root: t.TempDir(), Policy: Policy{ExecEnabled: true, DenyRead: []string{".env"}}})
	if e := wantCode(t, err, CodeInvalidArguments); !strings.Contains(e.Message, "deny_read") {
		t.Fatal(e.Message)
	}
	_, err = Open(Config{Root: t.TempDir(), Policy: Policy{ExecReadPaths: []string{"relative"}}})
	wantCode(t, err, CodeInvalidArguments)
	_, err = Open(Config{Root: t.TempDir(), Policy: Policy{ExecTimeout: -time.Second}})
	wantCode(t, err, CodeInvalidArguments)
}

func TestDevToolsTyped(t *testing.T) {
	root := t.TempDir()
	gitRepo(t, root)
	ws := openTest(t, Config{Root: root, Policy: Policy{ExecEnabled: true, ShellEnabled: true}})
	ctx := context.Background()
	writeFile(t, filepath.Join(root, "a.txt"), "one\ntwo\n")

	st, err := ws.GitStatus(ctx, GitStatusInput{})
	if err != nil || st.Branch != "main" || len(st.Unstaged) != 1 || st.Unstaged[0].Path != "a.txt" || st.Clean {
		t.Fatalf("GitStatus = %+v, %v", st, err)
	}
	if !strings.Contains(st.Text, "On branch main") {
		t.Fatalf("text %q", st.Text)
	}
	d, err := ws.GitDiff(ctx, GitDiffInput{Pathspec: []string{"a.txt"}})
	if err != nil || len(d.FilesChanged) != 1 || d.FilesChanged[0].Additions != 1 || !strings.Contains(d.DiffText, "+two") {
		t.Fatalf("GitDiff = %+v, %v", d, err)
	}
	_, err = ws.GitCommit(ctx, GitCommitInput{Message: "m", Paths: []string{"a.txt"}})
	wantCode(t, err, CodeConfirmationRequired)
	c, err := ws.GitCommit(ctx, GitCommitInput{Message: "second", Paths: []string{"a.txt"}, Confirmed: true})
	if err != nil || len(c.CommitHash) < 40 || !slices.Equal(c.FilesCommitted, []string{"a.txt"}) {
		t.Fatalf("GitCommit = %+v, %v", c, err)
	}
	_, err = ws.GitCommit(ctx, GitCommitInput{Message: "again", Confirmed: true})
	wantCode(t, err, CodeNothingToCommit)

	sh, err := ws.Shell(ctx, ShellInput{Command: "echo hi; exit 3"})
	if err != nil || sh.Stdout != "hi\n" || sh.ExitCode == nil || *sh.ExitCode != 3 || !strings.HasPrefix(sh.Sandbox.Sandbox, "landlock-v") {
		t.Fatalf("Shell = %+v, %v", sh, err)
	}
	blocked, err := ws.SafeShell(ctx, SafeShellInput{Command: "rm -rf /"})
	if err != nil || !blocked.Blocked || blocked.ReasonCode != "DENYLIST_MATCH" || blocked.Reason == "" || blocked.SuggestedSafeAlternative == "" {
		t.Fatalf("SafeShell = %+v, %v", blocked, err)
	}
	info, err := ws.WorkspaceInfo(ctx, WorkspaceInfoInput{})
	if err != nil || info.GitRepoRoot != "." || !info.Tools["git"].Available {
		t.Fatalf("WorkspaceInfo = %+v, %v", info, err)
	}
	_, err = ws.RunTests(ctx, RunTestsInput{})
	wantCode(t, err, CodeCommandRequired)
}

// A context deadline kills the program, as it stops every call.
func TestDevToolsContextDeadlineKillsTheProgram(t *testing.T) {
	ws := openTest(t, Config{Policy: Policy{ExecEnabled: true, ShellEnabled: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := ws.Shell(ctx, ShellInput{Command: "sleep 30"})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("Shell under a 300 ms deadline: %v after %v", err, time.Since(start))
	}
}

// TestSafeShellRulesFromTheHost: Policy.SafeShellRules makes safe_shell judge
// by the host's file; a file whose rules disagree with their own examples
// fails Open, naming the rule and the example.
func TestSafeShellRulesFromTheHost(t *testing.T) {
	dir := t.TempDir()
	rules := `version = 1
default_suggestion = "Only echo runs here."

[[allow]]
id = "say"
programs = ["echo"]
deny_options = []
match = ["echo hi"]
not_match = ["ls"]
`
	path := filepath.Join(dir, "rules.toml")
	writeFile(t, path, rules)
	ws := openTest(t, Config{Policy: Policy{ExecEnabled: true, SafeShellRules: path}})
	ctx := context.Background()
	ran, err := ws.SafeShell(ctx, SafeShellInput{Command: "echo hi"})
	if err != nil || ran.Blocked || ran.Stdout != "hi\n" {
		t.Fatalf("echo: %+v, %v", ran, err)
	}
	blocked, err := ws.SafeShell(ctx, SafeShellInput{Command: "ls"})
	if err != nil || !blocked.Blocked || blocked.ReasonCode != "NOT_IN_ALLOWLIST" || blocked.SuggestedSafeAlternative != "Only echo runs here." {
		t.Fatalf("ls: %+v, %v", blocked, err)
	}
	bad := filepath.Join(dir, "bad.toml")
	writeFile(t, bad, strings.Replace(rules, `match = ["echo hi"]`, `match = ["echo hi", "cat x"]`, 1))
	_, err = Open(Config{Root: t.TempDir(), Policy: Policy{ExecEnabled: true, SafeShellRules: bad}})
	e := wantCode(t, err, CodeInvalidArguments)
	if !strings.Contains(e.Message, "bad.toml") || !strings.Contains(e.Message, `allow rule 'say' should allow "cat x"`) {
		t.Fatalf("message: %s", e.Message)
	}
}
