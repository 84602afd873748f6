"""The JSON Schema of scenario files that the package ships (`snarl/config.schema.json`,
generated from the Rust config types: crates/snarl-core/tests/it/schema.rs keeps it
current) accepts every scenario and preset of the repository, refuses what the loader
refuses by name, type or unit, and is the one `.taplo.toml` gives editors for exactly the
scenario files."""

from __future__ import annotations

import fnmatch
import importlib.resources
import json
import tomllib
from pathlib import Path

import jsonschema
import pytest
from conftest import REPO, SMALL

SCHEMA_FILE = importlib.resources.files("snarl") / "config.schema.json"


def _schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def _validator() -> jsonschema.Draft7Validator:
    schema = _schema()
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def _is_scenario(data: dict) -> bool:
    """As `snarl check` tells the kinds apart: a sweep has a `base`, a findings file
    `finding`s, a search space `parameter`s; any other file is a scenario or a preset."""
    return not ({"base", "finding", "parameter"} & data.keys())


def _scenario_files() -> list[Path]:
    files = sorted((REPO / "scenarios").rglob("*.toml"))
    return [f for f in files if _is_scenario(tomllib.loads(f.read_text(encoding="utf-8")))]


def _errors(validator: jsonschema.Draft7Validator, text: str) -> list[str]:
    return [e.message for e in validator.iter_errors(tomllib.loads(text))]


def test_the_package_ships_a_draft_7_schema():
    schema = _schema()
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    _validator()
    # Descriptions come from the Rust doc comments.
    assert "Total simulated time" in schema["definitions"]["SimulationConfig"]["properties"]["duration"]["description"]


def test_every_scenario_and_preset_validates():
    validator, files = _validator(), _scenario_files()
    assert len(files) > 100, files
    assert any("presets" in f.parts for f in files) and any("include" in f.read_text() for f in files)
    failures = []
    for f in files:
        errors = sorted(validator.iter_errors(tomllib.loads(f.read_text(encoding="utf-8"))), key=str)
        if errors:
            best = jsonschema.exceptions.best_match(errors)
            failures.append(f"{f.relative_to(REPO)}: at {list(best.absolute_path)}: {best.message}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    ("edit", "found"),
    [
        # Unknown keys, at the top, in a section, in a typed section, in a list of tables.
        (lambda t: t + "\n[bogus]\nx = 1\n", "'bogus' was unexpected"),
        (lambda t: t.replace("duration", "duraton"), "'duraton' was unexpected"),
        (lambda t: t.replace("hosts = 8", "hosts = 8\nhostz = 2"), "not valid under any"),
        (lambda t: t + "\n[[observe.queues]]\nswitch = 0\nport = 1\nprio = 0\n", "'prio' was unexpected"),
        # Unknown type, malformed quantity, wrong value type, `[ecn]` with a type.
        (lambda t: t.replace("single_switch", "singel_switch"), "'singel_switch' is not one of"),
        (lambda t: t.replace('"20us"', '"20 parsecs"'), "does not match"),
        (lambda t: t.replace("load = 0.5", 'load = "half"'), "is not of type 'number'"),
        (lambda t: t + '\n[ecn]\ntype = "red"\n', "'type' was unexpected"),
        # A file that includes nothing needs [simulation].
        (lambda t: t.replace('[simulation]\nduration = "20us"\n', ""), "'simulation' is a required property"),
    ],
)
def test_a_broken_file_fails(edit, found):
    validator = _validator()
    assert _errors(validator, SMALL) == []
    errors = _errors(validator, edit(SMALL))
    assert errors and any(found in e for e in errors), errors


def test_what_the_loader_reads_before_serde_passes():
    validator = _validator()
    for text in [
        'include = "base.toml"\n[topology]\nlinks_per_pair = 2\n',  # partial sections over an include
        SMALL + '\n[ecn]\nkmin = "10KiB"\n',  # [ecn]: RED marking without its type
        SMALL + '\n[switch]\ntype = "shared_buffer"\n[flow_control]\ntype = "pfc"\nxoff = [50, "200KiB"]\nxon = 40\n',
        SMALL + '\n[routing]\nselect = "adaptive"\n',  # the default type left out
        'seed = "18446744073709551615"\n' + SMALL,  # a seed above TOML's integers
        SMALL + '\n[congestion_control]\ntype = "ibcc"\nccti_timer = 150\ncct = [[0, 0], [0, 1]]\n',
    ]:
        assert _errors(validator, text) == [], text


def test_taplo_maps_the_schema_to_exactly_the_scenarios():
    config = tomllib.loads((REPO / ".taplo.toml").read_text(encoding="utf-8"))
    [rule] = [r for r in config["rule"] if "schema" in r]
    assert (REPO / rule["schema"]["path"]).resolve() == Path(str(SCHEMA_FILE)).resolve()

    # Taplo's globs (globset) let `*` cross `/`, as fnmatch does.
    def covered(path: str) -> bool:
        match = lambda patterns: any(fnmatch.fnmatchcase(path, p) for p in patterns)  # noqa: E731
        return match(rule["include"]) and not match(rule.get("exclude", []))

    every = {str(f.relative_to(REPO)) for f in (REPO / "scenarios").rglob("*.toml")}
    scenarios = {str(f.relative_to(REPO)) for f in _scenario_files()}
    assert {f for f in every if covered(f)} == scenarios
