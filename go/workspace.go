package wsfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/wsfs/wsfs/go/internal/callhook"
)

// ABIVersion is the C ABI version this package is written against. Open
// refuses a library whose wsfs_version() reports another "abi" number.
const ABIVersion = 1

// Limits bounds every call on a workspace. A zero field means "use the
// library's default" (shown in parentheses); negative values are
// invalid_arguments. The library also enforces upper ceilings (1 GiB for the
// byte limits, 1,000,000 entries, 24 hours).
type Limits struct {
	// MaxReadBytes is the most read_file returns (256 KiB); longer files are
	// cut at a UTF-8 boundary and flagged as truncated.
	MaxReadBytes int
	// MaxWriteBytes is the largest content write_file, append_file and
	// edit_file accept, and the largest file edit_file works on (1 MiB).
	MaxWriteBytes int
	// MaxListEntries is the most entries list_dir returns (500).
	MaxListEntries int
	// OperationTimeout bounds each call (10s); it is rounded up to whole
	// milliseconds. A context deadline or a per-tool timeout can only
	// shorten it.
	OperationTimeout time.Duration
}

// Config configures Open.
type Config struct {
	// Root is the workspace directory. It is trimmed, a leading "~" is
	// expanded to $HOME, it is made absolute against the current directory,
	// created with its parents if missing, and its symlinks are resolved
	// once, at Open. Every tool path is resolved beneath it by the kernel.
	Root string
	// RestrictToWorkspace confines every path to Root (MiniClaw's
	// restrict_to_workspace). nil means true; set it to Bool(false) only if
	// you really want the agent to reach the whole filesystem.
	RestrictToWorkspace *bool
	// Limits bounds every call; zero fields take the library defaults.
	Limits Limits
	// StateDir is where the library keeps the journals of multi-file
	// apply_patch commits. It must lie outside Root. Empty means the
	// library's default, $XDG_STATE_HOME/wsfs or ~/.local/state/wsfs.
	StateDir string
	// Policy says what the agent may read and change, and where every call
	// is logged. The zero value is the library's default: writes enabled,
	// nothing denied to reading, ".git/**" denied to changes, no audit log.
	Policy Policy
	// Logger receives one record per tool call (tool, workspace-relative
	// path, outcome code, duration). Never file contents. nil discards.
	Logger *slog.Logger
}

// Policy is the workspace policy, the host's say over the tools (the
// "policy" object of the C ABI's config; README "Policy and audit log" has
// the details).
type Policy struct {
	// WritesEnabled: nil means true. Bool(false) makes the workspace
	// read-only: every tool that is not read-only (see ToolSpec.ReadOnly)
	// fails with CodeWritesDisabled before it runs; reading tools work.
	WritesEnabled *bool
	// DenyRead lists gitignore-style globs (".env", "**/*.pem",
	// "secrets/") of workspace-relative paths that no tool may read, list
	// or walk into. They are matched on the path as resolved by the kernel,
	// so symlinks and ".." do not get around them; a pattern naming a
	// directory denies everything under it. Refusals are CodePolicyDenied;
	// listings leave denied entries out and count them.
	DenyRead []string
	// DenyWrite lists the globs of paths no tool may change. nil means the
	// library's default, [".git/**"] (agents read a repository's history
	// but cannot rewrite it); a non-nil empty slice means no rules.
	DenyWrite []string
	// AuditLog, if not "", is the file that gets one JSON line per call
	// (time, tool, paths, outcome, bytes, duration, sha256 of each changed
	// file before and after; never contents), fsynced before the call
	// returns. "~" is expanded and a relative path is taken from the
	// current directory, as for Root. If it lies inside the workspace, no
	// tool can reach or list it.
	AuditLog string
}

// Bool returns a pointer to v, for Config.RestrictToWorkspace and
// RunnerConfig.RestrictToWorkspace.
func Bool(v bool) *bool { return &v }

