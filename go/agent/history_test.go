package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/scripted"
)

// fileStore is a HistoryStore a host might write: one JSON file per
// session, so histories survive a restart. It counts its calls.
type fileStore struct {
	dir string

	mu                    sync.Mutex
	loads, appends, drops int
}

func (s *fileStore) path(id string) string { return filepath.Join(s.dir, id+".json") }

func (s *fileStore) Load(_ context.Context, id string) ([]fantasy.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads++
	b, err := os.ReadFile(s.path(id))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var msgs []fantasy.Message
	return msgs, json.Unmarshal(b, &msgs)
}

func (s *fileStore) Append(ctx context.Context, id string, turn []fantasy.Message) error {
	msgs, err := s.Load(ctx, id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appends++
	b, err := json.Marshal(append(msgs, turn...))
	if err != nil {
		return err
	}
	return os.WriteFile(s.path(id), b, 0o600)
}

func (s *fileStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops++
	if err := os.Remove(s.path(id)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// TestHistoryStorePersists: a turn goes through a host's store (tool call
// and tool result included) and a new Runner on the same store, as after a
// restart, continues the session.
func TestHistoryStorePersists(t *testing.T) {
	dir := t.TempDir()
	root := t.TempDir()
	c := scripted.Call
	store := &fileStore{dir: dir}
	r := newTestRunner(t, scripted.New(
		scripted.Use(c(wsfs.ToolWriteFile, `{"path":"a.txt","content":"remember me"}`)),
		scripted.Say("Saved."),
	), func(cfg *RunnerConfig) { cfg.Workspace, cfg.History = root, store })
	if _, err := r.Run(bg, "chat-1", "save this"); err != nil {
		t.Fatal(err)
	}
	if store.loads != 2 || store.appends != 1 { // Append loads once itself
		t.Fatalf("store calls: %d loads, %d appends", store.loads, store.appends)
	}
	if r.HistoryStore() != HistoryStore(store) {
		t.Fatal("HistoryStore() is not the configured store")
	}

	// A new Runner (a restarted host) with a new store on the same files.
	var sawCall, sawResult bool
	model := scripted.New(scripted.Turn{
		Check: func(call fantasy.Call) error {
			var roles []string
			for _, m := range call.Prompt {
				roles = append(roles, string(m.Role))
				for _, p := range m.Content {
					switch p := p.(type) {
					case fantasy.ToolCallPart:
						sawCall = p.ToolName == wsfs.ToolWriteFile && p.Input == `{"path":"a.txt","content":"remember me"}`
					case fantasy.ToolResultPart:
						sawResult = scripted.ResultText(p.Output) == "created a.txt (11 bytes)"
					}
				}
			}
			if got := strings.Join(roles, ","); got != "system,user,assistant,tool,assistant,user" {
				return fmt.Errorf("roles %s", got)
			}
			return nil
		},
		Text: "You saved a.txt.",
	})
	r2 := newTestRunner(t, model, func(cfg *RunnerConfig) { cfg.Workspace, cfg.History = root, &fileStore{dir: dir} })
	reply, err := r2.Run(bg, "chat-1", "what did I save?")
	if err != nil || reply.Text != "You saved a.txt." {
		t.Fatalf("reply %+v, %v", reply, err)
	}
	if !sawCall || !sawResult {
		t.Fatalf("the stored history lost the tool call (%v) or its result (%v)", sawCall, sawResult)
	}
	if n := len(history(t, r2, "chat-1")); n != 6 {
		t.Fatalf("history has %d messages, want 6", n)
	}
	if err := r2.ResetSession(bg, "chat-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(store.path("chat-1")); !os.IsNotExist(err) {
		t.Fatalf("ResetSession left the session file: %v", err)
	}
}

// TestMemoryHistoryMaxTurns: a bounded MemoryHistory drops whole turns,
// oldest first, and the model sees only what is kept.
func TestMemoryHistoryMaxTurns(t *testing.T) {
	c := scripted.Call
	var lastPrompt []string
	record := func(call fantasy.Call) error {
		lastPrompt = nil
		for _, m := range call.Prompt {
			for _, p := range m.Content {
				switch p := p.(type) {
				case fantasy.TextPart:
					lastPrompt = append(lastPrompt, string(m.Role)+":"+p.Text)
				case fantasy.ToolCallPart:
					lastPrompt = append(lastPrompt, "call:"+p.Input)
				case fantasy.ToolResultPart:
					lastPrompt = append(lastPrompt, "result:"+scripted.ResultText(p.Output))
				}
			}
		}
		return nil
	}
	var turns []scripted.Turn
	for i := range 3 {
		turns = append(turns,
			scripted.Turn{Check: record, ToolCalls: []scripted.ToolCall{c(wsfs.ToolAppendFile, fmt.Sprintf(`{"path":"log.txt","content":"%d"}`, i))}},
			scripted.Turn{Check: record, Text: fmt.Sprint("done ", i)})
	}
	store := &MemoryHistory{MaxTurns: 1}
	r := newTestRunner(t, scripted.New(turns...), func(cfg *RunnerConfig) { cfg.History = store })
	for i := range 3 {
		if _, err := r.Run(bg, "s", fmt.Sprint("turn ", i)); err != nil {
			t.Fatal(err)
		}
	}
	// The last model call saw turn 1 (the one kept) and turn 2 so far.
	got := strings.Join(lastPrompt[1:], "|") // [0] is the system prompt
	want := `user:turn 1|call:{"path":"log.txt","content":"1"}|result:appended 1 byte to log.txt (now 2 bytes)|assistant:done 1|` +
		`user:turn 2|call:{"path":"log.txt","content":"2"}|result:appended 1 byte to log.txt (now 3 bytes)`
	if got != want {
		t.Fatalf("last prompt\n%s\nwant\n%s", got, want)
	}
	h := history(t, r, "s")
	if len(h) != 4 || h[0].Role != fantasy.MessageRoleUser || h[0].Content[0].(fantasy.TextPart).Text != "turn 2" {
		t.Fatalf("history: %d messages, first %+v", len(h), h[0])
	}
	if got := strings.Join(store.Sessions(), ","); got != "s" {
		t.Fatalf("Sessions() = %s", got)
	}
}

// failingStore fails Load or Append.
type failingStore struct {
	MemoryHistory
	failLoad, failAppend bool
}

var errStore = errors.New("store offline")

func (s *failingStore) Load(ctx context.Context, id string) ([]fantasy.Message, error) {
	if s.failLoad {
		return nil, errStore
	}
	return s.MemoryHistory.Load(ctx, id)
}

func (s *failingStore) Append(ctx context.Context, id string, turn []fantasy.Message) error {
	if s.failAppend {
		return errStore
	}
	return s.MemoryHistory.Append(ctx, id, turn)
}

func TestHistoryStoreErrors(t *testing.T) {
	model := scripted.New(scripted.Say("hi"), scripted.Say("again"))
	store := &failingStore{failLoad: true}
	r := newTestRunner(t, model, func(cfg *RunnerConfig) { cfg.History = store })
	if _, err := r.Run(bg, "s", "hello"); !errors.Is(err, errStore) || len(model.Calls()) != 0 {
		t.Fatalf("Load failure: %v after %d model calls", err, len(model.Calls()))
	}
	store.failLoad, store.failAppend = false, true
	reply, err := r.Run(bg, "s", "hello")
	if !errors.Is(err, errStore) || reply.Text != "hi" || reply.Steps != 1 || !strings.Contains(err.Error(), `storing the turn of session "s"`) {
		t.Fatalf("Append failure: reply %+v, %v", reply, err)
	}
}

// TestResetDuringRun: a Run whose session is reset meanwhile finishes, but
// its turn is not recorded.
func TestResetDuringRun(t *testing.T) {
	var r *Runner
	var resetErr error
	model := scripted.New(
		scripted.Say("first"),
		scripted.Turn{Before: func(context.Context) { resetErr = r.ResetSession(bg, "s") }, Text: "second"},
		scripted.Say("third"),
	)
	r = newTestRunner(t, model, nil)
	if _, err := r.Run(bg, "s", "one"); err != nil {
		t.Fatal(err)
	}
	if reply, err := r.Run(bg, "s", "two"); err != nil || reply.Text != "second" || resetErr != nil {
		t.Fatalf("reply %+v, %v, reset %v", reply, err, resetErr)
	}
	if h := history(t, r, "s"); len(h) != 0 {
		t.Fatalf("history after a reset during the run: %d messages", len(h))
	}
	if _, err := r.Run(bg, "s", "three"); err != nil {
		t.Fatal(err)
	}
	if h := history(t, r, "s"); len(h) != 2 {
		t.Fatalf("history after the next run: %d messages", len(h))
	}
	if n := len(r.locks.entries); n != 0 {
		t.Fatalf("%d session locks left after the runs", n)
	}
}
