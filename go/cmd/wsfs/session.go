package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/mcpserver"
)

const sessionUsage = `usage: wsfs session OP [--root DIR] [--config FILE] [--session NAME]
                     [--state-dir DIR] [--json] [OP's flags | 'JSON' | -]

The host's operations on an overlay session (docs/sessions.md): the
workspace root is the read-only base, the agent's changes wait in the session
until they are committed.

  diff        [--path P]... [--max-bytes N] [--include-ignored]
                                                the session's changes against the base
  commit      [--path P]... [--hunk PATH:ID]... [--force] [--merge] [--include-ignored]
                                                write all, some paths or some hunks to
                                                the base (ids from diff)

diff and commit leave out what the workspace's .gitignore files and the
built-in cache list ignore (they stay in the session; --include-ignored
takes them too), and show a git repository's changes as one entry
(docs/session-review.md).
  checkpoint  [--label L]                       record a checkpoint; prints its id
  rewind      ID                                back to checkpoint ID (newer ones go)
  checkpoints                                   list the checkpoints
  discard                                       drop every change and checkpoint
  refresh                                       show the base as it is now

Instead of the flags, the options may be one JSON object (the C ABI's
options_json: {"paths", "max_bytes", "include_ignored"}, {"paths", "hunks",
"force", "merge", "include_ignored"},
{"label"}, {"id"}), or - to read it from stdin.

The workspace is opened like wsfs mcp's: --config is the library's workspace
configuration JSON, --root overrides its root; WORKSPACE_FS_MODE,
WORKSPACE_FS_SESSION and the TOOL_* variables apply (see .env.example), then
--session and --state-dir. A configuration without a mode is opened in
overlay mode (with mode host, every operation is no_session). The session
(default "default") lives in the state directory ($XDG_STATE_HOME/wsfs by
default), so each run continues it.

Prints what the operation did (a diff prints the unified diff); --json
prints the library's envelope instead. Exit status: 0 ok, 1 an error
envelope or a commit that found conflicts (nothing was written), 2 usage
error or a workspace that cannot be opened.
`

