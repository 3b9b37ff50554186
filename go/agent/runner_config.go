package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"time"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

// DefaultMaxToolIterations is used when RunnerConfig.MaxToolIterations is
// zero or negative (MiniClaw's default for agents.defaults.max_tool_iterations).
const DefaultMaxToolIterations = 20

// DefaultSystemPrompt is the system prompt of a Runner with DefaultTools
// when RunnerConfig.SystemPrompt is empty; with other tools it is
// DefaultSystemPromptFor(Runner.Tools()). It names exactly DefaultTools
// (TestSystemPromptNamesTheOfferedTools).
const DefaultSystemPrompt = `You are a helpful assistant with access to a workspace directory through the tools read_file, write_file, append_file, list_dir and edit_file. All paths are relative to the workspace root; you cannot reach anything outside it. Find files with list_dir, and read a file (or a range of its lines) before you change it. Use edit_file for small changes instead of rewriting whole files. When a tool returns an error, read the error code and message, correct the call, or explain to the user why the task cannot be done.`

// LimitNotice is the instruction added to the prompt of the last step when
// the tool-iteration limit is reached (%d is the limit). That step runs with
// all tools disabled, so the model has to answer in text.
const LimitNotice = "[tool-call limit reached] You have used all %d tool iterations allowed for this request, and tools are now disabled. Do not call any tool. Reply to the user now: summarise what you did, what succeeded, what failed and what is left to do."

// RunnerConfig configures a Runner. The first three fields mirror MiniClaw's
// agents.defaults (workspace, restrict_to_workspace, max_tool_iterations); see
// AgentDefaults for decoding them from MiniClaw's config file.
type RunnerConfig struct {
	// Workspace is the workspace root directory (agents.defaults.workspace);
	// see wsfs.Config.Root.
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
	Limits wsfs.Limits
	// Policy is the workspace policy (read-only mode, denied paths, audit
	// log); the zero value is the library's default. See wsfs.Config.Policy.
	Policy wsfs.Policy
	// Mode, Session, SessionRefreshMs and StateDir are wsfs.Config's: with
	// wsfs.ModeOverlay the agent works in an overlay session over Workspace,
	// which changes only when the host commits the session.
	Mode             wsfs.Mode
	Session          string
	SessionRefreshMs *int
	StateDir         string
	// Profile is wsfs.Config.Profile: the Runner then offers the profile's
	// tools, and Tools names them in the profile's names.
	Profile string
	// WasmTools and WasmPolicy are wsfs.Config's: folders of Wasm tools the
	// workspace loads, and the most any of them may have. The Runner offers
	// the Wasm tools next to the built-in ones (see Tools).
	WasmTools  []string
	WasmPolicy *wsfs.WasmPolicy
	// ModelGateway is wsfs.Config.ModelGateway: the model gateway the
	// library provides to the Wasm tools that ask a model, from
	// configuration (docs/model-gateway.md); nil: none.
	ModelGateway *wsfs.ModelGatewayConfig
	// Tools names the workspace tools the Runner offers
	// (agents.defaults.tools): empty means DefaultTools, MiniClaw's five;
	// []string{AllTools} every tool of wsfs.ToolNames; otherwise exactly
	// these, each a name of wsfs.ToolNames, offered in that order. NewRunner
	// refuses an unknown name (naming it and the known ones), a name given
	// twice, and AllTools next to other names. While the workspace's policy
	// disables writes (writes_enabled: false), the tools that change files
	// are left out, since they could only fail with writes_disabled; a list
	// that leaves nothing is refused. The developer tools (wsfs.ExecToolNames:
	// run_tests, git_status, safe_shell, ...) are offered only when the
	// workspace's policy turns them on (wsfs.Policy.ExecEnabled) and the
	// list names them or is AllTools; naming one the policy keeps off is
	// refused. The workspace's Wasm tools (WasmTools) are offered with the
	// default list and with AllTools, and a list may name them (then only
	// those named are offered). Runner.Tools reports the result.
	Tools []string
	// ToolTimeout optionally bounds each tool call more tightly than
	// wsfs.Limits.OperationTimeout.
	ToolTimeout time.Duration

	// Model is the language model (required).
	Model fantasy.LanguageModel
	// SystemPrompt is the system prompt; "" means
	// DefaultSystemPromptFor(Runner.Tools()), which names exactly the tools
	// offered (DefaultSystemPrompt with DefaultTools).
	SystemPrompt string
	// RepairToolCalls lets fantasy try to repair malformed tool calls
	// (broken JSON arguments) before rejecting them. Off by default: a
	// malformed call then comes back to the model as an error tool result
	// and the model fixes it itself, which is predictable and never runs a
	// guessed-at call.
	RepairToolCalls bool
	// ParallelReadOnlyTools lets fantasy run the read-only workspace tools
	// (readOnlyHint: read_file, list_dir, ...) of one step concurrently;
	// see fantasytools.WithParallelReadOnlyTools. Writing tools stay sequential.
	ParallelReadOnlyTools bool
	// Metrics puts each workspace tool call's figures (wsfs.Metrics: lines
	// and bytes read, matches, duration ...) into its tool result's
	// ClientMetadata and the call's log record (fantasytools.WithMetrics).
	Metrics bool
	// ExtraTools are offered to the model next to the workspace tools.
	ExtraTools []fantasy.AgentTool
	// AgentOptions are passed to fantasy.NewAgent after the Runner's own
	// options (for temperature, max output tokens, provider options ...).
	// How they combine with the Runner's:
	//
	//   - options that add (WithTools, WithProviderDefinedTools,
	//     WithStopConditions) add to the Runner's: your tools are offered
	//     with the workspace tools, and a Run stops when your condition or
	//     the Runner's MaxToolIterations is met, whichever comes first (if
	//     yours ends the Run early, there is no summary step);
	//   - options that set a value (WithSystemPrompt, WithToolChoice,
	//     WithTemperature, ...) replace the Runner's value or fantasy's
	//     default, for every tool step;
	//   - WithPrepareStep runs before every tool step, as in fantasy;
	//   - the final summary step after MaxToolIterations is the Runner's
	//     own: no tools, tool choice "none", your PrepareStep and stop
	//     conditions are not consulted for it;
	//   - WithRepairToolCall is refused by NewRunner: fantasy's streaming
	//     loop, which the Runner uses, ignores an agent-level repair
	//     function, so it would silently do nothing. Use RepairToolCalls.
	//
	// A nil option is refused too.
	AgentOptions []fantasy.AgentOption
	// History stores the session histories; nil means a new, unbounded
	// MemoryHistory. Give a HistoryStore of your own to persist sessions
	// or bound them (&MemoryHistory{MaxTurns: 50} bounds in memory).
	History HistoryStore

	// Logger receives one record per tool call and one per Run; never file
	// contents. nil discards (with NewRunnerWithWorkspace, tool calls are
	// then logged to the workspace's wsfs.Config.Logger).
	Logger *slog.Logger
	// OnStep, if set, is called after every finished step of a Run (for
	// transcripts and progress display). It runs on the Run's goroutine.
	OnStep func(sessionID string, step fantasy.StepResult)
}

