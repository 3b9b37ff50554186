//! The JSON Schema subset a Wasm tool's `input_schema` may use, and argument validation.
//!
//! The subset is the one the built-in tools' schemas keep to (see `specs.rs`): one `type` per
//! schema (no type arrays, no `null`), inline subschemas (no `$ref`, `anyOf`, `oneOf`,
//! `allOf`), a described property for every field. Every model provider accepts it, and a
//! validator for it is small enough to read: a keyword outside the subset is refused at load
//! (`manifest_invalid`), never skipped, so no constraint the author wrote goes unchecked.

use serde_json::{Map, Value};

/// Deepest nesting of schemas (and so of validated arguments).
const MAX_DEPTH: usize = 16;

/// Keywords every schema may have that constrain nothing.
const ANNOTATIONS: &[&str] = &["type", "description", "title", "default", "examples"];

fn allowed_keywords(kind: &str) -> &'static [&'static str] {
    match kind {
        "object" => &["properties", "required", "additionalProperties", "enum"],
        "array" => &["items", "minItems", "maxItems"],
        "string" => &["enum", "minLength", "maxLength"],
        "integer" | "number" => &["enum", "minimum", "maximum"],
        "boolean" => &["enum"],
        _ => &[],
    }
}

/// Checks a manifest's `input_schema`: an object schema in the subset. The error says where and
/// what (it follows "input_schema ").
pub fn check_input_schema(schema: &Value) -> Result<(), String> {
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => check(schema, "", 0),
        _ => Err("must be an object schema: {\"type\": \"object\", \"properties\": {...}}".into()),
    }?;
    let reserved = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key("tool_call"));
    if reserved {
        return Err(
            "may not have a property named tool_call: that name wraps a tool call \
                    ({\"tool_call\": {\"name\": ..., \"arguments\": ...}})"
                .into(),
        );
    }
    Ok(())
}

fn check(schema: &Value, at: &str, depth: usize) -> Result<(), String> {
    let shown = if at.is_empty() { "/" } else { at };
    if depth > MAX_DEPTH {
        return Err(format!("nests deeper than {MAX_DEPTH} levels at {shown}"));
    }
    let Some(map) = schema.as_object() else {
        return Err(format!("at {shown} is not a schema object"));
    };
    let kind = match map.get("type") {
        Some(Value::String(kind)) if !allowed_keywords(kind).is_empty() => kind.as_str(),
        Some(Value::String(kind)) => {
            return Err(format!(
                "at {shown} has type {kind:?}; use one of object, array, string, integer, \
                 number, boolean"
            ))
        }
        _ => {
            return Err(format!(
                "at {shown} needs a \"type\" that is one string (no type arrays, no null)"
            ))
        }
    };
    let allowed = allowed_keywords(kind);
    if let Some(key) = map
        .keys()
        .find(|k| !ANNOTATIONS.contains(&k.as_str()) && !allowed.contains(&k.as_str()))
    {
        return Err(format!(
            "at {shown} uses \"{key}\", which wsfs does not support for {kind}; supported: {}",
            [ANNOTATIONS, allowed].concat().join(", ")
        ));
    }
    if let Some(values) = map.get("enum") {
        match values.as_array() {
            Some(values) if !values.is_empty() => {
                if let Some(bad) = values.iter().find(|v| !has_type(v, kind)) {
                    return Err(format!(
                        "at {shown} lists {bad} in enum, which is not a {kind}"
                    ));
                }
            }
            _ => {
                return Err(format!(
                    "at {shown} has an enum that is not a non-empty array"
                ))
            }
        }
    }
    for key in ["minItems", "maxItems", "minLength", "maxLength"] {
        if map.get(key).is_some_and(|v| v.as_u64().is_none()) {
            return Err(format!("at {shown} has a {key} that is not a whole number"));
        }
    }
    for key in ["minimum", "maximum"] {
        if map.get(key).is_some_and(|v| !v.is_number()) {
            return Err(format!("at {shown} has a {key} that is not a number"));
        }
    }
    match kind {
        "object" => check_object(map, at, depth),
        "array" => match map.get("items") {
            Some(items) => check(items, &format!("{at}/items"), depth + 1),
            None => Err(format!("at {shown} is an array without \"items\"")),
        },
        _ => Ok(()),
    }
}

