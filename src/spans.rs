//! The `tracing` feature: one span per tool call, named `wsfs.tool`, with the call's
//! [`Metrics`] as `tool.*` fields (the names an OpenTelemetry exporter shows), so a Rust host's
//! subscriber records them without parsing text. The span is entered while the tool runs, so
//! what the tool logs nests under it.

use crate::tools::contract::Metrics;
use tracing::field::Empty;
use tracing::span::EnteredSpan;

/// Opens and enters the span of a call of `tool`; its figures are recorded when it ends.
pub fn enter(tool: &str) -> EnteredSpan {
    tracing::info_span!(
        "wsfs.tool",
        tool.name = tool,
        tool.outcome = Empty,
        tool.path = Empty,
        tool.duration_ms = Empty,
        tool.start_line = Empty,
        tool.lines_read = Empty,
        tool.bytes_read = Empty,
        tool.bytes_written = Empty,
        tool.matches = Empty,
        tool.files_searched = Empty,
        tool.entries = Empty,
        tool.files_changed = Empty,
        tool.truncated = Empty,
    )
    .entered()
}

/// Records a finished call's figures on its span (absent figures stay empty).
pub fn record(span: &EnteredSpan, m: &Metrics, outcome: &str) {
    span.record("tool.outcome", outcome);
    if !m.path.is_empty() {
        span.record("tool.path", m.path.as_str());
    }
    span.record("tool.duration_ms", m.duration_us as f64 / 1000.0);
    let figures = [
        ("tool.start_line", m.start_line),
        ("tool.lines_read", m.lines_read),
        ("tool.bytes_read", m.bytes_read),
        ("tool.bytes_written", m.bytes_written),
        ("tool.matches", m.matches),
        ("tool.files_searched", m.files_searched),
        ("tool.entries", m.entries),
        ("tool.files_changed", m.files_changed),
    ];
    for (name, value) in figures {
        if let Some(value) = value {
            span.record(name, value);
        }
    }
    if let Some(truncated) = m.truncated {
        span.record("tool.truncated", truncated);
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::control::CallControl;
    use crate::workspace::Workspace;
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    /// The fields every `wsfs.tool` span ended with, in order.
    #[derive(Clone, Default)]
    struct Spans(Arc<Mutex<Vec<BTreeMap<String, String>>>>);

    struct Fields<'a>(&'a mut BTreeMap<String, String>);

    impl Visit for Fields<'_> {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            self.0
                .insert(field.name().to_string(), format!("{value:?}"));
        }
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.insert(field.name().to_string(), value.to_string());
        }
    }

    impl Subscriber for Spans {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, span: &Attributes<'_>) -> Id {
            let mut spans = self.0.lock().unwrap();
            let mut fields = BTreeMap::new();
            fields.insert("span".to_string(), span.metadata().name().to_string());
            span.record(&mut Fields(&mut fields));
            spans.push(fields);
            Id::from_u64(spans.len() as u64)
        }
        fn record(&self, span: &Id, values: &Record<'_>) {
            let mut spans = self.0.lock().unwrap();
            let index = span.into_u64() as usize - 1;
            values.record(&mut Fields(&mut spans[index]));
        }
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, _: &Event<'_>) {}
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    #[test]
    fn every_call_is_a_span_with_its_figures() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let json = serde_json::json!({"root": tmp.path()}).to_string();
        let ws = Workspace::open(&Config::from_json(&json).unwrap())
            .unwrap()
            .0;
        let ctl = CallControl::new(Duration::from_secs(10), None);
        let spans = Spans::default();
        tracing::subscriber::with_default(spans.clone(), || {
            let args = r#"{"path":"a.txt","start_line":2}"#;
            crate::dispatch::run_tool(&ws, "read_file", args, &ctl).unwrap();
            let missing = r#"{"path":"nope.txt"}"#;
            assert!(crate::dispatch::run_tool(&ws, "read_file", missing, &ctl).is_err());
        });
        let spans = spans.0.lock().unwrap();
        assert_eq!(spans.len(), 2, "{spans:?}");
        let read = &spans[0];
        for (field, value) in [
            ("span", "wsfs.tool"),
            ("tool.name", "read_file"),
            ("tool.outcome", "ok"),
            ("tool.path", "a.txt"),
            ("tool.start_line", "2"),
            ("tool.lines_read", "2"),
            ("tool.bytes_read", "10"),
            ("tool.truncated", "false"),
        ] {
            assert_eq!(
                read.get(field).map(String::as_str),
                Some(value),
                "{field}: {read:?}"
            );
        }
        assert!(read.contains_key("tool.duration_ms"), "{read:?}");
        assert!(
            !read.values().any(|v| v.contains("three")),
            "contents: {read:?}"
        );
        let failed = &spans[1];
        assert_eq!(failed["tool.outcome"], "path_not_found");
        assert_eq!(failed["tool.path"], "nope.txt");
        assert!(!failed.contains_key("tool.lines_read"), "{failed:?}");
    }
}
