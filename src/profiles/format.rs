//! The profile data format: what each `src/profiles/data/<name>.json` holds, decoded strictly
//! (an unknown key is an error, so a misspelt key never silently leaves a default in force).
//! `compile.rs` checks it against the native tool specs and builds what the engine uses.
//!
//! A profile says, per tool, its public name, the native tool it runs (or, for a tool with an
//! `operation`-style selector, one native tool per operation), its arguments (renames,
//! defaults, values, caps, refusals), the result fields it returns, the text the model reads,
//! and, per profile, the error-code map, the envelope shape and the warnings' wording. The
//! full description, with an example, is in `src/profiles/README.md`.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

/// One profile file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileData {
    pub name: String,
    /// The design document the profile follows, for people (`shared/seeds/...`).
    #[serde(default)]
    #[allow(dead_code)] // for people: which design document the profile follows
    pub document: Option<String>,
    pub description: String,
    /// `true` only for `wsfs`: the native tools as they are. Nothing else may be set, and the
    /// engine is never used for it.
    #[serde(default)]
    pub native: bool,
    /// The envelope every call returns (absent for `native`).
    #[serde(default)]
    pub envelope: Option<EnvelopeShape>,
    /// How native error codes that no rule maps are spelt.
    #[serde(default)]
    pub error_case: ErrorCase,
    /// Error rules for every tool, after each tool's own; the first that matches decides.
    #[serde(default)]
    pub errors: Vec<ErrorRule>,
    /// Refusals of path arguments made before anything is resolved.
    #[serde(default)]
    pub paths: PathRules,
    /// Native warnings as the profile words them (warnings not listed pass as they are).
    #[serde(default)]
    pub warnings: Ordered<String>,
    /// Also offer every native tool that no profile tool runs, under its native name and
    /// arguments (with the profile's envelope and error codes).
    #[serde(default)]
    pub other_native_tools: bool,
    /// Workspace configuration the document's host defaults to (e.g. agent-base:
    /// `{"policy": {"writes_enabled": false}}`), merged under the host's at open: a key the
    /// host gives wins, at any depth.
    #[serde(default)]
    pub defaults: serde_json::Map<String, Value>,
    /// Offer the changing tools while writes are disabled, each answering `writes_disabled`
    /// (as the document specifies), instead of leaving them out of the specs.
    #[serde(default)]
    pub offer_refused_writes: bool,
    #[serde(default)]
    pub tools: Vec<ToolData>,
}

/// Templates of the two envelopes. A string value that is exactly one of the slots is
/// replaced: `$data` (the result), `$text` (what the model reads), `$warnings`, `$artifacts`,
/// `$code`, `$message`, `$error_text` (`"<code>: <message>"`). Everything else is literal.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvelopeShape {
    pub success: Value,
    pub failure: Value,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCase {
    /// `path_not_found`.
    #[default]
    AsIs,
    /// `PATH_NOT_FOUND`.
    Upper,
}

/// Maps a native error (by code, optionally by a phrase of its message) to the profile's code
/// and message.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorRule {
    /// A native code, or `*` for any.
    pub native: String,
    /// Only when the native message contains this (for codes that cover several cases).
    #[serde(default)]
    pub message_contains: Option<String>,
    /// The profile's code (default: the native code, spelt as `error_case` says).
    #[serde(default)]
    pub code: Option<String>,
    /// A template (default `{message}`): `{message}` (the native message, with native tool
    /// and argument names replaced by the profile's), `{code}`, `{tool}`, `{did_you_mean}`
    /// (the native message's `; did you mean ...?` tail, or nothing), `{args.<name>}`.
    #[serde(default)]
    pub message: Option<String>,
    /// Only when every path argument of the call is of this kind. With `..` refused at the
    /// edge, a relative path that leads outside can only do so through a symlink.
    #[serde(default)]
    pub paths: Option<PathKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    Relative,
    Absolute,
}

/// A native success the profile's document calls a failure: the number in the native data's
/// `field` is above the workspace limit `above_limit` (e.g. agent-base's `file_too_large`, a
/// file over `max_read_bytes`). `message` is a template: `{value}`, `{limit}` (the limit's
/// value), `{tool}`, `{args.<name>}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefuseWhen {
    pub field: String,
    pub above_limit: String,
    pub code: String,
    pub message: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathRules {
    /// Refuse a path argument with a `..` component before it is resolved.
    #[serde(default)]
    pub dotdot: Option<Refusal>,
}

/// A refusal made by the profile itself, with the profile's code. `message` is a template:
/// `{arg}` (the argument's name), `{value}` (the value given), `{tool}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    pub code: String,
    pub message: String,
}

