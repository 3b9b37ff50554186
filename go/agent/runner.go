package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/fantasytools"
)

// Runner runs a fantasy agent with the workspace tools for many independent
// chat sessions. It is MiniClaw's "fantasy-agent" provider in one type: the
// provider creates a Runner from its config and calls Run for every user
// message, with the chat's session ID.
//
// Sessions are isolated: each has its own history, and turns of different
// sessions run concurrently; turns of the same session are serialised. A
// Runner is safe for concurrent use.
type Runner struct {
	ws      *wsfs.Workspace
	tools   []string // the workspace tools offered
	owned   bool     // ws was opened by NewRunner and is closed by Close
	agent   fantasy.Agent
	limit   int
	logger  *slog.Logger
	onStep  func(string, fantasy.StepResult)
	repair  fantasy.RepairToolCallFunction
	history HistoryStore
	locks   sessionLocks
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
	if err := cfg.check(); err != nil {
		return nil, err
	}
	ws, err := wsfs.Open(wsfs.Config{
		Root: cfg.Workspace,
		// MiniClaw makes its workspace (agents.defaults.workspace) when missing.
		CreateRoot:          true,
		RestrictToWorkspace: cfg.RestrictToWorkspace,
		Limits:              cfg.Limits,
		Policy:              cfg.Policy,
		Logger:              cfg.Logger,
		Mode:                cfg.Mode,
		Session:             cfg.Session,
		SessionRefreshMs:    cfg.SessionRefreshMs,
		StateDir:            cfg.StateDir,
		Profile:             cfg.Profile,
		WasmTools:           cfg.WasmTools,
		WasmPolicy:          cfg.WasmPolicy,
		ModelGateway:        cfg.ModelGateway,
	})
	if err != nil {
		return nil, err
	}
	r, err := newRunner(ws, cfg)
	if err != nil {
		ws.Close()
		return nil, err
	}
	r.owned = true
	return r, nil
}

// NewRunnerWithWorkspace builds a Runner on an already open workspace
// (cfg.Workspace, RestrictToWorkspace, Limits and Policy are ignored; ws's
// own policy decides whether the tools that change files are offered).
// Closing this Runner does not close ws.
func NewRunnerWithWorkspace(ws *wsfs.Workspace, cfg RunnerConfig) (*Runner, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if ws == nil {
		return nil, errors.New("wsfs: workspace is nil")
	}
	return newRunner(ws, cfg)
}

