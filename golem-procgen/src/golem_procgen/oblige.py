"""The ``oblige`` map generator: the real Oblige 7.70 (the generator seed 001 uses), run in batch mode.

``make oblige`` (``scripts/build-oblige.sh``) builds the binary from the
``oblige`` 0.1.3 sdist on PyPI into ``.oblige/Oblige_src/``; the setting
``procgen.oblige_binary`` points elsewhere. A build writes Oblige's config
into a temporary folder, runs ``Oblige --batch out.wad --load config.txt
--keep`` from Oblige's own folder (it reads its Lua scripts from there) with
a time-out (``procgen.oblige_timeout_s``), checks the WAD, and only then
moves it into place beside its scenario config. Oblige runs with address-space
randomisation off (``setarch -R``) and glBSP's build-time stamp is zeroed, so
the same configuration and seed give the same bytes. There is never a silent
fallback to another generator: a missing binary or a failed run is one line.

The seed's vocabulary is not Oblige 7.70's: :data:`TO_OBLIGE` maps it
(``plenty`` → ``heaps``, ``sparse`` → ``scarce``, ``normal`` monsters →
``some``, ``lots`` → ``more``, ``swarms`` → ``nuts``, ``mixed`` theme →
``bit_mixed``); everything else is written with Oblige's own defaults for a
single Doom 2 level with pistol starts.

A built map gets its navigation sidecar from the WAD itself
(:func:`golem_procgen.wadnav.nav_from_bytes`: doors, keys, switches, lifts,
teleports and the exit switch), so the ``explorer`` expert plays Oblige's maps
as it plays the builtin generator's (``golem run record --expert explorer
--procgen-phase 1 --generator oblige --maps N``). A map the sidecar finds no
way through still gets one (``"solvable": false``) and a warning in the log.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import structlog

from golem.errors import GolemError
from golem.wad import read_wad_bytes
from golem_procgen.layout import SKILL
from golem_procgen.maps import TIMEOUTS, MapInfo, PhaseGenerator, write_map
from golem_procgen.space import config_from_mapping

log = structlog.get_logger(__name__)

#: The seed's values → Oblige 7.70's, per parameter (values not listed are the same word in both).
TO_OBLIGE: dict[str, dict[str, str]] = {
    "theme": {"mixed": "bit_mixed"},
    "outdoors": {"plenty": "heaps"},
    "steepness": {"plenty": "heaps"},
    "liquids": {"plenty": "heaps"},
    "teleporters": {"plenty": "heaps"},
    "mons": {"sparse": "scarce", "normal": "some", "lots": "more", "swarms": "nuts"},
}
#: The rest of Oblige's settings, fixed: one Doom 2 level for ZDoom (ViZDoom's engine), pistol start.
FIXED: dict[str, str] = {
    "game": "doom2",
    "engine": "zdoom",
    "length": "single",
    "caves": "none",
    "hallways": "mixed",
    "ramp_up": "medium",
    "bosses": "none",
    "traps": "none",
    "cages": "none",
    "health": "normal",
    "ammo": "normal",
    "weapons": "normal",
    "items": "normal",
    "secrets": "none",
}
#: Oblige writes a single level as MAP01.
MAP_NAME = "MAP01"
#: Where ``make oblige`` puts the binary, relative to the repository (and the working directory).
DEFAULT_BINARY = Path(".oblige") / "Oblige_src" / "Oblige"


def oblige_values(params: Mapping[str, str]) -> dict[str, str]:
    """The seed-vocabulary ``params`` as Oblige 7.70 settings (plus :data:`FIXED`)."""
    out = dict(FIXED)
    for name, value in params.items():
        out[name] = TO_OBLIGE.get(name, {}).get(value, value)
    return out


def config_text(params: Mapping[str, str], seed: int) -> str:
    """Oblige's ``--load`` config for ``params`` and ``seed``."""
    lines = ["-- CONFIG FILE : OBLIGE 7.70", "-- written by golem-procgen", f"seed = {int(seed)}"]
    lines += [f"{k} = {v}" for k, v in oblige_values(params).items()]
    lines += ["@misc = 1", "  pistol_starts = yes", "-- END --", ""]
    return "\n".join(lines)


def find_binary(setting: str = "") -> Path:
    """The Oblige binary: ``procgen.oblige_binary``, else ``.oblige/Oblige_src/Oblige`` here or beside this
    package's repo.

    Raises:
        GolemError: not built (says how to build it).
    """
    candidates = (
        [Path(setting).expanduser()]
        if setting
        else [
            Path.cwd() / DEFAULT_BINARY,
            Path(__file__).resolve().parents[3] / DEFAULT_BINARY,
        ]
    )
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path.resolve()
    where = candidates[0]
    raise GolemError(
        f"Oblige is not installed ({where} not found): run `make oblige` (builds Oblige 7.70 into .oblige/) "
        "or set procgen.oblige_binary; or use --backend builtin"
    )