/// One public tool. Either it runs one native tool (`native` and the fields after it), or
/// `selector` names the argument whose value picks one of `operations`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolData {
    pub name: String,
    pub description: String,
    /// The public arguments, in the order the schema lists them.
    pub args: Ordered<ArgData>,
    /// Required arguments (default: the native tool's required ones, renamed, less those
    /// with a default).
    #[serde(default)]
    pub required: Option<Vec<String>>,
    /// Groups of arguments of which exactly one must be given.
    #[serde(default)]
    pub one_of: Vec<Vec<String>>,
    #[serde(default)]
    pub selector: Option<String>,
    #[serde(default)]
    pub operations: Option<Ordered<OperationData>>,
    /// Another name for its native tool, which `other_native_tools` still offers under its
    /// own name (e.g. capability-plan's `file_read`); native names in messages are not
    /// rewritten to it.
    #[serde(default)]
    pub alias: bool,
    #[serde(flatten)]
    pub op: OpData,
}

/// One operation of a tool with a selector: which public arguments it takes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperationData {
    /// The public arguments this operation takes besides the selector; any other given is
    /// `invalid_arguments`.
    pub args: Vec<String>,
    /// Arguments this operation needs on top of the tool's required ones.
    #[serde(default)]
    pub required: Vec<String>,
    #[serde(flatten)]
    pub op: OpData,
}

/// What one native call is: the native tool, the arguments fixed for it, and how its result
/// becomes the profile's. (Flattened into `ToolData` and `OperationData`, so it cannot itself
/// refuse unknown keys; they do.)
#[derive(Debug, Default, Deserialize)]
pub struct OpData {
    #[serde(default)]
    pub native: Option<String>,
    /// Native arguments always sent with these values (the model cannot set them).
    #[serde(default)]
    pub fixed: Option<serde_json::Map<String, Value>>,
    /// The result fields, in order (absent: the native `data` as it is).
    #[serde(default)]
    pub result: Option<Ordered<FieldData>>,
    /// The text on success (absent: the native text).
    #[serde(default)]
    pub text: Option<TextData>,
    /// Error rules for this tool, before the profile's.
    #[serde(default)]
    pub errors: Vec<ErrorRule>,
    /// The native text's notices (`[...]` lines, or what follows a read's content) become
    /// warnings: for a text that must stay machine-readable, such as a JSON listing.
    #[serde(default)]
    pub notices_as_warnings: bool,
    #[serde(default)]
    pub artifacts: Vec<ArtifactData>,
    /// Native successes the document calls failures.
    #[serde(default)]
    pub refuse_when: Vec<RefuseWhen>,
}

/// One public argument.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgData {
    /// The native argument it fills (default: the same name). Absent from the native call
    /// when the argument selects an operation.
    #[serde(default)]
    pub native: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Used when the argument is absent (and shown in the schema).
    #[serde(default, deserialize_with = "present")]
    pub default: Option<Value>,
    /// The whole schema, for an argument with no native counterpart of the same type.
    #[serde(default)]
    pub schema: Option<Value>,
    /// Public value -> native value (`[[true, 60], [false, 1]]`).
    #[serde(default)]
    pub values: Vec<(Value, Value)>,
    /// Larger values are lowered to it (as the document caps them), not refused.
    #[serde(default)]
    pub maximum: Option<u64>,
    /// Smaller values are `invalid_arguments`.
    #[serde(default)]
    pub minimum: Option<u64>,
    /// The allowed values (a string argument).
    #[serde(default, rename = "enum")]
    pub allowed: Option<Vec<Value>>,
    /// The code for a value outside `enum` (default `invalid_arguments`).
    #[serde(default)]
    pub invalid_code: Option<String>,
    /// An empty string is refused with this code.
    #[serde(default)]
    pub empty_code: Option<String>,
    /// A path: subject to `paths` rules.
    #[serde(default)]
    pub path: bool,
    /// For an array of objects: each item's public properties.
    #[serde(default)]
    pub items: Option<Ordered<ArgData>>,
}

