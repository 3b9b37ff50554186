package wsfs

// Metrics are the figures of one tool call, as the library measured them
// (the envelope's "metrics"; docs/c-abi.md, "Metrics"): what a host's middleware
// records in a log line or a span without parsing text, never contents.
// A figure the tool does not have is zero (and left out of the JSON).
type Metrics struct {
	// Tool is the tool as the call named it; Path the paths it named, as
	// shown to the model ("a -> b" for two).
	Tool string `json:"tool"`
	Path string `json:"path,omitempty"`
	// DurationUS is how long the call took in the library, in microseconds.
	DurationUS int64 `json:"duration_us"`
	// StartLine, LinesRead and BytesRead: read_file.
	StartLine int64 `json:"start_line,omitempty"`
	LinesRead int64 `json:"lines_read,omitempty"`
	BytesRead int64 `json:"bytes_read,omitempty"`
	// BytesWritten: write_file, append_file, edit_file (the new size).
	BytesWritten int64 `json:"bytes_written,omitempty"`
	// Matches: search_text's matching lines, find_files' paths found,
	// edit_file's replacements.
	Matches int64 `json:"matches,omitempty"`
	// FilesSearched: search_text's files searched, find_files' names tested.
	FilesSearched int64 `json:"files_searched,omitempty"`
	// Entries: list_dir's entries returned.
	Entries int64 `json:"entries,omitempty"`
	// FilesChanged: apply_patch.
	FilesChanged int64 `json:"files_changed,omitempty"`
	// Truncated: the result was cut at a limit.
	Truncated bool `json:"truncated,omitempty"`
}

// metricsKeys are Metrics' JSON names, for decoder.other.
var metricsKeys = jsonKeys[Metrics]()

// metrics reads the envelope's metrics object into m; a key it does not
// know (a figure a newer library adds) is skipped.
func (d *decoder) metrics(m *Metrics) {
	if !d.object() {
		return
	}
	var ms members
	for {
		key, ok := d.member(&ms)
		if !ok {
			return
		}
		switch key {
		case "tool":
			m.Tool = d.str()
		case "path":
			m.Path = d.str()
		case "truncated":
			m.Truncated = d.bool()
		default:
			if field := m.figure(key); field != nil {
				*field = d.int()
			} else {
				d.other(key, metricsKeys)
			}
		}
	}
}

// figure returns the integer field named key in JSON, or nil.
func (m *Metrics) figure(key string) *int64 {
	switch key {
	case "duration_us":
		return &m.DurationUS
	case "start_line":
		return &m.StartLine
	case "lines_read":
		return &m.LinesRead
	case "bytes_read":
		return &m.BytesRead
	case "bytes_written":
		return &m.BytesWritten
	case "matches":
		return &m.Matches
	case "files_searched":
		return &m.FilesSearched
	case "entries":
		return &m.Entries
	case "files_changed":
		return &m.FilesChanged
	}
	return nil
}
