//! The integration tests, one test binary (as ripgrep's): each file `tests/NAME.rs` is the
//! module `NAME` here, its tests named `NAME::test` (`cargo test --profile release-no-lto --test tests --
//! patch_crash::`). One binary links the library and its dependencies once instead of once per
//! file (docs/decisions/one-test-binary.md has the build and run times). Cargo.toml sets
//! `autotests = false`, so cargo builds no file here on its own: a test file must be declared
//! below, and `every_test_file_is_declared` fails for one that is not.

mod common;

mod absolute_links;
#[cfg(feature = "exec")]
mod approval;
mod audit;
mod audit_arguments;
mod change_race;
mod commit_faults;
mod create_directory;
mod create_race;
mod delete_file;
#[cfg(feature = "exec")]
mod devtools;
#[cfg(feature = "exec")]
mod devtools_confinement;
mod dispatch;
mod durability;
mod edit_fields;
mod encoding_errors;
mod error_hints;
mod escapes;
#[cfg(all(feature = "exec", feature = "overlay"))]
mod exec_overlay;
mod fault_injection;
mod features;
mod ffi_input;
mod ffi_workspace;
mod list_filters;
mod metrics;
#[cfg(feature = "model-gateway-http")]
mod model_gateway;
mod model_view;
mod move_file;
mod names;
#[cfg(feature = "overlay")]
mod overlay_checkpoints;
#[cfg(feature = "overlay")]
mod overlay_partial;
#[cfg(all(feature = "exec", feature = "overlay"))]
mod overlay_programs;
#[cfg(feature = "overlay")]
mod overlay_race;
#[cfg(feature = "overlay")]
mod overlay_review;
#[cfg(feature = "overlay")]
mod overlay_store;
#[cfg(feature = "overlay")]
mod overlay_view;
mod patch;
mod patch_crash;
mod patch_race;
mod path_info;
mod policy;
mod protected_root;
mod race;
mod race_info;
mod raw_io;
mod read_allocations;
mod read_lines;
mod read_range;
#[cfg(feature = "wasm")]
mod rust_tools;
mod special_files;
mod temp_files;
mod unrestricted;
mod walk_race;
mod walk_tools;
#[cfg(feature = "wasm")]
mod wasm_tools;
mod write_modes;

/// With `autotests = false` cargo ignores a test file that is not a module here, silently:
/// every `tests/NAME.rs` and `tests/NAME/mod.rs` must be declared above, and no
/// `tests/NAME/main.rs` (a test binary of its own under cargo's defaults) may exist.
#[test]
fn every_test_file_is_declared() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let source = std::fs::read_to_string(dir.join("tests.rs")).unwrap();
    let declared: Vec<&str> = source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut missing = vec![];
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if path.is_dir() {
            if path.join("main.rs").exists() {
                missing.push(format!(
                    "tests/{name}/main.rs (make it tests/{name}/mod.rs and declare `mod {name};`)"
                ));
            } else if path.join("mod.rs").exists() && !declared.contains(&name) {
                missing.push(format!("tests/{name}/mod.rs (declare `mod {name};`)"));
            }
        } else if let Some(module) = name.strip_suffix(".rs") {
            if module != "tests" && !declared.contains(&module) {
                missing.push(format!("tests/{name} (declare `mod {module};`)"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "test files that tests/tests.rs does not declare, so they never run: {missing:?}"
    );
}
