//! The data files: each one loads and compiles, its specs are plain model-ready schemas, its
//! templates use only placeholders that exist, and the list of native arguments still to come
//! (`PENDING_NATIVE_ARGS`) is exactly what the native tools lack.

use super::super::format::{FieldData, TextData};
use super::super::model::{pending_native_arg, PENDING_NATIVE_ARGS};
use super::super::model::{Profile, ProfileTool};
use super::super::template::names;
use super::super::{lookup, names as profile_names};
use super::profile_named;
use crate::error::ErrorCode;
use serde_json::{json, Value};

fn compiled() -> Vec<&'static Profile> {
    profile_names()
        .into_iter()
        .filter_map(|n| lookup(n).unwrap_or_else(|e| panic!("{n}: {e}")))
        .collect()
}

#[test]
fn every_profile_loads_and_wsfs_is_native() {
    assert_eq!(profile_names()[0], super::super::DEFAULT);
    assert!(
        lookup("wsfs").expect("wsfs").is_none(),
        "wsfs never uses the engine"
    );
    assert_eq!(compiled().len(), profile_names().len() - 1);
    let e = lookup("agent_base").expect_err("unknown");
    assert_eq!(e.code, ErrorCode::InvalidArguments);
    assert!(e.message.contains("agent-base"), "{}", e.message);
}

#[test]
fn miniclaw_offers_exactly_the_five_tools() {
    let names: Vec<&str> = profile_named("miniclaw")
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "read_file",
            "write_file",
            "append_file",
            "list_dir",
            "edit_file"
        ]
    );
}

