//! What a tool is: typed arguments whose JSON Schema is derived from them, typed output with
//! the text a model sees, and a run function. [`crate::tools::FILE_TOOLS`] lists the file tools (the C ABI crate adds the developer tools);
//! specs, dispatch and logging come from that list.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::audit::{Change, Notes};
use crate::guard::policy::PolicyConfig;
use crate::sandbox::root::{Anchor, ToolPath};
use crate::workspace::Workspace;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use std::any::Any;
use std::borrow::Cow;
use std::path::PathBuf;

/// Which parts of a success envelope to build (`wsfs_call_with_options`' `output`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    /// `data` and `text`.
    #[default]
    Full,
    /// `text` only.
    Text,
    /// `data` only.
    Data,
    /// Neither inside the JSON: the text follows the JSON after one `\n`, unescaped.
    TextRaw,
    /// `data` only, with `read_file`'s `content` left out of it and following the JSON after
    /// one `\n`, unescaped. Other tools' results are as with `Data`.
    DataRaw,
}

/// The envelope a result will be framed in, as a tool sees it (implemented by the C ABI's
/// envelope): the room a raw part needs in front of it, so a tool that reads a file can read
/// it straight into the buffer the result is built in (see [`ToolOutput::take_raw`]).
pub trait Frame {
    /// The bytes in front of a raw part for a success without warnings whose `data_raw` head
    /// holds `meta`: the C ABI's room, the JSON head and the separator. 0 for the modes
    /// without a raw part.
    fn raw_head_len(&self, meta: &dyn erased_serde::Serialize) -> usize;
}

/// A warning on a successful call. Every warning is in the envelope's `warnings`; those that
/// tell the model something its text does not are also appended to the text it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub message: String,
    /// Appended to the text (`false` when the text already says it).
    pub in_text: bool,
}

impl Warning {
    /// A warning the model reads.
    pub fn new(message: impl Into<String>) -> Warning {
        Warning {
            message: message.into(),
            in_text: true,
        }
    }

    /// A warning the text already says (write_file's overwrite: its text says "overwrote").
    pub fn said_in_text(message: impl Into<String>) -> Warning {
        Warning {
            message: message.into(),
            in_text: false,
        }
    }
}

impl From<String> for Warning {
    fn from(message: String) -> Warning {
        Warning::new(message)
    }
}

/// In the envelope a warning is its message.
impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.message)
    }
}

/// Warnings as the tools return them, from the plain messages of the layers below.
pub fn warnings(messages: Vec<String>) -> Vec<Warning> {
    messages.into_iter().map(Warning::new).collect()
}

/// What a tool's run function gets besides its arguments.
pub struct Call<'a> {
    pub ws: &'a Workspace,
    pub ctl: &'a CallControl,
    /// `wsfs_call_with_content`'s buffer; only tools with `CONTENT_BUFFER` ever see one.
    pub content_buffer: Option<&'a [u8]>,
    /// The envelope the result will be put in: a tool whose result holds a large text may
    /// keep room in front of it for the JSON head (see `ToolOutput::take_raw`).
    pub frame: &'a dyn Frame,
    /// The paths this call named, as shown to the model, for the trace event.
    pub logged_paths: String,
    /// The first path this call named (where it resolves from, and the path below that), for
    /// the suggestions added to a `path_not_found` error.
    pub first_path: Option<(Anchor, PathBuf)>,
    /// What the audit log records of the call; `None` when the workspace keeps no log.
    pub audit: Option<Notes>,
}

impl<'a> Call<'a> {
    pub fn new(
        ws: &'a Workspace,
        ctl: &'a CallControl,
        content_buffer: Option<&'a [u8]>,
        frame: &'a dyn Frame,
    ) -> Self {
        Call {
            ws,
            ctl,
            content_buffer,
            frame,
            logged_paths: String::new(),
            first_path: None,
            audit: ws.policy.audit.as_ref().map(|_| Notes::default()),
        }
    }

