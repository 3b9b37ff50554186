//! The shared library's soname: `libwsfs.so.0.1` for a 0.x release (each minor release of a 0.x
//! crate may break the ABI), `libwsfs.so.N` from 1.0 on. `make install` installs
//! `libwsfs.so.X.Y.Z` with the soname and the plain name as links to it (docs/install.md), so
//! a program linked with `-lwsfs` loads, at run time, only a library of a compatible release.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    let soname = if major == "0" {
        format!("libwsfs.so.0.{}", env!("CARGO_PKG_VERSION_MINOR"))
    } else {
        format!("libwsfs.so.{major}")
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
}
