package wsfs

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
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
	// Annotations are hints for hosts, true of every call:
	// {"readOnlyHint","destructiveHint","idempotentHint","openWorldHint"}.
	Annotations json.RawMessage `json:"annotations"`
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

// specFor returns the library's spec of the tool named name.
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

// ReadOnly reports whether the spec's annotations say the tool never
// changes anything.
func (s ToolSpec) ReadOnly() bool {
	var a struct {
		ReadOnly bool `json:"readOnlyHint"`
	}
	_ = json.Unmarshal(s.Annotations, &a)
	return a.ReadOnly
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

// agentTools holds how to build each tool's fantasy tool, by name. Each
// tool's Go file registers itself with registerTool.
var agentTools = map[string]func(ws *Workspace, tc toolConfig) fantasy.AgentTool{}

// registerTool makes the tool named name one of Tools' tools. pathOf gives
// the path of a call, for its log record. It returns nothing useful; tool
// files call it in a package-level var declaration.
func registerTool[In any](name string, pathOf func(In) string) struct{} {
	agentTools[name] = func(ws *Workspace, tc toolConfig) fantasy.AgentTool {
		return withSpec(name, tc.parallelReads, func(ctx context.Context, in In, call fantasy.ToolCall) (fantasy.ToolResponse, error) {
			var content *string
			if c, ok := any(in).(contentArg); ok {
				s := c.contentArg()
				content = &s
			}
			return ws.runTool(ctx, tc, name, pathOf(in), call, content)
		})
	}
	return struct{}{}
}

// contentArg is implemented by the inputs whose content the library can
// take as a buffer (wsfs_call_with_content): write_file and append_file.
type contentArg interface{ contentArg() string }

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
		if _, ok := agentTools[n]; !ok {
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
		tools = append(tools, agentTools[name](ws, tc))
	}
	return tools
}

// ToolNames lists every tool the package offers, in the library's order
// (that of wsfs_tool_specs()).
var ToolNames []string

// init runs after every package-level registerTool call.
func init() { ToolNames = toolNames() }

func toolNames() []string {
	var names []string
	if specs, err := toolSpecsOnce(); err == nil {
		for _, s := range specs {
			if _, ok := agentTools[s.Name]; ok {
				names = append(names, s.Name)
			}
		}
	}
	for name := range agentTools { // tools the library's specs do not list
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// runTool is the body of every agent tool. content is the content fantasy
// decoded from the call's arguments, for the tools that take it as a buffer
// (nil for the others).
func (ws *Workspace) runTool(ctx context.Context, tc toolConfig, tool, path string, call fantasy.ToolCall, content *string) (fantasy.ToolResponse, error) {
	args := call.Input
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if tool == ToolReadFile && ctx.Err() == nil {
		if p, ok := onlyPath(args); ok {
			if e := ws.outsideLexically(tool, p); e != nil {
				ws.logCall(callSpec{tool: tool, path: path, logger: tc.logger}, e, 0)
				return fantasy.NewTextErrorResponse(e.Text()), nil
			}
		}
	}
	cs := callSpec{tool: tool, args: args, output: outputTextRaw, timeout: tc.timeout, path: path, logger: tc.logger}
	if content != nil && len(args) >= bufferedContentArgs && len(*content) <= ws.limits.MaxWriteBytes {
		// Large content: fantasy has already decoded it from the JSON, so the
		// library takes it as a buffer instead of decoding it again; the
		// other arguments still go as the model sent them.
		if rest, ok := withoutContent(args); ok {
			cs.args, cs.content, cs.hasContent = rest, *content, true
		}
	}
	_, env, err := ws.call(ctx, cs)
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

// bufferedContentArgs is the size of arguments from which the content goes to
// the library as a buffer rather than inside the JSON.
const bufferedContentArgs = 64 << 10

// withoutContent returns the JSON object args without its "content" member,
// when args is an object with exactly one "content" member, a string that
// encoding/json and the library decode alike (no \u escape of a surrogate,
// which encoding/json replaces and the library may refuse). ok is false
// otherwise; the arguments then go to the library as they are.
func withoutContent(args string) (rest string, ok bool) {
	d := decoder{s: args}
	if !d.object() {
		return "", false
	}
	b := make([]byte, 0, 256)
	b = append(b, '{')
	found := false
	for n := 0; ; {
		start := d.i
		key, more := d.field(&n)
		if !more {
			break
		}
		if key == "content" {
			if found || d.peek() != '"' {
				return "", false
			}
			from := d.i
			d.skip()
			if hasSurrogateEscape(args[from:d.i]) {
				return "", false
			}
			found = true
			continue
		}
		d.skip()
		member := strings.TrimLeft(args[start:d.i], " \t\r\n,")
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, member...)
	}
	if !found || d.bad || d.peek() != 0 {
		return "", false
	}
	return string(append(b, '}')), true
}

// hasSurrogateEscape reports whether a JSON string may hold a \u escape of a
// UTF-16 surrogate (\uD800-\uDFFF). It may say yes for an escaped backslash
// followed by such text: then the content simply goes inside the JSON.
func hasSurrogateEscape(s string) bool {
	for {
		i := strings.Index(s, `\u`)
		if i < 0 || i+3 >= len(s) {
			return false
		}
		if c, d := s[i+2]|0x20, s[i+3]|0x20; c == 'd' && (d >= '8' && d <= '9' || d >= 'a' && d <= 'f') {
			return true
		}
		s = s[i+2:]
	}
}
