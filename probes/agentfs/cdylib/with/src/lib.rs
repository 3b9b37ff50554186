//! One C function: open (or create) an AgentFS database at `db` and write `data` to the file
//! `name` in it. Returns 0 on success, -1 on any error. Exists only to be measured.
use std::ffi::{c_char, c_int, CStr};

#[no_mangle]
pub extern "C" fn probe_write(db: *const c_char, name: *const c_char) -> c_int {
    // SAFETY: the caller passes two NUL-terminated strings (this is a probe, not an API).
    let (db, name) = unsafe { (CStr::from_ptr(db), CStr::from_ptr(name)) };
    let (Ok(db), Ok(name)) = (db.to_str(), name.to_str()) else {
        return -1;
    };
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return -1;
    };
    let result: agentfs_sdk::error::Result<()> = rt.block_on(async {
        let agent = agentfs_sdk::AgentFS::open(agentfs_sdk::AgentFSOptions::with_path(db)).await?;
        let (_, file) = agent.fs.create_file(name, 0o644, 0, 0).await?;
        file.pwrite(0, b"hello from the probe\n").await?;
        agent.fs.fsync(name).await?;
        Ok(())
    });
    if result.is_ok() {
        0
    } else {
        -1
    }
}
