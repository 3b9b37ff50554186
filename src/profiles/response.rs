//! The native result -> the profile's envelope: result fields selected, renamed and
//! converted; the text the profile prescribes; warnings and messages in the profile's words;
//! error codes mapped; all put in the profile's envelope shape.

use super::format::{ErrorCase, FieldData, Ordered, PathKind, TextData};
use super::model::{Op, Profile, ProfileTool};
use super::request::{Prepared, Refused, RefusedBy};
use super::template::{self, fill_shape, show};
use super::transforms::{self, Context};
use crate::tools::contract::{ToolOutput, Warning};
use serde_json::{json, Map, Value};

/// What a native call returned (its envelope, or the tool's result directly).
#[derive(Debug, Clone, PartialEq)]
pub enum NativeResult {
    /// `text` is the tool's own text, without the warnings the native envelope appends.
    Success {
        data: Value,
        text: String,
        warnings: Vec<String>,
    },
    Failure {
        code: String,
        message: String,
    },
}

/// The warning the native text already says ("overwrote ..."), so it is not appended to it.
const SAID_IN_TEXT: &str = crate::tools::write::OVERWRITE_WARNING;

impl NativeResult {
    /// Reads a native envelope (`output: "full"`).
    #[cfg(test)]
    pub fn from_envelope(json: &str) -> NativeResult {
        let Ok(v) = serde_json::from_str::<Value>(json) else {
            return NativeResult::Failure {
                code: "io_error".into(),
                message: "the native result could not be read (a bug; please report it)".into(),
            };
        };
        if v["ok"] == true {
            let warnings: Vec<String> = v["warnings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect();
            let mut text = v["text"].as_str().unwrap_or_default().to_string();
            for w in warnings.iter().rev().filter(|w| *w != SAID_IN_TEXT) {
                if let Some(stripped) = text.strip_suffix(&format!("\nwarning: {w}")) {
                    text.truncate(stripped.len());
                }
            }
            return NativeResult::Success {
                data: v["data"].clone(),
                text,
                warnings,
            };
        }
        NativeResult::Failure {
            code: v["error"]["code"]
                .as_str()
                .unwrap_or("io_error")
                .to_string(),
            message: v["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        }
    }
}

impl NativeResult {
    /// A native tool's output as the engine takes it, without the envelope around it: the
    /// text without the warnings the envelope appends to it.
    pub fn from_output(output: &dyn ToolOutput, warnings: &[Warning]) -> NativeResult {
        match serde_json::to_value(output) {
            Ok(data) => NativeResult::Success {
                data,
                text: output.text().into_owned(),
                warnings: warnings.iter().map(|w| w.message.clone()).collect(),
            },
            Err(e) => NativeResult::Failure {
                code: "io_error".into(),
                message: format!("the native result could not be encoded: {e}"),
            },
        }
    }
}

/// A failure in the profile's words: its envelope, and the code the envelope carries (what an
/// audit line of a call refused at the edge records).
pub struct Failure {
    pub envelope: Value,
    pub code: String,
}

impl Profile {
    /// The profile's answer to a call of `tool` refused at the ABI edge before anything
    /// ran, with a native `code`, mapped as the same failure of its native call would be.
    pub fn refuse(&self, tool: &str, code: &str, message: &str) -> Failure {
        let found = self.tools.iter().find(|t| t.name == tool);
        let op = found
            .filter(|t| t.selector.is_none())
            .and_then(|t| t.ops.first().map(|(_, op)| op));
        self.failure(found, op, &Map::new(), code, message)
    }

    /// The profile's envelope for a call that ran natively.
    pub fn finish(&self, call: &Prepared<'_>, native: NativeResult, cx: &Context<'_>) -> Value {
        match native {
            NativeResult::Success {
                data,
                text,
                warnings,
            } => match refusal(call, &data, cx) {
                Some((code, message)) => self.failure_envelope(code, &message),
                None => self.success(call, &data, &text, &warnings, cx),
            },
            NativeResult::Failure { code, message } => {
                let message = call.tool.rewrites.apply(&message);
                self.failure(Some(call.tool), Some(call.op), &call.args, &code, &message)
                    .envelope
            }
        }
    }

    /// The profile's answer to a call refused before it ran (its message is the engine's,
    /// already in the profile's words).
    pub fn refused(&self, refused: &Refused<'_>) -> Failure {
        match &refused.error {
            RefusedBy::Native { code, message } => {
                let op = refused.tool.and_then(|t| t.ops.first().map(|(_, op)| op));
                let op = op.filter(|_| refused.tool.is_some_and(|t| t.selector.is_none()));
                self.failure(refused.tool, op, &refused.args, code, message)
            }
            RefusedBy::Profile { code, message } => Failure {
                envelope: self.failure_envelope(code, message),
                code: code.clone(),
            },
        }
    }

    fn success(
        &self,
        call: &Prepared<'_>,
        data: &Value,
        text: &str,
        warnings: &[String],
        cx: &Context<'_>,
    ) -> Value {
        let op = call.op;
        let result = match &op.result {
            Some(fields) => Value::Object(map_fields(fields, data, &call.args, cx)),
            None => data.clone(),
        };
        let mut shown: Vec<String> = warnings
            .iter()
            .map(|w| call.tool.rewrites.apply(self.warnings.get(w).unwrap_or(w)))
            .collect();
        let notices = notices(data, text);
        let lookup = |name: &str| -> Option<String> {
            match name {
                "tool" => Some(call.tool.name.clone()),
                "text" => Some(text.to_string()),
                "notices" => Some(notices.join("\n")),
                _ => lookup_value(name, data, &call.args).map(show),
            }
        };
        let mut out = match &op.text {
            None => text.to_string(),
            Some(TextData::Template(t)) => template::render(t, &lookup),
            Some(TextData::Choice {
                field,
                then,
                otherwise,
            }) => {
                let chosen = if data[field] == true { then } else { otherwise };
                template::render(chosen, &lookup)
            }
            Some(TextData::Json(field)) => result[field].to_string(),
        };
        if !matches!(op.text, Some(TextData::Json(_))) {
            for (native, public) in warnings.iter().zip(&shown) {
                if native != SAID_IN_TEXT {
                    out.push_str("\nwarning: ");
                    out.push_str(public);
                }
            }
        }
        if op.notices_as_warnings {
            shown.extend(
                notices
                    .iter()
                    .map(|n| n.trim_start_matches('[').trim_end_matches(']').to_string()),
            );
        }
        let artifacts = artifacts(op, data, &result, &call.args);
        fill_shape(&self.envelope.success, &|slot| match slot {
            "$data" => Some(result.clone()),
            "$text" => Some(json!(out)),
            "$warnings" => Some(json!(shown)),
            "$artifacts" => Some(json!(artifacts)),
            _ => None,
        })
    }

    /// `message` is in the profile's words already.
    fn failure(
        &self,
        tool: Option<&ProfileTool>,
        op: Option<&Op>,
        args: &Map<String, Value>,
        code: &str,
        message: &str,
    ) -> Failure {
        let native_message = message.to_string();
        let rules = op.map(|op| op.errors.as_slice()).unwrap_or_default();
        let rule = rules.iter().chain(&self.errors).find(|r| {
            (r.native == "*" || r.native == code)
                && r.message_contains
                    .as_ref()
                    .is_none_or(|m| message.contains(m.as_str()))
                && r.paths.is_none_or(|kind| paths_are(kind, tool, args))
        });
        let public_code = match rule.and_then(|r| r.code.clone()) {
            Some(c) => c,
            None => match self.error_case {
                ErrorCase::AsIs => code.to_string(),
                ErrorCase::Upper => code.to_ascii_uppercase(),
            },
        };
        let public_message = match rule.and_then(|r| r.message.as_deref()) {
            None => native_message,
            Some(t) => {
                let lookup = |name: &str| -> Option<String> {
                    match name {
                        "message" => Some(native_message.clone()),
                        "code" => Some(public_code.clone()),
                        "tool" => tool.map(|t| t.name.clone()),
                        "did_you_mean" => Some(did_you_mean(&native_message).to_string()),
                        _ => name
                            .strip_prefix("args.")
                            .and_then(|a| args.get(a))
                            .map(show),
                    }
                };
                template::render(t, &lookup)
            }
        };
        Failure {
            envelope: self.failure_envelope(&public_code, &public_message),
            code: public_code,
        }
    }

    fn failure_envelope(&self, code: &str, message: &str) -> Value {
        fill_shape(&self.envelope.failure, &|slot| match slot {
            "$code" => Some(json!(code)),
            "$message" => Some(json!(message)),
            "$error_text" => Some(json!(format!("{code}: {message}"))),
            _ => None,
        })
    }
}

/// The first `refuse_when` of the call's operation that holds for the native `data`: its
/// code and message.
fn refusal<'p>(call: &Prepared<'p>, data: &Value, cx: &Context<'_>) -> Option<(&'p str, String)> {
    call.op.refuse_when.iter().find_map(|r| {
        let value = lookup_value(&r.field, data, &call.args)?.as_u64()?;
        let limit = cx.limits.get(&r.above_limit)?;
        (value > limit).then(|| {
            let lookup = |name: &str| -> Option<String> {
                match name {
                    "value" => Some(value.to_string()),
                    "limit" => Some(limit.to_string()),
                    "tool" => Some(call.tool.name.clone()),
                    _ => name
                        .strip_prefix("args.")
                        .and_then(|a| call.args.get(a))
                        .map(show),
                }
            };
            (r.code.as_str(), template::render(&r.message, &lookup))
        })
    })
}

/// Whether the call has path arguments and every one given is of `kind` (absolute: starting
/// with `/`).
fn paths_are(kind: PathKind, tool: Option<&ProfileTool>, args: &Map<String, Value>) -> bool {
    let Some(tool) = tool else {
        return false;
    };
    let mut given = tool
        .args
        .iter()
        .filter(|(_, arg)| arg.path)
        .filter_map(|(name, _)| args.get(name)?.as_str())
        .peekable();
    given.peek().is_some() && given.all(|p| p.starts_with('/') == (kind == PathKind::Absolute))
}

/// The `; did you mean ...?` tail a native `path_not_found` message may end with.
fn did_you_mean(message: &str) -> &str {
    message
        .rfind("; did you mean ")
        .map_or("", |at| &message[at..])
}

/// The native text's notices: what follows a read's content, or else its `[...]` lines.
pub fn notices(data: &Value, text: &str) -> Vec<String> {
    if let Some(content) = data["content"].as_str() {
        if let Some(rest) = text.strip_prefix(content) {
            return rest
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect();
        }
    }
    text.lines()
        .filter(|l| l.starts_with('[') && l.ends_with(']'))
        .map(str::to_string)
        .collect()
}

/// `args.<name>` (a public argument), `*` (the whole item), or a dot path into `item`.
fn lookup_value<'a>(
    name: &str,
    item: &'a Value,
    args: &'a Map<String, Value>,
) -> Option<&'a Value> {
    if let Some(arg) = name.strip_prefix("args.") {
        return args.get(arg);
    }
    if name == "*" {
        return Some(item);
    }
    let mut at = item;
    for part in name.split('.') {
        at = at.get(part)?;
    }
    Some(at)
}

