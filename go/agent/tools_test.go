package agent

import (
	"slices"
	"strings"
	"testing"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/scripted"
)

// offered returns the names of the tools a model call offered.
func offered(call fantasy.Call) []string {
	var names []string
	for _, tl := range call.Tools {
		names = append(names, tl.GetName())
	}
	return names
}

// systemPrompt returns the text of a model call's system message.
func systemPrompt(t *testing.T, call fantasy.Call) string {
	t.Helper()
	if len(call.Prompt) == 0 || call.Prompt[0].Role != fantasy.MessageRoleSystem {
		t.Fatal("the call has no system message")
	}
	var b strings.Builder
	for _, p := range call.Prompt[0].Content {
		if tp, ok := p.(fantasy.TextPart); ok {
			b.WriteString(tp.Text)
		}
	}
	return b.String()
}

// namedTools returns the tool names a text mentions, in wsfs.ToolNames order.
func namedTools(text string) []string {
	words := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ',' || r == '.' || r == ':' || r == '(' || r == ')' })
	var names []string
	for _, name := range wsfs.ToolNames {
		if slices.Contains(words, name) {
			names = append(names, name)
		}
	}
	return names
}

// fileToolNames is wsfs.ToolNames without the developer tools.
func fileToolNames() []string {
	return slices.DeleteFunc(slices.Clone(wsfs.ToolNames), func(n string) bool { return slices.Contains(wsfs.ExecToolNames, n) })
}

// TestRunnerDevToolsAreOptIn: the developer tools are offered only when the
// workspace's policy turns them on and RunnerConfig.Tools names them (or is
// AllTools); naming one the policy keeps off is refused.
func TestRunnerDevToolsAreOptIn(t *testing.T) {
	exec := wsfs.Policy{ExecEnabled: true}
	shell := wsfs.Policy{ExecEnabled: true, ShellEnabled: true}
	noShell := slices.DeleteFunc(slices.Clone(wsfs.ToolNames), func(n string) bool { return n == wsfs.ToolShell })
	for _, tc := range []struct {
		policy      wsfs.Policy
		tools, want []string
	}{
		{exec, nil, DefaultTools},
		{exec, []string{AllTools}, noShell},
		{shell, []string{AllTools}, wsfs.ToolNames},
		{exec, []string{"run_tests", "read_file"}, []string{"read_file", "run_tests"}},
		{wsfs.Policy{ExecEnabled: true, WritesEnabled: wsfs.Bool(false)}, []string{"run_tests", "git_status", "git_commit"}, []string{"git_status", "run_tests"}},
	} {
		model := scripted.New(scripted.Say("hi"))
		r := newTestRunner(t, model, func(c *RunnerConfig) { c.Tools = tc.tools; c.Policy = tc.policy })
		if _, err := r.Run(bg, "s", "hello"); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Tools(), tc.want) || !slices.Equal(offered(model.Calls()[0]), tc.want) {
			t.Errorf("policy %+v, Tools %v: Tools() %v, offered %v; want %v", tc.policy, tc.tools, r.Tools(), offered(model.Calls()[0]), tc.want)
		}
	}
	for _, tc := range []struct {
		policy wsfs.Policy
		tools  []string
		err    string
	}{
		{wsfs.Policy{}, []string{"run_tests"}, "run_tests runs programs"},
		{exec, []string{"shell"}, "exec_enabled and shell_enabled"},
	} {
		_, err := NewRunner(RunnerConfig{Workspace: t.TempDir(), Model: scripted.New(), Policy: tc.policy, Tools: tc.tools})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Tools %v: error %v, want %q", tc.tools, err, tc.err)
		}
	}
	// The default prompt prefers the structured tools and safe_shell over shell.
	prompt := DefaultSystemPromptFor(wsfs.ToolNames)
	for _, want := range []string{"run_tests, run_lint and typecheck", "safe_shell", "use shell only when neither can do the job"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
}

