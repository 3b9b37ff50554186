package wsfs

import (
	"context"
	"strconv"
	"strings"
	"unsafe"
)

// ToolReadFile reads a text file, whole or a range of its lines. Tool
// names are spelled exactly as the C ABI and the agent tools spell them.
const ToolReadFile = "read_file"

// ReadFileInput is the argument of read_file. With only Path, the whole
// file is read (up to MaxReadBytes); setting StartLine, MaxLines or
// LineNumbers reads a range of lines instead (see ReadFileResult).
type ReadFileInput struct {
	Path        string `json:"path" description:"File to read, e.g. 'src/main.go'."`
	StartLine   int    `json:"start_line,omitempty" description:"First line to return, 1-based. Giving start_line, max_lines or line_numbers reads a range of lines (from line 1 if start_line is 0 or absent), ending with a hint such as '[lines 1-2000 of 9120; continue with start_line=2001]'."`
	MaxLines    int    `json:"max_lines,omitempty" description:"Most lines to return in a range (0 or absent: 2000; at most 10000). The range also stops at the read limit (256 KiB by default), at a line boundary."`
	LineNumbers bool   `json:"line_numbers,omitempty" description:"Prefix each returned line with its number and '| ' (in the text only). Default false."`
	// EncodingErrors is "strict" (the default, also for "") or "replace".
	EncodingErrors string `json:"encoding_errors,omitempty" enum:"strict,replace" description:"'strict' (default): a file that is not valid UTF-8 is refused. 'replace': each invalid byte sequence becomes U+FFFD and data.encoding_errors is true (for Latin-1 and other legacy files). A NUL byte means a binary file either way."`
}

// isRange reports whether in asks for a range of lines.
func (in ReadFileInput) isRange() bool {
	return in.StartLine != 0 || in.MaxLines != 0 || in.LineNumbers
}

// ReadFileResult is the result of ReadFile.
type ReadFileResult struct {
	// Path is the workspace-relative path that was read.
	Path string `json:"path"`
	// Content is the file content, at most MaxReadBytes, cut at a UTF-8
	// boundary. For a range, the lines' bytes as in the file (line endings
	// included, no line numbers).
	Content string `json:"content"`
	// Bytes is len(Content); TotalBytes is the file's size.
	Bytes      int64 `json:"bytes"`
	TotalBytes int64 `json:"total_bytes"`
	// Truncated is true when Bytes < TotalBytes (plain read), or, for a
	// range, when MaxReadBytes cut it short: fewer lines than asked although
	// more follow, or one line longer than the limit cut.
	Truncated bool `json:"truncated"`

	// SHA256 is the lowercase hex SHA-256 of the whole file (the guard the
	// change tools take as file_hash), when the read saw the whole file
	// (a plain read that was not truncated, or a range whose scan reached
	// the end) and it is at most MaxWriteBytes; "" otherwise.
	SHA256 string `json:"sha256,omitempty"`
	// EncodingErrors is true when ReadFileInput.EncodingErrors "replace"
	// replaced invalid UTF-8 with U+FFFD.
	EncodingErrors bool `json:"encoding_errors,omitempty"`

	// The fields below are set by range reads (zero in a plain read), but
	// for NextStartLine, which a plain read that was cut sets too, and
	// TotalLines, which a plain read that saw the whole file sets too.

	// StartLine and EndLine are the first and last line returned (1-based;
	// EndLine is StartLine-1 when none is: an empty file).
	StartLine int `json:"start_line,omitempty"`
	EndLine   int `json:"end_line,omitempty"`
	// TotalLines is the file's line count when the whole file was scanned
	// (a plain read that was not cut; a range that reached its end, or a
	// file of at most 64 MiB or MaxWriteBytes), else nil.
	TotalLines *int `json:"total_lines,omitempty"`
	// NextStartLine is the StartLine to read on with; 0 at the end of the
	// file. A cut plain read ends at a line boundary (unless its first line
	// alone is longer than MaxReadBytes) and sets it to the line after.
	NextStartLine int `json:"next_start_line,omitempty"`
	// Text is what a model sees. Plain read: Content ("(empty file)" for an
	// empty file), and for a truncated file a line "[truncated: showing
	// lines 1-N (B of M bytes); max_read_bytes is L; continue with
	// start_line=N+1]", or, when line 1 alone is longer than the limit,
	// "[truncated: line 1 is longer than max_read_bytes (L): only its first
	// B of M bytes are shown; continue with start_line=2]" after a newline.
	// Range: the lines (each prefixed "N| " with LineNumbers), then a hint
	// line such as "[lines 1-2000 of 9120; continue with start_line=2001]"
	// (with ", max_lines=M" and ", line_numbers=true" when the call gave
	// them); "(empty file)" for an empty file.
	Text     string   `json:"-"`
	Warnings []string `json:"-"`
}