fn map_fields(
    fields: &Ordered<FieldData>,
    item: &Value,
    args: &Map<String, Value>,
    cx: &Context<'_>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (name, field) in fields.iter() {
        let value = match field {
            FieldData::From(from) => lookup_value(from, item, args).cloned(),
            FieldData::Rule(rule) => {
                let own = [name.clone()];
                let sources = rule.from.as_ref().map_or(&own[..], |s| s.names());
                let mut value = sources
                    .iter()
                    .find_map(|s| lookup_value(s, item, args).filter(|v| !v.is_null()));
                if let Some(cond) = &rule.when {
                    if item[&cond.field] != cond.equals {
                        value = None;
                    }
                }
                let mut value = match rule.transform {
                    Some(t) => transforms::apply(t, value, rule.field.as_deref(), cx),
                    None => value.cloned(),
                };
                if let Some(v) = &mut value {
                    if let Some((_, public)) = rule.values.iter().find(|(n, _)| n == v) {
                        *v = public.clone();
                    }
                    if let (Some(items), Value::Array(list)) = (&rule.items, &*v) {
                        *v = Value::Array(
                            list.iter()
                                .map(|i| Value::Object(map_fields(items, i, args, cx)))
                                .collect(),
                        );
                    }
                }
                value.or_else(|| rule.default.clone())
            }
        };
        if let Some(v) = value {
            out.insert(name.clone(), v);
        }
    }
    out
}

