// Package wsfs gives Go programs filesystem tools (read_file, write_file,
// append_file, list_dir, edit_file, get_path_info, find_files,
// search_text, apply_patch, create_directory, move_file, delete_file: see
// ToolNames) that can only touch one workspace directory, under a policy
// the host sets in Config.Policy (read-only mode, paths denied to reading
// or changing, an audit log). The work is done by the Rust library libwsfs
// through its C ABI (see the repository's README.md); this package is the
// cgo binding (cgo.go, the only file that touches C) and a typed API on
// top. It depends on no agent framework.
//
// The module's other packages build on it, each with one job:
//
//   - fantasytools: the tools as charm.land/fantasy agent tools;
//   - agent: an agent loop with per-session history for chat applications
//     (MiniClaw's fantasy-agent provider), and MiniClaw's configuration;
//   - mcpserver: the tools as an MCP server;
//   - scripted: a deterministic fantasy.LanguageModel for tests and demos;
//   - cmd/wsfs: the wsfs command.
//
// # Building
//
// A release of the module (make dist; docs/install.md) carries the built
// library inside it, so `go get` of a release needs only Go and a C compiler.
// In a checkout, run `make build` in the repository root first: it produces
// target/release/libwsfs.a, which `go build` links statically (no
// LD_LIBRARY_PATH, no runtime dependency), and a stamp that makes Go relink
// when the library changes. The build tag wsfs_shared links
// target/release/libwsfs.so instead, with an rpath. Another module uses a
// checkout with a replace directive (go/README.md). Without the library the
// build stops with an #error naming `make build`; without cgo, with an
// undefined identifier that says cgo is needed.
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
// Each tool's input, result and method are in its own file,
// tool_<name>.go. An agent framework's adapter calls CallForModel with the
// model's JSON arguments and gets the text the model should read.
//
// # Overlay sessions
//
// With Config.Mode ModeOverlay the root is the read-only base of a
// copy-on-write session (Config.Session, kept in Config.StateDir): the tools
// work unchanged on base + session, and the host reviews and applies their
// changes with SessionDiff, SessionCommit (all, some paths or some hunks;
// conflicts when the base changed outside), SessionCheckpoint,
// SessionRewind, SessionCheckpoints, SessionDiscard and SessionRefresh
// (session.go). A host-mode workspace gets ErrNoSession.
package wsfs
