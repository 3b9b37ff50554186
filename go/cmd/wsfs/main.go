// Command wsfs runs the wsfs workspace tools from the command line.
//
//	wsfs tools                                print the tool specs (JSON)
//	wsfs version                              print the library version (JSON)
//	wsfs [flags] -workspace DIR TOOL ['JSON'] run one tool, print its envelope
//	wsfs [flags] demo                         run the agent demo
//	wsfs mcp --root DIR [--read-only] [--config FILE]
//	                                          serve the tools over MCP (stdio)
//	wsfs tool new|build|list|run|test ...     make, build, inspect and try Wasm tools
//	wsfs session diff|commit|checkpoint|rewind|checkpoints|discard|refresh ...
//	                                          the host's operations on an overlay session
//	wsfs audit replay LOG --root COPY [--config FILE]
//	                                          re-run an audit log's calls on a copy
//
// TOOL is any tool `wsfs tools` lists (read_file, list_dir, ...); JSON is
// its arguments (default "{}"; "-" reads them from standard input). The
// envelope is printed exactly as the library returns it.
//
// Exit status: 0 when the tool succeeded (or the MCP client disconnected),
// 1 when it returned an error envelope (or the MCP server failed), 2 for
// usage errors (unknown tool or command, missing
// -workspace, bad flags, a workspace that cannot be opened).
//
// A tool run works on the overlay session WORKSPACE_FS_SESSION (default
// "default") under WORKSPACE_FS_MODE=overlay; `wsfs session` reviews and
// commits it.
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
  wsfs tools                                 print the tool specs (JSON)
  wsfs version                               print the library version (JSON)
  wsfs [flags] -workspace DIR TOOL ['JSON']  run one tool and print its envelope
  wsfs [flags] demo                          run the agent demo
  wsfs mcp --root DIR [--read-only] [--config FILE]
                                             serve the tools over MCP (stdio);
                                             see wsfs mcp -h
  wsfs tool new|build|list|run|test ...      make, build, inspect and try Wasm
                                             tools; see wsfs tool -h
  wsfs session diff|commit|checkpoint|rewind|checkpoints|discard|refresh ...
                                             the host's operations on an overlay
                                             session; see wsfs session -h
  wsfs audit replay LOG --root COPY [--config FILE]
                                             re-run an audit log's calls (logged
                                             with audit_arguments) on a copy and
                                             report where the outcomes differ;
                                             see wsfs audit -h

TOOL: %s.
JSON: the tool's arguments (default {}; - reads them from stdin).
A tool run works on an overlay session under WORKSPACE_FS_MODE=overlay
(WORKSPACE_FS_SESSION names it; wsfs session commits it). With -profile NAME,
TOOL and JSON are the profile's and the envelope is the profile's.
Exit status: 0 ok, 1 tool error, 2 usage error.

