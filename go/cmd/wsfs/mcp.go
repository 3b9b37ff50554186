package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/mcpserver"
)

const mcpUsage = `usage: wsfs mcp --root DIR [--create-root] [--read-only] [--config FILE] [--structured-content] [-v] [--sdk-log]

Serves the wsfs tools to an MCP client over stdio (stdin/stdout carry the
protocol; diagnostics go to stderr). --config is the library's workspace
configuration JSON ({"root", "restrict_to_workspace", "limits", ...});
--root overrides its root. A relative root is taken from the working
directory the MCP host starts the server in, which the host chooses: give
an absolute path (the startup line on stderr shows the root in use). A
root that does not exist is refused unless --create-root (or the config's
"create_root": true) makes it.
--read-only offers only the tools whose annotations say readOnlyHint, and
sets the policy's writes_enabled to false; a --config policy with
"writes_enabled": false offers only those tools too. A result is the library's text
(what the model should read, hints and warnings included), with isError
for a failure; --structured-content adds structuredContent (the result's
data, or {"error": {"code", "message"}}) for clients that use it. -v logs
one line per tool call; --sdk-log adds the MCP SDK's own info lines
(connections, sessions); its warnings and errors are always logged.
The environment's TOOL_RUNTIME, TOOL_TIMEOUT_SECS, TOOL_MEMORY_MB,
TOOL_ALLOW_DIRECT_NETWORK, WORKSPACE_FS_MODE and WORKSPACE_FS_SESSION apply to
the configuration (see .env.example); the config's "wasm_tools" adds Wasm
tools, and MODEL_PROVIDER, MODEL_BASE_URL, MODEL_API_KEY_ENV,
MODEL_TIMEOUT_SECS and MODEL_NAME (or the config's "model_gateway") the
model gateway they reach (docs/model-gateway.md). In overlay mode (WORKSPACE_FS_MODE=overlay or the config's "mode") the
client's tools work on a session over the root, which stays unchanged: the
session operations are the host's, not tools; the server holds the session
while it runs, so run wsfs session diff|commit|... (same root, config and
session) after it exits.

flags:
`

// runMCP is `wsfs mcp`. serve is mcpserver.ServeStdio, replaced in tests.
func runMCP(ctx context.Context, args []string, stderr io.Writer,
	serve func(context.Context, *wsfs.Workspace, mcpserver.Options) error) int {
	fs := flag.NewFlagSet("wsfs mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "", "workspace root directory (overrides the config file's root)")
	readOnly := fs.Bool("read-only", false, "offer only the read-only tools")
	configFile := fs.String("config", "", "workspace configuration JSON file")
	createRoot := fs.Bool("create-root", false, "make the root (and its parents) when it is missing (the config's create_root)")
	structured := fs.Bool("structured-content", false, "add structuredContent (the result's data, or the error's code and message) to every result")
	verbose := fs.Bool("v", false, "log one line per tool call to stderr")
	sdkLog := fs.Bool("sdk-log", false, "also log the MCP SDK's own info lines (connections, sessions) to stderr")
	fs.Usage = func() {
		fmt.Fprint(stderr, mcpUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		return mcpUsageError(stderr, "no arguments besides the flags: "+strings.Join(fs.Args(), " "))
	}
	var file []byte
	if *configFile != "" {
		b, err := os.ReadFile(*configFile)
		if err != nil {
			return mcpUsageError(stderr, "reading --config: "+err.Error())
		}
		file = b
	}
	cfg, err := mcpserver.WorkspaceConfig(file, *root)
	if err == nil {
		// TOOL_RUNTIME, TOOL_TIMEOUT_SECS, TOOL_MEMORY_MB, TOOL_ALLOW_DIRECT_NETWORK,
		// WORKSPACE_FS_MODE, WORKSPACE_FS_SESSION, MODEL_* (.env.example).
		cfg, err = wsfs.ApplyToolEnv(cfg, os.LookupEnv)
	}
	if err == nil && *readOnly {
		cfg, err = mcpserver.ReadOnlyConfig(cfg)
	}
	if err == nil && *createRoot {
		cfg, err = withCreateRoot(cfg)
	}
	if err != nil {
		return mcpUsageError(stderr, configErrText(err, nil, file, *configFile))
	}

	logger := slog.New(slog.NewTextHandler(stderr, nil))
	var callLogger *slog.Logger
	if *verbose {
		callLogger = logger
	}
	// The SDK logs every connection and session at info level: noise next
	// to -v's tool calls, so only --sdk-log shows those.
	sdkLevel := slog.LevelWarn
	if *sdkLog {
		sdkLevel = slog.LevelInfo
	}
	sdkLogger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: sdkLevel}))
	ws, err := wsfs.OpenJSON(cfg, callLogger)
	if err != nil {
		fmt.Fprintln(stderr, "wsfs mcp:", configErrText(openError(err, "--create-root"), cfg, file, *configFile))
		return 2
	}
	defer ws.Close()
	for _, w := range ws.Warnings() {
		logger.Warn("wsfs mcp: " + w)
	}
	if *root != "" && !filepath.IsAbs(*root) && !strings.HasPrefix(*root, "~") {
		logger.Warn("wsfs mcp: --root is relative, so it was taken from the working directory the MCP host started the server in",
			"root", *root, "resolved", ws.Root())
	}
	opts := mcpserver.Options{ReadOnly: *readOnly, StructuredContent: *structured, Logger: sdkLogger}
	tools, _ := mcpserver.ToolsFor(ws, opts)
	// read-only by the flag, or by the --config policy (which --read-only sets too)
	logger.Info("wsfs mcp: serving on stdio", "root", ws.Root(), "read_only", !*ws.Policy().WritesEnabled,
		"mode", ws.Mode(), "session", ws.Session(),
		"structured_content", *structured, "tools", strings.Join(tools, ","))

	err = serve(ctx, ws, opts)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(stderr, "wsfs mcp:", err)
		return 1
	}
	return 0
}
