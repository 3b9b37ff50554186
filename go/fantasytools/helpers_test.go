package fantasytools

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	wsfs "github.com/wsfs/wsfs/go"
)

var bg = context.Background()

// openTest opens a workspace on a new temporary directory and closes it at
// the end of the test.
func openTest(t *testing.T, cfg wsfs.Config) *wsfs.Workspace {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = t.TempDir()
	}
	ws, err := wsfs.Open(cfg)
	if err != nil {
		t.Fatalf("Open(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recordHandler is a slog.Handler that keeps every record.
type recordHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

// toolRecords returns the attributes of the "wsfs tool call" records.
func (h *recordHandler) toolRecords() []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]string
	for _, r := range h.records {
		if r.Message != "wsfs tool call" {
			continue
		}
		m := map[string]string{"level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value.String()
			return true
		})
		out = append(out, m)
	}
	return out
}

// allText returns every record's message and attribute values.
func (h *recordHandler) allText() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := ""
	for _, r := range h.records {
		s += r.Message + "\n"
		r.Attrs(func(a slog.Attr) bool {
			s += a.Key + "=" + a.Value.String() + "\n"
			return true
		})
	}
	return s
}

func slogNew(h slog.Handler) *slog.Logger { return slog.New(h) }

// libraryText returns the text the library puts in a full envelope for the
// call (what a model sees), and whether the call succeeded.
func libraryText(t *testing.T, ws *wsfs.Workspace, tool, args string) (string, bool) {
	t.Helper()
	raw, _ := ws.CallRaw(bg, tool, args)
	var env struct {
		OK   bool   `json:"ok"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		t.Fatalf("CallRaw(%s, %s) = %s: %v", tool, args, raw, err)
	}
	return env.Text, env.OK
}

// pathArgs returns the JSON arguments {"path": p}.
func pathArgs(p string) string {
	b, err := json.Marshal(map[string]string{"path": p})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// jsonString returns s as a JSON string.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
