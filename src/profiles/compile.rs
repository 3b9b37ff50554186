//! Checks a profile's data against the native tool specs and builds what the engine uses:
//! each public tool with its operations and its JSON Schema. Every mistake in a data file
//! (a native tool or argument that does not exist, an operation without a native tool, a
//! field rule for a transform that needs a parameter, ...) is an error naming the place, so a
//! profile that compiles in the unit tests compiles at run time.

use super::format::{
    ArgData, EnvelopeShape, FieldData, OpData, Ordered, ProfileData, ToolData, Transform,
};
use super::model::{Op, Profile, ProfileTool};
use super::rewrite::Rewrites;
use super::specs;
use serde_json::{Map, Value};

/// Builds a profile from its data; `native_specs` is `wsfs_tool_specs()`'s array.
pub fn compile(data: ProfileData, native_specs: &Value) -> Result<Profile, String> {
    let at = |m: String| format!("profile {}: {m}", data.name);
    if data.native {
        return Err(at(
            "a native profile has no engine and is never compiled".into()
        ));
    }
    let envelope = data
        .envelope
        .ok_or_else(|| at("an envelope is required".into()))?;
    check_envelope(&envelope).map_err(at)?;
    let mut tools = Vec::new();
    for tool in data.tools {
        let name = tool.name.clone();
        tools.push(compile_tool(tool, native_specs).map_err(|e| at(format!("tool {name}: {e}")))?);
    }
    if data.other_native_tools {
        let taken: Vec<String> = tools
            .iter()
            .filter(|t| !t.alias)
            .flat_map(|t| t.ops.iter().map(|(_, op)| op.native.clone()))
            .collect();
        for spec in native_specs.as_array().into_iter().flatten() {
            let name = spec["name"].as_str().unwrap_or_default();
            if !taken.iter().any(|t| t == name) && !tools.iter().any(|t| t.name == name) {
                tools.push(native_passthrough(spec)?);
            }
        }
    }
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(at(format!("two tools are named {}", w[0])));
    }
    let global = tool_name_rewrites(&tools);
    for tool in &mut tools {
        tool.rewrites = with_args(&global, tool);
    }
    Ok(Profile {
        name: data.name,
        description: data.description,
        envelope,
        error_case: data.error_case,
        errors: data.errors,
        dotdot: data.paths.dotdot,
        warnings: data.warnings,
        defaults: data.defaults,
        offer_refused_writes: data.offer_refused_writes,
        tools,
    })
}

const SLOTS: &[&str] = &[
    "$data",
    "$text",
    "$warnings",
    "$artifacts",
    "$code",
    "$message",
    "$error_text",
];

fn check_envelope(shape: &EnvelopeShape) -> Result<(), String> {
    fn walk(v: &Value, allowed: &[&str]) -> Result<(), String> {
        match v {
            Value::String(s) if s.starts_with('$') && !allowed.contains(&s.as_str()) => {
                Err(format!("envelope: unknown slot {s}"))
            }
            Value::Array(items) => items.iter().try_for_each(|i| walk(i, allowed)),
            Value::Object(map) => map.values().try_for_each(|i| walk(i, allowed)),
            _ => Ok(()),
        }
    }
    walk(&shape.success, &SLOTS[..4])?;
    walk(&shape.failure, &SLOTS[4..])
}

fn native_spec<'a>(native_specs: &'a Value, name: &str) -> Result<&'a Value, String> {
    native_specs
        .as_array()
        .and_then(|specs| specs.iter().find(|s| s["name"] == name))
        .ok_or_else(|| format!("there is no native tool {name}"))
}

