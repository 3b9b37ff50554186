package wsfs

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"charm.land/fantasy"
)

// ToolSpec is one entry of the library's wsfs_tool_specs(): a tool's name,
// description and JSON-schema parameters, as offered to a model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

var toolSpecsOnce = sync.OnceValues(func() ([]ToolSpec, error) {
	raw := cToolSpecs()
	var specs []ToolSpec
	if err := json.Unmarshal([]byte(raw), &specs); err != nil {
		return nil, newError("tool_specs", CodeIOError, "malformed wsfs_tool_specs(): %v", err)
	}
	return specs, nil
})

// ToolSpecs returns the library's tool specifications.
func ToolSpecs() ([]ToolSpec, error) {
	specs, err := toolSpecsOnce()
	return append([]ToolSpec(nil), specs...), err
}

// ToolSpecsJSON returns wsfs_tool_specs() exactly as the library returns it.
func ToolSpecsJSON() string { return cToolSpecs() }

// fallbackDescriptions are used only if wsfs_tool_specs() is unusable.
var fallbackDescriptions = map[string]string{
	ToolReadFile:   "Read a UTF-8 text file in the workspace.",
	ToolWriteFile:  "Create or overwrite a text file in the workspace.",
	ToolAppendFile: "Append text to a file in the workspace, creating it if missing.",
	ToolListDir:    "List one directory in the workspace.",
	ToolEditFile:   "Replace exact text in a file in the workspace.",
}

func specFor(name string) (ToolSpec, bool) {
	specs, err := toolSpecsOnce()
	if err == nil {
		for _, s := range specs {
			if s.Name == name {
				return s, true
			}
		}
	}
	return ToolSpec{}, false
}

// specTool is a tool made by fantasy.NewAgentTool whose Info carries the
// library's descriptions (tool and properties) instead of the Go tags.
// Everything else, Run included, is the fantasy tool's.
type specTool struct {
	fantasy.AgentTool
	info fantasy.ToolInfo
}

func (t *specTool) Info() fantasy.ToolInfo {
	info := t.info
	info.Parameters = maps.Clone(info.Parameters)
	for k, v := range info.Parameters {
		if m, ok := v.(map[string]any); ok {
			info.Parameters[k] = maps.Clone(m)
		}
	}
	info.Required = slices.Clone(info.Required)
	return info
}

// withSpec builds the tool with fantasy.NewAgentTool and applies the
// library's descriptions from wsfs_tool_specs(). If the specs are unusable
// the Go descriptions stay.
func withSpec[T any](name string, fn func(context.Context, T, fantasy.ToolCall) (fantasy.ToolResponse, error)) fantasy.AgentTool {
	spec, ok := specFor(name)
	if !ok {
		return fantasy.NewAgentTool(name, fallbackDescriptions[name], fn)
	}
	tool := fantasy.NewAgentTool(name, spec.Description, fn)
	info := tool.Info()
	var params struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(spec.Parameters, &params) == nil {
		for prop, v := range info.Parameters {
			m, isMap := v.(map[string]any)
			if d := params.Properties[prop].Description; isMap && d != "" {
				m["description"] = d
			}
		}
	}
	return &specTool{AgentTool: tool, info: info}
}

// ToolOption configures Tools.
type ToolOption func(*toolConfig)

type toolConfig struct {
	logger  *slog.Logger
	timeout time.Duration
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

// Tools returns the five workspace tools as fantasy agent tools, named
// read_file, write_file, append_file, list_dir and edit_file, with the
// library's descriptions and schemas generated from ReadFileInput,
// WriteFileInput, AppendFileInput, ListDirInput and EditFileInput. They are
// sequential tools (fantasy runs them one at a time, in call order).
//
// Results:
//   - success: a text response with the library's "text", unchanged (file
//     content for read_file, a listing for list_dir, a one-line summary for
//     the others, with truncation notices and warnings as the library words
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
	return []fantasy.AgentTool{
		withSpec(ToolReadFile,
			func(ctx context.Context, in ReadFileInput, call fantasy.ToolCall) (fantasy.ToolResponse, error) {
				return ws.runTool(ctx, tc, ToolReadFile, in.Path, call)
			}),
		withSpec(ToolWriteFile,
			func(ctx context.Context, in WriteFileInput, call fantasy.ToolCall) (fantasy.ToolResponse, error) {
				return ws.runTool(ctx, tc, ToolWriteFile, in.Path, call)
			}),
		withSpec(ToolAppendFile,
			func(ctx context.Context, in AppendFileInput, call fantasy.ToolCall) (fantasy.ToolResponse, error) {
				return ws.runTool(ctx, tc, ToolAppendFile, in.Path, call)
			}),
		withSpec(ToolListDir,
			func(ctx context.Context, in ListDirInput, call fantasy.ToolCall) (fantasy.ToolResponse, error) {
				p := in.Path
				if p == "" {
					p = "."
				}
				return ws.runTool(ctx, tc, ToolListDir, p, call)
			}),
		withSpec(ToolEditFile,
			func(ctx context.Context, in EditFileInput, call fantasy.ToolCall) (fantasy.ToolResponse, error) {
				return ws.runTool(ctx, tc, ToolEditFile, in.Path, call)
			}),
	}
}

// runTool is the body of every agent tool.
func (ws *Workspace) runTool(ctx context.Context, tc toolConfig, tool, path string, call fantasy.ToolCall) (fantasy.ToolResponse, error) {
	args := call.Input
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	_, env, err := ws.call(ctx, callSpec{
		tool: tool, args: args, output: outputTextRaw, timeout: tc.timeout,
		path: path, logger: tc.logger,
	})
	if err == nil {
		if env.HasRaw {
			return fantasy.NewTextResponse(env.Raw), nil
		}
		return fantasy.NewTextResponse(env.Text), nil
	}
	var e *Error
	if !errors.As(err, &e) {
		return fantasy.NewTextErrorResponse(err.Error()), err
	}
	text := env.Text
	if text == "" {
		text = e.Text()
	}
	resp := fantasy.NewTextErrorResponse(text)
	switch {
	case e.Code == CodeInvalidWorkspace:
		return resp, err
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		// The run's own context ended: stop the run.
		return resp, err
	}
	return resp, nil
}
