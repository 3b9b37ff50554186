// Package mcpserver offers the wsfs tools to MCP clients (Claude Desktop,
// Cursor, any host that speaks the Model Context Protocol), built on the
// official Go SDK, github.com/modelcontextprotocol/go-sdk. The wsfs CLI's
// `wsfs mcp` command runs it over stdio.
//
// The server is driven by the library's tool registry: every tool that
// wsfs_tool_specs() lists becomes an MCP tool with the library's name,
// description, input schema (as given) and annotations (readOnlyHint,
// destructiveHint, idempotentHint, openWorldHint), so a tool added to the
// library appears here without a change to this package. A call is passed
// to the library unchanged (Workspace.CallRaw) and its envelope becomes the
// result:
//
//   - success: the content is one text item holding the envelope's "text"
//     (what a model should read: the file's content, a listing or a
//     summary, with truncation notices, how to continue, and warnings);
//   - failure: isError is true and the text is the envelope's "text",
//     "<code>: <message>" (the stable code first, then what to do).
//
// By default a result has no structuredContent. The MCP specification
// (2025-06-18, "Structured Content") lets a tool return structured content
// next to the text and says nothing about which of the two a client shows
// the model; some clients show structuredContent when it is present, and a
// model shown the envelope's data instead of its text loses every hint the
// text carries. With Options.StructuredContent a result also carries
// structuredContent: the envelope's "data" object on success,
// {"error":{"code":"<code>","message":"<message>"}} on failure, so a
// client can branch on the stable code without parsing text. The text
// stays the envelope's text, not the serialized JSON the specification
// suggests for clients without structured content: it is what the model
// should read. No tool declares an outputSchema.
//
// A workspace opened with a profile (its configuration's "profile",
// docs/profiles.md) is served as that profile: the tools are the workspace's
// (Workspace.ToolSpecs: the profile's names and schemas), and a result's
// text is the profile's envelope as JSON, isError when it reports a failure
// ("ok" or "success" false); structuredContent, with Options.StructuredContent,
// is that envelope.
//
// Arguments are validated by the library, not by the server: unknown
// fields, wrong types and missing paths come back as invalid_arguments
// results the model can correct, never as protocol errors.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wsfs "github.com/wsfs/wsfs/go"
)

// Options configures New.
type Options struct {
	// ReadOnly offers only the tools whose spec has readOnlyHint: true.
	// A workspace whose policy disables writes (writes_enabled: false, in
	// the workspace configuration or wsfs.Config.Policy) gets only those
	// too, whatever ReadOnly says: every other tool could only fail with
	// writes_disabled.
	//
	// Read-only is enforced by not offering the other tools: they are never
	// registered, so they are absent from tools/list and the SDK refuses a
	// tools/call naming one ("unknown tool") before anything reaches the
	// library. The selection follows the library's annotations, never a
	// list kept here. A library policy given in the workspace configuration
	// (WorkspaceConfig passes every key through) applies in addition.
	ReadOnly bool
	// StructuredContent adds structuredContent to every result (the
	// envelope's data, or {"error": {code, message}}); see the package
	// documentation. Off by default: a client that shows the model
	// structuredContent instead of the text would hide the text's hints.
	StructuredContent bool
	// Logger receives the server's own diagnostics; nil discards. Tool
	// calls are logged by the workspace's logger (wsfs.Config.Logger).
	// Over stdio it must not write to stdout, which carries the protocol.
	Logger *slog.Logger
}

// New returns an MCP server whose tools run on ws. ws must stay open while
// the server runs; closing it makes calls fail with invalid_workspace.
func New(ws *wsfs.Workspace, opts Options) (*mcp.Server, error) {
	if ws == nil {
		return nil, errors.New("mcpserver: workspace is nil")
	}
	specs, err := ws.ToolSpecs() // as the workspace offers them: its profile, its policy
	if err != nil {
		return nil, err
	}
	version := "unknown"
	if v, err := wsfs.Version(); err == nil {
		version = v.Version
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "wsfs", Title: "wsfs workspace files", Version: version},
		&mcp.ServerOptions{
			Instructions: "Filesystem tools confined to one workspace directory (" + ws.Root() + "). " +
				devToolsNote(ws) +
				wsfs.ToolInstructions() + " A failed call returns a result with isError " +
				"and the text \"<code>: <message>\"; read the message, correct the call and retry.",
			Logger: opts.Logger,
			// Only tools; the default would also announce logging, which
			// this server does not send.
			Capabilities: &mcp.ServerCapabilities{},
		})
	readOnly := offersReadOnly(ws, opts)
	for _, spec := range specs {
		if !offered(ws, spec, readOnly) {
			continue
		}
		tool, err := mcpTool(spec)
		if err != nil {
			return nil, err
		}
		if ws.Profile() != wsfs.NativeProfile {
			server.AddTool(tool, profileHandler(ws, spec.Name, opts.StructuredContent))
			continue
		}
		server.AddTool(tool, handler(ws, spec.Name, opts.StructuredContent))
	}
	return server, nil
}