// Workspace is an open wsfs workspace: a directory that the tools can
// read and change and never leave. It is safe for concurrent use by many
// goroutines; Close may be called while calls are in flight (those calls
// either finish normally or fail with CodeInvalidWorkspace).
//
// # Deadlines, cancellation and what a failure means
//
// Every method takes a context. The call is bounded by the workspace's
// OperationTimeout, shortened by the context's deadline (and by a per-tool
// timeout for the agent tools). If the context can be cancelled, cancelling
// it makes the library stop at its next check (between path components, read
// chunks, directory entries and before the commit point); a single system
// call is never interrupted. A context that is already done returns
// CodeCancelled or CodeTimeout without calling the library.
//
// The library guarantees that a CodeCancelled or CodeTimeout result means
// nothing was changed. Once an operation passes its commit point (the rename
// of write_file and edit_file, the write of append_file) it finishes and
// reports success even if the context is cancelled meanwhile. So a failure is
// always truthful: retrying a cancelled write, edit or append is safe and
// never duplicates it.
type Workspace struct {
	handle   uint64
	root     string
	restrict bool
	limits   Limits
	policy   Policy
	warnings []string
	logger   *slog.Logger

	closed  atomic.Bool
	cleanup runtime.Cleanup
}

// openData is the data of wsfs_workspace_open's envelope.
type openData struct {
	Workspace           uint64     `json:"workspace"`
	Root                string     `json:"root"`
	RestrictToWorkspace bool       `json:"restrict_to_workspace"`
	Limits              limitsJSON `json:"limits"`
	Policy              struct {
		WritesEnabled bool     `json:"writes_enabled"`
		DenyRead      []string `json:"deny_read"`
		DenyWrite     []string `json:"deny_write"`
		AuditLog      *string  `json:"audit_log"`
	} `json:"policy"`
}

type limitsJSON struct {
	MaxReadBytes       int64 `json:"max_read_bytes,omitempty"`
	MaxWriteBytes      int64 `json:"max_write_bytes,omitempty"`
	MaxListEntries     int64 `json:"max_list_entries,omitempty"`
	OperationTimeoutMS int64 `json:"operation_timeout_ms,omitempty"`
}

type configJSON struct {
	Root                string      `json:"root"`
	RestrictToWorkspace bool        `json:"restrict_to_workspace"`
	Limits              *limitsJSON `json:"limits,omitempty"`
	StateDir            string      `json:"state_dir,omitempty"`
	Policy              *policyJSON `json:"policy,omitempty"`
}

// policyJSON is Policy in the C ABI's config: absent fields take the
// library's defaults, so nil DenyWrite (the default) and an empty one (no
// rules) stay apart.
type policyJSON struct {
	WritesEnabled *bool     `json:"writes_enabled,omitempty"`
	DenyRead      []string  `json:"deny_read,omitempty"`
	DenyWrite     *[]string `json:"deny_write,omitempty"`
	AuditLog      string    `json:"audit_log,omitempty"`
}

// Open checks the library's ABI version and opens a workspace. Failures are
// *Error (CodeInvalidPath for an empty root or one with a NUL byte,
// CodeInvalidArguments for bad limits, CodeNotADirectory, CodePermissionDenied
// ...) or *ABIMismatchError. Close the workspace when done.
func Open(cfg Config) (*Workspace, error) {
	if _, err := Version(); err != nil {
		return nil, err
	}
	if strings.IndexByte(cfg.Root, 0) >= 0 {
		return nil, newError("open", CodeInvalidPath, "workspace root contains a NUL byte")
	}
	if !utf8.ValidString(cfg.Root) {
		return nil, newError("open", CodeInvalidPath, "workspace root is not valid UTF-8")
	}
	lj, err := cfg.Limits.toJSON()
	if err != nil {
		return nil, err
	}
	cj := configJSON{Root: cfg.Root, RestrictToWorkspace: true, StateDir: cfg.StateDir}
	if cfg.RestrictToWorkspace != nil {
		cj.RestrictToWorkspace = *cfg.RestrictToWorkspace
	}
	if lj != (limitsJSON{}) {
		cj.Limits = &lj
	}
	pj, err := cfg.Policy.toJSON()
	if err != nil {
		return nil, err
	}
	if pj.WritesEnabled != nil || pj.DenyRead != nil || pj.DenyWrite != nil || pj.AuditLog != "" {
		cj.Policy = &pj
	}
	body, err := json.Marshal(cj)
	if err != nil {
		return nil, newError("open", CodeInvalidArguments, "encoding config: %v", err)
	}
	return openJSON(string(body), cfg.Logger)
}

