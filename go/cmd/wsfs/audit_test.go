package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wsfs "github.com/wsfs/wsfs/go"
)

// auditedRun makes a workspace with a.txt and b.txt, a copy of it as it was
// then, and a log of calls on the original (with arguments when withArgs).
func auditedRun(t *testing.T, withArgs bool) (copyDir, log string) {
	t.Helper()
	orig, copyDir := t.TempDir(), t.TempDir()
	for _, dir := range []string{orig, copyDir} {
		writeTestFile(t, filepath.Join(dir, "a.txt"), "one\n")
		writeTestFile(t, filepath.Join(dir, "b.txt"), "two\n")
	}
	log = filepath.Join(t.TempDir(), "audit.jsonl")
	ws, err := wsfs.Open(wsfs.Config{Root: orig, Policy: wsfs.Policy{AuditLog: log, AuditArguments: withArgs}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ctx := context.Background()
	for _, call := range [][2]string{
		{"read_file", `{"path":"a.txt"}`},
		{"read_file", `{"path":"missing.txt"}`},
		{"write_file", `{"path":"c.txt","content":"three\n"}`},
		{"create_directory", `{"path":"d/e"}`},
		{"delete_file", `{"path":"b.txt"}`},
		{"delete_file", `{"path":"b.txt"}`},
	} {
		if _, err := ws.CallRaw(ctx, call[0], call[1]); err != nil && !strings.Contains(call[1], "b.txt") && !strings.Contains(call[1], "missing") {
			t.Fatalf("%v: %v", call, err)
		}
	}
	return copyDir, log
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAuditReplayMatchesOnACopy(t *testing.T) {
	copyDir, log := auditedRun(t, true)
	before, _ := os.ReadFile(log)
	config := filepath.Join(t.TempDir(), "config.json")
	// The config's own audit log is the one replayed: replay must not append to it.
	writeTestFile(t, config, `{"policy": {"audit_log": "`+log+`", "audit_arguments": true}}`)
	code, out, stderr := runCLI(t, "", "audit", "replay", log, "--root", copyDir, "--config", config)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		"line 1 read_file: match (ok)",
		"line 2 read_file: match (path_not_found)",
		"line 3 write_file: not replayable: the log keeps its content only as {length, sha256}",
		"line 4 create_directory: match (ok)",
		"line 5 delete_file: match (ok)",
		"line 6 delete_file: match (path_not_found)",
		"replayed 5 calls: 5 match, 0 differ; 1 line not replayable",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(copyDir, "d", "e")); err != nil {
		t.Error("the replay did not run on the copy:", err)
	}
	if after, _ := os.ReadFile(log); string(after) != string(before) {
		t.Error("the replay appended to the log it read")
	}
}

func TestAuditReplayReportsDifferences(t *testing.T) {
	copyDir, log := auditedRun(t, true)
	if err := os.Remove(filepath.Join(copyDir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "", "audit", "replay", "-v", log, "--root", copyDir)
	if code != 1 || !strings.Contains(out, "line 1 read_file: DIFFERS: the log says ok, the replay path_not_found\n") ||
		!strings.Contains(out, "replayed 5 calls: 4 match, 1 differ; 1 line not replayable\n") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestAuditReplayNeedsArguments(t *testing.T) {
	copyDir, log := auditedRun(t, false)
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not json\n")
	f.Close()
	code, out, _ := runCLI(t, "", "audit", "replay", log, "--root", copyDir)
	if code != 0 || strings.Count(out, "not replayable: the log has no arguments (the workspace's policy had audit_arguments off)") != 6 ||
		!strings.Contains(out, "line 7: not replayable: not an audit log line\n") ||
		!strings.Contains(out, "replayed 0 calls: 0 match, 0 differ; 7 lines not replayable\n") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestAuditUsageErrors(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	writeTestFile(t, log, "")
	for _, args := range [][]string{
		{"audit"},
		{"audit", "rerun", log},
		{"audit", "replay", "--root", dir}, // no LOG
		{"audit", "replay", log},           // no --root
		{"audit", "replay", filepath.Join(dir, "no"), "--root", dir}, // unreadable LOG
		{"audit", "replay", log, log, "--root", dir},
		{"audit", "replay", log, "--root", filepath.Join(dir, "missing")},
		{"audit", "replay", log, "--root", dir, "--bogus"},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if code, stderr, _ := runCLI(t, "", "audit", "-h"); code != 0 || !strings.Contains(stderr, "audit_arguments") {
		t.Errorf("help: exit %d, %q", code, stderr)
	}
}

func TestAuditReplayOfCLIRuns(t *testing.T) {
	orig, copyDir := t.TempDir(), t.TempDir()
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	if code, out, _ := runCLI(t, "", "-workspace", orig, "-audit-log", log, "-audit-arguments", "create_directory", `{"path":"x/y"}`); code != 0 {
		t.Fatalf("exit %d, %s", code, out)
	}
	code, out, _ := runCLI(t, "", "audit", "replay", log, "--root", copyDir)
	if code != 0 || out != "line 1 create_directory: match (ok)\nreplayed 1 call: 1 match, 0 differ; 0 lines not replayable\n" {
		t.Fatalf("exit %d\n%s", code, out)
	}
}
