package wsfs

import (
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Strings are checked before anything reaches C: a NUL byte or invalid UTF-8
// in the path is CodeInvalidPath; invalid UTF-8 in other text is
// CodeInvalidArguments (JSON encoding would otherwise silently replace the
// bad bytes with U+FFFD, and the library refuses a content buffer that is
// not UTF-8 anyway). NUL bytes in content are passed on, never truncated: as
// they are in write_file's and append_file's content buffer, JSON-escaped in
// edit_file's texts; the library decides what to do with them.

// checkPath checks a path argument.
func checkPath(tool, path string) *Error {
	if strings.IndexByte(path, 0) >= 0 {
		return newError(tool, CodeInvalidPath, "path contains a NUL byte")
	}
	if !utf8.ValidString(path) {
		return newError(tool, CodeInvalidPath, "path is not valid UTF-8")
	}
	return nil
}

// checkContent checks the path and content of write_file and append_file.
func checkContent(tool, path, content string) *Error {
	if e := checkPath(tool, path); e != nil {
		return e
	}
	if !utf8.ValidString(content) {
		return newError(tool, CodeInvalidArguments, "text argument is not valid UTF-8")
	}
	return nil
}

// pathArgs returns {"path":<path>}; path must be valid UTF-8.
func pathArgs(path string) string {
	b := make([]byte, 0, len(path)+12)
	b = append(b, `{"path":`...)
	b = appendJSONString(b, path)
	b = append(b, '}')
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendJSONString appends s, which must be valid UTF-8, as a JSON string:
// quotes, backslashes and control characters are escaped, everything else
// (including <, > and &) is copied as is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