// OpenJSON opens a workspace from the library's configuration JSON, passed
// to wsfs_workspace_open as it is: {"root": ..., "restrict_to_workspace":
// ..., "limits": {...}, "state_dir": ...} (state_dir is Config.StateDir) and
// any key a newer library accepts, so a host that
// reads the configuration from a file (the MCP server's --config) needs no
// change when the library gains one. The library validates it (unknown keys
// and zero limits are CodeInvalidArguments). logger is Config.Logger.
func OpenJSON(configJSON []byte, logger *slog.Logger) (*Workspace, error) {
	if _, err := Version(); err != nil {
		return nil, err
	}
	return openJSON(string(configJSON), logger)
}

func openJSON(configJSON string, logger *slog.Logger) (*Workspace, error) {
	raw, ok := cOpen(configJSON)
	if !ok {
		return nil, newError("open", CodeInvalidArguments, "config contains a NUL byte")
	}
	var data openData
	env, perr := parseEnvelope("open", raw, outputFull, &data)
	if perr != nil {
		return nil, perr
	}
	if !env.OK {
		return nil, env.err("open", nil)
	}
	if data.Workspace == 0 {
		return nil, newError("open", CodeIOError, "malformed wsfs_workspace_open envelope: %s", raw)
	}
	ws := &Workspace{
		handle:   data.Workspace,
		root:     data.Root,
		restrict: data.RestrictToWorkspace,
		limits: Limits{
			MaxReadBytes:     int(data.Limits.MaxReadBytes),
			MaxWriteBytes:    int(data.Limits.MaxWriteBytes),
			MaxListEntries:   int(data.Limits.MaxListEntries),
			OperationTimeout: time.Duration(data.Limits.OperationTimeoutMS) * time.Millisecond,
		},
		policy: Policy{
			WritesEnabled: Bool(data.Policy.WritesEnabled),
			DenyRead:      nonNil(data.Policy.DenyRead),
			DenyWrite:     nonNil(data.Policy.DenyWrite),
		},
		warnings: env.Warnings,
		logger:   logger,
	}
	if data.Policy.AuditLog != nil {
		ws.policy.AuditLog = *data.Policy.AuditLog
	}
	if ws.logger == nil {
		ws.logger = discardLogger
	}
	// A workspace that is garbage collected without Close still releases
	// its handle (and the directory descriptor behind it).
	ws.cleanup = runtime.AddCleanup(ws, func(h uint64) { cClose(h) }, ws.handle)
	return ws, nil
}

func (l Limits) toJSON() (limitsJSON, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxReadBytes", int64(l.MaxReadBytes)},
		{"MaxWriteBytes", int64(l.MaxWriteBytes)},
		{"MaxListEntries", int64(l.MaxListEntries)},
		{"OperationTimeout", int64(l.OperationTimeout)},
	} {
		if f.v < 0 {
			return limitsJSON{}, newError("open", CodeInvalidArguments, "Limits.%s must not be negative, got %d", f.name, f.v)
		}
	}
	return limitsJSON{
		MaxReadBytes:       int64(l.MaxReadBytes),
		MaxWriteBytes:      int64(l.MaxWriteBytes),
		MaxListEntries:     int64(l.MaxListEntries),
		OperationTimeoutMS: ceilMillis(l.OperationTimeout),
	}, nil
}