func readOnlyNames(t *testing.T, names []string) []string {
	t.Helper()
	specs, err := wsfs.ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range specs {
		if s.ReadOnly() && slices.Contains(names, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// TestRunnerOffersMiniClawsFiveByDefault: MiniClaw's plan names exactly
// five tools; a Runner offers those unless RunnerConfig.Tools asks for
// more, and the model sees exactly them.
func TestRunnerOffersMiniClawsFiveByDefault(t *testing.T) {
	five := []string{"read_file", "write_file", "append_file", "list_dir", "edit_file"}
	if !slices.Equal(DefaultTools, five) {
		t.Fatalf("DefaultTools = %v, want %v", DefaultTools, five)
	}
	model := scripted.New(scripted.Say("hi"))
	r := newTestRunner(t, model, nil)
	if !slices.Equal(r.Tools(), five) {
		t.Fatalf("Tools() = %v, want %v", r.Tools(), five)
	}
	if _, err := r.Run(bg, "s", "hello"); err != nil {
		t.Fatal(err)
	}
	if got := offered(model.Calls()[0]); !slices.Equal(got, five) {
		t.Fatalf("the model was offered %v, want %v", got, five)
	}
}

// TestRunnerToolsOption: RunnerConfig.Tools chooses the workspace tools,
// in wsfs.ToolNames order; AllTools offers every one; anything else is
// refused before the workspace is opened, naming the problem and the
// known names.
func TestRunnerToolsOption(t *testing.T) {
	for _, tc := range []struct {
		tools, want []string
	}{
		{nil, DefaultTools},
		{[]string{}, DefaultTools},
		{[]string{AllTools}, fileToolNames()},
		{[]string{"search_text", "read_file"}, []string{"read_file", "search_text"}},
		{[]string{"delete_file"}, []string{"delete_file"}},
	} {
		model := scripted.New(scripted.Say("hi"))
		r := newTestRunner(t, model, func(c *RunnerConfig) { c.Tools = tc.tools })
		if _, err := r.Run(bg, "s", "hello"); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Tools(), tc.want) || !slices.Equal(offered(model.Calls()[0]), tc.want) {
			t.Errorf("Tools %v: Tools() %v, offered %v; want %v", tc.tools, r.Tools(), offered(model.Calls()[0]), tc.want)
		}
	}
	known := strings.Join(wsfs.ToolNames, ", ")
	for _, tc := range []struct {
		tools []string
		err   string
	}{
		{[]string{"read_file", "delete_files"}, `RunnerConfig.Tools: unknown tool "delete_files"; the tools are ` + known + `, or "all" alone for every one`},
		{[]string{"Read_File"}, `unknown tool "Read_File"`},
		{[]string{"read_file", "read_file"}, `RunnerConfig.Tools names "read_file" twice`},
		{[]string{"all", "read_file"}, `RunnerConfig.Tools: "all" must be the only entry`},
	} {
		dir := t.TempDir() + "/ws"
		_, err := NewRunner(RunnerConfig{Workspace: dir, Model: scripted.New(), Tools: tc.tools})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Tools %v: error %v, want %q", tc.tools, err, tc.err)
		}
	}
}

// TestRunnerWithoutWritesOffersReadOnlyTools: a workspace whose policy
// disables writes is given no tool that can only fail with
// writes_disabled, whichever way the workspace is opened.
func TestRunnerWithoutWritesOffersReadOnlyTools(t *testing.T) {
	off := wsfs.Policy{WritesEnabled: wsfs.Bool(false)}
	for _, tc := range []struct {
		tools, want []string
	}{
		{nil, []string{"read_file", "list_dir"}},
		{[]string{AllTools}, readOnlyNames(t, fileToolNames())},
		{[]string{"write_file", "search_text"}, []string{"search_text"}},
	} {
		model := scripted.New(scripted.Say("hi"))
		r := newTestRunner(t, model, func(c *RunnerConfig) { c.Tools = tc.tools; c.Policy = off })
		if _, err := r.Run(bg, "s", "hello"); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Tools(), tc.want) || !slices.Equal(offered(model.Calls()[0]), tc.want) {
			t.Errorf("Tools %v, writes disabled: Tools() %v, offered %v; want %v", tc.tools, r.Tools(), offered(model.Calls()[0]), tc.want)
		}
	}
	ws := openTest(t, wsfs.Config{Policy: off})
	r, err := NewRunnerWithWorkspace(ws, RunnerConfig{Model: scripted.New()})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"read_file", "list_dir"}; !slices.Equal(r.Tools(), want) {
		t.Fatalf("NewRunnerWithWorkspace on a read-only workspace: Tools() %v, want %v", r.Tools(), want)
	}
	// Nothing left to offer is a configuration error, not an agent without tools.
	_, err = NewRunner(RunnerConfig{Workspace: t.TempDir(), Model: scripted.New(), Policy: off, Tools: []string{"write_file", "delete_file"}})
	if err == nil || !strings.Contains(err.Error(), "writes_enabled") || !strings.Contains(err.Error(), "write_file, delete_file") {
		t.Fatalf("only changing tools on a read-only workspace: %v", err)
	}
}

