//! Strict JSON decoding of argument objects. serde accepts a JSON array for a struct
//! (positionally), so `["a.txt", "x"]` would pass as `{path, content}`; every wsfs input is an
//! object, and anything else is refused before serde sees it.

use serde::de::DeserializeOwned;

/// Decodes `json` into `T`, requiring a JSON object. The error is serde's, or says what the
/// top-level value was.
pub fn parse_object<T: DeserializeOwned>(json: &str) -> Result<T, String> {
    match json.trim_start().as_bytes().first() {
        Some(b'{') => serde_json::from_str(json).map_err(|e| e.to_string()),
        Some(b'[') => Err("expected a JSON object, got an array".to_string()),
        None => Err("expected a JSON object, got nothing".to_string()),
        Some(_) => match serde_json::from_str::<serde_json::Value>(json) {
            Ok(value) => Err(format!("expected a JSON object, got {}", kind(&value))),
            Err(e) => Err(e.to_string()),
        },
    }
}

fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Pair {
        a: String,
        b: String,
    }

    #[test]
    fn only_objects_decode() {
        assert!(parse_object::<Pair>(r#" {"a":"1","b":"2"}"#).is_ok());
        let err = parse_object::<Pair>(r#"["1","2"]"#).unwrap_err();
        assert!(err.contains("array"), "{err}");
        assert!(parse_object::<Pair>("42").unwrap_err().contains("number"));
        assert!(parse_object::<Pair>("").unwrap_err().contains("nothing"));
        assert!(parse_object::<Pair>("{").is_err());
    }
}
