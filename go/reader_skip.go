package wsfs

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
