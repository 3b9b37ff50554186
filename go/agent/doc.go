// Package agent is a complete agent loop for chat applications, built on
// charm.land/fantasy and the wsfs tools (package fantasytools): MiniClaw's
// fantasy-agent provider in one type.
//
//	r, err := agent.NewRunner(agent.RunnerConfig{
//		Workspace:         "~/.miniclaw/workspace",
//		MaxToolIterations: 20,
//		Model:             model, // any fantasy.LanguageModel
//	})
//	reply, err := r.Run(ctx, sessionID, userMessage)
//
// A Runner offers MiniClaw's five tools (DefaultTools) unless
// RunnerConfig.Tools names others, and none that changes files while the
// workspace's policy disables writes. It keeps per-session history in a
// HistoryStore (in memory by default; a host may persist and bound it),
// ends a run that reaches its tool-iteration limit with a tool-less summary
// step, can run the read-only tools of a step in parallel, and logs one
// record per tool call.
// LoadAgentDefaults reads MiniClaw's agents.defaults from its config file
// (see config/config.example.json in the repository).
package agent
