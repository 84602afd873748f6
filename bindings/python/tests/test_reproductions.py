"""The papers' reproductions, from their findings files (``scenarios/*/findings.toml``).

Each file states a paper's findings once, as data; this test runs ``snarl findings
--controls`` on it, as a user would, and asserts what ``docs/validation.md`` claims:

- the table the docs carry for the file (between ``<!-- findings: FILE -->`` and
  ``<!-- end of findings -->``) is what snarl prints now: which findings hold, snarl's
  values and the paper's;
- every finding that holds has a control (its mechanism switched off, the cap off, CC
  off) and does not hold at any of its controls: no reproduction is a test that cannot
  fail;
- every run conserves its packets and drops none (lossless).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, assert_invariants

FILES = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "scenarios").glob("*/findings.toml"))


def docs_table(findings: str) -> str | None:
    """The generated table docs/validation.md carries for ``findings``, if any."""
    docs = (REPO / "docs" / "validation.md").read_text(encoding="utf-8")
    block = re.search(rf"<!-- findings: {re.escape(findings)} -->\n(.*?)<!-- end of findings -->", docs, re.S)
    return block.group(1) if block else None


def test_every_findings_file_has_its_table_in_the_docs():
    assert FILES, "no findings files under scenarios/"
    for findings in FILES:
        assert docs_table(findings) is not None, f"docs/validation.md has no generated table for {findings}"


@pytest.mark.parametrize("findings", FILES)
def test_the_findings_hold_as_the_docs_say_and_fail_at_their_controls(findings, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "snarl", "findings", findings, "--controls", "--markdown", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=3600,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == docs_table(findings), f"{findings}: the table in docs/validation.md is not what snarl prints"
    report = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    for finding in report["findings"]:
        if not finding["holds"]:
            continue
        controls = finding["controls"]
        assert controls, f"{finding['id']} holds but has no control: it could not be shown to fail"
        for control in controls:
            assert control["holds"] is False, f"{finding['id']} {'holds' if control['holds'] else 'has no value'} with {control['why']}"
    for record in (out / "points").glob("*.json"):
        run = json.loads(record.read_text(encoding="utf-8"))
        assert run["status"] == "ok", (record.name, run.get("error"))
        assert_invariants(run["summary"])
