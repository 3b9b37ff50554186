// Package demo is the `wsfs demo` agent run: a fantasy agent with the wsfs
// workspace tools an agent.Runner offers by default (agent.DefaultTools,
// MiniClaw's five) works in a temporary workspace, is refused two escapes, and
// runs into its tool-iteration limit, while a transcript shows every tool
// call and result. RunOverlay is its second part: an agent on an overlay
// session, whose host diffs, commits part, rewinds a checkpoint and commits
// the rest.
//
// By default the agent is driven by a scripted model (package scripted): no
// network and no API key. With WSFS_MODEL_URL (an OpenAI-compatible endpoint
// such as http://localhost:11434/v1) and WSFS_MODEL set, the same request
// goes to that real model through fantasy's openaicompat provider
// (WSFS_API_KEY is sent as the API key if set).
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/openaicompat"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/agent"
	"github.com/wsfs/wsfs/go/scripted"
)

// DefaultMaxToolIterations is the demo's tool-iteration limit: small, so the
// scripted run reaches it.
const DefaultMaxToolIterations = 10

// SecretContent is written to outside/secret.txt, next to the workspace. The
// agent must never be able to read or change it.
const SecretContent = "the agent must never see this\n"

// Request is the user message of the demo.
const Request = `Please help me with my notes in this workspace:
1. List the workspace.
2. Create notes.md with a heading "# Notes" and the items "- buy milk" and "- call Alice".
3. Read it back.
4. Change "buy milk" to "buy oat milk" with edit_file.
5. Append "- water the plants" with append_file.
6. There is a file secret.txt next to the workspace (../outside/secret.txt), and a link to its directory at link-to-outside/: try to read it both ways and tell me what happens.
7. Then keep re-checking the workspace listing after every step until you are told to stop.`

// Script is the scripted model's side of the conversation for Request.
func Script() []scripted.Turn {
	say := func(text string, calls ...scripted.ToolCall) scripted.Turn {
		return scripted.Turn{Text: text, ToolCalls: calls}
	}
	c := scripted.Call
	return []scripted.Turn{
		say("Let me look at the workspace first.", c(wsfs.ToolListDir, `{}`)),
		say("It is empty apart from the link. I'll create the notes file.",
			c(wsfs.ToolWriteFile, `{"path":"notes.md","content":"# Notes\n\n- buy milk\n- call Alice\n"}`)),
		say("Reading it back to check.", c(wsfs.ToolReadFile, `{"path":"notes.md"}`)),
		say("Now the edit.", c(wsfs.ToolEditFile, `{"path":"notes.md","old_text":"- buy milk","new_text":"- buy oat milk"}`)),
		say("And the new item.", c(wsfs.ToolAppendFile, `{"path":"notes.md","content":"- water the plants\n"}`)),
		say("Now secret.txt, first through '..'.", c(wsfs.ToolReadFile, `{"path":"../outside/secret.txt"}`)),
		say("Refused. Maybe through the link inside the workspace?", c(wsfs.ToolReadFile, `{"path":"link-to-outside/secret.txt"}`)),
		say("Both ways were refused with outside_workspace, so I'll stay inside the workspace. Final check of the notes:",
			c(wsfs.ToolReadFile, `{"path":"notes.md"}`)),
		{Text: "Re-checking the listing, as asked.", ToolCalls: []scripted.ToolCall{c(wsfs.ToolListDir, `{"path":"."}`)}, Repeat: true},
	}
}

// Options configures Run.
type Options struct {
	// Out receives the transcript.
	Out io.Writer
	// Model drives the agent; nil means the scripted model.
	Model fantasy.LanguageModel
	// MaxToolIterations; <= 0 means DefaultMaxToolIterations.
	MaxToolIterations int
	// Dir is where the demo creates workspace/ and outside/; "" means a new
	// temporary directory, removed afterwards.
	Dir string
	// Logger receives the tool-call log records; nil discards.
	Logger *slog.Logger
}

// Result is what the demo did, for tests and the closing lines.
type Result struct {
	Reply        agent.Reply
	Workspace    string
	Notes        string // final content of notes.md ("" if missing)
	SecretIntact bool   // outside/secret.txt still holds SecretContent
	ToolResults  []fantasy.ToolResultContent
	Tools        []string // the workspace tools the agent was offered (Runner.Tools)
}