// devToolsNote is the instructions' sentence on the developer tools, when the
// policy turns them on.
func devToolsNote(ws *wsfs.Workspace) string {
	if !ws.ExecSwitchOn(wsfs.ToolRunTests) {
		return ""
	}
	note := "Developer tools run programs in the workspace under a kernel sandbox: prefer the structured ones " +
		"(run_tests, run_lint, typecheck, git_status, git_diff, git_commit, workspace_info), then safe_shell"
	if ws.ExecSwitchOn(wsfs.ToolShell) {
		note += "; use shell only when neither can do the job"
	}
	return note + ". "
}

// offersReadOnly reports whether New offers only the read-only tools: with
// Options.ReadOnly, or when the workspace's effective policy disables writes.
func offersReadOnly(ws *wsfs.Workspace, opts Options) bool {
	if opts.ReadOnly {
		return true
	}
	w := ws.Policy().WritesEnabled
	return w != nil && !*w
}

// offered reports whether New offers the tool of spec: its exec switch is on
// in ws's policy (the developer tools need exec_enabled, shell also
// shell_enabled: off, they could only fail with exec_disabled), and it is
// read-only when only those are offered.
func offered(ws *wsfs.Workspace, spec wsfs.ToolSpec, readOnly bool) bool {
	return ws.ExecSwitchOn(spec.Name) && (!readOnly || spec.ReadOnly())
}

// ToolsFor returns the names of the tools New(ws, opts) offers, in the
// library's order: the read-only ones with Options.ReadOnly or when ws's
// policy disables writes, else all; the developer tools only when ws's
// policy turns them on.
func ToolsFor(ws *wsfs.Workspace, opts Options) ([]string, error) {
	if ws == nil {
		return nil, errors.New("mcpserver: workspace is nil")
	}
	specs, err := ws.ToolSpecs()
	if err != nil {
		return nil, err
	}
	readOnly := offersReadOnly(ws, opts)
	var names []string
	for _, s := range specs {
		if offered(ws, s, readOnly) {
			names = append(names, s.Name)
		}
	}
	return names, nil
}

// Tools returns the names of the tools New offers with Options.ReadOnly
// set to readOnly on a workspace with the default policy (writes allowed,
// the developer tools off), in the library's order.
func Tools(readOnly bool) ([]string, error) {
	specs, err := wsfs.ToolSpecs()
	if err != nil {
		return nil, err
	}
	return names(specs, readOnly), nil
}

func names(specs []wsfs.ToolSpec, readOnly bool) []string {
	var names []string
	for _, s := range specs {
		if !slices.Contains(wsfs.ExecToolNames, s.Name) && (!readOnly || s.ReadOnly()) {
			names = append(names, s.Name)
		}
	}
	return names
}

// mcpTool converts a library spec into an MCP tool: the schema is passed as
// raw JSON, the annotations are decoded field by field (the SDK's type
// knows the MCP hint names, which are the library's).
func mcpTool(spec wsfs.ToolSpec) (*mcp.Tool, error) {
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(spec.Parameters, &probe); err != nil || probe.Type != "object" {
		return nil, fmt.Errorf("mcpserver: the library's schema of %s is not a JSON object schema", spec.Name)
	}
	tool := &mcp.Tool{
		Name:        spec.Name,
		Description: spec.Description,
		InputSchema: spec.Parameters,
	}
	if len(spec.Annotations) > 0 && string(spec.Annotations) != "null" {
		tool.Annotations = new(mcp.ToolAnnotations)
		if err := json.Unmarshal(spec.Annotations, tool.Annotations); err != nil {
			return nil, fmt.Errorf("mcpserver: the library's annotations of %s: %w", spec.Name, err)
		}
	}
	return tool, nil
}