// TestSystemPromptNamesTheOfferedTools: the default system prompt the
// model receives names exactly the tools it is offered, for every way of
// choosing them; DefaultSystemPrompt is the prompt of DefaultTools.
func TestSystemPromptNamesTheOfferedTools(t *testing.T) {
	if got := DefaultSystemPromptFor(DefaultTools); got != DefaultSystemPrompt {
		t.Fatalf("DefaultSystemPromptFor(DefaultTools) =\n%s\nDefaultSystemPrompt =\n%s", got, DefaultSystemPrompt)
	}
	if got := namedTools(DefaultSystemPrompt); !slices.Equal(got, DefaultTools) {
		t.Fatalf("DefaultSystemPrompt names %v, want %v", got, DefaultTools)
	}
	off := wsfs.Policy{WritesEnabled: wsfs.Bool(false)}
	for _, mod := range []func(*RunnerConfig){
		nil,
		func(c *RunnerConfig) { c.Tools = []string{AllTools} },
		func(c *RunnerConfig) { c.Policy = off },
		func(c *RunnerConfig) { c.Tools = []string{AllTools}; c.Policy = off },
		func(c *RunnerConfig) { c.Tools = []string{"read_file"} },
		func(c *RunnerConfig) { c.Tools = []string{"write_file", "apply_patch"} },
		func(c *RunnerConfig) { c.Tools = []string{"find_files", "search_text", "edit_file"} },
		func(c *RunnerConfig) {
			c.Tools = []string{AllTools}
			c.Policy = wsfs.Policy{ExecEnabled: true, ShellEnabled: true}
		},
		func(c *RunnerConfig) {
			c.Tools = []string{"safe_shell", "read_file"}
			c.Policy = wsfs.Policy{ExecEnabled: true}
		},
		func(c *RunnerConfig) {
			c.Tools = []string{"shell", "git_diff"}
			c.Policy = wsfs.Policy{ExecEnabled: true, ShellEnabled: true}
		},
	} {
		model := scripted.New(scripted.Say("hi"))
		r := newTestRunner(t, model, mod)
		if _, err := r.Run(bg, "s", "hello"); err != nil {
			t.Fatal(err)
		}
		call := model.Calls()[0]
		prompt := systemPrompt(t, call)
		if got := namedTools(prompt); !slices.Equal(got, offered(call)) {
			t.Errorf("offered %v, but the system prompt names %v:\n%s", offered(call), got, prompt)
		}
		if prompt != DefaultSystemPromptFor(r.Tools()) {
			t.Errorf("Tools() %v: the prompt is not DefaultSystemPromptFor(Tools()):\n%s", r.Tools(), prompt)
		}
	}
	// A host's own prompt is sent as it is.
	model := scripted.New(scripted.Say("hi"))
	r := newTestRunner(t, model, func(c *RunnerConfig) { c.SystemPrompt = "Be brief." })
	if _, err := r.Run(bg, "s", "hello"); err != nil {
		t.Fatal(err)
	}
	if got := systemPrompt(t, model.Calls()[0]); got != "Be brief." {
		t.Fatalf("system prompt %q", got)
	}
}