flags:
`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wsfs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workspace := fs.String("workspace", "", "workspace root directory (required to run a tool)")
	unrestricted := fs.Bool("unrestricted", false, "do not confine paths to the workspace (restrict_to_workspace=false)")
	timeout := fs.Duration("timeout", 0, "operation timeout (default: the library's 10s)")
	readOnly := fs.Bool("read-only", false, "refuse every changing tool with writes_disabled (policy writes_enabled=false)")
	auditLog := fs.String("audit-log", "", "append one JSON line per call to this file (policy audit_log)")
	auditArgs := fs.Bool("audit-arguments", false, "the audit line records the call's arguments, content hashed (policy audit_arguments; for wsfs audit replay)")
	profile := fs.String("profile", "", "run TOOL under this profile's names and envelope (miniclaw, filesystem-tool, agent-base, capability-plan)")
	maxIter := fs.Int("max-tool-iterations", 0, "demo: tool-iteration limit (default 10)")
	verbose := fs.Bool("v", false, "log one line per tool call to stderr")
	fs.Usage = func() {
		fmt.Fprintf(stderr, usage, strings.Join(wsfs.ToolNames, ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return 2
	}
	var logger *slog.Logger
	if *verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}

	switch cmd := rest[0]; cmd {
	case "tools":
		if len(rest) != 1 {
			return usageError(stderr, "tools takes no arguments")
		}
		var buf strings.Builder
		raw := wsfs.ToolSpecsJSON()
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			fmt.Fprintln(stdout, raw)
			return 0
		}
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
		fmt.Fprint(stdout, buf.String())
		return 0

	case "version":
		v, err := wsfs.Version()
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		b, _ := json.Marshal(v)
		fmt.Fprintln(stdout, string(b))
		return 0

	case "mcp":
		return runMCP(ctx, rest[1:], stderr, mcpserver.ServeStdio)

	case "tool":
		return runTool(ctx, rest[1:], stdout, stderr)

	case "session":
		return runSession(ctx, rest[1:], stdin, stdout, stderr)

	case "call": // a model's whole tool call (call.go)
		return runCall(ctx, rest[1:], stdin, stdout, stderr)

	case "audit":
		return runAudit(ctx, rest[1:], stdout, stderr)

	case "demo":
		if len(rest) != 1 {
			return usageError(stderr, "demo takes no arguments")
		}
		model, err := demo.ModelFromEnv(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "wsfs demo:", err)
			return 2
		}
		if _, err := demo.Run(ctx, demo.Options{Out: stdout, Model: model, MaxToolIterations: *maxIter, Logger: logger}); err != nil {
			fmt.Fprintln(stderr, "wsfs demo:", err)
			return 1
		}
		if _, err := demo.RunOverlay(ctx, demo.Options{Out: stdout, Model: model, Logger: logger}); err != nil {
			fmt.Fprintln(stderr, "wsfs demo: overlay run:", err)
			return 1
		}
		return 0

	default:
		// Under a profile the workspace knows its tools; natively, the names are checked here.
		if *profile == "" && !slices.Contains(wsfs.ToolNames, cmd) {
			return usageError(stderr, fmt.Sprintf("unknown command or tool %q", cmd))
		}
		if *workspace == "" {
			return usageError(stderr, "-workspace DIR is required to run a tool")
		}
		if len(rest) > 2 {
			return usageError(stderr, "too many arguments: quote the JSON arguments as one word")
		}
		argsJSON := "{}"
		if len(rest) == 2 {
			argsJSON = rest[1]
		}
		if argsJSON == "-" {
			b, err := io.ReadAll(stdin)
			if err != nil {
				fmt.Fprintln(stderr, "wsfs: reading stdin:", err)
				return 2
			}
			argsJSON = string(b)
		}
		mode, session, err := modeFromEnv()
		if err != nil {
			return usageError(stderr, err.Error())
		}
		ws, err := wsfs.Open(wsfs.Config{
			Root:                *workspace,
			RestrictToWorkspace: wsfs.Bool(!*unrestricted),
			Limits:              wsfs.Limits{OperationTimeout: *timeout},
			Policy:              policy(*readOnly, *auditLog, *auditArgs),
			Logger:              logger,
			Mode:                mode,
			Session:             session,
			Profile:             *profile,
		})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		defer ws.Close()
		for _, w := range ws.Warnings() {
			fmt.Fprintln(stderr, "wsfs: warning:", w)
		}
		env, err := ws.CallRaw(ctx, cmd, argsJSON)
		fmt.Fprintln(stdout, env)
		if failed, _ := wsfs.EnvelopeFailed(env); err != nil || failed {
			return 1
		}
		return 0
	}
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
// WORKSPACE_FS_MODE and WORKSPACE_FS_SESSION, checked as wsfs.ApplyToolEnv
// checks them (a tool run reads no other variable of .env.example).
func modeFromEnv() (wsfs.Mode, string, error) {
	lookup := func(name string) (string, bool) {
		if name == wsfs.EnvWorkspaceFSMode || name == wsfs.EnvWorkspaceFSSession {
			return os.LookupEnv(name)
		}
		return "", false
	}
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
	fmt.Fprintf(stderr, "wsfs: %s (see wsfs -h)\n", msg)
	return 2
}