fn check_object(map: &Map<String, Value>, at: &str, depth: usize) -> Result<(), String> {
    let shown = if at.is_empty() { "/" } else { at };
    let properties = match map.get("properties") {
        None => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Err(format!("at {shown} has properties that are not an object")),
    };
    for (name, property) in &properties {
        let inner = format!("{at}/{name}");
        if property
            .get("description")
            .and_then(Value::as_str)
            .is_none()
        {
            return Err(format!(
                "at {inner} has no description: the model reads it to fill the argument"
            ));
        }
        check(property, &inner, depth + 1)?;
    }
    if let Some(required) = map.get("required") {
        let names = required.as_array().ok_or(format!(
            "at {shown} has a required that is not an array of names"
        ))?;
        for name in names {
            match name.as_str() {
                Some(name) if properties.contains_key(name) => {}
                _ => {
                    return Err(format!(
                        "at {shown} requires {name}, which is not one of its properties"
                    ))
                }
            }
        }
    }
    if map
        .get("additionalProperties")
        .is_some_and(|v| !v.is_boolean())
    {
        return Err(format!(
            "at {shown} has an additionalProperties that is not true or false"
        ));
    }
    Ok(())
}

fn has_type(value: &Value, kind: &str) -> bool {
    match kind {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        _ => false,
    }
}

/// Validates arguments against a schema [`check_input_schema`] accepted. The error names the
/// first argument that does not fit, by its JSON pointer, and what was expected.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    validate_at(schema, value, "")
}

fn validate_at(schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let shown = if at.is_empty() { "the arguments" } else { at };
    let kind = schema.get("type").and_then(Value::as_str).unwrap_or("");
    if !has_type(value, kind) {
        return Err(format!(
            "{shown} must be {} (got {})",
            article(kind),
            describe(value)
        ));
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        if !values.contains(value) {
            let listed: Vec<String> = values.iter().map(Value::to_string).collect();
            return Err(format!("{shown} must be one of {}", listed.join(", ")));
        }
    }
    let bound = |key: &str| schema.get(key).and_then(Value::as_u64);
    match value {
        Value::String(s) => {
            let chars = s.chars().count() as u64;
            if bound("minLength").is_some_and(|min| chars < min)
                || bound("maxLength").is_some_and(|max| chars > max)
            {
                return Err(format!(
                    "{shown} has {chars} characters, outside {}",
                    range(bound("minLength"), bound("maxLength"))
                ));
            }
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            let min = schema.get("minimum").and_then(Value::as_f64);
            let max = schema.get("maximum").and_then(Value::as_f64);
            if min.is_some_and(|min| x < min) || max.is_some_and(|max| x > max) {
                return Err(format!("{shown} is {n}, outside {}", range_f(min, max)));
            }
        }
        Value::Array(items) => {
            let len = items.len() as u64;
            if bound("minItems").is_some_and(|min| len < min)
                || bound("maxItems").is_some_and(|max| len > max)
            {
                return Err(format!(
                    "{shown} has {len} items, outside {}",
                    range(bound("minItems"), bound("maxItems"))
                ));
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    validate_at(item_schema, item, &format!("{at}/{i}"))?;
                }
            }
        }
        Value::Object(fields) => validate_object(schema, fields, at)?,
        _ => {}
    }
    Ok(())
}

fn validate_object(schema: &Value, fields: &Map<String, Value>, at: &str) -> Result<(), String> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if !fields.contains_key(name) {
            return Err(format!("{at}/{name} is required but missing"));
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, field) in fields {
        match properties.get(name) {
            Some(property) => validate_at(property, field, &format!("{at}/{name}"))?,
            None if closed => {
                let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                return Err(format!(
                    "{at}/{name} is not an argument of this tool (it takes: {})",
                    known.join(", ")
                ));
            }
            None => {}
        }
    }
    Ok(())
}

