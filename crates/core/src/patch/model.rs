//! What a parsed patch is, whatever format it came in: file sections, each with an action and
//! hunks, and the stable vocabulary of reasons a hunk is rejected.

use serde::Serialize;

/// One line of a hunk, without its line ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineOp {
    /// Must be in the file, and stays.
    Context(String),
    /// Must be in the file, and goes.
    Delete(String),
    /// Goes in.
    Insert(String),
}

/// A change located by its content: the old lines (context and deleted) are searched for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinesHunk {
    pub ops: Vec<LineOp>,
    /// 0-based index in the original file where the old lines start, as the patch states it
    /// (unified diffs); for a hunk without old lines, the index it inserts before.
    pub stated_index: Option<usize>,
    /// `@@ anchor` lines (the `*** Begin Patch` format): each is found in turn before the
    /// old lines are searched for after the last one.
    pub anchors: Vec<String>,
    /// `*** End of File`: the old lines end at the end of the file.
    pub at_eof: bool,
    /// `\ No newline at end of file` after the last old line (unified diffs).
    pub old_missing_newline: bool,
    /// `\ No newline at end of file` after the last new line (unified diffs).
    pub new_missing_newline: bool,
}

impl LinesHunk {
    /// The lines that must be in the file, in order.
    pub fn old_lines(&self) -> Vec<&str> {
        self.ops
            .iter()
            .filter_map(|op| match op {
                LineOp::Context(s) | LineOp::Delete(s) => Some(s.as_str()),
                LineOp::Insert(_) => None,
            })
            .collect()
    }

    /// The lines the hunk leaves where its old lines were: context and added lines.
    pub fn new_lines(&self) -> Vec<&str> {
        self.ops
            .iter()
            .filter_map(|op| match op {
                LineOp::Context(s) | LineOp::Insert(s) => Some(s.as_str()),
                LineOp::Delete(_) => None,
            })
            .collect()
    }
}

/// A change located by line numbers only (the structured `files` form): lines
/// `start_line..=end_line` (1-based) are replaced; `end_line == start_line - 1` inserts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeHunk {
    pub start_line: u64,
    pub end_line: u64,
    pub replace_with: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    Lines(LinesHunk),
    Range(RangeHunk),
}

impl Hunk {
    /// The lines the hunk expects in the file (for a rejection's `expected`).
    pub fn expected(&self) -> Vec<String> {
        match self {
            Hunk::Lines(h) => h.old_lines().into_iter().map(str::to_string).collect(),
            Hunk::Range(_) => Vec::new(),
        }
    }
}

/// What a file section does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Add,
    Update,
    Delete,
    Move,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Update => "update",
            Action::Delete => "delete",
            Action::Move => "move",
        }
    }
}

/// The content of an added file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewFile {
    /// Lines without their `\n` (a `\r` the patch carried stays).
    pub lines: Vec<String>,
    /// Whether the last line ends with a newline.
    pub final_newline: bool,
}

impl NewFile {
    pub fn render(&self) -> String {
        let mut text = self.lines.join("\n");
        if self.final_newline && !self.lines.is_empty() {
            text.push('\n');
        }
        text
    }
}

/// One file of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSection {
    /// The path as the patch names it (prefixes such as `a/` already removed).
    pub path: String,
    pub action: Action,
    /// For `Move`: where the file goes.
    pub move_to: Option<String>,
    /// For `Add`: the content.
    pub add: Option<NewFile>,
    /// For `Update`, `Move` (may be empty) and `Delete` (when the patch shows the removed
    /// lines; they are checked against the file).
    pub hunks: Vec<Hunk>,
    /// Lowercase hex sha256 the file must have (the `files` form's guard).
    pub file_hash: Option<String>,
}

impl FileSection {
    pub fn new(path: impl Into<String>, action: Action) -> Self {
        FileSection {
            path: path.into(),
            action,
            move_to: None,
            add: None,
            hunks: Vec::new(),
            file_hash: None,
        }
    }
}

/// A parsed patch: its file sections in order, and notes for the caller (ignored mode
/// changes and the like).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedPatch {
    pub files: Vec<FileSection>,
    pub notes: Vec<String>,
}

/// Why a hunk (or a whole file section) was not applied. The strings are part of the
/// contract: they never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The hunk's old lines are not in the file, even ignoring whitespace.
    ContextNotFound,
    /// The old lines occur in several places equally near where the hunk says.
    Ambiguous,
    /// The file changed since it was read: `file_hash` differs, or a deletion's lines
    /// do not cover the whole file.
    Stale,
    /// A line range outside the file.
    OutOfRange,
    /// The file to update, delete or move does not exist.
    FileNotFound,
    /// The file to add, or a move's destination, already exists.
    FileExists,
    /// The hunk overlaps another hunk of the same file.
    Overlap,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ContextNotFound => "context_not_found",
            Reason::Ambiguous => "ambiguous",
            Reason::Stale => "stale",
            Reason::OutOfRange => "out_of_range",
            Reason::FileNotFound => "file_not_found",
            Reason::FileExists => "file_exists",
            Reason::Overlap => "overlap",
        }
    }
}

/// A rejected hunk, or a whole rejected file section (`hunk` 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejection {
    pub path: String,
    /// 1-based index of the hunk in its file section; 0 for the whole section.
    pub hunk: usize,
    pub reason: Reason,
    /// The lines the hunk looked for.
    pub expected: Vec<String>,
    /// 1-based line of the nearest candidate, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearest_line: Option<u64>,
    /// What happened, for the text a model reads.
    #[serde(skip)]
    pub detail: String,
    /// The file's lines at `nearest_line` (endings included), as many as `expected` has, for
    /// the text: what is there instead.
    #[serde(skip)]
    pub file_lines: Vec<String>,
}
