package benchmarks

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	wsfs "github.com/wsfs/wsfs/go"
)

// TestSpecialFilesAreNotOpened: wsfs and the Baseline refuse a FIFO as
// not_a_file without opening it, in every file tool: a writer waiting in
// open(2) for the FIFO's first reader is not let in (a non-blocking open
// would count as that reader). The Baseline keeps this part of the contract
// too, so that it costs both sides the same look at the leaf.
func TestSpecialFilesAreNotOpened(t *testing.T) {
	p := newPair(t, wsfs.Limits{})
	for _, side := range []struct {
		name string
		dir  string
		impl typedAPI
	}{{"wsfs", p.wsDir, p.ws}, {"baseline", p.baseDir, p.base}} {
		woken, release := blockedFIFOWriter(t, filepath.Join(side.dir, "fifo"))
		for _, in := range []any{
			wsfs.ReadFileInput{Path: "fifo"},
			wsfs.ReadFileInput{Path: "fifo", StartLine: 1},
			wsfs.WriteFileInput{Path: "fifo", Content: "x"},
			wsfs.AppendFileInput{Path: "fifo", Content: "x"},
			wsfs.EditFileInput{Path: "fifo", OldText: "x", NewText: "y"},
		} {
			if _, err := typedCall(bg, side.impl, in); code(err) != wsfs.CodeNotAFile {
				t.Errorf("%s %+v: %v, want not_a_file", side.name, in, err)
			}
		}
		select {
		case <-woken:
			t.Errorf("%s opened the FIFO: its waiting writer got in", side.name)
		case <-time.After(100 * time.Millisecond):
		}
		release()
	}
}

// blockedFIFOWriter makes a FIFO at path and a writer blocked in open(2) on
// it, waiting for a reader. woken is closed once the writer got in; release
// lets it in (opening the FIFO for reading) and waits for that.
func blockedFIFOWriter(t *testing.T, path string) (woken <-chan struct{}, release func()) {
	t.Helper()
	must(t, syscall.Mkfifo(path, 0o644))
	tids := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // the thread blocks in open; it ends with the goroutine
		tids <- syscall.Gettid()
		if fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CLOEXEC, 0); err == nil {
			syscall.Close(fd)
		}
		close(done)
	}()
	tid := <-tids
	// Blocked in openat: syscall 257 on amd64, 56 on arm64.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		sc, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", tid))
		if s := string(sc); strings.HasPrefix(s, "257 ") || strings.HasPrefix(s, "56 ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the FIFO writer never blocked in open: %q", sc)
		}
	}
	return done, func() {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("opening the FIFO to let its writer in: %v", err)
		}
		<-done
		syscall.Close(fd)
	}
}

// TestOpenFirstOpensSpecialFiles: the open-first variant of the Baseline
// (OpenBaselineOpenFirst, measured for reference only) refuses a FIFO too,
// but only after opening it, which lets a writer waiting for a reader in.
// That is the one system call it saves, and why it is not the baseline; if
// it stopped opening first, its reference row would measure something else.
func TestOpenFirstOpensSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	b, err := OpenBaselineOpenFirst(dir, wsfs.Limits{})
	must(t, err)
	defer b.Close()
	for _, in := range []wsfs.ReadFileInput{{Path: "fifo"}, {Path: "fifo", StartLine: 1}} {
		woken, release := blockedFIFOWriter(t, filepath.Join(dir, "fifo"))
		if _, err := b.ReadFile(bg, in); code(err) != wsfs.CodeNotAFile {
			t.Errorf("open-first %+v: %v, want not_a_file", in, err)
		}
		select {
		case <-woken:
		case <-time.After(5 * time.Second):
			t.Errorf("open-first %+v did not open the FIFO: its waiting writer is still blocked", in)
		}
		release()
		must(t, os.Remove(filepath.Join(dir, "fifo")))
	}
}
