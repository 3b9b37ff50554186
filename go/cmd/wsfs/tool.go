package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	wsfs "github.com/wsfs/wsfs/go"
)

const toolUsage = `usage: wsfs tool COMMAND ...

A Wasm tool is a folder: manifest.json beside module.wasm or module.wat (see
docs/TOOL_AUTHORING.md).

  wsfs tool new NAME [--dir DIR]      make DIR/NAME (default ./NAME; DIR is made if
                                      missing) from a template: module.wat and a
                                      manifest with its hash; NAME must not be a
                                      built-in tool's
  wsfs tool build FOLDER [--out DIR]  a Rust tool (Cargo.toml in FOLDER): build it for
                                      wasm32-wasip1 (cargo's target dir); then, for any
                                      tool, write the module's hash into the manifest.
                                      Without --out: module.wasm and the hash go into
                                      FOLDER. With --out: DIR becomes the tool folder
                                      (manifest.json with the hash, the module,
                                      tests.json) and FOLDER is left as it is. A
                                      module.wat is parsed first: a syntax error
                                      names module.wat:LINE:COLUMN, and nothing is
                                      written. The result is loaded to check it
                                      (exit 2 if not)
  wsfs tool list FOLDER...            load the tools (each a tool folder or a folder of
                                      them) and list them (--json: their specs)
  wsfs tool run FOLDER [--root DIR] ['JSON']
                                      load the tool and call it once on the workspace DIR
                                      (default: a new empty temporary directory); prints
                                      its text (--json: the envelope); exit 1 for an
                                      error
  wsfs tool test FOLDER [--root DIR]  run FOLDER/tests.json: [{"name", "args",
                                      "expect"? (data), "expect_error"? (code)}], each
                                      on its own temporary workspace (or DIR)

Every command takes --json (scripts: JSON instead of text). Limits come
from the environment (TOOL_TIMEOUT_SECS, TOOL_MEMORY_MB,
TOOL_ALLOW_DIRECT_NETWORK; see .env.example), and so does the model gateway
of run and test (MODEL_PROVIDER, MODEL_BASE_URL, MODEL_API_KEY_ENV,
MODEL_TIMEOUT_SECS, MODEL_NAME; docs/model-gateway.md). A module whose hash
is not the manifest's (module_mismatch) is rebuilt and rehashed by wsfs tool
build. Exit status: 0 ok, 1 a tool or test failed, 2 usage error or a tool
that does not load.
`

// runTool is `wsfs tool`.
func runTool(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		if len(args) == 0 {
			fmt.Fprint(stderr, toolUsage)
			return 2
		}
		fmt.Fprint(stdout, toolUsage)
		return 0
	}
	switch args[0] {
	case "new":
		return toolNew(args[1:], stdout, stderr)
	case "build":
		return toolBuild(ctx, args[1:], stdout, stderr)
	case "list":
		return toolList(args[1:], stdout, stderr)
	case "run":
		return toolRun(ctx, args[1:], stdout, stderr)
	case "test":
		return toolTest(ctx, args[1:], stdout, stderr)
	}
	return toolUsageError(stderr, fmt.Sprintf("unknown tool command %q", args[0]))
}

func toolUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "wsfs tool: %s (see 'wsfs tool -h')\n", strings.TrimPrefix(msg, "wsfs: "))
	return 2
}

// toolFlags is a tool command's flag set, with --json.
func toolFlags(name string) (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("wsfs tool "+name, flag.ContinueOnError)
	return fs, fs.Bool("json", false, "print JSON instead of text, for scripts")
}

// loadError is a tool load's error for a person: a module_mismatch names
// the command that rehashes the module.
func loadError(err error) string {
	msg := errText(err)
	var e *wsfs.Error
	if errors.As(err, &e) && e.Code == wsfs.CodeModuleMismatch {
		msg += " (wsfs tool build FOLDER rebuilds the module and writes its hash into manifest.json)"
	}
	return msg
}

// parseFlags parses a subcommand's flags, allowing them after its
// positional arguments too.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

var toolName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

const templateWAT = `;; %[1]s: a Wasm tool (WASI preview 1 command). It reads its arguments, one
;; JSON object, on stdin and writes its result, one JSON value, on stdout.
;; This template answers {"received": <the arguments>}; see docs/TOOL_AUTHORING.md.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 1024) "{\"received\":}")
  (func $print (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func $read_stdin (result i32) (local $total i32)
    (block $done
      (loop $more
        (i32.store (i32.const 0) (i32.add (i32.const 65536) (local.get $total)))
        (i32.store (i32.const 4) (i32.sub (i32.const 65536) (local.get $total)))
        (br_if $done (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (br_if $done (i32.eqz (i32.load (i32.const 8))))
        (local.set $total (i32.add (local.get $total) (i32.load (i32.const 8))))
        (br $more)))
    (local.get $total))
  (func (export "_start") (local $len i32)
    (local.set $len (call $read_stdin))
    (call $print (i32.const 1024) (i32.const 12))
    (call $print (i32.const 65536) (local.get $len))
    (call $print (i32.const 1036) (i32.const 1))))
`

