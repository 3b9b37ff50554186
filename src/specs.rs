//! Tool names, descriptions and JSON Schemas, written for a model to read.

use serde_json::{json, Value};

pub const TOOL_NAMES: [&str; 5] = [
    "read_file",
    "write_file",
    "append_file",
    "list_dir",
    "edit_file",
];

const PATHS: &str = "Paths are relative to the workspace root ('.' is the root); absolute paths are accepted only inside the workspace. '..', absolute symlinks and symlinks leading outside the workspace are refused.";

fn path_property(what: &str) -> Value {
    json!({"type": "string", "description": what})
}

/// The specs as returned by `wsfs_tool_specs`: `[{name, description, parameters}]`.
pub fn tool_specs() -> Value {
    json!([
        {
            "name": "read_file",
            "description": format!("Read a UTF-8 text file from the workspace. Returns the file's text; files larger than the read limit (256 KiB by default) are cut at a character boundary and end with a '[truncated: ...]' notice. Binary files, directories, FIFOs and devices are refused. {PATHS}"),
            "parameters": {
                "type": "object",
                "properties": {"path": path_property("File to read, e.g. 'src/main.go'.")},
                "required": ["path"],
                "additionalProperties": false
            }
        },
        {
            "name": "write_file",
            "description": format!("Create or overwrite a text file with the given content (the whole file). Missing parent directories are created. The write is atomic: readers see the old or the new file, never a mix. An existing file's permissions are kept. Content is limited to 1 MiB by default; use append_file to add to a file and edit_file to change part of it. {PATHS}"),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": path_property("File to write, e.g. 'notes/todo.md'."),
                    "content": {"type": "string", "description": "The complete new content of the file."}
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }
        },
        {
            "name": "append_file",
            "description": format!("Append text to the end of a file, creating it (and its parent directories) if missing. Nothing is added between the old content and yours: include a leading newline if you need one. {PATHS}"),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": path_property("File to append to, e.g. 'log.txt'."),
                    "content": {"type": "string", "description": "Text to add at the end of the file."}
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }
        },
        {
            "name": "list_dir",
            "description": format!("List one directory (not recursive), sorted by name. Each entry shows its type: directories end with '/', symlinks with '@' (they are not followed); files show their size. At most 500 entries by default, with a '[truncated: ...]' notice beyond that. {PATHS}"),
            "parameters": {
                "type": "object",
                "properties": {"path": path_property("Directory to list; defaults to '.', the workspace root.")},
                "required": [],
                "additionalProperties": false
            }
        },
        {
            "name": "edit_file",
            "description": format!("Replace exact text in a file. old_text must match the file byte for byte (whitespace, indentation and line endings included) and, unless replace_all is true, occur exactly once: otherwise nothing changes and the error says how many matches there were. Everything else in the file is kept exactly. Read the file first to copy old_text. {PATHS}"),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": path_property("File to edit."),
                    "old_text": {"type": "string", "description": "The exact text to find; must not be empty."},
                    "new_text": {"type": "string", "description": "The text to put in its place (may be empty to delete)."},
                    "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one. Default false."}
                },
                "required": ["path", "old_text", "new_text"],
                "additionalProperties": false
            }
        }
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_and_its_required_fields_exist() {
        let specs = tool_specs();
        let specs = specs.as_array().unwrap();
        let names: Vec<_> = specs.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, TOOL_NAMES);
        for spec in specs {
            let params = &spec["parameters"];
            assert_eq!(params["type"], "object");
            for req in params["required"].as_array().unwrap() {
                assert!(params["properties"].get(req.as_str().unwrap()).is_some());
            }
            assert!(spec["description"].as_str().unwrap().len() > 80);
        }
    }
}