// toJSON checks the policy's strings (JSON encoding would silently replace
// invalid UTF-8) and maps it to the config's JSON.
func (p Policy) toJSON() (policyJSON, error) {
	for _, list := range [][]string{p.DenyRead, p.DenyWrite, {p.AuditLog}} {
		for _, s := range list {
			if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
				return policyJSON{}, newError("open", CodeInvalidArguments, "Policy has a string that is not valid UTF-8 or contains a NUL byte: %q", s)
			}
		}
	}
	pj := policyJSON{WritesEnabled: p.WritesEnabled, DenyRead: p.DenyRead, AuditLog: p.AuditLog}
	if p.DenyWrite != nil {
		pj.DenyWrite = &p.DenyWrite
	}
	return pj, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ceilMillis rounds d up to whole milliseconds (0 stays 0).
func ceilMillis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// Close releases the workspace. It is idempotent: only the first call
// closes, later calls return nil. Calls made after Close fail with
// CodeInvalidWorkspace.
func (ws *Workspace) Close() error {
	if !ws.closed.CompareAndSwap(false, true) {
		return nil
	}
	ws.cleanup.Stop()
	raw := cClose(ws.handle)
	env, perr := parseEnvelope("close", raw, outputFull, nil)
	if perr != nil {
		return perr
	}
	if !env.OK {
		return env.err("close", nil)
	}
	return nil
}

// Root returns the absolute, symlink-resolved workspace directory.
func (ws *Workspace) Root() string { return ws.root }

// RestrictToWorkspace reports whether paths are confined to Root.
func (ws *Workspace) RestrictToWorkspace() bool { return ws.restrict }

// Limits returns the effective limits, library defaults filled in.
func (ws *Workspace) Limits() Limits { return ws.limits }

// Policy returns the effective policy, library defaults filled in
// (WritesEnabled is never nil, DenyRead and DenyWrite never nil, AuditLog
// absolute with its symlinks resolved, or "" for none).
func (ws *Workspace) Policy() Policy {
	p := ws.policy
	p.WritesEnabled = Bool(*p.WritesEnabled)
	p.DenyRead = append([]string{}, p.DenyRead...)
	p.DenyWrite = append([]string{}, p.DenyWrite...)
	return p
}

// Warnings returns the warnings from opening the workspace (for example
// that the root is $HOME or "/").
func (ws *Workspace) Warnings() []string { return append([]string(nil), ws.warnings...) }

// Closed reports whether Close has been called.
func (ws *Workspace) Closed() bool { return ws.closed.Load() }

// Output selects how much of the envelope the library builds (the "output"
// option of wsfs_call_with_options).
const (
	outputFull    = "full"     // data and text: CallRaw, and the small results
	outputText    = "text"     // text only
	outputTextRaw = "text_raw" // the fantasy tools: the text after a '\n', unescaped
	outputDataRaw = "data_raw" // ReadFile: read_file's content after a '\n', unescaped
)

// callSpec describes one call through the C ABI.
type callSpec struct {
	tool   string
	args   string
	output string // one of the output* modes
	// content, if hasContent, is passed as wsfs_call_with_content's buffer
	// (write_file and append_file), without copying.
	content    string
	hasContent bool
	// data receives the success envelope's data (a pointer; nil: not
	// decoded).
	data any
	// spare is how many bytes the caller may append to the result in place
	// (see envelope.buf).
	spare   int
	timeout time.Duration // extra per-call bound, 0 = none
	path    string        // for the log record only
	logger  *slog.Logger  // nil = the workspace's logger
}

// call runs one tool through wsfs_call_with_options with the context's
// deadline and cancellation, and logs one record. It returns the raw envelope
// (synthesised for failures detected in Go), the parsed envelope and, if the
// call failed, an *Error.
func (ws *Workspace) call(ctx context.Context, cs callSpec) (raw string, env *envelope, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if !ws.logged(cs) { // the usual case: no clock reads for a record nobody keeps
		return ws.callC(ctx, cs)
	}
	start := time.Now()
	raw, env, err = ws.callC(ctx, cs)
	ws.logCall(cs, err, time.Since(start))
	return raw, env, err
}

