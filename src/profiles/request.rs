//! A public call -> the native call: the arguments are checked against the profile's schema
//! (so a mistake is reported in the profile's names), the profile's own refusals are made
//! (a `..` component, a value outside an enum or an empty string with its own code), and the
//! arguments are renamed, defaulted, capped, mapped and completed with the fixed ones.

use super::format::{ArgData, Ordered};
use super::model::{Op, Profile, ProfileTool};
use super::template;
use crate::tools::contract::expected_shape;
use serde_json::{Map, Value};

/// A call ready to run natively.
#[derive(Debug)]
pub struct Prepared<'p> {
    pub tool: &'p ProfileTool,
    pub op: &'p Op,
    /// The public arguments as given, with the profile's defaults filled in.
    pub args: Map<String, Value>,
    pub native_args: Map<String, Value>,
}

/// Why a call did not reach the native tool.
#[derive(Debug)]
pub struct Refused<'p> {
    pub tool: Option<&'p ProfileTool>,
    pub args: Map<String, Value>,
    pub error: RefusedBy,
}

#[derive(Debug, PartialEq, Eq)]
pub enum RefusedBy {
    /// A native code (`invalid_arguments`, `unknown_tool`), mapped like a native error.
    Native { code: &'static str, message: String },
    /// The profile's own code, as it is.
    Profile { code: String, message: String },
}

impl Profile {
    pub fn prepare<'p>(
        &'p self,
        tool: &str,
        args_json: &str,
    ) -> Result<Prepared<'p>, Box<Refused<'p>>> {
        let refuse = |tool, args, error| Box::new(Refused { tool, args, error });
        let Some(found) = self.tools.iter().find(|t| t.name == tool) else {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
            let shown: String = tool.chars().take(64).collect();
            let message = format!(
                "there is no tool named '{shown}'; the tools are {}",
                names.join(", ")
            );
            return Err(refuse(None, Map::new(), native("unknown_tool", message)));
        };
        let given = match crate::json::parse_object::<Map<String, Value>>(args_json) {
            Ok(given) => given,
            Err(e) => {
                let message = invalid(found, &e);
                return Err(refuse(
                    Some(found),
                    Map::new(),
                    native("invalid_arguments", message),
                ));
            }
        };
        let checked = self
            .profile_refusals(found, &given)
            .and_then(|()| check_value(&Value::Object(given.clone()), &found.parameters, ""))
            .map_err(|e| match e {
                Problem::Shape(m) => native("invalid_arguments", invalid(found, &m)),
                Problem::Refusal(by) => by,
            })
            .and_then(|()| choose_op(found, &given));
        let op = match checked {
            Ok(op) => op,
            Err(error) => return Err(refuse(Some(found), given, error)),
        };
        let args = with_defaults(&found.args, given);
        let mut native_args = to_native(&found.args, &args, op);
        for (k, v) in &op.fixed {
            native_args.insert(k.clone(), v.clone());
        }
        native_args.retain(|k, _| !super::model::pending_native_arg(&op.native, k));
        Ok(Prepared {
            tool: found,
            op,
            args,
            native_args,
        })
    }

    /// The refusals the profile makes with its own codes, before the schema check.
    fn profile_refusals(
        &self,
        tool: &ProfileTool,
        given: &Map<String, Value>,
    ) -> Result<(), Problem> {
        if let Some(rule) = &self.dotdot {
            check_paths(&tool.args, given, &|arg, value| {
                let lookup = |n: &str| match n {
                    "arg" => Some(arg.to_string()),
                    "value" => Some(value.to_string()),
                    "tool" => Some(tool.name.clone()),
                    _ => None,
                };
                RefusedBy::Profile {
                    code: rule.code.clone(),
                    message: template::render(&rule.message, &lookup),
                }
            })
            .map_err(Problem::Refusal)?;
        }
        for (name, arg) in tool.args.iter() {
            let Some(value) = given.get(name) else {
                continue;
            };
            if let (Some(code), Some(allowed)) = (&arg.invalid_code, &arg.allowed) {
                if !allowed.contains(value) {
                    let list: Vec<String> = allowed.iter().map(template::show).collect();
                    return Err(Problem::Refusal(RefusedBy::Profile {
                        code: code.clone(),
                        message: format!("{name} must be one of {}; got {value}", list.join(", ")),
                    }));
                }
            }
            if let (Some(code), Some("")) = (&arg.empty_code, value.as_str()) {
                return Err(Problem::Refusal(RefusedBy::Profile {
                    code: code.clone(),
                    message: format!("{name} must not be empty: give the exact text to find"),
                }));
            }
        }
        Ok(())
    }
}