fn compile_tool(tool: ToolData, native_specs: &Value) -> Result<ProfileTool, String> {
    let ToolData {
        name,
        description,
        args,
        required,
        one_of,
        selector,
        operations,
        alias,
        op,
    } = tool;
    let ops = match (&selector, operations) {
        (None, None) => {
            let all: Vec<String> = args.keys().cloned().collect();
            vec![(String::new(), compile_op(op, all, Vec::new())?)]
        }
        (Some(sel), Some(operations)) => {
            if op.native.is_some() || op.result.is_some() || op.text.is_some() {
                return Err(
                    "a tool with operations sets native, result and text per operation".into(),
                );
            }
            let Some(arg) = args.get(sel) else {
                return Err(format!("the selector {sel} is not an argument"));
            };
            if arg.schema.is_none() {
                return Err(format!("the selector {sel} needs a schema"));
            }
            let mut ops = Vec::new();
            for (key, data) in operations.0 {
                for a in data.args.iter().chain(&data.required) {
                    if args.get(a).is_none() || a == sel {
                        return Err(format!("operation {key}: {a} is not one of its arguments"));
                    }
                }
                let compiled = compile_op(data.op, data.args, data.required)
                    .map_err(|e| format!("operation {key}: {e}"))?;
                ops.push((key, compiled));
            }
            ops
        }
        _ => return Err("selector and operations come together".into()),
    };
    for (_, op) in &ops {
        check_op(op, &args, native_specs)?;
    }
    check_nested(&args, "")?;
    for group in &one_of {
        if let Some(a) = group.iter().find(|a| args.get(a).is_none()) {
            return Err(format!("one_of names {a}, which is not an argument"));
        }
    }
    let parameters = specs::parameters(&args, required.as_deref(), &ops, native_specs)?;
    let annotations = specs::annotations(&ops, native_specs)?;
    Ok(ProfileTool {
        name,
        description,
        args,
        one_of,
        parameters,
        annotations,
        selector,
        ops,
        alias,
        rewrites: Rewrites::default(),
    })
}

/// Nested arguments (an array's items) are renamed, mapped, capped and checked against the
/// schema, but get no defaults and no codes of their own: refuse data that expects them.
fn check_nested(args: &Ordered<ArgData>, at: &str) -> Result<(), String> {
    for (name, arg) in args.iter() {
        let here = format!("{at}{name}");
        if !at.is_empty()
            && (arg.default.is_some() || arg.invalid_code.is_some() || arg.empty_code.is_some())
        {
            return Err(format!(
                "argument {here}: an item's argument takes no default, invalid_code or empty_code"
            ));
        }
        if let Some(items) = &arg.items {
            check_nested(items, &format!("{here}[]."))?;
        }
    }
    Ok(())
}

fn compile_op(op: OpData, args: Vec<String>, required: Vec<String>) -> Result<Op, String> {
    let native = op.native.ok_or("native (the tool it runs) is required")?;
    let limits = wsfs_core::config::Limits::default();
    if let Some(r) = op
        .refuse_when
        .iter()
        .find(|r| limits.get(&r.above_limit).is_none())
    {
        return Err(format!(
            "refuse_when names the limit {:?}, which is not one of the workspace limits",
            r.above_limit
        ));
    }
    Ok(Op {
        native,
        args,
        required,
        fixed: op.fixed.unwrap_or_default(),
        result: op.result,
        text: op.text,
        errors: op.errors,
        notices_as_warnings: op.notices_as_warnings,
        artifacts: op.artifacts,
        refuse_when: op.refuse_when,
    })
}

/// Every native argument an operation sends must exist in the native schema, except those the
/// gap list of the tests names (behaviour the native tools gain in phase 2).
fn check_op(op: &Op, args: &Ordered<ArgData>, native_specs: &Value) -> Result<(), String> {
    let spec = native_spec(native_specs, &op.native)?;
    for (name, arg) in args.iter().filter(|(n, _)| op.args.contains(n)) {
        if arg.schema.is_none() {
            let native = arg.native.as_deref().unwrap_or(name);
            let exists = !spec["parameters"]["properties"][native].is_null();
            if !exists && !super::model::pending_native_arg(&op.native, native) {
                return Err(format!(
                    "argument {name}: {} has no argument {native}",
                    op.native
                ));
            }
        }
        if !arg.values.is_empty() && arg.schema.is_none() {
            return Err(format!(
                "argument {name} maps values, so it needs its own schema"
            ));
        }
    }
    for key in op.fixed.keys() {
        let exists = !spec["parameters"]["properties"][key].is_null();
        if !exists && !super::model::pending_native_arg(&op.native, key) {
            return Err(format!("fixed {key}: {} has no such argument", op.native));
        }
    }
    if let Some(result) = &op.result {
        check_fields(result)?;
    }
    Ok(())
}

