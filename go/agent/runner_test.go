package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/scripted"
)

func newTestRunner(t *testing.T, model fantasy.LanguageModel, mod func(*RunnerConfig)) *Runner {
	t.Helper()
	cfg := RunnerConfig{Workspace: t.TempDir(), Model: model}
	if mod != nil {
		mod(&cfg)
	}
	r, err := NewRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// history returns a session's history, failing the test on a store error.
func history(t *testing.T, r *Runner, sessionID string) []fantasy.Message {
	t.Helper()
	h, err := r.History(bg, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// toolResults returns the tool results of all steps in the reply's messages,
// in order, as "ok: <text>" or "error: <text>".
func toolResults(msgs []fantasy.Message) []string {
	var out []string
	for _, m := range msgs {
		for _, p := range m.Content {
			if r, ok := p.(fantasy.ToolResultPart); ok {
				kind := "ok"
				if scripted.IsError(r.Output) {
					kind = "error"
				}
				out = append(out, kind+": "+scripted.ResultText(r.Output))
			}
		}
	}
	return out
}

func TestAgentAllToolsSucceed(t *testing.T) {
	c := scripted.Call
	model := scripted.New(
		scripted.Use(c(wsfs.ToolListDir, `{}`)),
		scripted.Use(c(wsfs.ToolWriteFile, `{"path":"notes/todo.md","content":"- milk\n"}`)),
		scripted.Use(c(wsfs.ToolAppendFile, `{"path":"notes/todo.md","content":"- eggs\n"}`)),
		scripted.Use(c(wsfs.ToolEditFile, `{"path":"notes/todo.md","old_text":"milk","new_text":"oat milk"}`)),
		scripted.Use(c(wsfs.ToolReadFile, `{"path":"notes/todo.md"}`), c(wsfs.ToolListDir, `{"path":"notes"}`)), // two calls in one step
		scripted.Say("All done."),
	)
	r := newTestRunner(t, model, nil)
	reply, err := r.Run(bg, "s1", "make a todo list")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "All done." || reply.Steps != 6 || reply.ToolCalls != 6 || reply.LimitReached {
		t.Fatalf("reply = %+v", reply)
	}
	results := toolResults(reply.Messages)
	want := []string{
		"ok: . (0 entries)",
		"ok: created notes/todo.md (7 bytes)",
		"ok: appended 7 bytes to notes/todo.md (now 14 bytes)",
		"ok: replaced 1 occurrence in notes/todo.md",
		"ok: - oat milk\n- eggs\n",
		"ok: notes (1 entry)\ntodo.md  18 bytes",
	}
	if strings.Join(results, "|") != strings.Join(want, "|") {
		t.Fatalf("tool results:\n%q\nwant\n%q", results, want)
	}
	if got := readFile(t, filepath.Join(r.Workspace().Root(), "notes", "todo.md")); got != "- oat milk\n- eggs\n" {
		t.Fatalf("todo.md = %q", got)
	}
	if model.Remaining() != 0 {
		t.Fatalf("%d turns left", model.Remaining())
	}
}

func TestAgentRecoversFromToolErrors(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeFile(t, outside, "secret")
	c := scripted.Call
	model := scripted.New(
		scripted.Use(c(wsfs.ToolReadFile, `{"path":"../../etc/passwd"}`)),
		scripted.Use(c(wsfs.ToolReadFile, `{"path":"`+outside+`"}`)),
		scripted.Use(c(wsfs.ToolReadFile, `{"path":"missing.txt"}`)),
		scripted.Use(c(wsfs.ToolReadFile, `{"path":`)), // malformed JSON: rejected by fantasy
		// The next request must contain all four failures as tool results.
		scripted.Turn{
			Check: func(call fantasy.Call) error {
				got := toolResults(call.Prompt)
				if len(got) != 4 {
					return fmt.Errorf("prompt has %d tool results: %q", len(got), got)
				}
				for i, prefix := range []string{"error: outside_workspace: ", "error: outside_workspace: ", "error: path_not_found: ", "error: invalid JSON input"} {
					if !strings.HasPrefix(got[i], prefix) {
						return fmt.Errorf("tool result %d = %q, want prefix %q", i, got[i], prefix)
					}
				}
				return nil
			},
			ToolCalls: []scripted.ToolCall{c(wsfs.ToolWriteFile, `{"path":"ok.txt","content":"recovered"}`)},
		},
		scripted.Say("I could not read those, but I wrote ok.txt."),
	)
	r := newTestRunner(t, model, nil)
	reply, err := r.Run(bg, "s", "read some files")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "I could not read those, but I wrote ok.txt." || reply.Steps != 6 {
		t.Fatalf("reply = %+v", reply)
	}
	if got := readFile(t, filepath.Join(r.Workspace().Root(), "ok.txt")); got != "recovered" {
		t.Fatalf("ok.txt = %q", got)
	}
}

func TestAgentStepLimit(t *testing.T) {
	model := scripted.New(scripted.Turn{
		ToolCalls: []scripted.ToolCall{scripted.Call(wsfs.ToolAppendFile, `{"path":"log.txt","content":"x"}`)},
		Repeat:    true,
	})
	r := newTestRunner(t, model, func(c *RunnerConfig) { c.MaxToolIterations = 3 })
	reply, err := r.Run(bg, "s", "loop forever")
	if err != nil {
		t.Fatal(err)
	}
	if !reply.LimitReached || reply.Steps != 4 || reply.ToolCalls != 3 {
		t.Fatalf("reply = %+v", reply)
	}
	if got := readFile(t, filepath.Join(r.Workspace().Root(), "log.txt")); got != "xxx" {
		t.Fatalf("log.txt = %q: exactly 3 tool steps should have run", got)
	}
	calls := model.Calls()
	if len(calls) != 4 {
		t.Fatalf("%d model calls, want 4", len(calls))
	}
	for i, call := range calls[:3] {
		if got := offered(call); !slices.Equal(got, r.Tools()) {
			t.Fatalf("call %d offered %v, want the runner's tools %v", i, got, r.Tools())
		}
	}
	final := calls[3]
	if len(final.Tools) != 0 {
		t.Fatalf("final call offered %d tools, want none", len(final.Tools))
	}
	if final.ToolChoice == nil || *final.ToolChoice != fantasy.ToolChoiceNone {
		t.Fatalf("final call's tool choice %s, want none", choiceOf(final))
	}
	if calls[0].ToolChoice == nil || *calls[0].ToolChoice != fantasy.ToolChoiceAuto {
		t.Fatalf("tool step's tool choice %s, want auto", choiceOf(calls[0]))
	}
	last := final.Prompt[len(final.Prompt)-1]
	if last.Role != fantasy.MessageRoleUser || last.Content[0].(fantasy.TextPart).Text != fmt.Sprintf(LimitNotice, 3) {
		t.Fatalf("final prompt ends with %+v, want the limit notice", last)
	}
	want := "I have to stop here. Summary of the 3 tool calls I made (3 succeeded, 0 failed):\n" +
		"1. append_file log.txt: ok\n2. append_file log.txt: ok\n3. append_file log.txt: ok"
	if reply.Text != want {
		t.Fatalf("final text %q, want %q", reply.Text, want)
	}
	// The final assistant message is text only.
	h := history(t, r, "s")
	lastMsg := h[len(h)-1]
	if lastMsg.Role != fantasy.MessageRoleAssistant || len(lastMsg.Content) != 1 || lastMsg.Content[0].GetType() != fantasy.ContentTypeText {
		t.Fatalf("last history message = %+v", lastMsg)
	}
	// The notice is not part of the history.
	for _, m := range h {
		for _, p := range m.Content {
			if tp, ok := p.(fantasy.TextPart); ok && strings.Contains(tp.Text, "tool-call limit reached") {
				t.Fatal("limit notice stored in history")
			}
		}
	}
}

// choiceOf returns a call's tool choice, "<nil>" if it has none.
func choiceOf(call fantasy.Call) string {
	if call.ToolChoice == nil {
		return "<nil>"
	}
	return string(*call.ToolChoice)
}

func TestAgentDefaultLimit(t *testing.T) {
	model := scripted.New(scripted.Turn{ToolCalls: []scripted.ToolCall{scripted.Call(wsfs.ToolListDir, `{}`)}, Repeat: true})
	r := newTestRunner(t, model, func(c *RunnerConfig) { c.MaxToolIterations = -1 })
	if r.MaxToolIterations() != DefaultMaxToolIterations {
		t.Fatalf("limit = %d", r.MaxToolIterations())
	}
	reply, err := r.Run(bg, "s", "go")
	if err != nil {
		t.Fatal(err)
	}
	if reply.ToolCalls != 20 || reply.Steps != 21 || !reply.LimitReached {
		t.Fatalf("reply = %+v", reply)
	}
}

// rogueModel calls write_file on every request, even when no tools are
// offered.
type rogueModel struct {
	baseModel
	n int
}

// baseModel provides the parts of fantasy.LanguageModel the test models
// do not use.
type baseModel struct{}

func (baseModel) Provider() string { return "test" }
func (baseModel) Model() string    { return "test" }
func (baseModel) GenerateObject(context.Context, fantasy.ObjectCall) (*fantasy.ObjectResponse, error) {
	return nil, errors.New("unsupported")
}
func (baseModel) StreamObject(context.Context, fantasy.ObjectCall) (fantasy.ObjectStreamResponse, error) {
	return nil, errors.New("unsupported")
}

func (m *rogueModel) Generate(ctx context.Context, call fantasy.Call) (*fantasy.Response, error) {
	m.n++
	return &fantasy.Response{
		Content: fantasy.ResponseContent{fantasy.ToolCallContent{
			ToolCallID: fmt.Sprintf("rogue_%d", m.n), ToolName: wsfs.ToolWriteFile,
			Input: fmt.Sprintf(`{"path":"f%d.txt","content":"x"}`, m.n),
		}},
		FinishReason: fantasy.FinishReasonToolCalls,
	}, nil
}

func (m *rogueModel) Stream(ctx context.Context, call fantasy.Call) (fantasy.StreamResponse, error) {
	resp, _ := m.Generate(ctx, call)
	tc := resp.Content[0].(fantasy.ToolCallContent)
	return func(yield func(fantasy.StreamPart) bool) {
		_ = yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolCall, ID: tc.ToolCallID, ToolCallName: tc.ToolName, ToolCallInput: tc.Input}) &&
			yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeFinish, FinishReason: fantasy.FinishReasonToolCalls})
	}, nil
}