    /// Validates a path argument (see `Workspace::parse_path`) and records it for the trace
    /// and the audit log.
    pub fn path(&mut self, raw: &str) -> Result<ToolPath> {
        let parsed = self.ws.parse_path(raw);
        if !self.logged_paths.is_empty() {
            self.logged_paths.push_str(" -> ");
        }
        let shown = match &parsed {
            Ok(p) => {
                if self.first_path.is_none() {
                    self.first_path = Some((p.anchor, p.rel.clone()));
                }
                &p.display
            }
            Err(_) => "<invalid>",
        };
        self.logged_paths.push_str(shown);
        if let Some(notes) = &mut self.audit {
            notes.paths.push(shown.to_string());
        }
        parsed
    }

    /// Whether changes must be recorded, with hashes: the workspace keeps an audit log. Tools
    /// compute hashes only when this is true, so a workspace without a log pays nothing.
    pub fn audits(&self) -> bool {
        self.audit.is_some()
    }

    /// Records a file or directory the call changed, for the audit log. Every changing tool
    /// reports each change here once it is committed (nothing happens without a log).
    pub fn record_change(&mut self, change: Change) {
        if let Some(notes) = &mut self.audit {
            notes.changes.push(change);
        }
    }
}

/// Hints for hosts (MCP annotations): true of every call of the tool.
#[derive(Debug, Clone, Copy)]
pub struct Annotations {
    /// Never changes anything.
    pub read_only: bool,
    /// May remove or overwrite existing data (only meaningful when not read-only).
    pub destructive: bool,
    /// Repeating a call with the same arguments has no further effect.
    pub idempotent: bool,
}

impl Annotations {
    pub const READ_ONLY: Annotations = Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
    };
}

/// The policy switch a tool needs on, besides `writes_enabled` for the changing ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// Always available (the file tools).
    None,
    /// `policy.exec_enabled`: the developer tools, which run programs.
    Exec,
    /// `policy.exec_enabled` and `policy.shell_enabled`: the raw shell.
    Shell,
}

impl Switch {
    /// Whether `policy` turns the tool on.
    pub fn is_on(self, policy: &PolicyConfig) -> bool {
        match self {
            Switch::None => true,
            Switch::Exec => policy.exec_enabled,
            Switch::Shell => policy.exec_enabled && policy.shell_enabled,
        }
    }

    /// The `exec_disabled` error for `tool` under `policy`, when it is off.
    pub fn refusal(self, tool: &str, policy: &PolicyConfig) -> Option<WsfsError> {
        if self.is_on(policy) {
            return None;
        }
        let needs = match self {
            Switch::Shell if policy.exec_enabled => "policy.shell_enabled",
            Switch::Shell => "policy.exec_enabled and policy.shell_enabled",
            _ => "policy.exec_enabled",
        };
        Some(WsfsError::new(
            ErrorCode::ExecDisabled,
            format!(
                "{tool} is disabled: it runs programs, and the host has not turned that on \
                 ({needs} is false). Use the file tools instead; do not retry, and tell the \
                 user if the task needs it"
            ),
        ))
    }
}

/// One tool. Implemented by a unit struct per file under `src/tools/`.
pub trait Tool {
    /// The name models and the C ABI use.
    const NAME: &'static str;
    const ANNOTATIONS: Annotations;
    /// The policy switch the tool needs (checked before its arguments are parsed).
    const SWITCH: Switch = Switch::None;
    /// Whether the tool takes `wsfs_call_with_content`'s separate content buffer.
    const CONTENT_BUFFER: bool = false;
    /// Whether the tool still runs in a read-only workspace although it is not read-only: it
    /// changes files only through programs, which then get a read-only view of the workspace
    /// from the kernel (a read-only mount), so there it can only read.
    const RUNS_ON_READ_ONLY_VIEW: bool = false;
    /// Why a call needs the model's `confirmed: true` (`confirmation_required` without it), and
    /// so the host's approval when it set an approval handler: `None` for most tools.
    const CONFIRMATION: Option<&'static str> = None;
    /// Calls the host's approval handler decides although the model confirms nothing (a
    /// recursive delete, the raw shell); without a handler they run as they always did.
    const HOST_APPROVAL: HostApproval = HostApproval::Never;
    /// Strict (`deny_unknown_fields`) arguments; doc comments become the schema's descriptions.
    /// Optional inputs are `#[serde(default)]` plain types, never `Option` (no `null` types).
    type Args: DeserializeOwned + JsonSchema;
    type Output: ToolOutput;

