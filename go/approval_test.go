package wsfs

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// commitCount is how many commits dir's repository has.
func commitCount(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", "rev-list", "--count", "HEAD")
	cmd.Dir = dir
	cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir, "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func TestApprovalHandlerDecidesGitCommit(t *testing.T) {
	root := t.TempDir()
	gitRepo(t, root)
	ws := openTest(t, Config{Root: root, Policy: Policy{ExecEnabled: true}})
	ctx := context.Background()
	var mu sync.Mutex
	var seen []ApprovalRequest
	asked := func() []ApprovalRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]ApprovalRequest(nil), seen...)
	}
	err := ws.SetApprovalHandler(func(ctx context.Context, req ApprovalRequest) (bool, string, error) {
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
		switch {
		case strings.HasPrefix(string(req.Arguments), `{"message":"deny"`):
			return false, "the user said no", nil
		case strings.HasPrefix(string(req.Arguments), `{"message":"fail"`):
			return false, "", errors.New("no user at the terminal")
		case strings.HasPrefix(string(req.Arguments), `{"message":"panic"`):
			panic("handler bug")
		case strings.HasPrefix(string(req.Arguments), `{"message":"slow"`):
			<-ctx.Done()
			time.Sleep(50 * time.Millisecond) // past the call's deadline, not at it
			return true, "", nil
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	write := func(s string) { writeFile(t, filepath.Join(root, "a.txt"), s+"\n") }

	// Approved without confirmed: the handler, not the flag, decides.
	write("approved")
	c, err := ws.GitCommit(ctx, GitCommitInput{Message: "approved", Paths: []string{"a.txt"}})
	if err != nil || len(c.CommitHash) < 40 || commitCount(t, root) != "2" {
		t.Fatalf("GitCommit = %+v, %v", c, err)
	}
	if r := asked(); len(r) != 1 || r[0].Tool != ToolGitCommit || !strings.Contains(r[0].Why, "history") {
		t.Fatalf("requests %+v", r)
	}
	for msg, want := range map[string]string{"deny": "the user said no", "fail": "no user at the terminal", "panic": "handler bug"} {
		write(msg)
		_, err = ws.GitCommit(ctx, GitCommitInput{Message: msg, Paths: []string{"a.txt"}, Confirmed: true})
		if e := wantCode(t, err, CodeApprovalDenied); !strings.Contains(e.Message, want) || !errors.Is(err, ErrApprovalDenied) {
			t.Errorf("%s: %v", msg, err)
		}
	}
	// The handler answers only after its context (the call's deadline) ended.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = ws.GitCommit(short, GitCommitInput{Message: "slow", Paths: []string{"a.txt"}, Confirmed: true})
	wantCode(t, err, CodeApprovalDenied)
	if commitCount(t, root) != "2" {
		t.Fatal("a denied call committed")
	}

	// Removed: confirmed is the gate again, and the handler is not asked.
	if err := ws.SetApprovalHandler(nil); err != nil {
		t.Fatal(err)
	}
	before := len(asked())
	_, err = ws.GitCommit(ctx, GitCommitInput{Message: "deny", Paths: []string{"a.txt"}})
	wantCode(t, err, CodeConfirmationRequired)
	if _, err = ws.GitCommit(ctx, GitCommitInput{Message: "deny", Paths: []string{"a.txt"}, Confirmed: true}); err != nil {
		t.Fatal(err)
	}
	if len(asked()) != before {
		t.Fatal("a removed handler was asked")
	}
	ws.Close()
	wantCode(t, ws.SetApprovalHandler(nil), CodeInvalidWorkspace)
}
