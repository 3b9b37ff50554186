//! The planning core through its front door: parse a patch, apply each section to a text.

use super::apply::{apply_hunks, Patched};
use super::model::{Action, Hunk, Reason, Rejection};
use super::structured::{self, RangeEdit};
use super::{detect, parse, Format};
use crate::control::CallControl;
use std::time::Duration;

fn ctl() -> CallControl {
    CallControl::new(Duration::from_secs(10), None)
}

fn apply(text: &str, hunks: &[Hunk]) -> std::result::Result<Patched, Vec<Rejection>> {
    apply_hunks("f.txt", text, hunks, &ctl()).unwrap()
}

/// Parses `patch` (one file section) and applies it to `text`.
fn patched(text: &str, patch: &str) -> String {
    let parsed = parse(patch).unwrap();
    assert_eq!(parsed.files.len(), 1, "{parsed:?}");
    match apply(text, &parsed.files[0].hunks) {
        Ok(p) => p.text,
        Err(r) => panic!("rejected: {r:#?}"),
    }
}

fn rejected(text: &str, patch: &str) -> Vec<Rejection> {
    let parsed = parse(patch).unwrap();
    apply(text, &parsed.files[0].hunks).expect_err("applied, want a rejection")
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

// ------------------------------------------------------------------ unified diffs

#[test]
fn unified_update_with_prefixes() {
    let patch = "--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n line 4\n";
    let parsed = parse(patch).unwrap();
    assert_eq!(parsed.files[0].path, "f.txt");
    assert_eq!(parsed.files[0].action, Action::Update);
    let out = patched(&numbered(5), patch);
    assert_eq!(out, "line 1\nline 2\nLINE 3\nline 4\nline 5\n");
}

#[test]
fn unified_several_files_adds_and_deletes() {
    let patch = "\
--- a/one.txt
+++ b/one.txt
@@ -1 +1 @@
-a
+b
--- /dev/null
+++ b/dir/new.txt
@@ -0,0 +1,2 @@
+hello
+world
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
";
    let parsed = parse(patch).unwrap();
    let got: Vec<(&str, Action)> = parsed
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.action))
        .collect();
    assert_eq!(
        got,
        vec![
            ("one.txt", Action::Update),
            ("dir/new.txt", Action::Add),
            ("old.txt", Action::Delete)
        ]
    );
    assert_eq!(
        parsed.files[1].add.as_ref().unwrap().render(),
        "hello\nworld\n"
    );
    assert_eq!(parsed.files[2].hunks.len(), 1);
}

#[test]
fn git_diff_headers_new_file_rename_and_mode() {
    let patch = "\
diff --git a/src/x.rs b/src/x.rs
index 123..456 100644
--- a/src/x.rs
+++ b/src/x.rs
@@ -1,2 +1,2 @@
 fn main() {
-}
+} // end
diff --git a/n.txt b/n.txt
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/n.txt
@@ -0,0 +1 @@
+new
diff --git a/old name.txt b/new name.txt
similarity index 90%
rename from old name.txt
rename to new name.txt
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
";
    let parsed = parse(patch).unwrap();
    let got: Vec<(&str, Action, Option<&str>)> = parsed
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.action, f.move_to.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("src/x.rs", Action::Update, None),
            ("n.txt", Action::Add, None),
            ("old name.txt", Action::Move, Some("new name.txt")),
        ]
    );
    assert!(
        parsed.notes.iter().any(|n| n.contains("run.sh")),
        "{:?}",
        parsed.notes
    );
    assert_eq!(
        patched(
            "fn main() {\n}\n",
            &patch[..patch.find("diff --git a/n.txt").unwrap()]
        ),
        "fn main() {\n} // end\n"
    );
}