// logged reports whether cs's call may produce a log record (ok calls are
// logged at Info, failures at Warn).
func (ws *Workspace) logged(cs callSpec) bool {
	logger := cs.logger
	if logger == nil {
		logger = ws.logger
	}
	return logger.Enabled(context.Background(), slog.LevelInfo) || logger.Enabled(context.Background(), slog.LevelWarn)
}

func (ws *Workspace) callC(ctx context.Context, cs callSpec) (string, *envelope, error) {
	if strings.IndexByte(cs.tool, 0) >= 0 || strings.IndexByte(cs.args, 0) >= 0 {
		return failure(newError(cs.tool, CodeInvalidArguments, "arguments contain a NUL byte"))
	}
	if err := ctx.Err(); err != nil {
		return failure(ctxError(cs.tool, ctx))
	}
	timeout := cs.timeout
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left <= 0 {
			return failure(&Error{Tool: cs.tool, Code: CodeTimeout,
				Message: "the context deadline passed before the call started; nothing was changed",
				cause:   context.DeadlineExceeded})
		}
		if timeout <= 0 || left < timeout {
			timeout = left
		}
	}

	opts := make([]byte, 0, 96) // stays on the stack: cCall copies it
	opts = append(opts, `{"output":"`...)
	opts = append(opts, cs.output...)
	opts = append(opts, '"')
	if ms := ceilMillis(timeout); ms > 0 {
		opts = append(opts, `,"timeout_ms":`...)
		opts = strconv.AppendInt(opts, ms, 10)
	}

	var token uint64
	var ct *contextToken
	var release func()
	var fired <-chan struct{}
	if ctx.Done() != nil {
		var ok bool
		if token, fired, ct, release, ok = cancelToken(ctx); !ok {
			return failure(ctxError(cs.tool, ctx)) // it ended just now
		}
		opts = append(opts, `,"cancel_token":`...)
		opts = strconv.AppendUint(opts, token, 10)
	}
	opts = append(opts, '}')

	if h := callhook.Before.Load(); h != nil {
		(*h)(cs.tool, fired)
	}
	var content *string
	if cs.hasContent {
		content = &cs.content
	}
	res := new(callResult) // the envelope and the buffer it points into, in one allocation
	res.env.buf = &res.buf
	cCall(&res.buf, ws.handle, cs.tool, cs.args, unsafe.String(unsafe.SliceData(opts), len(opts)), content, cs.spare) // NUL bytes were rejected above
	raw := res.buf.String()
	runtime.KeepAlive(ws)

	if ct != nil {
		ct.release()
	} else if release != nil {
		release()
	}

	env, perr := parseEnvelopeInto(&res.env, cs.tool, raw, cs.output, cs.data)
	if perr != nil {
		return failure(perr)
	}
	if !env.OK {
		return raw, env, env.err(cs.tool, ctx)
	}
	return raw, env, nil
}

// callResult is a call's result as the library returned it, and its
// envelope.
type callResult struct {
	env envelope
	buf strings.Builder
}

// Cancellation. The library stops a call when the call's cancel token is
// cancelled, so a cancellable context needs a token that is cancelled when
// the context is. A context usually makes many calls (an agent run), so the
// token is made on its first call and kept for the context's life: a
// context.AfterFunc, registered once, cancels it when the context is
// cancelled and frees it when no call uses it any more. Every later call of
// that context costs a map lookup. Contexts are told apart by their Done
// channel (contexts derived with WithValue share their parent's, and its
// cancellation). At most maxContextTokens contexts keep a token (one that
// is dropped without ever being cancelled keeps its token until the
// process ends); beyond them, a call takes a token from the pool below and
// watches its context with an AfterFunc of its own.

// contextTokens maps a context's Done channel to its *contextToken.
var (
	contextTokens     sync.Map
	contextTokenCount atomic.Int64
)

const maxContextTokens = 1024

