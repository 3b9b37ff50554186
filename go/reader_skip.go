package wsfs

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

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

// skipString skips the string at the cursor, checking its escapes. It looks
// at eight bytes at a time and jumps to the first one that matters (a 1 MiB
// write_file content is skipped by withoutContent on every large fantasy
// call: byte by byte that took 0.7-1.3 ms here, as much as the write).
func (d *decoder) skipString() {
	s := d.s
	i := d.i + 1
	for i < len(s) {
		if i+8 <= len(s) {
			m := skipStops(word8(s, i))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else if !skipStop[s[i]] {
			i++
			continue
		}
		c := s[i]
		switch {
		case c == '"':
			d.i = i + 1
			return
		case c == '\\' && i+1 < len(s):
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
				d.i = i + 2
				if d.hex4() >= 0 {
					i = d.i
					continue
				}
			}
		}
		break
	}
	d.fail()
}

// word8 is the eight bytes of s at i (i+8 <= len(s)) as one unaligned
// little-endian load.
func word8(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:i+8]), 8))
}

// skipStops marks (in its high bit) each byte of w that skipStop marks: a
// quote, a backslash or a control character. The lowest mark is exact, and
// none is set when no byte is one: (x-ones)&^x&highs marks zero bytes of x,
// (w-0x20 in each byte)&^w&highs bytes below 0x20; a borrow only comes from
// a marked byte, so it can only mark bytes above the first mark.
func skipStops(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, b := w^(ones*'"'), w^(ones*'\\')
	return ((q-ones)&^q | (b-ones)&^b | (w-ones*0x20)&^w) & highs
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
