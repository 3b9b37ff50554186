package fantasytools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

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
	build func(ws *wsfs.Workspace, tc toolConfig) fantasy.AgentTool
}

// adapters has one entry per tool, each with the tool's Go input struct
// (which fantasy decodes the model's arguments into) and what its calls
// log. TestEveryToolIsAdapted checks it against wsfs.ToolNames.
var adapters = byName(
	adapt(wsfs.ToolReadFile, func(in wsfs.ReadFileInput) callInfo { return callInfo{path: in.Path} }),
	adapt(wsfs.ToolWriteFile, func(in wsfs.WriteFileInput) callInfo { return callInfo{path: in.Path, content: &in.Content} }),
	adapt(wsfs.ToolAppendFile, func(in wsfs.AppendFileInput) callInfo { return callInfo{path: in.Path, content: &in.Content} }),
	adapt(wsfs.ToolListDir, func(in wsfs.ListDirInput) callInfo { return callInfo{path: cmp.Or(in.Path, ".")} }),
	adapt(wsfs.ToolEditFile, func(in wsfs.EditFileInput) callInfo { return callInfo{path: in.Path} }),
	adapt(wsfs.ToolGetPathInfo, func(in wsfs.GetPathInfoInput) callInfo { return callInfo{path: in.Path} }),
	adapt(wsfs.ToolFindFiles, func(in wsfs.FindFilesInput) callInfo { return callInfo{path: cmp.Or(in.Path, ".")} }),
	adapt(wsfs.ToolSearchText, func(in wsfs.SearchTextInput) callInfo { return callInfo{path: cmp.Or(in.Path, ".")} }),
	adapt(wsfs.ToolApplyPatch, func(in wsfs.ApplyPatchInput) callInfo { return callInfo{path: patchPaths(in)} }),
	adapt(wsfs.ToolCreateDirectory, func(in wsfs.CreateDirectoryInput) callInfo { return callInfo{path: in.Path} }),
	adapt(wsfs.ToolMoveFile, func(in wsfs.MoveFileInput) callInfo { return callInfo{path: in.Src + " -> " + in.Dst} }),
	adapt(wsfs.ToolDeleteFile, func(in wsfs.DeleteFileInput) callInfo { return callInfo{path: in.Path} }),
	adapt(wsfs.ToolWorkspaceInfo, func(wsfs.WorkspaceInfoInput) callInfo { return callInfo{path: "."} }),
	adapt(wsfs.ToolGitStatus, func(wsfs.GitStatusInput) callInfo { return callInfo{path: "."} }),
	adapt(wsfs.ToolGitDiff, func(in wsfs.GitDiffInput) callInfo { return callInfo{path: pathList(in.Pathspec)} }),
	adapt(wsfs.ToolGitCommit, func(in wsfs.GitCommitInput) callInfo { return callInfo{path: pathList(in.Paths)} }),
	adapt(wsfs.ToolRunTests, func(wsfs.RunTestsInput) callInfo { return callInfo{path: "."} }),
	adapt(wsfs.ToolRunLint, func(in wsfs.CheckInput) callInfo { return callInfo{path: pathList(in.Paths)} }),
	adapt(wsfs.ToolTypecheck, func(in wsfs.CheckInput) callInfo { return callInfo{path: pathList(in.Paths)} }),
	adapt(wsfs.ToolSafeShell, func(in wsfs.SafeShellInput) callInfo { return callInfo{path: cmp.Or(in.Cwd, ".")} }),
	adapt(wsfs.ToolShell, func(in wsfs.ShellInput) callInfo { return callInfo{path: cmp.Or(in.Cwd, ".")} }),
)

// pathList names a developer tool's paths for its log record ("." for none).
func pathList(paths []string) string {
	if len(paths) == 0 {
		return "."
	}
	return strings.Join(paths, " ")
}

// adapt makes the adapter of the tool named name, whose input is In.
func adapt[In any](name string, info func(In) callInfo) adapter {
	return adapter{name: name, build: func(ws *wsfs.Workspace, tc toolConfig) fantasy.AgentTool {
		return withSpec(name, tc.parallelReads, func(ctx context.Context, in In, call fantasy.ToolCall) (fantasy.ToolResponse, error) {
			c := info(in)
			return respond(ctx, ws, tc, wsfs.ModelCall{Tool: name, Args: call.Input, Content: c.content, Path: c.path,
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
func patchPaths(in wsfs.ApplyPatchInput) string {
	if len(in.Files) == 0 {
		return "(patch)"
	}
	names := make([]string, len(in.Files))
	for i, f := range in.Files {
		names[i] = f.Path
	}
	return strings.Join(names, " ")
}

// respond is the body of every agent tool: the call, and its result as a
// fantasy response. A failure the model can correct is an error response
// with a nil Go error; one that ends the run (a closed workspace, the run's
// own context ending) also returns the error, which stops fantasy.
func respond(ctx context.Context, ws *wsfs.Workspace, tc toolConfig, c wsfs.ModelCall) (fantasy.ToolResponse, error) {
	var metrics wsfs.Metrics
	if tc.metrics {
		c.Metrics = &metrics
	}
	text, err := ws.CallForModel(ctx, c)
	resp := fantasy.NewTextResponse(text)
	if err != nil {
		resp = fantasy.NewTextErrorResponse(text)
	}
	withMetadata(&resp, metrics)
	return resp, fatal(ctx, err)
}

// withMetadata puts the call's metrics, when the library reported them, into
// the response's Metadata as JSON (WithMetrics).
func withMetadata(resp *fantasy.ToolResponse, metrics wsfs.Metrics) {
	if metrics.Tool == "" {
		return
	}
	if b, err := json.Marshal(metrics); err == nil {
		resp.Metadata = string(b)
	}
}

// fatal returns err when it must stop the run (the workspace was closed, or
// the run's own context ended), and nil for a failure the model can react
// to.
func fatal(ctx context.Context, err error) error {
	var e *wsfs.Error
	switch {
	case !errors.As(err, &e):
		return err
	case e.Code == wsfs.CodeInvalidWorkspace:
		return err
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		// The run's own context ended: stop the run.
		return err
	}
	return nil
}
