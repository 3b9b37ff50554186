//! Tests of the Wasm tool runtime, with inline WAT fixtures ([`wat`]): loading, the protocol,
//! the limits, the host functions and the workspace, hostile cases first.
//!
//! The engine-generic suite ([`suite.rs`](suite.rs) and the files it includes) runs once per
//! engine, each in a module of its own with that engine's `engine()`: `wasmi` always, and
//! `wasmtime` in a build with the cargo feature (`make test-wasmtime`). Test names say which:
//! `wasm::tests::wasmi::limits::...`, `wasm::tests::wasmtime::limits::...`.

mod wat;

mod wasmi {
    use crate::engine::Engine;
    use crate::wasmi_engine::WasmiEngine;
    use std::sync::{Arc, OnceLock};

    pub const ENGINE: &str = "wasmi";

    pub fn engine() -> Arc<dyn Engine> {
        static ENGINE: OnceLock<Arc<dyn Engine>> = OnceLock::new();
        ENGINE
            .get_or_init(|| Arc::new(WasmiEngine::new().expect("the wasmi engine sets up")))
            .clone()
    }

    include!("suite.rs");
}

#[cfg(feature = "wasmtime")]
mod wasmtime {
    use crate::engine::Engine;
    use crate::wasmtime_engine::WasmtimeEngine;
    use std::sync::{Arc, OnceLock};

    pub const ENGINE: &str = "wasmtime";

    pub fn engine() -> Arc<dyn Engine> {
        static ENGINE: OnceLock<Arc<dyn Engine>> = OnceLock::new();
        ENGINE
            .get_or_init(|| Arc::new(WasmtimeEngine::new().expect("the wasmtime engine sets up")))
            .clone()
    }

    include!("suite.rs");
}
