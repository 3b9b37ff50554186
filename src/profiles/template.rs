//! `{name}` templates (messages and texts) and `$slot` envelope shapes.

use serde_json::Value;

/// Fills each `{name}` with `lookup(name)`; a name it does not know becomes nothing (the unit
/// tests render every template of every profile, so none is left unknown). A `{` without a
/// closing `}` is kept as it is.
pub fn render(template: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if is_name(&after[..close]) => {
                out.push_str(&lookup(&after[..close]).unwrap_or_default());
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The placeholders a template uses.
#[cfg(test)]
pub fn names(template: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if is_name(&after[..close]) => {
                found.push(&after[..close]);
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    found
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// A JSON value as a template shows it: strings as they are, null as nothing, the rest as
/// JSON.
pub fn show(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Replaces each string that is exactly a `$slot` with `fill(slot)`.
pub fn fill_shape(shape: &Value, fill: &dyn Fn(&str) -> Option<Value>) -> Value {
    match shape {
        Value::String(s) if s.starts_with('$') => fill(s).unwrap_or(Value::Null),
        Value::Array(items) => Value::Array(items.iter().map(|i| fill_shape(i, fill)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill_shape(v, fill)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn placeholders_are_filled_and_braces_kept() {
        let lookup = |n: &str| match n {
            "path" => Some("a.txt".to_string()),
            "args.path" => Some("./a.txt".to_string()),
            _ => None,
        };
        assert_eq!(
            render("File not found: {args.path}", &lookup),
            "File not found: ./a.txt"
        );
        assert_eq!(render("{path} {missing}!", &lookup), "a.txt !");
        assert_eq!(
            render("json {\"a\": 1} {path", &lookup),
            "json {\"a\": 1} {path"
        );
        assert_eq!(names("x {a} {b.c} {not a name}"), vec!["a", "b.c"]);
    }

    #[test]
    fn shapes_fill_exact_slots_only() {
        let shape = json!({"ok": true, "data": "$data", "note": "costs $5", "list": ["$text"]});
        let filled = fill_shape(&shape, &|slot| match slot {
            "$data" => Some(json!({"a": 1})),
            "$text" => Some(json!("hi")),
            _ => None,
        });
        assert_eq!(
            filled,
            json!({"ok": true, "data": {"a": 1}, "note": "costs $5", "list": ["hi"]})
        );
    }
}
