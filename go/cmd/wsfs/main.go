// Command wsfs runs the wsfs workspace tools from the command line.
//
//	wsfs [flags] TOOL ['JSON'] -workspace DIR run one tool, print its text
//	wsfs tools                                list the tools
//	wsfs version                              print the library version
//	wsfs demo                                 run the agent demo
//	wsfs mcp --root DIR [--read-only] [--config FILE]
//	                                          serve the tools over MCP (stdio)
//	wsfs tool new|build|list|run|test ...     make, build, inspect and try Wasm tools
//	wsfs session diff|commit|checkpoint|rewind|checkpoints|discard|refresh ...
//	                                          the host's operations on an overlay session
//	wsfs audit replay LOG --root COPY [--config FILE]
//	                                          re-run an audit log's calls on a copy
//	wsfs help [COMMAND | TOOL]                help on stdout
//
// It follows git's, cargo's and go's habits: help (-h, --help, wsfs help
// CMD) on stdout with exit 0; flags before or after the positional
// arguments; text for a person by default and --json, on every command,
// for scripts; errors on stderr with one "wsfs ...:" prefix. docs/cli.md
// has examples (run as written by make test) and the exit status of each
// command: 0 ok, 1 the tool (test, replay, commit) failed, 2 a usage error
// or a workspace that cannot be opened.
//
// A tool run works on the overlay session WORKSPACE_FS_SESSION (default
// "default") under WORKSPACE_FS_MODE=overlay; `wsfs session` reviews and
// commits it. Every TOOL_* and WORKSPACE_FS_* variable is checked. A missing
// -workspace DIR is refused unless --create-root makes it.
//
// The demo uses a scripted model unless WSFS_MODEL_URL and WSFS_MODEL name
// an OpenAI-compatible endpoint and model (see go/README.md).
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
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/internal/demo"
	"github.com/wsfs/wsfs/go/mcpserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  wsfs [flags] TOOL ['JSON'] -workspace DIR  run one tool in the workspace DIR
  wsfs tools                                 list the tools (--json: their specs)
  wsfs version                               print the library version
  wsfs demo                                  run the agent demo
  wsfs mcp --root DIR [--read-only] [--config FILE]
                                             serve the tools over MCP (stdio)
  wsfs tool new|build|list|run|test ...      make, build, inspect and try Wasm tools
  wsfs session diff|commit|checkpoint|rewind|checkpoints|discard|refresh ...
                                             review and commit an overlay session
  wsfs audit replay LOG --root COPY [--config FILE]
                                             re-run an audit log's calls on a copy
  wsfs call -workspace DIR ['CALL' | -]      run a model's whole tool call
                                             ({"tool_call": {"name", "arguments"}})
  wsfs help [COMMAND | TOOL]                 this help, or a command's or a tool's

TOOL: %s.
JSON: the tool's arguments (default {}; - reads them from stdin).
Flags go before or after TOOL. The output is the tool's text (errors on
stderr); --json prints the library's envelope instead, for scripts, and
works on every command. A missing -workspace DIR is refused unless
--create-root makes it. A tool run works on an overlay session under
WORKSPACE_FS_MODE=overlay (WORKSPACE_FS_SESSION names it; wsfs session
commits it); the other TOOL_* variables of .env.example are checked too.
With -profile NAME, TOOL and JSON are the profile's and so is the envelope
(printed as is). docs/cli.md has examples.

