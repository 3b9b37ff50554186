//! git's C-style quoting of unusual path names (`"a\tb"`, `"\303\251"`), undone.

/// The name inside `s` if it is quoted, else `s` itself. Octal escapes are bytes, so a quoted
/// UTF-8 name comes back whole.
pub fn unquote(s: &str) -> String {
    let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return s.to_string();
    };
    let bytes = inner.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b != b'\\' || i + 1 >= bytes.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let next = bytes[i + 1];
        let simple = match next {
            b'a' => Some(7),
            b'b' => Some(8),
            b't' => Some(b'\t'),
            b'n' => Some(b'\n'),
            b'v' => Some(11),
            b'f' => Some(12),
            b'r' => Some(b'\r'),
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            i += 2;
        } else if i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|d| (b'0'..=b'7').contains(d))
        {
            let v = bytes[i + 1..i + 4]
                .iter()
                .fold(0u32, |n, d| n * 8 + u32::from(d - b'0'));
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::unquote;

    #[test]
    fn quoted_names_come_back() {
        assert_eq!(unquote("plain.txt"), "plain.txt");
        assert_eq!(unquote(r#""a\tb""#), "a\tb");
        assert_eq!(unquote(r#""\303\251t\303\251.txt""#), "été.txt");
        assert_eq!(unquote(r#""say \"hi\"""#), "say \"hi\"");
        assert_eq!(unquote(r#""back\\slash""#), "back\\slash");
    }
}
