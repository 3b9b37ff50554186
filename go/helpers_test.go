package wsfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/wsfs/wsfs/go/internal/callhook"
)

// openTest opens a workspace on a new temporary directory and closes it at
// the end of the test.
func openTest(t *testing.T, cfg Config) *Workspace {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = t.TempDir()
	}
	ws, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// wantCode asserts that err is an *Error with the given code, also through
// errors.Is with the code's sentinel.
func wantCode(t *testing.T, err error, code Code) *Error {
	t.Helper()
	var e *Error
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

func sentinel(code Code) error {
	for _, s := range []*Error{ErrInvalidPath, ErrOutsideWorkspace, ErrPathNotFound, ErrPermissionDenied,
		ErrIOError, ErrAmbiguousEdit, ErrEditNotFound, ErrNotAFile, ErrNotADirectory, ErrTooLarge,
		ErrNoSpace, ErrInvalidArguments, ErrUnknownTool, ErrInvalidWorkspace, ErrCancelled, ErrTimeout,
		ErrLineOutOfRange, ErrInvalidRegex, ErrWritesDisabled, ErrPolicyDenied, ErrFileExists,
		ErrRecursiveRequired, ErrCapabilityDenied, ErrFuelExhausted, ErrMemoryLimit, ErrToolTrap,
		ErrManifestInvalid, ErrModuleMismatch, ErrGatewayError, ErrExecDisabled, ErrSandboxUnavailable,
		ErrCommandRequired, ErrConfirmationRequired, ErrApprovalDenied, ErrNothingToCommit, ErrOverlayUnavailable,
		ErrNoSession, ErrFeatureNotBuilt} {
		if s.Code == code {
			return s
		}
	}
	panic("no sentinel for " + code)
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

// bigRoot returns a directory that contains "big/", a directory with 20,000
// entries with long names: listing it takes the library tens of
// milliseconds (about 20 ms on the development machine), far longer than the
// 1 ms timeouts of the timeout tests. It is created once per test binary;
// tests must not change it.
func bigRoot(t *testing.T) string {
	t.Helper()
	bigOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wsfs-big-")
		if err != nil {
			bigErr = err
			return
		}
		bigPath = dir
		bigErr = makeBigDir(filepath.Join(dir, "big"), 20000)
	})
	if bigErr != nil {
		t.Fatal(bigErr)
	}
	return bigPath
}

var (
	bigOnce sync.Once
	bigPath string
	bigErr  error
)

func makeBigDir(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	pad := strings.Repeat("x", 120)
	for i := range n {
		fd, err := syscall.Open(filepath.Join(dir, fmt.Sprintf("f%06d-%s", i, pad)), syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644)
		if err != nil {
			return err
		}
		syscall.Close(fd)
	}
	return nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigPath != "" {
		os.RemoveAll(bigPath)
	}
	os.Exit(code)
}

// countCalls counts calls that reach the C library while the test runs.
func countCalls(t *testing.T) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	hookBefore(t, func(string, <-chan struct{}) { n.Add(1) })
	return &n
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
