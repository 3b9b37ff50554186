package wsfs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/fantasy"
)

// specFor returns the library's spec of the tool named name.
func specFor(name string) (ToolSpec, bool) {
	specs, err := ToolSpecs()
	if err == nil {
		for _, s := range specs {
			if s.Name == name {
				return s, true
			}
		}
	}
	return ToolSpec{}, false
}

// specTool is a tool made by fantasy.NewAgentTool (which decodes the
// model's arguments into the Go input struct) whose Info is the library's
// spec: its description and parameter schema, exactly as the library
// states them. TestInputStructsMatchLibrarySpecs checks that the schema
// fantasy derives from each input struct agrees with it.
type specTool struct {
	fantasy.AgentTool
	info fantasy.ToolInfo
}

func (t *specTool) Info() fantasy.ToolInfo {
	info := t.info
	// Callers may modify what they get; the schema maps stay ours.
	info.Parameters = cloneJSON(info.Parameters).(map[string]any)
	info.Required = slices.Clone(info.Required)
	return info
}

// cloneJSON deep-copies a value decoded by encoding/json.
func cloneJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = cloneJSON(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = cloneJSON(x)
		}
		return s
	}
	return v
}

// withSpec builds the tool with fantasy.NewAgentTool and gives it the
// library's description and schema from wsfs_tool_specs(). Without usable
// specs the schema fantasy derives from the input struct stays.
// With parallel, a tool whose spec has readOnlyHint is made with
// fantasy.NewParallelAgentTool (fantasy may run it concurrently with the
// step's other parallel tools); every other tool stays sequential.
func withSpec[T any](name string, parallel bool, fn func(context.Context, T, fantasy.ToolCall) (fantasy.ToolResponse, error)) fantasy.AgentTool {
	spec, ok := specFor(name)
	if !ok {
		return fantasy.NewAgentTool(name, "wsfs tool "+name+" (tool specs unavailable)", fn)
	}
	newTool := fantasy.NewAgentTool[T]
	if parallel && spec.ReadOnly() {
		newTool = fantasy.NewParallelAgentTool[T]
	}
	tool := newTool(name, spec.Description, fn)
	info := tool.Info()
	var params struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if json.Unmarshal(spec.Parameters, &params) == nil && params.Properties != nil {
		info.Parameters = params.Properties
		info.Required = params.Required
		if info.Required == nil {
			info.Required = []string{}
		}
	}
	return &specTool{AgentTool: tool, info: info}
}

// callInfo is what a tool call's log record and the library need from the
// decoded input besides the model's JSON: the path to log, and the content
// the library may take as a buffer (write_file and append_file).
type callInfo struct {
	path    string
	content *string
}

// adapter builds one tool's fantasy tool.
type adapter struct {
	name  string
	build func(ws *Workspace, tc toolConfig) fantasy.AgentTool
}

// adapters has one entry per tool, each with the tool's Go input struct
// (which fantasy decodes the model's arguments into) and what its calls
// log. TestEveryToolIsAdapted checks it against ToolNames.
var adapters = byName(
	adapt(ToolReadFile, func(in ReadFileInput) callInfo { return callInfo{path: in.Path} }),
	adapt(ToolWriteFile, func(in WriteFileInput) callInfo { return callInfo{path: in.Path, content: &in.Content} }),
	adapt(ToolAppendFile, func(in AppendFileInput) callInfo { return callInfo{path: in.Path, content: &in.Content} }),
	adapt(ToolListDir, func(in ListDirInput) callInfo { return callInfo{path: cmp.Or(in.Path, ".")} }),
	adapt(ToolEditFile, func(in EditFileInput) callInfo { return callInfo{path: in.Path} }),
	adapt(ToolGetPathInfo, func(in GetPathInfoInput) callInfo { return callInfo{path: in.Path} }),
	adapt(ToolFindFiles, func(in FindFilesInput) callInfo { return callInfo{path: cmp.Or(in.Path, ".")} }),
	adapt(ToolSearchText, func(in SearchTextInput) callInfo { return callInfo{path: cmp.Or(in.Path, ".")} }),
	adapt(ToolApplyPatch, func(in ApplyPatchInput) callInfo { return callInfo{path: patchPaths(in)} }),
	adapt(ToolCreateDirectory, func(in CreateDirectoryInput) callInfo { return callInfo{path: in.Path} }),
	adapt(ToolMoveFile, func(in MoveFileInput) callInfo { return callInfo{path: in.Src + " -> " + in.Dst} }),
	adapt(ToolDeleteFile, func(in DeleteFileInput) callInfo { return callInfo{path: in.Path} }),
)

// adapt makes the adapter of the tool named name, whose input is In.
func adapt[In any](name string, info func(In) callInfo) adapter {
	return adapter{name: name, build: func(ws *Workspace, tc toolConfig) fantasy.AgentTool {
		return withSpec(name, tc.parallelReads, func(ctx context.Context, in In, call fantasy.ToolCall) (fantasy.ToolResponse, error) {
			c := info(in)
			return respond(ctx, ws, ModelCall{Tool: name, Args: call.Input, Content: c.content, Path: c.path,
				Timeout: tc.timeout, Logger: tc.logger})
		})
	}}
}

