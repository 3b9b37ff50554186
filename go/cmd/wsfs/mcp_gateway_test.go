package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/mcpserver"
)

// TestMCPConfiguredModelGateway: with the MODEL_* variables set, the served
// workspace's model_access tool reaches the provider they name (a fake
// OpenAI-compatible one on loopback) with no callback; a bad provider stops
// the server before it starts, naming the variable.
func TestMCPConfiguredModelGateway(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"model": "fake-4", "choices": []any{
			map[string]any{"message": map[string]any{"content": "served"}, "finish_reason": "stop"}}})
	}))
	defer srv.Close()
	tools, _ := filepath.Abs("../../../tools/ask_model")
	cfg := filepath.Join(t.TempDir(), "wsfs.json")
	if err := os.WriteFile(cfg, []byte(`{"wasm_tools":["`+tools+`"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEL_PROVIDER", "ollama")
	t.Setenv("MODEL_BASE_URL", srv.URL+"/v1")
	t.Setenv("MODEL_NAME", "fake-4")
	var answer string
	serve := func(ctx context.Context, ws *wsfs.Workspace, o mcpserver.Options) error {
		text, err := ws.CallForModel(ctx, wsfs.ModelCall{Tool: "ask_model", Args: `{"prompt":"hi"}`})
		answer = text
		return err
	}
	run := func() (int, string) {
		var errw strings.Builder
		code := runMCP(context.Background(), []string{"--config", cfg, "--root", t.TempDir()}, &errw, serve)
		return code, errw.String()
	}
	if code, msg := run(); code != 0 || !strings.Contains(answer, `"text":"served"`) {
		t.Fatalf("exit %d, answer %q: %s", code, answer, msg)
	}
	t.Setenv("MODEL_PROVIDER", "gpt")
	if code, msg := run(); code == 0 || !strings.Contains(msg, "MODEL_PROVIDER") {
		t.Fatalf("a bad provider: exit %d: %s", code, msg)
	}
}
