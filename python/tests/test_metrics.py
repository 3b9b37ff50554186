"""Each call's metrics (docs/c-abi.md, "Metrics"): in the envelope, on the ``wsfs`` log record, and as
``tool.*`` attributes of the current OpenTelemetry span (the Agent Base design's spans)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import wsfs

from conftest import write

LINES = "one\ntwo\nthree\n"


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("middleware"), exporter


def in_span(tracer, coro):
    """Runs the tool call inside a span, as an agent framework's middleware does."""

    async def wrapped():
        with tracer.start_as_current_span("tool call"):
            return await coro

    return asyncio.run(wrapped())


def test_the_envelope_carries_metrics_for_every_read(ws, root):
    write(root / "a.txt", LINES)
    for args in ({"path": "a.txt"}, {"path": "a.txt", "start_line": 2}):
        env = ws.call("read_file", **args)
        m = env["metrics"]
        assert m["tool"] == "read_file" and m["path"] == "a.txt" and m["duration_us"] >= 0
        assert (m["start_line"], m["lines_read"]) == ((1, 3) if len(args) == 1 else (2, 2))
    env = ws.call("read_file", path="missing.txt")
    assert env["metrics"] == {"tool": "read_file", "path": "missing.txt", "duration_us": env["metrics"]["duration_us"]}


def test_a_call_sets_span_attributes_and_logs_its_figures(root, spans, caplog):
    tracer, exporter = spans
    write(root / "a.txt", LINES)
    with wsfs.FileSystemTools(root=root) as tools, caplog.at_level(logging.INFO, logger="wsfs"):
        result = in_span(tracer, tools.read_file(path="a.txt"))
        assert result["success"] and "metrics" not in result
        assert not in_span(tracer, tools.read_file(path="nope.txt"))["success"]
    read, missing = (s.attributes for s in exporter.get_finished_spans())
    assert read["tool.name"] == "read_file" and read["tool.path"] == "a.txt"
    assert (read["tool.start_line"], read["tool.lines_read"], read["tool.bytes_read"]) == (1, 3, len(LINES))
    assert read["tool.truncated"] is False and read["tool.outcome"] == "ok"
    assert isinstance(read["tool.duration_ms"], float)
    assert missing["tool.outcome"] == "path_not_found" and "tool.lines_read" not in missing
    assert not any("one" in str(v) for v in read.values()), "contents on the span"
    record = next(r for r in caplog.records if getattr(r, "wsfs_tool", None) == "read_file")
    assert record.wsfs_metrics["lines_read"] == 3


def test_a_profile_keeps_its_envelope_and_still_reports_figures(root, spans):
    tracer, exporter = spans
    write(root / "a.txt", LINES)
    with wsfs.FileSystemTools(root=root, profile="agent-base") as tools:
        result = in_span(tracer, tools.read_file(path="a.txt"))
    assert result["success"] and "metrics" not in result, result
    (span,) = exporter.get_finished_spans()
    assert span.attributes["tool.name"] == "read_file" and span.attributes["tool.lines_read"] == 3
    # Without the option the library leaves the profile's envelope alone.
    with wsfs.Workspace(root, profile="agent-base") as ws:
        assert "metrics" not in ws.call("read_file", path="a.txt")
