package wsfs

import (
	"context"
	"encoding/json"
)

// Dispatch runs a tool call as a model API hands it over, whole:
// {"tool_call": {"name", "arguments"}}, the bare {"name", "arguments"}, or
// either without arguments (the name-only call); arguments may be an object
// or a JSON string holding one. The library (wsfs_dispatch) parses it and
// runs the named tool exactly as CallRaw would: built-in and Wasm tools
// alike, with the same policy, audit log, approval, context deadline and
// cancellation; on a workspace with a profile under the profile's names.
// The envelope and err are CallRaw's. A malformed call runs nothing and is
// an invalid_arguments envelope saying what is wrong (the native failure
// envelope, on a profile's workspace too: no profile tool was named). See
// docs/dispatch.md.
func (ws *Workspace) Dispatch(ctx context.Context, callJSON string) (envelopeJSON string, err error) {
	tool, path := dispatchedNames(callJSON)
	cs := callSpec{tool: tool, args: callJSON, dispatch: true, output: outputFull, path: path,
		profiled: ws.profile != "", keepMetrics: true}
	raw, _, err := ws.call(ctx, cs)
	return raw, err
}

// dispatchedNames is a call's tool name and path argument, for its log
// record and errors detected in Go; "" where the call has none (the library
// then says what is wrong).
func dispatchedNames(callJSON string) (tool, path string) {
	type named struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var c struct {
		named
		ToolCall *named `json:"tool_call"`
	}
	if json.Unmarshal([]byte(callJSON), &c) != nil {
		return "", ""
	}
	n := c.named
	if c.ToolCall != nil {
		n = *c.ToolCall
	}
	args := string(n.Arguments)
	var text string
	if json.Unmarshal(n.Arguments, &text) == nil {
		args = text
	}
	return n.Name, pathOf(args)
}
