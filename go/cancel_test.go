package wsfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestContextAlreadyDone(t *testing.T) {
	ws := openTest(t, Config{})
	calls := countCalls(t)

	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err := ws.WriteFile(ctx, WriteFileInput{Path: "a.txt", Content: "x"})
	wantCode(t, err, CodeCancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("errors.Is(%v, context.Canceled) = false", err)
	}

	ctx, cancel2 := context.WithDeadline(bg, time.Now().Add(-time.Second))
	defer cancel2()
	_, err = ws.AppendFile(ctx, AppendFileInput{Path: "a.txt", Content: "x"})
	wantCode(t, err, CodeTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("errors.Is(%v, context.DeadlineExceeded) = false", err)
	}

	if n := calls.Load(); n != 0 {
		t.Fatalf("%d calls reached C with a done context", n)
	}
	if _, err := os.Stat(filepath.Join(ws.Root(), "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("a.txt exists: %v", err)
	}
}

// TestCancelDuringCall cancels the context once the Go side has committed
// to calling the library (after its own context check), and waits until the
// cancel token is set: the library sees the token and stops with cancelled.
func TestCancelDuringCall(t *testing.T) {
	ws := openTest(t, Config{Limits: Limits{MaxListEntries: 10}})

	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	hookBefore(t, func(_ string, tokenDone <-chan struct{}) {
		cancel()
		<-tokenDone
	})
	_, err := ws.ListDir(ctx, ListDirInput{})
	e := wantCode(t, err, CodeCancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("errors.Is(%v, context.Canceled) = false", err)
	}
	if strings.Contains(e.Message, "before the call started") {
		t.Fatalf("cancelled in Go, not by the library: %s", e.Message)
	}
}

// TestLibraryTimeout makes the library's own deadline stop a listing of a
// large directory.
func TestLibraryTimeout(t *testing.T) {
	dir := bigRoot(t)
	ws := openTest(t, Config{Root: dir, Limits: Limits{OperationTimeout: time.Millisecond, MaxListEntries: 10}})
	_, err := ws.ListDir(bg, ListDirInput{Path: "big"})
	e := wantCode(t, err, CodeTimeout)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("a workspace timeout must not claim the context's deadline passed")
	}
	if strings.Contains(e.Message, "before the call started") {
		t.Fatalf("timeout produced in Go: %s", e.Message)
	}

	// The same through the per-tool timeout of the agent tools.
	ws2 := openTest(t, Config{Root: dir, Limits: Limits{MaxListEntries: 10}})
	_, _, err = ws2.call(bg, callSpec{tool: ToolListDir, args: `{"path":"big"}`, output: outputText, timeout: time.Millisecond})
	wantCode(t, err, CodeTimeout)
}

// TestLongDeadline: a context deadline far beyond the library's ceilings
// still works (the library caps timeout_ms at OperationTimeout).
func TestLongDeadline(t *testing.T) {
	ws := openTest(t, Config{})
	ctx, cancel := context.WithTimeout(bg, 100*365*24*time.Hour)
	defer cancel()
	if _, err := ws.WriteFile(ctx, WriteFileInput{Path: "a.txt", Content: "x"}); err != nil {
		t.Fatal(err)
	}
}
