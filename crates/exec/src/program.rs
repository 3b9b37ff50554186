//! Finding the program before fork, in the `PATH` the program will get: the child then execs
//! an absolute path, and a missing program is a clear error instead of an exit code 127.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The program `name` names, as `execvp` would find it: a name with a slash is a path (from
/// `cwd` when relative); any other is looked up in `path_var`'s absolute directories (relative
/// entries such as `.` are skipped: the workspace is not a place to pick up `ls` from).
pub fn resolve(name: &OsStr, path_var: &OsStr, cwd: &Path) -> Option<PathBuf> {
    if name.is_empty() {
        return None;
    }
    let as_path = Path::new(name);
    if name.as_encoded_bytes().contains(&b'/') {
        let full = cwd.join(as_path);
        return is_executable(&full).then_some(full);
    }
    std::env::split_paths(path_var)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(as_path))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn names_are_found_on_path_and_paths_are_taken_as_given() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.path().join("data"), "").unwrap();
        let path = OsString::from(format!("relative:{}", dir.path().display()));
        let cwd = Path::new("/");
        assert_eq!(resolve(OsStr::new("tool"), &path, cwd), Some(tool.clone()));
        assert_eq!(resolve(OsStr::new("data"), &path, cwd), None);
        assert_eq!(resolve(OsStr::new("missing"), &path, cwd), None);
        assert_eq!(
            resolve(OsStr::new("./tool"), OsStr::new(""), dir.path()),
            Some(dir.path().join("./tool"))
        );
        assert_eq!(
            resolve(OsStr::new("tool"), OsStr::new("."), dir.path()),
            None
        );
    }
}