fn check_fields(fields: &Ordered<FieldData>) -> Result<(), String> {
    for (name, field) in fields.iter() {
        let FieldData::Rule(rule) = field else {
            continue;
        };
        let needs_field = rule.transform == Some(Transform::Pluck);
        if needs_field != rule.field.is_some() {
            return Err(format!(
                "result {name}: `field` goes with the pluck transform, and only with it"
            ));
        }
        if let Some(items) = &rule.items {
            check_fields(items).map_err(|e| format!("result {name}[]: {e}"))?;
        }
    }
    Ok(())
}

/// A native tool offered as it is, under the profile's envelope and codes.
fn native_passthrough(spec: &Value) -> Result<ProfileTool, String> {
    let name = spec["name"].as_str().unwrap_or_default().to_string();
    let props = spec["parameters"]["properties"]
        .as_object()
        .ok_or_else(|| format!("native tool {name} has no properties"))?;
    let args = Ordered(
        props
            .keys()
            .map(|k| (k.clone(), ArgData::default()))
            .collect(),
    );
    let op = Op {
        native: name.clone(),
        args: props.keys().cloned().collect(),
        required: Vec::new(),
        fixed: Map::new(),
        result: None,
        text: None,
        errors: Vec::new(),
        notices_as_warnings: false,
        artifacts: Vec::new(),
        refuse_when: Vec::new(),
    };
    Ok(ProfileTool {
        description: spec["description"].as_str().unwrap_or_default().to_string(),
        args,
        one_of: Vec::new(),
        parameters: spec["parameters"].clone(),
        annotations: spec["annotations"].clone(),
        selector: None,
        ops: vec![(String::new(), op)],
        alias: false,
        rewrites: Rewrites::default(),
        name,
    })
}

/// Every native tool a profile tool runs, as the profile names it. A native tool run by
/// two profile tools is left alone (neither name would be right).
fn tool_name_rewrites(tools: &[ProfileTool]) -> Rewrites {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut ambiguous: Vec<String> = Vec::new();
    for tool in tools.iter().filter(|t| !t.alias) {
        for (key, op) in &tool.ops {
            if op.native == tool.name && tool.selector.is_none() {
                continue;
            }
            let public = match &tool.selector {
                Some(sel) => format!("{} ({sel} \"{key}\")", tool.name),
                None => tool.name.clone(),
            };
            if pairs.iter().any(|(n, _)| *n == op.native) {
                ambiguous.push(op.native.clone());
            }
            pairs.push((op.native.clone(), public));
        }
    }
    pairs.retain(|(n, _)| !ambiguous.contains(n));
    Rewrites::new(pairs)
}

/// These rewrites plus `tool`'s own renamed arguments (nested ones included).
fn with_args(global: &Rewrites, tool: &ProfileTool) -> Rewrites {
    let mut pairs = global.pairs().to_vec();
    let mut add = |public: &str, native: Option<&str>| {
        if let Some(native) = native.filter(|n| *n != public && n.contains('_')) {
            if !pairs.iter().any(|(n, _)| n == native) {
                pairs.push((native.to_string(), public.to_string()));
            }
        }
    };
    fn walk(args: &Ordered<ArgData>, add: &mut dyn FnMut(&str, Option<&str>)) {
        for (public, arg) in args.iter() {
            add(public, arg.native.as_deref());
            if let Some(items) = &arg.items {
                walk(items, add);
            }
        }
    }
    walk(&tool.args, &mut add);
    // Longest first, so a name is never replaced inside a longer one it starts.
    pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
    Rewrites::new(pairs)
}
