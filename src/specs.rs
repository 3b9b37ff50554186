//! The tool specs `wsfs_tool_specs` returns, built from the registry.

use crate::tools::contract::ToolRunner;
use crate::tools::ToolSet;
use crate::tools::REGISTRY;
use serde_json::{json, Value};
use std::sync::LazyLock;

/// `read_only_workspace`: the spec as a read-only workspace offers it, where a tool that runs
/// there changes nothing (its programs get a read-only view), so it says `readOnlyHint`.
fn spec(t: &dyn ToolRunner, read_only_workspace: bool) -> Value {
    let a = t.annotations();
    let read_only = a.read_only || (read_only_workspace && t.runs_read_only());
    json!({
        "name": t.name(),
        "description": t.description(),
        "parameters": t.parameters(),
        "annotations": {
            "readOnlyHint": read_only,
            "destructiveHint": !read_only && a.destructive,
            "idempotentHint": a.idempotent,
            "openWorldHint": t.open_world(),
        },
    })
}

static SPECS: LazyLock<Value> =
    LazyLock::new(|| REGISTRY.iter().map(|t| spec(*t, false)).collect());

/// `[{name, description, parameters, annotations}]`, in registry order.
pub fn tool_specs() -> &'static Value {
    &SPECS
}

/// The tools a workspace offers natively: the built-in tools `keep` keeps, then its Wasm
/// tools (in load order) `keep` keeps, each Wasm tool with its manifest's description and
/// input schema; in a read-only workspace the program tools say `readOnlyHint` there.
pub fn workspace_tool_specs(
    tools: &ToolSet,
    read_only_workspace: bool,
    keep: impl Fn(&dyn ToolRunner) -> bool,
) -> Value {
    Value::Array(
        tools
            .all()
            .filter(|t| keep(*t))
            .map(|t| spec(t, read_only_workspace))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails on anything a model's function-calling schema should not hold: `$ref`, `anyOf`,
    /// `oneOf`, `allOf`, type arrays, `null` types, and properties without a description.
    fn check_schema(at: &str, schema: &Value) {
        let map = schema
            .as_object()
            .unwrap_or_else(|| panic!("{at}: not an object"));
        for banned in ["$ref", "$defs", "definitions", "anyOf", "oneOf", "allOf"] {
            assert!(!map.contains_key(banned), "{at}: has {banned}: {schema}");
        }
        let ty = map.get("type").unwrap_or_else(|| panic!("{at}: no type"));
        let ty = ty
            .as_str()
            .unwrap_or_else(|| panic!("{at}: type is not one string: {ty}"));
        assert_ne!(ty, "null", "{at}: null type");
        if let Some(props) = map.get("properties") {
            assert_eq!(ty, "object", "{at}");
            assert_eq!(
                map.get("additionalProperties"),
                Some(&json!(false)),
                "{at}: objects must refuse unknown fields"
            );
            for (name, prop) in props.as_object().unwrap() {
                let here = format!("{at}.{name}");
                let description = prop["description"].as_str().unwrap_or("");
                assert!(!description.trim().is_empty(), "{here}: no description");
                check_schema(&here, prop);
            }
            for req in map
                .get("required")
                .and_then(Value::as_array)
                .unwrap_or(&vec![])
            {
                let req = req.as_str().unwrap();
                assert!(
                    props.get(req).is_some(),
                    "{at}: required {req} is no property"
                );
            }
        }
        if let Some(items) = map.get("items") {
            check_schema(&format!("{at}[]"), items);
        }
    }

    #[test]
    fn every_spec_is_a_plain_inline_schema_with_descriptions() {
        let specs = tool_specs().as_array().unwrap();
        assert_eq!(specs.len(), REGISTRY.len());
        for spec in specs {
            let name = spec["name"].as_str().unwrap();
            assert!(
                spec["parameters"]["properties"].is_object(),
                "{name}: no properties"
            );
            assert!(
                spec["parameters"]["required"].is_array(),
                "{name}: no required"
            );
            assert!(spec["description"].as_str().unwrap().len() > 80, "{name}");
            check_schema(name, &spec["parameters"]);
        }
    }

    #[test]
    fn the_schema_check_catches_what_it_must() {
        let bad = [
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
            json!({"type": ["string", "null"]}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/x", "type": "string", "description": "d"}}, "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"type": "string", "description": "d"}}}),
        ];
        for schema in bad {
            let caught = std::panic::catch_unwind(|| check_schema("t", &schema)).is_err();
            assert!(caught, "not caught: {schema}");
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = REGISTRY.iter().map(|t| t.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), REGISTRY.len());
    }

    /// Every string argument of every tool (native, and each profile's, nested items too) is
    /// classified for `audit_arguments`: content (`guard::audit::CONTENT_ARGUMENTS`, recorded
    /// as `{length, sha256}`) or not (recorded as it is). A new argument fails here until it
    /// is put in one list or the other.
    #[test]
    fn every_string_argument_is_classified_for_the_audit_log() {
        use crate::guard::audit::CONTENT_ARGUMENTS;
        /// Arguments that never carry file content: paths, names, globs, modes, hashes,
        /// enum choices, program arguments chosen from a fixed set.
        const NOT_CONTENT: &[&str] = &NOT_CONTENT_ARGUMENTS;
        fn strings(schema: &Value, out: &mut Vec<String>) {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (name, prop) in props {
                let ty = prop.get("type").and_then(Value::as_str);
                let items = prop.get("items");
                let item_ty = items.and_then(|i| i.get("type")).and_then(Value::as_str);
                if ty == Some("string") || item_ty == Some("string") {
                    out.push(name.clone());
                }
                strings(prop, out);
                if let Some(items) = items {
                    strings(items, out);
                }
            }
        }
        let mut all = Vec::new();
        let mut specs: Vec<Value> = tool_specs().as_array().cloned().unwrap_or_default();
        for name in crate::profiles::names() {
            if let Ok(Some(profile)) = crate::profiles::lookup(name) {
                specs.extend(profile.tool_specs().as_array().cloned().unwrap_or_default());
            }
        }
        for spec in &specs {
            strings(&spec["parameters"], &mut all);
        }
        all.sort();
        all.dedup();
        let unclassified: Vec<&String> = all
            .iter()
            .filter(|n| {
                !CONTENT_ARGUMENTS.contains(&n.as_str()) && !NOT_CONTENT.contains(&n.as_str())
            })
            .collect();
        assert!(
            unclassified.is_empty(),
            "string arguments in neither guard::audit::CONTENT_ARGUMENTS nor NOT_CONTENT_ARGUMENTS: {unclassified:?}"
        );
        // Every classified name is some tool's argument (the developer tools' among them, so
        // only where they are built).
        #[cfg(feature = "exec")]
        for name in CONTENT_ARGUMENTS.iter().chain(NOT_CONTENT) {
            assert!(
                all.iter().any(|a| a == name),
                "{name} is no tool's argument any more"
            );
        }
    }

    const NOT_CONTENT_ARGUMENTS: [&str; 16] = [
        "base_ref",
        "cwd",
        "dst",
        "encoding_errors",
        "file_hash",
        "focus",
        "glob",
        "message",
        "mode",
        "operation",
        "path",
        "paths",
        "pathspec",
        "pattern",
        "src",
        "target_ref",
    ];
}
