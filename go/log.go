package wsfs

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

var discardLogger = slog.New(slog.DiscardHandler)

// maxLoggedPath bounds the path attribute of log records.
const maxLoggedPath = 512

func (ws *Workspace) logCall(cs callSpec, err error, d time.Duration) {
	logger := cs.logger
	if logger == nil {
		logger = ws.logger
	}
	ctx := context.Background()
	outcome, level := "ok", slog.LevelInfo
	if err != nil {
		level = slog.LevelWarn
		var e *Error
		if errors.As(err, &e) {
			outcome = string(e.Code)
		} else {
			outcome = string(CodeIOError)
		}
	}
	if !logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("tool", cs.tool),
		slog.String("path", ws.relPath(cs.path)),
		slog.String("outcome", outcome),
		slog.Duration("duration", d),
	}
	if m := cs.metrics; m != nil && m.Tool != "" {
		attrs = append(attrs, slog.Group("metrics", metricsAttrs(m)...))
	}
	logger.LogAttrs(ctx, level, "wsfs tool call", attrs...)
}

// metricsAttrs are the figures of m the tool has, as log attributes.
func metricsAttrs(m *Metrics) []any {
	attrs := []any{slog.Int64("duration_us", m.DurationUS)}
	for _, f := range []struct {
		key   string
		value int64
	}{
		{"start_line", m.StartLine}, {"lines_read", m.LinesRead}, {"bytes_read", m.BytesRead},
		{"bytes_written", m.BytesWritten}, {"matches", m.Matches}, {"files_searched", m.FilesSearched},
		{"entries", m.Entries}, {"files_changed", m.FilesChanged},
	} {
		if f.value != 0 {
			attrs = append(attrs, slog.Int64(f.key, f.value))
		}
	}
	if m.Truncated {
		attrs = append(attrs, slog.Bool("truncated", true))
	}
	return attrs
}

// relPath makes an absolute path inside the root relative, for logs.
func (ws *Workspace) relPath(p string) string {
	if filepath.IsAbs(p) && ws.root != "" {
		if rel, err := filepath.Rel(ws.root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			p = rel
		}
	}
	if len(p) > maxLoggedPath {
		cut := maxLoggedPath
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		p = p[:cut] + "…"
	}
	return p
}
