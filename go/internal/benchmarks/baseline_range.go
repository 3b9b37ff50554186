package benchmarks

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	wsfs "github.com/wsfs/wsfs/go"
)

// The Baseline's read_file range, with the library's contract (docs/tools.md,
// "read_file with start_line ..."): lines streamed through one 64 KiB
// buffer, skipped lines checked for NUL, the returned ones for NUL and
// UTF-8, the rest of a file up to 64 MiB (or MaxWriteBytes) read to count
// its lines, SHA-256 of a file within MaxWriteBytes, and the same text.

const (
	rangeDefaultLines = 2000
	rangeMaxLines     = 10_000
	rangeCountScan    = 64 << 20
	rangeChunk        = 64 << 10
)

// rangeStream is the file being read, with every byte read counted into
// lines and (while the file may fit MaxWriteBytes) hashed.
type rangeStream struct {
	ctx       context.Context
	f         *os.File
	buf       []byte
	pos, n    int
	read      int64
	newlines  int64
	last      int       // last byte read, -1 before any
	hash      hash.Hash // nil once the file is known to exceed hashLimit
	hashLimit int64
}

func (s *rangeStream) fill() (bool, error) {
	if err := s.ctx.Err(); err != nil {
		return false, err
	}
	for {
		m, err := s.f.Read(s.buf)
		if m > 0 {
			c := s.buf[:m]
			s.pos, s.n = 0, m
			s.read += int64(m)
			s.newlines += int64(bytes.Count(c, []byte{'\n'}))
			s.last = int(c[m-1])
			if s.read > s.hashLimit {
				s.hash = nil
			}
			if s.hash != nil {
				s.hash.Write(c)
			}
			return true, nil
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

func (s *rangeStream) lines() int64 {
	switch s.last {
	case -1:
		return 0
	case '\n':
		return s.newlines
	}
	return s.newlines + 1
}

func (b *Baseline) readRange(ctx context.Context, f *os.File, size int64, display string, in wsfs.ReadFileInput) (wsfs.ReadFileResult, error) {
	const tool = wsfs.ToolReadFile
	if in.StartLine < 0 || in.MaxLines < 0 || in.MaxLines > rangeMaxLines {
		return wsfs.ReadFileResult{}, bErr(tool, wsfs.CodeInvalidArguments, "max_lines is %d; at most %d", in.MaxLines, rangeMaxLines)
	}
	start, maxLines := max(in.StartLine, 1), in.MaxLines
	if maxLines == 0 {
		maxLines = rangeDefaultLines
	}
	s := &rangeStream{ctx: ctx, f: f, buf: make([]byte, rangeChunk), last: -1, hashLimit: int64(b.limits.MaxWriteBytes)}
	if size <= s.hashLimit {
		s.hash = sha256.New()
	}
	ioFail := func(err error) (wsfs.ReadFileResult, error) {
		if e := ctxErr(tool, ctx); e != nil {
			return wsfs.ReadFileResult{}, e
		}
		return wsfs.ReadFileResult{}, ioErr(tool, display, err)
	}
	binary := bErr(tool, wsfs.CodeIOError, "%s is binary or not UTF-8; only text files can be read or edited", display)
	// Skip to the start line; skipped bytes must hold no NUL.
	reached := true
	for line := 1; line < start; {
		if s.pos == s.n {
			ok, err := s.fill()
			if err != nil {
				return ioFail(err)
			}
			if !ok {
				reached = false
				break
			}
		}
		rest := s.buf[s.pos:s.n]
		need := start - line
		passed := len(rest)
		if c := bytes.Count(rest, []byte{'\n'}); c < need {
			line += c
		} else {
			line = start
			passed = 0
			for k := 0; k < need; k++ {
				passed += bytes.IndexByte(rest[passed:], '\n') + 1
			}
		}
		if bytes.IndexByte(rest[:passed], 0) >= 0 {
			return wsfs.ReadFileResult{}, binary
		}
		s.pos += passed
	}
	// Collect whole lines within MaxReadBytes.
	limit := b.limits.MaxReadBytes
	var out []byte
	lines, lineStart := 0, 0
	stop := "eof"
	for reached {
		if lines == maxLines {
			stop = "lines"
			break
		}
		if s.pos == s.n {
			ok, err := s.fill()
			if err != nil {
				return ioFail(err)
			}
			if !ok {
				if len(out) > lineStart {
					lines++
				}
				break
			}
		}
		rest := s.buf[s.pos:s.n]
		piece, endsLine := rest, false
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			piece, endsLine = rest[:i+1], true
		}
		if len(out)+len(piece) > limit {
			if lines > 0 {
				out, stop = out[:lineStart], "bytes"
			} else {
				out, lines, stop = append(out, piece[:limit-len(out)]...), 1, "cut"
			}
			break
		}
		out = append(out, piece...)
		s.pos += len(piece)
		if endsLine {
			lines++
			lineStart = len(out)
		}
	}
	atEOF := stop == "eof"
	scanLimit := max(int64(rangeCountScan), s.hashLimit)
	if !atEOF && size <= scanLimit {
		s.pos = s.n
		for s.read <= scanLimit {
			ok, err := s.fill()
			if err != nil {
				return ioFail(err)
			}
			if !ok {
				atEOF = true
				break
			}
		}
	}
	var total *int
	if atEOF {
		t := int(s.lines())
		total = &t
	}
	if lines == 0 && start > 1 {
		return wsfs.ReadFileResult{}, bErr(tool, wsfs.CodeLineOutOfRange, "start_line %d is past the end of %s, which has %d lines", start, display, *total)
	}
	if stop == "cut" {
		out = cutToRuneBoundary(out)
	}
	if bytes.IndexByte(out, 0) >= 0 || !utf8.Valid(out) {
		return wsfs.ReadFileResult{}, binary
	}
	end := start + lines - 1
	next := end + 1
	if total != nil && end >= *total {
		next = 0
	}
	r := wsfs.ReadFileResult{
		Path: display, Content: string(out), Bytes: int64(len(out)), TotalBytes: max(size, s.read),
		Truncated: stop == "bytes" || stop == "cut", StartLine: start, EndLine: end, TotalLines: total,
		NextStartLine: next,
	}
	if atEOF {
		r.TotalBytes = s.read
		if s.hash != nil {
			r.SHA256 = hex.EncodeToString(s.hash.Sum(nil))
		}
	}
	r.Text = rangeText(r, in, stop == "cut", limit)
	return r, nil
}

// rangeText renders a range read's text as the library does.
func rangeText(r wsfs.ReadFileResult, in wsfs.ReadFileInput, cut bool, limit int) string {
	numbers := in.LineNumbers
	if r.EndLine < r.StartLine {
		return "(empty file)"
	}
	var t strings.Builder
	t.Grow(len(r.Content) + 128)
	if numbers {
		n := r.StartLine
		for line := range strings.SplitAfterSeq(r.Content, "\n") {
			if line == "" {
				continue
			}
			fmt.Fprintf(&t, "%d| %s", n, line)
			n++
		}
	} else {
		t.WriteString(r.Content)
	}
	if !strings.HasSuffix(r.Content, "\n") {
		t.WriteByte('\n')
	}
	if r.StartLine == r.EndLine {
		fmt.Fprintf(&t, "[line %d", r.StartLine)
	} else {
		fmt.Fprintf(&t, "[lines %d-%d", r.StartLine, r.EndLine)
	}
	if r.TotalLines != nil {
		fmt.Fprintf(&t, " of %d", *r.TotalLines)
	} else {
		fmt.Fprintf(&t, "; total not counted: the file is %d bytes", r.TotalBytes)
	}
	if cut {
		fmt.Fprintf(&t, "; line %d is longer than max_read_bytes (%d): only its first %d bytes are shown", r.EndLine, limit, r.Bytes)
	} else if r.Truncated {
		fmt.Fprintf(&t, "; stopped before line %d to stay within max_read_bytes (%d bytes)", r.EndLine+1, limit)
	}
	if r.NextStartLine != 0 {
		fmt.Fprintf(&t, "; continue with start_line=%d", r.NextStartLine)
		if in.MaxLines != 0 {
			fmt.Fprintf(&t, ", max_lines=%d", in.MaxLines)
		}
		if numbers {
			t.WriteString(", line_numbers=true")
		}
		t.WriteByte(']')
	} else {
		t.WriteString("; end of file]")
	}
	return t.String()
}