#[test]
fn each_profile_offers_its_documents_tools() {
    let names = |p: &str| -> Vec<String> {
        profile_named(p)
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    assert_eq!(names("filesystem-tool"), ["filesystem"]);
    assert_eq!(
        names("agent-base"),
        [
            "get_path_info",
            "list_directory",
            "read_file",
            "search_text",
            "write_file",
            "apply_text_edit",
            "create_directory"
        ]
    );
    let plan = names("capability-plan");
    assert_eq!(
        plan[..4],
        ["file_patch", "file_list", "file_move", "file_delete"]
    );
    // The native tools the four replace are not offered twice; the others are, as they are.
    for replaced in ["apply_patch", "list_dir", "move_file", "delete_file"] {
        assert!(!plan.iter().any(|n| n == replaced), "{replaced}");
    }
    for kept in ["read_file", "write_file", "edit_file", "search_text"] {
        assert!(plan.iter().any(|n| n == kept), "{kept}");
    }
    // file_read is another name for read_file (the plan's example): both are offered.
    assert_eq!(plan[4], "file_read");
}

/// What `src/specs.rs`'s test asks of native specs, asked of every profile's.
fn check_schema(at: &str, schema: &Value) {
    let map = schema
        .as_object()
        .unwrap_or_else(|| panic!("{at}: not an object"));
    for banned in ["$ref", "$defs", "definitions", "anyOf", "oneOf", "allOf"] {
        assert!(!map.contains_key(banned), "{at}: has {banned}");
    }
    let ty = map["type"]
        .as_str()
        .unwrap_or_else(|| panic!("{at}: type is not one string"));
    assert_ne!(ty, "null", "{at}");
    if let Some(props) = map.get("properties") {
        assert_eq!(ty, "object", "{at}");
        assert_eq!(map.get("additionalProperties"), Some(&json!(false)), "{at}");
        for (name, prop) in props.as_object().expect("properties") {
            let here = format!("{at}.{name}");
            let description = prop["description"].as_str().unwrap_or("");
            assert!(!description.trim().is_empty(), "{here}: no description");
            check_schema(&here, prop);
        }
        for req in map["required"].as_array().expect("required") {
            let req = req.as_str().expect("name");
            assert!(
                props.get(req).is_some(),
                "{at}: required {req} is no property"
            );
            assert!(
                props[req].get("default").is_none(),
                "{at}: required {req} has a default"
            );
        }
    }
    if let Some(items) = map.get("items") {
        check_schema(&format!("{at}[]"), items);
    }
}

#[test]
fn every_profile_spec_is_a_plain_schema_with_descriptions() {
    for profile in compiled() {
        let specs = profile.tool_specs();
        for spec in specs.as_array().expect("array") {
            let at = format!("{}/{}", profile.name, spec["name"]);
            assert!(
                spec["description"].as_str().unwrap_or("").len() > 80,
                "{at}"
            );
            check_schema(&at, &spec["parameters"]);
            assert!(spec["annotations"]["readOnlyHint"].is_boolean(), "{at}");
        }
    }
}

#[test]
fn schemas_carry_the_profiles_names_and_defaults() {
    let specs = profile_named("agent-base").tool_specs();
    let tool = |name: &str| -> Value {
        specs
            .as_array()
            .and_then(|s| s.iter().find(|t| t["name"] == name))
            .cloned()
            .expect(name)
    };
    let write = tool("write_file")["parameters"].clone();
    assert_eq!(write["properties"]["mode"]["default"], "create");
    assert_eq!(write["required"], json!(["path", "content"]));
    let edit = tool("apply_text_edit")["parameters"].clone();
    let keys: Vec<&String> = edit["properties"]
        .as_object()
        .expect("props")
        .keys()
        .collect();
    assert_eq!(
        keys,
        ["path", "expected_text", "replacement_text", "replace_all"]
    );
    let read = tool("read_file")["parameters"].clone();
    assert_eq!(read["properties"]["max_lines"]["default"], 200);
    assert_eq!(read["properties"]["max_lines"]["maximum"], 1000);
    assert_eq!(read["required"], json!(["path"]));
    let list = tool("list_directory")["parameters"].clone();
    assert_eq!(list["properties"]["recursive"]["type"], "boolean");
    assert_eq!(list["required"], json!([]));
    assert_eq!(tool("get_path_info")["parameters"]["required"], json!([]));
    assert_eq!(tool("read_file")["annotations"]["readOnlyHint"], true);
    assert_eq!(tool("write_file")["annotations"]["readOnlyHint"], false);

    let patch = profile_named("capability-plan").tool_specs()[0].clone();
    let hunk =
        &patch["parameters"]["properties"]["patches"]["items"]["properties"]["hunks"]["items"];
    assert_eq!(hunk["required"], json!(["start", "end", "replace_with"]));
    assert!(patch["parameters"]["properties"]["diff_text"]
        .get("default")
        .is_none());

    let fs = profile_named("filesystem-tool").tool_specs()[0].clone();
    assert_eq!(
        fs["parameters"]["properties"]["operation"]["enum"],
        json!(["read", "write", "list"])
    );
    assert_eq!(fs["parameters"]["required"], json!(["operation", "path"]));
    // One tool that writes: neither read-only nor idempotent as a whole.
    assert_eq!(fs["annotations"]["readOnlyHint"], false);
}

/// Every placeholder of every template is one the engine fills. (Native data fields in
/// success templates are checked by each profile's tests, against real results.)
#[test]
fn templates_use_known_placeholders() {
    let error_names = ["message", "code", "tool", "did_you_mean"];
    for profile in compiled() {
        let rules = profile.errors.iter().chain(
            profile
                .tools
                .iter()
                .flat_map(|t| t.ops.iter().flat_map(|(_, op)| &op.errors)),
        );
        for rule in rules {
            for name in names(rule.message.as_deref().unwrap_or("")) {
                assert!(
                    error_names.contains(&name) || name.starts_with("args."),
                    "{}: error template placeholder {{{name}}}",
                    profile.name
                );
            }
        }
        if let Some(dotdot) = &profile.dotdot {
            for name in names(&dotdot.message) {
                assert!(["arg", "value", "tool"].contains(&name), "{name}");
            }
        }
        for tool in &profile.tools {
            for (_, op) in &tool.ops {
                let texts: Vec<&str> = match &op.text {
                    Some(TextData::Template(t)) => vec![t],
                    Some(TextData::Choice {
                        then, otherwise, ..
                    }) => vec![then, otherwise],
                    _ => vec![],
                };
                for name in texts.into_iter().flat_map(names) {
                    if let Some(arg) = name.strip_prefix("args.") {
                        assert!(tool.args.get(arg).is_some(), "{}: {{{name}}}", tool.name);
                    }
                }
                if let Some(TextData::Json(field)) = &op.text {
                    let fields = op
                        .result
                        .as_ref()
                        .expect("a JSON text shows a result field");
                    assert!(fields.get(field).is_some(), "{}: {field}", tool.name);
                }
            }
        }
    }
}

/// Result fields read from `args.<name>` name real arguments.
#[test]
fn result_fields_from_arguments_exist() {
    for profile in compiled() {
        for tool in &profile.tools {
            for (_, op) in &tool.ops {
                for (name, field) in op.result.iter().flat_map(|r| r.iter()) {
                    let from = match field {
                        FieldData::From(f) => vec![f.clone()],
                        FieldData::Rule(r) => r
                            .from
                            .as_ref()
                            .map(|s| s.names().to_vec())
                            .unwrap_or_default(),
                    };
                    for f in from.iter().filter_map(|f| f.strip_prefix("args.")) {
                        assert!(tool.args.get(f).is_some(), "{}.{name}: {f}", tool.name);
                    }
                }
            }
        }
    }
}

/// Each pending native argument is used by a profile and still missing natively: when a
/// native tool gains it (phase 2), this fails until the entry is removed.
#[test]
fn pending_native_arguments_are_exactly_the_missing_ones() {
    let native = crate::specs::tool_specs();
    for (tool, arg) in PENDING_NATIVE_ARGS {
        let spec = native
            .as_array()
            .and_then(|s| s.iter().find(|t| t["name"] == *tool))
            .expect("native tool");
        assert!(
            spec["parameters"]["properties"][arg].is_null(),
            "{tool} has {arg} now: remove it from PENDING_NATIVE_ARGS"
        );
        let used = compiled()
            .iter()
            .any(|p| p.tools.iter().any(|t| uses(t, tool, arg)));
        assert!(used, "no profile uses {tool}.{arg}");
    }
    // Native since issue 18 gap 5.
    assert!(!pending_native_arg("list_dir", "include_files"));
    assert!(!pending_native_arg("list_dir", "include_dirs"));
    assert!(!pending_native_arg("read_file", "encoding_errors"));
    assert!(!pending_native_arg("read_file", "path"));
}

fn uses(tool: &ProfileTool, native_tool: &str, arg: &str) -> bool {
    tool.ops.iter().any(|(_, op)| {
        op.native == native_tool
            && (op.fixed.contains_key(arg)
                || tool.args.iter().any(|(name, a)| {
                    op.args.contains(name) && a.native.as_deref().unwrap_or(name) == arg
                }))
    })
}

#[test]
fn broken_data_is_refused_with_the_place() {
    use super::super::format::ProfileData;
    let native = crate::specs::tool_specs();
    let compile = |data: Value| -> String {
        let data: ProfileData = match serde_json::from_value(data) {
            Ok(d) => d,
            Err(e) => return e.to_string(),
        };
        super::super::compile::compile(data, native)
            .err()
            .unwrap_or_default()
    };
    let base = |tool: Value| {
        json!({"name": "t", "description": "d",
               "envelope": {"success": {"ok": true}, "failure": {"ok": false}},
               "tools": [tool]})
    };
    let e = compile(base(
        json!({"name": "x", "description": "d", "args": {}, "native": "nope"}),
    ));
    assert!(e.contains("no native tool nope"), "{e}");
    let e = compile(base(json!({"name": "x", "description": "d",
        "args": {"pth": {"description": "p"}}, "native": "read_file"})));
    assert!(e.contains("read_file has no argument pth"), "{e}");
    let e = compile(base(json!({"name": "x", "description": "d", "args": {},
        "native": "read_file", "resutl": {}})));
    assert!(e.contains("unknown field `resutl`"), "{e}");
    let e = compile(base(json!({"name": "x", "description": "d",
        "args": {"path": {"descripton": "p"}}, "native": "read_file"})));
    assert!(e.contains("unknown field `descripton`"), "{e}");
    let e = compile(json!({"name": "t", "description": "d",
        "envelope": {"success": {"data": "$dat"}, "failure": {}}}));
    assert!(e.contains("unknown slot $dat"), "{e}");
    let e = compile(base(json!({"name": "x", "description": "d", "args": {},
        "native": "read_file", "result": {"a": {"transform": "pluck"}}})));
    assert!(e.contains("pluck"), "{e}");
    let e = compile(base(
        json!({"name": "x", "description": "d", "native": "apply_patch",
        "args": {"files": {"description": "f", "items": {
            "path": {"description": "p", "default": "a"}}}}}),
    ));
    assert!(e.contains("argument files[].path"), "{e}");
}
