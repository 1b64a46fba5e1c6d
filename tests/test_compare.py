"""compare, stability and sweep return the rows they promise."""

import concurrent.futures as cf
import sys

import numpy as np
import pytest

import msim
from msim.compare import energy_scale
from msim.table import Table, to_markdown

from builders import cloth


def _cloth() -> msim.System:
    """A 6x6 cloth of 100 N/m springs pinned at two corners, at rest (a factory for stability)."""
    return cloth(6)


def test_compare_runs_each_method_from_the_same_state():
    sim = _cloth()
    sim.step(1e-3, method="symplectic_euler")
    before = sim.get_state()
    table = msim.compare(sim, ["symplectic_euler", ("explicit_euler", {})], steps=50,
                         dt={"symplectic_euler": 1e-3, "explicit_euler": 5e-4})
    rows = table.to_dict("records") if hasattr(table, "to_dict") else list(table)
    assert [r["method"] for r in rows] == ["symplectic_euler", "explicit_euler"]
    assert [r["dt"] for r in rows] == [1e-3, 5e-4] and all(r["steps"] == 50 for r in rows)
    np.testing.assert_array_equal(sim.positions, before["positions"])  # sim itself untouched
    # the same run by hand gives the same drift
    by_hand = sim.copy()
    e0 = by_hand.energy()["total"]
    for _ in range(50):
        by_hand.step(1e-3, method="symplectic_euler")
    assert rows[0]["energy_drift"] == pytest.approx(by_hand.energy()["total"] - e0, rel=1e-12)
    assert "| method |" in str(table)


def test_steps_and_duration_may_differ_per_method():
    table = msim.compare(_cloth(), ["symplectic_euler", "fms"], steps={"symplectic_euler": 40,
                         "fms": 2}, dt={"symplectic_euler": 5e-3, "fms": 0.1})
    rows = table.to_dict("records") if hasattr(table, "to_dict") else list(table)
    assert [r["steps"] for r in rows] == [40, 2]
    rows = msim.stability(_cloth, ["xpbd", "fms"], [0.01, 0.05],
                          duration={"xpbd": 0.5, "fms": 0.1})
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else list(rows)
    assert [r["steps"] for r in rows] == [50, 10, 10, 2]
    with pytest.raises(ValueError, match="steps: expected an entry for 'fms'"):
        msim.compare(_cloth(), ["fms"], steps={"xpbd": 1}, dt=0.1)


def test_stability_flags_divergence():
    table = msim.stability(_cloth, ["explicit_euler", "symplectic_euler"], [1e-3, 0.05],
                           duration=2.0)
    rows = table.to_dict("records") if hasattr(table, "to_dict") else list(table)
    status = {(r["method"], r["dt"]): r["status"] for r in rows}
    # omega_max ~ 2 sqrt(4 k / m) = 400 rad/s: h = 0.05 is far past 2/omega for both
    assert status[("explicit_euler", 0.05)] == status[("symplectic_euler", 0.05)] == "diverged"
    assert status[("symplectic_euler", 1e-3)] == "stable"


def test_table_prints_as_markdown_without_pandas():
    table = Table([{"a": 1, "b": 0.123456}, {"a": 2, "b": None}])
    assert str(table) == "| a | b |\n|---|---|\n| 1 | 0.1235 |\n| 2 |  |"
    assert to_markdown([]) == "(no rows)"


def final_height(stiffness: float, steps: int) -> float:
    """Lowest vertex of a pinned cloth after `steps` symplectic steps (module level: picklable)."""
    sim = _cloth()
    sim.stiffness = stiffness
    for _ in range(steps):
        sim.step(1e-3, method="symplectic_euler")
    return float(sim.positions[:, 1].min())


@pytest.mark.parametrize("executor", [None, cf.ThreadPoolExecutor(2)])
def test_sweep_runs_the_grid_in_any_executor(executor):
    rows = msim.sweep(final_height, {"stiffness": [50.0, 200.0], "steps": [10, 20]},
                      executor=executor)
    assert [(r["stiffness"], r["steps"]) for r in rows] == [(50.0, 10), (50.0, 20),
                                                             (200.0, 10), (200.0, 20)]
    for r in rows:
        assert r["result"] == final_height(r["stiffness"], r["steps"])