// contextToken is the cancel token of one context.
type contextToken struct {
	token uint64
	fired chan struct{} // closed once the context ended and the token was cancelled
	mu    sync.Mutex
	users int  // calls using the token now
	ended bool // the context ended: the token is freed once users is 0
}

// cancelToken returns the token for a call with the cancellable ctx and the
// channel closed once ctx's end has been passed on to the token. When the
// call is over, the caller calls ct.release(), or release() if ct is nil.
// ok is false if ctx has already ended (nothing to release then).
func cancelToken(ctx context.Context) (token uint64, fired <-chan struct{}, ct *contextToken, release func(), ok bool) {
	done := ctx.Done()
	v, found := contextTokens.Load(done)
	if !found {
		if contextTokenCount.Load() >= maxContextTokens {
			token, fired, release = callToken(ctx)
			return token, fired, nil, release, true
		}
		ct := &contextToken{token: cCancelTokenNew(), fired: make(chan struct{})}
		if v, found = contextTokens.LoadOrStore(done, ct); found {
			cCancelTokenFree(ct.token) // another call of ctx was first
		} else {
			contextTokenCount.Add(1)
			v = ct
			context.AfterFunc(ctx, func() { ct.end(ctx, done) })
		}
	}
	ct = v.(*contextToken)
	ct.mu.Lock()
	if ct.ended {
		ct.mu.Unlock()
		return 0, nil, nil, nil, false
	}
	ct.users++
	ct.mu.Unlock()
	return ct.token, ct.fired, ct, nil, true
}

// end runs when the context ends: the token is cancelled (unless the
// context's deadline passed: the library already enforces the deadline as
// timeout_ms and reports "timeout"), forgotten, and freed once unused.
func (ct *contextToken) end(ctx context.Context, done <-chan struct{}) {
	if !deadlinePassed(ctx) {
		cCancelTokenCancel(ct.token)
	}
	close(ct.fired)
	if contextTokens.CompareAndDelete(done, ct) {
		contextTokenCount.Add(-1)
	}
	ct.mu.Lock()
	ct.ended = true
	unused := ct.users == 0
	ct.mu.Unlock()
	if unused {
		cCancelTokenFree(ct.token)
	}
}

func (ct *contextToken) release() {
	ct.mu.Lock()
	ct.users--
	free := ct.ended && ct.users == 0
	ct.mu.Unlock()
	if free {
		cCancelTokenFree(ct.token)
	}
}

// deadlinePassed reports whether ctx ended because its deadline passed.
func deadlinePassed(ctx context.Context) bool {
	_, hasDeadline := ctx.Deadline()
	return hasDeadline && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// callToken is cancelToken for one call, when too many contexts keep a
// token: a token from the pool, and an AfterFunc watching ctx for the call.
func callToken(ctx context.Context) (token uint64, fired <-chan struct{}, release func()) {
	token = tokens.get()
	f := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(f)
		if !deadlinePassed(ctx) {
			cCancelTokenCancel(token)
		}
	})
	return token, f, func() {
		if stop() {
			tokens.put(token) // never cancelled: reusable
		} else {
			<-f // the AfterFunc is running: let it finish before freeing
			cCancelTokenFree(token)
		}
	}
}

// tokens keeps cancel tokens that were never cancelled, for reuse by
// callToken. A token is in at most one call at a time, and one that was
// cancelled (or might have been) is freed, never reused. The list is
// bounded; tokens beyond it are freed.
var tokens tokenList

type tokenList struct {
	mu   sync.Mutex
	free []uint64
}

const maxFreeTokens = 64

func (l *tokenList) get() uint64 {
	l.mu.Lock()
	if n := len(l.free); n > 0 {
		t := l.free[n-1]
		l.free = l.free[:n-1]
		l.mu.Unlock()
		return t
	}
	l.mu.Unlock()
	return cCancelTokenNew()
}

