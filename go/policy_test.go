package wsfs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestReadOnlyWorkspaceRefusesEveryChangingTool(t *testing.T) {
	ws := openTest(t, Config{Policy: Policy{WritesEnabled: Bool(false)}})
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "hello\n")
	specs, err := ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	withExec := openTest(t, Config{Policy: Policy{WritesEnabled: Bool(false), ExecEnabled: true, ShellEnabled: true}})
	var refused int
	for _, spec := range specs {
		args := `{"path":"a.txt","content":"x","old_text":"hello","new_text":"bye"}`
		_, err := ws.CallRaw(bg, spec.Name, args)
		if !spec.ReadOnly() && withExec.ToolEnabled(spec.Name) {
			// A program tool: it runs on a read-only view, once exec is on.
			wantCode(t, err, CodeExecDisabled)
			continue
		}
		if spec.ReadOnly() {
			if errorCode(err) == CodeWritesDisabled {
				t.Errorf("%s is read-only but was refused", spec.Name)
			}
			continue
		}
		refused++
		wantCode(t, err, CodeWritesDisabled)
	}
	if refused < 4 {
		t.Fatalf("only %d changing tools", refused)
	}
	_, err = ws.WriteFile(bg, WriteFileInput{Path: "a.txt", Content: "x", Mode: WriteCreate})
	wantCode(t, err, CodeWritesDisabled)
	_, err = ws.CreateDirectory(bg, CreateDirectoryInput{Path: "d"})
	wantCode(t, err, CodeWritesDisabled)
	if got := readFile(t, filepath.Join(ws.Root(), "a.txt")); got != "hello\n" {
		t.Fatalf("a.txt = %q", got)
	}
	if r, err := ws.ReadFile(bg, ReadFileInput{Path: "a.txt"}); err != nil || r.Content != "hello\n" {
		t.Fatalf("read: %+v, %v", r, err)
	}
	if p := ws.Policy(); *p.WritesEnabled {
		t.Fatalf("policy %+v", p)
	}
}

