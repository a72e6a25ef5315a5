"""`python -m bench --quick`: signoff against its peers writes its JSON, its Markdown table and
valid PNG plots; a section runs alone; a wrong section is refused."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH_EXTRA = (
    "holdpoint",
    "tollgate",
    "redis",
    "matplotlib",
    "langchain",
    "haystack",
    "pydantic_ai",
    "agents",
    "agent_framework",
)
MISSING = [name for name in BENCH_EXTRA if importlib.util.find_spec(name) is None]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(MISSING), reason=f"the bench extra is not installed ({', '.join(MISSING)})"),
]


def run_bench(*arguments: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *arguments],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("peers")
    done = run_bench("--quick", "--output", str(output))
    assert done.returncode == 0, done.stderr
    return output


def section(output: Path, name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((output / f"peers-{name}.json").read_text(encoding="utf-8"))
    return document


def labels(document: dict[str, Any]) -> set[str]:
    return {row["label"] for row in document["rows"]}


def assert_spreads(document: dict[str, Any]) -> None:
    for item in [*document["rows"], *document["ratios"]]:
        spread = item["spread"]
        assert 0 < spread["min"] <= spread["median"] <= spread["max"], item
    for ratio in document["ratios"]:
        if ratio["target"] is not None:
            assert ratio["met"] == (ratio["spread"]["median"] >= ratio["target"]["value"]), ratio


def test_the_fast_path_compares_every_signoff_path_with_both_hooks(quick_run: Path) -> None:
    document = section(quick_run, "fastpath")
    assert document["quick"] is True
    assert {"signoff @guard", "signoff gate.review", "Haystack SignoffConfirmationStrategy.run"} <= labels(
        document
    )
    peers = {row["label"] for row in document["rows"] if row["kind"] == "peer"}
    assert peers == {
        "LangChain HumanInTheLoopMiddleware.after_model",
        "Haystack ConfirmationHook.run (NeverAskPolicy)",
        "Haystack BlockingConfirmationStrategy(NeverAskPolicy).run",
        "OpenAI Agents needs_approval=False (the SDK's own check)",
    }
    ours = [row for row in document["rows"] if row["kind"] == "signoff"]
    assert len(ours) == 8
    targets: dict[str, list[float]] = {}
    for ratio in document["ratios"]:
        if ratio["target"] is not None:
            targets.setdefault(ratio["denominator"], []).append(ratio["target"]["value"])
    assert targets.keys() == {row["label"] for row in ours}
    assert all(sorted(values) == [1.0, 10.0] for values in targets.values())
    untargeted = [ratio["numerator"] for ratio in document["ratios"] if ratio["target"] is None]
    assert untargeted == [
        "Haystack BlockingConfirmationStrategy(NeverAskPolicy).run",
        "OpenAI Agents needs_approval=False (the SDK's own check)",
    ]
    assert_spreads(document)
    assert "thread_time_ns" in " ".join(document["notes"])


def test_the_wake_up_rows_name_each_side_and_its_peers(quick_run: Path) -> None:
    document = section(quick_run, "wakeup")
    found = labels(document)
    assert {
        "signoff in-process (SQLite, two threads)",
        "signoff across processes (SQLite)",
        "signoff through the API (Gate(Client), decision POSTed)",
        "holdpoint (SQLite)",
        "tollgate (SQLite)",
    } <= found
    if os.environ.get("SIGNOFF_TEST_POSTGRES_DSN"):
        assert "signoff across replicas (PostgreSQL)" in found
    else:
        assert any("PostgreSQL rows skipped" in note for note in document["notes"])
    for row in document["rows"]:
        assert row["extra"]["samples"] == 6  # --quick: 2 rounds of 3
        assert row["extra"]["p50"] <= row["extra"]["p99"]
    by_label = {row["label"]: row for row in document["rows"]}
    # tollgate's SQLite store polls every 500 ms: its agent cannot resume within a millisecond
    assert by_label["tollgate (SQLite)"]["extra"]["p50"] > by_label["holdpoint (SQLite)"]["extra"]["p50"]
    assert_spreads(document)


def test_the_store_section_has_signoff_at_both_durabilities_holdpoint_and_the_ceiling(
    quick_run: Path,
) -> None:
    document = section(quick_run, "store")
    assert {
        "signoff SQLite (synchronous=FULL)",
        "signoff SQLite (synchronous=NORMAL)",
        "holdpoint SQLite (synchronous=NORMAL, its setting)",
        "raw sqlite3 (synchronous=FULL)",
        "raw sqlite3 (synchronous=NORMAL)",
    } <= labels(document)
    kinds = {row["label"]: row["kind"] for row in document["rows"]}
    assert kinds["raw sqlite3 (synchronous=FULL)"] == "ceiling"
    assert all(row["extra"]["cpu_us_per_cycle"] > 0 for row in document["rows"])
    assert_spreads(document)
    assert {"machine", "load_before", "load_after"} <= document.keys()
    assert document["machine"]["holdpoint"] == "0.2.0"
    assert document["machine"]["tollgate"] == "1.4.0"


def test_the_markdown_table_and_the_plots(quick_run: Path) -> None:
    markdown = (quick_run / "peers.md").read_text(encoding="utf-8")
    for title in ("Fast path", "Wake-up", "Store", "Scale and HTTP"):
        assert re.search(rf"^### {title}", markdown, flags=re.MULTILINE), title
    assert "Not run:" in markdown and "--with-scale" in markdown
    assert "Load average" in markdown
    assert re.search(
        r"\| signoff SQLite \(synchronous=NORMAL\) / holdpoint .* \| ≥ 1x: (met|\*\*missed\*\*) \|", markdown
    )
    images = re.findall(r"!\[[^]]+\]\(([^)]+)\)", markdown)
    assert images == ["peers-fastpath.png", "peers-wakeup.png", "peers-store.png"]
    for image in images:
        data = (quick_run / image).read_bytes()
        assert data.startswith(PNG_SIGNATURE)
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert width > 300 and height > 100
        from PIL import Image

        with Image.open(quick_run / image) as picture:
            picture.verify()


def test_one_section_runs_alone_and_the_table_keeps_the_others(quick_run: Path) -> None:
    before = section(quick_run, "wakeup")["date"]
    store_before = (quick_run / "peers-store.json").read_text(encoding="utf-8")
    done = run_bench("store", "--quick", "--output", str(quick_run))
    assert done.returncode == 0, done.stderr
    assert section(quick_run, "wakeup")["date"] == before
    assert (quick_run / "peers-store.json").read_text(encoding="utf-8") != store_before
    assert "### Wake-up" in (quick_run / "peers.md").read_text(encoding="utf-8")


def test_an_unknown_section_is_refused(tmp_path: Path) -> None:
    done = run_bench("scales", "--output", str(tmp_path))
    assert done.returncode == 2
    assert "unknown section scales" in done.stderr
    assert not list(tmp_path.iterdir())
