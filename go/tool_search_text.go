package wsfs

import (
	"cmp"
	"context"
)

// ToolSearchText searches file contents.
const ToolSearchText = "search_text"

// SearchTextInput is the argument of search_text. Zero values mean the
// library's defaults: Path ".", a literal query, MaxMatches 50, no context,
// CaseSensitive and RespectGitignore true.
type SearchTextInput struct {
	Query            string `json:"query" description:"Text to find within one line: a literal string, or a regular expression (Rust regex syntax) with use_regex."`
	Path             string `json:"path,omitempty" description:"Directory (searched recursively) or file to search; defaults to '.', the workspace root."`
	Glob             string `json:"glob,omitempty" description:"Search only files matching this glob, e.g. '*.go' or 'src/**/*.rs' (a pattern without '/' matches file names at any depth)."`
	UseRegex         bool   `json:"use_regex,omitempty" description:"Treat query as a regular expression. Default false (a literal string)."`
	CaseSensitive    *bool  `json:"case_sensitive,omitempty" description:"Match letter case exactly. Default true."`
	MaxMatches       int    `json:"max_matches,omitempty,omitzero" description:"Most matching lines to return (default 50, at most 1000)."`
	ContextLines     int    `json:"context_lines,omitempty,omitzero" description:"Lines of context to show before and after each match (default 0, at most 10)."`
	IncludeHidden    bool   `json:"include_hidden,omitempty" description:"Search files and directories whose names start with '.'. Default false."`
	RespectGitignore *bool  `json:"respect_gitignore,omitempty" description:"Skip what .gitignore files ignore. Default true."`
}

// SearchMatch is one matching line.
type SearchMatch struct {
	// File is the workspace-relative path.
	File string `json:"file"`
	// Line is 1-based; Column is the 1-based column of the line's first
	// match, counted in characters (Unicode code points), not bytes.
	Line   int `json:"line"`
	Column int `json:"column"`
	// Snippet is the line without its line ending, cut to at most 200
	// characters around the match.
	Snippet string `json:"snippet"`
	// MatchStart and MatchEnd (exclusive) locate the first match in
	// Snippet, in characters; Matched returns it.
	MatchStart int `json:"match_start"`
	MatchEnd   int `json:"match_end"`
	// Before and After are the context lines (each cut to 200 characters),
	// present with SearchTextInput.ContextLines.
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
}

// Matched returns the matched text: Snippet's characters MatchStart to
// MatchEnd.
func (m SearchMatch) Matched() string {
	start, end, n := len(m.Snippet), len(m.Snippet), 0
	for i := range m.Snippet {
		if n == m.MatchStart {
			start = i
		}
		if n == m.MatchEnd {
			end = i
			break
		}
		n++
	}
	if start > end {
		return ""
	}
	return m.Snippet[start:end]
}

// SearchTextResult is the result of SearchText.
type SearchTextResult struct {
	// Matches holds one entry per matching line, in path order, then line
	// order.
	Matches []SearchMatch `json:"matches"`
	// FilesSearched counts the text files searched.
	FilesSearched int `json:"files_searched"`
	// BinaryFilesSkipped counts files found to be binary (a NUL byte) and
	// not searched further.
	BinaryFilesSkipped int `json:"binary_files_skipped"`
	// FilesSkipped counts files and directories that could not be searched
	// (unreadable, replaced during the search, a line over 2 MiB).
	FilesSkipped int `json:"files_skipped"`
	// Truncated is true when more than MaxMatches lines matched.
	Truncated bool `json:"truncated"`
	// Denied counts entries the workspace policy's deny_read left out.
	Denied int `json:"denied"`
	// Protected counts protected system locations (/etc, /proc, ...) left
	// out in unrestricted mode.
	Protected int `json:"protected,omitempty"`
	ToolReply
}

// SearchText searches file contents under in.Path (a directory, searched
// recursively, or a file) for in.Query. An invalid regular expression is
// CodeInvalidRegex.
func (ws *Workspace) SearchText(ctx context.Context, in SearchTextInput) (SearchTextResult, error) {
	path := cmp.Or(in.Path, ".")
	if e := checkPath(ToolSearchText, path); e != nil {
		return SearchTextResult{}, ws.reject(ToolSearchText, path, e)
	}
	return callTyped[SearchTextResult](ctx, ws, ToolSearchText, in, path)
}
