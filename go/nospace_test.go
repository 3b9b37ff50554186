package wsfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const fileSizeChildEnv = "WSFS_FILE_SIZE_CHILD"

// TestNoSpaceUnderFileSizeLimit: a write that would pass the process's
// RLIMIT_FSIZE is refused with CodeNoSpace before anything is written, and
// the workspace is unchanged. It runs in a child process (this test binary
// again), because the limit applies to the whole process.
func TestNoSpaceUnderFileSizeLimit(t *testing.T) {
	if dir := os.Getenv(fileSizeChildEnv); dir != "" {
		fileSizeLimitChild(t, dir)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoSpaceUnderFileSizeLimit$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fileSizeChildEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "refused with no_space") {
		t.Fatalf("the child did not reach the check:\n%s", out)
	}
}

func fileSizeLimitChild(t *testing.T, dir string) {
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	limit.Cur = 64 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	ws := openTest(t, Config{Root: dir})
	_, err := ws.WriteFile(bg, WriteFileInput{Path: "big.txt", Content: strings.Repeat("x", 100<<10)})
	e := wantCode(t, err, CodeNoSpace)
	if !strings.Contains(e.Message, "Retrying will not help") {
		t.Errorf("message %q does not say that retrying will not help", e.Message)
	}
	if _, err := os.Stat(filepath.Join(dir, "big.txt")); !os.IsNotExist(err) {
		t.Errorf("big.txt exists after a refused write: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Errorf("the workspace is not empty: %v %v", entries, err)
	}
	t.Log("refused with no_space")
}