// Run runs the demo and prints its transcript to o.Out.
func Run(ctx context.Context, o Options) (*Result, error) {
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	dir := o.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "wsfs-demo-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	wsDir := filepath.Join(dir, "workspace")
	outside := filepath.Join(dir, "outside")
	secret := filepath.Join(outside, "secret.txt")
	for _, d := range []string{wsDir, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(secret, []byte(SecretContent), 0o644); err != nil {
		return nil, err
	}
	// A symlink inside the workspace that points out of it.
	if err := os.Symlink(outside, filepath.Join(wsDir, "link-to-outside")); err != nil {
		return nil, err
	}

	model := o.Model
	modelName := "scripted model (no network, no API key)"
	if model == nil {
		model = scripted.New(Script()...)
	} else {
		modelName = fmt.Sprintf("%s model %q", model.Provider(), model.Model())
	}
	limit := o.MaxToolIterations
	if limit <= 0 {
		limit = DefaultMaxToolIterations
	}

	res := &Result{Workspace: wsDir}
	step := 0
	runner, err := agent.NewRunner(agent.RunnerConfig{
		Workspace:         wsDir,
		MaxToolIterations: limit,
		Model:             model,
		Logger:            o.Logger,
		OnStep: func(_ string, s fantasy.StepResult) {
			step++
			printStep(out, step, step > limit, s)
			res.ToolResults = append(res.ToolResults, s.Content.ToolResults()...)
		},
	})
	if err != nil {
		return nil, err
	}
	defer runner.Close()

	res.Tools = runner.Tools()
	fmt.Fprintf(out, "wsfs demo: a fantasy agent with the %d wsfs workspace tools\n", len(res.Tools))
	fmt.Fprintf(out, "  tools:     %s\n", strings.Join(res.Tools, ", "))
	fmt.Fprintf(out, "  model:     %s\n", modelName)
	fmt.Fprintf(out, "  workspace: %s\n", runner.Workspace().Root())
	fmt.Fprintf(out, "  outside:   %s (must stay out of reach)\n", secret)
	fmt.Fprintf(out, "  link:      workspace/link-to-outside -> %s\n", outside)
	fmt.Fprintf(out, "  limit:     max_tool_iterations = %d\n\n", limit)
	fmt.Fprintf(out, "user> %s\n", indentRest(Request, "      "))

	reply, err := runner.Run(ctx, "demo", Request)
	res.Reply = reply
	if err != nil {
		return res, fmt.Errorf("agent run: %w", err)
	}
	if b, err := os.ReadFile(filepath.Join(wsDir, "notes.md")); err == nil {
		res.Notes = string(b)
	}
	if b, err := os.ReadFile(secret); err == nil {
		res.SecretIntact = string(b) == SecretContent
	}

	fmt.Fprintf(out, "\n== done: %d steps, %d tool calls", reply.Steps, reply.ToolCalls)
	if reply.LimitReached {
		fmt.Fprintf(out, "; the limit of %d tool iterations was reached and the last step ran without tools", limit)
	}
	fmt.Fprintf(out, "\n== outside/secret.txt untouched: %v\n", res.SecretIntact)
	if res.Notes != "" {
		fmt.Fprintf(out, "== notes.md now reads:\n%s", indent(res.Notes, "   | "))
	}
	return res, nil
}

// printStep prints one agent step: the assistant's text, then each tool
// call with its result.
func printStep(w io.Writer, n int, final bool, s fantasy.StepResult) {
	if final {
		fmt.Fprintf(w, "\n-- step %d (tool-call limit reached: tools disabled) --\n", n)
	} else {
		fmt.Fprintf(w, "\n-- step %d --\n", n)
	}
	if t := strings.TrimSpace(s.Content.Text()); t != "" {
		fmt.Fprintf(w, "assistant> %s\n", indentRest(t, "           "))
	}
	results := map[string]fantasy.ToolResultContent{}
	for _, r := range s.Content.ToolResults() {
		results[r.ToolCallID] = r
	}
	for _, call := range s.Content.ToolCalls() {
		fmt.Fprintf(w, "  call %s %s\n", call.ToolName, call.Input)
		r, ok := results[call.ToolCallID]
		if !ok {
			fmt.Fprintf(w, "    (not run)\n")
			continue
		}
		text := scripted.ResultText(r.Result)
		if scripted.IsError(r.Result) {
			fmt.Fprintf(w, "  ERROR  %s\n", indentRest(text, "         "))
		} else {
			fmt.Fprintf(w, "  ok\n%s", indent(clip(text, 12), "    | "))
		}
	}
}

// clip keeps at most n lines.
func clip(s string, n int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... (%d more lines)", len(lines)-n)
}

func indent(s, prefix string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		b.WriteString(prefix)
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func indentRest(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// ModelFromEnv returns the model named by WSFS_MODEL_URL and WSFS_MODEL
// (through fantasy's openaicompat provider), or nil if WSFS_MODEL_URL is
// not set.
func ModelFromEnv(ctx context.Context) (fantasy.LanguageModel, error) {
	url := strings.TrimSpace(os.Getenv("WSFS_MODEL_URL"))
	if url == "" {
		return nil, nil
	}
	name := strings.TrimSpace(os.Getenv("WSFS_MODEL"))
	if name == "" {
		return nil, errors.New("WSFS_MODEL_URL is set but WSFS_MODEL is empty: name the model (for example WSFS_MODEL=qwen2.5:7b)")
	}
	key := os.Getenv("WSFS_API_KEY")
	if key == "" {
		key = "unused" // local servers such as Ollama ignore it
	}
	p, err := openaicompat.New(openaicompat.WithBaseURL(url), openaicompat.WithAPIKey(key))
	if err != nil {
		return nil, err
	}
	return p.LanguageModel(ctx, name)
}
