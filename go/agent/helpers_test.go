package agent

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/internal/callhook"
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

// wantCode asserts that err is an *Error with the given code, also through
// errors.Is with the code's sentinel.
func wantCode(t *testing.T, err error, code wsfs.Code) *wsfs.Error {
	t.Helper()
	var e *wsfs.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v (%T), want *Error with code %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("got code %s (%s), want %s", e.Code, e.Message, code)
	}
	if !errors.Is(err, sentinel(code)) {
		t.Fatalf("errors.Is(%v, sentinel %s) = false", err, code)
	}
	if e.Message == "" {
		t.Fatalf("%s error has an empty message", code)
	}
	return e
}

func sentinel(code wsfs.Code) error {
	for _, s := range []*wsfs.Error{wsfs.ErrInvalidPath, wsfs.ErrOutsideWorkspace, wsfs.ErrPathNotFound, wsfs.ErrPermissionDenied,
		wsfs.ErrIOError, wsfs.ErrAmbiguousEdit, wsfs.ErrEditNotFound, wsfs.ErrNotAFile, wsfs.ErrNotADirectory, wsfs.ErrTooLarge,
		wsfs.ErrNoSpace, wsfs.ErrInvalidArguments, wsfs.ErrUnknownTool, wsfs.ErrInvalidWorkspace, wsfs.ErrCancelled, wsfs.ErrTimeout,
		wsfs.ErrLineOutOfRange, wsfs.ErrInvalidRegex, wsfs.ErrWritesDisabled, wsfs.ErrPolicyDenied, wsfs.ErrFileExists,
		wsfs.ErrRecursiveRequired} {
		if s.Code == code {
			return s
		}
	}
	panic("no sentinel for " + code)
}

var hookMu sync.Mutex // tests that set the hook do not run in parallel

func hookBefore(t *testing.T, f func(tool string, tokenDone <-chan struct{})) {
	t.Helper()
	hookMu.Lock()
	callhook.Before.Store(&f)
	t.Cleanup(func() {
		callhook.Before.Store(nil)
		hookMu.Unlock()
	})
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