// handler runs one tool through the library and converts its envelope.
func handler(ws *wsfs.Workspace, name string, structured bool) mcp.ToolHandler {
	convert := Result
	if structured {
		convert = StructuredResult
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := "{}"
		if req != nil && req.Params != nil {
			if a := strings.TrimSpace(string(req.Params.Arguments)); a != "" && a != "null" {
				args = a
			}
		}
		// The error is in the envelope too; the envelope is what we send.
		raw, _ := ws.CallRaw(ctx, name, args)
		return convert(raw), nil
	}
}

// profileHandler runs one tool of a profile workspace: the text is the
// profile's envelope (the host's model was designed to read it), isError
// when it says the call failed.
func profileHandler(ws *wsfs.Workspace, name string, structured bool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := "{}"
		if req != nil && req.Params != nil {
			if a := strings.TrimSpace(string(req.Params.Arguments)); a != "" && a != "null" {
				args = a
			}
		}
		raw, _ := ws.CallRaw(ctx, name, args)
		return ProfileResult(raw, structured), nil
	}
}

// ProfileResult converts a profile's envelope into an MCP tool result: the
// envelope as the text, isError when its "ok" or "success" is false, and
// with structured the envelope as structuredContent.
func ProfileResult(envelopeJSON string, structured bool) *mcp.CallToolResult {
	if !json.Valid([]byte(envelopeJSON)) {
		return errorResult(ErrorInfo{Code: string(wsfs.CodeIOError), Message: "malformed result from the wsfs library"}, "", structured)
	}
	failed, _ := wsfs.EnvelopeFailed(envelopeJSON)
	res := &mcp.CallToolResult{IsError: failed, Content: []mcp.Content{&mcp.TextContent{Text: envelopeJSON}}}
	if structured {
		res.StructuredContent = json.RawMessage(envelopeJSON)
	}
	return res
}

// envelope is the library's result envelope, as CallRaw returns it.
type envelope struct {
	OK    bool            `json:"ok"`
	Data  json.RawMessage `json:"data"`
	Text  string          `json:"text"`
	Error *ErrorInfo      `json:"error"`
}

// ErrorInfo is the library's error: a stable code and a message. With
// Options.StructuredContent, a failed call's structuredContent is
// {"error": ErrorInfo}.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Result converts a library envelope into the MCP tool result New sends by
// default: the envelope's text as one text item, isError for a failure, no
// structuredContent (see the package documentation).
func Result(envelopeJSON string) *mcp.CallToolResult {
	return result(envelopeJSON, false)
}

// StructuredResult is Result with structuredContent: the envelope's data
// object on success, {"error": ErrorInfo} on failure. New sends it with
// Options.StructuredContent.
func StructuredResult(envelopeJSON string) *mcp.CallToolResult {
	return result(envelopeJSON, true)
}

func result(envelopeJSON string, structured bool) *mcp.CallToolResult {
	var env envelope
	if err := json.Unmarshal([]byte(envelopeJSON), &env); err != nil || (!env.OK && env.Error == nil) {
		return errorResult(ErrorInfo{Code: string(wsfs.CodeIOError), Message: "malformed result from the wsfs library"}, "", structured)
	}
	if !env.OK {
		return errorResult(*env.Error, env.Text, structured)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: env.Text}}}
	if d := strings.TrimSpace(string(env.Data)); structured && strings.HasPrefix(d, "{") {
		res.StructuredContent = env.Data
	}
	return res
}

func errorResult(e ErrorInfo, text string, structured bool) *mcp.CallToolResult {
	if text == "" {
		text = e.Code + ": " + e.Message
	}
	res := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: text}},
	}
	if structured {
		res.StructuredContent = map[string]ErrorInfo{"error": e}
	}
	return res
}

// ServeStdio serves New's server on standard input and output until the
// client disconnects (nil) or ctx ends (ctx.Err()). Nothing else may write
// to stdout meanwhile.
func ServeStdio(ctx context.Context, ws *wsfs.Workspace, opts Options) error {
	server, err := New(ws, opts)
	if err != nil {
		return err
	}
	return server.Run(ctx, &mcp.StdioTransport{MaxLineLength: maxLineLength(ws.Limits())})
}

// maxLineLength bounds one JSON-RPC message: room for the largest argument
// object the library accepts (max(6 × max_write_bytes + 1 MiB, 16 MiB),
// which fits any content of max_write_bytes however it is escaped) plus the
// JSON-RPC framing. The library refuses anything larger as too_large anyway.
func maxLineLength(l wsfs.Limits) int {
	n := 6*l.MaxWriteBytes + 1<<20
	if n < 16<<20 {
		n = 16 << 20
	}
	return n + 64<<10
}
