//! One C function: open the directory `dir` and write `data` to the file `name` in it, with
//! std::fs. Returns 0 on success, -1 on any error. The baseline for cdylib/with.
use std::ffi::{c_char, c_int, CStr};
use std::io::Write;

#[no_mangle]
pub extern "C" fn probe_write(dir: *const c_char, name: *const c_char) -> c_int {
    // SAFETY: the caller passes two NUL-terminated strings (this is a probe, not an API).
    let (dir, name) = unsafe { (CStr::from_ptr(dir), CStr::from_ptr(name)) };
    let (Ok(dir), Ok(name)) = (dir.to_str(), name.to_str()) else {
        return -1;
    };
    let result = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut file = std::fs::File::create(std::path::Path::new(dir).join(name))?;
        file.write_all(b"hello from the probe\n")?;
        file.sync_all()
    })();
    if result.is_ok() {
        0
    } else {
        -1
    }
}
