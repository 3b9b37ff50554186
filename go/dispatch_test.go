package wsfs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDispatchRunsEveryFormOfAToolCall: Dispatch takes the wrapped, bare
// and name-only calls, with arguments as an object or its JSON text, and
// runs built-in and Wasm tools by name as CallRaw does.
func TestDispatchRunsEveryFormOfAToolCall(t *testing.T) {
	ctx := context.Background()
	ws := openTest(t, Config{WasmTools: []string{filepath.Join(exampleTools(t), "echo")}})
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "hi\n")
	for _, call := range []string{
		`{"tool_call":{"name":"read_file","arguments":{"path":"a.txt"}}}`,
		`{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}`,
	} {
		env, err := ws.Dispatch(ctx, call)
		if err != nil || !strings.Contains(env, `"content":"hi\n"`) {
			t.Fatalf("%s: %s, %v", call, env, err)
		}
	}
	env, err := ws.Dispatch(ctx, `{"tool_call":{"name":"list_dir"}}`)
	if err != nil || !strings.Contains(env, `"name":"a.txt"`) {
		t.Fatalf("name-only list_dir: %s, %v", env, err)
	}
	env, err = ws.Dispatch(ctx, `{"tool_call":{"name":"echo","arguments":"{\"message\":\"m\"}"}}`)
	if err != nil || !strings.Contains(env, `"data":{"received":{"message":"m"}}`) {
		t.Fatalf("echo: %s, %v", env, err)
	}
	_, err = ws.Dispatch(ctx, `{"tool_call":{"name":"echo"}}`)
	wantCode(t, err, CodeInvalidArguments) // echo's schema needs message
	_, err = ws.Dispatch(ctx, `{"name":"write_file","arguments":{"path":"b.txt","content":"b"}}`)
	if err != nil || readFile(t, filepath.Join(ws.Root(), "b.txt")) != "b" {
		t.Fatalf("write_file: %v", err)
	}
}

// TestDispatchRefusesMalformedCalls: what is wrong is named, nothing runs,
// and a context already done stops the call before the library sees it.
func TestDispatchRefusesMalformedCalls(t *testing.T) {
	ctx := context.Background()
	ws := openTest(t, Config{})
	for call, want := range map[string]string{
		`{"arguments":{"path":"x","content":"x"}}`:                                   "name is missing",
		`{"name":"write_file","arguments":[1]}`:                                      "arguments must be an object",
		`{"name":"write_file","arguments":{"path":"x","content":"x"},"id":"c1"}`:     "unknown field `id`",
		`{"tool_call":{"name":"write_file"},"arguments":{"path":"x","content":"x"}}`: "both forms at once",
		"write_file": "must be a JSON object",
	} {
		env, err := ws.Dispatch(ctx, call)
		e := wantCode(t, err, CodeInvalidArguments)
		if !strings.Contains(e.Message, want) || !strings.Contains(env, `"ok":false`) {
			t.Fatalf("%s: %s (%s)", call, e.Message, env)
		}
	}
	_, err := ws.Dispatch(ctx, "{\"name\":\"list_dir\x00\"}")
	wantCode(t, err, CodeInvalidArguments)
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = ws.Dispatch(done, `{"name":"write_file","arguments":{"path":"x","content":"x"}}`)
	wantCode(t, err, CodeCancelled)
	expired, stop := context.WithTimeout(ctx, -time.Second)
	defer stop()
	_, err = ws.Dispatch(expired, `{"name":"list_dir"}`)
	wantCode(t, err, CodeTimeout)
	if _, err := os.Stat(filepath.Join(ws.Root(), "x")); err == nil {
		t.Fatal("a refused call wrote x")
	}
}

// TestDispatchOnAProfileUsesItsNamesAndEnvelope: a capability-plan
// workspace dispatches file_read and answers in its ToolResult envelope.
func TestDispatchOnAProfileUsesItsNamesAndEnvelope(t *testing.T) {
	ws := openTest(t, Config{Profile: "capability-plan"})
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "hello")
	env, err := ws.Dispatch(context.Background(), `{"tool_call":{"name":"file_read","arguments":{"path":"a.txt"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		OK        bool            `json:"ok"`
		ErrorCode *string         `json:"error_code"`
		Data      json.RawMessage `json:"data"`
	}
	if json.Unmarshal([]byte(env), &r) != nil || !r.OK || r.ErrorCode != nil || !strings.Contains(string(r.Data), `"content":"hello"`) {
		t.Fatalf("file_read: %s", env)
	}
	direct, _ := ws.CallRaw(context.Background(), "file_read", `{"path":"a.txt"}`)
	if env != direct {
		t.Fatalf("dispatch %s\ncall raw %s", env, direct)
	}
}
