package wsfs

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/wsfs/wsfs/go/internal/callhook"
)

// Output selects how much of the envelope the library builds (the "output"
// option of wsfs_call_with_options).
const (
	outputFull    = "full"     // data and text: CallRaw, and the small results
	outputText    = "text"     // text only
	outputTextRaw = "text_raw" // CallForModel: the text after a '\n', unescaped
	outputDataRaw = "data_raw" // ReadFile: read_file's content after a '\n', unescaped
)

// callSpec describes one call through the C ABI.
type callSpec struct {
	tool string
	args string
	// dispatch: args is a whole tool call for wsfs_dispatch, and tool only
	// its name as read in Go (for the log record and errors found in Go).
	dispatch bool
	output   string // one of the output* modes
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
	// profiled: the result is a profile's envelope, returned as it is (not
	// parsed; err is set only for failures detected in Go).
	profiled bool
	// metrics, if set, receives the call's metrics (the library is asked
	// for them); otherwise the typed calls ask the library to leave them
	// out, and CallRaw (keepMetrics) takes its default.
	metrics     *Metrics
	keepMetrics bool
}

// call runs one tool through wsfs_call_with_options with the context's
// deadline and cancellation, and logs one record. It returns the raw envelope
// (synthesised for failures detected in Go), the parsed envelope and, if the
// call failed, an *Error.
func (ws *Workspace) call(ctx context.Context, cs callSpec) (raw string, env *envelope, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if ws.profile != "" && !cs.profiled {
		return failure(newError(cs.tool, CodeInvalidArguments,
			"this method returns the native result; the workspace serves the %q profile: use CallRaw", ws.profile))
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
	switch raw := cs.output == outputTextRaw || cs.output == outputDataRaw; {
	case cs.metrics != nil:
		opts = append(opts, `,"metrics":true`...)
	case !cs.keepMetrics && !raw: // the raw modes leave them out already
		opts = append(opts, `,"metrics":false`...)
	}
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
	res.env.metrics = cs.metrics
	if cs.dispatch {
		cDispatch(&res.buf, ws.handle, cs.args, unsafe.String(unsafe.SliceData(opts), len(opts))) // NUL bytes were rejected above
	} else {
		cCall(&res.buf, ws.handle, cs.tool, cs.args, unsafe.String(unsafe.SliceData(opts), len(opts)), content, cs.spare) // NUL bytes were rejected above
	}
	raw := res.buf.String()
	runtime.KeepAlive(ws)

	if ct != nil {
		ct.release()
	} else if release != nil {
		release()
	}
	if cs.profiled {
		if cs.metrics != nil {
			raw = takeMetrics(raw, cs.metrics)
		}
		return raw, nil, nil
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

// CallRaw runs a tool by name with JSON arguments and returns the library's
// envelope unchanged ({"ok":true,"data":...,"text":...,"warnings":[...]} or
// {"ok":false,"error":{...},"text":...}). err is the *Error for a failed
// call, nil on success. Failures detected before calling the library (a NUL
// byte, a context already done) get an envelope of the same shape. This is
// what the wsfs CLI uses; prefer the typed methods in Go code.
//
// On a workspace with a profile (Config.Profile) tool and argsJSON are in
// the profile's names and the envelope is the profile's, returned as the
// library made it; err is then nil except for failures detected in Go
// (which get the native failure envelope above).
func (ws *Workspace) CallRaw(ctx context.Context, tool, argsJSON string) (envelopeJSON string, err error) {
	return ws.CallRawWith(ctx, RawCall{Tool: tool, Args: argsJSON})
}

// RawCall is one call for CallRawWith.
type RawCall struct {
	// Tool and Args are CallRaw's tool and argsJSON.
	Tool string
	Args string
	// Timeout, if positive, bounds the call more tightly than the
	// workspace's OperationTimeout.
	Timeout time.Duration
	// Logger receives the call's log record; nil means the workspace's.
	Logger *slog.Logger
	// Metrics, if set, receives the call's figures (see Metrics), which also
	// go into its log record. On a workspace with a profile the library is
	// asked for them and they are taken off the profile's envelope, which is
	// returned in its document's shape.
	Metrics *Metrics
}

// CallRawWith is CallRaw with a per-call timeout, logger and metrics.
func (ws *Workspace) CallRawWith(ctx context.Context, c RawCall) (envelopeJSON string, err error) {
	cs := callSpec{tool: c.Tool, args: c.Args, output: outputFull, path: pathOf(c.Args), profiled: ws.profile != "",
		keepMetrics: true, timeout: c.Timeout, logger: c.Logger, metrics: c.Metrics}
	raw, _, err := ws.call(ctx, cs)
	return raw, err
}

// takeMetrics removes the "metrics" member the library appends last to a
// profile's envelope when asked, decoding it into m; an envelope without
// one is returned as it is. The member is found as the last `,"metrics":{`
// of the text: that sequence starts a member key (a quote inside a JSON
// string is escaped), and the figures hold no object of their own.
func takeMetrics(raw string, m *Metrics) string {
	const key = `,"metrics":`
	i := strings.LastIndex(raw, key+"{")
	if i < 0 || !strings.HasSuffix(raw, "}") {
		return raw
	}
	if json.Unmarshal([]byte(raw[i+len(key):len(raw)-1]), m) != nil {
		return raw
	}
	return raw[:i] + "}"
}

// pathOf extracts the "path" argument for logging; "" if there is none.
func pathOf(argsJSON string) string {
	var a struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal([]byte(argsJSON), &a)
	return a.Path
}
