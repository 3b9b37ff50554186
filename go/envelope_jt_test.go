package wsfs

import (
	"bytes"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// Issue 8's experiment, kept for the benchmark (envelope_bench_test.go):
// the envelope read with go-json-experiment's jsontext tokens (which
// validate, unescape and check UTF-8) and hand field dispatch for the result
// types, instead of the hand-written lexer of envelope.go. It is about three
// to four times slower than envelope.go's reader, with many more
// allocations (every string a token returns is a copy), so the package
// keeps its own reader; docs/PERFORMANCE.md has the figures.

type jtReader struct {
	d   jsontext.Decoder
	buf bytes.Buffer
	bad bool
}

var jtPool = sync.Pool{New: func() any { return new(jtReader) }}

func jtEnvelope(js string, env *envelope, data any) bool {
	r := jtPool.Get().(*jtReader)
	defer jtPool.Put(r)
	r.bad = false
	r.buf = *bytes.NewBuffer(unsafe.Slice(unsafe.StringData(js), len(js)))
	r.d.Reset(&r.buf)
	r.object(func(key string) {
		switch key {
		case "ok":
			env.OK = r.bool()
		case "data":
			r.data(data)
		case "text":
			env.Text = r.str()
		case "warnings":
			env.Warnings = r.strs()
		case "error":
			if r.d.PeekKind() == 'n' {
				r.skip()
				return
			}
			e := &envError{}
			r.object(func(key string) {
				switch key {
				case "code":
					e.Code = internCode(r.str())
				case "message":
					e.Message = r.str()
				default:
					r.skip()
				}
			})
			env.Error = e
		default:
			r.skip()
		}
	})
	if _, err := r.d.ReadToken(); err == nil {
		r.bad = true // trailing data
	}
	return !r.bad
}

func (r *jtReader) token(kind jsontext.Kind) (jsontext.Token, bool) {
	if r.bad {
		return jsontext.Token{}, false
	}
	t, err := r.d.ReadToken()
	if err != nil || t.Kind() != kind {
		r.bad = true
		return jsontext.Token{}, false
	}
	return t, true
}

// object reads an object (or null), calling visit with each key; visit
// consumes the value.
func (r *jtReader) object(visit func(string)) {
	if r.bad {
		return
	}
	if r.d.PeekKind() == 'n' {
		r.skip()
		return
	}
	if _, ok := r.token('{'); !ok {
		return
	}
	for !r.bad && r.d.PeekKind() != '}' {
		k, ok := r.token('"')
		if !ok {
			return
		}
		visit(k.String())
	}
	r.token('}')
}

func (r *jtReader) skip() {
	if !r.bad && r.d.SkipValue() != nil {
		r.bad = true
	}
}

func (r *jtReader) str() string {
	if r.d.PeekKind() == 'n' {
		r.skip()
		return ""
	}
	t, ok := r.token('"')
	if !ok {
		return ""
	}
	return t.String()
}

func (r *jtReader) bool() bool {
	if r.bad {
		return false
	}
	t, err := r.d.ReadToken()
	switch {
	case err != nil:
		r.bad = true
	case t.Kind() == 't':
		return true
	case t.Kind() == 'f', t.Kind() == 'n':
	default:
		r.bad = true
	}
	return false
}

func (r *jtReader) int() int64 {
	if r.d.PeekKind() == 'n' {
		r.skip()
		return 0
	}
	t, ok := r.token('0')
	if !ok {
		return 0
	}
	v, err := t.Int()
	if err != nil {
		r.bad = true
	}
	return v
}

func (r *jtReader) strs() []string {
	if r.d.PeekKind() == 'n' {
		r.skip()
		return nil
	}
	if _, ok := r.token('['); !ok {
		return nil
	}
	out := []string{}
	for !r.bad && r.d.PeekKind() != ']' {
		out = append(out, r.str())
	}
	r.token(']')
	return out
}

func (r *jtReader) data(data any) {
	switch v := data.(type) {
	case *ReadFileResult:
		r.object(func(key string) {
			switch key {
			case "path":
				v.Path = r.str()
			case "content":
				v.Content = r.str()
			case "bytes":
				v.Bytes = r.int()
			case "total_bytes":
				v.TotalBytes = r.int()
			case "truncated":
				v.Truncated = r.bool()
			case "sha256":
				v.SHA256 = r.str()
			case "total_lines":
				n := int(r.int())
				v.TotalLines = &n
			default:
				r.skip()
			}
		})
	case *WriteFileResult:
		r.object(func(key string) {
			switch key {
			case "path":
				v.Path = r.str()
			case "bytes_written":
				v.BytesWritten = r.int()
			case "created":
				v.Created = r.bool()
			case "mode":
				v.Mode = r.str()
			default:
				r.skip()
			}
		})
	case *ListDirResult:
		r.object(func(key string) {
			switch key {
			case "path":
				v.Path = r.str()
			case "total":
				v.Total = int(r.int())
			case "truncated":
				v.Truncated = r.bool()
			case "entries":
				if _, ok := r.token('['); !ok {
					return
				}
				v.Entries = []DirEntry{}
				for !r.bad && r.d.PeekKind() != ']' {
					var e DirEntry
					if _, ok := r.token('{'); !ok {
						return
					}
					for !r.bad && r.d.PeekKind() != '}' {
						k, ok := r.token('"')
						if !ok {
							return
						}
						switch k.String() {
						case "name":
							e.Name = r.str()
						case "type":
							e.Type = internType(r.str())
						case "size":
							e.Size = r.int()
						default:
							r.skip()
						}
					}
					r.token('}')
					v.Entries = append(v.Entries, e)
				}
				r.token(']')
			default:
				r.skip()
			}
		})
	default:
		r.skip()
	}
}