func toolNew(args []string, stdout, stderr io.Writer) int {
	fs, jsonOut := toolFlags("new")
	dir := fs.String("dir", ".", "the folder to make the tool's folder in (made if missing)")
	pos, code, done := parseSub(fs, args, toolUsage, stdout, stderr)
	if done {
		return code
	}
	if len(pos) != 1 || !toolName.MatchString(pos[0]) {
		return toolUsageError(stderr, "new takes one NAME: lowercase letters, digits and _, starting with a letter")
	}
	name := pos[0]
	if slices.Contains(wsfs.ToolNames, name) {
		return toolUsageError(stderr, fmt.Sprintf("%s is a built-in tool's name, and a Wasm tool may not take it: choose another NAME", name))
	}
	folder := filepath.Join(*dir, name)
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return toolUsageError(stderr, err.Error())
	}
	if err := os.Mkdir(folder, 0o755); err != nil {
		return toolUsageError(stderr, err.Error())
	}
	wat := fmt.Sprintf(templateWAT, name)
	if err := os.WriteFile(filepath.Join(folder, "module.wat"), []byte(wat), 0o644); err != nil {
		return toolUsageError(stderr, err.Error())
	}
	manifest := map[string]any{
		"name":        name,
		"version":     "0.1.0",
		"description": "Describe what " + name + " does, when a model should call it and what it returns.",
		"input_schema": map[string]any{
			"type": "object", "additionalProperties": false, "required": []string{"message"},
			"properties": map[string]any{"message": map[string]any{"type": "string", "description": "Describe each argument."}},
		},
		"module_sha256": sha256Hex([]byte(wat)),
		"capabilities":  map[string]any{"filesystem": "none", "model_access": false},
		"limits":        map[string]any{"timeout_ms": 5000, "memory_mb": 16, "fuel": 100000000},
	}
	if err := writeJSON(filepath.Join(folder, "manifest.json"), manifest); err != nil {
		return toolUsageError(stderr, err.Error())
	}
	tests := []map[string]any{{"name": "echoes its arguments", "args": map[string]any{"message": "hi"},
		"expect": map[string]any{"received": map[string]any{"message": "hi"}}},
		{"name": "refuses a missing message", "args": map[string]any{}, "expect_error": "invalid_arguments"}}
	if err := writeJSON(filepath.Join(folder, "tests.json"), tests); err != nil {
		return toolUsageError(stderr, err.Error())
	}
	if *jsonOut {
		printJSON(stdout, map[string]any{"folder": folder, "files": []string{"module.wat", "manifest.json", "tests.json"}})
		return 0
	}
	fmt.Fprintf(stdout, "made %s (module.wat, manifest.json, tests.json); try: wsfs tool test %s\n", folder, folder)
	return 0
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func writeJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func toolBuild(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, jsonOut := toolFlags("build")
	outDir := fs.String("out", "", "write the built tool folder here instead of into FOLDER")
	pos, code, done := parseSub(fs, args, toolUsage, stdout, stderr)
	if done {
		return code
	}
	if len(pos) != 1 {
		return toolUsageError(stderr, "build takes one FOLDER")
	}
	folder := pos[0]
	// The module: built from Cargo.toml, else the folder's module.wasm or module.wat.
	module, modulePath := "", ""
	if _, err := os.Stat(filepath.Join(folder, "Cargo.toml")); err == nil {
		built, code := cargoBuild(ctx, folder, stderr)
		if code != 0 {
			return code
		}
		module, modulePath = "module.wasm", built
	} else {
		for _, name := range []string{"module.wasm", "module.wat"} {
			if _, err := os.Stat(filepath.Join(folder, name)); err == nil {
				if module != "" {
					return toolUsageError(stderr, "both module.wasm and module.wat are in "+folder+"; keep one")
				}
				module, modulePath = name, filepath.Join(folder, name)
			}
		}
	}
	if module == "" {
		return toolUsageError(stderr, "no module.wasm or module.wat in "+folder)
	}
	b, err := os.ReadFile(modulePath)
	if err != nil {
		return toolUsageError(stderr, err.Error())
	}
	if module == "module.wat" {
		if msg := watSyntaxError(b); msg != "" {
			fmt.Fprintf(stderr, "wsfs tool build: %s: %s\nnothing was written\n", modulePath, msg)
			return 1
		}
	}
	raw, err := os.ReadFile(filepath.Join(folder, "manifest.json"))
	if err != nil {
		return toolUsageError(stderr, err.Error())
	}
	var manifest map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&manifest); err != nil || manifest == nil {
		return toolUsageError(stderr, "manifest.json is not a JSON object")
	}
	hash, _ := json.Marshal(sha256Hex(b))
	manifest["module_sha256"] = hash
	// Keep the author's key order: rewrite only the hash's value when it is there.
	out, err := replaceHash(raw, string(hash))
	if err != nil {
		var buf bytes.Buffer
		_ = json.Indent(&buf, mustJSON(manifest), "", "  ")
		out = append(buf.Bytes(), '\n')
	}
	dest := folder
	if *outDir != "" {
		dest = *outDir
		if err := os.MkdirAll(dest, 0o755); err != nil {
			return toolUsageError(stderr, err.Error())
		}
		// The other module kind from an earlier build would make the folder ambiguous.
		for _, name := range []string{"module.wasm", "module.wat"} {
			if name != module {
				_ = os.Remove(filepath.Join(dest, name))
			}
		}
		if tests, err := os.ReadFile(filepath.Join(folder, "tests.json")); err == nil {
			if err := os.WriteFile(filepath.Join(dest, "tests.json"), tests, 0o644); err != nil {
				return toolUsageError(stderr, err.Error())
			}
		}
	}
	if modulePath != filepath.Join(dest, module) {
		if err := os.WriteFile(filepath.Join(dest, module), b, 0o644); err != nil {
			return toolUsageError(stderr, err.Error())
		}
	}
	if err := os.WriteFile(filepath.Join(dest, "manifest.json"), out, 0o644); err != nil {
		return toolUsageError(stderr, err.Error())
	}
	// What was built must load as the library loads it (manifest, module, names, limits).
	_, closeWS, err := openWith("", []string{dest})
	if err != nil {
		fmt.Fprintf(stderr, "wsfs tool build: %s was built but does not load: %s\n", dest, loadError(err))
		return 2
	}
	closeWS()
	if *jsonOut {
		printJSON(stdout, map[string]any{"folder": dest, "module": module, "module_sha256": sha256Hex(b)})
		return 0
	}
	fmt.Fprintf(stdout, "%s: module_sha256 %s (%s)\n", dest, sha256Hex(b), module)
	return 0
}