def test_runs_that_lose_the_same_energy_read_the_same_relative_drift():
    # a cloth released from horizontal, run until it hangs at rest: FMS and Newton both lose
    # all the energy the fall released, so their drifts must read the same, in J and relative
    cloth = msim.scenes.hanging_cloth(8)
    table = msim.compare(cloth.system, ["fms", "implicit_euler"], steps=600, dt=1 / 30)
    rows = table.to_dict("records") if hasattr(table, "to_dict") else list(table)
    assert rows[0]["energy_drift"] == pytest.approx(rows[1]["energy_drift"], rel=1e-2)
    # the common scale: the free mass lowered by the cloth's 1 m side (it starts at rest, flat)
    scale = 62 * 0.01 * 9.81 * 1.0
    assert energy_scale(cloth.system) == pytest.approx(scale, rel=1e-12)
    for r in rows:
        assert r["relative_drift"] == pytest.approx(r["energy_drift"] / scale, rel=1e-12)
    assert rows[0]["relative_drift"] == pytest.approx(rows[1]["relative_drift"], rel=1e-2)


def test_a_diverged_step_prints_as_a_step_and_a_finished_run_as_blank():
    table = msim.compare(_cloth(), ["symplectic_euler", "explicit_euler"], steps=100,
                         dt={"symplectic_euler": 1e-3, "explicit_euler": 0.05})
    rows = table.to_dict("records") if hasattr(table, "to_dict") else list(table)
    assert rows[0]["diverged"] is None or str(rows[0]["diverged"]) == "<NA>"
    step = rows[1]["diverged"]
    assert 0 <= step < 100 and int(step) == step
    text = str(table).splitlines()
    assert text[2].endswith("|  |") and text[3].endswith(f"| {int(step)} |")


@pytest.mark.parametrize("runs, kwargs, error, message", [
    (["symplectic_euler", "rk45"], {}, ValueError, r"runs\[1\]: method: expected one of"),
    (["symplectic_euler", ("fms", {"iterations": 0})], {}, ValueError,
     r"runs\[1\]: iterations: expected an integer in"),
    (["symplectic_euler", ("fms",)], {}, TypeError, r"runs\[1\]: expected a method name or a "
                                                     r"\(method, options\) pair"),
    (["symplectic_euler", "fms"], {"dt": {"symplectic_euler": 1e-3, "fms": float("nan")}},
     ValueError, r"dt: expected a finite time > 0 \[s\], got nan"),
    (["symplectic_euler", "fms"], {"dt": {"symplectic_euler": 1e-3, "fms": "0.1"}}, TypeError,
     r"dt: expected a real number of seconds, got str"),
    ("symplectic_euler", {}, TypeError, r"runs: expected a list of method names"),
])
def test_compare_checks_every_run_before_running_any(runs, kwargs, error, message, monkeypatch):
    started = []
    # msim.compare is the function; its module is where run_one lives
    monkeypatch.setattr(sys.modules["msim.compare"], "run_one",
                        lambda *args, **kwargs: started.append(args))
    with pytest.raises(error, match=message):
        msim.compare(_cloth(), runs, steps=10, **{"dt": 1e-3, **kwargs})
    assert started == []  # no run started before the bad one was found


@pytest.mark.parametrize("kwargs, error, message", [
    ({"duration": float("nan")}, ValueError, r"duration: expected a finite time > 0 \[s\], got nan"),
    ({"duration": -1.0}, ValueError, r"duration: expected a finite time > 0"),
    ({"duration": {"symplectic_euler": 1.0}}, ValueError, r"duration: expected an entry for 'fms'"),
    ({"duration": 1.0, "dts": [1e-3, 0.0]}, ValueError, r"dts\[1\]: expected a finite time > 0"),
    ({"duration": 1e300, "dts": [1e-300]}, ValueError, r"duration: .* steps, more than a run"),
    ({"duration": 1.0, "methods": ["fms", "rk45"]}, ValueError, r"methods\[1\]: method: expected"),
    ({"duration": 1.0, "options": {"fms": {"iterations": -1}}}, ValueError,
     r"methods\[1\]: iterations: expected an integer in"),
])
def test_stability_checks_its_arguments_before_running(kwargs, error, message):
    made = []
    arguments = {"methods": ["symplectic_euler", "fms"], "dts": [1e-3], **kwargs}
    with pytest.raises(error, match=message):
        msim.stability(lambda: made.append(1) or _cloth(), **arguments)
    assert made == []
