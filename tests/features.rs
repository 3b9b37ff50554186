//! What a library built without a part does with a configuration that asks for it: the open
//! fails with `feature_not_built`, names the cargo feature, and creates nothing; a library
//! built with it opens the same configuration (or fails for another reason).

use crate::common::open_raw;
use serde_json::{json, Value};

/// Each part, the configuration that asks for it, and whether this build has it.
fn parts(dir: &std::path::Path) -> Vec<(&'static str, Value, bool)> {
    // Roots still to be made, with create_root: a refused part must make nothing.
    let root = |part: &str| dir.join(part).join("ws");
    let state = dir.join("state");
    vec![
        (
            "overlay",
            json!({"create_root": true, "root": root("overlay"), "mode": "overlay", "state_dir": state}),
            cfg!(feature = "overlay"),
        ),
        (
            "exec",
            json!({"create_root": true, "root": root("exec"), "policy": {"exec_enabled": true}}),
            cfg!(feature = "exec"),
        ),
        (
            "exec",
            json!({"create_root": true, "root": root("rules"), "policy": {"safe_shell_rules": dir.join("no-rules.toml")}}),
            cfg!(feature = "exec"),
        ),
        (
            "wasm",
            json!({"create_root": true, "root": root("wasm"), "wasm_tools": [dir.join("no-such-tool")]}),
            cfg!(feature = "wasm"),
        ),
        (
            "wasmtime",
            json!({"create_root": true, "root": root("wasmtime"), "wasm_policy": {"engine": "wasmtime"}}),
            cfg!(feature = "wasmtime"),
        ),
        (
            "model-gateway-http",
            json!({"root": root("gateway"),
                "model_gateway": {"provider": "ollama", "model": "llama3.2"}}),
            cfg!(feature = "model-gateway-http"),
        ),
    ]
}

#[test]
fn a_part_left_out_is_refused_at_open_with_its_feature_named() {
    let tmp = tempfile::tempdir().unwrap();
    for (feature, config, built) in parts(tmp.path()) {
        let env = open_raw(&config.to_string());
        let code = env["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        match built {
            true => assert_ne!(code, "feature_not_built", "{feature}: {env}"),
            false => {
                assert_eq!(code, "feature_not_built", "{feature}: {env}");
                let message = env["error"]["message"].as_str().unwrap_or_default();
                assert!(
                    message.contains(&format!("cargo feature {feature}")),
                    "{feature}: {message}"
                );
                let root = std::path::Path::new(config["root"].as_str().unwrap_or_default());
                assert!(
                    !root.parent().is_some_and(|p| p.exists()),
                    "{feature}: the root was made"
                );
            }
        }
        if env["ok"] == json!(true) {
            crate::common::close_ws(env["data"]["workspace"].as_u64().unwrap());
        }
    }
}
