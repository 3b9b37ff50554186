package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wsfs/wsfs/go/scripted"
)

// TestAgentDefaultsModelGateway: MiniClaw's config names the model the
// Wasm tools ask (agents.defaults.wsfs.model_gateway) without code; the
// Runner's ask_model reaches a loopback OpenAI-compatible provider, the key
// comes from the variable api_key_env names, and the object's keys and
// limits are checked.
func TestAgentDefaultsModelGateway(t *testing.T) {
	const key = "sk-agent-test-key"
	t.Setenv("WSFS_AGENT_TEST_KEY", key)
	var keyed atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || !strings.Contains(string(body), `"model":"tiny"`) {
			http.Error(w, "wrong request", http.StatusBadRequest)
			return
		}
		if r.Header.Get("Authorization") == "Bearer "+key {
			keyed.Add(1)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"model": "tiny", "choices": []any{
			map[string]any{"message": map[string]any{"content": "forty-two"}, "finish_reason": "stop"}}})
	}))
	defer srv.Close()

	gateway := `"model_gateway":{"provider":"openai-compatible","base_url":` + strconvQuote(srv.URL+"/v1") +
		`,"model":"tiny","api_key_env":"WSFS_AGENT_TEST_KEY","timeout_ms":5000,"max_retries":0}`
	config := func(gateway string) string {
		return `{"agents":{"defaults":{"workspace":` + strconvQuote(t.TempDir()) + `,"tools":["ask_model"],"wsfs":{"wasm_tools":[` +
			strconvQuote(exampleTools(t)+"/ask_model") + `],` + gateway + `}}}}`
	}
	d, err := ParseAgentDefaults([]byte(config(gateway)))
	if err != nil {
		t.Fatal(err)
	}
	g := d.RunnerConfig(nil).ModelGateway
	if g == nil || g.Provider != "openai-compatible" || g.Model != "tiny" || g.Timeout.Milliseconds() != 5000 || g.MaxRetries == nil || *g.MaxRetries != 0 {
		t.Fatalf("model_gateway decoded as %+v", g)
	}
	model := scripted.New(scripted.Use(scripted.Call("ask_model", `{"prompt":"the answer?"}`)), scripted.Say("done"))
	r, err := NewRunner(d.RunnerConfig(model))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reply, err := r.Run(bg, "s", "ask")
	if err != nil {
		t.Fatal(err)
	}
	res := toolResults(reply.Messages)
	if len(res) != 1 || !strings.Contains(res[0], "forty-two") || strings.Contains(res[0], key) || keyed.Load() != 1 {
		t.Fatalf("ask_model's result: %v (keyed requests %d)", res, keyed.Load())
	}

	// The library checks the values at open: a bad provider names its key.
	d, err = ParseAgentDefaults([]byte(config(`"model_gateway":{"provider":"gpt","model":"m"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRunner(d.RunnerConfig(scripted.New(scripted.Say("hi")))); err == nil || !strings.Contains(err.Error(), "model_gateway.provider") {
		t.Fatalf("a bad provider: %v", err)
	}
	for bad, want := range map[string]string{
		`"model_gateway":{"provider":"ollama","model":"m","key":"x"}`: `unknown key "key"`,
		`"model_gateway":{"provider":"ollama","timeout_ms":0}`:        "timeout_ms is 0",
	} {
		if _, err := ParseAgentDefaults([]byte(config(bad))); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want %q", bad, err, want)
		}
	}
}
