package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/mcpserver"
)

const callUsage = `usage: wsfs call [--workspace DIR] [--create-root] [--config FILE] [--profile NAME]
                 [--read-only] [--timeout D] [--json] [-v] ['CALL' | -]

Runs one tool call as a model API hands it over, whole (docs/dispatch.md):
{"tool_call": {"name": ..., "arguments": {...}}}, the bare {"name": ...,
"arguments": {...}}, or either without arguments; arguments may also be a
JSON string holding the object. CALL - or no CALL reads it from stdin.
Built-in and Wasm tools (the config's "wasm_tools") are run alike; under a
profile, by the profile's names, with its envelope.

The workspace is opened like wsfs mcp's: --config is the library's
workspace configuration JSON, --workspace overrides its root, and
TOOL_RUNTIME, TOOL_TIMEOUT_SECS, TOOL_MEMORY_MB, TOOL_ALLOW_DIRECT_NETWORK,
WORKSPACE_FS_MODE and WORKSPACE_FS_SESSION apply (see .env.example).

Prints the tool's text (an error on stderr); --json prints the library's
envelope instead (under a profile, the profile's envelope is printed as
is). Exit status: 0 ok, 1 an error envelope (a malformed call included:
invalid_arguments says what is wrong), 2 usage error or a workspace that
cannot be opened.

flags:
`

// runCall is `wsfs call`.
func runCall(ctx context.Context, args []string, jsonOut bool, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wsfs call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonFlag := fs.Bool("json", false, "print the library's envelope instead of the tool's text")
	createRoot := fs.Bool("create-root", false, "make the root (and its parents) when it is missing")
	root := fs.String("workspace", "", "workspace root directory (overrides the config file's root)")
	configFile := fs.String("config", "", "workspace configuration JSON file")
	profile := fs.String("profile", "", "the workspace's profile (overrides the config's)")
	readOnly := fs.Bool("read-only", false, "refuse every changing tool with writes_disabled")
	timeout := fs.Duration("timeout", 0, "bound the call (default: the workspace's timeouts)")
	verbose := fs.Bool("v", false, "log the call to stderr")
	fs.Usage = func() {} // help goes to stdout, errors get badFlags's pointer
	rest, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout, callUsage, fs)
		return 0
	}
	if err != nil {
		return badFlags(stderr, fs)
	}
	if len(rest) > 1 {
		return callUsageError(stderr, "too many arguments: quote the call as one word")
	}
	call := "-"
	if len(rest) == 1 {
		call = rest[0]
	}
	if call == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return callUsageError(stderr, "reading stdin: "+err.Error())
		}
		call = string(b)
	}
	cfg, err := callConfig(*configFile, *root, *profile, *readOnly)
	if err == nil && *createRoot {
		cfg, err = withCreateRoot(cfg)
	}
	if err != nil {
		return callUsageError(stderr, err.Error())
	}
	var logger *slog.Logger
	if *verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	ws, err := wsfs.OpenJSON(cfg, logger)
	if err != nil {
		fmt.Fprintln(stderr, "wsfs call:", openErrText(err, "--create-root"))
		return 2
	}
	defer ws.Close()
	for _, w := range ws.Warnings() {
		fmt.Fprintln(stderr, "wsfs: warning:", w)
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	env, err := ws.Dispatch(ctx, call)
	if printEnvelope(stdout, stderr, env, jsonOut || *jsonFlag, "wsfs call", nil) || err != nil {
		return 1
	}
	return 0
}

// callConfig is the workspace configuration of `wsfs call`: the --config
// file and --workspace as wsfs mcp makes it, the environment, then
// --profile and --read-only.
func callConfig(configFile, root, profile string, readOnly bool) ([]byte, error) {
	var file []byte
	if configFile != "" {
		b, err := os.ReadFile(configFile)
		if err != nil {
			return nil, fmt.Errorf("reading --config: %w", err)
		}
		file = b
	}
	cfg, err := mcpserver.WorkspaceConfig(file, root)
	if err == nil {
		cfg, err = wsfs.ApplyToolEnv(cfg, os.LookupEnv)
	}
	if err == nil && profile != "" {
		var top map[string]json.RawMessage
		if err = json.Unmarshal(cfg, &top); err == nil {
			top["profile"], _ = json.Marshal(profile)
			cfg, err = json.Marshal(top)
		}
	}
	if err == nil && readOnly {
		cfg, err = mcpserver.ReadOnlyConfig(cfg)
	}
	return cfg, err
}

func callUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "wsfs call: %s (see wsfs call -h)\n", msg)
	return 2
}
