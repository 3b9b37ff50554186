package wsfs

import (
	"reflect"
	"strings"
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
