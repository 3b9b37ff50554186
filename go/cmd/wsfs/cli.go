package main

// The habits every wsfs command shares (those of git, cargo and go): help on
// stdout with exit 0, a short pointer to it on stderr after a usage error,
// flags before or after the positional arguments, human output by default
// and --json for scripts, and one "wsfs ...:" prefix per message.

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	wsfs "github.com/wsfs/wsfs/go"
)

// isHelp is true for the help flags, as the flag package spells them.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help"
}

// wantsHelp is true when args ask for help anywhere before a "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}

// parseSub parses a (sub)command's flags, before or after its positional
// arguments. Help goes to stdout (the command's usage, then its flags); a bad
// flag is reported on stderr with where to find the usage. done is true when
// the command is over, with exit status code.
func parseSub(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (pos []string, code int, done bool) {
	fs.SetOutput(stderr)
	fs.Usage = func() {} // the flag package has printed the error; badFlags adds the pointer
	pos, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout, usage, fs)
		return nil, 0, true
	}
	if err != nil {
		return nil, badFlags(stderr, fs), true
	}
	return pos, 0, false
}

// badFlags follows the flag package's own error message with where the
// usage is; exit status 2.
func badFlags(stderr io.Writer, fs *flag.FlagSet) int {
	fmt.Fprintf(stderr, "see '%s -h'\n", fs.Name())
	return 2
}

// printUsage writes usage, then fs's flags under a "flags:" heading when it
// has any.
func printUsage(w io.Writer, usage string, fs *flag.FlagSet) {
	fmt.Fprint(w, strings.TrimRight(usage, "\n")+"\n")
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprint(w, "\nflags:\n")
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// passJSON hands a global --json to a command group's subcommand: args is
// [SUBCOMMAND, ...], and --json goes right after SUBCOMMAND.
func passJSON(args []string, jsonOut bool) []string {
	if !jsonOut || len(args) == 0 || isHelp(args[0]) {
		return args
	}
	return append([]string{args[0], "--json"}, args[1:]...)
}

// errText is err's message without the library's "wsfs: " prefix, which the
// CLI's own prefix replaces.
func errText(err error) string {
	return strings.TrimPrefix(err.Error(), "wsfs: ")
}

// openErrText is errText for a workspace that did not open, naming the CLI's
// flag where the library names a configuration key.
func openErrText(err error, createRootFlag string) string {
	return errText(openError(err, createRootFlag))
}

// openError is err, a workspace open's, with the CLI's flag named where the
// library names the configuration key create_root.
func openError(err error, createRootFlag string) error {
	var e *wsfs.Error
	if errors.As(err, &e) && e.Code == wsfs.CodePathNotFound && strings.Contains(e.Message, `"create_root": true`) {
		named := *e
		named.Message += " (here: " + createRootFlag + ")"
		return &named
	}
	return err
}

// withCreateRoot is the configuration cfg with "create_root": true.
func withCreateRoot(cfg []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(cfg, &top); err != nil {
		return nil, err
	}
	top["create_root"] = json.RawMessage("true")
	return json.Marshal(top)
}

// printEnvelope shows a library envelope: with jsonOut the envelope as is on
// stdout; otherwise its text, on stdout for a success and on stderr (after
// prefix) for an error. An envelope without a text (a profile's) is printed
// as is. failed reports an error envelope (or one that is not JSON).
func printEnvelope(stdout, stderr io.Writer, env string, jsonOut bool, prefix string, hints func(string) string) (failed bool) {
	var e struct {
		OK   bool    `json:"ok"`
		Text *string `json:"text"`
	}
	failed, _ = wsfs.EnvelopeFailed(env)
	if jsonOut || json.Unmarshal([]byte(env), &e) != nil || e.Text == nil {
		fmt.Fprintln(stdout, env)
		return failed
	}
	text := *e.Text
	if hints != nil {
		text = hints(text)
	}
	if failed {
		fmt.Fprintf(stderr, "%s: %s\n", prefix, strings.TrimRight(text, "\n"))
		return true
	}
	fmt.Fprintln(stdout, strings.TrimRight(text, "\n"))
	return false
}

// plural is n with its noun, singular or plural.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// writeJSON writes v indented, for --json.
func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// mcpUsageError is a usage error of wsfs mcp, pointing at its own help.
func mcpUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "wsfs mcp: %s (see 'wsfs mcp -h')\n", strings.TrimPrefix(msg, "wsfs: "))
	return 2
}
