package fantasytools

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

// echoModel answers each prompt with "you said: <prompt>", or fails or
// stalls when told to.
type echoModel struct{ calls int }

func (*echoModel) Provider() string { return "test" }
func (*echoModel) Model() string    { return "echo-1" }
func (*echoModel) GenerateObject(context.Context, fantasy.ObjectCall) (*fantasy.ObjectResponse, error) {
	return nil, errors.New("unsupported")
}
func (*echoModel) StreamObject(context.Context, fantasy.ObjectCall) (fantasy.ObjectStreamResponse, error) {
	return nil, errors.New("unsupported")
}
func (*echoModel) Stream(context.Context, fantasy.Call) (fantasy.StreamResponse, error) {
	return nil, errors.New("unsupported")
}
func (m *echoModel) Generate(ctx context.Context, call fantasy.Call) (*fantasy.Response, error) {
	m.calls++
	last := call.Prompt[len(call.Prompt)-1]
	text := last.Content[0].(fantasy.TextPart).Text
	switch text {
	case "fail":
		return nil, errors.New("rate limited")
	case "stall":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &fantasy.Response{Content: fantasy.ResponseContent{fantasy.TextContent{Text: "you said: " + text}},
		FinishReason: fantasy.FinishReasonStop}, nil
}

// TestModelGatewayServesWasmTools: the example tool ask_model reaches a
// fantasy LanguageModel through the workspace's gateway, and the gateway's
// failures reach it as codes.
func TestModelGatewayServesWasmTools(t *testing.T) {
	dir, _ := filepath.Abs("../../tools/ask_model")
	ws := openTest(t, wsfs.Config{WasmTools: []string{dir},
		Limits: wsfs.Limits{OperationTimeout: 500 * time.Millisecond}})
	model := &echoModel{}
	ask := func(prompt string) (string, error) {
		return ws.CallForModel(bg, wsfs.ModelCall{Tool: "ask_model", Args: `{"prompt":"` + prompt + `"}`})
	}
	_, err := ask("hi")
	var e *wsfs.Error
	if !errors.As(err, &e) || e.Code != wsfs.CodeGatewayError {
		t.Fatalf("no gateway: %v", err)
	}
	if err := ws.SetModelGateway(ModelGateway(model)); err != nil {
		t.Fatal(err)
	}
	text, err := ask("hi")
	if err != nil || !strings.Contains(text, `"text":"you said: hi"`) || !strings.Contains(text, `"model":"echo-1"`) {
		t.Fatalf("answer: %q, %v", text, err)
	}
	_, err = ask("fail")
	if !errors.As(err, &e) || e.Code != wsfs.CodeGatewayError || !strings.Contains(e.Message, "rate limited") {
		t.Fatalf("fail: %v", err)
	}
	_, err = ask("stall")
	if !errors.As(err, &e) || e.Code != wsfs.CodeTimeout {
		t.Fatalf("stall: %v", err)
	}
	if err := ws.SetModelGateway(nil); err != nil {
		t.Fatal(err)
	}
	calls := model.calls
	if _, err := ask("hi"); !errors.As(err, &e) || e.Code != wsfs.CodeGatewayError || model.calls != calls {
		t.Fatalf("removed: %v (%d calls)", err, model.calls)
	}
}

// TestModelGatewayRefusesMalformedRequests: the request's shape is checked
// strictly before the model is called.
func TestModelGatewayRefusesMalformedRequests(t *testing.T) {
	model := &echoModel{}
	g := ModelGateway(model)
	for _, req := range []string{`{}`, `{"prompt":""}`, `{"prompt":"x","temperature":1}`, `[]`} {
		if _, err := g(bg, req); !errors.Is(err, wsfs.ErrGatewayRequest) {
			t.Errorf("%s: %v", req, err)
		}
	}
	out, err := g(bg, `{"prompt":"x","system":"be brief","max_output_tokens":5}`)
	if err != nil || !strings.Contains(out, "you said: x") || model.calls != 1 {
		t.Fatalf("%q, %v", out, err)
	}
}
