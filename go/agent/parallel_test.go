package agent

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/scripted"
)

// readBarrier is a call hook that holds each read_file call until two are
// waiting in it at once, or until wait passes. overlapped reports whether
// two ever were.
type readBarrier struct {
	wait time.Duration

	mu         sync.Mutex
	waiting    int
	both       chan struct{}
	overlapped bool
}

func (b *readBarrier) hook(tool string, _ <-chan struct{}) {
	if tool != wsfs.ToolReadFile {
		return
	}
	b.mu.Lock()
	b.waiting++
	if b.waiting == 2 && !b.overlapped {
		b.overlapped = true
		close(b.both)
	}
	b.mu.Unlock()
	select {
	case <-b.both:
	case <-time.After(b.wait):
	}
	b.mu.Lock()
	b.waiting--
	b.mu.Unlock()
}

// runParallelStep runs one model step that calls two reads, a write and a
// listing, and returns the tool results (in call order) and whether the
// two reads were in the library at the same time.
func runParallelStep(t *testing.T, parallel bool, wait time.Duration) ([]string, bool) {
	c := scripted.Call
	model := scripted.New(
		scripted.Use(
			c(wsfs.ToolReadFile, `{"path":"a.txt"}`),
			c(wsfs.ToolReadFile, `{"path":"b.txt"}`),
			c(wsfs.ToolWriteFile, `{"path":"c.txt","content":"written"}`),
			c(wsfs.ToolListDir, `{}`),
		),
		scripted.Say("done"),
	)
	r := newTestRunner(t, model, func(cfg *RunnerConfig) { cfg.ParallelReadOnlyTools = parallel })
	writeFile(t, filepath.Join(r.Workspace().Root(), "a.txt"), "alpha")
	writeFile(t, filepath.Join(r.Workspace().Root(), "b.txt"), "beta")
	b := &readBarrier{wait: wait, both: make(chan struct{})}
	hookBefore(t, b.hook)
	reply, err := r.Run(bg, "s", "read both")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "done" {
		t.Fatalf("reply %+v", reply)
	}
	if got := readFile(t, filepath.Join(r.Workspace().Root(), "c.txt")); got != "written" {
		t.Fatalf("c.txt = %q", got)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return toolResults(reply.Messages), b.overlapped
}

// TestParallelReadOnlyToolsRun: with ParallelReadOnlyTools two reads of one
// step are in the library at the same time; results still come back in
// call order. Without it they never overlap. (Run with -race.)
func TestParallelReadOnlyToolsRun(t *testing.T) {
	t.Run("parallel", func(t *testing.T) {
		results, overlapped := runParallelStep(t, true, 10*time.Second)
		if !overlapped {
			t.Fatal("the two read_file calls never ran at the same time")
		}
		if len(results) != 4 || results[0] != "ok: alpha" || results[1] != "ok: beta" ||
			results[2] != "ok: created c.txt (7 bytes)" || !strings.HasPrefix(results[3], "ok: . (") {
			t.Fatalf("results %q", results)
		}
	})
	t.Run("sequential", func(t *testing.T) {
		if _, overlapped := runParallelStep(t, false, 300*time.Millisecond); overlapped {
			t.Fatal("sequential read_file calls overlapped")
		}
	})
}
