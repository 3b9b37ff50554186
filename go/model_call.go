package wsfs

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"
)

// ModelCall is one tool call as an agent's model makes it, for
// CallForModel: the model's JSON arguments go to the library as they are,
// so its validation (unknown fields, missing paths, ...) words the errors
// the model reads.
type ModelCall struct {
	// Tool is the tool's name (ToolReadFile, ...).
	Tool string
	// Args are the model's JSON arguments; "" means {}.
	Args string
	// Content is the content the host has already decoded from Args, for
	// the tools whose content the library can take as a buffer (write_file
	// and append_file); nil for the others. Large content then goes to the
	// library as a buffer instead of being decoded a second time.
	Content *string
	// Path names the call's path in its log record.
	Path string
	// Timeout, if positive, bounds the call more tightly than the
	// workspace's OperationTimeout.
	Timeout time.Duration
	// Logger receives the call's log record; nil means the workspace's.
	Logger *slog.Logger
	// Metrics, if set, receives the call's figures (lines and bytes read,
	// matches, duration ...; see Metrics), which then also go into its log
	// record. It costs the library one copy of the text.
	Metrics *Metrics
}

// CallForModel runs a tool call made by a model and returns the text the
// model should read. On success that is the library's text (read_file's
// content itself, a listing, a one-line summary; truncation notices and
// warnings included) and a nil error. On failure it is "<code>: <message>",
// with the *Error; whether the failure ends the agent's run is for the
// caller to decide (package fantasytools: a closed workspace or the run's
// own context ending does, everything else the model can correct).
func (ws *Workspace) CallForModel(ctx context.Context, c ModelCall) (text string, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	args := c.Args
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if c.Tool == ToolReadFile && ctx.Err() == nil {
		if p, ok := onlyPath(args); ok {
			if e := ws.outsideLexically(c.Tool, p); e != nil {
				ws.logCall(callSpec{tool: c.Tool, path: c.Path, logger: c.Logger}, e, 0)
				return e.Text(), e
			}
		}
	}
	cs := callSpec{tool: c.Tool, args: args, output: outputTextRaw, timeout: c.Timeout, path: c.Path, logger: c.Logger, metrics: c.Metrics}
	if c.Content != nil && len(args) >= bufferedContentArgs && len(*c.Content) <= ws.limits.MaxWriteBytes {
		// Large content: the host has already decoded it from the JSON, so
		// the library takes it as a buffer instead of decoding it again;
		// the other arguments still go as the model sent them.
		if rest, ok := withoutContent(args); ok {
			cs.args, cs.content, cs.hasContent = rest, *c.Content, true
		}
	}
	_, env, err := ws.call(ctx, cs)
	if err == nil {
		if env.HasRaw {
			return env.Raw, nil
		}
		return env.Text, nil
	}
	var e *Error
	if !errors.As(err, &e) {
		return err.Error(), err
	}
	if env.Text != "" {
		return env.Text, err
	}
	return e.Text(), err
}

// bufferedContentArgs is the size of arguments from which the content goes to
// the library as a buffer rather than inside the JSON.
const bufferedContentArgs = 64 << 10

// withoutContent returns the JSON object args without its "content" member,
// when args is an object with exactly one "content" member, a string that
// encoding/json and the library decode alike (no \u escape of a surrogate,
// which encoding/json replaces and the library may refuse). ok is false
// otherwise; the arguments then go to the library as they are.
func withoutContent(args string) (rest string, ok bool) {
	d := decoder{s: args}
	if !d.object() {
		return "", false
	}
	b := make([]byte, 0, 256)
	b = append(b, '{')
	found := false
	for n := 0; ; {
		start := d.i
		key, more := d.field(&n)
		if !more {
			break
		}
		if key == "content" {
			if found || d.peek() != '"' {
				return "", false
			}
			from := d.i
			d.skip()
			if hasSurrogateEscape(args[from:d.i]) {
				return "", false
			}
			found = true
			continue
		}
		d.skip()
		member := strings.TrimLeft(args[start:d.i], " \t\r\n,")
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, member...)
	}
	if !found || d.bad || d.peek() != 0 {
		return "", false
	}
	return string(append(b, '}')), true
}

// hasSurrogateEscape reports whether a JSON string may hold a \u escape of a
// UTF-16 surrogate (\uD800-\uDFFF). It may say yes for an escaped backslash
// followed by such text: then the content simply goes inside the JSON.
func hasSurrogateEscape(s string) bool {
	for {
		i := strings.Index(s, `\u`)
		if i < 0 || i+3 >= len(s) {
			return false
		}
		if c, d := s[i+2]|0x20, s[i+3]|0x20; c == 'd' && (d >= '8' && d <= '9' || d >= 'a' && d <= 'f') {
			return true
		}
		s = s[i+2:]
	}
}