func newRunner(ws *wsfs.Workspace, cfg RunnerConfig) (*Runner, error) {
	names, err := selectTools(cfg.Tools, ws)
	if err != nil {
		return nil, err
	}
	limit := cfg.MaxToolIterations
	if limit <= 0 {
		limit = DefaultMaxToolIterations
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	system := cfg.SystemPrompt
	if system == "" {
		system = DefaultSystemPromptFor(names)
	}
	topts := []fantasytools.ToolOption{fantasytools.WithToolNames(names...)}
	if cfg.Logger != nil {
		topts = append(topts, fantasytools.WithLogger(cfg.Logger))
	}
	if cfg.ToolTimeout > 0 {
		topts = append(topts, fantasytools.WithTimeout(cfg.ToolTimeout))
	}
	if cfg.ParallelReadOnlyTools {
		topts = append(topts, fantasytools.WithParallelReadOnlyTools())
	}
	if cfg.Metrics {
		topts = append(topts, fantasytools.WithMetrics())
	}
	tools := append(fantasytools.Tools(ws, topts...), cfg.ExtraTools...)

	// fantasy repairs malformed tool-call JSON by default when no repair
	// function is set; a function that declines keeps repair off.
	var repair fantasy.RepairToolCallFunction
	if !cfg.RepairToolCalls {
		repair = func(_ context.Context, o fantasy.ToolCallRepairOptions) (*fantasy.ToolCallContent, error) {
			return nil, o.ValidationError
		}
	}
	history := cfg.History
	if history == nil {
		history = &MemoryHistory{}
	}
	opts := []fantasy.AgentOption{
		fantasy.WithSystemPrompt(system),
		fantasy.WithTools(tools...),
		// Agent-level, not per call: fantasy appends stop conditions, so
		// the host's WithStopConditions add to this one instead of being
		// replaced by it.
		fantasy.WithStopConditions(fantasy.StepCountIs(limit)),
	}
	opts = append(opts, cfg.AgentOptions...)
	return &Runner{
		ws:      ws,
		tools:   names,
		agent:   fantasy.NewAgent(cfg.Model, opts...),
		limit:   limit,
		logger:  logger,
		onStep:  cfg.OnStep,
		repair:  repair,
		history: history,
	}, nil
}

// Workspace returns the Runner's workspace.
func (r *Runner) Workspace() *wsfs.Workspace { return r.ws }

// Tools returns the names of the workspace tools the Runner offers, in
// wsfs.ToolNames order (RunnerConfig.Tools, less the tools that change
// files when the workspace's policy disables writes). ExtraTools are not
// included.
func (r *Runner) Tools() []string { return slices.Clone(r.tools) }

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

// Run sends one user message in a session and runs the agent loop until the
// model answers in text, MaxToolIterations is reached (then one last step
// runs without tools), a stop condition from AgentOptions is met, or ctx
// ends.
//
// The session's history (from the HistoryStore) is the prompt; afterwards
// the turn (the user message and every finished step's messages: assistant
// text and tool calls, tool results) is appended to it. If Run fails (model
// error, ctx cancelled, workspace closed) the steps that finished are still
// recorded, because their tool calls may have changed files; if no step
// finished, history is unchanged and the message can simply be sent again.
// A failure to load or store the history is returned as Run's error (after
// the model calls, for storing).
func (r *Runner) Run(ctx context.Context, sessionID, userMessage string) (Reply, error) {
	if userMessage == "" {
		return Reply{}, errors.New("wsfs: empty user message")
	}
	start := time.Now()
	lock := r.locks.acquire(sessionID)
	defer r.locks.release(sessionID, lock)
	lock.turn.Lock()
	defer lock.turn.Unlock()
	lock.mu.Lock()
	gen := lock.gen
	lock.mu.Unlock()

	history, err := r.history.Load(ctx, sessionID)
	if err != nil {
		return Reply{}, fmt.Errorf("wsfs: loading the history of session %q: %w", sessionID, err)
	}
	reply, err := r.run(ctx, sessionID, slices.Clip(history), userMessage)

	if reply.Steps > 0 {
		lock.mu.Lock()
		if lock.gen == gen { // not reset meanwhile
			if serr := r.history.Append(ctx, sessionID, slices.Clone(reply.Messages)); serr != nil {
				err = errors.Join(err, fmt.Errorf("wsfs: storing the turn of session %q: %w", sessionID, serr))
			}
		}
		lock.mu.Unlock()
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
	r.logger.LogAttrs(context.Background(), slog.LevelInfo, "wsfs agent run",
		slog.String("session", sessionID), slog.Int("steps", reply.Steps),
		slog.Int("tool_calls", reply.ToolCalls), slog.Bool("limit_reached", reply.LimitReached),
		slog.Duration("duration", time.Since(start)))
	return reply, nil
}

// run makes the model calls of one turn: the tool steps (at most limit; the
// agent's stop conditions are the Runner's StepCountIs(limit) and the
// host's), then, if the model still wanted to call tools after the last
// of them, one summary step with no tools.
func (r *Runner) run(ctx context.Context, sessionID string, history []fantasy.Message, userMessage string) (Reply, error) {
	reply := Reply{Messages: []fantasy.Message{fantasy.NewUserMessage(userMessage)}}
	var last fantasy.StepResult
	onStep := func(step fantasy.StepResult) error {
		last = step
		reply.Steps++
		reply.ToolCalls += len(step.Content.ToolCalls())
		reply.Messages = append(reply.Messages, step.Messages...)
		if r.onStep != nil {
			r.onStep(sessionID, step)
		}
		return nil
	}
	result, err := r.agent.Stream(ctx, fantasy.AgentStreamCall{
		Prompt:         userMessage,
		Messages:       history,
		RepairToolCall: r.repair,
		OnStepFinish:   onStep,
	})
	if err != nil {
		return reply, err
	}
	reply.Usage = result.TotalUsage
	reply.Text = result.Response.Content.Text()
	if reply.Steps < r.limit || !wantsMoreTools(last) {
		return reply, nil
	}

	// The limit is reached and the model is still calling tools: one more
	// call, with nothing offered and nothing runnable, so the user gets an
	// answer. The notice is its prompt and not part of the history.
	reply.LimitReached = true
	none := fantasy.ToolChoiceNone
	noTools := []fantasy.AgentTool{}
	result, err = r.agent.Stream(ctx, fantasy.AgentStreamCall{
		Prompt:     fmt.Sprintf(LimitNotice, r.limit),
		Messages:   slices.Concat(history, reply.Messages),
		ToolChoice: &none,
		// Per call, so it replaces the host's PrepareStep and stop
		// conditions for this step.
		StopWhen: []fantasy.StopCondition{fantasy.StepCountIs(1)},
		PrepareStep: func(ctx context.Context, _ fantasy.PrepareStepFunctionOptions) (context.Context, fantasy.PrepareStepResult, error) {
			return ctx, fantasy.PrepareStepResult{
				DisableAllTools: true,
				Tools:           noTools, // nothing is offered and nothing can run
				ToolChoice:      &none,
			}, nil
		},
		RepairToolCall: r.repair,
		OnStepFinish:   onStep,
	})
	if err != nil {
		return reply, err
	}
	reply.Usage = addUsage(reply.Usage, result.TotalUsage)
	reply.Text = result.Response.Content.Text()
	if reply.Text == "" {
		reply.Text = fmt.Sprintf("I stopped after reaching the limit of %d tool iterations before finishing.", r.limit)
	}
	return reply, nil
}

// wantsMoreTools reports whether fantasy would have gone on after step:
// it called tools and none of their results asked to stop the turn.
func wantsMoreTools(step fantasy.StepResult) bool {
	if step.FinishReason != fantasy.FinishReasonToolCalls || len(step.Content.ToolCalls()) == 0 {
		return false
	}
	for _, res := range step.Content.ToolResults() {
		if res.StopTurn {
			return false
		}
	}
	return true
}

func addUsage(a, b fantasy.Usage) fantasy.Usage {
	return fantasy.Usage{
		InputTokens:         a.InputTokens + b.InputTokens,
		OutputTokens:        a.OutputTokens + b.OutputTokens,
		TotalTokens:         a.TotalTokens + b.TotalTokens,
		ReasoningTokens:     a.ReasoningTokens + b.ReasoningTokens,
		CacheCreationTokens: a.CacheCreationTokens + b.CacheCreationTokens,
		CacheReadTokens:     a.CacheReadTokens + b.CacheReadTokens,
	}
}