fn artifacts(op: &Op, data: &Value, result: &Value, args: &Map<String, Value>) -> Vec<Value> {
    let mut out = Vec::new();
    for a in &op.artifacts {
        if a.when.as_ref().is_some_and(|w| data[w] != true) {
            continue;
        }
        let paths: Vec<&str> = match &result[&a.from] {
            Value::String(s) => vec![s.as_str()],
            Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let lookup = |name: &str| lookup_value(name, data, args).map(show);
        for path in paths {
            out.push(json!({
                "type": template::render(&a.kind, &lookup),
                "path": path,
                "description": template::render(&a.description, &lookup),
            }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_lose_their_appended_warnings() {
        let env = r#"{"ok":true,"data":{"path":"a"},"text":"wrote a\nwarning: slow disk","warnings":["file exists, overwriting","slow disk"]}"#;
        assert_eq!(
            NativeResult::from_envelope(env),
            NativeResult::Success {
                data: json!({"path": "a"}),
                text: "wrote a".into(),
                warnings: vec!["file exists, overwriting".into(), "slow disk".into()],
            }
        );
        let env = r#"{"ok":false,"error":{"code":"path_not_found","message":"x"},"text":"path_not_found: x"}"#;
        assert_eq!(
            NativeResult::from_envelope(env),
            NativeResult::Failure {
                code: "path_not_found".into(),
                message: "x".into()
            }
        );
        assert!(matches!(
            NativeResult::from_envelope("{"),
            NativeResult::Failure { .. }
        ));
    }

    #[test]
    fn notices_follow_content_or_stand_in_brackets() {
        let read = json!({"content": "[section]\na=1\n"});
        assert_eq!(
            notices(&read, "[section]\na=1\n[lines 1-2 of 2; end of file]"),
            vec!["[lines 1-2 of 2; end of file]"]
        );
        let list = json!({"entries": []});
        assert_eq!(
            notices(
                &list,
                ". (3 entries)\n[x]  3 B\n[truncated: showing the first 2 of 3 entries]"
            ),
            vec!["[truncated: showing the first 2 of 3 entries]"]
        );
        assert_eq!(
            did_you_mean("a does not exist; did you mean b?"),
            "; did you mean b?"
        );
        assert_eq!(did_you_mean("a does not exist"), "");
    }
}
