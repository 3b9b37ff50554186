package agent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/scripted"
)

// loopModel calls list_dir on every call that offers tools, and answers
// "summary" when none are offered.
func loopModel() *scripted.Model {
	return scripted.New(scripted.Turn{ToolCalls: []scripted.ToolCall{scripted.Call(wsfs.ToolListDir, `{}`)}, Repeat: true})
}

// TestAgentOptionStopConditionsAdd: a host's stop condition ends the run
// (before the Runner's limit), instead of being replaced by the Runner's.
func TestAgentOptionStopConditionsAdd(t *testing.T) {
	model := loopModel()
	r := newTestRunner(t, model, func(c *RunnerConfig) {
		c.MaxToolIterations = 5
		c.AgentOptions = []fantasy.AgentOption{fantasy.WithStopConditions(fantasy.StepCountIs(2))}
	})
	reply, err := r.Run(bg, "s", "go")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Steps != 2 || reply.ToolCalls != 2 || reply.LimitReached || len(model.Calls()) != 2 {
		t.Fatalf("reply %+v after %d model calls: the host's StepCountIs(2) was not honoured", reply, len(model.Calls()))
	}

	// A host condition that never fires leaves the Runner's limit in charge.
	model = loopModel()
	r = newTestRunner(t, model, func(c *RunnerConfig) {
		c.MaxToolIterations = 3
		c.AgentOptions = []fantasy.AgentOption{fantasy.WithStopConditions(fantasy.HasToolCall("never_called"))}
	})
	reply, err = r.Run(bg, "s", "go")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Steps != 4 || reply.ToolCalls != 3 || !reply.LimitReached {
		t.Fatalf("reply %+v: the Runner's limit was lost", reply)
	}
}

// TestAgentOptionPrepareStepRuns: a host's PrepareStep runs before every
// tool step (and its result applies), but not before the Runner's final
// tool-less step, which keeps no tools and tool choice none.
func TestAgentOptionPrepareStepRuns(t *testing.T) {
	var mu sync.Mutex
	var steps []int
	prepare := func(ctx context.Context, o fantasy.PrepareStepFunctionOptions) (context.Context, fantasy.PrepareStepResult, error) {
		mu.Lock()
		steps = append(steps, o.StepNumber)
		mu.Unlock()
		// Offer only list_dir, and try to force tools on every step.
		required := fantasy.ToolChoiceRequired
		return ctx, fantasy.PrepareStepResult{ActiveTools: []string{wsfs.ToolListDir}, ToolChoice: &required}, nil
	}
	model := loopModel()
	r := newTestRunner(t, model, func(c *RunnerConfig) {
		c.MaxToolIterations = 2
		c.AgentOptions = []fantasy.AgentOption{fantasy.WithPrepareStep(prepare)}
	})
	reply, err := r.Run(bg, "s", "go")
	if err != nil {
		t.Fatal(err)
	}
	if !reply.LimitReached || reply.Steps != 3 {
		t.Fatalf("reply %+v", reply)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(steps) != 2 || steps[0] != 0 || steps[1] != 1 {
		t.Fatalf("the host's PrepareStep ran for steps %v, want [0 1]", steps)
	}
	calls := model.Calls()
	for i, call := range calls[:2] {
		if len(call.Tools) != 1 || call.Tools[0].GetName() != wsfs.ToolListDir || choiceOf(call) != string(fantasy.ToolChoiceRequired) {
			t.Fatalf("tool step %d: %d tools, choice %s: the PrepareStep result was not applied", i, len(call.Tools), choiceOf(call))
		}
	}
	final := calls[2]
	if len(final.Tools) != 0 || choiceOf(final) != string(fantasy.ToolChoiceNone) {
		t.Fatalf("final step: %d tools, tool choice %s", len(final.Tools), choiceOf(final))
	}
}

// TestAgentOptionToolChoiceAndTools: values a host sets apply to the tool
// steps; tools a host adds are offered beside the workspace tools; the
// final step still has none.
func TestAgentOptionToolChoiceAndTools(t *testing.T) {
	extra := fantasy.NewAgentTool("clock", "tells the time", func(context.Context, struct{}, fantasy.ToolCall) (fantasy.ToolResponse, error) {
		return fantasy.NewTextResponse("noon"), nil
	})
	model := loopModel()
	r := newTestRunner(t, model, func(c *RunnerConfig) {
		c.MaxToolIterations = 1
		c.AgentOptions = []fantasy.AgentOption{fantasy.WithToolChoice(fantasy.ToolChoiceRequired), fantasy.WithTools(extra)}
	})
	if _, err := r.Run(bg, "s", "go"); err != nil {
		t.Fatal(err)
	}
	calls := model.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls", len(calls))
	}
	if n := len(calls[0].Tools); n != len(r.Tools())+1 || choiceOf(calls[0]) != string(fantasy.ToolChoiceRequired) {
		t.Fatalf("tool step: %d tools, choice %s", n, choiceOf(calls[0]))
	}
	if len(calls[1].Tools) != 0 || choiceOf(calls[1]) != string(fantasy.ToolChoiceNone) {
		t.Fatalf("final step: %d tools, choice %s", len(calls[1].Tools), choiceOf(calls[1]))
	}
}