// ReadFile reads a UTF-8 text file, or a range of its lines. See Workspace
// for how ctx is honoured.
//
// A plain read's content comes from the library unescaped, outside the JSON
// envelope (output mode "data_raw"), and its Text is built from it exactly
// as the library renders read_file's text: Content itself, with the
// truncation notice added when the file was cut. A range's Text (numbered
// lines and a hint) is the library's own, from a full envelope.
func (ws *Workspace) ReadFile(ctx context.Context, in ReadFileInput) (ReadFileResult, error) {
	const tool = ToolReadFile
	if e := checkPath(tool, in.Path); e != nil {
		return ReadFileResult{}, ws.reject(tool, in.Path, e)
	}
	if in.isRange() || in.EncodingErrors != "" {
		return ws.readRange(ctx, in)
	}
	if e := ws.outsideLexically(tool, in.Path); e != nil && ctx.Err() == nil {
		return ReadFileResult{}, ws.reject(tool, in.Path, e)
	}
	var r ReadFileResult
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: pathArgs(in.Path), output: outputDataRaw,
		data: &r, spare: maxNoticeLen, path: in.Path})
	if err != nil {
		return ReadFileResult{}, err
	}
	if env.HasRaw {
		r.Content = env.Raw
	}
	if int64(len(r.Content)) != r.Bytes {
		return ReadFileResult{}, newError(tool, CodeIOError, "malformed read_file result from the wsfs library: %d bytes of content, data says %d", len(r.Content), r.Bytes)
	}
	r.Text = withWarnings(readText(&r, ws.limits.MaxReadBytes, env), env.Warnings)
	r.Warnings = env.Warnings
	return r, nil
}

// readRange reads a range of lines, or a file with EncodingErrors set. Its
// text is not the content (line numbers, the hint), so it comes from the
// library in a full envelope.
func (ws *Workspace) readRange(ctx context.Context, in ReadFileInput) (ReadFileResult, error) {
	const tool = ToolReadFile
	b := make([]byte, 0, len(in.Path)+96)
	b = append(b, `{"path":`...)
	b = appendJSONString(b, in.Path)
	if in.StartLine != 0 {
		b = append(b, `,"start_line":`...)
		b = strconv.AppendInt(b, int64(in.StartLine), 10)
	}
	if in.MaxLines != 0 {
		b = append(b, `,"max_lines":`...)
		b = strconv.AppendInt(b, int64(in.MaxLines), 10)
	}
	if in.LineNumbers {
		b = append(b, `,"line_numbers":true`...)
	}
	if in.EncodingErrors != "" {
		b = append(b, `,"encoding_errors":`...)
		b = appendJSONString(b, in.EncodingErrors)
	}
	b = append(b, '}')
	var r ReadFileResult
	args := unsafe.String(unsafe.SliceData(b), len(b))
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: args, output: outputFull, data: &r, path: in.Path})
	if err != nil {
		return ReadFileResult{}, err
	}
	if int64(len(r.Content)) != r.Bytes {
		return ReadFileResult{}, newError(tool, CodeIOError, "malformed read_file result from the wsfs library: %d bytes of content, data says %d", len(r.Content), r.Bytes)
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// emptyFileText is the library's text for an empty file.
const emptyFileText = "(empty file)"

// maxNoticeLen bounds the length of readText's truncation notice.
const maxNoticeLen = 256

// readText renders read_file's text as the library does
// (crates/core/src/tools/read_file/output.rs): the content, and for a cut file the
// notice of ReadFileResult.Text, L being the workspace's effective
// MaxReadBytes. TestReadTextMatchesLibrary checks it against the library's
// own text.
//
// The text shares its memory with Content: if the content is the end of
// the library's result (env.buf), the notice is appended to it in place, in
// the room left there, and the text is content and notice. Otherwise it is
// a copy.
func readText(r *ReadFileResult, limit int, env *envelope) string {
	if !r.Truncated {
		if r.Content == "" {
			return emptyFileText
		}
		return r.Content
	}
	var notice [maxNoticeLen]byte
	n := notice[:0]
	next := int64(r.NextStartLine)
	if next == 0 {
		next = 2
	}
	if !strings.HasSuffix(r.Content, "\n") {
		n = append(n, "\n[truncated: line 1 is longer than max_read_bytes ("...)
		n = strconv.AppendInt(n, int64(limit), 10)
		n = append(n, "): only its first "...)
		n = strconv.AppendInt(n, r.Bytes, 10)
		n = append(n, " of "...)
		n = strconv.AppendInt(n, r.TotalBytes, 10)
		n = append(n, " bytes are shown"...)
	} else {
		if next == 2 {
			n = append(n, "[truncated: showing line 1 ("...)
		} else {
			n = append(n, "[truncated: showing lines 1-"...)
			n = strconv.AppendInt(n, next-1, 10)
			n = append(n, " ("...)
		}
		n = strconv.AppendInt(n, r.Bytes, 10)
		n = append(n, " of "...)
		n = strconv.AppendInt(n, r.TotalBytes, 10)
		n = append(n, " bytes); max_read_bytes is "...)
		n = strconv.AppendInt(n, int64(limit), 10)
	}
	n = append(n, "; continue with start_line="...)
	n = strconv.AppendInt(n, next, 10)
	n = append(n, ']')
	if b := env.buf; b != nil && env.HasRaw && r.Content == env.Raw && len(r.Content) <= b.Len() &&
		b.Cap()-b.Len() >= len(n) {
		start := b.Len() - len(r.Content)
		b.Write(n) // within the capacity: earlier strings of b stay as they are
		return b.String()[start:]
	}
	return r.Content + string(n)
}

// overwriteWarning is the write_file warning that the library leaves out
// of the text, which already says "overwrote".
const overwriteWarning = "file exists, overwriting"

// withWarnings appends the warnings a model should see to text as
// "warning: ..." lines, as the library does.
func withWarnings(text string, warnings []string) string {
	for _, w := range warnings {
		if w != overwriteWarning {
			text += "\nwarning: " + w
		}
	}
	return text
}

// readFileKeys are the keys encoding/json decodes into a ReadFileResult.
var readFileKeys = jsonKeys[ReadFileResult]()

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
		case "encoding_errors":
			r.EncodingErrors = d.bool()
		default:
			d.other(key, readFileKeys)
		}
	})
}