// watSyntaxError parses a module.wat the way a load does (the library's WAT
// parser, on a throwaway tool folder with a minimal manifest, so that only
// the text is judged here) and returns the parser's message, which names
// module.wat:LINE:COLUMN, or "" when the text parses. The manifest and the
// rest are judged by wsfs tool test and the workspace's load.
func watSyntaxError(wat []byte) string {
	dir, err := os.MkdirTemp("", "wsfs-wat-check-")
	if err != nil {
		return ""
	}
	defer os.RemoveAll(dir)
	tool := filepath.Join(dir, "tool")
	manifest := map[string]any{"name": "wat_check", "version": "0.0.0", "description": "a syntax check",
		"input_schema": map[string]any{"type": "object"}, "module_sha256": sha256Hex(wat)}
	if os.Mkdir(tool, 0o755) != nil || os.WriteFile(filepath.Join(tool, "module.wat"), wat, 0o644) != nil ||
		writeJSON(filepath.Join(tool, "manifest.json"), manifest) != nil {
		return ""
	}
	cfg, _ := json.Marshal(map[string]any{"root": dir, "wasm_tools": []string{tool}})
	ws, err := wsfs.OpenJSON(cfg, nil)
	if err == nil {
		ws.Close()
		return ""
	}
	const marker = "module.wat is not valid WebAssembly text: "
	msg := err.Error()
	at := strings.Index(msg, marker)
	if at < 0 {
		return ""
	}
	return "not valid WebAssembly text: " + msg[at+len(marker):]
}

var hashField = regexp.MustCompile(`"module_sha256"\s*:\s*"[^"]*"`)

