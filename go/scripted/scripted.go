// Package scripted provides a fantasy.LanguageModel that plays back a fixed
// script instead of calling a real model: no network, no API key, fully
// deterministic. The wsfs demo uses it, and tests use it to drive a real
// fantasy agent loop and to assert on the prompts the agent sends.
//
// A Model holds a list of Turns. Each model call (Generate or Stream)
// consumes the next turn and answers with its text and tool calls. Like a
// real model, a scripted model does not call tools when the call offers none
// (for example on the final step after the tool-iteration limit): a tool turn
// met on such a call is skipped and the model answers with Summary instead.
package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"charm.land/fantasy"
)

// ToolCall is a tool call a turn makes: the tool's name and its JSON
// arguments, sent as they are.
type ToolCall struct {
	Name  string
	Input string
}

// Call returns a ToolCall.
func Call(name, input string) ToolCall { return ToolCall{Name: name, Input: input} }

// Turn is one scripted model response.
type Turn struct {
	// Text is the assistant text of the response (may be empty for a
	// tool-only turn).
	Text string
	// ToolCalls are the tool calls of the response. A turn with tool calls
	// finishes with fantasy.FinishReasonToolCalls, one without with
	// fantasy.FinishReasonStop.
	ToolCalls []ToolCall
	// Repeat keeps this turn current: it is answered again on every call
	// that offers tools, until a call offers none (then Summary answers and
	// the script moves on). Use it to make an agent run into its step limit.
	Repeat bool
	// Check, if set, inspects the request; an error fails the model call
	// (and with it the agent run). Use it to assert on the prompt.
	Check func(fantasy.Call) error
	// Before, if set, runs before the response is returned, with the
	// call's context (for example to cancel it).
	Before func(ctx context.Context)
	// Err, if set, is returned instead of a response.
	Err error
}

// Say returns a text-only turn.
func Say(text string) Turn { return Turn{Text: text} }

// Use returns a turn that calls the given tools.
func Use(calls ...ToolCall) Turn { return Turn{ToolCalls: calls} }

// ErrScriptExhausted is returned when a call that offers tools arrives after
// the last turn.
var ErrScriptExhausted = errors.New("scripted: script exhausted")

// Model is a scripted fantasy.LanguageModel. It is safe for concurrent use;
// concurrent calls consume turns in the order they take the lock.
type Model struct {
	name string

	mu    sync.Mutex
	turns []Turn
	next  int
	calls []fantasy.Call
	ids   int
}

var _ fantasy.LanguageModel = (*Model)(nil)

// New returns a model that plays the turns in order.
func New(turns ...Turn) *Model {
	return &Model{name: "scripted", turns: turns}
}

// Named sets the model name reported by Model() and returns m.
func (m *Model) Named(name string) *Model { m.name = name; return m }

// Calls returns the requests the model has received, in order.
func (m *Model) Calls() []fantasy.Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls)
}

// Remaining returns how many turns have not been played (a Repeat turn that
// is current counts as one).
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.turns) - m.next
}

// Provider implements fantasy.LanguageModel.
func (m *Model) Provider() string { return "scripted" }

// Model implements fantasy.LanguageModel.
func (m *Model) Model() string { return m.name }

// Generate implements fantasy.LanguageModel.
func (m *Model) Generate(ctx context.Context, call fantasy.Call) (*fantasy.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	turn, summary, err := m.take(call)
	if err != nil {
		return nil, err
	}
	if summary {
		return textResponse(Summary(call.Prompt)), nil
	}
	if turn.Check != nil {
		if err := turn.Check(call); err != nil {
			return nil, fmt.Errorf("scripted: check failed: %w", err)
		}
	}
	if turn.Before != nil {
		turn.Before(ctx)
	}
	if turn.Err != nil {
		return nil, turn.Err
	}
	resp := &fantasy.Response{FinishReason: fantasy.FinishReasonStop}
	if turn.Text != "" {
		resp.Content = append(resp.Content, fantasy.TextContent{Text: turn.Text})
	}
	for _, tc := range turn.ToolCalls {
		resp.Content = append(resp.Content, fantasy.ToolCallContent{
			ToolCallID: m.newID(),
			ToolName:   tc.Name,
			Input:      tc.Input,
		})
		resp.FinishReason = fantasy.FinishReasonToolCalls
	}
	resp.Usage = usage(call.Prompt, resp.Content)
	return resp, nil
}

// take records the call and picks the turn that answers it. summary is true
// when the model should answer with Summary.
func (m *Model) take(call fantasy.Call) (turn Turn, summary bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, call)
	toolsOffered := len(call.Tools) > 0
	if m.next >= len(m.turns) {
		if toolsOffered {
			return Turn{}, false, ErrScriptExhausted
		}
		return Turn{}, true, nil
	}
	t := m.turns[m.next]
	if len(t.ToolCalls) > 0 && !toolsOffered {
		m.next++ // a model without tools cannot make this turn's calls
		return Turn{}, true, nil
	}
	if !t.Repeat {
		m.next++
	}
	return t, false, nil
}

func (m *Model) newID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids++
	return fmt.Sprintf("call_%d", m.ids)
}

func textResponse(text string) *fantasy.Response {
	return &fantasy.Response{
		Content:      fantasy.ResponseContent{fantasy.TextContent{Text: text}},
		FinishReason: fantasy.FinishReasonStop,
	}
}

