package wsfs

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testGatewayKey = "sk-go-gateway-Tq91secret"

// fakeOpenAI is an OpenAI-compatible provider on loopback: it answers
// status with content (echoing the key), and counts the requests that
// carried the key.
func fakeOpenAI(t *testing.T, status int, content string) (string, *atomic.Int32) {
	t.Helper()
	var keyed atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || !strings.Contains(string(body), `"model":"fake-4"`) {
			http.Error(w, "wrong request", http.StatusBadRequest)
			return
		}
		if r.Header.Get("Authorization") == "Bearer "+testGatewayKey {
			keyed.Add(1)
		}
		w.WriteHeader(status)
		text := content + " " + testGatewayKey
		if status != http.StatusOK {
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": text}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"model": "fake-4", "choices": []any{
			map[string]any{"message": map[string]any{"content": text}, "finish_reason": "stop"}}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", &keyed
}

// TestConfiguredModelGateway: a Wasm tool reaches the provider the
// configuration names, with no callback; a callback takes precedence; a
// failing provider is named with its status; the key is in no result.
func TestConfiguredModelGateway(t *testing.T) {
	t.Setenv("WSFS_GO_TEST_KEY", testGatewayKey)
	url, keyed := fakeOpenAI(t, http.StatusOK, "hello")
	gateway := &ModelGatewayConfig{Provider: "openai-compatible", BaseURL: url, Model: "fake-4",
		APIKeyEnv: "WSFS_GO_TEST_KEY", Timeout: 5 * time.Second}
	ws := openTest(t, Config{WasmTools: []string{exampleTools(t) + "/ask_model"}, ModelGateway: gateway})
	ctx := context.Background()
	text, err := ws.CallForModel(ctx, ModelCall{Tool: "ask_model", Args: `{"prompt":"hi"}`})
	if err != nil || !strings.Contains(text, `"text":"hello [redacted]"`) || keyed.Load() != 1 {
		t.Fatalf("ask_model: %q, %v (keyed requests %d)", text, err, keyed.Load())
	}
	if err := ws.SetModelGateway(func(context.Context, string) (string, error) {
		return `{"text":"from the callback"}`, nil
	}); err != nil {
		t.Fatal(err)
	}
	text, err = ws.CallForModel(ctx, ModelCall{Tool: "ask_model", Args: `{"prompt":"hi"}`})
	if err != nil || !strings.Contains(text, "from the callback") || keyed.Load() != 1 {
		t.Fatalf("with a callback: %q, %v", text, err)
	}

	badURL, _ := fakeOpenAI(t, http.StatusInternalServerError, "it broke")
	zero := 0
	failing := *gateway
	failing.BaseURL, failing.MaxRetries = badURL, &zero
	ws = openTest(t, Config{WasmTools: []string{exampleTools(t) + "/ask_model"}, ModelGateway: &failing})
	_, err = ws.CallForModel(ctx, ModelCall{Tool: "ask_model", Args: `{"prompt":"hi"}`})
	wantCode(t, err, CodeGatewayError)
	if msg := err.Error(); !strings.Contains(msg, "openai-compatible") || !strings.Contains(msg, "HTTP 500") || strings.Contains(msg, testGatewayKey) {
		t.Fatalf("error: %s", msg)
	}

	// A bad provider fails Open naming the field.
	_, err = Open(Config{Root: t.TempDir(), ModelGateway: &ModelGatewayConfig{Provider: "gpt", Model: "m"}})
	wantCode(t, err, CodeInvalidArguments)
	if !strings.Contains(err.Error(), "model_gateway.provider") {
		t.Fatalf("error: %v", err)
	}
}

// TestApplyToolEnvModel: the MODEL_* variables make or override the
// configuration's model_gateway; a bad provider or timeout names its
// variable.
func TestApplyToolEnvModel(t *testing.T) {
	base := []byte(`{"root":"/x","model_gateway":{"provider":"ollama","model":"a","max_retries":1}}`)
	out, err := ApplyToolEnv(base, envOf(map[string]string{
		EnvModelProvider: "anthropic", EnvModelBaseURL: "https://api.example.com",
		EnvModelAPIKeyEnv: "ANTHROPIC_API_KEY", EnvModelTimeoutSecs: "2.5", EnvModelName: "claude",
	}))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ModelGateway map[string]any `json:"model_gateway"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"provider": "anthropic", "base_url": "https://api.example.com",
		"api_key_env": "ANTHROPIC_API_KEY", "timeout_ms": 2500.0, "model": "claude", "max_retries": 1.0}
	for k, v := range want {
		if got.ModelGateway[k] != v {
			t.Errorf("%s = %v, want %v (%s)", k, got.ModelGateway[k], v, out)
		}
	}
	out, err = ApplyToolEnv([]byte(`{"root":"/x"}`), envOf(map[string]string{EnvModelName: " "}))
	if err != nil || strings.Contains(string(out), "model_gateway") {
		t.Fatalf("an empty variable is unset: %s, %v", out, err)
	}
	for name, v := range map[string]string{EnvModelProvider: "openai", EnvModelTimeoutSecs: "0"} {
		_, err := ApplyToolEnv([]byte(`{"root":"/x"}`), envOf(map[string]string{name: v}))
		wantCode(t, err, CodeInvalidArguments)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v", name, v, err)
		}
	}
}
