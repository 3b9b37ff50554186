package wsfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"charm.land/fantasy"
)

// DefaultMaxToolIterations is used when RunnerConfig.MaxToolIterations is
// zero or negative (MiniClaw's default for agents.defaults.max_tool_iterations).
const DefaultMaxToolIterations = 20

// DefaultSystemPrompt is used when RunnerConfig.SystemPrompt is empty.
const DefaultSystemPrompt = `You are a helpful assistant with access to a workspace directory through the tools read_file, write_file, append_file, list_dir and edit_file. All paths are relative to the workspace root; you cannot reach anything outside it. Read a file before you edit it, and use edit_file for small changes instead of rewriting whole files. When a tool returns an error, read the error code and message, correct the call, or explain to the user why the task cannot be done.`

// LimitNotice is the instruction added to the prompt of the last step when
// the tool-iteration limit is reached (%d is the limit). That step runs with
// all tools disabled, so the model has to answer in text.
const LimitNotice = "[tool-call limit reached] You have used all %d tool iterations allowed for this request, and tools are now disabled. Do not call any tool. Reply to the user now: summarise what you did, what succeeded, what failed and what is left to do."

// RunnerConfig configures a Runner. The first three fields mirror MiniClaw's
// agents.defaults (workspace, restrict_to_workspace, max_tool_iterations); see
// AgentDefaults for decoding them from MiniClaw's config file.
type RunnerConfig struct {
	// Workspace is the workspace root directory (agents.defaults.workspace);
	// see Config.Root.
	Workspace string
	// RestrictToWorkspace confines the tools to Workspace
	// (agents.defaults.restrict_to_workspace). nil means true.
	RestrictToWorkspace *bool
	// MaxToolIterations is how many model steps of one Run may call tools
	// (agents.defaults.max_tool_iterations); <= 0 means
	// DefaultMaxToolIterations. When the limit is reached the Runner makes
	// one more model call with all tools disabled, so the user always gets
	// a final text answer: a Run makes at most MaxToolIterations+1 model
	// calls.
	MaxToolIterations int
	// Limits bounds every tool call; zero fields take the library defaults.
	Limits Limits
	// Policy is the workspace policy (read-only mode, denied paths, audit
	// log); the zero value is the library's default. See Config.Policy.
	Policy Policy
	// ToolTimeout optionally bounds each tool call more tightly than
	// Limits.OperationTimeout.
	ToolTimeout time.Duration

	// Model is the language model (required).
	Model fantasy.LanguageModel
	// SystemPrompt is the system prompt; "" means DefaultSystemPrompt.
	SystemPrompt string
	// RepairToolCalls lets fantasy try to repair malformed tool calls
	// (broken JSON arguments) before rejecting them. Off by default: a
	// malformed call then comes back to the model as an error tool result
	// and the model fixes it itself, which is predictable and never runs a
	// guessed-at call.
	RepairToolCalls bool
	// ExtraTools are offered to the model next to the workspace tools.
	ExtraTools []fantasy.AgentTool
	// AgentOptions are passed to fantasy.NewAgent after the Runner's own
	// options (for temperature, max output tokens, provider options ...).
	AgentOptions []fantasy.AgentOption

	// Logger receives one record per tool call and one per Run; never file
	// contents. nil discards (with NewRunnerWithWorkspace, tool calls are
	// then logged to the workspace's Config.Logger).
	Logger *slog.Logger
	// OnStep, if set, is called after every finished step of a Run (for
	// transcripts and progress display). It runs on the Run's goroutine.
	OnStep func(sessionID string, step fantasy.StepResult)
}

// Runner runs a fantasy agent with the workspace tools for many independent
// chat sessions. It is MiniClaw's "fantasy-agent" provider in one type: the
// provider creates a Runner from its config and calls Run for every user
// message, with the chat's session ID.
//
// Sessions are isolated: each has its own history, and turns of different
// sessions run concurrently; turns of the same session are serialised. A
// Runner is safe for concurrent use.
type Runner struct {
	ws     *Workspace
	owned  bool // ws was opened by NewRunner and is closed by Close
	agent  fantasy.Agent
	limit  int
	logger *slog.Logger
	onStep func(string, fantasy.StepResult)
	repair fantasy.RepairToolCallFunction

	mu       sync.Mutex
	sessions map[string]*session
}