#[test]
fn unified_without_prefixes_and_with_differing_names() {
    let parsed =
        parse("--- f.txt.orig\t2024-01-01\n+++ f.txt\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
    assert_eq!(parsed.files[0].path, "f.txt");
    let parsed = parse("--- x/f.txt\n+++ x/f.txt\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
    assert_eq!(parsed.files[0].path, "x/f.txt");
}

#[test]
fn unified_errors_are_invalid_arguments_with_a_hint() {
    // Wrong line count in the header.
    let e = parse("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+b\n").unwrap_err();
    assert_eq!(e.code, crate::error::ErrorCode::InvalidArguments);
    assert!(e.message.contains("count"), "{}", e.message);
    // Hunks in reverse order.
    let e = parse("--- a/f\n+++ b/f\n@@ -5 +5 @@\n-e\n+E\n@@ -1 +1 @@\n-a\n+A\n").unwrap_err();
    assert_eq!(e.code, crate::error::ErrorCode::InvalidArguments);
    assert!(parse("just some text").is_err());
    assert!(parse("").is_err());
    let e = parse(
        "diff --git a/b.png b/b.png\nindex 1..2 100644\nBinary files a/b.png and b/b.png differ\n",
    )
    .unwrap_err();
    assert!(e.message.contains("binary"), "{}", e.message);
}

#[test]
fn unified_no_newline_markers_are_honoured() {
    // The patch says the last line gains a newline.
    let patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n";
    assert_eq!(patched("a\nb", patch), "a\nb\n");
    // ...and loses it.
    let patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n";
    assert_eq!(patched("a\nb\n", patch), "a\nb");
    // Without markers the file's state is kept, both ways.
    let patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
    assert_eq!(patched("a\nb", patch), "a\nc");
    assert_eq!(patched("a\nb\n", patch), "a\nc\n");
}

#[test]
fn unified_offset_hunks_are_found_near_their_line() {
    // The file has two extra lines at the top: both hunks are 2 lines off.
    let text = format!("x\ny\n{}", numbered(20));
    let patch = "--- a/f\n+++ b/f\n@@ -3,1 +3,1 @@\n-line 3\n+THREE\n@@ -15,1 +15,1 @@\n-line 15\n+FIFTEEN\n";
    let out = patched(&text, patch);
    assert!(
        out.contains("\nTHREE\n") && out.contains("\nFIFTEEN\n"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 22);
}

#[test]
fn unified_insert_only_hunks() {
    let patch = "--- a/f\n+++ b/f\n@@ -2,0 +3,1 @@\n+inserted\n";
    assert_eq!(patched("a\nb\nc\n", patch), "a\nb\ninserted\nc\n");
    let patch = "--- a/f\n+++ b/f\n@@ -0,0 +1,1 @@\n+first\n";
    assert_eq!(patched("", patch), "first\n");
    let r = rejected("a\n", "--- a/f\n+++ b/f\n@@ -9,0 +10,1 @@\n+far\n");
    assert_eq!(r[0].reason, Reason::OutOfRange);
}

// ------------------------------------------------------------------ *** Begin Patch

const BEGIN_PATCH: &str = "\
*** Begin Patch
*** Update File: src/app.py
@@ class Base
@@     def search(self):
-        pass
+        raise NotImplementedError()
*** Add File: docs/new.md
+# New
+
+text
*** Delete File: old.txt
*** Update File: a.txt
*** Move to: b/a.txt
@@
 keep
-x
+y
*** End Patch
";

#[test]
fn begin_patch_every_section_kind() {
    assert_eq!(detect(BEGIN_PATCH), Some(Format::BeginPatch));
    let parsed = parse(BEGIN_PATCH).unwrap();
    let got: Vec<(&str, Action, Option<&str>)> = parsed
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.action, f.move_to.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("src/app.py", Action::Update, None),
            ("docs/new.md", Action::Add, None),
            ("old.txt", Action::Delete, None),
            ("a.txt", Action::Move, Some("b/a.txt")),
        ]
    );
    assert_eq!(
        parsed.files[1].add.as_ref().unwrap().render(),
        "# New\n\ntext\n"
    );
    let Hunk::Lines(h) = &parsed.files[0].hunks[0] else {
        panic!()
    };
    assert_eq!(h.anchors, vec!["class Base", "def search(self):"]);
}

#[test]
fn begin_patch_anchors_choose_among_repeats() {
    let text = "class Other:\n    def search(self):\n        pass\nclass Base:\n    def search(self):\n        pass\n";
    let patch = "*** Begin Patch\n*** Update File: f\n@@ class Base:\n@@     def search(self):\n-        pass\n+        raise NotImplementedError()\n*** End Patch\n";
    assert_eq!(
        patched(text, patch),
        "class Other:\n    def search(self):\n        pass\nclass Base:\n    def search(self):\n        raise NotImplementedError()\n"
    );
    // Without the anchor the same hunk is ambiguous, never guessed.
    let patch =
        "*** Begin Patch\n*** Update File: f\n@@\n-        pass\n+        x\n*** End Patch\n";
    let r = rejected(text, patch);
    assert_eq!(
        (r[0].reason, r[0].nearest_line),
        (Reason::Ambiguous, Some(3))
    );
    assert!(r[0].detail.contains("3, 6"), "{}", r[0].detail);
    // A missing anchor rejects the hunk.
    let patch = "*** Begin Patch\n*** Update File: f\n@@ class Missing:\n-        pass\n+        x\n*** End Patch\n";
    let r = rejected(text, patch);
    assert_eq!(r[0].reason, Reason::ContextNotFound);
    assert_eq!(r[0].expected, vec!["class Missing:"]);
}

#[test]
fn begin_patch_hunks_in_order_follow_each_other() {
    // Each `}` is ambiguous alone, but the second hunk is searched after the first.
    let text = "a\n}\nb\n}\n";
    let patch =
        "*** Begin Patch\n*** Update File: f\n@@\n a\n-}\n+},\n@@\n b\n-}\n+};\n*** End Patch\n";
    assert_eq!(patched(text, patch), "a\n},\nb\n};\n");
}

#[test]
fn begin_patch_hunks_in_reverse_order() {
    let text = numbered(10);
    let patch = "*** Begin Patch\n*** Update File: f\n@@\n line 8\n-line 9\n+NINE\n@@\n line 1\n-line 2\n+TWO\n*** End Patch\n";
    let out = patched(&text, patch);
    assert!(out.contains("TWO") && out.contains("NINE"), "{out}");
}

#[test]
fn begin_patch_end_of_file_and_start_of_file() {
    let text = "x\ny\nx\n";
    let patch = "*** Begin Patch\n*** Update File: f\n@@\n-x\n+z\n*** End of File\n*** End Patch\n";
    assert_eq!(patched(text, patch), "x\ny\nz\n");
    let patch = "*** Begin Patch\n*** Update File: f\n@@\n+top\n x\n y\n*** End Patch\n";
    assert_eq!(patched(text, patch), "top\nx\ny\nx\n");
}

#[test]
fn begin_patch_tolerates_fences_blank_lines_and_unified_headers() {
    let patch = "```\n*** Begin Patch\n*** Update File: f\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n\n*** End Patch\n```\n";
    let parsed = parse(patch).unwrap();
    let Hunk::Lines(h) = &parsed.files[0].hunks[0] else {
        panic!()
    };
    assert_eq!(h.stated_index, Some(1));
    assert_eq!(patched("a\nb\nc\n", patch), "a\nb\nC\n");
    // A blank line inside a hunk is an empty context line.
    let patch = "*** Begin Patch\n*** Update File: f\n a\n\n-b\n+B\n*** End Patch\n";
    assert_eq!(patched("a\n\nb\n", patch), "a\n\nB\n");
}

#[test]
fn begin_patch_syntax_errors_name_the_line() {
    for (patch, needle) in [
        ("*** Begin Patch\n*** Update File: f\n-a\n+b\n", "End Patch"),
        (
            "*** Begin Patch\n*** Frobnicate: f\n*** End Patch\n",
            "line 2",
        ),
        (
            "*** Begin Patch\n*** Add File: f\nno plus\n*** End Patch\n",
            "'+'",
        ),
        (
            "*** Begin Patch\n*** Update File: f\n*** End Patch\n",
            "no hunks",
        ),
        (
            "*** Begin Patch\n*** Update File: f\n?a\n*** End Patch\n",
            "line 3",
        ),
        ("*** Begin Patch\n*** End Patch\n", "no file"),
    ] {
        let e = parse(patch).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::InvalidArguments);
        assert!(e.message.contains(needle), "{patch:?}: {}", e.message);
    }
}

