//! What a model sends when it calls wsfs's tools with another tool set's habits, and how the
//! argument decoding answers it: argument names from other tools (`offset`, `old_string`,
//! `file_path`) are named with the wsfs argument to use instead, and the strings `"true"` and
//! `"false"` are taken for booleans. Nothing here runs on a call whose arguments decode.

use serde_json::{Map, Value};

/// `(tool, foreign name, wsfs argument, how it differs)`: `"*"` is any tool that has the wsfs
/// argument. Checked in order, so a tool's own entry comes before a generic one.
const ALIASES: &[(&str, &str, &str, &str)] = &[
    (
        "read_file",
        "offset",
        "start_line",
        "the first line to read, 1-based",
    ),
    (
        "read_file",
        "start",
        "start_line",
        "the first line to read, 1-based",
    ),
    (
        "read_file",
        "line",
        "start_line",
        "the first line to read, 1-based",
    ),
    (
        "read_file",
        "from_line",
        "start_line",
        "the first line to read, 1-based",
    ),
    ("read_file", "start_line_one_indexed", "start_line", ""),
    (
        "read_file",
        "limit",
        "max_lines",
        "the number of lines to read",
    ),
    (
        "read_file",
        "lines",
        "max_lines",
        "the number of lines to read",
    ),
    (
        "read_file",
        "num_lines",
        "max_lines",
        "the number of lines to read",
    ),
    (
        "read_file",
        "line_count",
        "max_lines",
        "the number of lines to read",
    ),
    (
        "read_file",
        "count",
        "max_lines",
        "the number of lines to read",
    ),
    (
        "read_file",
        "end_line",
        "max_lines",
        "a number of lines: end_line - start_line + 1",
    ),
    (
        "read_file",
        "end",
        "max_lines",
        "a number of lines: end - start_line + 1",
    ),
    (
        "read_file",
        "end_line_one_indexed_inclusive",
        "max_lines",
        "a number of lines: end - start_line + 1",
    ),
    ("edit_file", "old_string", "old_text", ""),
    ("edit_file", "old_str", "old_text", ""),
    ("edit_file", "old", "old_text", ""),
    ("edit_file", "search", "old_text", ""),
    ("edit_file", "find", "old_text", ""),
    ("edit_file", "new_string", "new_text", ""),
    ("edit_file", "new_str", "new_text", ""),
    ("edit_file", "new", "new_text", ""),
    ("edit_file", "replace", "new_text", ""),
    ("edit_file", "replacement", "new_text", ""),
    (
        "edit_file",
        "expected_replacements",
        "replace_all",
        "true to replace every occurrence",
    ),
    ("edit_file", "all", "replace_all", ""),
    ("edit_file", "global", "replace_all", ""),
    (
        "search_text",
        "pattern",
        "query",
        "with use_regex: true for a regular expression",
    ),
    ("search_text", "regex", "query", "with use_regex: true"),
    ("search_text", "search", "query", ""),
    ("search_text", "text", "query", ""),
    ("search_text", "q", "query", ""),
    (
        "search_text",
        "case_insensitive",
        "case_sensitive",
        "the opposite: case_sensitive: false",
    ),
    (
        "search_text",
        "ignore_case",
        "case_sensitive",
        "the opposite: case_sensitive: false",
    ),
    (
        "search_text",
        "-i",
        "case_sensitive",
        "the opposite: case_sensitive: false",
    ),
    ("search_text", "include", "glob", ""),
    ("search_text", "file_pattern", "glob", ""),
    ("search_text", "limit", "max_matches", ""),
    ("search_text", "head_limit", "max_matches", ""),
    ("search_text", "max_results", "max_matches", ""),
    ("search_text", "context", "context_lines", ""),
    ("search_text", "-C", "context_lines", ""),
    ("find_files", "glob", "pattern", ""),
    ("find_files", "name", "pattern", ""),
    ("find_files", "query", "pattern", ""),
    ("find_files", "file_pattern", "pattern", ""),
    ("find_files", "limit", "max_results", ""),
    ("list_dir", "recursive", "depth", "2 or more lists a tree"),
    ("list_dir", "max_depth", "depth", ""),
    ("list_dir", "level", "depth", ""),
    ("list_dir", "limit", "max_entries", ""),
    ("list_dir", "show_hidden", "include_hidden", ""),
    ("apply_patch", "diff", "patch", ""),
    ("apply_patch", "input", "patch", ""),
    ("apply_patch", "patch_text", "patch", ""),
    ("create_directory", "recursive", "parents", ""),
    (
        "create_directory",
        "exist_ok",
        "parents",
        "an existing directory is never an error",
    ),
    ("move_file", "source", "src", ""),
    ("move_file", "source_path", "src", ""),
    ("move_file", "from", "src", ""),
    ("move_file", "old_path", "src", ""),
    ("move_file", "path", "src", ""),
    ("move_file", "destination", "dst", ""),
    ("move_file", "destination_path", "dst", ""),
    ("move_file", "dest", "dst", ""),
    ("move_file", "to", "dst", ""),
    ("move_file", "new_path", "dst", ""),
    ("move_file", "force", "overwrite", ""),
    (
        "delete_file",
        "force",
        "recursive",
        "for a directory and everything in it",
    ),
    ("*", "file_path", "path", ""),
    ("*", "filepath", "path", ""),
    ("*", "file", "path", ""),
    ("*", "filename", "path", ""),
    ("*", "file_name", "path", ""),
    ("*", "target_file", "path", ""),
    ("*", "absolute_path", "path", ""),
    ("*", "relative_path", "path", ""),
    ("*", "dir", "path", ""),
    ("*", "directory", "path", ""),
    ("*", "dir_path", "path", ""),
    ("*", "directory_path", "path", ""),
    ("*", "folder", "path", ""),
    ("*", "contents", "content", ""),
    ("*", "text", "content", ""),
    ("*", "file_text", "content", ""),
    ("*", "file_content", "content", ""),
    ("*", "data", "content", ""),
    ("*", "body", "content", ""),
];