// check validates a RunnerConfig before anything is opened.
func (cfg RunnerConfig) check() error {
	if cfg.Model == nil {
		return errors.New("wsfs: RunnerConfig.Model is required")
	}
	// The names are checked against the workspace's tools when it is open
	// (a profile names its own).
	if err := checkToolsIn("wsfs: RunnerConfig.Tools", cfg.Tools, nil); err != nil {
		return err
	}
	for i, o := range cfg.AgentOptions {
		if o == nil {
			return fmt.Errorf("wsfs: RunnerConfig.AgentOptions[%d] is nil", i)
		}
		if agentOptionIs(o, "WithRepairToolCall") {
			return fmt.Errorf("wsfs: RunnerConfig.AgentOptions[%d] is fantasy.WithRepairToolCall, which would do nothing: "+
				"fantasy's streaming agent loop (which the Runner uses) ignores agent-level repair functions; "+
				"set RunnerConfig.RepairToolCalls to turn fantasy's repair on", i)
		}
	}
	return nil
}

// agentOptionIs reports whether o was made by fantasy.<constructor>.
//
// A fantasy.AgentOption is a func of an unexported type, so every value a
// host holds was made by one of fantasy's With... functions: a closure
// whose symbol name carries that function's name, both as
// "charm.land/fantasy.WithX.func1" and, when the call was inlined, as
// "<caller>.WithX.funcN". TestRunnerRefusesRepairOption checks both.
func agentOptionIs(o any, constructor string) bool {
	fn := runtime.FuncForPC(reflect.ValueOf(o).Pointer())
	return fn != nil && strings.Contains(fn.Name(), "."+constructor+".func")
}
