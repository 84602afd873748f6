"""The exception classes made by snarl._core and re-exported by snarl."""

from __future__ import annotations

import json
import pickle

import pytest

import snarl
from snarl import _core

from conftest import SMALL


@pytest.mark.parametrize(
    ("name", "builtin"),
    [
        ("ConfigError", ValueError),
        ("TopologyError", ValueError),
        ("DeadlockError", RuntimeError),
        ("InternalError", RuntimeError),
    ],
)
def test_hierarchy(name, builtin):
    cls = getattr(snarl, name)
    assert cls is getattr(_core, name)
    assert issubclass(cls, snarl.SnarlError)
    assert issubclass(cls, builtin)
    assert cls.__module__ == "snarl"
    assert cls.__name__ == name
    assert cls.__doc__


def test_base_class():
    assert issubclass(snarl.SnarlError, Exception)
    assert not issubclass(snarl.SnarlError, (ValueError, RuntimeError))
    assert snarl.SnarlError.__module__ == "snarl"


def test_config_error_carries_path_and_message():
    with pytest.raises(snarl.ConfigError) as caught:
        snarl.resolve_config("[simulation]\nduration = \"1us\"\n[topology]\ntype = \"single_switch\"\nhosts = 2\n[traffic]\nload = 2.0\n")
    error = caught.value
    assert error.path == "traffic.load"
    assert "fraction" in error.message
    assert str(error) == f"config error at `{error.path}`: {error.message}"


def test_invalid_toml_is_a_config_error():
    with pytest.raises(snarl.ConfigError) as caught:
        snarl.resolve_config("[simulation\n")
    assert "invalid TOML" in str(caught.value)


def test_invalid_json_dict_text_is_a_config_error():
    with pytest.raises(snarl.ConfigError) as caught:
        _core.resolve_config('{"simulation": ')
    assert "JSON" in str(caught.value)


def test_classes_can_be_raised_and_caught_by_their_builtin():
    with pytest.raises(RuntimeError):
        raise snarl.DeadlockError("deadlock: stuck")
    error = pickle.loads(pickle.dumps(snarl.TopologyError("no such fabric")))
    assert isinstance(error, snarl.TopologyError) and str(error) == "no such fabric"


RING_DEADLOCK = """\
[simulation]
duration = "2ms"
[topology]
type = "torus"
sides = [8]
hosts_per_switch = 1
[switch]
vcs = 1
input_buffer = "4KiB"
output_buffer = "4KiB"
[routing]
type = "minimal"
deadlock_avoidance = false
[traffic]
load = 1.0
pattern = { type = "shift", offset = 3 }
"""


def test_a_deadlock_names_its_blocked_queues_as_data():
    with pytest.raises(snarl.DeadlockError) as caught:
        snarl.run(RING_DEADLOCK)
    error = caught.value
    assert error.cycles == 0  # the whole ring stopped
    assert 1 <= len(error.blocked) <= 10
    first = error.blocked[0]
    assert set(first) == {"switch", "port", "vc", "side", "toward", "packets", "credit_bytes", "on_cycle"}
    assert first["side"] in ("input", "output") and first["packets"] >= 1
    assert all(0 <= q["switch"] < 8 and q["vc"] == 0 for q in error.blocked)
    assert f"switch {first['switch']} {first['side']} port {first['port']}" in str(error)


HUGE_DRAGONFLY = """\
[simulation]
duration = "1us"

[topology]
type = "dragonfly"
hosts_per_switch = 64
switches_per_group = 128
global_links_per_switch = 64

[routing]
type = "minimal"

[switch]
vcs = 2

[traffic]
load = 0.5
"""
"""67 million hosts: far more than the memory of any machine."""


def test_a_fabric_too_large_for_memory_is_a_config_error():
    with pytest.raises(snarl.ConfigError) as caught:
        snarl.run(HUGE_DRAGONFLY)
    assert caught.value.path == "simulation.max_memory"
    assert "67,117,056 hosts" in caught.value.message
    assert "needs an estimated" in caught.value.message


def test_a_fabric_too_large_for_memory_exits_2_with_one_line(cli, write_config):
    done = cli("run", write_config(HUGE_DRAGONFLY))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("snarl: error: config error at `simulation.max_memory`")
    assert done.stderr.count("\n") == 1


def test_a_lower_memory_limit_refuses_what_would_fit():
    with pytest.raises(snarl.ConfigError) as caught:
        snarl.run(SMALL, set={"simulation.max_memory": "1MiB"})
    assert caught.value.path == "simulation.max_memory"
    assert "set by `simulation.max_memory`" in caught.value.message


@pytest.mark.parametrize("seed", [2**63 - 1, 2**63, 2**64 - 1])
def test_every_64_bit_seed_runs(simulate, seed):
    report = simulate(SMALL, seed=seed)
    assert report.summary["seed"] == seed


def test_the_largest_seed_runs_from_the_command_line(cli, small_config):
    done = cli("run", small_config, "--json", "--seed", str(2**64 - 1))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["seed"] == 2**64 - 1


MISLEADING = {
    # A value of a key inside a section chosen by its type: named at the key.
    "switch.crossbar": '[switch]\ncrossbar = "per_VC"\n',
    "switch.input_queuing": '[switch]\ninput_queuing = "VOQ"\n',
    # A host listed twice: named at its second place.
    "traffic.groups.0.hosts.1": '[[traffic.groups]]\nname = "pair"\nhosts = [0, 0]\n',
    # Congestion control whose notifications cannot fit a buffer.
    "switch.input_buffer": '[nic]\nmtu = "32B"\n[switch]\ninput_buffer = "32B"\noutput_buffer = "32B"\n'
    '[congestion_control]\ntype = "ibcc"\n',
}


@pytest.mark.parametrize("path", sorted(MISLEADING))
def test_misleading_settings_are_refused_at_their_key(path, cli, write_config):
    text = SMALL + "\n" + MISLEADING[path]
    with pytest.raises(snarl.ConfigError) as caught:
        snarl.resolve_config(text)
    assert caught.value.path == path, caught.value
    done = cli("run", write_config(text))
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr
    assert f"`{path}`" in done.stderr, done.stderr
