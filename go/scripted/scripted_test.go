package scripted

import (
	"context"
	"errors"
	"testing"

	"charm.land/fantasy"
)

var tools = []fantasy.Tool{fantasy.FunctionTool{Name: "list_dir"}}

func TestTurnsRepeatAndSummary(t *testing.T) {
	m := New(
		Say("hello"),
		Turn{ToolCalls: []ToolCall{Call("list_dir", `{"path":"."}`)}, Repeat: true},
	)
	ctx := context.Background()
	r, err := m.Generate(ctx, fantasy.Call{Tools: tools})
	if err != nil || r.Content.Text() != "hello" || r.FinishReason != fantasy.FinishReasonStop {
		t.Fatalf("turn 1: %+v, %v", r, err)
	}
	for i := range 3 { // the Repeat turn stays current while tools are offered
		r, err = m.Generate(ctx, fantasy.Call{Tools: tools})
		if err != nil || len(r.Content.ToolCalls()) != 1 || r.FinishReason != fantasy.FinishReasonToolCalls {
			t.Fatalf("repeat %d: %+v, %v", i, r, err)
		}
		if id := r.Content.ToolCalls()[0].ToolCallID; id != "call_"+string(rune('1'+i)) {
			t.Fatalf("tool call id %q", id)
		}
	}
	// Without tools the model summarises the request's tool calls.
	prompt := fantasy.Prompt{
		fantasy.NewUserMessage("go"),
		{Role: fantasy.MessageRoleAssistant, Content: []fantasy.MessagePart{
			fantasy.ToolCallPart{ToolCallID: "a", ToolName: "read_file", Input: `{"path":"x.txt"}`},
			fantasy.ToolCallPart{ToolCallID: "b", ToolName: "list_dir", Input: `{}`},
		}},
		{Role: fantasy.MessageRoleTool, Content: []fantasy.MessagePart{
			fantasy.ToolResultPart{ToolCallID: "a", Output: fantasy.ToolResultOutputContentError{Error: errors.New("path_not_found: x.txt does not exist")}},
			fantasy.ToolResultPart{ToolCallID: "b", Output: fantasy.ToolResultOutputContentText{Text: ". (0 entries)"}},
		}},
		fantasy.NewUserMessage("limit reached"),
	}
	r, err = m.Generate(ctx, fantasy.Call{Prompt: prompt})
	want := "I have to stop here. Summary of the 2 tool calls I made (1 succeeded, 1 failed):\n" +
		"1. read_file x.txt: failed (path_not_found)\n2. list_dir {}: ok"
	if err != nil || r.Content.Text() != want {
		t.Fatalf("summary %q, %v", r.Content.Text(), err)
	}
	if m.Remaining() != 0 {
		t.Fatalf("remaining %d", m.Remaining())
	}
	if _, err := m.Generate(ctx, fantasy.Call{Tools: tools}); !errors.Is(err, ErrScriptExhausted) {
		t.Fatalf("exhausted: %v", err)
	}
	if n := len(m.Calls()); n != 6 {
		t.Fatalf("%d calls recorded", n)
	}
}

func TestCheckAndErr(t *testing.T) {
	boom := errors.New("boom")
	m := New(
		Turn{Check: func(fantasy.Call) error { return boom }, Text: "x"},
		Turn{Err: boom},
	)
	if _, err := m.Generate(context.Background(), fantasy.Call{}); !errors.Is(err, boom) {
		t.Fatalf("check: %v", err)
	}
	if _, err := m.Stream(context.Background(), fantasy.Call{}); !errors.Is(err, boom) {
		t.Fatalf("err: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(Say("x")).Generate(ctx, fantasy.Call{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestStreamParts(t *testing.T) {
	m := New(Turn{Text: "hi", ToolCalls: []ToolCall{Call("list_dir", `{}`)}})
	s, err := m.Stream(context.Background(), fantasy.Call{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	var types []fantasy.StreamPartType
	for p := range s {
		types = append(types, p.Type)
	}
	want := []fantasy.StreamPartType{"text_start", "text_delta", "text_end", "tool_input_start", "tool_input_delta", "tool_input_end", "tool_call", "finish"}
	if len(types) != len(want) {
		t.Fatalf("parts %v", types)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("parts %v, want %v", types, want)
		}
	}
}
