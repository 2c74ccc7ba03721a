"""Map lumps are checked before the engine sees them, and an engine that dies on a map is one line."""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from golem.errors import GolemError
from golem.scenarios import resolve_scenario
from golem.wad import build_wad, check_map_file


def room(*, v1: int = 0, sector: int = 0, player_type: int = 1, extra_things: bytes = b"") -> bytes:
    """A one-sector square room, 256 units a side, with a player 1 start in the middle (Doom format)."""
    vertexes = b"".join(struct.pack("<hh", x, y) for x, y in ((0, 0), (0, 256), (256, 256), (256, 0)))
    lines = b"".join(
        struct.pack("<HHhhhHH", a, b, 1, 0, 0, i, 0xFFFF) for i, (a, b) in enumerate(((v1, 1), (1, 2), (2, 3), (3, 0)))
    )
    sides = b"".join(
        struct.pack("<hh8s8s8sH", 0, 0, b"-", b"-", b"STARTAN3", sector if i == 0 else 0) for i in range(4)
    )
    sectors = struct.pack("<hh8s8shhh", 0, 128, b"FLOOR4_8", b"CEIL3_5", 192, 0, 0)
    things = struct.pack("<hhhHh", 128, 128, 90, player_type, 7) + extra_things
    return build_wad(
        [
            ("MAP01", b""),
            ("THINGS", things),
            ("LINEDEFS", lines),
            ("SIDEDEFS", sides),
            ("VERTEXES", vertexes),
            ("SEGS", b""),
            ("SSECTORS", b""),
            ("NODES", b""),
            ("SECTORS", sectors),
            ("REJECT", b""),
            ("BLOCKMAP", b""),
        ]
    )


def write(folder: Path, data: bytes, name: str = "room.wad") -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def refused(path: Path, match: str) -> str:
    with pytest.raises(GolemError, match=match) as info:
        resolve_scenario(str(path))
    text = str(info.value)
    assert "\n" not in text and str(path) in text
    return text


def test_a_whole_room_passes(tmp_path):
    assert check_map_file(write(tmp_path, room()), "MAP01").maps() == ["MAP01"]
    assert resolve_scenario(str(tmp_path / "room.wad")).doom_map == "MAP01"


def test_every_map_of_the_bundled_iwads_passes():
    import vizdoom

    from golem.wad import read_wad

    for name in ("freedoom1.wad", "freedoom2.wad"):
        path = Path(vizdoom.__file__).parent / name
        wad = read_wad(path)
        for map_name in wad.maps():
            check_map_file(path, map_name, wad)


def test_a_linedef_naming_a_missing_vertex_is_refused(tmp_path):
    assert "linedef 0 names vertex 65294 of 4" in refused(write(tmp_path, room(v1=0xFF0E)), "damaged")


def test_a_sidedef_naming_a_missing_sector_is_refused(tmp_path):
    assert "sidedef 0 names sector 7 of 1" in refused(write(tmp_path, room(sector=7)), "damaged")


def test_a_lump_that_is_not_whole_records_is_refused(tmp_path):
    text = refused(write(tmp_path, room(extra_things=b"\0\0\0")), "damaged")
    assert "THINGS is 13 bytes, not a multiple of its 10-byte records" in text


def test_a_linedef_without_a_front_side_is_refused(tmp_path):
    data = bytearray(room())
    lines = data.index(struct.pack("<HHhhhHH", 0, 1, 1, 0, 0, 0, 0xFFFF))
    data[lines + 10 : lines + 12] = b"\xff\xff"
    assert "linedef 0 names sidedef 65535 of 4" in refused(write(tmp_path, bytes(data)), "damaged")


# --- the engine itself --------------------------------------------------------------

_START = textwrap.dedent("""
    import sys
    from golem.errors import GolemError
    from golem.runtime.session import Session
    from golem.settings import GolemSettings
    settings = GolemSettings.model_validate({"game": {"scenario": sys.argv[1], "start_timeout": 30}})
    try:
        with Session(settings) as session:
            session.new_episode()
    except GolemError as exc:
        sys.exit(f"error: {exc}")
    print("started")
""")


def start(tmp_path: Path, wad: Path) -> subprocess.CompletedProcess[str]:
    """Start a session on ``wad`` in a child Python (an engine death there must not take pytest down)."""
    return subprocess.run(
        [sys.executable, "-c", _START, str(wad)], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )


@pytest.mark.engine
@pytest.mark.slow
def test_the_room_starts_in_the_engine(tmp_path):
    proc = start(tmp_path, write(tmp_path, room()))
    assert proc.returncode == 0 and proc.stdout.strip() == "started", proc.stderr


@pytest.mark.engine
@pytest.mark.slow
def test_a_map_that_kills_the_engine_is_one_line_naming_the_file(tmp_path):
    # Every lump is whole and consistent, but the only player start is a thing type the engine does
    # not know: ViZDoom 1.3.2 dies in init() and, without the probe, takes Python with it (SIGSEGV).
    wad = write(tmp_path, room(player_type=0xFF01))
    check_map_file(wad, "MAP01")
    proc = start(tmp_path, wad)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "crashed" in errors[0] and str(wad.resolve()) in errors[0], proc.stderr


def test_a_probe_does_not_outlive_a_killed_parent(tmp_path: Path) -> None:
    """SIGKILL of the process running :func:`probe_start` takes the probe's whole process group with it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    marker = tmp_path / "probe-started"
    # the probe's script replaced by one that says it started and then hangs, as a hung engine start would
    script = f"import pathlib, time; pathlib.Path({str(marker)!r}).touch(); time.sleep(120)"
    code = (
        f"import golem.runtime.engine_guard as g\ng._PROBE = {script!r}\ng.probe_start({{}}, 'hang.wad', timeout=120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert time.monotonic() < deadline and parent.poll() is None, "the probe did not start"
            time.sleep(0.1)
        probes = [
            int(p)
            for p in os.listdir("/proc")
            if p.isdigit() and _cmdline(int(p)).count(str(marker)) and int(p) != parent.pid
        ]
        assert probes, "no probe process found"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in probes):
            assert time.monotonic() < deadline, f"probe {probes} outlived its killed parent"
            time.sleep(0.1)
    finally:
        if parent.poll() is None:
            parent.kill()


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False