#[test]
fn repeated_sections_merge_or_are_refused() {
    let patch =
        "*** Begin Patch\n*** Update File: f\n-a\n+A\n*** Update File: f\n-c\n+C\n*** End Patch\n";
    let parsed = parse(patch).unwrap();
    assert_eq!(parsed.files.len(), 1);
    assert_eq!(parsed.files[0].hunks.len(), 2);
    assert_eq!(patched("a\nb\nc\n", patch), "A\nb\nC\n");
    let patch = "*** Begin Patch\n*** Delete File: f\n*** Add File: f\n+x\n*** End Patch\n";
    assert!(parse(patch)
        .unwrap_err()
        .message
        .contains("two file sections"));
    let patch =
        "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** Add File: b\n+x\n*** End Patch\n";
    assert!(parse(patch).is_err());
}

// ------------------------------------------------------------------ structured form

fn ranges(edits: &[(u64, u64, &str)]) -> Vec<Hunk> {
    let edits: Vec<RangeEdit> = edits
        .iter()
        .map(|&(s, e, r)| RangeEdit {
            start_line: s,
            end_line: e,
            replace_with: r,
        })
        .collect();
    structured::section("f.txt", "", &edits).unwrap().hunks
}

#[test]
fn structured_replace_insert_delete_in_any_order() {
    let text = numbered(5);
    let out = apply(
        &text,
        &ranges(&[(5, 5, "FIVE"), (1, 0, "top\n"), (2, 3, "")]),
    )
    .unwrap();
    assert_eq!(out.text, "top\nline 1\nline 4\nFIVE\n");
    assert_eq!((out.added, out.removed), (2, 3));
    // Appending after the last line.
    let out = apply(&text, &ranges(&[(6, 5, "six\nseven")])).unwrap();
    assert!(out.text.ends_with("line 5\nsix\nseven\n"), "{}", out.text);
}

