// Package fantasytools turns the wsfs workspace tools into
// charm.land/fantasy agent tools:
//
//	agent := fantasy.NewAgent(model, fantasy.WithTools(fantasytools.Tools(ws)...))
//
// Each tool has the library's name, description and parameter schema
// (wsfs_tool_specs()); fantasy decodes the model's arguments into the
// tool's input struct from package wsfs (wsfs.ReadFileInput, ...), and the
// call goes to the library through wsfs.Workspace.CallForModel with the
// arguments exactly as the model sent them. A failure the model can correct
// is an error response; one that ends the run is also a Go error (see
// Tools).
package fantasytools

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

// Tools returns the workspace tools as fantasy agent tools: all of them
// (wsfs.ToolNames) unless WithReadOnlyTools or WithToolNames choose fewer; with
// both, a tool must pass both. The developer tools (wsfs.ExecToolNames) are
// included only when the workspace's policy turns them on
// (wsfs.Workspace.ExecSwitchOn): off, they could only fail. Each has the library's name, description and
// parameter schema (wsfs_tool_specs()); the model's arguments are decoded
// into the tool's Go input struct (wsfs.ReadFileInput, ...)
// and passed to the library as the model sent them. They are sequential
// tools (fantasy runs them one at a time, in call order) unless
// WithParallelReadOnlyTools makes the read-only ones parallel.
//
// Results:
//   - success: a text response with the library's "text", unchanged (file
//     content for read_file, a listing for list_dir, a summary for the
//     others, with truncation notices and warnings as the library words
//     them);
//   - a recoverable failure (bad path, outside_workspace, path_not_found,
//     edit_not_found, too_large, timeout, ...): an error response with the
//     text "<code>: <message>" and a nil Go error, so the agent loop goes on
//     and the model can correct its call;
//   - a fatal condition: a non-nil Go error, which makes fantasy stop the
//     run. Fatal means the run cannot usefully continue: the workspace was
//     closed (invalid_workspace), or the call failed because the run's own
//     context was cancelled or its deadline passed (the error then wraps
//     ctx.Err()). Even then nothing was changed (see wsfs.Workspace).
//
// The workspace's Wasm tools (wsfs.Config.WasmTools) follow the built-in
// ones, each with its manifest's description and input schema
// (ws.ToolSpecs()); the model's arguments go to the library as sent, where
// the manifest's schema checks them. WithReadOnlyTools keeps those without
// the filesystem write capability; WithToolNames may name them.
//
// A workspace opened with a profile (wsfs.Config.Profile: "miniclaw",
// "agent-base", "capability-plan", ...) offers the profile's own tools:
// their names, descriptions and schemas are the workspace's
// (ws.ToolSpecs()), each call passes the model's JSON arguments to the
// library (CallRaw), and the result is the profile's envelope as the library
// made it, an error response when it says the call failed. WithToolNames
// then names the profile's tools.
//
// The raw JSON arguments the model sent are passed to the library as they
// are, so its validation (unknown fields, empty old_text, ...) produces the
// error text. Arguments whose JSON types do not fit the input struct are
// rejected by fantasy before the tool runs ("invalid parameters: ..."),
// also as a recoverable error response.
func Tools(ws *wsfs.Workspace, opts ...ToolOption) []fantasy.AgentTool {
	var tc toolConfig
	for _, o := range opts {
		o(&tc)
	}
	if ws.Profile() != wsfs.NativeProfile {
		return profileTools(ws, tc)
	}
	wasm := ws.WasmTools()
	for _, n := range tc.names {
		if _, ok := adapters[n]; !ok && !slices.Contains(wasm, n) {
			panic("fantasytools.Tools: there is no tool named " + strconv.Quote(n) + "; the tools are " + strings.Join(append(slices.Clone(wsfs.ToolNames), wasm...), ", "))
		}
	}
	var tools []fantasy.AgentTool
	for _, name := range wsfs.ToolNames {
		if len(tc.names) > 0 && !slices.Contains(tc.names, name) {
			continue
		}
		if spec, ok := specFor(name); tc.readOnly && (!ok || !spec.ReadOnly()) {
			continue
		}
		if !ws.ExecSwitchOn(name) {
			// A developer tool the policy leaves off could only fail.
			continue
		}
		tools = append(tools, adapters[name].build(ws, tc))
	}
	return append(tools, wasmTools(ws, tc)...)
}