func TestAgentDisabledToolsCannotRun(t *testing.T) {
	model := &rogueModel{}
	r := newTestRunner(t, model, func(c *RunnerConfig) { c.MaxToolIterations = 2 })
	reply, err := r.Run(bg, "s", "go")
	if err != nil {
		t.Fatal(err)
	}
	if !reply.LimitReached || reply.Steps != 3 {
		t.Fatalf("reply = %+v", reply)
	}
	root := r.Workspace().Root()
	for _, f := range []string{"f1.txt", "f2.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "f3.txt")); !os.IsNotExist(err) {
		t.Fatalf("the tool call of the tool-less final step ran: %v", err)
	}
	results := toolResults(reply.Messages)
	if len(results) != 3 || !strings.HasPrefix(results[2], "error: tool not found: write_file") {
		t.Fatalf("results = %q", results)
	}
	if !strings.HasPrefix(reply.Text, "I stopped after reaching the limit of 2 tool iterations") {
		t.Fatalf("fallback text = %q", reply.Text)
	}
}

func TestAgentHistory(t *testing.T) {
	c := scripted.Call
	var firstCallID string
	model := scripted.New(
		scripted.Use(c(wsfs.ToolWriteFile, `{"path":"a.txt","content":"remember me"}`)),
		scripted.Say("Saved."),
		// Second turn: the prompt must hold the first turn's tool call and
		// tool result.
		scripted.Turn{
			Check: func(call fantasy.Call) error {
				var roles []string
				var sawCall, sawResult bool
				for _, m := range call.Prompt {
					roles = append(roles, string(m.Role))
					for _, p := range m.Content {
						switch p := p.(type) {
						case fantasy.ToolCallPart:
							sawCall = p.ToolName == wsfs.ToolWriteFile && p.Input == `{"path":"a.txt","content":"remember me"}`
							firstCallID = p.ToolCallID
						case fantasy.ToolResultPart:
							sawResult = p.ToolCallID == firstCallID && scripted.ResultText(p.Output) == "created a.txt (11 bytes)"
						}
					}
				}
				if got := strings.Join(roles, ","); got != "system,user,assistant,tool,assistant,user" {
					return fmt.Errorf("roles %s", got)
				}
				if !sawCall || !sawResult {
					return fmt.Errorf("tool call %v / result %v missing from the prompt", sawCall, sawResult)
				}
				return nil
			},
			Text: "You saved a.txt.",
		},
	)
	r := newTestRunner(t, model, nil)
	if _, err := r.Run(bg, "s", "save this"); err != nil {
		t.Fatal(err)
	}
	h := history(t, r, "s")
	var roles []string
	for _, m := range h {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool,assistant" {
		t.Fatalf("history roles %s", got)
	}
	tc, ok := h[1].Content[0].(fantasy.ToolCallPart)
	if !ok || tc.ToolName != wsfs.ToolWriteFile {
		t.Fatalf("history[1] = %+v", h[1])
	}
	tr, ok := h[2].Content[0].(fantasy.ToolResultPart)
	if !ok || tr.ToolCallID != tc.ToolCallID || scripted.ResultText(tr.Output) != "created a.txt (11 bytes)" {
		t.Fatalf("history[2] = %+v", h[2])
	}

	reply, err := r.Run(bg, "s", "what did I save?")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "You saved a.txt." || len(history(t, r, "s")) != 6 {
		t.Fatalf("reply %+v, history %d", reply, len(history(t, r, "s")))
	}
	// History returns a copy.
	h = history(t, r, "s")
	h[0] = fantasy.Message{}
	if history(t, r, "s")[0].Role != fantasy.MessageRoleUser {
		t.Fatal("History shares its slice")
	}

	if err := r.ResetSession(bg, "s"); err != nil {
		t.Fatal(err)
	}
	if history(t, r, "s") != nil {
		t.Fatal("history survives ResetSession")
	}
}

