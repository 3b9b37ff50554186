package wsfs

import (
	"encoding/json"
	"runtime"
	"sync"
)

// ToolNames lists every tool the package has a typed method for, in the
// library's order (that of wsfs_tool_specs()). It is the one list of the
// tools on the Go side: the agent tools, the CLI and the runner's prompt
// follow it, and TestToolNamesAreTheLibrarys checks it against the library.
var ToolNames = []string{
	ToolReadFile, ToolWriteFile, ToolAppendFile, ToolListDir, ToolEditFile, ToolGetPathInfo,
	ToolFindFiles, ToolSearchText, ToolApplyPatch, ToolCreateDirectory, ToolMoveFile, ToolDeleteFile,
	// The developer tools (ExecToolNames), off unless Policy.ExecEnabled.
	ToolWorkspaceInfo, ToolGitStatus, ToolGitDiff, ToolGitCommit, ToolRunTests, ToolRunLint,
	ToolTypecheck, ToolSafeShell, ToolShell,
}

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

// ToolSpecs returns the tools this workspace offers
// (wsfs_workspace_tool_specs): its profile's names, schemas and defaults,
// without the tools its policy refuses whatever the arguments (every
// changing tool when the policy disables writes, the developer tools while
// their exec switch is off, those allow_tools/deny_tools leave out). For
// the native profile they are entries of the package-level ToolSpecs
// followed by the workspace's Wasm tools (WasmTools), each with its
// manifest's description and input schema; another profile offers no Wasm
// tools.
func (ws *Workspace) ToolSpecs() ([]ToolSpec, error) {
	if ws.closed.Load() {
		return nil, newError("tool_specs", CodeInvalidWorkspace, "the workspace is closed")
	}
	raw := cWorkspaceToolSpecs(ws.handle)
	runtime.KeepAlive(ws)
	var data struct {
		Tools []ToolSpec `json:"tools"`
	}
	env, perr := parseEnvelope("tool_specs", raw, outputFull, &data)
	if perr != nil {
		return nil, perr
	}
	if !env.OK {
		return nil, env.err("tool_specs", nil)
	}
	return data.Tools, nil
}

// ToolInstructions returns wsfs_tool_instructions(): what a host tells
// the model once, beside the tools (a system prompt, an MCP server's
// instructions): how every path argument is read. Each spec's description
// keeps only the clause "Paths are relative to the workspace root.".
func ToolInstructions() string { return cToolInstructions() }

// ReadOnly reports whether the spec's annotations say the tool never
// changes anything.
func (s ToolSpec) ReadOnly() bool {
	var a struct {
		ReadOnly bool `json:"readOnlyHint"`
	}
	_ = json.Unmarshal(s.Annotations, &a)
	return a.ReadOnly
}