Exit status: 0 ok, 1 the tool returned an error, 2 usage error (unknown
tool or command, bad flags or environment, a workspace that cannot be
opened).`

// commandHelp is what `wsfs help CMD` and `wsfs CMD -h` print for the
// commands without flags of their own.
var commandHelp = map[string]string{
	"tools":   "usage: wsfs tools [--json]\n\nLists the built-in tools, one per line with the first sentence of its\ndescription; --json prints their specs (name, description, parameters).\nwsfs help TOOL prints one tool's whole description and arguments.",
	"version": "usage: wsfs version [--json]\n\nPrints the library's version and C ABI version.",
	"demo":    "usage: wsfs demo [--max-tool-iterations N] [-v]\n\nRuns the agent demo in a temporary workspace, with a scripted model unless\nWSFS_MODEL_URL and WSFS_MODEL name an OpenAI-compatible endpoint and model\n(go/README.md). Exit status: 0 ok, 1 the demo failed, 2 a bad model setting.",
}

// newMainFlags is the flag set of wsfs itself (tool runs, tools, version, demo).
type mainFlags struct {
	fs                                *flag.FlagSet
	workspace, auditLog, profile      *string
	unrestricted, readOnly, auditArgs *bool
	jsonOut, createRoot, verbose      *bool
	timeout                           *time.Duration
	maxIter                           *int
}

func newMainFlags(stderr io.Writer) *mainFlags {
	fs := flag.NewFlagSet("wsfs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // help goes to stdout, errors get badFlags's pointer
	return &mainFlags{
		fs:           fs,
		workspace:    fs.String("workspace", "", "workspace root directory (required to run a tool)"),
		createRoot:   fs.Bool("create-root", false, "make the -workspace directory (and its parents) when it is missing"),
		jsonOut:      fs.Bool("json", false, "print the library's JSON (the envelope, the specs, the version) instead of text"),
		unrestricted: fs.Bool("unrestricted", false, "do not confine paths to the workspace (restrict_to_workspace=false)"),
		timeout:      fs.Duration("timeout", 0, "operation timeout (default: the library's 10s)"),
		readOnly:     fs.Bool("read-only", false, "refuse every changing tool with writes_disabled (policy writes_enabled=false)"),
		auditLog:     fs.String("audit-log", "", "append one JSON line per call to this file (policy audit_log)"),
		auditArgs:    fs.Bool("audit-arguments", false, "the audit line records the call's arguments, content hashed (policy audit_arguments; for wsfs audit replay)"),
		profile:      fs.String("profile", "", "run TOOL under this profile's names and envelope (miniclaw, filesystem-tool, agent-base, capability-plan)"),
		maxIter:      fs.Int("max-tool-iterations", 0, "demo: tool-iteration limit (default 10)"),
		verbose:      fs.Bool("v", false, "log one line per tool call to stderr"),
	}
}

func (m *mainFlags) printHelp(w io.Writer) {
	printUsage(w, fmt.Sprintf(usage, strings.Join(wsfs.ToolNames, ", ")), m.fs)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	m := newMainFlags(stderr)
	fs := m.fs
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			m.printHelp(stdout)
			return 0
		}
		return badFlags(stderr, fs)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		m.printHelp(stderr)
		return 2
	}
	var logger *slog.Logger
	if *m.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}

	switch cmd := rest[0]; cmd {
	case "help":
		return runHelp(ctx, m, rest[1:], stdin, stdout, stderr)

	case "tools", "version", "demo":
		// Their flags (--json, demo's) may follow the command too.
		more, err := parseFlags(fs, rest[1:])
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, commandHelp[cmd])
			return 0
		}
		if err != nil {
			return badFlags(stderr, fs)
		}
		if len(more) != 0 {
			return usageError(stderr, cmd+" takes no arguments")
		}
		switch cmd {
		case "tools":
			return printTools(stdout, *m.jsonOut)
		case "version":
			return printVersion(stdout, stderr, *m.jsonOut)
		}
		model, err := demo.ModelFromEnv(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "wsfs demo:", errText(err))
			return 2
		}
		if _, err := demo.Run(ctx, demo.Options{Out: stdout, Model: model, MaxToolIterations: *m.maxIter, Logger: logger}); err != nil {
			fmt.Fprintln(stderr, "wsfs demo:", errText(err))
			return 1
		}
		if _, err := demo.RunOverlay(ctx, demo.Options{Out: stdout, Model: model, Logger: logger}); err != nil {
			fmt.Fprintln(stderr, "wsfs demo: overlay run:", errText(err))
			return 1
		}
		return 0

	case "mcp":
		if wantsHelp(rest[1:]) {
			return runMCP(ctx, []string{"-h"}, stdout, mcpserver.ServeStdio)
		}
		return runMCP(ctx, rest[1:], stderr, mcpserver.ServeStdio)

	case "tool":
		return runTool(ctx, passJSON(rest[1:], *m.jsonOut), stdout, stderr)

	case "session":
		return runSession(ctx, passJSON(rest[1:], *m.jsonOut), stdin, stdout, stderr)

	case "audit":
		return runAudit(ctx, passJSON(rest[1:], *m.jsonOut), stdout, stderr)

	case "call": // a model's whole tool call (call.go)
		return runCall(ctx, rest[1:], *m.jsonOut, stdin, stdout, stderr)

	default:
		// Under a profile the workspace knows its tools; natively, the names are checked here.
		if *m.profile == "" && !slices.Contains(wsfs.ToolNames, cmd) {
			return usageError(stderr, fmt.Sprintf("unknown command or tool %q", cmd))
		}
		// The flags may follow the tool's name and its JSON, as git's and go's do.
		more, err := parseFlags(fs, rest[1:])
		if errors.Is(err, flag.ErrHelp) {
			return printToolHelp(stdout, stderr, cmd, *m.profile)
		}
		if err != nil {
			return badFlags(stderr, fs)
		}
		return runOneTool(ctx, m, cmd, more, stdin, stdout, stderr, logger)
	}
}

// runOneTool is `wsfs [flags] TOOL ['JSON']`.
func runOneTool(ctx context.Context, m *mainFlags, tool string, rest []string, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger) int {
	if *m.workspace == "" {
		return usageError(stderr, "-workspace DIR is required to run a tool")
	}
	if len(rest) > 1 {
		return usageError(stderr, "too many arguments: quote the JSON arguments as one word")
	}
	argsJSON := "{}"
	if len(rest) == 1 {
		argsJSON = rest[0]
	}
	if argsJSON == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "wsfs: reading stdin:", err)
			return 2
		}
		argsJSON = string(b)
	}
	mode, session, err := modeFromEnv(os.LookupEnv)
	if err != nil {
		return usageError(stderr, errText(err))
	}
	ws, err := wsfs.Open(wsfs.Config{
		Root:                *m.workspace,
		CreateRoot:          *m.createRoot,
		RestrictToWorkspace: wsfs.Bool(!*m.unrestricted),
		Limits:              wsfs.Limits{OperationTimeout: *m.timeout},
		Policy:              policy(*m.readOnly, *m.auditLog, *m.auditArgs),
		Logger:              logger,
		Mode:                mode,
		Session:             session,
		Profile:             *m.profile,
	})
	if err != nil {
		fmt.Fprintln(stderr, "wsfs:", openErrText(err, "--create-root"))
		return 2
	}
	defer ws.Close()
	for _, w := range ws.Warnings() {
		fmt.Fprintln(stderr, "wsfs: warning:", w)
	}
	env, err := ws.CallRaw(ctx, tool, argsJSON)
	if printEnvelope(stdout, stderr, env, *m.jsonOut, "wsfs "+tool, nil) || err != nil {
		return 1
	}
	return 0
}

// runHelp is `wsfs help [COMMAND | TOOL]`: help on stdout, exit 0.
func runHelp(ctx context.Context, m *mainFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		m.printHelp(stdout)
		return 0
	}
	if len(args) > 1 {
		return usageError(stderr, "help takes one COMMAND or TOOL")
	}
	switch cmd := args[0]; cmd {
	case "help":
		m.printHelp(stdout)
		return 0
	case "tools", "version", "demo":
		fmt.Fprintln(stdout, commandHelp[cmd])
		return 0
	case "mcp":
		return runMCP(ctx, []string{"-h"}, stdout, mcpserver.ServeStdio)
	case "tool":
		return runTool(ctx, []string{"-h"}, stdout, stderr)
	case "session":
		return runSession(ctx, []string{"-h"}, stdin, stdout, stderr)
	case "audit":
		return runAudit(ctx, []string{"-h"}, stdout, stderr)
	case "call":
		return runCall(ctx, []string{"-h"}, false, stdin, stdout, stderr)
	default:
		if !slices.Contains(wsfs.ToolNames, cmd) {
			return usageError(stderr, fmt.Sprintf("no help for %q: not a command or tool", cmd))
		}
		return printToolHelp(stdout, stderr, cmd, "")
	}
}

// printTools is `wsfs tools`: names and first sentences, or (--json) the specs.
func printTools(stdout io.Writer, jsonOut bool) int {
	raw := wsfs.ToolSpecsJSON()
	var specs []map[string]any
	if err := json.Unmarshal([]byte(raw), &specs); err != nil {
		fmt.Fprintln(stdout, raw)
		return 0
	}
	if jsonOut {
		printJSON(stdout, specs)
		return 0
	}
	width := 0
	for _, s := range specs {
		width = max(width, len(fmt.Sprint(s["name"])))
	}
	for _, s := range specs {
		fmt.Fprintf(stdout, "%-*s  %s\n", width, s["name"], firstSentence(fmt.Sprint(s["description"])))
	}
	return 0
}

// printToolHelp is `wsfs help TOOL` and `wsfs TOOL -h`: the tool's description
// and arguments as the model reads them.
func printToolHelp(stdout, stderr io.Writer, tool, profile string) int {
	if profile != "" {
		return usageError(stderr, "help for a profile's tool: wsfs -profile "+profile+" list its tools with the library's workspace_tool_specs")
	}
	var specs []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal([]byte(wsfs.ToolSpecsJSON()), &specs); err != nil {
		fmt.Fprintln(stderr, "wsfs: the tool specs are not JSON:", err)
		return 1
	}
	for _, s := range specs {
		if s.Name != tool {
			continue
		}
		fmt.Fprintf(stdout, "usage: wsfs %s ['JSON'] -workspace DIR [flags]\n\n%s\n\nJSON arguments (JSON Schema):\n", tool, s.Description)
		var params any
		_ = json.Unmarshal(s.Parameters, &params)
		printJSON(stdout, params)
		return 0
	}
	return usageError(stderr, fmt.Sprintf("unknown tool %q", tool))
}

// firstSentence is s up to its first ". " that is not an abbreviation's
// (or its first line).
func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	for from := 0; ; {
		i := strings.Index(s[from:], ". ")
		if i < 0 {
			return s
		}
		end := from + i + 1
		if !strings.HasSuffix(s[:end], "e.g.") && !strings.HasSuffix(s[:end], "i.e.") {
			return s[:end]
		}
		from = end
	}
}

// printVersion is `wsfs version`.
func printVersion(stdout, stderr io.Writer, jsonOut bool) int {
	v, err := wsfs.Version()
	if err != nil {
		fmt.Fprintln(stderr, "wsfs:", errText(err))
		return 1
	}
	b, _ := json.Marshal(v)
	if jsonOut {
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	var fields map[string]any
	_ = json.Unmarshal(b, &fields)
	fmt.Fprintf(stdout, "wsfs %v (C ABI %v)\n", fields["version"], fields["abi"])
	return 0
}

// policy is the workspace policy the flags ask for (the library's defaults
// otherwise).
func policy(readOnly bool, auditLog string, auditArgs bool) wsfs.Policy {
	p := wsfs.Policy{AuditLog: auditLog, AuditArguments: auditArgs}
	if readOnly {
		p.WritesEnabled = wsfs.Bool(false)
	}
	return p
}

// modeFromEnv is the workspace mode and session of a tool run:
// WORKSPACE_FS_MODE and WORKSPACE_FS_SESSION. Every variable
// wsfs.ApplyToolEnv reads is checked, as wsfs mcp and wsfs tool run check
// them, so a bad TOOL_TIMEOUT_SECS is an error here too, not ignored.
func modeFromEnv(lookup func(string) (string, bool)) (wsfs.Mode, string, error) {
	raw, err := wsfs.ApplyToolEnv([]byte(`{}`), lookup)
	if err != nil {
		return "", "", err
	}
	var c struct {
		Mode    wsfs.Mode `json:"mode"`
		Session string    `json:"session"`
	}
	err = json.Unmarshal(raw, &c)
	return c.Mode, c.Session, err
}

func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "wsfs: %s (see 'wsfs -h')\n", strings.TrimPrefix(msg, "wsfs: "))
	return 2
}