// usage makes up plausible token counts (about four bytes per token) so
// that usage reporting has something to show.
func usage(prompt fantasy.Prompt, out []fantasy.Content) fantasy.Usage {
	in := 0
	for _, msg := range prompt {
		for _, p := range msg.Content {
			switch p := p.(type) {
			case fantasy.TextPart:
				in += len(p.Text)
			case fantasy.ToolCallPart:
				in += len(p.Input)
			case fantasy.ToolResultPart:
				in += len(ResultText(p.Output))
			}
		}
	}
	o := 0
	for _, c := range out {
		switch c := c.(type) {
		case fantasy.TextContent:
			o += len(c.Text)
		case fantasy.ToolCallContent:
			o += len(c.Input)
		}
	}
	u := fantasy.Usage{InputTokens: int64(in/4 + 1), OutputTokens: int64(o/4 + 1)}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return u
}

// Stream implements fantasy.LanguageModel by streaming the Generate
// response as text and tool-call parts.
func (m *Model) Stream(ctx context.Context, call fantasy.Call) (fantasy.StreamResponse, error) {
	resp, err := m.Generate(ctx, call)
	if err != nil {
		return nil, err
	}
	return func(yield func(fantasy.StreamPart) bool) {
		for i, c := range resp.Content {
			var parts []fantasy.StreamPart
			switch c := c.(type) {
			case fantasy.TextContent:
				id := fmt.Sprintf("text_%d", i)
				parts = []fantasy.StreamPart{
					{Type: fantasy.StreamPartTypeTextStart, ID: id},
					{Type: fantasy.StreamPartTypeTextDelta, ID: id, Delta: c.Text},
					{Type: fantasy.StreamPartTypeTextEnd, ID: id},
				}
			case fantasy.ToolCallContent:
				parts = []fantasy.StreamPart{
					{Type: fantasy.StreamPartTypeToolInputStart, ID: c.ToolCallID, ToolCallName: c.ToolName},
					{Type: fantasy.StreamPartTypeToolInputDelta, ID: c.ToolCallID, Delta: c.Input},
					{Type: fantasy.StreamPartTypeToolInputEnd, ID: c.ToolCallID},
					{Type: fantasy.StreamPartTypeToolCall, ID: c.ToolCallID, ToolCallName: c.ToolName, ToolCallInput: c.Input},
				}
			}
			for _, p := range parts {
				if !yield(p) {
					return
				}
			}
		}
		yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeFinish, FinishReason: resp.FinishReason, Usage: resp.Usage})
	}, nil
}

// GenerateObject implements fantasy.LanguageModel; it is not supported.
func (m *Model) GenerateObject(context.Context, fantasy.ObjectCall) (*fantasy.ObjectResponse, error) {
	return nil, errors.New("scripted: object generation is not supported")
}

// StreamObject implements fantasy.LanguageModel; it is not supported.
func (m *Model) StreamObject(context.Context, fantasy.ObjectCall) (fantasy.ObjectStreamResponse, error) {
	return nil, errors.New("scripted: object generation is not supported")
}

// ResultText returns the text of a tool result: the output text, or the
// error message of an error result.
func ResultText(out fantasy.ToolResultOutputContent) string {
	switch o := out.(type) {
	case fantasy.ToolResultOutputContentText:
		return o.Text
	case fantasy.ToolResultOutputContentError:
		if o.Error != nil {
			return o.Error.Error()
		}
	case fantasy.ToolResultOutputContentMedia:
		return o.Text
	}
	return ""
}

// IsError reports whether a tool result is an error result.
func IsError(out fantasy.ToolResultOutputContent) bool {
	_, ok := out.(fantasy.ToolResultOutputContentError)
	return ok
}

// Summary is what a scripted model answers when it may not call tools: a
// list of the tool calls of the current request (everything after the last
// user message that precedes them) and how each one ended. If user messages
// follow the tool results (such as a "limit reached" notice), it starts with
// "I have to stop here.".
func Summary(prompt fantasy.Prompt) string {
	// Skip trailing user messages (such as a "limit reached" notice), then
	// find the user message that started the request.
	end := len(prompt)
	for end > 0 && prompt[end-1].Role == fantasy.MessageRoleUser {
		end--
	}
	start := 0
	for i := end - 1; i >= 0; i-- {
		if prompt[i].Role == fantasy.MessageRoleUser {
			start = i + 1
			break
		}
	}
	type entry struct{ name, input, outcome string }
	var calls []*entry
	byID := map[string]*entry{}
	for _, msg := range prompt[start:end] {
		for _, p := range msg.Content {
			switch p := p.(type) {
			case fantasy.ToolCallPart:
				e := &entry{name: p.ToolName, input: p.Input, outcome: "no result"}
				calls = append(calls, e)
				byID[p.ToolCallID] = e
			case fantasy.ToolResultPart:
				if e, ok := byID[p.ToolCallID]; ok {
					e.outcome = "ok"
					if IsError(p.Output) {
						text := ResultText(p.Output)
						code, _, _ := strings.Cut(text, ":")
						e.outcome = "failed (" + code + ")"
					}
				}
			}
		}
	}
	if len(calls) == 0 {
		return "I did not use any tools for this request."
	}
	var b strings.Builder
	failed := 0
	for _, e := range calls {
		if e.outcome != "ok" {
			failed++
		}
	}
	if end < len(prompt) {
		b.WriteString("I have to stop here. ")
	}
	fmt.Fprintf(&b, "Summary of the %d tool calls I made (%d succeeded, %d failed):\n", len(calls), len(calls)-failed, failed)
	for i, e := range calls {
		fmt.Fprintf(&b, "%d. %s %s: %s\n", i+1, e.name, describe(e.input), e.outcome)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// describe shows a tool call's path argument, or its compacted JSON
// arguments if there is no path.
func describe(input string) string {
	var args struct {
		Path *string `json:"path"`
	}
	if json.Unmarshal([]byte(input), &args) == nil && args.Path != nil {
		return *args.Path
	}
	return compact(input)
}

// compact shortens tool arguments for the summary.
func compact(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		cut := 60
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