type session struct {
	turn sync.Mutex // held for a whole Run

	mu       sync.Mutex // guards messages
	messages []fantasy.Message
}

// Reply is the outcome of one Run.
type Reply struct {
	// Text is the model's final answer.
	Text string
	// Steps is the number of model calls made; ToolCalls the number of tool
	// calls among them.
	Steps     int
	ToolCalls int
	// LimitReached is true when MaxToolIterations was reached and the last
	// step ran without tools.
	LimitReached bool
	// Usage is the token usage of all steps.
	Usage fantasy.Usage
	// Messages are the messages this turn added to the session history: the
	// user message, then every step's assistant message (text and tool
	// calls) and tool message (tool results).
	Messages []fantasy.Message
}

// NewRunner opens the workspace and builds the agent. Close the Runner to
// close the workspace.
func NewRunner(cfg RunnerConfig) (*Runner, error) {
	if cfg.Model == nil {
		return nil, errors.New("wsfs: RunnerConfig.Model is required")
	}
	ws, err := Open(Config{
		Root:                cfg.Workspace,
		RestrictToWorkspace: cfg.RestrictToWorkspace,
		Limits:              cfg.Limits,
		Policy:              cfg.Policy,
		Logger:              cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	r := newRunner(ws, cfg)
	r.owned = true
	return r, nil
}

// NewRunnerWithWorkspace builds a Runner on an already open workspace
// (cfg.Workspace, RestrictToWorkspace, Limits and Policy are ignored). Closing this
// Runner does not close ws.
func NewRunnerWithWorkspace(ws *Workspace, cfg RunnerConfig) (*Runner, error) {
	if cfg.Model == nil {
		return nil, errors.New("wsfs: RunnerConfig.Model is required")
	}
	if ws == nil {
		return nil, errors.New("wsfs: workspace is nil")
	}
	return newRunner(ws, cfg), nil
}

func newRunner(ws *Workspace, cfg RunnerConfig) *Runner {
	limit := cfg.MaxToolIterations
	if limit <= 0 {
		limit = DefaultMaxToolIterations
	}
	logger := cfg.Logger
	if logger == nil {
		logger = discardLogger
	}
	system := cfg.SystemPrompt
	if system == "" {
		system = DefaultSystemPrompt
	}
	var topts []ToolOption
	if cfg.Logger != nil {
		topts = append(topts, WithLogger(cfg.Logger))
	}
	if cfg.ToolTimeout > 0 {
		topts = append(topts, WithTimeout(cfg.ToolTimeout))
	}
	tools := append(Tools(ws, topts...), cfg.ExtraTools...)

	// fantasy repairs malformed tool-call JSON by default when no repair
	// function is set; a function that declines keeps repair off.
	var repair fantasy.RepairToolCallFunction
	if !cfg.RepairToolCalls {
		repair = func(_ context.Context, o fantasy.ToolCallRepairOptions) (*fantasy.ToolCallContent, error) {
			return nil, o.ValidationError
		}
	}
	opts := []fantasy.AgentOption{
		fantasy.WithSystemPrompt(system),
		fantasy.WithTools(tools...),
	}
	if repair != nil {
		opts = append(opts, fantasy.WithRepairToolCall(repair))
	}
	opts = append(opts, cfg.AgentOptions...)
	return &Runner{
		ws:       ws,
		agent:    fantasy.NewAgent(cfg.Model, opts...),
		limit:    limit,
		logger:   logger,
		onStep:   cfg.OnStep,
		repair:   repair,
		sessions: make(map[string]*session),
	}
}

// Workspace returns the Runner's workspace.
func (r *Runner) Workspace() *Workspace { return r.ws }

// MaxToolIterations returns the effective tool-iteration limit.
func (r *Runner) MaxToolIterations() int { return r.limit }

// Close closes the workspace if NewRunner opened it (a workspace given to
// NewRunnerWithWorkspace stays open). Runs in progress finish
// with invalid_workspace errors from their tools. Idempotent.
func (r *Runner) Close() error {
	if !r.owned {
		return nil
	}
	return r.ws.Close()
}

func (r *Runner) session(id string) *session {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok {
		s = &session{}
		r.sessions[id] = s
	}
	return s
}

// Run sends one user message in a session and runs the agent loop until the
// model answers in text, MaxToolIterations is reached (then one last step
// runs without tools), or ctx ends.
//
// The session's history is the prompt; afterwards it is extended with the
// user message and every finished step's messages (assistant text and tool
// calls, tool results). If Run fails (model error, ctx cancelled, workspace
// closed) the steps that finished are still recorded, because their tool
// calls may have changed files; if no step finished, history is unchanged
// and the message can simply be sent again.
func (r *Runner) Run(ctx context.Context, sessionID, userMessage string) (Reply, error) {
	if userMessage == "" {
		return Reply{}, errors.New("wsfs: empty user message")
	}
	start := time.Now()
	s := r.session(sessionID)
	s.turn.Lock()
	defer s.turn.Unlock()

	s.mu.Lock()
	history := slices.Clone(s.messages)
	s.mu.Unlock()

	reply := Reply{Messages: []fantasy.Message{fantasy.NewUserMessage(userMessage)}}
	notice := fantasy.NewUserMessage(fmt.Sprintf(LimitNotice, r.limit))
	noTools := []fantasy.AgentTool{}

	result, err := r.agent.Stream(ctx, fantasy.AgentStreamCall{
		Prompt:   userMessage,
		Messages: history,
		// Steps 0..limit-1 may call tools; step `limit`, if reached, may not.
		StopWhen: []fantasy.StopCondition{fantasy.StepCountIs(r.limit + 1)},
		PrepareStep: func(ctx context.Context, o fantasy.PrepareStepFunctionOptions) (context.Context, fantasy.PrepareStepResult, error) {
			if o.StepNumber < r.limit {
				return ctx, fantasy.PrepareStepResult{}, nil
			}
			reply.LimitReached = true
			msgs := append(slices.Clip(o.Messages), notice)
			return ctx, fantasy.PrepareStepResult{
				DisableAllTools: true,
				Tools:           noTools, // nothing is offered and nothing can run
				Messages:        msgs,
			}, nil
		},
		RepairToolCall: r.repair,
		OnStepFinish: func(step fantasy.StepResult) error {
			reply.Steps++
			reply.ToolCalls += len(step.Content.ToolCalls())
			reply.Messages = append(reply.Messages, step.Messages...)
			if r.onStep != nil {
				r.onStep(sessionID, step)
			}
			return nil
		},
	})

	if reply.Steps > 0 {
		s.mu.Lock()
		s.messages = append(s.messages, reply.Messages...)
		s.mu.Unlock()
	}
	if err != nil {
		r.logger.LogAttrs(context.Background(), slog.LevelWarn, "wsfs agent run failed",
			slog.String("session", sessionID), slog.Int("steps", reply.Steps),
			slog.Int("tool_calls", reply.ToolCalls), slog.Duration("duration", time.Since(start)),
			slog.String("error", err.Error()))
		if reply.Steps == 0 {
			reply.Messages = nil
		}
		return reply, err
	}
	reply.Text = result.Response.Content.Text()
	reply.Usage = result.TotalUsage
	if reply.LimitReached && reply.Text == "" {
		reply.Text = fmt.Sprintf("I stopped after reaching the limit of %d tool iterations before finishing.", r.limit)
	}
	r.logger.LogAttrs(context.Background(), slog.LevelInfo, "wsfs agent run",
		slog.String("session", sessionID), slog.Int("steps", reply.Steps),
		slog.Int("tool_calls", reply.ToolCalls), slog.Bool("limit_reached", reply.LimitReached),
		slog.Duration("duration", time.Since(start)))
	return reply, nil
}

// History returns a copy of a session's messages (nil for an unknown
// session). It does not wait for a Run in progress; that Run's messages
// appear when it ends.
func (r *Runner) History(sessionID string) []fantasy.Message {
	r.mu.Lock()
	s, ok := r.sessions[sessionID]
	r.mu.Unlock()
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.messages)
}

// ResetSession forgets a session's history. A Run in progress for it
// completes, but its messages are discarded.
func (r *Runner) ResetSession(sessionID string) {
	r.mu.Lock()
	delete(r.sessions, sessionID)
	r.mu.Unlock()
}

// Sessions returns the IDs of the sessions that have state.
func (r *Runner) Sessions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.sessions))
	for id := range r.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
