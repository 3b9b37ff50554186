//! Wasm tools: tools a host adds without giving them the machine (issue 22).
//!
//! A tool is a folder holding `manifest.json` (name, version, description, input schema,
//! capabilities, limits, `module_sha256`) beside `module.wasm` or `module.wat`. Loading it
//! ([`registry`]) validates the manifest ([`manifest`]), refuses one that asks for more than the
//! host allows ([`policy`], `WasmCeiling`: `capability_denied`), checks the module's hash
//! (`module_mismatch`) and compiles the module once. A call ([`runner`]) runs it as a WASI
//! preview 1 command: the arguments as JSON on stdin, the result as JSON on stdout, the exit
//! status ([`protocol`]).
//!
//! Every limit is enforced three times: at load (the manifest against the host policy), by the
//! engine (fuel in slices with the deadline and cancel token checked between them, memory
//! through a resource limiter: [`engine`], [`wasmi_engine`], `wasmtime_engine` with the cargo
//! feature `wasmtime`, [`watch`]) and by every host function
//! at call time (stdout and stderr bounded, [`stdio`]; sleeping bounded by the deadline,
//! [`sched`]; the model gateway and direct network only with their capability, [`host`]; the
//! workspace only through wsfs's resolver and policy, [`fs`], one run's state in `RunFiles`).
//! The guest's `/workspace` is held to the file tools' rule: it uses the workspace's
//! operations, never the root's handle or a walk of its own (the root crate's
//! `src/tool_handles.rs` scans `fs/`).
//!
//! A workspace's loaded tools ([`tool::WasmTools`]) are [`ToolRunner`]s like the built-in
//! tools (the C ABI crate's `ToolSet` holds both): the C ABI's dispatch, envelope, read-only
//! check, audit log, cancellation and specs are the same for both. Without the C ABI
//! crate's feature `wasm` this crate is not built, and a configuration naming `wasm_tools` is
//! refused with `feature_not_built`.
//!
//! [`ToolRunner`]: crate::tools::contract::ToolRunner

#![deny(unsafe_code)]
// A few items are read only by the tests (fuel used, host-call counts, the engine's name).
#![cfg_attr(not(test), allow(dead_code))]

use wsfs_core::{config, control, error, guard, lines, names, sandbox, tools, workspace};

pub mod engine;
pub mod fs;
pub mod guest;
pub mod host;
pub mod imports;
pub mod manifest;
pub mod policy;
pub mod protocol;
pub mod registry;
pub mod runner;
pub mod sched;
pub mod schema;
pub mod stdio;
pub mod tool;
pub mod wasmi_engine;
#[cfg(feature = "wasmtime")]
pub mod wasmtime_engine;
pub mod watch;

#[cfg(test)]
mod tests;
