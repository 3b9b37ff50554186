package wsfs

import (
	"context"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
)

// ToolListDir lists a directory, one level or a tree.
const ToolListDir = "list_dir"

// ListDirInput is the argument of list_dir. An empty Path lists the
// workspace root; with only Path set, the listing is one level, every name.
// Depth 2 or more returns ListDirResult.Tree.
type ListDirInput struct {
	Path             string `json:"path,omitempty" description:"Directory to list; defaults to '.', the workspace root."`
	Depth            int    `json:"depth,omitempty,omitzero" description:"Levels to list: 1 (default) lists the directory itself; 2 or more returns a tree, breadth-first (at most 60)."`
	IncludeHidden    *bool  `json:"include_hidden,omitempty" description:"Show names starting with '.'. Default true."`
	MaxEntries       int    `json:"max_entries,omitempty,omitzero" description:"Most entries to return; 0 or absent means the workspace's max_list_entries (500 by default), which is also the most allowed."`
	RespectGitignore *bool  `json:"respect_gitignore,omitempty" description:"Leave out what .gitignore files in the listed directories ignore. Default: true for a tree (depth 2 or more), false for one level."`
	IncludeFiles     *bool  `json:"include_files,omitempty" description:"Show entries that are not directories (files, symlinks, special files). Default true."`
	IncludeDirs      *bool  `json:"include_dirs,omitempty" description:"Show directories (a tree then enters none of them). Default true; at least one of include_files and include_dirs must be true."`
}

// plain reports whether only Path is set (the library's fast path).
func (in ListDirInput) plain() bool {
	return in.Depth <= 1 && in.IncludeHidden == nil && in.MaxEntries == 0 && in.RespectGitignore == nil &&
		in.IncludeFiles == nil && in.IncludeDirs == nil
}

// Entry types reported by list_dir.
const (
	EntryFile    = "file"
	EntryDir     = "dir"
	EntrySymlink = "symlink"
	EntryOther   = "other"
)

// DirEntry is one entry of a ListDir result.
type DirEntry struct {
	Name string `json:"name"`
	// Type is EntryFile, EntryDir, EntrySymlink (never followed) or
	// EntryOther.
	Type string `json:"type"`
	// Size is the entry's own size (lstat).
	Size int64 `json:"size"`
}

// ListDirResult is the result of ListDir.
type ListDirResult struct {
	Path string `json:"path"`
	// Entries are sorted by name in byte order, at most MaxListEntries
	// (empty for a tree: Tree holds the entries).
	Entries []DirEntry `json:"entries"`
	// Total is the number of entries in the directory (those the filters
	// let through, not counting those the workspace policy denies); for a
	// tree, the number of entries in Tree.
	Total int `json:"total"`
	// Truncated is true when entries were left out because of the entry
	// limit.
	Truncated bool `json:"truncated"`
	// Denied is the number of entries left out because the workspace
	// policy denies reading them (Policy.DenyRead); in a tree, those of
	// every listed directory. Denied directories are not entered.
	Denied int `json:"denied"`
	// Protected is the number of protected system locations (/etc, /proc,
	// ...) left out in unrestricted mode; they are not entered.
	Protected int `json:"protected,omitempty"`
	// Hidden is the number of names starting with '.' left out
	// (IncludeHidden false); Ignored those a .gitignore rule left out
	// (RespectGitignore, the default for a tree). Neither is in Total.
	Hidden  int `json:"hidden,omitempty"`
	Ignored int `json:"ignored,omitempty"`
	// Tree is the listing as a tree (Depth 2 or more): the listed directory
	// (Name ".") and its entries, breadth-first up to the entry limit.
	Tree     *TreeNode `json:"tree,omitempty"`
	Text     string    `json:"-"`
	Warnings []string  `json:"-"`
}