func replaceHash(raw []byte, hash string) ([]byte, error) {
	if len(hashField.FindAllIndex(raw, -1)) != 1 {
		return nil, errors.New("no single module_sha256")
	}
	return hashField.ReplaceAll(raw, []byte(`"module_sha256": `+hash)), nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// cargoBuild builds a Rust tool for wasm32-wasip1 (in cargo's own target
// directory: the crate's target/, or CARGO_TARGET_DIR) and returns the
// module's path; without the target it says how to add it and fails.
func cargoBuild(ctx context.Context, folder string, stderr io.Writer) (string, int) {
	if missing := missingWasmTarget(ctx); missing != "" {
		fmt.Fprintln(stderr, "wsfs tool build: skipped:", missing)
		return "", 1
	}
	cmd := exec.CommandContext(ctx, "cargo", "build", "--release", "--target", "wasm32-wasip1",
		"--message-format=json-render-diagnostics")
	var messages bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = folder, &messages, stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(stderr, "wsfs tool build:", err)
		return "", 1
	}
	// The binary's artifact, from cargo's own report of what it built.
	var built []string
	for _, line := range bytes.Split(messages.Bytes(), []byte("\n")) {
		var m struct {
			Reason string `json:"reason"`
			Target struct {
				Kind []string `json:"kind"`
			} `json:"target"`
			Filenames []string `json:"filenames"`
		}
		if json.Unmarshal(line, &m) != nil || m.Reason != "compiler-artifact" {
			continue
		}
		for _, f := range m.Filenames {
			if strings.HasSuffix(f, ".wasm") && len(m.Target.Kind) == 1 && m.Target.Kind[0] == "bin" {
				built = append(built, f)
			}
		}
	}
	if len(built) != 1 {
		fmt.Fprintf(stderr, "wsfs tool build: expected one binary .wasm from cargo, got %d (a tool crate has one [[bin]])\n", len(built))
		return "", 1
	}
	return built[0], 0
}

// missingWasmTarget says why wasm32-wasip1 programs cannot be built here ("" when they can):
// the target's standard library must be in rustc's sysroot (rustup target add wasm32-wasip1).
func missingWasmTarget(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "rustc", "--print", "sysroot").Output()
	if err != nil {
		return "rustc is not available: " + err.Error()
	}
	lib := filepath.Join(strings.TrimSpace(string(out)), "lib", "rustlib", "wasm32-wasip1", "lib")
	if st, err := os.Stat(lib); err != nil || !st.IsDir() {
		return "the wasm32-wasip1 target is not installed (rustup target add wasm32-wasip1)"
	}
	return ""
}

// openWith opens a workspace on root ("" = a new temporary directory,
// removed by the returned cleanup) with folders as its wasm_tools and the
// environment's limits applied.
func openWith(root string, folders []string) (*wsfs.Workspace, func(), error) {
	cleanup := func() {}
	if root == "" {
		dir, err := os.MkdirTemp("", "wsfs-tool-")
		if err != nil {
			return nil, cleanup, err
		}
		root, cleanup = dir, func() { os.RemoveAll(dir) }
	}
	abs := make([]string, len(folders))
	for i, f := range folders {
		a, err := filepath.Abs(f)
		if err != nil {
			return nil, cleanup, err
		}
		abs[i] = a
	}
	cfg, _ := json.Marshal(map[string]any{"root": root, "wasm_tools": abs})
	cfg, err := wsfs.ApplyToolEnv(cfg, os.LookupEnv)
	if err != nil {
		return nil, cleanup, err
	}
	ws, err := wsfs.OpenJSON(cfg, nil)
	if err != nil {
		cleanup()
		return nil, func() {}, err
	}
	return ws, func() { ws.Close(); cleanup() }, nil
}

func toolList(args []string, stdout, stderr io.Writer) int {
	fs, jsonOut := toolFlags("list")
	args, code, done := parseSub(fs, args, toolUsage, stdout, stderr)
	if done {
		return code
	}
	if len(args) == 0 {
		return toolUsageError(stderr, "list takes one or more FOLDERs")
	}
	ws, closeWS, err := openWith("", args)
	if err != nil {
		fmt.Fprintln(stderr, "wsfs tool list:", loadError(err))
		return 2
	}
	defer closeWS()
	specs, err := ws.ToolSpecs()
	if err != nil {
		fmt.Fprintln(stderr, "wsfs tool list:", errText(err))
		return 2
	}
	names := ws.WasmTools()
	var listed []wsfs.ToolSpec
	for _, s := range specs {
		for _, n := range names {
			if s.Name == n {
				listed = append(listed, s)
			}
		}
	}
	if *jsonOut {
		printJSON(stdout, listed)
		return 0
	}
	for _, s := range listed {
		fmt.Fprintf(stdout, "%s  %s\n", s.Name, firstSentence(s.Description))
	}
	return 0
}

func toolRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, jsonOut := toolFlags("run")
	root := fs.String("root", "", "workspace root (default: a new empty temporary directory)")
	pos, code, done := parseSub(fs, args, toolUsage, stdout, stderr)
	if done {
		return code
	}
	if len(pos) < 1 || len(pos) > 2 {
		return toolUsageError(stderr, "run takes FOLDER and optional JSON arguments")
	}
	argsJSON := "{}"
	if len(pos) == 2 {
		argsJSON = pos[1]
	}
	ws, closeWS, err := openWith(*root, pos[:1])
	if err != nil {
		fmt.Fprintln(stderr, "wsfs tool run:", loadError(err))
		return 2
	}
	defer closeWS()
	names := ws.WasmTools()
	if len(names) != 1 {
		return toolUsageError(stderr, fmt.Sprintf("%s holds %d tools; run one tool folder", pos[0], len(names)))
	}
	env, err := ws.CallRaw(ctx, names[0], argsJSON)
	if printEnvelope(stdout, stderr, env, *jsonOut, "wsfs tool run", nil) || err != nil {
		return 1
	}
	return 0
}

type toolCase struct {
	Name        string          `json:"name"`
	Args        json.RawMessage `json:"args"`
	Expect      json.RawMessage `json:"expect"`
	ExpectError string          `json:"expect_error"`
}

func toolTest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, jsonOut := toolFlags("test")
	root := fs.String("root", "", "workspace root for every case (default: a new temporary directory per case)")
	pos, code, done := parseSub(fs, args, toolUsage, stdout, stderr)
	if done {
		return code
	}
	if len(pos) != 1 {
		return toolUsageError(stderr, "test takes one FOLDER")
	}
	raw, err := os.ReadFile(filepath.Join(pos[0], "tests.json"))
	if err != nil {
		return toolUsageError(stderr, err.Error())
	}
	var cases []toolCase
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cases); err != nil {
		return toolUsageError(stderr, "tests.json: "+err.Error())
	}
	// A tool that does not load is exit 2 (as tool -h says), not a failed case.
	_, closeWS, err := openWith(*root, pos[:1])
	if err != nil {
		fmt.Fprintln(stderr, "wsfs tool test:", loadError(err))
		return 2
	}
	closeWS()
	type result struct {
		Name    string `json:"name"`
		OK      bool   `json:"ok"`
		Message string `json:"message,omitempty"`
	}
	var results []result
	failed := 0
	for i, c := range cases {
		if c.Name == "" {
			c.Name = fmt.Sprintf("case %d", i+1)
		}
		msg := runCase(ctx, *root, pos[0], c)
		results = append(results, result{Name: c.Name, OK: msg == "", Message: msg})
		if msg != "" {
			failed++
		}
	}
	if *jsonOut {
		printJSON(stdout, map[string]any{"passed": len(cases) - failed, "failed": failed, "cases": results})
	} else {
		for _, r := range results {
			if r.OK {
				fmt.Fprintf(stdout, "ok    %s\n", r.Name)
			} else {
				fmt.Fprintf(stdout, "FAIL  %s: %s\n", r.Name, r.Message)
			}
		}
		fmt.Fprintf(stdout, "%d passed, %d failed\n", len(cases)-failed, failed)
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// runCase runs one case and says what went wrong ("" when it passed).
func runCase(ctx context.Context, root, folder string, c toolCase) string {
	ws, closeWS, err := openWith(root, []string{folder})
	if err != nil {
		return "the tool does not load: " + loadError(err)
	}
	defer closeWS()
	names := ws.WasmTools()
	if len(names) != 1 {
		return fmt.Sprintf("%s holds %d tools", folder, len(names))
	}
	argsJSON := "{}"
	if len(c.Args) > 0 {
		argsJSON = string(c.Args)
	}
	raw, _ := ws.CallRaw(ctx, names[0], argsJSON)
	var env struct {
		OK    bool            `json:"ok"`
		Data  json.RawMessage `json:"data"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		return "malformed envelope: " + raw
	}
	switch {
	case c.ExpectError != "":
		if env.OK || env.Error == nil || env.Error.Code != c.ExpectError {
			return fmt.Sprintf("want error %s, got %s", c.ExpectError, raw)
		}
	case !env.OK:
		return fmt.Sprintf("%s: %s", env.Error.Code, env.Error.Message)
	case len(c.Expect) > 0 && !sameJSON(env.Data, c.Expect):
		return fmt.Sprintf("want %s, got %s", c.Expect, env.Data)
	}
	return ""
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return string(mustJSON(x)) == string(mustJSON(y))
}