/// One result field: a native field's name (`"path"`), or a rule.
#[derive(Debug, Clone)]
pub enum FieldData {
    From(String),
    Rule(Box<FieldRule>),
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldRule {
    /// Where the value comes from: a native `data` field (`a.b` for a nested one), `args.<name>`
    /// (a public argument, with its default), `*` (the whole native `data`), or a list of
    /// these (the first present). Default: the field's own name.
    #[serde(default)]
    pub from: Option<Source>,
    #[serde(default)]
    pub transform: Option<Transform>,
    /// The transform's parameter (`pluck`: the field to take from each item).
    #[serde(default)]
    pub field: Option<String>,
    /// Native value -> public value; values not listed pass as they are.
    #[serde(default)]
    pub values: Vec<(Value, Value)>,
    /// Used when the source is absent or `when` does not hold; without it, the field is left
    /// out.
    #[serde(default, deserialize_with = "present")]
    pub default: Option<Value>,
    #[serde(default)]
    pub when: Option<Condition>,
    /// For an array of objects: each item's fields, taken from the native item.
    #[serde(default)]
    pub items: Option<Ordered<FieldData>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Source {
    One(String),
    FirstOf(Vec<String>),
}

impl Source {
    pub fn names(&self) -> &[String] {
        match self {
            Source::One(name) => std::slice::from_ref(name),
            Source::FirstOf(names) => names,
        }
    }
}

/// Named value conversions (`transforms.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transform {
    /// `"2024-05-01T12:34:56Z"` -> `1714566896.0`.
    Rfc3339ToUnix,
    /// A workspace-relative path -> the absolute path under the workspace's root.
    AbsolutePath,
    /// Whether the source is present and not null.
    IsPresent,
    /// `[{..}]` -> `[item.<field>]`.
    Pluck,
    /// `list_dir`'s data (flat or tree) -> `[{name, path, type, size}]`, breadth-first, each
    /// `path` workspace-relative.
    FlatListing,
    /// `list_dir`'s data (flat or tree) -> one tree `{name, type: "dir", children}`, the root
    /// named after the listed directory.
    TreeListing,
}

/// `{"field": "type", "equals": "file"}`: the native item's field has this value.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub field: String,
    pub equals: Value,
}

/// The text on success: a template, a template chosen by a native boolean field, or a result
/// field as compact JSON. Template placeholders: `{<native data field>}`, `{args.<name>}`,
/// `{tool}`, `{text}` (the native text), `{notices}` (its notices).
#[derive(Debug, Clone)]
pub enum TextData {
    Template(String),
    Choice {
        field: String,
        then: String,
        otherwise: String,
    },
    Json(String),
}

/// `{"from": "files_changed", "type": "file", "description": "changed"}`: one artifact per
/// string in a result field (a string or an array of strings). `type` and `description` are
/// templates over the native data; `when` names a native boolean field that must be true.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactData {
    pub from: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub description: String,
    #[serde(default)]
    pub when: Option<String>,
}

/// A JSON object decoded in its order (the schema and the result keep the data's order).
#[derive(Debug, Clone)]
pub struct Ordered<T>(pub Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<T> Ordered<T> {
    pub fn get(&self, key: &str) -> Option<&T> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &T)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for OrderedVisitor<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered<T>, A::Error> {
                let mut entries: Vec<(String, T)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, T>()? {
                    if entries.iter().any(|(k, _)| *k == key) {
                        return Err(de::Error::custom(format!("duplicate key `{key}`")));
                    }
                    entries.push((key, value));
                }
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(OrderedVisitor(PhantomData))
    }
}

impl<'de> Deserialize<'de> for FieldData {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(from) => Ok(FieldData::From(from)),
            rule @ Value::Object(_) => serde_json::from_value(rule)
                .map(|rule| FieldData::Rule(Box::new(rule)))
                .map_err(de::Error::custom),
            other => Err(de::Error::custom(format!(
                "a result field is a native field's name or a rule object, not {other}"
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for TextData {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Choice {
            #[serde(rename = "if")]
            field: String,
            then: String,
            #[serde(rename = "else")]
            otherwise: String,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Json {
            json: String,
        }
        let value = Value::deserialize(deserializer)?;
        match value {
            Value::String(template) => Ok(TextData::Template(template)),
            Value::Object(ref map) if map.contains_key("if") => {
                let c: Choice = serde_json::from_value(value).map_err(de::Error::custom)?;
                Ok(TextData::Choice {
                    field: c.field,
                    then: c.then,
                    otherwise: c.otherwise,
                })
            }
            Value::Object(_) => {
                let j: Json = serde_json::from_value(value).map_err(de::Error::custom)?;
                Ok(TextData::Json(j.json))
            }
            other => Err(de::Error::custom(format!(
                "text is a template, {{\"if\", \"then\", \"else\"}} or {{\"json\"}}, not {other}"
            ))),
        }
    }
}

/// Keeps an explicit `null` as `Some(Value::Null)` (plain `Option<Value>` would make it
/// `None`, the same as absent).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}
