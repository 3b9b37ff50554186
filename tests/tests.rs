//! The integration tests, one test binary (as ripgrep's): each file `tests/NAME.rs` is the
//! module `NAME` here, its tests named `NAME::test` (`cargo test --release --test tests --
//! patch_crash::`). One binary links the library and its dependencies once instead of once per
//! file (docs/ARCHITECTURE.md, "Test layout", has the build and run times). Cargo.toml sets
//! `autotests = false`, so cargo builds no file here on its own: a test file must be declared
//! below.

mod common;

mod audit;
mod change_race;
mod commit_faults;
mod create_directory;
mod create_race;
mod delete_file;
mod durability;
mod error_hints;
mod escapes;
mod fault_injection;
mod ffi_input;
mod ffi_workspace;
mod move_file;
mod names;
mod patch;
mod patch_crash;
mod patch_race;
mod path_info;
mod policy;
mod race;
mod race_info;
mod raw_io;
mod read_allocations;
mod read_range;
mod special_files;
mod temp_files;
mod unrestricted;
mod walk_race;
mod walk_tools;
mod write_modes;