fn native(code: &'static str, message: String) -> RefusedBy {
    RefusedBy::Native { code, message }
}

fn invalid(tool: &ProfileTool, problem: &str) -> String {
    format!(
        "invalid arguments for {}: {problem}; expected {}",
        tool.name,
        expected_shape(&tool.parameters)
    )
}

enum Problem {
    Shape(String),
    Refusal(RefusedBy),
}

/// Refuses the first path argument (nested ones included) with a `..` component.
fn check_paths(
    args: &Ordered<ArgData>,
    given: &Map<String, Value>,
    refusal: &dyn Fn(&str, &str) -> RefusedBy,
) -> Result<(), RefusedBy> {
    for (name, arg) in args.iter() {
        let Some(value) = given.get(name) else {
            continue;
        };
        if let (true, Some(path)) = (arg.path, value.as_str()) {
            if path.split('/').any(|c| c == "..") {
                return Err(refusal(name, path));
            }
        }
        if let (Some(items), Some(list)) = (&arg.items, value.as_array()) {
            for item in list.iter().filter_map(Value::as_object) {
                check_paths(items, item, refusal)?;
            }
        }
    }
    Ok(())
}

/// The subset of JSON Schema the specs use: `type`, `properties`, `required`,
/// `additionalProperties: false`, `items`, `enum`, `minimum`. (`maximum` caps, it does not
/// refuse: see `to_native`.)
fn check_value(value: &Value, schema: &Value, at: &str) -> Result<(), Problem> {
    let here = |name: &str| {
        if at.is_empty() {
            name.to_string()
        } else {
            format!("{at}.{name}")
        }
    };
    let shown = if at.is_empty() { "the arguments" } else { at };
    let kind = schema["type"].as_str().unwrap_or("");
    let fits = match kind {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_u64() || value.is_i64(),
        "number" => value.is_number(),
        _ => true,
    };
    if !fits {
        return Err(Problem::Shape(format!("{shown} must be {}", a(kind))));
    }
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(value) {
            let list: Vec<String> = allowed.iter().map(template::show).collect();
            return Err(Problem::Shape(format!(
                "{shown} must be one of {}; got {value}",
                list.join(", ")
            )));
        }
    }
    if let (Some(min), Some(n)) = (schema["minimum"].as_f64(), value.as_f64()) {
        if n < min {
            return Err(Problem::Shape(format!(
                "{shown} must be at least {min}; got {n}"
            )));
        }
    }
    if let Some(map) = value.as_object() {
        let props = schema["properties"].as_object();
        if schema["additionalProperties"] == false {
            if let Some(unknown) = map
                .keys()
                .find(|k| props.is_none_or(|p| !p.contains_key(*k)))
            {
                return Err(Problem::Shape(format!("unknown field `{}`", here(unknown))));
            }
        }
        for req in schema["required"].as_array().into_iter().flatten() {
            let req = req.as_str().unwrap_or_default();
            if !map.contains_key(req) {
                return Err(Problem::Shape(format!("missing field `{}`", here(req))));
            }
        }
        for (k, v) in map {
            if let Some(prop) = props.and_then(|p| p.get(k)) {
                check_value(v, prop, &here(k))?;
            }
        }
    }
    if let (Some(items), Some(list)) = (schema.get("items"), value.as_array()) {
        for (i, item) in list.iter().enumerate() {
            check_value(
                item,
                items,
                &format!("{}[{i}]", if at.is_empty() { "items" } else { at }),
            )?;
        }
    }
    Ok(())
}