class ObligeGenerator(PhaseGenerator):
    """Builds maps with Oblige 7.70 (the same configuration and seed give the same bytes).

    Args:
        settings: the run's settings (``procgen.space``, ``procgen.oblige_binary``, ``procgen.oblige_timeout_s``).
    """

    name = "oblige"

    def build(self, config: Mapping[str, Any], seed: int, path: Path) -> MapInfo:
        """Run Oblige for ``config`` and ``seed``; write the WAD to ``path`` and its scenario config beside it.

        Raises:
            GolemError: a bad parameter value, Oblige missing, failing, timing out or writing no valid map.
        """
        params = config_from_mapping(config)
        binary = find_binary(self.settings.oblige_binary)
        path = Path(path)
        with tempfile.TemporaryDirectory(prefix="golem-oblige-") as tmp:
            work = Path(tmp)
            (work / "config.txt").write_text(config_text(params, seed))
            out = work / "out.wad"
            try:
                proc = subprocess.Popen(
                    # Oblige finds its scripts from argv[0]: it must be started as ./Oblige from its folder.
                    [*_NO_ASLR, f"./{binary.name}", "--batch", str(out), "--load", str(work / "config.txt"), "--keep"],
                    cwd=binary.parent,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                    start_new_session=True,
                )
            except OSError as exc:
                raise GolemError(f"Oblige could not start ({binary}): {exc}") from None
            try:
                log, _ = proc.communicate(timeout=self.settings.oblige_timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                raise GolemError(
                    f"Oblige took longer than {self.settings.oblige_timeout_s:g}s and was stopped "
                    "(raise procgen.oblige_timeout_s)"
                ) from None
            except BaseException:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                raise
            if proc.returncode != 0 or not out.is_file():
                last = next((line for line in reversed((log or "").splitlines()) if line.strip()), "no output")
                raise GolemError(f"Oblige failed (exit {proc.returncode}): {last.strip()}")
            data = reproducible(out.read_bytes())
        skill = SKILL.get(params["strength"], 3)
        nav = _sidecar(data, path)
        # Oblige's levels are bigger than the builtin's of the same size: four times the time-out.
        return write_map(
            data, path, MAP_NAME, nav, params, skill, self.name, seed, timeout=4 * TIMEOUTS.get(params["size"], 4200)
        )


def _sidecar(data: bytes, path: Path) -> dict[str, Any] | None:
    """The navigation sidecar of a fresh Oblige map (``None`` when the map cannot have one: :func:`write_map`
    then refuses it with its own message)."""
    from golem_procgen.wadnav import nav_from_bytes

    try:
        nav = nav_from_bytes(data, MAP_NAME, source=Path(path).name)
    except GolemError as exc:
        log.warning("oblige.no_sidecar", wad=str(path), reason=str(exc))
        return None
    nav["generator"] = "oblige"
    if not nav["solvable"]:
        log.warning("oblige.unsolvable_sidecar", wad=str(path), exits=len(nav["exits"]))
    return nav


#: Oblige's Lua walks tables in an order that follows memory addresses, so with address-space randomisation one
#: config and seed gave another map about one run in five (measured); started with ASLR off (util-linux's
#: setarch -R) six runs in six gave the same bytes.
_NO_ASLR: tuple[str, ...] = ("setarch", platform.machine(), "-R") if shutil.which("setarch") else ()
_TIME = re.compile(rb"TIME=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def reproducible(data: bytes) -> bytes:
    """``data`` with the build time glBSP stamps into the ``GL_<map>`` lump zeroed (same length, same offsets).

    That stamp is the only byte that differs between two Oblige runs of one config and seed.
    """
    out = bytearray(data)
    for lump in read_wad_bytes(data).lumps:
        if lump.name.startswith("GL_") and lump.name[3:] == MAP_NAME:
            chunk = bytes(out[lump.offset : lump.offset + lump.size])
            out[lump.offset : lump.offset + lump.size] = _TIME.sub(b"TIME=1970-01-01 00:00:00", chunk)
    return bytes(out)


def oblige_available(setting: str = "") -> bool:
    """Whether :func:`find_binary` finds a binary."""
    try:
        find_binary(setting)
    except GolemError:
        return False
    return True


__all__ = [
    "FIXED",
    "ObligeGenerator",
    "TO_OBLIGE",
    "config_text",
    "find_binary",
    "oblige_available",
    "oblige_values",
    "reproducible",
]