// runSession is `wsfs session`.
func runSession(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		// Every operation's flags: commit's set holds them all.
		fs, _ := sessionFlagSet(wsfs.SessionOpCommit)
		fs.Init("wsfs session", flag.ContinueOnError)
		if len(args) == 0 {
			printUsage(stderr, sessionUsage, fs)
			return 2
		}
		printUsage(stdout, sessionUsage, fs)
		return 0
	}
	op := args[0]
	if !slices.Contains(wsfs.SessionOps, op) {
		return sessionUsageError(stderr, fmt.Sprintf("unknown session operation %q: one of %s", op, strings.Join(wsfs.SessionOps, ", ")))
	}
	fs, f := sessionFlagSet(op)
	rest, code, done := parseSub(fs, args[1:], sessionUsage, stdout, stderr)
	if done {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	optionsJSON, msg := sessionOptions(op, rest, set, stdin, sessionFlags{
		paths: *f.paths, hunks: *f.hunks, maxBytes: *f.maxBytes, force: *f.force, merge: *f.merge, label: *f.label,
		includeIgnored: *f.includeIgnored,
	})
	if msg != "" {
		return sessionUsageError(stderr, msg)
	}

	var file []byte
	if *f.configFile != "" {
		b, err := os.ReadFile(*f.configFile)
		if err != nil {
			return sessionUsageError(stderr, "reading --config: "+err.Error())
		}
		file = b
	}
	cfg, err := sessionConfig(file, *f.root, *f.session, *f.stateDir, os.LookupEnv)
	if err != nil {
		return sessionUsageError(stderr, configErrText(err, nil, file, *f.configFile))
	}
	ws, err := wsfs.OpenJSON(cfg, nil)
	if err != nil {
		fmt.Fprintln(stderr, "wsfs session:", configErrText(err, cfg, file, *f.configFile))
		return 2
	}
	defer ws.Close()
	for _, w := range ws.Warnings() {
		fmt.Fprintln(stderr, "wsfs session: warning:", w)
	}
	env, err := ws.SessionCallRaw(ctx, op, optionsJSON)
	failed := printEnvelope(stdout, stderr, env, *f.jsonOut, "wsfs session "+op, sessionHints)
	if err != nil || failed {
		return 1
	}
	if op == wsfs.SessionOpCommit {
		var r struct {
			Data struct {
				Committed bool `json:"committed"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(env), &r) != nil || !r.Data.Committed {
			return 1
		}
	}
	return 0
}

// sessionHints names the CLI's flags where the library's text names the C
// ABI's options (a person types --merge, not merge: true).
var sessionHints = strings.NewReplacer(
	"merge: true or force: true", "--merge or --force",
	"include_ignored: true", "--include-ignored",
	"{\"id\": \"<checkpoint id>\"}", "the checkpoint's ID",
).Replace

// sessionFlagValues are the flags of one session operation.
type sessionFlagValues struct {
	root, configFile, session, stateDir, label *string
	maxBytes                                   *int
	force, merge, includeIgnored, jsonOut      *bool
	paths, hunks                               *multiFlag
}

// sessionFlagSet is op's flag set: the common flags and op's own.
func sessionFlagSet(op string) (*flag.FlagSet, sessionFlagValues) {
	fs := flag.NewFlagSet("wsfs session "+op, flag.ContinueOnError)
	var f sessionFlagValues
	f.root = fs.String("root", "", "workspace root, the session's base (overrides the config file's root)")
	f.configFile = fs.String("config", "", "workspace configuration JSON file")
	f.session = fs.String("session", "", "the session's name (overrides the config and WORKSPACE_FS_SESSION)")
	f.stateDir = fs.String("state-dir", "", "where sessions are kept (the config's state_dir); outside the root")
	f.jsonOut = fs.Bool("json", false, "print the library's envelope instead of text")
	f.paths, f.hunks = &multiFlag{}, &multiFlag{}
	f.maxBytes = fs.Int("max-bytes", 0, "diff: bound of the unified text (default: the library's 256 KiB)")
	f.force = fs.Bool("force", false, "commit: even where the base changed since the session first saw it")
	f.merge = fs.Bool("merge", false, "commit: a three-way merge where the base changed")
	f.label = fs.String("label", "", "checkpoint: its label")
	f.includeIgnored = fs.Bool("include-ignored", false, "diff, commit: the changes .gitignore and the built-in cache list ignore too")
	if op == wsfs.SessionOpDiff || op == wsfs.SessionOpCommit {
		fs.Var(f.paths, "path", "only this path (a directory: everything below it); repeatable")
	}
	if op == wsfs.SessionOpCommit {
		fs.Var(f.hunks, "hunk", "commit only this hunk, PATH:ID (ids from diff); repeatable")
	}
	return fs, f
}

func sessionUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "wsfs session: %s (see 'wsfs session -h')\n", strings.TrimPrefix(msg, "wsfs: "))
	return 2
}

// sessionConfig is the workspace configuration of `wsfs session`: the
// --config file and --root (as wsfs mcp makes it), the environment
// (wsfs.ApplyToolEnv), then --session and --state-dir; without a mode, it
// is overlay.
func sessionConfig(file []byte, root, session, stateDir string, lookup func(string) (string, bool)) ([]byte, error) {
	cfg, err := mcpserver.WorkspaceConfig(file, root)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(cfg, &top); err != nil {
		return nil, err
	}
	if _, ok := top["mode"]; !ok {
		top["mode"] = json.RawMessage(`"overlay"`)
		if cfg, err = json.Marshal(top); err != nil {
			return nil, err
		}
	}
	if cfg, err = wsfs.ApplyToolEnv(cfg, lookup); err != nil {
		return nil, err
	}
	if session == "" && stateDir == "" {
		return cfg, nil
	}
	if err := json.Unmarshal(cfg, &top); err != nil {
		return nil, err
	}
	for key, v := range map[string]string{"session": session, "state_dir": stateDir} {
		if v != "" {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			top[key] = b
		}
	}
	return json.Marshal(top)
}

type sessionFlags struct {
	paths, hunks multiFlag
	maxBytes     int
	force, merge bool
	label        string
	// includeIgnored is --include-ignored (diff, commit).
	includeIgnored bool
}

// sessionOptions is op's options JSON ("" for none) from the positional
// arguments (a JSON object, "-" for stdin, or rewind's ID) or the flags; msg
// is a usage error.
func sessionOptions(op string, rest []string, set map[string]bool, stdin io.Reader, f sessionFlags) (optionsJSON, msg string) {
	opFlags := 0
	for _, name := range []string{"path", "hunk", "max-bytes", "force", "merge", "label", "include-ignored"} {
		if set[name] {
			opFlags++
		}
	}
	if len(rest) > 1 {
		return "", "too many arguments: quote the JSON options as one word"
	}
	if len(rest) == 1 {
		if opFlags > 0 {
			return "", "give the options as flags or as JSON, not both"
		}
		arg := rest[0]
		if arg == "-" {
			b, err := io.ReadAll(stdin)
			if err != nil {
				return "", "reading stdin: " + err.Error()
			}
			return string(b), ""
		}
		if op == wsfs.SessionOpRewind && !strings.HasPrefix(strings.TrimSpace(arg), "{") {
			b, _ := json.Marshal(map[string]string{"id": arg})
			return string(b), ""
		}
		return arg, ""
	}
	opts := map[string]any{}
	bad := func(names ...string) string {
		for _, n := range names {
			if set[n] {
				return fmt.Sprintf("--%s is not an option of %s", n, op)
			}
		}
		return ""
	}
	switch op {
	case wsfs.SessionOpDiff:
		msg = bad("force", "merge", "label")
		if len(f.paths) > 0 {
			opts["paths"] = []string(f.paths)
		}
		if set["max-bytes"] {
			opts["max_bytes"] = f.maxBytes
		}
		if f.includeIgnored {
			opts["include_ignored"] = true
		}
	case wsfs.SessionOpCommit:
		msg = bad("max-bytes", "label")
		if len(f.paths) > 0 {
			opts["paths"] = []string(f.paths)
		}
		if len(f.hunks) > 0 {
			h := map[string][]string{}
			for _, ph := range f.hunks {
				i := strings.LastIndexByte(ph, ':')
				if i <= 0 || i == len(ph)-1 {
					return "", fmt.Sprintf("--hunk %q: want PATH:ID", ph)
				}
				h[ph[:i]] = append(h[ph[:i]], ph[i+1:])
			}
			opts["hunks"] = h
		}
		if f.force {
			opts["force"] = true
		}
		if f.merge {
			opts["merge"] = true
		}
		if f.includeIgnored {
			opts["include_ignored"] = true
		}
	case wsfs.SessionOpCheckpoint:
		msg = bad("max-bytes", "force", "merge", "include-ignored")
		if set["label"] {
			opts["label"] = f.label
		}
	case wsfs.SessionOpRewind:
		return "", "rewind needs the checkpoint's ID (wsfs session checkpoints lists them)"
	default:
		msg = bad("max-bytes", "force", "merge", "label", "include-ignored")
	}
	if msg != "" || len(opts) == 0 {
		return "", msg
	}
	b, err := json.Marshal(opts)
	if err != nil {
		return "", err.Error()
	}
	return string(b), ""
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
