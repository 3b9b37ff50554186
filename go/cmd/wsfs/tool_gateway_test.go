package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestToolBuildChecksWAT: build parses a module.wat first; a syntax error
// names module.wat:LINE:COLUMN, fails, and leaves the manifest as it was.
func TestToolBuildChecksWAT(t *testing.T) {
	dir := t.TempDir()
	if code, _, msg := cli(t, "tool", "new", "broken", "--dir", dir); code != 0 {
		t.Fatalf("new: %d %s", code, msg)
	}
	folder := filepath.Join(dir, "broken")
	manifest, _ := os.ReadFile(filepath.Join(folder, "manifest.json"))
	wat := "(module\n  (func $f\n    (i32.bogus)))\n"
	if err := os.WriteFile(filepath.Join(folder, "module.wat"), []byte(wat), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, msg := cli(t, "tool", "build", folder)
	if code != 1 || !strings.Contains(msg, "module.wat:3:6") || !strings.Contains(msg, "nothing was written") {
		t.Fatalf("build of broken WAT: %d %s", code, msg)
	}
	if after, _ := os.ReadFile(filepath.Join(folder, "manifest.json")); string(after) != string(manifest) {
		t.Fatalf("the manifest changed:\n%s", after)
	}
	// Valid text builds (the template, whose imports the check's manifest allows).
	if code, _, msg := cli(t, "tool", "new", "fine", "--dir", dir); code != 0 {
		t.Fatalf("new: %d %s", code, msg)
	}
	if code, _, msg := cli(t, "tool", "build", filepath.Join(dir, "fine")); code != 0 {
		t.Fatalf("build of valid WAT: %d %s", code, msg)
	}
}

// TestToolRunUsesTheConfiguredGateway: with the MODEL_* variables set, tool
// run of a model_access tool reaches the provider they name (a fake
// OpenAI-compatible one on loopback), with no callback anywhere.
func TestToolRunUsesTheConfiguredGateway(t *testing.T) {
	const key = "sk-cli-gateway-Wd55secret"
	var keyed atomic.Int32 // the server's goroutines count, the test reads
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+key {
			keyed.Add(1)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"model": "fake-4", "choices": []any{
			map[string]any{"message": map[string]any{"content": "hi from " + r.URL.Path}, "finish_reason": "stop"}}})
	}))
	defer srv.Close()
	t.Setenv("WSFS_CLI_TEST_KEY", key)
	t.Setenv("MODEL_PROVIDER", "openai-compatible")
	t.Setenv("MODEL_BASE_URL", srv.URL+"/v1")
	t.Setenv("MODEL_API_KEY_ENV", "WSFS_CLI_TEST_KEY")
	t.Setenv("MODEL_NAME", "fake-4")
	t.Setenv("MODEL_TIMEOUT_SECS", "5")
	examples, _ := filepath.Abs("../../../tools")
	code, out, msg := cli(t, "tool", "run", filepath.Join(examples, "ask_model"), `{"prompt":"hi"}`)
	if code != 0 || !strings.Contains(out, `"text":"hi from /v1/chat/completions"`) || keyed.Load() != 1 {
		t.Fatalf("run: %d %s %s (keyed %d)", code, out, msg, keyed.Load())
	}
	if strings.Contains(out+msg, key) {
		t.Fatalf("the key is in the output: %s %s", out, msg)
	}
	t.Setenv("MODEL_PROVIDER", "gpt")
	if code, _, msg := cli(t, "tool", "run", filepath.Join(examples, "ask_model"), `{"prompt":"hi"}`); code != 2 || !strings.Contains(msg, "MODEL_PROVIDER") {
		t.Fatalf("a bad provider: %d %s", code, msg)
	}
}
