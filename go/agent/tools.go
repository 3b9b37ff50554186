package agent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	wsfs "github.com/wsfs/wsfs/go"
)

// DefaultTools are the workspace tools a Runner offers when
// RunnerConfig.Tools is empty: MiniClaw's five (its plan for the
// fantasy-agent provider names exactly these), in wsfs.ToolNames order.
// The others (get_path_info, find_files, search_text, apply_patch,
// create_directory, move_file, delete_file) are offered only when asked for.
var DefaultTools = []string{wsfs.ToolReadFile, wsfs.ToolWriteFile, wsfs.ToolAppendFile, wsfs.ToolListDir, wsfs.ToolEditFile}

// AllTools, as the only entry of RunnerConfig.Tools (or of MiniClaw's
// agents.defaults.tools), offers every workspace tool of wsfs.ToolNames,
// including tools the library gains later.
const AllTools = "all"

// checkToolsIn validates a tool list (RunnerConfig.Tools, or
// agents.defaults.tools in a config file; where names it in errors) against
// the tools known (wsfs.ToolNames, a workspace's Wasm tools, a profile's
// names): every entry is one of them (exactly, in its case) and appears
// once, or the list is AllTools alone. Empty is fine (the default). With
// known nil, only the list's shape is checked.
func checkToolsIn(where string, names, known []string) error {
	for i, name := range names {
		if name == AllTools {
			if len(names) > 1 {
				return fmt.Errorf("%s: %q must be the only entry (it offers every tool)", where, AllTools)
			}
			continue
		}
		if known != nil && !slices.Contains(known, name) {
			return fmt.Errorf("%s: unknown tool %s; the tools are %s, or %q alone for every one",
				where, strconv.Quote(name), strings.Join(known, ", "), AllTools)
		}
		if slices.Contains(names[:i], name) {
			return fmt.Errorf("%s names %q twice", where, name)
		}
	}
	return nil
}

// selectTools returns the tools a checked list asks for, in wsfs.ToolNames
// order, then the workspace's Wasm tools (every one with the default list or
// AllTools, else those named). The developer tools are opt-in twice: the workspace's policy must
// turn them on (exec_enabled, and shell_enabled for shell), and the list
// must name them or be AllTools. AllTools leaves out those the policy
// keeps off; naming one the policy keeps off is an error. Without writes,
// only the tools the workspace still runs stay (Workspace.ToolEnabled: the
// read-only ones and the program tools, on a read-only view; every other
// tool could only fail with writes_disabled).
func selectTools(names []string, ws *wsfs.Workspace) ([]string, error) {
	if ws.Profile() != wsfs.NativeProfile {
		return selectProfileTools(names, ws)
	}
	wasm := ws.WasmTools()
	if err := checkToolsIn("wsfs: RunnerConfig.Tools", names, append(slices.Clone(wsfs.ToolNames), wasm...)); err != nil {
		return nil, err
	}
	var chosen []string
	all := slices.Equal(names, []string{AllTools})
	for _, name := range wsfs.ToolNames {
		switch {
		case len(names) == 0 && slices.Contains(DefaultTools, name),
			all && ws.ExecSwitchOn(name),
			slices.Contains(names, name):
			if !ws.ExecSwitchOn(name) {
				need := "exec_enabled"
				if name == wsfs.ToolShell {
					need = "exec_enabled and shell_enabled"
				}
				return nil, fmt.Errorf("wsfs: %s runs programs, and the workspace's policy does not turn that on "+
					"(%s): enable it in the policy, or leave %s out of the tools", name, need, name)
			}
			chosen = append(chosen, name)
		}
	}
	// The host loaded its Wasm tools to offer them: the default list and
	// AllTools take every one; a list takes those it names.
	for _, name := range wasm {
		if len(names) == 0 || all || slices.Contains(names, name) {
			chosen = append(chosen, name)
		}
	}
	writes := ws.Policy().WritesEnabled
	if writes == nil || *writes {
		return chosen, nil
	}
	kept := slices.DeleteFunc(slices.Clone(chosen), func(n string) bool { return !ws.ToolEnabled(n) })
	if len(kept) == 0 {
		return nil, fmt.Errorf("wsfs: the workspace's policy disables writes (writes_enabled: false), and every tool "+
			"RunnerConfig.Tools names changes files (%s): no tool is left to offer; name a reading tool too, or enable writes",
			strings.Join(chosen, ", "))
	}
	return kept, nil
}

// selectProfileTools is selectTools for a workspace opened with a profile:
// its tools are the profile's, as the workspace offers them (ws.ToolSpecs():
// the library already leaves out what the policy keeps off). An empty list
// or AllTools is every one of them, in the workspace's order; otherwise the
// names given, each one the workspace offers.
func selectProfileTools(names []string, ws *wsfs.Workspace) ([]string, error) {
	specs, err := ws.ToolSpecs()
	if err != nil {
		return nil, err
	}
	var offered []string
	for _, s := range specs {
		offered = append(offered, s.Name)
	}
	where := "wsfs: RunnerConfig.Tools (the " + strconv.Quote(ws.Profile()) + " profile)"
	if err := checkToolsIn(where, names, offered); err != nil {
		return nil, err
	}
	if len(names) == 0 || slices.Equal(names, []string{AllTools}) {
		if len(offered) == 0 {
			return nil, fmt.Errorf("%s: the workspace offers no tool", where)
		}
		return offered, nil
	}
	return slices.Clone(names), nil
}