// TreeNode is one entry of ListDirResult.Tree.
type TreeNode struct {
	Name string `json:"name"`
	// Type is EntryFile, EntryDir, EntrySymlink (never followed) or
	// EntryOther.
	Type string `json:"type"`
	// Size is a regular file's size.
	Size int64 `json:"size,omitempty"`
	// Children are a listed directory's entries, sorted by name; nil for
	// files and for directories that were not listed (the depth limit,
	// .git, the entry limit).
	Children []TreeNode `json:"children,omitempty"`
	// Truncated is true when some of the directory's entries are not
	// shown, or it was not listed because of the entry limit.
	Truncated bool `json:"truncated,omitempty"`
	// Listed is false (non-nil) for a directory whose entries are not in
	// the tree: the depth limit, .git, the entry limit, or unreadable; nil
	// otherwise. An empty directory that was listed has Children empty and
	// Listed nil.
	Listed *bool `json:"listed,omitempty"`
}

// ListDir lists a directory (symlinks not followed): one level, or with
// Depth 2 or more a tree.
func (ws *Workspace) ListDir(ctx context.Context, in ListDirInput) (ListDirResult, error) {
	const tool = ToolListDir
	p := in.Path
	if p == "" {
		p = "."
	}
	if e := checkPath(tool, p); e != nil {
		return ListDirResult{}, ws.reject(tool, p, e)
	}
	if !in.plain() {
		return ws.listFiltered(ctx, in, p)
	}
	args := "{}"
	if in.Path != "" {
		args = pathArgs(in.Path)
	}
	var r ListDirResult
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: args, output: outputFull, data: &r, path: p})
	if err != nil {
		return ListDirResult{}, err
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// listFiltered is ListDir with more than a path. Trees are decoded by the
// generic decoder (the fast reader knows flat listings only).
func (ws *Workspace) listFiltered(ctx context.Context, in ListDirInput, p string) (ListDirResult, error) {
	const tool = ToolListDir
	args, err := jsonv2.Marshal(in)
	if err != nil {
		return ListDirResult{}, ws.reject(tool, p, newError(tool, CodeInvalidArguments, "encoding the arguments: %v", err))
	}
	var r ListDirResult
	var raw rawData
	var data any = &r
	if in.Depth > 1 {
		data = &raw
	}
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: string(args), output: outputFull, data: data, path: p})
	if err != nil {
		return ListDirResult{}, err
	}
	if in.Depth > 1 {
		if err := decodeResult(string(raw), &r); err != nil {
			return ListDirResult{}, newError(tool, CodeIOError, "malformed list_dir result from the wsfs library: %v", err)
		}
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// listDirKeys are the keys encoding/json decodes into a ListDirResult.
var listDirKeys = jsonKeys[ListDirResult]()

func (r *ListDirResult) decodeData(d *decoder) {
	d.fields(func(key string) {
		switch key {
		case "path":
			r.Path = d.str()
		case "total":
			r.Total = int(d.int())
		case "truncated":
			r.Truncated = d.bool()
		case "denied":
			r.Denied = int(d.int())
		case "protected":
			r.Protected = int(d.int())
		case "hidden":
			r.Hidden = int(d.int())
		case "ignored":
			r.Ignored = int(d.int())
		case "entries":
			r.Entries = d.entries()
		default:
			d.other(key, listDirKeys)
		}
	})
}

// entries reads list_dir's entries (nil for null).
func (d *decoder) entries() []DirEntry {
	if !d.array() {
		return nil
	}
	// Size the slice from an estimate: every entry is an object, up to the
	// array's ']' (names with '{' or ']' only make it less exact).
	rest := d.s[d.i:]
	if end := strings.IndexByte(rest, ']'); end >= 0 {
		rest = rest[:end]
	}
	out := make([]DirEntry, 0, strings.Count(rest, "{"))
	var m members
	for n := 0; d.elem(&n); {
		var e DirEntry
		if d.object() {
			m.n = 0
			for {
				key, ok := d.member(&m)
				if !ok {
					break
				}
				switch key {
				case "name":
					e.Name = d.str()
				case "type":
					e.Type = internType(d.str())
				case "size":
					e.Size = d.int()
				default:
					d.other(key, dirEntryKeys)
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// dirEntryKeys are the keys encoding/json decodes into a DirEntry.
var dirEntryKeys = jsonKeys[DirEntry]()

func internType(s string) string {
	switch s {
	case EntryFile:
		return EntryFile
	case EntryDir:
		return EntryDir
	case EntrySymlink:
		return EntrySymlink
	case EntryOther:
		return EntryOther
	}
	return s
}
