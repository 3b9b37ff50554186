package wsfs

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file decodes the library's envelopes. Every call's envelope is decoded
// once, data included, by a small reflection-free reader made for the few
// shapes the library produces: fields are looked up by their exact key, so
// their order does not matter, and unknown fields are skipped. Anything it
// does not expect (invalid JSON, invalid UTF-8 in a string, a number where
// an integer does not fit, a value of the wrong type) makes it give up, and
// encoding/json decodes the same bytes instead, so the result is the same as
// encoding/json's (except that encoding/json would also accept keys that
// differ in case, which the library never writes).

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
		if start != 0 {
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

// decodeSlow is the fallback: the envelope js into env and its data into data
// (nil to skip it) with encoding/json.
func decodeSlow(js string, env *envelope, data any) error {
	var discard json.RawMessage
	slow := struct {
		OK       bool      `json:"ok"`
		Data     any       `json:"data"`
		Text     string    `json:"text"`
		Warnings []string  `json:"warnings"`
		Error    *envError `json:"error"`
	}{Data: data}
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

// decoder reads JSON from s. Any error sets bad, after which every method
// returns zero values; the caller checks bad once at the end. Strings
// without escapes are returned as substrings of s, without copying.
type decoder struct {
	s   string
	i   int
	bad bool
}

func (d *decoder) fail() {
	d.bad = true
	d.i = len(d.s)
}

// peek skips white space and returns the next byte, 0 at the end.
func (d *decoder) peek() byte {
	for d.i < len(d.s) {
		switch c := d.s[d.i]; c {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return c
		}
	}
	return 0
}

func (d *decoder) literal(l string) {
	if strings.HasPrefix(d.s[d.i:], l) {
		d.i += len(l)
	} else {
		d.fail()
	}
}

// envelope reads the whole envelope object into env and its data into data
// (skipped if nil).
func (d *decoder) envelope(env *envelope, data any) {
	if !d.object() {
		d.fail()
		return
	}
	for n := 0; ; {
		key, ok := d.field(&n)
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
			if d.object() {
				e := &envError{}
				for n := 0; ; {
					key, ok := d.field(&n)
					if !ok {
						break
					}
					switch key {
					case "code":
						e.Code = internCode(d.str())
					case "message":
						e.Message = d.str()
					default:
						d.skip()
					}
				}
				env.Error = e
			} else {
				env.Error = nil
			}
		default:
			d.skip()
		}
	}
	if d.peek() != 0 || d.i != len(d.s) {
		d.fail() // trailing data
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

// object consumes the '{' that starts an object and reports true, or
// consumes null and reports false. Anything else fails.
func (d *decoder) object() bool {
	switch d.peek() {
	case '{':
		d.i++
		return true
	case 'n':
		d.literal("null")
	default:
		d.fail()
	}
	return false
}

// field moves to the next member of an object whose '{' was consumed and
// returns its key, positioned at the value. *n counts the members read; ok
// is false at the closing '}' (consumed) or on error.
func (d *decoder) field(n *int) (key string, ok bool) {
	c := d.peek()
	if c == '}' {
		d.i++
		return "", false
	}
	if *n > 0 {
		if c != ',' {
			d.fail()
			return "", false
		}
		d.i++
		c = d.peek()
	}
	*n++
	if c != '"' {
		d.fail()
		return "", false
	}
	key = d.str()
	if d.peek() != ':' {
		d.fail()
		return "", false
	}
	d.i++
	return key, !d.bad
}

// elem moves to the next element of an array whose '[' was consumed; false
// at the closing ']' (consumed) or on error.
func (d *decoder) elem(n *int) bool {
	c := d.peek()
	if c == ']' {
		d.i++
		return false
	}
	if *n > 0 {
		if c != ',' {
			d.fail()
			return false
		}
		d.i++
	}
	*n++
	return !d.bad
}

// array consumes the '[' that starts an array and reports true, or consumes
// null and reports false.
func (d *decoder) array() bool {
	switch d.peek() {
	case '[':
		d.i++
		return true
	case 'n':
		d.literal("null")
	default:
		d.fail()
	}
	return false
}

func (d *decoder) bool() bool {
	switch d.peek() {
	case 't':
		d.literal("true")
		return !d.bad
	case 'f':
		d.literal("false")
	case 'n':
		d.literal("null")
	default:
		d.fail()
	}
	return false
}

// int reads an integer; a fraction, an exponent or an overflow fails (and
// encoding/json then reports it).
func (d *decoder) int() int64 {
	c := d.peek()
	if c == 'n' {
		d.literal("null")
		return 0
	}
	start := d.i
	if c == '-' {
		d.i++
	}
	digits := d.i
	var v int64
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		v = v*10 + int64(d.s[d.i]-'0')
		d.i++
	}
	n := d.i - digits
	if n == 0 || (d.s[digits] == '0' && n > 1) {
		d.fail()
		return 0
	}
	if d.i < len(d.s) {
		switch d.s[d.i] {
		case '.', 'e', 'E':
			d.fail()
			return 0
		}
	}
	if n > 18 { // might not fit: let strconv decide
		var err error
		if v, err = strconv.ParseInt(d.s[start:d.i], 10, 64); err != nil {
			d.fail()
			return 0
		}
		return v
	}
	if c == '-' {
		v = -v
	}
	return v
}

// strStop marks the bytes that end a run of plain string bytes: the quote,
// the backslash, control characters (invalid in JSON strings) and non-ASCII
// bytes (whose UTF-8 must be checked).
var strStop = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

// str reads a string ("" for null).
func (d *decoder) str() string {
	switch d.peek() {
	case '"':
	case 'n':
		d.literal("null")
		return ""
	default:
		d.fail()
		return ""
	}
	d.i++
	start := d.i
	ascii := true
	s := d.s
	for i := d.i; i < len(s); i++ {
		c := s[i]
		if !strStop[c] {
			continue
		}
		switch {
		case c == '"':
			v := s[start:i]
			d.i = i + 1
			if !ascii && !utf8.ValidString(v) {
				d.fail() // encoding/json would replace the bad bytes
				return ""
			}
			return v
		case c == '\\':
			d.i = i
			return d.strEscaped(start)
		case c < 0x20:
			d.fail()
			return ""
		default:
			ascii = false
		}
	}
	d.fail()
	return ""
}

// strEscaped finishes a string that has escapes; d.i is at the first
// backslash and start just after the opening quote. It decodes escapes the
// way encoding/json does (a lone surrogate becomes U+FFFD).
func (d *decoder) strEscaped(start int) string {
	b := make([]byte, 0, d.i-start+64)
	b = append(b, d.s[start:d.i]...)
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			if !utf8.Valid(b) {
				d.fail()
				return ""
			}
			return unsafe.String(unsafe.SliceData(b), len(b))
		case c < 0x20:
			d.fail()
			return ""
		case c != '\\':
			// Copy the run up to the next quote or backslash at once
			// (UTF-8 is checked at the end).
			j := d.i + 1
			for j < len(d.s) && (!strStop[d.s[j]] || d.s[j] >= utf8.RuneSelf) {
				j++
			}
			b = append(b, d.s[d.i:j]...)
			d.i = j
			continue
		}
		if d.i+1 >= len(d.s) {
			d.fail()
			return ""
		}
		e := d.s[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := d.hex4()
			if r < 0 {
				d.fail()
				return ""
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if strings.HasPrefix(d.s[d.i:], `\u`) {
					save := d.i
					d.i += 2
					r2 = d.hex4()
					d.i = save
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					d.i += 6
					r = dec
				} else {
					r = utf8.RuneError
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			d.fail()
			return ""
		}
	}
	d.fail()
	return ""
}

// hex4 reads four hex digits; -1 if there are none.
func (d *decoder) hex4() rune {
	if d.i+4 > len(d.s) {
		return -1
	}
	var r rune
	for _, c := range []byte(d.s[d.i : d.i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	d.i += 4
	return r
}

// strs reads an array of strings (nil for null).
func (d *decoder) strs() []string {
	if !d.array() {
		return nil
	}
	out := []string{}
	for n := 0; d.elem(&n); {
		out = append(out, d.str())
	}
	return out
}

// skip skips one value of any type. Strings are skipped by looking for the
// closing quote only, which is fast for the large strings of a full
// envelope.
func (d *decoder) skip() {
	switch c := d.peek(); {
	case c == '"':
		d.i++
		for {
			j := strings.IndexByte(d.s[d.i:], '"')
			if j < 0 {
				d.fail()
				return
			}
			q := d.i + j
			bs := 0
			for q-1-bs >= d.i && d.s[q-1-bs] == '\\' {
				bs++
			}
			d.i = q + 1
			if bs%2 == 0 {
				return
			}
		}
	case c == '{':
		d.i++
		for n := 0; ; {
			if _, ok := d.field(&n); !ok {
				return
			}
			d.skip()
		}
	case c == '[':
		d.i++
		for n := 0; d.elem(&n); {
			d.skip()
		}
	case c == 't':
		d.literal("true")
	case c == 'f':
		d.literal("false")
	case c == 'n':
		d.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		start := d.i
		for d.i < len(d.s) && strings.IndexByte("+-.0123456789eE", d.s[d.i]) >= 0 {
			d.i++
		}
		if _, err := strconv.ParseFloat(d.s[start:d.i], 64); err != nil {
			d.fail()
		}
	default:
		d.fail()
	}
}

// The data decoders of the typed results.

// fields calls visit with each key of the object at the cursor; visit must
// consume the key's value (or d.skip() it). A malformed object fails d.
func (d *decoder) fields(visit func(key string)) {
	if !d.object() {
		return
	}
	for n := 0; ; {
		key, ok := d.field(&n)
		if !ok {
			return
		}
		visit(key)
	}
}

func (r *ReadFileResult) decodeData(d *decoder) {
	d.fields(func(key string) {
		switch key {
		case "path":
			r.Path = d.str()
		case "content":
			r.Content = d.str()
		case "bytes":
			r.Bytes = d.int()
		case "total_bytes":
			r.TotalBytes = d.int()
		case "truncated":
			r.Truncated = d.bool()
		case "start_line":
			r.StartLine = int(d.int())
		case "end_line":
			r.EndLine = int(d.int())
		case "total_lines":
			r.TotalLines = d.optInt()
		case "next_start_line":
			r.NextStartLine = int(d.int())
		case "sha256":
			r.SHA256 = d.str()
		default:
			d.skip()
		}
	})
}

// optInt reads an integer into a new int, or null as nil.
func (d *decoder) optInt() *int {
	if d.peek() == 'n' {
		d.literal("null")
		return nil
	}
	n := int(d.int())
	return &n
}

func (r *WriteFileResult) decodeData(d *decoder) {
	d.fields(func(key string) {
		switch key {
		case "path":
			r.Path = d.str()
		case "bytes_written":
			r.BytesWritten = d.int()
		case "created":
			r.Created = d.bool()
		case "existed_before":
			r.ExistedBefore = d.bool()
		default:
			d.skip()
		}
	})
}

func (r *AppendFileResult) decodeData(d *decoder) {
	d.fields(func(key string) {
		switch key {
		case "path":
			r.Path = d.str()
		case "bytes_appended":
			r.BytesAppended = d.int()
		case "size":
			r.Size = d.int()
		default:
			d.skip()
		}
	})
}

func (r *EditFileResult) decodeData(d *decoder) {
	d.fields(func(key string) {
		switch key {
		case "path":
			r.Path = d.str()
		case "matches":
			r.Matches = int(d.int())
		case "replaced":
			r.Replaced = int(d.int())
		default:
			d.skip()
		}
	})
}

func (r *ListDirResult) decodeData(d *decoder) {
	d.fields(func(key string) {
		switch key {
		case "path":
			r.Path = d.str()
		case "total":
			r.Total = int(d.int())
		case "truncated":
			r.Truncated = d.bool()
		case "denied":
			r.Denied = int(d.int())
		case "protected":
			r.Protected = int(d.int())
		case "entries":
			r.Entries = d.entries()
		default:
			d.skip()
		}
	})
}

// entries reads list_dir's entries (nil for null).
func (d *decoder) entries() []DirEntry {
	if !d.array() {
		return nil
	}
	// Size the slice from an estimate: every entry is an object, up to the
	// array's ']' (names with '{' or ']' only make it less exact).
	rest := d.s[d.i:]
	if end := strings.IndexByte(rest, ']'); end >= 0 {
		rest = rest[:end]
	}
	out := make([]DirEntry, 0, strings.Count(rest, "{"))
	for n := 0; d.elem(&n); {
		var e DirEntry
		if d.object() {
			for m := 0; ; {
				key, ok := d.field(&m)
				if !ok {
					break
				}
				switch key {
				case "name":
					e.Name = d.str()
				case "type":
					e.Type = internType(d.str())
				case "size":
					e.Size = d.int()
				default:
					d.skip()
				}
			}
		}
		out = append(out, e)
	}
	return out
}

func internType(s string) string {
	switch s {
	case EntryFile:
		return EntryFile
	case EntryDir:
		return EntryDir
	case EntrySymlink:
		return EntrySymlink
	case EntryOther:
		return EntryOther
	}
	return s
}

// UnmarshalJSON keeps the value's JSON text, for decodeSlow.
func (r *rawData) UnmarshalJSON(b []byte) error {
	*r = rawData(b)
	return nil
}
