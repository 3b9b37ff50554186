package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/agent"
	"github.com/wsfs/wsfs/go/scripted"
)

// The overlay run (docs/sessions.md): the agent works on an overlay
// session over a small project, which stays as it is while the host looks:
// the host prints the diff, commits part, takes a checkpoint, lets the agent
// go on, rewinds the checkpoint (dropping what came after it) and commits
// the rest.

// The project the overlay run starts from (the base).
var overlayProject = map[string]string{
	"README.md":  "# Greeter\n\nPrints a greting.\n\nRun it with `python greet.py`.\n",
	"greet.py":   "print(\"hello\")\n",
	"config.ini": "[greeter]\nname = world\n",
}

// OverlayRequests are the user's two messages of the overlay run.
var OverlayRequests = [2]string{
	`Fix the typo in README.md and add a CHANGELOG.md that says what you fixed.`,
	`Now make greet.py greet the name from config.ini, and simplify config.ini while you are at it.`,
}

// OverlayScript is the scripted model's side of the overlay run: two
// requests, each ending with a reply without tool calls.
func OverlayScript() []scripted.Turn {
	c := scripted.Call
	return []scripted.Turn{
		{Text: "Fixing the typo.", ToolCalls: []scripted.ToolCall{c(wsfs.ToolEditFile, `{"path":"README.md","old_text":"greting","new_text":"greeting"}`)}},
		{Text: "And the changelog.", ToolCalls: []scripted.ToolCall{c(wsfs.ToolWriteFile, `{"path":"CHANGELOG.md","content":"# Changelog\n\n- README: fixed a typo.\n"}`)}},
		{Text: "Done: README.md has \"greeting\", and CHANGELOG.md says so."},
		{Text: "Reading the name from config.ini.", ToolCalls: []scripted.ToolCall{c(wsfs.ToolWriteFile, `{"path":"greet.py","content":"import configparser\n\nc = configparser.ConfigParser()\nc.read(\"config.ini\")\nprint(\"hello\", c[\"greeter\"][\"name\"])\n"}`)}},
		{Text: "Simplifying config.ini.", ToolCalls: []scripted.ToolCall{c(wsfs.ToolWriteFile, `{"path":"config.ini","content":"name = world\n"}`)}},
		{Text: "Done: greet.py reads the name, and config.ini is one line."},
	}
}

// OverlayResult is what the overlay run did, for tests.
type OverlayResult struct {
	// Skipped says why the run did not happen ("" if it did): the kernel
	// refused the overlay view.
	Skipped string
	// Base is the project directory; its files after the run.
	Base  string
	Files map[string]string
	// FirstDiff are the changes ("M README.md") after the first request.
	FirstDiff []string
	// PartCommitted are the paths of the first, partial commit.
	PartCommitted []string
	// AfterRewind are the changes left after the rewind.
	AfterRewind []string
}