// repairOption makes the option through a function value, so fantasy's
// constructor is not inlined here: its closure keeps its own name.
var repairOption = fantasy.WithRepairToolCall

func TestRunnerRefusesRepairOption(t *testing.T) {
	repair := func(context.Context, fantasy.ToolCallRepairOptions) (*fantasy.ToolCallContent, error) {
		return nil, nil
	}
	for name, opt := range map[string]fantasy.AgentOption{
		"inlined":     fantasy.WithRepairToolCall(repair),
		"not inlined": repairOption(repair),
	} {
		cfg := RunnerConfig{Workspace: t.TempDir(), Model: scripted.New(),
			AgentOptions: []fantasy.AgentOption{fantasy.WithTemperature(0), opt}}
		_, err := NewRunner(cfg)
		if err == nil || !strings.Contains(err.Error(), "AgentOptions[1] is fantasy.WithRepairToolCall") {
			t.Fatalf("%s: NewRunner error %v", name, err)
		}
		if _, err := NewRunnerWithWorkspace(openTest(t, wsfs.Config{}), cfg); err == nil {
			t.Fatalf("%s: NewRunnerWithWorkspace accepted WithRepairToolCall", name)
		}
	}
	_, err := NewRunner(RunnerConfig{Workspace: t.TempDir(), Model: scripted.New(), AgentOptions: []fantasy.AgentOption{nil}})
	if err == nil || !strings.Contains(err.Error(), "AgentOptions[0] is nil") {
		t.Fatalf("nil option: %v", err)
	}
	// Every other option is accepted.
	ok := []fantasy.AgentOption{
		fantasy.WithSystemPrompt("x"), fantasy.WithMaxOutputTokens(10), fantasy.WithTemperature(0.1),
		fantasy.WithTopP(1), fantasy.WithTopK(1), fantasy.WithPresencePenalty(0), fantasy.WithFrequencyPenalty(0),
		fantasy.WithTools(), fantasy.WithProviderDefinedTools(), fantasy.WithToolChoice(fantasy.ToolChoiceAuto),
		fantasy.WithStopConditions(), fantasy.WithPrepareStep(nil), fantasy.WithMaxRetries(1), fantasy.WithOnRetry(nil),
		fantasy.WithHeaders(nil), fantasy.WithUserAgent("x"), fantasy.WithProviderOptions(nil),
	}
	r, err := NewRunner(RunnerConfig{Workspace: t.TempDir(), Model: scripted.New(), AgentOptions: ok})
	if err != nil {
		t.Fatalf("ordinary options refused: %v", err)
	}
	r.Close()
}
