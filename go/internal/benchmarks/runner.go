package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"charm.land/fantasy"
	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/fantasytools"
)

// Env holds everything the benchmarks call, on the same fixture: for each
// workspace (the one on the scratch disk, and the one on tmpfs if the
// fixture has it) one wsfs workspace (typed API and fantasy tools), a raw cgo
// handle, the Baseline (typed and fantasy, and its open-first variant) and
// the Floor.
type Env struct {
	Fx *Fixture
	// Ctx is cancellable, as an agent run's context is: the typed API and
	// the fantasy tools then register a cancel token for every call.
	Ctx    context.Context
	cancel context.CancelFunc

	*Impls        // on the scratch disk
	Tmpfs  *Impls // on tmpfs; nil if the fixture has no tmpfs workspace
}

// Impls are the implementations opened on one workspace directory.
type Impls struct {
	WS     *wsfs.Workspace
	Tools  map[string]fantasy.AgentTool
	Raw    *RawWorkspace
	Base   *Baseline
	BTools map[string]fantasy.AgentTool
	// BaseOpenFirst is OpenBaselineOpenFirst's Baseline: for reference only.
	BaseOpenFirst *Baseline
	Floor         *Floor
}

// NewEnv opens every implementation on fx's workspaces.
func NewEnv(fx *Fixture) (*Env, error) {
	e := &Env{Fx: fx}
	e.Ctx, e.cancel = context.WithCancel(context.Background())
	var err error
	if e.Impls, err = openImpls(fx.WS()); err != nil {
		e.Close()
		return nil, err
	}
	if fx.Manifest.WSTmpfs != "" {
		if e.Tmpfs, err = openImpls(fx.Manifest.WSTmpfs); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

func openImpls(dir string) (*Impls, error) {
	m := &Impls{}
	var err error
	if m.WS, err = wsfs.Open(wsfs.Config{Root: dir}); err != nil {
		return nil, err
	}
	m.Tools = toolMap(fantasytools.Tools(m.WS))
	if m.Raw, err = OpenRaw(dir); err != nil {
		m.Close()
		return nil, err
	}
	if m.Base, err = OpenBaseline(dir, wsfs.Limits{}); err != nil {
		m.Close()
		return nil, err
	}
	m.BTools = toolMap(BaselineTools(m.Base))
	if m.BaseOpenFirst, err = OpenBaselineOpenFirst(dir, wsfs.Limits{}); err != nil {
		m.Close()
		return nil, err
	}
	if m.Floor, err = OpenFloor(dir); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// Close releases everything.
func (e *Env) Close() {
	e.cancel()
	for _, m := range []*Impls{e.Impls, e.Tmpfs} {
		if m != nil {
			m.Close()
		}
	}
}

// Close releases the implementations.
func (m *Impls) Close() {
	if m.WS != nil {
		m.WS.Close()
	}
	if m.Raw != nil {
		m.Raw.Close()
	}
	if m.Base != nil {
		m.Base.Close()
	}
	if m.BaseOpenFirst != nil {
		m.BaseOpenFirst.Close()
	}
	if m.Floor != nil {
		m.Floor.Close()
	}
}

// baseline is the Baseline a baseline path calls: the open-first variant for
// PathBaselineOpenFirst, the Baseline otherwise.
func (m *Impls) baseline(path string) *Baseline {
	if path == PathBaselineOpenFirst {
		return m.BaseOpenFirst
	}
	return m.Base
}

// on returns the implementations on c's workspace.
func (e *Env) on(c Case) (*Impls, error) {
	if c.FS == FSTmpfs {
		if e.Tmpfs == nil {
			return nil, fmt.Errorf("%s: the fixture has no tmpfs workspace", c.Name)
		}
		return e.Tmpfs, nil
	}
	return e.Impls, nil
}

func toolMap(tools []fantasy.AgentTool) map[string]fantasy.AgentTool {
	m := make(map[string]fantasy.AgentTool, len(tools))
	for _, t := range tools {
		m[t.Info().Name] = t
	}
	return m
}

// call is one prepared call of a case: typed input, its JSON (what a model
// sends), and the arguments and content buffer of the typed API's C call.
type call struct {
	in         any
	args       string
	typedArgs  string
	content    string
	hasContent bool
}

func marshal(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// calls prepares c's calls for layer (two for edits, which alternate).
func (e *Env) calls(c Case, layer string) ([]call, error) {
	p := e.Fx.ToolPath(c, layer)
	content, err := e.Fx.Content(c)
	if err != nil {
		return nil, err
	}
	var ins []any
	switch c.Tool {
	case wsfs.ToolReadFile:
		ins = []any{wsfs.ReadFileInput{Path: p, StartLine: c.StartLine, MaxLines: c.MaxLines}}
	case wsfs.ToolWriteFile:
		ins = []any{wsfs.WriteFileInput{Path: p, Content: content}}
	case wsfs.ToolAppendFile:
		ins = []any{wsfs.AppendFileInput{Path: p, Content: content}}
	case wsfs.ToolListDir:
		ins = []any{wsfs.ListDirInput{Path: p}}
	case wsfs.ToolEditFile:
		for _, ed := range c.Edits {
			ins = append(ins, wsfs.EditFileInput{Path: p, OldText: ed[0], NewText: ed[1]})
		}
	default:
		return nil, fmt.Errorf("unknown tool %q", c.Tool)
	}
	out := make([]call, len(ins))
	for i, in := range ins {
		args, err := marshal(in)
		if err != nil {
			return nil, err
		}
		out[i] = call{in: in, args: args, typedArgs: args}
		if c.Typed.ContentBuffer {
			if out[i].typedArgs, err = marshal(map[string]string{"path": p}); err != nil {
				return nil, err
			}
			out[i].content, out[i].hasContent = content, true
		}
	}
	return out, nil
}

// Runner returns a function running c's i-th call through path, checking
// the outcome (a wrong result is an error, so a benchmark that stops
// measuring what it claims fails). Call Fx.Reset(c, path) before a run.
func (e *Env) Runner(c Case, path string) (func(i int) error, error) {
	return e.RunnerCtx(e.Ctx, c, path)
}

// RunnerCtx is Runner with another context for the typed and fantasy paths
// (the layer's files are still path's). PathTypedBackground and
// PathFantasyBackground use context.Background() whatever ctx is.
func (e *Env) RunnerCtx(ctx context.Context, c Case, path string) (func(i int) error, error) {
	m, err := e.on(c)
	if err != nil {
		return nil, err
	}
	calls, err := e.calls(c, path)
	if err != nil {
		return nil, err
	}
	n := len(calls)
	switch path {
	case PathTypedBackground, PathFantasyBackground:
		ctx = context.Background()
	}
	switch path {
	case PathTyped, PathTypedBackground:
		return func(i int) error {
			return c.check(typedCall(ctx, m.WS, calls[i%n].in))
		}, nil
	case PathBaseline, PathBaselineAA, PathBaselineOpenFirst:
		base := m.baseline(path)
		return func(i int) error {
			return c.check(typedCall(ctx, base, calls[i%n].in))
		}, nil
	case PathFantasy, PathFantasyBackground, PathBaselineFantasy:
		tools := m.Tools
		if path == PathBaselineFantasy {
			tools = m.BTools
		}
		tool := tools[c.Tool]
		return func(i int) error {
			resp, err := tool.Run(ctx, fantasy.ToolCall{ID: "call_1", Name: c.Tool, Input: calls[i%n].args})
			if err != nil {
				return err
			}
			if resp.IsError == c.ExpectOK || (c.ExpectCode != "" && !strings.HasPrefix(resp.Content, c.ExpectCode+": ")) {
				return fmt.Errorf("%s via %s: unexpected response (is_error=%v): %.200s", c.Name, path, resp.IsError, resp.Content)
			}
			return nil
		}, nil
	case PathCgoTyped:
		opts := `{"output":"` + c.Typed.Output + `"}`
		return func(i int) error {
			cl := &calls[i%n]
			var content *string
			if cl.hasContent {
				content = &cl.content
			}
			return c.checkEnvelope(path, m.Raw.Call(c.Tool, cl.typedArgs, opts, content))
		}, nil
	case PathCgoFantasy:
		opts := `{"output":"` + c.Fantasy.Output + `"}`
		return func(i int) error {
			return c.checkEnvelope(path, m.Raw.Call(c.Tool, calls[i%n].args, opts, nil))
		}, nil
	case PathFloor:
		return e.floorRunner(m.Floor, c, path)
	}
	return nil, fmt.Errorf("unknown path %q", path)
}

func (e *Env) floorRunner(f *Floor, c Case, layer string) (func(i int) error, error) {
	p := e.Fx.ToolPath(c, layer)
	content, err := e.Fx.Content(c)
	if err != nil {
		return nil, err
	}
	data := []byte(content)
	switch c.Tool {
	case wsfs.ToolReadFile:
		if c.ExpectCode == string(wsfs.CodeOutsideWorkspace) {
			return func(int) error { return f.Refuse(p) }, nil
		}
		if c.StartLine != 0 || c.MaxLines != 0 {
			return func(int) error {
				n, err := f.ReadRange(p, c.StartLine, c.MaxLines)
				if err == nil && int64(n) != c.ExpectBytes {
					err = fmt.Errorf("floor range %s: %d bytes, want %d", p, n, c.ExpectBytes)
				}
				return err
			}, nil
		}
		return func(int) error {
			n, err := f.Read(p)
			if err == nil && c.ExpectOK && int64(n) < c.ExpectBytes {
				err = fmt.Errorf("floor read %s: %d bytes, want at least %d", p, n, c.ExpectBytes)
			}
			return err
		}, nil
	case wsfs.ToolWriteFile:
		return func(int) error { return f.Write(p, data) }, nil
	case wsfs.ToolAppendFile:
		return func(int) error { return f.Append(p, data) }, nil
	case wsfs.ToolEditFile:
		off, err := floorMarkerOffset(filepath.Join(e.Fx.Dir, c.ResetFrom))
		if err != nil {
			return nil, err
		}
		repl := make([][]byte, len(c.Edits))
		for i, ed := range c.Edits {
			repl[i] = []byte(ed[1])
		}
		return func(i int) error { return f.Edit(p, off, repl[i%len(repl)]) }, nil
	case wsfs.ToolListDir:
		return func(int) error {
			total, listed, err := f.List(p)
			if err == nil && (total != c.ExpectTotal || listed != c.ExpectEntries) {
				err = fmt.Errorf("floor list %s: %d of %d, want %d of %d", p, listed, total, c.ExpectEntries, c.ExpectTotal)
			}
			return err
		}, nil
	}
	return nil, fmt.Errorf("unknown tool %q", c.Tool)
}

// typedAPI is the typed API both wsfs.Workspace and Baseline implement.
type typedAPI interface {
	ReadFile(context.Context, wsfs.ReadFileInput) (wsfs.ReadFileResult, error)
	WriteFile(context.Context, wsfs.WriteFileInput) (wsfs.WriteFileResult, error)
	AppendFile(context.Context, wsfs.AppendFileInput) (wsfs.AppendFileResult, error)
	ListDir(context.Context, wsfs.ListDirInput) (wsfs.ListDirResult, error)
	EditFile(context.Context, wsfs.EditFileInput) (wsfs.EditFileResult, error)
}

var (
	_ typedAPI = (*wsfs.Workspace)(nil)
	_ typedAPI = (*Baseline)(nil)
)

func typedCall(ctx context.Context, api typedAPI, in any) (any, error) {
	switch in := in.(type) {
	case wsfs.ReadFileInput:
		return api.ReadFile(ctx, in)
	case wsfs.WriteFileInput:
		return api.WriteFile(ctx, in)
	case wsfs.AppendFileInput:
		return api.AppendFile(ctx, in)
	case wsfs.ListDirInput:
		return api.ListDir(ctx, in)
	case wsfs.EditFileInput:
		return api.EditFile(ctx, in)
	}
	return nil, fmt.Errorf("unknown input %T", in)
}

// checkEnvelope verifies the outcome of a raw C call.
func (c Case) checkEnvelope(path, env string) error {
	if strings.HasPrefix(env, `{"ok":true`) != c.ExpectOK ||
		(c.ExpectCode != "" && !strings.HasPrefix(env, `{"ok":false,"error":{"code":"`+c.ExpectCode+`"`)) {
		return fmt.Errorf("%s via %s: unexpected envelope: %.200s", c.Name, path, env)
	}
	return nil
}

// check verifies a typed result against the case's expectations.
func (c Case) check(res any, err error) error {
	if !c.ExpectOK {
		var e *wsfs.Error
		switch {
		case err == nil:
			return fmt.Errorf("%s: succeeded, want an error", c.Name)
		case c.ExpectCode != "" && (!errors.As(err, &e) || string(e.Code) != c.ExpectCode):
			return fmt.Errorf("%s: %v, want %s", c.Name, err, c.ExpectCode)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	switch r := res.(type) {
	case wsfs.ReadFileResult:
		if r.Bytes != c.ExpectBytes || int64(len(r.Content)) != c.ExpectBytes {
			return fmt.Errorf("%s: read %d bytes, want %d", c.Name, r.Bytes, c.ExpectBytes)
		}
	case wsfs.ListDirResult:
		if len(r.Entries) != c.ExpectEntries || r.Total != c.ExpectTotal {
			return fmt.Errorf("%s: listed %d of %d, want %d of %d", c.Name, len(r.Entries), r.Total, c.ExpectEntries, c.ExpectTotal)
		}
	case wsfs.EditFileResult:
		if r.Replaced != 1 {
			return fmt.Errorf("%s: replaced %d, want 1", c.Name, r.Replaced)
		}
	}
	return nil
}
