//! Small wording helpers shared by the tools' texts.

/// "1 byte", "2 bytes".
pub fn bytes(n: u64) -> String {
    count(n, "byte", "bytes")
}

/// `n` with the singular or plural noun.
pub fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}