func (l *tokenList) put(t uint64) {
	l.mu.Lock()
	if len(l.free) < maxFreeTokens {
		l.free = append(l.free, t)
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	cCancelTokenFree(t)
}

// failure builds the envelope the library would have returned for e.
func failure(e *Error) (string, *envelope, error) {
	env := &envelope{Text: e.Text(), Error: &envError{e.Code, e.Message}}
	b, _ := json.Marshal(struct {
		OK    bool      `json:"ok"`
		Error *envError `json:"error"`
		Text  string    `json:"text"`
	}{false, env.Error, env.Text})
	return string(b), env, e
}

// ctxError is the error for a context that is done before the call starts.
func ctxError(tool string, ctx context.Context) *Error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Tool: tool, Code: CodeTimeout, cause: err,
			Message: "the context deadline passed before the call started; nothing was changed"}
	}
	return &Error{Tool: tool, Code: CodeCancelled, cause: err,
		Message: "the context was cancelled before the call started; nothing was changed"}
}

var discardLogger = slog.New(slog.DiscardHandler)

// maxLoggedPath bounds the path attribute of log records.
const maxLoggedPath = 512

func (ws *Workspace) logCall(cs callSpec, err error, d time.Duration) {
	logger := cs.logger
	if logger == nil {
		logger = ws.logger
	}
	ctx := context.Background()
	outcome, level := "ok", slog.LevelInfo
	if err != nil {
		level = slog.LevelWarn
		var e *Error
		if errors.As(err, &e) {
			outcome = string(e.Code)
		} else {
			outcome = string(CodeIOError)
		}
	}
	if !logger.Enabled(ctx, level) {
		return
	}
	logger.LogAttrs(ctx, level, "wsfs tool call",
		slog.String("tool", cs.tool),
		slog.String("path", ws.relPath(cs.path)),
		slog.String("outcome", outcome),
		slog.Duration("duration", d),
	)
}

// relPath makes an absolute path inside the root relative, for logs.
func (ws *Workspace) relPath(p string) string {
	if filepath.IsAbs(p) && ws.root != "" {
		if rel, err := filepath.Rel(ws.root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			p = rel
		}
	}
	if len(p) > maxLoggedPath {
		cut := maxLoggedPath
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		p = p[:cut] + "…"
	}
	return p
}

// CallRaw runs a tool by name with JSON arguments and returns the library's
// envelope unchanged ({"ok":true,"data":...,"text":...,"warnings":[...]} or
// {"ok":false,"error":{...},"text":...}). err is the *Error for a failed
// call, nil on success. Failures detected before calling the library (a NUL
// byte, a context already done) get an envelope of the same shape. This is
// what the wsfs CLI uses; prefer the typed methods in Go code.
func (ws *Workspace) CallRaw(ctx context.Context, tool, argsJSON string) (envelopeJSON string, err error) {
	raw, _, err := ws.call(ctx, callSpec{tool: tool, args: argsJSON, output: outputFull, path: pathOf(argsJSON)})
	return raw, err
}

// pathOf extracts the "path" argument for logging; "" if there is none.
func pathOf(argsJSON string) string {
	var a struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal([]byte(argsJSON), &a)
	return a.Path
}

// VersionInfo is the library's wsfs_version().
type VersionInfo struct {
	Version string `json:"version"`
	ABI     int    `json:"abi"`
}

var versionOnce = sync.OnceValues(func() (VersionInfo, error) { return checkABI(cVersion()) })

// Version returns the linked library's version. It fails with
// *ABIMismatchError if the library's ABI is not ABIVersion.
func Version() (VersionInfo, error) { return versionOnce() }

func checkABI(versionJSON string) (VersionInfo, error) {
	var v VersionInfo
	if err := json.Unmarshal([]byte(versionJSON), &v); err != nil {
		return v, fmt.Errorf("wsfs: malformed wsfs_version() %q: %w", versionJSON, err)
	}
	if v.ABI != ABIVersion {
		return v, &ABIMismatchError{Want: ABIVersion, Got: v.ABI, LibraryVersion: v.Version}
	}
	return v, nil
}