func byName(list ...adapter) map[string]adapter {
	m := make(map[string]adapter, len(list))
	for _, a := range list {
		m[a.name] = a
	}
	return m
}

// patchPaths names an apply_patch call's files for its log record.
func patchPaths(in ApplyPatchInput) string {
	if len(in.Files) == 0 {
		return "(patch)"
	}
	names := make([]string, len(in.Files))
	for i, f := range in.Files {
		names[i] = f.Path
	}
	return strings.Join(names, " ")
}

// ToolOption configures Tools.
type ToolOption func(*toolConfig)

type toolConfig struct {
	logger        *slog.Logger
	timeout       time.Duration
	readOnly      bool
	parallelReads bool
	names         []string
}

// WithLogger sends the tools' per-call log records to l instead of the
// workspace's Config.Logger.
func WithLogger(l *slog.Logger) ToolOption {
	return func(c *toolConfig) { c.logger = l }
}

// WithTimeout bounds every tool call to d (it can only shorten the
// workspace's OperationTimeout; the context deadline still applies). Zero
// means no extra bound.
func WithTimeout(d time.Duration) ToolOption {
	return func(c *toolConfig) { c.timeout = d }
}

// WithReadOnlyTools makes Tools return only the tools that never change
// anything (those whose spec has readOnlyHint), for a read-only agent.
func WithReadOnlyTools() ToolOption {
	return func(c *toolConfig) { c.readOnly = true }
}

// WithParallelReadOnlyTools marks the tools that never change anything
// (readOnlyHint in their spec: read_file, list_dir, ...) as parallel
// (fantasy.NewParallelAgentTool, Info().Parallel): when a model calls
// several tools in one step, fantasy starts the parallel ones concurrently
// (at most 5 at once, in fantasy v0.42.0) and runs the others one at a
// time, in call order. Tools that write stay sequential, so writes never
// race each other. Results reach the model in call order either way. A
// read called before a write of the same step may overlap it and sees the
// file before or after the write, never a mix (writes are atomic); a read
// called after a write starts once the write is done.
func WithParallelReadOnlyTools() ToolOption {
	return func(c *toolConfig) { c.parallelReads = true }
}

// WithToolNames makes Tools return only the named tools, in ToolNames
// order. A name that is not a tool is a programming error: Tools panics.
func WithToolNames(names ...string) ToolOption {
	return func(c *toolConfig) { c.names = append(c.names, names...) }
}

// Tools returns the workspace tools as fantasy agent tools: all of them
// (ToolNames) unless WithReadOnlyTools or WithToolNames choose fewer; with
// both, a tool must pass both. Each has the library's name, description and
// parameter schema (wsfs_tool_specs()); the model's arguments are decoded
// into the tool's Go input struct (ReadFileInput, SearchTextInput, ...)
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
//     ctx.Err()). Even then nothing was changed (see Workspace).
//
// The raw JSON arguments the model sent are passed to the library as they
// are, so its validation (unknown fields, empty old_text, ...) produces the
// error text. Arguments whose JSON types do not fit the input struct are
// rejected by fantasy before the tool runs ("invalid parameters: ..."),
// also as a recoverable error response.
func Tools(ws *Workspace, opts ...ToolOption) []fantasy.AgentTool {
	var tc toolConfig
	for _, o := range opts {
		o(&tc)
	}
	for _, n := range tc.names {
		if _, ok := adapters[n]; !ok {
			panic("wsfs.Tools: there is no tool named " + strconv.Quote(n) + "; the tools are " + strings.Join(ToolNames, ", "))
		}
	}
	var tools []fantasy.AgentTool
	for _, name := range ToolNames {
		if len(tc.names) > 0 && !slices.Contains(tc.names, name) {
			continue
		}
		if spec, ok := specFor(name); tc.readOnly && (!ok || !spec.ReadOnly()) {
			continue
		}
		tools = append(tools, adapters[name].build(ws, tc))
	}
	return tools
}

// respond is the body of every agent tool: the call, and its result as a
// fantasy response. A failure the model can correct is an error response
// with a nil Go error; one that ends the run (a closed workspace, the run's
// own context ending) also returns the error, which stops fantasy.
func respond(ctx context.Context, ws *Workspace, c ModelCall) (fantasy.ToolResponse, error) {
	text, err := ws.CallForModel(ctx, c)
	if err == nil {
		return fantasy.NewTextResponse(text), nil
	}
	resp := fantasy.NewTextErrorResponse(text)
	var e *Error
	switch {
	case !errors.As(err, &e):
		return resp, err
	case e.Code == CodeInvalidWorkspace:
		return resp, err
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		// The run's own context ended: stop the run.
		return resp, err
	}
	return resp, nil
}
