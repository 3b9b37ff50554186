package wsfs

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

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

// optInt reads an integer into a new int, or null as nil.
func (d *decoder) optInt() *int {
	if d.peek() == 'n' {
		d.literal("null")
		return nil
	}
	n := int(d.int())
	return &n
}