// TestSessionsIsolated runs two sessions concurrently; each session's model
// checks that it never sees the other's messages.
func TestSessionsIsolated(t *testing.T) {
	perSession := map[string]*scripted.Model{}
	for _, s := range []string{"alice", "bob"} {
		other := map[string]string{"alice": "bob", "bob": "alice"}[s]
		noLeak := func(call fantasy.Call) error {
			for _, m := range call.Prompt {
				for _, p := range m.Content {
					var text string
					switch p := p.(type) {
					case fantasy.TextPart:
						text = p.Text
					case fantasy.ToolCallPart:
						text = p.Input
					case fantasy.ToolResultPart:
						text = scripted.ResultText(p.Output)
					}
					if strings.Contains(text, other) {
						return fmt.Errorf("session %s saw %q", s, text)
					}
				}
			}
			return nil
		}
		var turns []scripted.Turn
		for i := range 3 {
			turns = append(turns,
				scripted.Turn{Check: noLeak, ToolCalls: []scripted.ToolCall{scripted.Call(wsfs.ToolAppendFile, `{"path":"`+s+`.txt","content":"`+s+` `+itoa(i)+`\n"}`)}},
				scripted.Turn{Check: noLeak, Text: s + " turn " + itoa(i) + " done"},
			)
		}
		perSession[s] = scripted.New(turns...)
	}
	// The router picks the session's script from the first user message.
	router := &routerModel{pick: func(call fantasy.Call) *scripted.Model {
		for _, m := range call.Prompt {
			if m.Role == fantasy.MessageRoleUser {
				return perSession[strings.Fields(m.Content[0].(fantasy.TextPart).Text)[0]]
			}
		}
		return nil
	}}
	r := newTestRunner(t, router, nil)

	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for _, s := range []string{"alice", "bob"} {
		wg.Go(func() {
			for i := range 3 {
				reply, err := r.Run(bg, "session-"+s, s+" says hi "+itoa(i))
				if err != nil {
					errs <- err
					return
				}
				if reply.Text != s+" turn "+itoa(i)+" done" {
					errs <- fmt.Errorf("%s got %q", s, reply.Text)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, s := range []string{"alice", "bob"} {
		if n := len(history(t, r, "session-"+s)); n != 12 {
			t.Fatalf("session %s has %d messages, want 12", s, n)
		}
		if got := readFile(t, filepath.Join(r.Workspace().Root(), s+".txt")); got != s+" 0\n"+s+" 1\n"+s+" 2\n" {
			t.Fatalf("%s.txt = %q", s, got)
		}
	}
	if got := strings.Join(r.HistoryStore().(*MemoryHistory).Sessions(), ","); got != "session-alice,session-bob" {
		t.Fatalf("Sessions() = %s", got)
	}
}

// routerModel forwards each call to the scripted model pick chooses.
type routerModel struct {
	baseModel
	pick func(fantasy.Call) *scripted.Model
}

func (m *routerModel) Stream(ctx context.Context, call fantasy.Call) (fantasy.StreamResponse, error) {
	return m.pick(call).Stream(ctx, call)
}

func (m *routerModel) Generate(ctx context.Context, call fantasy.Call) (*fantasy.Response, error) {
	return m.pick(call).Generate(ctx, call)
}

// TestRunCancelled cancels the run's context while the model hands out a
// tool call: the tool does not run, the run stops with context.Canceled, and
// the session history stays empty.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	model := scripted.New(
		scripted.Turn{
			Before:    func(context.Context) { cancel() },
			ToolCalls: []scripted.ToolCall{scripted.Call(wsfs.ToolWriteFile, `{"path":"never.txt","content":"x"}`)},
		},
		scripted.Say("unreachable"),
	)
	r := newTestRunner(t, model, nil)
	reply, err := r.Run(ctx, "s", "write something")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(r.Workspace().Root(), "never.txt")); !os.IsNotExist(err) {
		t.Fatalf("never.txt exists: %v", err)
	}
	if len(model.Calls()) != 1 || reply.Steps != 0 || history(t, r, "s") != nil && len(history(t, r, "s")) != 0 {
		t.Fatalf("model calls %d, reply %+v, history %v", len(model.Calls()), reply, history(t, r, "s"))
	}
	// The session still works afterwards.
	if reply, err := r.Run(bg, "s", "hello again"); err != nil || reply.Text != "unreachable" {
		t.Fatalf("after cancel: %+v, %v", reply, err)
	}
}

// TestRunCancelledMidCall cancels the run's context while a tool call is
// on its way into the library: the library stops with cancelled, nothing is
// written, and the run fails with context.Canceled without another model
// call.
func TestRunCancelledMidCall(t *testing.T) {
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	model := scripted.New(
		scripted.Use(scripted.Call(wsfs.ToolWriteFile, `{"path":"never.txt","content":"x"}`)),
		scripted.Say("unreachable"),
	)
	h := &recordHandler{}
	r := newTestRunner(t, model, func(c *RunnerConfig) { c.Logger = slogNew(h) })
	hookBefore(t, func(_ string, tokenDone <-chan struct{}) {
		cancel()
		<-tokenDone
	})
	_, err := r.Run(ctx, "s", "list big")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, wsfs.ErrCancelled) {
		t.Fatalf("Run error = %v, want cancelled", err)
	}
	recs := h.toolRecords()
	if len(recs) != 1 || recs[0]["outcome"] != "cancelled" {
		t.Fatalf("records = %v", recs)
	}
	if len(model.Calls()) != 1 {
		t.Fatalf("%d model calls after cancel", len(model.Calls()))
	}
	if _, err := os.Stat(filepath.Join(r.Workspace().Root(), "never.txt")); !os.IsNotExist(err) {
		t.Fatalf("never.txt exists: %v", err)
	}
}

func TestRepairToolCalls(t *testing.T) {
	for _, repair := range []bool{false, true} {
		t.Run(fmt.Sprint("repair=", repair), func(t *testing.T) {
			model := scripted.New(
				scripted.Use(scripted.Call(wsfs.ToolWriteFile, `{"path":"r.txt","content":"fixed"`)), // missing }
				scripted.Say("ok"),
			)
			r := newTestRunner(t, model, func(c *RunnerConfig) { c.RepairToolCalls = repair })
			reply, err := r.Run(bg, "s", "go")
			if err != nil {
				t.Fatal(err)
			}
			results := toolResults(reply.Messages)
			_, statErr := os.Stat(filepath.Join(r.Workspace().Root(), "r.txt"))
			if repair {
				if statErr != nil || len(results) != 1 || results[0] != "ok: created r.txt (5 bytes)" {
					t.Fatalf("with repair: results %q, stat %v", results, statErr)
				}
			} else {
				if !os.IsNotExist(statErr) || len(results) != 1 || !strings.HasPrefix(results[0], "error: invalid JSON input") {
					t.Fatalf("without repair: results %q, stat %v", results, statErr)
				}
			}
		})
	}
}

func TestRunnerLogs(t *testing.T) {
	h := &recordHandler{}
	model := scripted.New(
		scripted.Use(scripted.Call(wsfs.ToolWriteFile, `{"path":"x.txt","content":"PRIVATE"}`), scripted.Call(wsfs.ToolReadFile, `{"path":"../x"}`)),
		scripted.Say("done"),
	)
	r := newTestRunner(t, model, func(c *RunnerConfig) { c.Logger = slogNew(h) })
	if _, err := r.Run(bg, "s", "go"); err != nil {
		t.Fatal(err)
	}
	recs := h.toolRecords()
	if len(recs) != 2 || recs[0]["tool"] != wsfs.ToolWriteFile || recs[0]["path"] != "x.txt" || recs[0]["outcome"] != "ok" ||
		recs[1]["tool"] != wsfs.ToolReadFile || recs[1]["path"] != "../x" || recs[1]["outcome"] != "outside_workspace" {
		t.Fatalf("records = %v", recs)
	}
	if strings.Contains(h.allText(), "PRIVATE") {
		t.Fatal("content logged")
	}
	if !strings.Contains(h.allText(), "wsfs agent run\nsession=s\nsteps=2\ntool_calls=2\nlimit_reached=false\n") {
		t.Fatalf("no run record:\n%s", h.allText())
	}
}

func TestRunnerConfigErrors(t *testing.T) {
	if _, err := NewRunner(RunnerConfig{Workspace: t.TempDir()}); err == nil {
		t.Fatal("NewRunner without a model succeeded")
	}
	_, err := NewRunner(RunnerConfig{Workspace: "", Model: scripted.New()})
	wantCode(t, err, wsfs.CodeInvalidPath)

	ws := openTest(t, wsfs.Config{})
	r, err := NewRunnerWithWorkspace(ws, RunnerConfig{Model: scripted.New(scripted.Say("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(bg, "s", ""); err == nil {
		t.Fatal("empty message accepted")
	}
	if err := r.Close(); err != nil || ws.Closed() {
		t.Fatalf("Close closed a borrowed workspace: %v", err)
	}
}

// TestAgentFinishesAtLimit: a model that answers in text on its last
// allowed step does not trigger the tool-less extra step.
func TestAgentFinishesAtLimit(t *testing.T) {
	model := scripted.New(
		scripted.Use(scripted.Call(wsfs.ToolListDir, `{}`)),
		scripted.Say("done"),
	)
	r := newTestRunner(t, model, func(c *RunnerConfig) { c.MaxToolIterations = 2 })
	reply, err := r.Run(bg, "s", "go")
	if err != nil {
		t.Fatal(err)
	}
	if reply.LimitReached || reply.Steps != 2 || reply.Text != "done" || len(model.Calls()) != 2 {
		t.Fatalf("reply = %+v", reply)
	}
	if got := offered(model.Calls()[1]); !slices.Equal(got, r.Tools()) {
		t.Fatalf("the last allowed step offered %v, want the runner's tools %v", got, r.Tools())
	}
}
