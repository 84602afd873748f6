"""The summary's sections and the tables of a mechanism reach Python by the generic path:
the package holds no code of its own for any mechanism (here IB CC), yet its section is
in the summary, its table in ``Report.tables`` (and ``report.<name>``), and its line in
``Report.notes`` and the printout of ``snarl run``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import snarl

PACKAGE = Path(snarl.__file__).parent

IBCC_TOML = """\
[simulation]
duration = "200us"
window = "20us"

[topology]
type = "single_switch"
hosts = 5

[switch]
speedup = 2.0

[congestion_control]
type = "ibcc"

[traffic]
load = 1.0
pattern = { type = "incast", destination = 4 }
"""


def test_the_package_names_no_mechanism():
    for name in ("cli.py", "report.py", "html.py"):
        text = (PACKAGE / name).read_text(encoding="utf-8").lower()
        for word in ("ibcc", "fecn", "becn", "pfc", "isolation", "tmax", "receive_rate"):
            assert word not in text, f"{name} names {word}"


def test_a_mechanisms_section_table_and_note_reach_the_report(write_config, cli):
    path = write_config(IBCC_TOML)
    report = snarl.run(path)
    section = report.summary["ibcc"]
    assert section["fecn_marks"] > 0 and section["becns"] > 0
    # Its table: in `tables`, by `table(name)` and as an attribute.
    assert "ibcc" in report.tables
    assert report.ibcc is report.table("ibcc")
    # Counted in InfiniBand's own terms, and agreeing: section, counters, both tables.
    counters = report.summary["counters"]
    assert report.ibcc["fecn_marks"].sum() == counters["fecn_marks"] == section["fecn_marks"]
    assert report.ibcc["becns"].sum() == counters["becns_delivered"] == section["becns"]
    assert report.fabric["fecn_marks"].sum() == counters["fecn_marks"]
    assert report.fabric["becns"].sum() == counters["becns_sent"]
    assert not {"ecn_marks", "cnps_sent", "cnps_delivered", "rate_cuts"} & set(counters)
    assert not {"ecn_marks", "cnps"} & set(report.fabric.columns)
    with pytest.raises(AttributeError):
        report.no_such_table  # noqa: B018
    # Its line, written by the mechanism with its figures, in summary order.
    line = f"IB CC: {section['fecn_marks']:,} FECN marks, {section['becns']:,} BECNs delivered (whole run)"
    notes = [n for n in report.notes if n.startswith(line)]
    assert notes == [f"{line}; CCTI mean {section['ccti_mean']:,.1f}, highest {section['ccti_max']:,}"], report.notes
    words = {w for n in report.notes for w in re.split(r"[^A-Za-z]+", n)}
    assert not words & {"CNP", "CNPs", "ECN"}, report.notes
    # The summary JSON is the core's, the section in its place.
    keys = list(json.loads(report.to_json()))
    assert keys.index("recovery") < keys.index("ibcc") < keys.index("sim_time")

    done = cli("run", path)
    assert done.returncode == 0, done.stderr
    for note in report.notes:
        assert note in done.stdout, done.stdout
