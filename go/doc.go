// Package wsfs gives Go programs and charm.land/fantasy agents filesystem
// tools (read_file, write_file, append_file, list_dir, edit_file,
// get_path_info, find_files, search_text, apply_patch) that can only touch one
// workspace directory. The work is done by the Rust
// library libwsfs through its C ABI (see the repository's README.md); this
// package is a thin cgo binding (cgo.go) with a typed API on top.
//
// # Building
//
// Run `make build` in the repository root first: it produces
// target/release/libwsfs.a, which `go build` links statically (no
// LD_LIBRARY_PATH, no runtime dependency), and a stamp that makes Go relink
// when the library changes. The build tag wsfs_shared links
// target/release/libwsfs.so instead, with an rpath. The package is used from
// a built checkout: another module requires it with a replace directive and
// pins charm.land/fantasy to v0.42.0 (go/README.md, "Installing"); `go get`
// alone cannot build the Rust library. Without the library the build stops
// with an #error naming `make build`; without cgo, with an undefined
// identifier that says cgo is needed.
//
// # Typed API
//
//	ws, err := wsfs.Open(wsfs.Config{Root: "~/agent-workspace"})
//	if err != nil { ... }
//	defer ws.Close()
//	_, err = ws.WriteFile(ctx, wsfs.WriteFileInput{Path: "notes.md", Content: "# Notes\n"})
//	r, err := ws.ReadFile(ctx, wsfs.ReadFileInput{Path: "notes.md"})
//	if errors.Is(err, wsfs.ErrOutsideWorkspace) { ... }
//
// Every failure is an *Error with a stable Code (CodeOutsideWorkspace, ...);
// errors.Is works with the sentinels ErrOutsideWorkspace and friends. A
// Workspace is safe for concurrent use. Each call honours its context (see
// Workspace for the exact rules): CodeCancelled and CodeTimeout always mean
// nothing was changed.
//
// # Agent tools and the agent runner
//
// Tools returns the tools (ToolNames) as fantasy.AgentTool values for any fantasy
// agent. Runner is a complete agent loop for chat applications (MiniClaw's
// fantasy-agent provider): per-session history in a HistoryStore (in memory
// by default; a host may persist and bound it), a tool-iteration limit that
// ends with a tool-less summary step, optional parallel read-only tools,
// and one log record per tool call.
//
//	r, err := wsfs.NewRunner(wsfs.RunnerConfig{
//		Workspace:         "~/.miniclaw/workspace",
//		MaxToolIterations: 20,
//		Model:             model, // any fantasy.LanguageModel
//	})
//	reply, err := r.Run(ctx, sessionID, userMessage)
//
// Package scripted provides a deterministic fantasy.LanguageModel for tests
// and demos.
package wsfs