#[test]
fn structured_out_of_range_and_overlap() {
    let text = numbered(3);
    for (s, e) in [(0, 0), (5, 5), (2, 4), (3, 1)] {
        let r = apply(&text, &ranges(&[(s, e, "x")])).unwrap_err();
        assert_eq!(r[0].reason, Reason::OutOfRange, "{s}-{e}");
    }
    let r = apply(&text, &ranges(&[(1, 2, "x"), (2, 3, "y")])).unwrap_err();
    assert_eq!((r.len(), r[0].reason, r[0].hunk), (1, Reason::Overlap, 2));
    // An insertion inside a replaced range overlaps; one at its edge does not.
    assert_eq!(
        apply(&text, &ranges(&[(1, 3, "x"), (2, 1, "y")])).unwrap_err()[0].reason,
        Reason::Overlap
    );
    assert_eq!(
        apply(&text, &ranges(&[(2, 3, "x"), (2, 1, "y")]))
            .unwrap()
            .text,
        "line 1\ny\nx\n"
    );
}

#[test]
fn structured_file_hash_must_be_hex() {
    let edit = [RangeEdit {
        start_line: 1,
        end_line: 1,
        replace_with: "x",
    }];
    assert!(structured::section("f", "nothex", &edit).is_err());
    let h = "AB".repeat(32);
    assert_eq!(
        structured::section("f", &h, &edit).unwrap().file_hash,
        Some("ab".repeat(32))
    );
    assert!(structured::section("f", "", &[]).is_err());
}

// ------------------------------------------------------------------ bytes kept

#[test]
fn crlf_bom_and_missing_final_newline_are_kept() {
    let patch = "*** Begin Patch\n*** Update File: f\n a\n-b\n+B\n+B2\n c\n*** End Patch\n";
    assert_eq!(
        patched("\u{feff}a\r\nb\r\nc\r\n", patch),
        "\u{feff}a\r\nB\r\nB2\r\nc\r\n"
    );
    assert_eq!(patched("a\r\nb\r\nc", patch), "a\r\nB\r\nB2\r\nc");
    assert_eq!(patched("a\nb\nc", patch), "a\nB\nB2\nc");
    // Mixed endings: untouched lines keep theirs, new lines take the dominant one.
    assert_eq!(
        patched("a\r\nb\nc\r\nd\r\n", patch),
        "a\r\nB\r\nB2\r\nc\r\nd\r\n"
    );
    // A CRLF patch applies to an LF file and the file stays LF.
    let crlf = patch.replace('\n', "\r\n");
    assert_eq!(patched("a\nb\nc\n", &crlf), "a\nB\nB2\nc\n");
    // Appending after a last line without a newline keeps the file without one.
    let patch = "*** Begin Patch\n*** Update File: f\n c\n+d\n*** End of File\n*** End Patch\n";
    assert_eq!(patched("a\nc", patch), "a\nc\nd");
    // Context matched loosely keeps the file's own bytes.
    let patch = "*** Begin Patch\n*** Update File: f\n a\n-b\n+B\n*** End Patch\n";
    assert_eq!(patched("\ta  \nb\n", patch), "\ta  \nB\n");
}

