package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/mcpserver"
)

const auditUsage = `usage: wsfs audit replay LOG --root COPY [--config FILE] [-v] [--json]

Re-runs the calls of an audit log (policy audit_log) against a workspace
opened at COPY, a copy of the workspace as it was before the logged calls,
in the log's order, and reports for each whether its outcome (ok, or the
error code) is the one the log recorded.

Only a log written with policy audit_arguments holds the calls' arguments;
a line without them, with them left out (arguments_omitted), or with an
argument the log keeps only as {length, sha256} (file content, new_text,
a patch, a command, a search query: docs/security.md, "Policy and audit log") is reported as not
replayable and does not count as a difference.

--config is the library's workspace configuration JSON (as wsfs mcp's;
give the policy the original workspace had, e.g. exec_enabled for the
developer tools); --root overrides its root. The log names native tools (a
profile's calls are logged as the native calls they made), so the copy is
opened with the native tools, and without an audit log of its own, whatever
the configuration says.

Prints one line per log line and a summary; --json prints one JSON object
per log line ({"line", "tool", "result": "match" | "differs" |
"not_replayable", "logged", "replayed", "why", "message"}) and then the
summary ({"replayed", "match", "differ", "not_replayable"}). Exit status: 0
when every replayed call matched, 1 when any differed, 2 usage error (no
LOG, no --root, a log or config that cannot be read, a workspace that
cannot be opened).
`

// auditLine is what replay reads of a line of the audit log.
type auditLine struct {
	Tool             string          `json:"tool"`
	Outcome          string          `json:"outcome"`
	Arguments        json.RawMessage `json:"arguments"`
	ArgumentsOmitted bool            `json:"arguments_omitted"`
}

// replayCounts are replay's totals.
type replayCounts struct{ match, differ, skipped int }

// runAudit is `wsfs audit`.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		fs, _, _, _, _ := auditFlagSet()
		if len(args) == 0 {
			printUsage(stderr, auditUsage, fs)
			return 2
		}
		printUsage(stdout, auditUsage, fs)
		return 0
	}
	if args[0] != "replay" {
		return auditUsageError(stderr, fmt.Sprintf("unknown audit command %q: the one command is replay", args[0]))
	}
	fs, root, configFile, verbose, jsonOut := auditFlagSet()
	rest, code, done := parseSub(fs, args[1:], auditUsage, stdout, stderr)
	if done {
		return code
	}
	if len(rest) != 1 {
		return auditUsageError(stderr, "replay takes one LOG file")
	}
	if *root == "" {
		return auditUsageError(stderr, "--root COPY is required: the copy to replay the calls on")
	}
	// The library would create a missing root; a replay needs the copy that exists.
	if info, err := os.Stat(*root); err != nil || !info.IsDir() {
		return auditUsageError(stderr, "--root COPY must be an existing directory, the copy to replay the calls on")
	}
	log, err := os.Open(rest[0])
	if err != nil {
		return auditUsageError(stderr, "reading LOG: "+err.Error())
	}
	defer log.Close()
	var file []byte
	if *configFile != "" {
		if file, err = os.ReadFile(*configFile); err != nil {
			return auditUsageError(stderr, "reading --config: "+err.Error())
		}
	}
	cfg, err := replayConfig(file, *root)
	if err != nil {
		return auditUsageError(stderr, configErrText(err, nil, file, *configFile))
	}
	ws, err := wsfs.OpenJSON(cfg, nil)
	if err != nil {
		fmt.Fprintln(stderr, "wsfs audit replay:", configErrText(err, cfg, file, *configFile))
		return 2
	}
	defer ws.Close()
	report := textReport(stdout, *verbose)
	if *jsonOut {
		report = func(r replayResult) { printJSONLine(stdout, r) }
	}
	counts, err := replay(ctx, ws, log, report)
	if err != nil {
		fmt.Fprintln(stderr, "wsfs audit replay: reading LOG:", err)
		return 2
	}
	if *jsonOut {
		printJSONLine(stdout, map[string]int{"replayed": counts.match + counts.differ, "match": counts.match,
			"differ": counts.differ, "not_replayable": counts.skipped})
	} else {
		fmt.Fprintf(stdout, "replayed %s: %d match, %d differ; %s not replayable\n",
			plural(counts.match+counts.differ, "call", "calls"), counts.match, counts.differ,
			plural(counts.skipped, "line", "lines"))
	}
	if counts.differ > 0 {
		return 1
	}
	return 0
}

// auditFlagSet is the flag set of wsfs audit replay.
func auditFlagSet() (fs *flag.FlagSet, root, configFile *string, verbose, jsonOut *bool) {
	fs = flag.NewFlagSet("wsfs audit replay", flag.ContinueOnError)
	root = fs.String("root", "", "the copy of the workspace to replay the calls on (required)")
	configFile = fs.String("config", "", "workspace configuration JSON file (the original workspace's policy)")
	verbose = fs.Bool("v", false, "print each replayed call's error message too")
	jsonOut = fs.Bool("json", false, "print one JSON object per log line, then the summary")
	return fs, root, configFile, verbose, jsonOut
}

// replayResult is what replay found for one line of the log.
type replayResult struct {
	Line     int    `json:"line"`
	Tool     string `json:"tool,omitempty"`
	Result   string `json:"result"` // match, differs, not_replayable
	Logged   string `json:"logged,omitempty"`
	Replayed string `json:"replayed,omitempty"`
	Why      string `json:"why,omitempty"`
	Message  string `json:"message,omitempty"`
}