    /// What the model reads to decide when and how to call the tool.
    fn description() -> String;

    /// Runs the tool; returns its output and warnings.
    fn run(call: &mut Call<'_>, args: Self::Args) -> Result<(Self::Output, Vec<Warning>)>;
}

/// A tool's result: serialized as the envelope's `data`, rendered as its `text`.
pub trait ToolOutput: erased_serde::Serialize + Any + Send {
    /// What the model sees.
    fn text(&self) -> Cow<'_, str>;

    /// Appends the text to `out`. Outputs whose text embeds a large string (a file's content)
    /// override it to copy that string once, without building the text first.
    fn push_text(&self, out: &mut String) {
        let text = self.text();
        out.reserve_exact(text.len() + 1);
        out.push_str(&text);
    }

    /// For the `data_raw` output mode: `data` without its bulk string ([`Self::raw_part`]),
    /// which is sent unescaped after the JSON. `None` when the output has no such string.
    fn raw_meta(&self) -> Option<Box<dyn erased_serde::Serialize + '_>> {
        None
    }

    /// The bulk string [`Self::raw_meta`] leaves out.
    fn raw_part(&self) -> &str {
        ""
    }

    /// For the raw output modes: the buffer holding the raw part (`raw_part` for
    /// `data_raw`, the text for `text_raw`), when exactly `room` bytes are reserved in front of
    /// it for the JSON head and the separator ([`Frame::raw_head_len`]), so the result is built
    /// around it without a copy. The output gives it up (it is not used afterwards). The raw
    /// part must be text without NUL. `None` (the default) means: copy it.
    fn take_raw(&mut self, _output: Output, _room: usize) -> Option<Vec<u8>> {
        None
    }

    /// Adds this result's figures (lines and bytes read, matches, entries ...) to the call's
    /// [`Metrics`]. The default adds none.
    fn add_metrics(&self, _metrics: &mut Metrics) {}
}

/// When a host's approval handler decides a call that needs no `confirmed` from the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostApproval {
    Never,
    /// Every call, for this reason.
    Always(&'static str),
    /// A call whose boolean argument `argument` is true, for this reason.
    WhenTrue {
        argument: &'static str,
        why: &'static str,
    },
}

impl HostApproval {
    /// Why a call with `args_json` is decided by the host's handler, if it is.
    pub fn why(self, args_json: &str) -> Option<&'static str> {
        match self {
            HostApproval::Never => None,
            HostApproval::Always(why) => Some(why),
            HostApproval::WhenTrue { argument, why } => {
                let args: Value = serde_json::from_str(args_json).ok()?;
                (args.get(argument) == Some(&Value::Bool(true))).then_some(why)
            }
        }
    }
}

/// What a host's middleware records of one call, without parsing text: the envelope's
/// `metrics`, the log record of the call and, with the `tracing` feature, its span. Figures
/// only, never contents. A figure a tool does not have is absent.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Metrics {
    /// The tool, as the call named it.
    pub tool: String,
    /// The paths the call named, as shown to the model (`a -> b` for two); absent when none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// How long the call took in the library, in microseconds (as in the audit log).
    pub duration_us: u64,
    /// read_file: the first line returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u64>,
    /// read_file: how many lines were returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_read: Option<u64>,
    /// read_file: how many bytes of content were returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_read: Option<u64>,
    /// write_file, append_file, edit_file: how many bytes the file got (edit_file: its new size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_written: Option<u64>,
    /// search_text: matching lines; find_files: paths found; edit_file: occurrences replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<u64>,
    /// search_text: files whose content was searched; find_files: paths whose names were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_searched: Option<u64>,
    /// list_dir: entries returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<u64>,
    /// apply_patch: files changed (or, in a dry run, that would be).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_changed: Option<u64>,
    /// The result was cut at a limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

erased_serde::serialize_trait_object!(ToolOutput);