// RunOverlay runs the overlay part of the demo in dir (a new temporary
// directory if ""), printing its transcript to o.Out. With o.Model nil the
// agent is OverlayScript's.
func RunOverlay(ctx context.Context, o Options) (*OverlayResult, error) {
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	dir := o.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "wsfs-demo-overlay-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	base := filepath.Join(dir, "project")
	for name, content := range overlayProject {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(base, name)), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(base, name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	res := &OverlayResult{Base: base}
	fmt.Fprintf(out, "\n== overlay run: the agent works on a session over %s; the project\n", base)
	fmt.Fprintf(out, "== stays as it is until the host commits (docs/sessions.md)\n")

	ws, err := wsfs.Open(wsfs.Config{
		Root: base, StateDir: filepath.Join(dir, "state"), Mode: wsfs.ModeOverlay, Session: "demo",
		Logger: o.Logger,
	})
	if err == nil {
		defer ws.Close()
		_, err = ws.ListDir(ctx, wsfs.ListDirInput{Path: "."}) // a refusal may come with the first call
	}
	if errors.Is(err, wsfs.ErrOverlayUnavailable) {
		res.Skipped = err.Error()
		fmt.Fprintf(out, "== skipped: this system cannot make the session's view: %v\n", err)
		return res, nil
	}
	if err != nil {
		return nil, err
	}

	model := o.Model
	if model == nil {
		model = scripted.New(OverlayScript()...)
	}
	step := 0
	runner, err := agent.NewRunnerWithWorkspace(ws, agent.RunnerConfig{
		Model: model, MaxToolIterations: 6, Logger: o.Logger,
		OnStep: func(_ string, s fantasy.StepResult) { step++; printStep(out, step, false, s) },
	})
	if err != nil {
		return nil, err
	}
	defer runner.Close()
	ask := func(i int) error {
		fmt.Fprintf(out, "\nuser> %s\n", OverlayRequests[i])
		if _, err := runner.Run(ctx, "overlay", OverlayRequests[i]); err != nil {
			return fmt.Errorf("agent run: %w", err)
		}
		return nil
	}
	host := func(format string, args ...any) { fmt.Fprintf(out, "\nhost> "+format+"\n", args...) }

	if err := ask(0); err != nil {
		return res, err
	}
	d, err := ws.SessionDiff(ctx, wsfs.DiffOptions{})
	if err != nil {
		return res, err
	}
	res.FirstDiff = changeList(d)
	if len(d.Changes) == 0 {
		return res, errors.New("the agent changed nothing, so there is nothing to show")
	}
	host("wsfs_session_diff: %s", strings.Join(res.FirstDiff, ", "))
	fmt.Fprint(out, indent(d.Unified, "    | "))
	host("the project's README.md on disk still reads %q", firstLines(filepath.Join(base, "README.md"), 3))

	// Commit part: the first added file, else the first change.
	part := d.Changes[0].Path
	for _, c := range d.Changes {
		if c.Status == wsfs.ChangeAdded {
			part = c.Path
			break
		}
	}
	r, err := ws.SessionCommit(ctx, wsfs.CommitOptions{Paths: []string{part}})
	if err != nil {
		return res, err
	}
	res.PartCommitted = r.Files
	host("wsfs_session_commit {\"paths\": [%q]}: committed %v (now on disk in the project)", part, r.Files)

	cp, err := ws.SessionCheckpoint(ctx, wsfs.CheckpointOptions{Label: "before the second request"})
	if err != nil {
		return res, err
	}
	host("wsfs_session_checkpoint: %s", cp.ID)

	if err := ask(1); err != nil {
		return res, err
	}
	if d, err = ws.SessionDiff(ctx, wsfs.DiffOptions{}); err != nil {
		return res, err
	}
	host("wsfs_session_diff: %s; the host does not want what came after the checkpoint, and rewinds", strings.Join(changeList(d), ", "))
	if err := ws.SessionRewind(ctx, cp.ID); err != nil {
		return res, err
	}
	if d, err = ws.SessionDiff(ctx, wsfs.DiffOptions{}); err != nil {
		return res, err
	}
	res.AfterRewind = changeList(d)
	host("wsfs_session_rewind %s: the session is back to %s", cp.ID, strings.Join(res.AfterRewind, ", "))

	if r, err = ws.SessionCommit(ctx, wsfs.CommitOptions{}); err != nil {
		return res, err
	}
	if !r.Committed {
		return res, fmt.Errorf("the last commit found conflicts: %+v", r.Conflicts)
	}
	host("wsfs_session_commit: committed the rest, %v", r.Files)
	if d, err = ws.SessionDiff(ctx, wsfs.DiffOptions{}); err != nil {
		return res, err
	}
	host("wsfs_session_diff: %d changes left", len(d.Changes))

	res.Files = map[string]string{}
	entries, err := os.ReadDir(base)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(out, "\n== the project on disk now:\n")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(base, e.Name()))
		if err != nil {
			continue
		}
		res.Files[e.Name()] = string(b)
		fmt.Fprintf(out, "   %s\n%s", e.Name(), indent(string(b), "     | "))
	}
	return res, nil
}

func changeList(d wsfs.DiffResult) []string {
	var s []string
	for _, c := range d.Changes {
		s = append(s, c.Status+" "+c.Path)
	}
	if len(s) == 0 {
		return []string{"no changes"}
	}
	return s
}

func firstLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.SplitN(string(b), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