// textReport prints a replayResult as a line of text (with -v, a differing
// call's message under it).
func textReport(out io.Writer, verbose bool) func(replayResult) {
	return func(r replayResult) {
		switch {
		case r.Result == "not_replayable" && r.Tool == "":
			fmt.Fprintf(out, "line %d: not replayable: %s\n", r.Line, r.Why)
		case r.Result == "not_replayable":
			fmt.Fprintf(out, "line %d %s: not replayable: %s\n", r.Line, r.Tool, r.Why)
		case r.Result == "match":
			fmt.Fprintf(out, "line %d %s: match (%s)\n", r.Line, r.Tool, r.Replayed)
		default:
			fmt.Fprintf(out, "line %d %s: DIFFERS: the log says %s, the replay %s\n", r.Line, r.Tool, r.Logged, r.Replayed)
			if verbose && r.Message != "" {
				fmt.Fprintf(out, "  %s\n", r.Message)
			}
		}
	}
}

func printJSONLine(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintln(w, string(b))
}

// replay re-runs each line of log on ws and reports what it found.
func replay(ctx context.Context, ws *wsfs.Workspace, log io.Reader, report func(replayResult)) (replayCounts, error) {
	var counts replayCounts
	lines := bufio.NewScanner(log)
	lines.Buffer(make([]byte, 0, 64<<10), 1<<20) // a line is at most 64 KiB
	for n := 1; lines.Scan(); n++ {
		text := bytes.TrimSpace(lines.Bytes())
		if len(text) == 0 {
			continue
		}
		var line auditLine
		if err := json.Unmarshal(text, &line); err != nil || line.Tool == "" || line.Outcome == "" {
			counts.skipped++
			report(replayResult{Line: n, Result: "not_replayable", Why: "not an audit log line"})
			continue
		}
		if why := notReplayable(line); why != "" {
			counts.skipped++
			report(replayResult{Line: n, Tool: line.Tool, Result: "not_replayable", Why: why})
			continue
		}
		env, _ := ws.CallRaw(ctx, line.Tool, string(line.Arguments))
		now, message := envelopeOutcome(env)
		r := replayResult{Line: n, Tool: line.Tool, Result: "match", Logged: line.Outcome, Replayed: now, Message: message}
		if now == line.Outcome {
			counts.match++
		} else {
			counts.differ++
			r.Result = "differs"
		}
		report(r)
	}
	return counts, lines.Err()
}

// notReplayable says why a line cannot be re-run, or "".
func notReplayable(line auditLine) string {
	switch {
	case line.ArgumentsOmitted:
		return "its arguments did not fit in the line and were left out"
	case len(line.Arguments) == 0:
		return "the log has no arguments (the workspace's policy had audit_arguments off)"
	}
	var args map[string]any
	if json.Unmarshal(line.Arguments, &args) != nil {
		return "its arguments are not a JSON object"
	}
	if _, ok := args["unparsed"]; ok && len(args) == 1 {
		return "its arguments were not a JSON object (the log keeps only their hash)"
	}
	if key := hashedArgument(args); key != "" {
		return fmt.Sprintf("the log keeps its %s only as {length, sha256}", key)
	}
	return ""
}

// hashedArgument is the name of an argument (at any depth) that the log
// recorded as {length, sha256} instead of its value, or "".
func hashedArgument(v any) string {
	switch v := v.(type) {
	case map[string]any:
		for key, item := range v {
			if m, ok := item.(map[string]any); ok && len(m) == 2 && m["length"] != nil && m["sha256"] != nil {
				return key
			}
			if key := hashedArgument(item); key != "" {
				return key
			}
		}
	case []any:
		for _, item := range v {
			if key := hashedArgument(item); key != "" {
				return key
			}
		}
	}
	return ""
}

// envelopeOutcome is an envelope's outcome as the log writes it: "ok" or the
// error code, with the error's message.
func envelopeOutcome(env string) (outcome, message string) {
	var e struct {
		OK    bool `json:"ok"`
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(env), &e) != nil {
		return "unreadable envelope", ""
	}
	if e.OK {
		return "ok", ""
	}
	return e.Error.Code, e.Error.Message
}

// replayConfig is the copy's workspace configuration: the --config file and
// --root as wsfs mcp makes it, without a profile or an audit log (replaying
// must not append to the log it reads).
func replayConfig(file []byte, root string) ([]byte, error) {
	cfg, err := mcpserver.WorkspaceConfig(file, root)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(cfg, &top); err != nil {
		return nil, err
	}
	delete(top, "profile")
	if raw, ok := top["policy"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		var policy map[string]json.RawMessage
		if err := json.Unmarshal(raw, &policy); err != nil {
			return nil, fmt.Errorf("the config's \"policy\" must be a JSON object: %w", err)
		}
		delete(policy, "audit_log")
		delete(policy, "audit_arguments")
		if top["policy"], err = json.Marshal(policy); err != nil {
			return nil, err
		}
	}
	return json.Marshal(top)
}

func auditUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "wsfs audit: %s (see 'wsfs audit -h')\n", strings.TrimPrefix(strings.TrimSpace(msg), "wsfs: "))
	return 2
}