/// A registry entry: a tool with its types erased, so one list can hold every tool.
pub struct ToolEntry {
    pub name: &'static str,
    pub annotations: Annotations,
    pub content_buffer: bool,
    /// [`Tool::RUNS_ON_READ_ONLY_VIEW`].
    pub runs_on_read_only_view: bool,
    pub switch: Switch,
    /// [`Tool::CONFIRMATION`].
    pub confirmation: Option<&'static str>,
    /// [`Tool::HOST_APPROVAL`].
    pub host_approval: HostApproval,
    pub description: fn() -> String,
    pub parameters: fn() -> Value,
    run: RunFn,
}

type RunFn = fn(&mut Call<'_>, &str) -> Result<(Box<dyn ToolOutput>, Vec<Warning>)>;

impl ToolEntry {
    /// Parses `args_json` strictly and runs the tool.
    pub fn run(
        &self,
        call: &mut Call<'_>,
        args_json: &str,
    ) -> Result<(Box<dyn ToolOutput>, Vec<Warning>)> {
        (self.run)(call, args_json)
    }
}

/// A tool's output and its warnings.
pub type ToolResult = (Box<dyn ToolOutput>, Vec<Warning>);

/// The seam every tool is called through, built-in or not: dispatch finds a runner by name,
/// applies the same checks (argument size, read-only mode from the annotations, the content
/// buffer, cancellation), runs it with the same [`Call`] and frames, audits and traces its
/// result the same way; the specs list each runner's name, description, schema and
/// annotations. Implemented by [`ToolEntry`] (the built-in registry) and by the Wasm tools a
/// workspace loads (`wasm::tool`).
pub trait ToolRunner: Send + Sync {
    fn name(&self) -> &str;
    fn annotations(&self) -> Annotations;
    /// Whether the tool takes `wsfs_call_with_content`'s separate content buffer.
    fn content_buffer(&self) -> bool {
        false
    }
    /// Whether the tool reaches anything beyond the workspace (a model, the network): the
    /// specs' `openWorldHint`.
    fn open_world(&self) -> bool {
        false
    }
    /// The policy switch that must be on for the tool to run (the developer tools').
    fn switch(&self) -> Switch {
        Switch::None
    }
    /// Whether the tool runs in a read-only workspace (`writes_enabled: false`): a read-only
    /// tool, or one whose programs then get a read-only view ([`Tool::RUNS_ON_READ_ONLY_VIEW`]).
    fn runs_read_only(&self) -> bool {
        self.annotations().read_only
    }
    /// [`Tool::CONFIRMATION`]: why a call needs confirming (or the host's approval).
    fn confirmation(&self) -> Option<&'static str> {
        None
    }
    /// [`Tool::HOST_APPROVAL`]: why the host's handler is asked about a call with these
    /// arguments, although the model confirms nothing; `None` when it is not.
    fn host_approval(&self, _args_json: &str) -> Option<&'static str> {
        None
    }
    /// Whether a host's approval handler is ever asked about this tool's calls.
    fn asks_approval(&self) -> bool {
        self.confirmation().is_some()
    }
    fn description(&self) -> String;
    /// The arguments' JSON Schema.
    fn parameters(&self) -> Value;
    /// Parses `args_json` strictly and runs the tool.
    fn run(&self, call: &mut Call<'_>, args_json: &str) -> Result<ToolResult>;
}

impl ToolRunner for ToolEntry {
    fn name(&self) -> &str {
        self.name
    }
    fn annotations(&self) -> Annotations {
        self.annotations
    }
    fn content_buffer(&self) -> bool {
        self.content_buffer
    }
    fn switch(&self) -> Switch {
        self.switch
    }
    fn runs_read_only(&self) -> bool {
        self.annotations.read_only || self.runs_on_read_only_view
    }
    fn confirmation(&self) -> Option<&'static str> {
        self.confirmation
    }
    fn host_approval(&self, args_json: &str) -> Option<&'static str> {
        self.host_approval.why(args_json)
    }
    fn asks_approval(&self) -> bool {
        self.confirmation.is_some() || !matches!(self.host_approval, HostApproval::Never)
    }
    fn description(&self) -> String {
        (self.description)()
    }
    fn parameters(&self) -> Value {
        (self.parameters)()
    }
    fn run(&self, call: &mut Call<'_>, args_json: &str) -> Result<ToolResult> {
        ToolEntry::run(self, call, args_json)
    }
}