fn article(kind: &str) -> String {
    match kind {
        "object" | "array" | "integer" => format!("an {kind}"),
        _ => format!("a {kind}"),
    }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn range(min: Option<u64>, max: Option<u64>) -> String {
    range_f(min.map(|v| v as f64), max.map(|v| v as f64))
}

fn range_f(min: Option<f64>, max: Option<f64>) -> String {
    match (min, max) {
        (Some(min), Some(max)) => format!("{min}..={max}"),
        (Some(min), None) => format!(">= {min}"),
        (None, Some(max)) => format!("<= {max}"),
        (None, None) => "the allowed range".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn word_schema() -> Value {
        json!({"type": "object", "additionalProperties": false, "required": ["text"],
               "properties": {
                 "text": {"type": "string", "description": "The text", "maxLength": 5},
                 "mode": {"type": "string", "description": "How", "enum": ["a", "b"]},
                 "n": {"type": "integer", "description": "Count", "minimum": 1},
                 "tags": {"type": "array", "description": "Tags", "maxItems": 2,
                          "items": {"type": "string"}}}})
    }

    #[test]
    fn the_subset_is_accepted_and_everything_else_refused() {
        check_input_schema(&word_schema()).unwrap();
        let refused = [
            (json!({"type": "string"}), "object schema"),
            (
                json!({"type": "object", "properties": {"a": {"type": ["string", "null"],
                    "description": "x"}}}),
                "one string",
            ),
            (
                json!({"type": "object", "properties": {"a": {"$ref": "#/x",
                    "description": "x"}}}),
                "type",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string",
                    "description": "x", "pattern": "^a"}}}),
                "pattern",
            ),
            (json!({"type": "object", "oneOf": []}), "oneOf"),
            (
                json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                "description",
            ),
            (
                json!({"type": "object", "properties": {}, "required": ["b"]}),
                "requires",
            ),
            (
                json!({"type": "object", "properties": {"tool_call": {"type": "object",
                    "description": "x"}}}),
                "tool_call",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "array",
                    "description": "x"}}}),
                "items",
            ),
        ];
        for (schema, named) in refused {
            let e = check_input_schema(&schema).unwrap_err();
            assert!(e.contains(named), "{schema}: {e}");
        }
        let mut deep = json!({"type": "string"});
        for _ in 0..20 {
            deep = json!({"type": "array", "items": deep});
        }
        let nested = json!({"type": "object", "properties": {"d": {"type": "array",
                            "description": "d", "items": deep}}});
        assert!(check_input_schema(&nested).unwrap_err().contains("deeper"));
    }

    #[test]
    fn arguments_are_validated_with_a_pointer_to_the_problem() {
        let schema = word_schema();
        validate(
            &schema,
            &json!({"text": "hi", "mode": "a", "n": 2, "tags": ["x"]}),
        )
        .unwrap();
        let cases = [
            (json!([]), "the arguments must be an object"),
            (json!({}), "/text is required"),
            (json!({"text": 1}), "/text must be a string (got a number)"),
            (json!({"text": "toolong"}), "/text has 7 characters"),
            (
                json!({"text": "a", "mode": "c"}),
                "/mode must be one of \"a\", \"b\"",
            ),
            (json!({"text": "a", "n": 0}), "/n is 0"),
            (json!({"text": "a", "n": 1.5}), "/n must be an integer"),
            (
                json!({"text": "a", "tags": [1]}),
                "/tags/0 must be a string",
            ),
            (
                json!({"text": "a", "tags": ["a", "b", "c"]}),
                "/tags has 3 items",
            ),
            (
                json!({"text": "a", "x": 1}),
                "/x is not an argument of this tool (it takes:",
            ),
        ];
        for (args, expected) in cases {
            let e = validate(&schema, &args).unwrap_err();
            assert!(e.contains(expected), "{args}: {e}");
        }
    }
}
