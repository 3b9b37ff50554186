package agent

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/scripted"
)

// The issue's end-to-end scenarios for the developer tools (issue 21), through
// fantasy with a scripted model, on a Python project with the test tools of
// target/venv (make venv), in host mode and in overlay mode (issue 20: the
// programs run on the session's view, the base changes only when the host
// commits the session at the end).

// modes are the workspace modes each scenario runs in.
var modes = []wsfs.Mode{wsfs.ModeHost, wsfs.ModeOverlay}

// devtoolsWorkspace opens a workspace on a new git repository holding files,
// with exec on and the venv's tools on the programs' PATH; it skips (or,
// under make test's WSFS_REQUIRE_DEVTOOLS, fails) when a tool is missing.
func devtoolsWorkspace(t *testing.T, mode wsfs.Mode, files map[string]string, tools ...string) *wsfs.Workspace {
	t.Helper()
	return devtoolsWorkspaceWith(t, mode, "", files, tools...)
}

// devtoolsWorkspaceWith is devtoolsWorkspace opened with a profile.
func devtoolsWorkspaceWith(t *testing.T, mode wsfs.Mode, profile string, files map[string]string, tools ...string) *wsfs.Workspace {
	t.Helper()
	venv, err := filepath.Abs(filepath.Join("..", "..", "target", "venv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if _, err := os.Stat(filepath.Join(venv, "bin", tool)); err != nil {
			msg := tool + " is not installed in target/venv (make venv installs the test tools)"
			if os.Getenv("WSFS_REQUIRE_DEVTOOLS") != "" {
				t.Fatal(msg)
			}
			t.Skip("SKIPPED: " + msg)
		}
	}
	// The venv's python is a link to the Python that made it, which the
	// sandbox must be able to read and execute too.
	readPaths := []string{venv}
	if real, err := filepath.EvalSymlinks(filepath.Join(venv, "bin", "python3")); err == nil {
		readPaths = append(readPaths, filepath.Dir(filepath.Dir(real)))
	}
	// Programs get the host's PATH: the venv first, then the system.
	t.Setenv("PATH", filepath.Join(venv, "bin")+":/usr/local/bin:/usr/bin:/bin")

	root := t.TempDir()
	for name, text := range files {
		writeFile(t, filepath.Join(root, name), text)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.email", "t@example.com"},
		{"config", "user.name", "t"},
		{"add", "-A"},
		{"commit", "-q", "-m", "start"},
	} {
		gitIn(t, root, args...)
	}
	cfg := wsfs.Config{Root: root, Mode: mode, Profile: profile, Policy: wsfs.Policy{
		ExecEnabled: true, ExecReadPaths: readPaths,
	}}
	if mode == wsfs.ModeOverlay {
		cfg.StateDir = t.TempDir()
	}
	ws, err := wsfs.Open(cfg)
	if errors.Is(err, wsfs.ErrOverlayUnavailable) {
		t.Skip("SKIPPED: this kernel cannot make an overlay view: " + err.Error())
	}
	if err != nil {
		t.Fatalf("Open(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// commitSession, in overlay mode, checks that the base has not changed
// (unchanged reports whether a base file still has its first text) and
// commits the whole session to it; in host mode it does nothing.
func commitSession(t *testing.T, ws *wsfs.Workspace, mode wsfs.Mode, unchanged func() bool) {
	t.Helper()
	if mode != wsfs.ModeOverlay {
		return
	}
	if !unchanged() {
		t.Fatal("the base changed before the session was committed")
	}
	r, err := ws.SessionCommit(bg, wsfs.CommitOptions{})
	if err != nil || !r.Committed {
		t.Fatalf("SessionCommit: %+v, %v", r, err)
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir, "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// runScript runs a scripted model over the workspace with the named tools
// and returns the tool results, in order ("ok: ..." / "error: ...").
func runScript(t *testing.T, ws *wsfs.Workspace, tools []string, turns ...scripted.Turn) []string {
	t.Helper()
	r, err := NewRunnerWithWorkspace(ws, RunnerConfig{Model: scripted.New(turns...), Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	reply, err := r.Run(bg, "s", "go")
	if err != nil {
		t.Fatal(err)
	}
	return toolResults(reply.Messages)
}

func wantResult(t *testing.T, results []string, i int, prefix string, contains ...string) {
	t.Helper()
	if i >= len(results) {
		t.Fatalf("only %d tool results, want #%d: %v", len(results), i, results)
	}
	if !strings.HasPrefix(results[i], prefix) {
		t.Fatalf("result #%d = %q, want it to start with %q", i, results[i], prefix)
	}
	for _, c := range contains {
		if !strings.Contains(results[i], c) {
			t.Fatalf("result #%d = %q, want it to contain %q", i, results[i], c)
		}
	}
}

// Scenario A: list, patch a symbol rename across files, run the tests, git
// diff, git commit (refused unconfirmed, then confirmed).
func TestScenarioRenameTestDiffCommit(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) { scenarioRenameTestDiffCommit(t, mode) })
	}
}

// renameProject is scenario A's project, and renamePatch its rename of
// total to add across three files.
var renameProject = map[string]string{
	"pyproject.toml":       "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
	"app/__init__.py":      "",
	"app/calc.py":          "def total(a: int, b: int) -> int:\n    return a + b\n",
	"app/report.py":        "from app.calc import total\n\n\ndef line(a: int, b: int) -> str:\n    return f\"sum={total(a, b)}\"\n",
	"tests/test_calc.py":   "from app.calc import total\n\n\ndef test_total():\n    assert total(1, 2) == 3\n",
	"tests/test_report.py": "from app.report import line\n\n\ndef test_line():\n    assert line(1, 2) == \"sum=3\"\n",
}

const renamePatch = "--- a/app/calc.py\n+++ b/app/calc.py\n@@ -1,2 +1,2 @@\n-def total(a: int, b: int) -> int:\n+def add(a: int, b: int) -> int:\n     return a + b\n" +
	"--- a/app/report.py\n+++ b/app/report.py\n@@ -1,5 +1,5 @@\n-from app.calc import total\n+from app.calc import add\n \n \n def line(a: int, b: int) -> str:\n-    return f\"sum={total(a, b)}\"\n+    return f\"sum={add(a, b)}\"\n" +
	"--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -1,5 +1,5 @@\n-from app.calc import total\n+from app.calc import add\n \n \n-def test_total():\n-    assert total(1, 2) == 3\n+def test_add():\n+    assert add(1, 2) == 3\n"

func scenarioRenameTestDiffCommit(t *testing.T, mode wsfs.Mode) {
	ws := devtoolsWorkspace(t, mode, renameProject, "pytest")
	patchArgs, _ := json.Marshal(map[string]string{"patch": renamePatch})
	c := scripted.Call
	results := runScript(t, ws, []string{AllTools},
		scripted.Use(c(wsfs.ToolListDir, `{"path":"app"}`)),
		scripted.Use(c(wsfs.ToolApplyPatch, string(patchArgs))),
		scripted.Use(c(wsfs.ToolRunTests, `{}`)),
		scripted.Use(c(wsfs.ToolGitDiff, `{}`)),
		scripted.Use(c(wsfs.ToolGitCommit, `{"message":"Rename total to add"}`)),
		scripted.Use(c(wsfs.ToolGitCommit, `{"message":"Rename total to add","paths":["app","tests"],"confirmed":true}`)),
		scripted.Use(c(wsfs.ToolGitStatus, `{}`)),
		scripted.Say("Renamed, tested and committed."),
	)
	wantResult(t, results, 0, "ok: ", "calc.py", "report.py")
	wantResult(t, results, 1, "ok: ")
	wantResult(t, results, 2, "ok: ", "2 passed")
	wantResult(t, results, 3, "ok: ", "app/calc.py", "app/report.py", "tests/test_calc.py")
	wantResult(t, results, 4, "error: confirmation_required")
	wantResult(t, results, 5, "ok: Committed", "3 file(s)")
	wantResult(t, results, 6, "ok: On branch main")
	commitSession(t, ws, mode, func() bool {
		return !strings.Contains(gitIn(t, ws.Root(), "log", "--oneline"), "Rename total to add")
	})
	if log := gitIn(t, ws.Root(), "log", "--oneline"); !strings.Contains(log, "Rename total to add") {
		t.Fatalf("git log: %s", log)
	}
	if st := gitIn(t, ws.Root(), "status", "--porcelain"); st != "" {
		t.Fatalf("not everything was committed: %s", st)
	}
}

// Scenario B: lint, fix the structured issue, lint again until clean; the
// same with typecheck.
func TestScenarioLintAndTypecheckUntilClean(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) { scenarioLintAndTypecheckUntilClean(t, mode) })
	}
}

func scenarioLintAndTypecheckUntilClean(t *testing.T, mode wsfs.Mode) {
	ws := devtoolsWorkspace(t, mode, map[string]string{
		"pyproject.toml":  "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
		"app/__init__.py": "",
		"app/calc.py":     "import os\n\n\ndef label(n: int) -> str:\n    return n\n",
	}, "ruff", "mypy")
	c := scripted.Call
	var lintIssue, typeIssue json.RawMessage
	results := runScript(t, ws, []string{wsfs.ToolReadFile, wsfs.ToolEditFile, wsfs.ToolRunLint, wsfs.ToolTypecheck},
		scripted.Use(c(wsfs.ToolRunLint, `{}`)),
		scripted.Turn{
			ToolCalls: []scripted.ToolCall{c(wsfs.ToolEditFile, `{"path":"app/calc.py","old_text":"import os\n\n\n","new_text":""}`)},
			Check:     func(call fantasy.Call) error { lintIssue = lastResult(call); return nil },
		},
		scripted.Use(c(wsfs.ToolRunLint, `{}`)),
		scripted.Use(c(wsfs.ToolTypecheck, `{}`)),
		scripted.Turn{
			ToolCalls: []scripted.ToolCall{c(wsfs.ToolEditFile, `{"path":"app/calc.py","old_text":"    return n\n","new_text":"    return str(n)\n"}`)},
			Check:     func(call fantasy.Call) error { typeIssue = lastResult(call); return nil },
		},
		scripted.Use(c(wsfs.ToolTypecheck, `{}`)),
		scripted.Say("Clean."),
	)
	wantResult(t, results, 0, "ok: ", "app/calc.py:1", "F401")
	wantResult(t, results, 1, "ok: ")
	wantResult(t, results, 2, "ok: clean")
	wantResult(t, results, 3, "ok: ", "app/calc.py:2", "return-value") // line 2 once the import is gone
	wantResult(t, results, 4, "ok: ")
	wantResult(t, results, 5, "ok: clean")
	// The model decided from what the structured results said.
	if !strings.Contains(string(lintIssue), "F401") || !strings.Contains(string(typeIssue), "return-value") {
		t.Fatalf("the model saw %s and %s", lintIssue, typeIssue)
	}
	calc := filepath.Join(ws.Root(), "app", "calc.py")
	commitSession(t, ws, mode, func() bool { return strings.HasPrefix(readFile(t, calc), "import os") })
	if got := readFile(t, calc); got != "def label(n: int) -> str:\n    return str(n)\n" {
		t.Fatalf("app/calc.py = %q", got)
	}
}

// Scenarios A and B again under the capability plan's names (seed 004): the
// plan's file tools (file_list, file_patch, file_read) and the developer
// tools under their own names, each answering in the ToolResult envelope
// (issue 31, item 1).
func TestScenariosUnderTheCapabilityPlan(t *testing.T) {
	for _, mode := range modes {
		t.Run("A/"+string(mode), func(t *testing.T) {
			ws := devtoolsWorkspaceWith(t, mode, "capability-plan", renameProject, "pytest")
			diffArgs, _ := json.Marshal(map[string]string{"diff_text": renamePatch})
			c := scripted.Call
			results := runScript(t, ws, nil,
				scripted.Use(c("file_list", `{"path":"app"}`)),
				scripted.Use(c("file_patch", string(diffArgs))),
				scripted.Use(c(wsfs.ToolRunTests, `{}`)),
				scripted.Use(c(wsfs.ToolGitDiff, `{}`)),
				scripted.Use(c(wsfs.ToolGitCommit, `{"message":"Rename total to add"}`)),
				scripted.Use(c(wsfs.ToolGitCommit, `{"message":"Rename total to add","paths":["app","tests"],"confirmed":true}`)),
				scripted.Use(c(wsfs.ToolGitStatus, `{}`)),
				scripted.Say("Renamed, tested and committed."),
			)
			wantResult(t, results, 0, "ok: ", `"ok":true`, "calc.py", "report.py")
			wantResult(t, results, 1, "ok: ", `"applied":true`, "app/report.py")
			wantResult(t, results, 2, "ok: ", `"ok":true`, "2 passed")
			wantResult(t, results, 3, "ok: ", "app/calc.py", "tests/test_calc.py")
			wantResult(t, results, 4, "error: ", `"error_code":"CONFIRMATION_REQUIRED"`)
			wantResult(t, results, 5, "ok: ", `"ok":true`, "Committed")
			wantResult(t, results, 6, "ok: ", "On branch main")
			commitSession(t, ws, mode, func() bool {
				return !strings.Contains(gitIn(t, ws.Root(), "log", "--oneline"), "Rename total to add")
			})
			if log := gitIn(t, ws.Root(), "log", "--oneline"); !strings.Contains(log, "Rename total to add") {
				t.Fatalf("git log: %s", log)
			}
		})
		t.Run("B/"+string(mode), func(t *testing.T) {
			ws := devtoolsWorkspaceWith(t, mode, "capability-plan", map[string]string{
				"pyproject.toml":  "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
				"app/__init__.py": "",
				"app/calc.py":     "import os\n\n\ndef label(n: int) -> str:\n    return n\n",
			}, "ruff", "mypy")
			c := scripted.Call
			results := runScript(t, ws, []string{"file_read", wsfs.ToolEditFile, wsfs.ToolRunLint, wsfs.ToolTypecheck},
				scripted.Use(c(wsfs.ToolRunLint, `{}`)),
				scripted.Use(c(wsfs.ToolEditFile, `{"path":"app/calc.py","old_text":"import os\n\n\n","new_text":""}`)),
				scripted.Use(c(wsfs.ToolRunLint, `{}`)),
				scripted.Use(c(wsfs.ToolTypecheck, `{}`)),
				scripted.Use(c(wsfs.ToolEditFile, `{"path":"app/calc.py","old_text":"    return n\n","new_text":"    return str(n)\n"}`)),
				scripted.Use(c(wsfs.ToolTypecheck, `{}`)),
				scripted.Use(c("file_read", `{"path":"app/calc.py"}`)),
				scripted.Say("Clean."),
			)
			wantResult(t, results, 0, "ok: ", "F401")
			wantResult(t, results, 1, "ok: ", `"ok":true`)
			wantResult(t, results, 2, "ok: ", `"ok":true`, "clean")
			wantResult(t, results, 3, "ok: ", "return-value")
			wantResult(t, results, 4, "ok: ", `"ok":true`)
			wantResult(t, results, 5, "ok: ", "clean")
			wantResult(t, results, 6, "ok: ", `"content":"def label(n: int) -> str:\n    return str(n)\n"`)
			calc := filepath.Join(ws.Root(), "app", "calc.py")
			commitSession(t, ws, mode, func() bool { return strings.HasPrefix(readFile(t, calc), "import os") })
			if got := readFile(t, calc); got != "def label(n: int) -> str:\n    return str(n)\n" {
				t.Fatalf("app/calc.py = %q", got)
			}
		})
	}
}

// lastResult is the text of the last tool result a model call carries.
func lastResult(call fantasy.Call) json.RawMessage {
	var last string
	for _, m := range call.Prompt {
		for _, p := range m.Content {
			if r, ok := p.(fantasy.ToolResultPart); ok {
				last = scripted.ResultText(r.Output)
			}
		}
	}
	b, _ := json.Marshal(last)
	return b
}