/// The registry entry of `T`.
pub const fn entry<T: Tool>() -> ToolEntry {
    ToolEntry {
        name: T::NAME,
        annotations: T::ANNOTATIONS,
        content_buffer: T::CONTENT_BUFFER,
        runs_on_read_only_view: T::RUNS_ON_READ_ONLY_VIEW,
        switch: T::SWITCH,
        confirmation: T::CONFIRMATION,
        host_approval: T::HOST_APPROVAL,
        description: T::description,
        parameters: parameters::<T::Args>,
        run: run_erased::<T>,
    }
}

fn run_erased<T: Tool>(
    call: &mut Call<'_>,
    args_json: &str,
) -> Result<(Box<dyn ToolOutput>, Vec<Warning>)> {
    let args: T::Args = match crate::json::parse_object(args_json) {
        Ok(args) => args,
        Err(e) => decode_again::<T::Args>(T::NAME, args_json, e)?,
    };
    let (output, warnings) = T::run(call, args)?;
    Ok((Box::new(output), warnings))
}

/// Arguments that did not decode (`error`), looked at again: the strings `"true"` and
/// `"false"` are taken for booleans, and argument names from other tools are answered with the
/// wsfs argument to use (see [`crate::tools::aliases`]). Only a failed decoding pays for this.
fn decode_again<A: DeserializeOwned + JsonSchema>(
    tool: &str,
    args_json: &str,
    error: String,
) -> Result<A> {
    let schema = parameters::<A>();
    if let Some(value) = crate::tools::aliases::with_string_booleans(args_json, &schema) {
        if let Ok(args) = serde_json::from_value(value) {
            return Ok(args);
        }
    }
    let message = match crate::tools::aliases::unknown_fields(tool, args_json, &schema) {
        Some((said, true)) => format!("invalid arguments for {tool}: {said}"),
        Some((said, false)) => format!(
            "invalid arguments for {tool}: {said}; expected {}",
            expected_shape(&schema)
        ),
        None => format!(
            "invalid arguments for {tool}: {error}; expected {}",
            expected_shape(&schema)
        ),
    };
    Err(WsfsError::new(ErrorCode::InvalidArguments, message))
}

/// The JSON Schema of an argument struct as models get it: inline subschemas (no `$ref`), no
/// title, no integer `format` (`uint64` means nothing to a model), no `"default": null`, and
/// a `required` array on every object (some clients insist on one).
pub fn parameters<A: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    if let Some(top) = schema.as_object_mut() {
        top.remove("description");
        // A tool without arguments (git_status) still states its (empty) properties: some
        // clients insist on them.
        if !top.contains_key("properties") {
            top.insert("properties".into(), Value::Object(Default::default()));
        }
    }
    tidy(&mut schema);
    schema
}

fn tidy(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("title");
            map.remove("format");
            // `null` and an empty list (an optional list argument) say nothing a model needs,
            // and clients map an absent default to "leave it out" anyway.
            if map
                .get("default")
                .is_some_and(|d| d.is_null() || d.as_array().is_some_and(Vec::is_empty))
            {
                map.remove("default");
            }
            if map.contains_key("properties") && !map.contains_key("required") {
                map.insert("required".into(), Value::Array(Vec::new()));
            }
            map.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// A one-line shape of a schema for error messages: `{"path": string, "depth"?: integer}`.
pub fn expected_shape(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<String> = schema["properties"]
        .as_object()
        .map(|props| {
            props
                .iter()
                .map(|(name, prop)| {
                    let optional = if required.contains(&name.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    let kind = prop["type"].as_str().unwrap_or("value");
                    format!("\"{name}\"{optional}: {kind}")
                })
                .collect()
        })
        .unwrap_or_default();
    format!("{{{}}}", fields.join(", "))
}
