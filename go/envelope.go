package wsfs

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync/atomic"
	"time"
)

// This file decodes the library's envelopes. Every call's envelope is decoded
// once, data included, by the small reflection-free reader of reader.go,
// made for the few shapes the library produces (the typed results' decoders
// are beside their types, in tool_<name>.go): fields are looked up by their
// exact key, so their order does not matter, and unknown fields are
// skipped. Anything it does not expect (invalid JSON, invalid UTF-8 in a
// string, a number where an integer does not fit, a value of the wrong
// type, a key given twice or in another case) makes it give up, and
// encoding/json decodes the same bytes instead, so the result is always
// encoding/json's (FuzzReaderMatchesEncodingJSON).

// envelope is the JSON every wsfs function returns.
type envelope struct {
	OK       bool
	Text     string
	Warnings []string
	Error    *envError

	// Raw is what follows the JSON in the "text_raw" and "data_raw" output
	// modes: the text, or read_file's content, unescaped. HasRaw tells an
	// empty raw part from none.
	Raw    string
	HasRaw bool

	// metrics, if set before parsing, receives the envelope's metrics
	// (skipped otherwise).
	metrics *Metrics

	// buf holds the library's result, Raw being its end, with
	// callSpec.spare bytes of room after it (nil for envelopes made in Go).
	buf *strings.Builder
}

type envError struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// dataDecoder is implemented by the data types the fast reader fills in:
// *ReadFileResult, *WriteFileResult, *AppendFileResult, *ListDirResult and
// *EditFileResult. decodeData reads one JSON value (an object, or null for
// nothing).
type dataDecoder interface {
	decodeData(d *decoder)
}

var (
	_ dataDecoder = (*ReadFileResult)(nil)
	_ dataDecoder = (*WriteFileResult)(nil)
	_ dataDecoder = (*AppendFileResult)(nil)
	_ dataDecoder = (*ListDirResult)(nil)
	_ dataDecoder = (*EditFileResult)(nil)
)

// decodeData calls data's decodeData through a type switch rather than the
// interface, so the decoder does not escape to the heap. ok is false if the
// fast reader does not know data's type.
func decodeData(d *decoder, data any) (ok bool) {
	switch v := data.(type) {
	case *ReadFileResult:
		v.decodeData(d)
	case *WriteFileResult:
		v.decodeData(d)
	case *AppendFileResult:
		v.decodeData(d)
	case *ListDirResult:
		v.decodeData(d)
	case *EditFileResult:
		v.decodeData(d)
	case *rawData:
		start := d.peek()
		from := d.i
		d.skip()
		if start != 'n' { // encoding/json leaves data alone for null
			*v = rawData(d.s[from:d.i])
		}
	case nil:
		d.skip()
	default:
		return false
	}
	return true
}

// rawData receives the envelope's data value as its JSON text (a substring
// of the result, not a copy); the typed results of most tools are decoded
// from it by decodeResult.
type rawData string

// fastData reports whether the fast reader can decode into data.
func fastData(data any) bool {
	switch data.(type) {
	case nil, *ReadFileResult, *WriteFileResult, *AppendFileResult, *ListDirResult, *EditFileResult, *rawData:
		return true
	}
	return false
}

// slowDecodes counts the envelopes the fast reader gave up on (for tests:
// the library's own output must never need encoding/json).
var slowDecodes atomic.Int64

// parseEnvelope decodes raw, the result of a call made with the given output
// mode, and the envelope's data into data (a pointer; nil to skip the data).
// In the raw modes the result is split at its first '\n': the JSON never
// contains a raw newline, and failures have no raw part. Check the *Error
// result against nil before assigning it to an error variable.
func parseEnvelope(tool, raw, output string, data any) (*envelope, *Error) {
	return parseEnvelopeInto(&envelope{}, tool, raw, output, data)
}

// parseEnvelopeInto is parseEnvelope into a given, empty envelope.
func parseEnvelopeInto(env *envelope, tool, raw, output string, data any) (*envelope, *Error) {
	js := raw
	if output == outputTextRaw || output == outputDataRaw {
		if i := strings.IndexByte(raw, '\n'); i >= 0 {
			js, env.Raw, env.HasRaw = raw[:i], raw[i+1:], true
		}
	}
	if fastData(data) {
		d := decoder{s: js}
		d.envelope(env, data)
		if d.bad {
			slowDecodes.Add(1)
			*env = envelope{Raw: env.Raw, HasRaw: env.HasRaw, buf: env.buf}
			if data != nil {
				reflect.ValueOf(data).Elem().SetZero()
			}
		} else {
			return env.check(tool)
		}
	}
	if err := decodeSlow(js, env, data); err != nil {
		return nil, newError(tool, CodeIOError, "malformed envelope from the wsfs library: %v", err)
	}
	return env.check(tool)
}

