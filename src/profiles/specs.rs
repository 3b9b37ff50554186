//! A profile tool's JSON Schema and annotations, derived from the native tools' specs: each
//! public argument takes its native property's schema (renamed, nested items too), with the
//! profile's description, default, bounds and allowed values laid over it.

use super::format::{ArgData, Ordered};
use super::model::Op;
use serde_json::{json, Map, Value};

/// The `parameters` schema of a public tool.
pub fn parameters(
    args: &Ordered<ArgData>,
    required: Option<&[String]>,
    ops: &[(String, Op)],
    native_specs: &Value,
) -> Result<Value, String> {
    let mut properties = Map::new();
    for (name, arg) in args.iter() {
        let native = native_property(name, arg, ops, native_specs)?;
        let schema = arg_schema(name, arg, native.as_ref())?;
        properties.insert(name.clone(), schema);
    }
    let required: Vec<String> = match required {
        Some(list) => {
            if let Some(r) = list.iter().find(|r| args.get(r).is_none()) {
                return Err(format!("required {r} is not an argument"));
            }
            list.to_vec()
        }
        None => derived_required(args, ops, native_specs),
    };
    Ok(json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    }))
}

/// The native tool's required arguments that the profile exposes without a default.
fn derived_required(args: &Ordered<ArgData>, ops: &[(String, Op)], specs: &Value) -> Vec<String> {
    let Some((_, op)) = ops.first() else {
        return Vec::new();
    };
    let native_required = specs
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == op.native.as_str()))
        .and_then(|s| s["parameters"]["required"].as_array())
        .cloned()
        .unwrap_or_default();
    args.iter()
        .filter(|(name, arg)| {
            let native = arg.native.as_deref().unwrap_or(name);
            arg.default.is_none() && native_required.iter().any(|r| r == native)
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// The native property an argument fills: in the first operation that takes it.
fn native_property(
    name: &str,
    arg: &ArgData,
    ops: &[(String, Op)],
    specs: &Value,
) -> Result<Option<Value>, String> {
    if arg.schema.is_some() {
        return Ok(None);
    }
    let native = arg.native.as_deref().unwrap_or(name);
    for (_, op) in ops
        .iter()
        .filter(|(_, op)| op.args.iter().any(|a| a == name))
    {
        let spec = specs
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == op.native.as_str()));
        if let Some(prop) = spec.map(|s| &s["parameters"]["properties"][native]) {
            if !prop.is_null() {
                return Ok(Some(prop.clone()));
            }
        }
    }
    Err(format!(
        "argument {name}: no native property {native} to take its schema from; give `schema`"
    ))
}

fn arg_schema(name: &str, arg: &ArgData, native: Option<&Value>) -> Result<Value, String> {
    let mut schema = match (&arg.schema, native) {
        (Some(own), _) => own.clone(),
        (None, Some(native)) => native.clone(),
        (None, None) => return Err(format!("argument {name}: no schema")),
    };
    let Some(map) = schema.as_object_mut() else {
        return Err(format!("argument {name}: the schema is not an object"));
    };
    if let Some(d) = &arg.description {
        map.insert("description".into(), json!(d));
    }
    match &arg.default {
        Some(d) => {
            map.insert("default".into(), d.clone());
        }
        // A native default the profile does not keep would mislead the model.
        None if native.is_some() => {
            map.remove("default");
        }
        None => {}
    }
    if let Some(max) = arg.maximum {
        map.insert("maximum".into(), json!(max));
    }
    if let Some(min) = arg.minimum {
        map.insert("minimum".into(), json!(min));
    }
    if let Some(allowed) = &arg.allowed {
        map.insert("enum".into(), json!(allowed));
    }
    if let Some(items) = &arg.items {
        let native_items = map
            .get("items")
            .cloned()
            .ok_or_else(|| format!("argument {name}: items given for a non-array"))?;
        map.insert("items".into(), item_schema(name, items, &native_items)?);
    }
    if map.get("description").and_then(Value::as_str).is_none() {
        return Err(format!("argument {name}: no description"));
    }
    Ok(schema)
}

/// An array item's object schema with the public property names.
fn item_schema(at: &str, items: &Ordered<ArgData>, native: &Value) -> Result<Value, String> {
    let native_props = &native["properties"];
    let native_required = native["required"].as_array().cloned().unwrap_or_default();
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, arg) in items.iter() {
        let native_name = arg.native.as_deref().unwrap_or(name);
        let prop = &native_props[native_name];
        let here = format!("{at}[].{name}");
        let native = (!prop.is_null()).then_some(prop);
        if native.is_none() && arg.schema.is_none() {
            return Err(format!("{here}: no native property {native_name}"));
        }
        properties.insert(name.clone(), arg_schema(&here, arg, native)?);
        if arg.default.is_none() && native_required.iter().any(|r| r == native_name) {
            required.push(name.clone());
        }
    }
    Ok(json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    }))
}

/// MCP annotations: read-only and idempotent only if every operation is; destructive if any is.
pub fn annotations(ops: &[(String, Op)], specs: &Value) -> Result<Value, String> {
    let mut read_only = true;
    let mut destructive = false;
    let mut idempotent = true;
    for (_, op) in ops {
        let spec = specs
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == op.native.as_str()))
            .ok_or_else(|| format!("there is no native tool {}", op.native))?;
        let a = &spec["annotations"];
        read_only &= a["readOnlyHint"] == true;
        destructive |= a["destructiveHint"] == true;
        idempotent &= a["idempotentHint"] == true;
    }
    Ok(json!({
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": false,
    }))
}