func TestDenyRulesAreCheckedOnTheResolvedPath(t *testing.T) {
	ws := openTest(t, Config{Policy: Policy{DenyRead: []string{".env", "secrets/"}}})
	root := ws.Root()
	writeFile(t, filepath.Join(root, ".env"), "TOKEN=1\n")
	writeFile(t, filepath.Join(root, "secrets", "k.txt"), "k")
	writeFile(t, filepath.Join(root, "ok.txt"), "ok")
	if err := os.Symlink(".env", filepath.Join(root, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".env", "sub/../.env", "innocent.txt", "secrets/k.txt", filepath.Join(root, ".env")} {
		if p == "sub/../.env" {
			_ = os.Mkdir(filepath.Join(root, "sub"), 0o755)
		}
		_, err := ws.ReadFile(bg, ReadFileInput{Path: p})
		e := wantCode(t, err, CodePolicyDenied)
		if !strings.Contains(e.Message, "deny_read rule") {
			t.Errorf("%s: %s", p, e.Message)
		}
	}
	l, err := ws.ListDir(bg, ListDirInput{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range l.Entries {
		names = append(names, e.Name)
	}
	// innocent.txt is a symlink: listed (as a link), unreadable.
	if !slices.Equal(names, []string{"innocent.txt", "ok.txt", "sub"}) || l.Denied != 2 || l.Total != 3 {
		t.Fatalf("listing %v, denied %d, total %d", names, l.Denied, l.Total)
	}
	// The default deny_write rule.
	_, err = ws.WriteFile(bg, WriteFileInput{Path: ".git/config", Content: "x"})
	wantCode(t, err, CodePolicyDenied)
	p := ws.Policy()
	if !*p.WritesEnabled || !slices.Equal(p.DenyWrite, []string{".git/**"}) || !slices.Equal(p.DenyRead, []string{".env", "secrets/"}) || p.AuditLog != "" {
		t.Fatalf("policy %+v", p)
	}
	// An empty, non-nil DenyWrite means no rules at all.
	open := openTest(t, Config{Policy: Policy{DenyWrite: []string{}}})
	if _, err := open.WriteFile(bg, WriteFileInput{Path: ".git/config", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if p := open.Policy(); p.DenyWrite == nil || len(p.DenyWrite) != 0 {
		t.Fatalf("policy %+v", p)
	}
}

func TestInvalidPoliciesAreRefusedAtOpen(t *testing.T) {
	for _, p := range []Policy{
		{DenyRead: []string{"{a,b"}},
		{DenyWrite: []string{""}},
		{DenyRead: []string{"bad\xff"}},
		{AuditLog: "x\x00y"},
	} {
		_, err := Open(Config{Root: t.TempDir(), Policy: p})
		wantCode(t, err, CodeInvalidArguments)
	}
}

func TestAuditLogRecordsCallsAndHashes(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	ws := openTest(t, Config{Policy: Policy{AuditLog: log, DenyRead: []string{".env"}}})
	if got := ws.Policy().AuditLog; got != log {
		t.Fatalf("AuditLog %q, want %q", got, log)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				if _, err := ws.WriteFile(bg, WriteFileInput{Path: filepath.Join("d", string(rune('a'+i)), "f.txt"), Content: strings.Repeat("x", j)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	_, err := ws.ReadFile(bg, ReadFileInput{Path: ".env"})
	wantCode(t, err, CodePolicyDenied)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 8*20+1 {
		t.Fatalf("%d lines", len(lines))
	}
	type change struct {
		Path   string  `json:"path"`
		Before *string `json:"sha256_before"`
		After  *string `json:"sha256_after"`
	}
	var line struct {
		Tool    string   `json:"tool"`
		Outcome string   `json:"outcome"`
		Paths   []string `json:"paths"`
		Changes []change `json:"changes"`
	}
	for _, l := range lines {
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	if line.Tool != ToolReadFile || line.Outcome != string(CodePolicyDenied) || len(line.Changes) != 0 {
		t.Fatalf("last line %+v", line)
	}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	for _, l := range lines[:len(lines)-1] {
		line.Changes = nil
		_ = json.Unmarshal([]byte(l), &line)
		last := line.Changes[len(line.Changes)-1]
		if last.After == nil || (last.Before != nil && *last.Before == *last.After && *last.Before != sum("")) {
			t.Fatalf("change %+v", last)
		}
	}
}

func TestWriteFileModes(t *testing.T) {
	ws := openTest(t, Config{})
	before := slowDecodes.Load()
	r, err := ws.WriteFile(bg, WriteFileInput{Path: "n.txt", Content: "one", Mode: WriteCreate})
	if err != nil || !r.Created || r.ExistedBefore || r.BytesWritten != 3 || r.Mode != WriteCreate {
		t.Fatalf("create: %+v, %v", r, err)
	}
	_, err = ws.WriteFile(bg, WriteFileInput{Path: "n.txt", Content: "two", Mode: WriteCreate})
	wantCode(t, err, CodeFileExists)
	r, err = ws.WriteFile(bg, WriteFileInput{Path: "n.txt", Content: "+", Mode: WriteAppend})
	if err != nil || r.Created || !r.ExistedBefore || r.Text != "appended 1 byte to n.txt" {
		t.Fatalf("append: %+v, %v", r, err)
	}
	r, err = ws.WriteFile(bg, WriteFileInput{Path: "n.txt", Content: "three"})
	if err != nil || r.Created || !r.ExistedBefore {
		t.Fatalf("overwrite: %+v, %v", r, err)
	}
	if n := slowDecodes.Load() - before; n != 0 {
		t.Fatalf("%d results needed encoding/json", n)
	}
	if got := readFile(t, filepath.Join(ws.Root(), "n.txt")); got != "three" {
		t.Fatalf("n.txt = %q", got)
	}
	_, err = ws.WriteFile(bg, WriteFileInput{Path: "m.txt", Content: "x", Mode: "replace"})
	wantCode(t, err, CodeInvalidArguments)
	// Many goroutines creating one name: exactly one wins.
	var wg sync.WaitGroup
	results := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ws.WriteFile(bg, WriteFileInput{Path: "race.txt", Content: strings.Repeat(string(rune('a'+i)), 4096), Mode: WriteCreate})
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	var wins int
	for err := range results {
		if err == nil {
			wins++
		} else {
			wantCode(t, err, CodeFileExists)
		}
	}
	if wins != 1 {
		t.Fatalf("%d winners", wins)
	}
}

func TestCreateDirectory(t *testing.T) {
	ws := openTest(t, Config{})
	r, err := ws.CreateDirectory(bg, CreateDirectoryInput{Path: "a/b/c"})
	if err != nil || !r.Created || r.ParentsCreated != 2 || r.Path != "a/b/c" || r.Text != "created directory a/b/c (and 2 parent directories)" {
		t.Fatalf("%+v, %v", r, err)
	}
	r, err = ws.CreateDirectory(bg, CreateDirectoryInput{Path: "a/b/c"})
	if err != nil || r.Created || r.ParentsCreated != 0 {
		t.Fatalf("again: %+v, %v", r, err)
	}
	_, err = ws.CreateDirectory(bg, CreateDirectoryInput{Path: "x/y", Parents: Bool(false)})
	wantCode(t, err, CodePathNotFound)
	writeFile(t, filepath.Join(ws.Root(), "f"), "")
	_, err = ws.CreateDirectory(bg, CreateDirectoryInput{Path: "f"})
	wantCode(t, err, CodeNotADirectory)
	_, err = ws.CreateDirectory(bg, CreateDirectoryInput{Path: "../out"})
	wantCode(t, err, CodeOutsideWorkspace)
}

// Issue 18 gap 6: the typed Policy carries allow_tools, deny_tools and
// audit_arguments to the library and back.
func TestPolicyToolListsAreOfferedAndEnforced(t *testing.T) {
	ws := openTest(t, Config{Policy: Policy{DenyTools: []string{ToolDeleteFile}}})
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "a")
	specs, err := ws.ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == ToolDeleteFile {
			t.Fatalf("denied tool offered: %v", specs)
		}
	}
	_, err = ws.DeleteFile(bg, DeleteFileInput{Path: "a.txt"})
	wantCode(t, err, CodePolicyDenied)
	if got := ws.Policy(); !slices.Equal(got.DenyTools, []string{ToolDeleteFile}) || got.AllowTools != nil {
		t.Fatalf("policy %+v", got)
	}

	only := openTest(t, Config{Policy: Policy{AllowTools: []string{ToolReadFile, ToolListDir}}})
	specs, err = only.ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{ToolReadFile, ToolListDir}) {
		t.Fatalf("offered %v", names)
	}
	_, err = only.WriteFile(bg, WriteFileInput{Path: "b.txt", Content: "b"})
	wantCode(t, err, CodePolicyDenied)
	if got := only.Policy(); !slices.Equal(got.AllowTools, []string{ToolReadFile, ToolListDir}) {
		t.Fatalf("policy %+v", got)
	}
	none := openTest(t, Config{Policy: Policy{AllowTools: []string{}}})
	if specs, err := none.ToolSpecs(); err != nil || len(specs) != 0 {
		t.Fatalf("an empty AllowTools offers %v (%v)", specs, err)
	}
}

func TestPolicyAuditArgumentsRecordsNoContent(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	ws := openTest(t, Config{Policy: Policy{AuditLog: log, AuditArguments: true}})
	if !ws.Policy().AuditArguments {
		t.Fatalf("policy %+v", ws.Policy())
	}
	const secret = "SECRET-go-4711"
	if _, err := ws.WriteFile(bg, WriteFileInput{Path: "a.txt", Content: secret}); err != nil {
		t.Fatal(err)
	}
	text := readFile(t, log)
	if strings.Contains(text, secret) {
		t.Fatalf("content in the log: %s", text)
	}
	var line struct {
		Arguments struct {
			Path    string `json:"path"`
			Content struct {
				Length int    `json:"length"`
				SHA256 string `json:"sha256"`
			} `json:"content"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &line); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(secret))
	if line.Arguments.Path != "a.txt" || line.Arguments.Content.Length != len(secret) || line.Arguments.Content.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("line %s", text)
	}
	_, err := Open(Config{Root: t.TempDir(), Policy: Policy{AuditArguments: true}})
	wantCode(t, err, CodeInvalidArguments)
}