// envelopeJSON is the envelope as encoding/json decodes it.
type envelopeJSON struct {
	OK       bool      `json:"ok"`
	Data     any       `json:"data"`
	Text     string    `json:"text"`
	Warnings []string  `json:"warnings"`
	Error    *envError `json:"error"`
	Metrics  *Metrics  `json:"metrics"`
}

// The keys encoding/json decodes into the envelope and its error, for
// decoder.other.
var (
	envelopeKeys = jsonKeys[envelopeJSON]()
	envErrorKeys = jsonKeys[envError]()
)

// decodeSlow is the fallback: the envelope js into env and its data into data
// (nil to skip it) with encoding/json.
func decodeSlow(js string, env *envelope, data any) error {
	var discard json.RawMessage
	slow := envelopeJSON{Data: data, Metrics: env.metrics}
	if data == nil {
		slow.Data = &discard
	}
	if err := json.Unmarshal([]byte(js), &slow); err != nil {
		return err
	}
	env.OK, env.Text, env.Warnings, env.Error = slow.OK, slow.Text, slow.Warnings, slow.Error
	return nil
}

func (env *envelope) check(tool string) (*envelope, *Error) {
	if !env.OK && env.Error == nil {
		return nil, newError(tool, CodeIOError, "error envelope without an error object from the wsfs library")
	}
	return env, nil
}

// err converts an error envelope into an *Error. If the failure is a
// cancellation or timeout and ctx is done, the context's error becomes the
// cause so errors.Is(err, context.Canceled) works too.
func (env *envelope) err(tool string, ctx context.Context) *Error {
	e := &Error{Tool: tool, Code: env.Error.Code, Message: env.Error.Message}
	if ctx != nil && (e.Code == CodeCancelled || e.Code == CodeTimeout) {
		e.cause = ctx.Err()
		// The library's deadline (timeout_ms) is the context's deadline
		// rounded up, so it can report the timeout a moment before the
		// context's own timer marks it done.
		if dl, ok := ctx.Deadline(); ok && e.cause == nil && e.Code == CodeTimeout && !time.Now().Before(dl) {
			e.cause = context.DeadlineExceeded
		}
	}
	return e
}

// envelope reads the whole envelope object into env and its data into data
// (skipped if nil).
func (d *decoder) envelope(env *envelope, data any) {
	if !d.object() {
		d.fail()
		return
	}
	var m members
	for {
		key, ok := d.member(&m)
		if !ok {
			break
		}
		switch key {
		case "ok":
			env.OK = d.bool()
		case "data":
			if !decodeData(d, data) {
				d.fail()
			}
		case "text":
			env.Text = d.str()
		case "warnings":
			env.Warnings = d.strs()
		case "error":
			env.Error = d.envError()
		case "metrics":
			if env.metrics != nil {
				d.metrics(env.metrics)
			} else {
				d.skip()
			}
		default:
			d.other(key, envelopeKeys)
		}
	}
	if d.peek() != 0 || d.i != len(d.s) {
		d.fail() // trailing data
	}
}

// envError reads the envelope's error object (nil for null).
func (d *decoder) envError() *envError {
	if !d.object() {
		return nil
	}
	e := &envError{}
	var m members
	for {
		key, ok := d.member(&m)
		if !ok {
			return e
		}
		switch key {
		case "code":
			e.Code = internCode(d.str())
		case "message":
			e.Message = d.str()
		default:
			d.other(key, envErrorKeys)
		}
	}
}

// internCode returns the package's constant for a known code, so an *Error
// does not keep the envelope it came from alive.
func internCode(s string) Code {
	for _, c := range Codes {
		if string(c) == s {
			return c
		}
	}
	return Code(strings.Clone(s))
}

// UnmarshalJSON keeps the value's JSON text, for decodeSlow.
func (r *rawData) UnmarshalJSON(b []byte) error {
	*r = rawData(b)
	return nil
}
