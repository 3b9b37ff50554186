package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"charm.land/fantasy"

	"github.com/wsfs/wsfs/go/agent"
	"github.com/wsfs/wsfs/go/scripted"
)

func TestScriptedDemo(t *testing.T) {
	var out strings.Builder
	res, err := Run(context.Background(), Options{Out: &out, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !res.SecretIntact {
		t.Fatal("secret.txt changed")
	}
	if want := "# Notes\n\n- buy oat milk\n- call Alice\n- water the plants\n"; res.Notes != want {
		t.Fatalf("notes.md = %q, want %q", res.Notes, want)
	}
	r := res.Reply
	if !r.LimitReached || r.ToolCalls != DefaultMaxToolIterations || r.Steps != DefaultMaxToolIterations+1 {
		t.Fatalf("reply = %+v", r)
	}
	if !strings.HasPrefix(r.Text, "I have to stop here. Summary of the 10 tool calls I made (8 succeeded, 2 failed):") {
		t.Fatalf("final text %q", r.Text)
	}

	// Exactly the two escapes failed, both with outside_workspace, and the
	// agent went on afterwards.
	var outcomes []string
	for _, tr := range res.ToolResults {
		text := scripted.ResultText(tr.Result)
		if scripted.IsError(tr.Result) {
			code, _, _ := strings.Cut(text, ":")
			outcomes = append(outcomes, tr.ToolName+"="+code)
		} else {
			outcomes = append(outcomes, tr.ToolName+"=ok")
		}
	}
	want := "list_dir=ok write_file=ok read_file=ok edit_file=ok append_file=ok " +
		"read_file=outside_workspace read_file=outside_workspace read_file=ok list_dir=ok list_dir=ok"
	if got := strings.Join(outcomes, " "); got != want {
		t.Fatalf("outcomes:\n%s\nwant\n%s", got, want)
	}

	// The agent has the Runner's default tools, MiniClaw's five.
	if !slices.Equal(res.Tools, agent.DefaultTools) {
		t.Fatalf("the demo's agent was offered %v, want agent.DefaultTools %v", res.Tools, agent.DefaultTools)
	}
	transcript := out.String()
	for _, s := range []string{
		// The header names the tools the agent has: the Runner's.
		fmt.Sprintf("wsfs demo: a fantasy agent with the %d wsfs workspace tools\n", len(res.Tools)),
		"  tools:     " + strings.Join(res.Tools, ", ") + "\n",
		"model:     scripted model (no network, no API key)",
		"user> Please help me with my notes",
		"-- step 1 --\nassistant> Let me look at the workspace first.\n  call list_dir {}\n  ok\n",
		"  call read_file {\"path\":\"../outside/secret.txt\"}\n  ERROR  outside_workspace: ",
		"  call read_file {\"path\":\"link-to-outside/secret.txt\"}\n  ERROR  outside_workspace: ",
		"-- step 11 (tool-call limit reached: tools disabled) --\nassistant> I have to stop here.",
		"== done: 11 steps, 10 tool calls; the limit of 10 tool iterations was reached",
		"== outside/secret.txt untouched: true",
		"   | - buy oat milk\n",
	} {
		if !strings.Contains(transcript, s) {
			t.Errorf("transcript lacks %q", s)
		}
	}
	if strings.Contains(transcript, strings.TrimSpace(SecretContent)) {
		t.Error("the secret leaked into the transcript")
	}
	if t.Failed() {
		t.Log(transcript)
	}
}

// TestDemoWithOtherModel runs the demo with a caller-provided model, as it
// does with WSFS_MODEL_URL.
func TestDemoWithOtherModel(t *testing.T) {
	m := scripted.New(scripted.Say("Nothing to do.")).Named("stand-in")
	var out strings.Builder
	res, err := Run(context.Background(), Options{Out: &out, Model: m, MaxToolIterations: 3, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reply.Text != "Nothing to do." || res.Reply.LimitReached || !res.SecretIntact {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(out.String(), `model:     scripted model "stand-in"`) || !strings.Contains(out.String(), "max_tool_iterations = 3") {
		t.Fatalf("transcript:\n%s", out.String())
	}
	var _ fantasy.LanguageModel = m
}

func TestModelFromEnv(t *testing.T) {
	t.Setenv("WSFS_MODEL_URL", "")
	if m, err := ModelFromEnv(context.Background()); m != nil || err != nil {
		t.Fatalf("no URL: %v, %v", m, err)
	}
	t.Setenv("WSFS_MODEL_URL", "http://127.0.0.1:1/v1")
	t.Setenv("WSFS_MODEL", "")
	if _, err := ModelFromEnv(context.Background()); err == nil || !strings.Contains(err.Error(), "WSFS_MODEL") {
		t.Fatalf("missing model: %v", err)
	}
	t.Setenv("WSFS_MODEL", "some-model")
	m, err := ModelFromEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m.Model() != "some-model" || m.Provider() == "" {
		t.Fatalf("model %s/%s", m.Provider(), m.Model())
	}
}

// TestDemoOverOpenAICompatible runs the demo against a fake
// OpenAI-compatible server, through ModelFromEnv and fantasy's openaicompat
// provider (streaming), as `WSFS_MODEL_URL=... wsfs demo` does.
func TestDemoOverOpenAICompatible(t *testing.T) {
	var mu sync.Mutex
	var requests []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		requests = append(requests, req)
		n := len(requests)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, finish any) {
			b, _ := json.Marshal(map[string]any{
				"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
			})
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		if _, hasTools := req["tools"]; hasTools {
			chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
				"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": `{"path":"../outside/secret.txt"}`},
			}}}, nil)
			chunk(map[string]any{}, "tool_calls")
		} else {
			chunk(map[string]any{"role": "assistant", "content": "I could not read secret.txt: it is outside the workspace."}, nil)
			chunk(map[string]any{}, "stop")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	t.Setenv("WSFS_MODEL_URL", srv.URL+"/v1")
	t.Setenv("WSFS_MODEL", "fake")
	model, err := ModelFromEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res, err := Run(context.Background(), Options{Out: &out, Model: model, MaxToolIterations: 2, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !res.Reply.LimitReached || res.Reply.Steps != 3 || res.Reply.Text != "I could not read secret.txt: it is outside the workspace." {
		t.Fatalf("reply %+v\n%s", res.Reply, out.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 3 {
		t.Fatalf("%d requests", len(requests))
	}
	if _, hasTools := requests[2]["tools"]; hasTools {
		t.Fatal("the final request offered tools")
	}
	// The second request carries the first tool call's error result.
	msgs, _ := json.Marshal(requests[1]["messages"])
	if !strings.Contains(string(msgs), "outside_workspace: ../outside/secret.txt leads outside the workspace") {
		t.Fatalf("second request messages: %s", msgs)
	}
	if !res.SecretIntact || strings.Contains(out.String(), strings.TrimSpace(SecretContent)) {
		t.Fatal("secret leaked or changed")
	}
	if !strings.Contains(out.String(), `model:     openai-compat model "fake"`) {
		t.Fatalf("transcript:\n%s", out.String())
	}
}

// TestOverlayDemo: the overlay run's host diffs, commits the added file,
// rewinds the second request's changes and commits the rest: the project
// ends with the typo fixed and the changelog, and greet.py and config.ini as
// they were.
func TestOverlayDemo(t *testing.T) {
	var out strings.Builder
	res, err := RunOverlay(context.Background(), Options{Out: &out, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.Skipped != "" {
		t.Skip(res.Skipped)
	}
	if got := strings.Join(res.FirstDiff, ", "); got != "A CHANGELOG.md, M README.md" {
		t.Fatalf("first diff %s", got)
	}
	if !slices.Equal(res.PartCommitted, []string{"CHANGELOG.md"}) || !slices.Equal(res.AfterRewind, []string{"M README.md"}) {
		t.Fatalf("part %v, after the rewind %v", res.PartCommitted, res.AfterRewind)
	}
	want := map[string]string{
		"README.md":    strings.Replace(overlayProject["README.md"], "greting", "greeting", 1),
		"CHANGELOG.md": "# Changelog\n\n- README: fixed a typo.\n",
		"greet.py":     overlayProject["greet.py"],
		"config.ini":   overlayProject["config.ini"],
	}
	if fmt.Sprint(res.Files) != fmt.Sprint(want) {
		t.Fatalf("project files %q, want %q", res.Files, want)
	}
	for _, s := range []string{"host> wsfs_session_diff: A CHANGELOG.md, M README.md", "-Prints a greting.", "+Prints a greeting.",
		"host> wsfs_session_rewind", "host> wsfs_session_diff: 0 changes left"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("transcript lacks %q:\n%s", s, out.String())
		}
	}
}
