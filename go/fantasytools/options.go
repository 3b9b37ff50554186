package fantasytools

import (
	"log/slog"
	"slices"
	"time"

	wsfs "github.com/wsfs/wsfs/go"
)

// ToolOption configures Tools.
type ToolOption func(*toolConfig)

type toolConfig struct {
	logger        *slog.Logger
	timeout       time.Duration
	readOnly      bool
	parallelReads bool
	metrics       bool
	names         []string
}

// chooses reports whether the options keep the tool spec describes: named
// by WithToolNames (or no names given), and read-only under
// WithReadOnlyTools.
func (c toolConfig) chooses(spec wsfs.ToolSpec) bool {
	return (len(c.names) == 0 || slices.Contains(c.names, spec.Name)) && (!c.readOnly || spec.ReadOnly())
}

// WithLogger sends the tools' per-call log records to l instead of the
// workspace's wsfs.Config.Logger.
func WithLogger(l *slog.Logger) ToolOption {
	return func(c *toolConfig) { c.logger = l }
}

// WithMetrics puts each call's figures (wsfs.Metrics: tool, path, duration,
// lines and bytes read, matches ...) into its response's Metadata, as JSON,
// for a host's middleware (fantasy keeps it as the tool result's
// ClientMetadata; the model does not read it), and into its log record. It
// costs the library one copy of the text per call. Profile tools (a
// workspace opened with a profile) get them too; the envelope the model reads
// keeps the profile's shape.
func WithMetrics() ToolOption {
	return func(c *toolConfig) { c.metrics = true }
}

// WithTimeout bounds every tool call to d (it can only shorten the
// workspace's OperationTimeout; the context deadline still applies). Zero
// means no extra bound.
func WithTimeout(d time.Duration) ToolOption {
	return func(c *toolConfig) { c.timeout = d }
}

// WithReadOnlyTools makes Tools return only the tools that never change
// anything (those whose spec has readOnlyHint), for a read-only agent.
func WithReadOnlyTools() ToolOption {
	return func(c *toolConfig) { c.readOnly = true }
}

// WithParallelReadOnlyTools marks the tools that never change anything
// (readOnlyHint in their spec: read_file, list_dir, ...) as parallel
// (fantasy.NewParallelAgentTool, Info().Parallel): when a model calls
// several tools in one step, fantasy starts the parallel ones concurrently
// (at most 5 at once, in fantasy v0.42.0) and runs the others one at a
// time, in call order. Tools that write stay sequential, so writes never
// race each other. Results reach the model in call order either way. A
// read called before a write of the same step may overlap it and sees the
// file before or after the write, never a mix (writes are atomic); a read
// called after a write starts once the write is done.
func WithParallelReadOnlyTools() ToolOption {
	return func(c *toolConfig) { c.parallelReads = true }
}

// WithToolNames makes Tools return only the named tools, in wsfs.ToolNames
// order. A name that is not a tool is a programming error: Tools panics.
func WithToolNames(names ...string) ToolOption {
	return func(c *toolConfig) { c.names = append(c.names, names...) }
}