// readOnlyTools returns the names whose library spec says readOnlyHint.
func readOnlyTools() ([]string, error) {
	specs, err := wsfs.ToolSpecs()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range specs {
		if s.ReadOnly() {
			names = append(names, s.Name)
		}
	}
	return names, nil
}

// DefaultSystemPromptFor is the system prompt a Runner uses when
// RunnerConfig.SystemPrompt is empty: it names exactly the given tools (the
// Runner's, see Runner.Tools) and advises only what they can do.
// DefaultSystemPrompt is DefaultSystemPromptFor(DefaultTools).
func DefaultSystemPromptFor(tools []string) string {
	has := func(name string) bool { return slices.Contains(tools, name) }
	among := func(names ...string) []string {
		return slices.DeleteFunc(names, func(n string) bool { return !has(n) })
	}
	readOnly, _ := readOnlyTools() // on error, every tool counts as changing
	changes := slices.ContainsFunc(tools, func(n string) bool { return !slices.Contains(readOnly, n) })

	var b strings.Builder
	if len(tools) == 1 {
		b.WriteString("You are a helpful assistant with access to a workspace directory through the tool " + tools[0] + ".")
	} else {
		b.WriteString("You are a helpful assistant with access to a workspace directory through the tools " + andList(tools) + ".")
	}
	b.WriteString(" All paths are relative to the workspace root; you cannot reach anything outside it.")
	finders := among(wsfs.ToolListDir, wsfs.ToolFindFiles, wsfs.ToolSearchText)
	switch read := has(wsfs.ToolReadFile); {
	case len(finders) > 0 && read && changes:
		b.WriteString(" Find files with " + andList(finders) + ", and read a file (or a range of its lines) before you change it.")
	case len(finders) > 0 && read:
		b.WriteString(" Find files with " + andList(finders) + ", and read a file (or a range of its lines) with read_file.")
	case len(finders) > 0:
		b.WriteString(" Find files with " + andList(finders) + ".")
	case read && changes:
		b.WriteString(" Read a file (or a range of its lines) before you change it.")
	}
	if editors := among(wsfs.ToolEditFile, wsfs.ToolApplyPatch); len(editors) > 0 && has(wsfs.ToolWriteFile) {
		b.WriteString(" Use " + orList(editors) + " for small changes instead of rewriting whole files.")
	}
	b.WriteString(devToolsAdvice(has, among))
	switch {
	case !changes && len(tools) == 1:
		b.WriteString(" It cannot change a file.")
	case !changes:
		b.WriteString(" None of these tools can change a file.")
	}
	b.WriteString(" When a tool returns an error, read the error code and message, correct the call, or explain to the user why the task cannot be done.")
	return b.String()
}

// devToolsAdvice is the prompt's part about the developer tools offered:
// the structured tools first, then safe_shell, and shell last.
func devToolsAdvice(has func(string) bool, among func(...string) []string) string {
	var b strings.Builder
	if has(wsfs.ToolWorkspaceInfo) {
		b.WriteString(" workspace_info says which runtimes and tools are installed.")
	}
	if checks := among(wsfs.ToolRunTests, wsfs.ToolRunLint, wsfs.ToolTypecheck); len(checks) > 0 {
		b.WriteString(" Check your changes with " + andList(checks) + ": they return each failure or issue with its file and line.")
	}
	if git := among(wsfs.ToolGitStatus, wsfs.ToolGitDiff); len(git) > 0 {
		b.WriteString(" Review the repository's changes with " + andList(git) + ".")
	}
	if has(wsfs.ToolGitCommit) {
		b.WriteString(" Commit with git_commit (confirmed: true) only when the task asks for a commit.")
	}
	structured := len(among(wsfs.ToolWorkspaceInfo, wsfs.ToolGitStatus, wsfs.ToolGitDiff, wsfs.ToolGitCommit,
		wsfs.ToolRunTests, wsfs.ToolRunLint, wsfs.ToolTypecheck)) > 0
	switch safe, raw := has(wsfs.ToolSafeShell), has(wsfs.ToolShell); {
	case safe && raw && structured:
		b.WriteString(" Prefer those structured tools, then safe_shell for other simple commands; use shell only when neither can do the job.")
	case safe && raw:
		b.WriteString(" Prefer safe_shell for simple commands; use shell only when it cannot do the job.")
	case safe:
		b.WriteString(" Use safe_shell for other simple commands; a blocked command comes back with the tool to use instead.")
	case raw && structured:
		b.WriteString(" Prefer those structured tools over shell.")
	}
	return b.String()
}

// andList joins names as "a, b and c".
func andList(names []string) string { return joinLast(names, " and ") }

// orList joins names as "a, b or c".
func orList(names []string) string { return joinLast(names, " or ") }

func joinLast(names []string, last string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}