#[test]
fn loose_matches_are_noted() {
    let parsed =
        parse("*** Begin Patch\n*** Update File: f\n    x\n-y\n+Y\n*** End Patch\n").unwrap();
    let out = apply("\tx\ny\n", &parsed.files[0].hunks).unwrap();
    assert_eq!(out.text, "\tx\nY\n");
    assert!(out.notes[0].contains("indentation"), "{:?}", out.notes);
}

#[test]
fn every_hunk_is_reported_never_dropped() {
    let patch = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-nope\n+x\n@@ -3 +3 @@\n-line 3\n+THREE\n@@ -5 +5 @@\n-also nope\n+y\n";
    let r = rejected(&numbered(5), patch);
    let got: Vec<(usize, Reason)> = r.iter().map(|r| (r.hunk, r.reason)).collect();
    assert_eq!(
        got,
        vec![(1, Reason::ContextNotFound), (3, Reason::ContextNotFound)]
    );
    assert_eq!(r[0].expected, vec!["nope"]);
    assert_eq!(r[0].path, "f.txt");
}

#[test]
fn overlapping_located_hunks_are_rejected() {
    let patch =
        "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n@@\n-b\n+BB\n c\n*** End Patch\n";
    let r = rejected("a\nb\nc\n", patch);
    assert_eq!(r[0].reason, Reason::Overlap);
    assert_eq!(r[0].hunk, 2);
}

#[test]
fn context_at_start_and_end_of_file() {
    let text = numbered(4);
    let patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-line 1\n+ONE\n line 2\n@@ -3,2 +3,2 @@\n line 3\n-line 4\n+FOUR\n";
    assert_eq!(patched(&text, patch), "ONE\nline 2\nline 3\nFOUR\n");
}

#[test]
fn deleting_every_line_leaves_an_empty_file() {
    let patch = "--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-a\n-b\n";
    assert_eq!(patched("a\nb\n", patch), "");
    assert_eq!(patched("\u{feff}a\nb", patch), "\u{feff}");
}

/// Property: for random files and random edits, a unified diff made by `similar` applies
/// back to exactly the new text (exercises location, endings and final newlines).
#[test]
fn similar_diffs_roundtrip_through_the_core() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let words = [
        "fn",
        "}",
        "{",
        "",
        "let x = 1;",
        "return",
        "  indented",
        "x",
    ];
    for round in 0..300 {
        let len = next(40) as usize;
        let old: Vec<&str> = (0..len)
            .map(|_| words[next(words.len() as u64) as usize])
            .collect();
        let mut new = old.clone();
        for _ in 0..next(6) {
            let at = next(new.len() as u64 + 1) as usize;
            match next(3) {
                0 if at < new.len() => {
                    new.remove(at);
                }
                1 if at < new.len() => new[at] = "changed",
                _ => new.insert(at, "inserted"),
            }
        }
        let ending = if round % 3 == 0 { "\r\n" } else { "\n" };
        let join = |v: &[&str], last: bool| {
            let mut s = v.join(ending);
            if last && !v.is_empty() {
                s.push_str(ending);
            }
            s
        };
        let final_nl = round % 4 != 0;
        let (old_text, new_text) = (join(&old, final_nl), join(&new, final_nl));
        if old_text == new_text || new.is_empty() || old.is_empty() {
            continue;
        }
        let diff = similar::TextDiff::from_lines(&old_text, &new_text);
        let udiff = diff.unified_diff().header("a/f", "b/f").to_string();
        let parsed = parse(&udiff).unwrap_or_else(|e| panic!("round {round}: {e}\n{udiff}"));
        let out = apply(&old_text, &parsed.files[0].hunks)
            .unwrap_or_else(|r| panic!("round {round}: {r:#?}\n{udiff}"));
        assert_eq!(out.text, new_text, "round {round}\n{udiff}");
    }
}

#[test]
fn git_and_plain_sections_mix_and_no_change_line_is_dropped() {
    let patch = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n";
    let parsed = parse(patch).unwrap();
    let paths: Vec<&str> = parsed.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, vec!["x", "y"]);
    // The header counts one line on each side, the hunk has two changes: an error, not a
    // silently shorter change.
    let e = parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n").unwrap_err();
    assert!(e.message.contains("outside every hunk"), "{}", e.message);
}
