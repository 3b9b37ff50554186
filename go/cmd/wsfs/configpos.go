package main

// Config errors that point into the user's --config file. The CLI rewrites
// the file's JSON before the library reads it (--root, the environment,
// --read-only), so the library's "at line L column C" is a place in that
// rewritten JSON; here it becomes the same key's line and column in the file.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// serdePosition is where serde_json says an error is.
var serdePosition = regexp.MustCompile(` at line (\d+) column (\d+)`)

// configErrText is errText(err) with any position in it moved into the
// --config file name (file's content): a syntax error of the file itself
// (before any rewriting; cfg nil), or a library error about cfg, the
// rewritten configuration, which names the key at fault in file.
func configErrText(err error, cfg, file []byte, name string) string {
	msg := errText(err)
	if name == "" || len(file) == 0 {
		return msg
	}
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		// Offset is just past the character at fault.
		line, col := lineColumn(file, max(syntax.Offset-1, 0))
		return fmt.Sprintf("%s:%d:%d: %s", name, line, col, msg)
	}
	m := serdePosition.FindStringSubmatchIndex(msg)
	if cfg == nil || m == nil {
		return msg
	}
	line, _ := strconv.Atoi(msg[m[2]:m[3]])
	col, _ := strconv.Atoi(msg[m[4]:m[5]])
	path := keyAt(cfg, offsetOf(cfg, line, col))
	stripped := msg[:m[0]] + msg[m[1]:]
	if path == "" {
		return stripped
	}
	for _, k := range keyPositions(file) {
		if k.path == path {
			l, c := lineColumn(file, k.start)
			return fmt.Sprintf("%s:%d:%d: %s (the key %s)", name, l, c, stripped, path)
		}
	}
	return stripped + " (the key " + path + ", which the command line or the environment set)"
}

// keyPos is an object key of a JSON document: its dotted path and where
// its quoted name starts and ends (byte offsets).
type keyPos struct {
	path       string
	start, end int64
}

// keyPositions lists doc's object keys in order (nothing after a syntax error).
func keyPositions(doc []byte) []keyPos {
	type frame struct {
		obj, wantKey bool
		key          string
	}
	var keys []keyPos
	stack := []frame{{}}
	dec := json.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		top := &stack[len(stack)-1]
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if top.obj {
					top.wantKey = true
				}
				stack = append(stack, frame{obj: t == '{', wantKey: true})
			default:
				if len(stack) > 1 {
					stack = stack[:len(stack)-1]
				}
			}
		default:
			if !top.obj {
				continue
			}
			if !top.wantKey {
				top.wantKey = true
				continue
			}
			top.key, top.wantKey = fmt.Sprint(t), false
			var names []string
			for _, f := range stack {
				if f.obj && f.key != "" {
					names = append(names, f.key)
				}
			}
			end := dec.InputOffset()
			quoted, _ := json.Marshal(top.key)
			keys = append(keys, keyPos{path: strings.Join(names, "."), start: end - int64(len(quoted)), end: end})
		}
	}
}

// keyAt is the path of the last key of doc that ends at or before offset.
func keyAt(doc []byte, offset int64) string {
	path := ""
	for _, k := range keyPositions(doc) {
		if k.end > offset {
			break
		}
		path = k.path
	}
	return path
}

// offsetOf is the byte offset of 1-based line and column in doc.
func offsetOf(doc []byte, line, col int) int64 {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(doc[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	return int64(off + col)
}

// lineColumn is the 1-based line and column of byte offset in doc.
func lineColumn(doc []byte, offset int64) (line, col int) {
	if offset > int64(len(doc)) {
		offset = int64(len(doc))
	}
	before := doc[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
