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
	logger.LogAttrs(ctx, level, "wsfs tool call",
		slog.String("tool", cs.tool),
		slog.String("path", ws.relPath(cs.path)),
		slog.String("outcome", outcome),
		slog.Duration("duration", d),
	)
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