/// The wsfs argument of `tool` a foreign argument name stands for, and how it differs.
fn alias(
    tool: &str,
    foreign: &str,
    properties: &Map<String, Value>,
) -> Option<(&'static str, &'static str)> {
    ALIASES
        .iter()
        .find(|(t, f, wsfs, _)| {
            (*t == tool || *t == "*") && *f == foreign && properties.contains_key(*wsfs)
        })
        .map(|(_, _, wsfs, note)| (*wsfs, *note))
}

/// The arguments with the strings `"true"` and `"false"` made booleans where the schema has a
/// boolean; `None` when there was nothing to change (or `args` is no JSON object).
pub fn with_string_booleans(args: &str, schema: &Value) -> Option<Value> {
    let mut value: Value = serde_json::from_str(args).ok()?;
    let properties = schema["properties"].as_object()?;
    let object = value.as_object_mut()?;
    let mut changed = false;
    for (name, v) in object.iter_mut() {
        let is_bool = properties
            .get(name)
            .is_some_and(|p| p["type"].as_str() == Some("boolean"));
        let b = match v.as_str() {
            Some("true") => true,
            Some("false") => false,
            _ => continue,
        };
        if is_bool {
            *v = Value::Bool(b);
            changed = true;
        }
    }
    changed.then_some(value)
}

/// For arguments that name fields the tool does not have: one sentence per name saying which
/// argument to use instead, and whether every unknown name was explained. `None` when the
/// arguments are no JSON object or name no unknown field.
pub fn unknown_fields(tool: &str, args: &str, schema: &Value) -> Option<(String, bool)> {
    let value: Value = serde_json::from_str(args).ok()?;
    let properties = schema["properties"].as_object()?;
    let unknown: Vec<&String> = value
        .as_object()?
        .keys()
        .filter(|k| !properties.contains_key(k.as_str()))
        .collect();
    if unknown.is_empty() {
        return None;
    }
    let mut said = Vec::new();
    let mut all = true;
    for name in &unknown {
        match alias(tool, name, properties) {
            Some((wsfs, "")) => said.push(format!("`{name}` (use `{wsfs}`)")),
            Some((wsfs, note)) => said.push(format!("`{name}` (use `{wsfs}`: {note})")),
            None => {
                all = false;
                said.push(format!("`{name}`"));
            }
        }
    }
    let noun = if unknown.len() == 1 {
        "argument"
    } else {
        "arguments"
    };
    Some((format!("unknown {noun} {}", said.join(", ")), all))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"properties": {"path": {"type": "string"}, "start_line": {"type": "integer"},
            "max_lines": {"type": "integer"}, "line_numbers": {"type": "boolean"}}})
    }

    #[test]
    fn foreign_names_are_named_with_the_wsfs_argument() {
        let (msg, all) = unknown_fields(
            "read_file",
            r#"{"file_path":"a","offset":3,"limit":2}"#,
            &schema(),
        )
        .unwrap();
        assert!(all, "{msg}");
        assert!(msg.contains("`file_path` (use `path`)"), "{msg}");
        assert!(
            msg.contains("`offset` (use `start_line`: the first line"),
            "{msg}"
        );
        assert!(msg.contains("`limit` (use `max_lines`"), "{msg}");
        let (msg, all) = unknown_fields("read_file", r#"{"path":"a","zzz":1}"#, &schema()).unwrap();
        assert!(!all, "{msg}");
        // A generic alias is offered only when the tool has the argument.
        let (_, all) =
            unknown_fields("read_file", r#"{"path":"a","contents":"x"}"#, &schema()).unwrap();
        assert!(!all);
        assert!(unknown_fields("read_file", r#"{"path":"a"}"#, &schema()).is_none());
    }

    #[test]
    fn string_booleans_become_booleans_only_where_the_schema_says_boolean() {
        let v =
            with_string_booleans(r#"{"path":"true","line_numbers":"true"}"#, &schema()).unwrap();
        assert_eq!(v, json!({"path": "true", "line_numbers": true}));
        assert!(with_string_booleans(r#"{"path":"a","line_numbers":"yes"}"#, &schema()).is_none());
        assert!(with_string_booleans(r#"{"path":"a"}"#, &schema()).is_none());
    }
}
