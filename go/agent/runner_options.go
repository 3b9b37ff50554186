package agent

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
)

// check validates a RunnerConfig before anything is opened.
func (cfg RunnerConfig) check() error {
	if cfg.Model == nil {
		return errors.New("wsfs: RunnerConfig.Model is required")
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
