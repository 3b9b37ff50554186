package wsfs

import (
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file is the hand-written JSON reader behind the envelope decoding
// (envelope.go): a cursor over the result with a method per kind of value.
// It reads what the library writes much faster than encoding/json (see
// docs/PERFORMANCE.md, "Go: decoding the envelope") and gives up, for the
// encoding/json fallback, on anything else.

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

// skip skips one value of any type, checking it is valid JSON as
// encoding/json does (a value it would refuse makes the reader give up),
// without decoding it.
func (d *decoder) skip() {
	switch c := d.peek(); {
	case c == '"':
		d.skipString()
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
		d.skipNumber()
	default:
		d.fail()
	}
}

// skipStop marks the bytes skipString looks at: the quote, the backslash
// and control characters (invalid in JSON strings). Invalid UTF-8 is not
// looked for: encoding/json accepts it (replacing it) in what it skips too.
var skipStop = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c < 0x20
	}
	return t
}()

// skipString skips the string at the cursor, checking its escapes.
func (d *decoder) skipString() {
	s := d.s
	for i := d.i + 1; i < len(s); i++ {
		c := s[i]
		if !skipStop[c] {
			continue
		}
		switch {
		case c == '"':
			d.i = i + 1
			return
		case c == '\\' && i+1 < len(s):
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
				continue
			case 'u':
				d.i = i + 2
				if d.hex4() >= 0 {
					i = d.i - 1
					continue
				}
			}
		}
		break
	}
	d.fail()
}

// skipNumber skips a number, as JSON spells numbers: -?(0|[1-9][0-9]*),
// then an optional fraction and exponent. Its value is not looked at (for
// encoding/json, too, skipping a number cannot fail).
func (d *decoder) skipNumber() {
	s, i := d.s, d.i
	digits := func() bool {
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if !digits() {
		d.fail()
		return
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			d.fail()
			return
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			d.fail()
			return
		}
	}
	d.i = i
}

// maxMembers is the most members of an object the reader decodes member by
// member (the library's have at most a dozen); it gives up on more.
const maxMembers = 24

// members is what the reader remembers of an object it decodes member by
// member: the keys read so far.
type members struct {
	n    int
	keys [maxMembers]string
}

// member is field for an object the reader decodes member by member. A key
// given twice makes the reader give up: encoding/json lets the last one win
// but decodes it into what the first one left (an array into the same
// backing array, an object into the same struct), which the reader does
// not reproduce.
func (d *decoder) member(m *members) (key string, ok bool) {
	if key, ok = d.field(&m.n); !ok {
		return "", false
	}
	n := m.n - 1
	if n >= maxMembers {
		d.fail()
		return "", false
	}
	for _, k := range m.keys[:n] {
		if k == key {
			d.fail()
			return "", false
		}
	}
	m.keys[n] = key
	return key, true
}

// other skips the value of a member the caller does not decode. If its key
// is one of known, the JSON names of the fields encoding/json would decode
// it into (jsonKeys), or differs from one only in case, which encoding/json
// matches too, the reader gives up instead: encoding/json would decode the
// value into that field.
func (d *decoder) other(key string, known []string) {
	for _, k := range known {
		if strings.EqualFold(key, k) {
			d.fail()
			return
		}
	}
	d.skip()
}

// jsonKeys returns the keys encoding/json decodes into T's fields (their
// JSON names), for decoder.other.
func jsonKeys[T any]() []string {
	var keys []string
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-":
			case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
				add(f.Type)
			case !f.IsExported():
			case name != "":
				keys = append(keys, name)
			default:
				keys = append(keys, f.Name)
			}
		}
	}
	add(reflect.TypeFor[T]())
	return keys
}

// fields calls visit with each key of the object at the cursor; visit must
// consume the key's value (or pass it to d.other). A malformed object, or a
// key given twice, fails d.
func (d *decoder) fields(visit func(key string)) {
	if !d.object() {
		return
	}
	var m members
	for {
		key, ok := d.member(&m)
		if !ok {
			return
		}
		visit(key)
	}
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
