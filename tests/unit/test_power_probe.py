"""Power sensors: RAPL counters read from a powercap tree, IPMI's reading, and the reason
recorded where no sensor answers (never a zero)."""

from __future__ import annotations

from pathlib import Path

import pytest

from storbench import power


def _zone(root: Path, name: str, energy: int, wrap: int = 2**32) -> Path:
    z = root / name
    z.mkdir(parents=True)
    (z / "energy_uj").write_text(f"{energy}\n")
    (z / "max_energy_range_uj").write_text(f"{wrap}\n")
    return z


def test_power_rapl_watts_are_energy_over_time_across_a_wrap(tmp_path: Path) -> None:
    a = _zone(tmp_path, "intel-rapl:0", 1_000_000)
    b = _zone(tmp_path, "intel-rapl:1", 999_000_000, wrap=1_000_000_000)
    _zone(tmp_path, "intel-rapl:0:0", 5)  # a sub-zone (core): inside package 0, not added
    src = power.probe(tmp_path)
    assert src.kind == "rapl" and [z.name for z in src.zones] == ["intel-rapl:0", "intel-rapl:1"]
    meter = power.PowerMeter(src)
    assert meter.read(10.0) is None  # a first reading has no interval
    (a / "energy_uj").write_text("31000000\n")  # +30 J
    (b / "energy_uj").write_text("9000000\n")  # +10 J across the wrap
    assert meter.read(12.0) == pytest.approx(20.0)  # 40 J in 2 s


def test_power_no_sensor_says_why_and_gives_no_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(power.shutil, "which", lambda name: None)
    src = power.probe(tmp_path / "absent")
    assert src.kind is None
    assert "absent" in src.why and "ipmitool not installed" in src.why
    assert src.to_dict() == {"source": None, "why": src.why}
    assert power.PowerMeter(src).read(1.0) is None


def test_power_this_machines_inventory_names_its_source_or_why_not() -> None:
    from storbench.preflight.inventory.host import host_inventory

    p = host_inventory()["power"]
    assert (p["source"] in ("rapl", "ipmi")) != bool(p.get("why"))