fn a(kind: &str) -> String {
    match kind {
        "object" | "array" | "integer" => format!("an {kind}"),
        _ => format!("a {kind}"),
    }
}

/// The operation the call runs: the only one, or the one its selector names. Checks the
/// argument groups and what the operation takes.
fn choose_op<'p>(tool: &'p ProfileTool, given: &Map<String, Value>) -> Result<&'p Op, RefusedBy> {
    for group in &tool.one_of {
        let n = group.iter().filter(|a| given.contains_key(*a)).count();
        if n != 1 {
            let message = format!(
                "{}: give exactly one of {} (got {n})",
                tool.name,
                group.join(" or ")
            );
            return Err(native("invalid_arguments", message));
        }
    }
    let Some(sel) = &tool.selector else {
        return tool.op("").ok_or_else(|| {
            native(
                "invalid_arguments",
                format!("{} has no operation", tool.name),
            )
        });
    };
    // The schema check has made the selector a string from its enum.
    let key = given.get(sel).and_then(Value::as_str).unwrap_or_default();
    let op = tool.op(key).ok_or_else(|| {
        native(
            "invalid_arguments",
            format!("{}: unknown {sel} '{key}'", tool.name),
        )
    })?;
    if let Some(extra) = given.keys().find(|k| *k != sel && !op.args.contains(k)) {
        return Err(native(
            "invalid_arguments",
            format!(
                "{}: {extra} is not used by {sel} \"{key}\", which takes {}",
                tool.name,
                op.args.join(", ")
            ),
        ));
    }
    if let Some(missing) = op.required.iter().find(|r| !given.contains_key(*r)) {
        return Err(native(
            "invalid_arguments",
            format!("{}: {missing} is required for {sel} \"{key}\"", tool.name),
        ));
    }
    Ok(op)
}

fn with_defaults(args: &Ordered<ArgData>, mut given: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (name, arg) in args.iter() {
        match given.remove(name) {
            Some(v) => {
                out.insert(name.clone(), v);
            }
            None => {
                if let Some(d) = &arg.default {
                    out.insert(name.clone(), d.clone());
                }
            }
        }
    }
    out
}

/// The native arguments of `op`: renamed, capped, value-mapped (nested items too).
fn to_native(args: &Ordered<ArgData>, given: &Map<String, Value>, op: &Op) -> Map<String, Value> {
    let mut out = Map::new();
    for (name, arg) in args.iter().filter(|(n, _)| op.args.contains(n)) {
        if let Some(value) = given.get(name) {
            let native = arg.native.as_deref().unwrap_or(name);
            out.insert(native.to_string(), native_value(arg, value));
        }
    }
    out
}

fn native_value(arg: &ArgData, value: &Value) -> Value {
    if let Some((_, mapped)) = arg.values.iter().find(|(public, _)| public == value) {
        return mapped.clone();
    }
    if let (Some(max), Some(n)) = (arg.maximum, value.as_u64()) {
        if n > max {
            return Value::from(max);
        }
    }
    match (&arg.items, value) {
        (Some(items), Value::Array(list)) => Value::Array(
            list.iter()
                .map(|item| match item {
                    Value::Object(map) => Value::Object(
                        map.iter()
                            .map(|(k, v)| match items.get(k) {
                                Some(spec) => (
                                    spec.native.clone().unwrap_or_else(|| k.clone()),
                                    native_value(spec, v),
                                ),
                                None => (k.clone(), v.clone()),
                            })
                            .collect(),
                    ),
                    other => other.clone(),
                })
                .collect(),
        ),
        _ => value.clone(),
    }
}
