"""Making sure no ViZDoom engine process outlives the Python process that owns it.

ViZDoom spawns its engine (``vizdoom``) as a child of the Python process. If
Python dies without ``close()`` (SIGKILL, crash) the engine would be left
running. :class:`EngineGuard` starts a tiny ``sh`` watchdog in its own session,
tells it the engine's pid through a pipe, and when that pipe closes — because
we closed it, or because the kernel did when our process died — the watchdog
SIGKILLs every engine pid it was told about that is still a ``vizdoom``
process. A normal :meth:`EngineGuard.release` first tells it to forget them.

The pid is only known once the engine exists, and a process killed in between
(during ``init()``) would leave an engine no one was told about. So each guard
also has a token that the session puts in the environment the engine inherits
(:data:`TOKEN_VAR`); the watchdog also kills every ``vizdoom`` process whose
environment carries it.

An engine that dies inside ``init()`` (a damaged map) takes the Python process
with it (SIGSEGV). :func:`probe_start` therefore starts a map Golem has not
seen start in a throw-away child process first, so that death becomes one line.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping

import structlog

log = structlog.get_logger(__name__)

ENGINE_COMM = "vizdoom"

#: Environment variable an engine inherits from its session: the token of the guard that kills it.
TOKEN_VAR = "GOLEM_ENGINE_GUARD"

# $1: the guard's token. Tracked pids, then any engine started with the token (told about or not).
_WATCHDOG = r"""
pids=
token="$1"
while read -r line; do
  case "$line" in
    clear) pids=; token= ;;
    *) pids="$pids $line" ;;
  esac
done
if [ -n "$token" ]; then
  for f in $(grep -lzx "GOLEM_ENGINE_GUARD=$token" /proc/[0-9]*/environ 2>/dev/null); do
    p="${f#/proc/}"; pids="$pids ${p%/environ}"
  done
fi
for p in $pids; do
  if [ "$(cat /proc/$p/comm 2>/dev/null)" = "vizdoom" ]; then kill -9 "$p" 2>/dev/null; fi
done
"""


# The child of :func:`probe_start`: start the engine on the given scenario, play a few tics, close.
_PROBE = r"""
import json, sys
import vizdoom as vzd
spec = json.loads(sys.argv[1])
game = vzd.DoomGame()
if spec.get("config") and not game.load_config(spec["config"]):
    sys.exit("cannot load config")
if spec.get("wad"):
    game.set_doom_scenario_path(spec["wad"])
if spec.get("iwad"):
    game.set_doom_game_path(spec["iwad"])
if spec.get("map"):
    game.set_doom_map(spec["map"])
game.set_window_visible(False)
game.set_sound_enabled(False)
game.set_audio_buffer_enabled(False)
game.set_screen_resolution(vzd.ScreenResolution.RES_160X120)
game.set_mode(vzd.Mode.PLAYER)
try:
    game.init()
    game.advance_action(2)
    game.new_episode()
    game.advance_action(2)
except Exception as exc:
    sys.exit("error: " + (str(exc).strip().splitlines() or [type(exc).__name__])[0])
finally:
    game.close()
"""

#: Scenarios already probed in this process (their :func:`probe_start` ``key``).
_PROBED: set[str] = set()


def probe_start(spec: Mapping[str, str | None], what: str, timeout: float, key: str | None = None) -> None:
    """Start the engine on ``spec`` in a child process and fail with one line if it dies, errs or hangs.

    Args:
        spec: ``config`` (a ``.cfg`` path), ``wad`` (scenario WAD), ``iwad``, ``map`` — each optional.
        what: the scenario as named in the message (the WAD's path).
        timeout: seconds the child may take (engine start, a few tics, a new episode).
        key: identifies what was probed (the files' identity); a key probed before in this
            process is not probed again.

    Raises:
        GolemError: the engine crashed (signal), reported an error, or did not finish within ``timeout``.
    """
    from golem.errors import GolemError

    if key is not None and key in _PROBED:
        return
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", _PROBE, json.dumps(dict(spec))],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its engine shares its process group, killed with it below
    )
    # If this process dies first (SIGKILL included), the kernel closes the watchdog's stdin and the watchdog
    # kills the probe's whole group: the probe and its engine never outlive us.
    watchdog = subprocess.Popen(
        ["sh", "-c", f"cat >/dev/null; kill -9 -{proc.pid} 2>/dev/null"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.communicate()
        raise GolemError(
            f"ViZDoom engine did not start {what} within {timeout:g}s; the map is damaged or unplayable"
        ) from None
    finally:
        _kill_group(proc.pid)
        watchdog.kill()  # before its stdin closes: the probe's pid is free again and must not be signalled
        watchdog.wait()
        if watchdog.stdin is not None:
            watchdog.stdin.close()
    seconds = round(time.monotonic() - started, 3)
    if proc.returncode < 0:
        name = (
            signal.Signals(-proc.returncode).name
            if -proc.returncode in signal.valid_signals()
            else str(-proc.returncode)
        )
        log.info("engine_probe_crashed", scenario=what, signal=name, seconds=seconds)
        raise GolemError(f"ViZDoom engine crashed ({name}) loading {what}: the map is damaged or not playable alone")
    if proc.returncode != 0:
        lines = [line for line in err.decode(errors="replace").splitlines() if line.strip()]
        detail = next((line for line in reversed(lines) if line.startswith("error: ")), lines[-1] if lines else "")
        raise GolemError(
            f"ViZDoom engine failed to start {what}: {detail.removeprefix('error: ') or f'exit {proc.returncode}'}"
        )
    log.debug("engine_probe_ok", scenario=what, seconds=seconds)
    if key is not None:
        _PROBED.add(key)


def _kill_group(pgid: int) -> None:
    """SIGKILL every process left in process group ``pgid`` (a probe child and its engine)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` fields after the command name (state, ppid, …), or ``None``."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def engine_children(parent: int | None = None) -> set[int]:
    """Pids of live (not zombie) ``vizdoom`` engine processes whose parent is ``parent`` (default: us)."""
    parent = os.getpid() if parent is None else parent
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = _stat_fields(int(name))
        if fields is None or fields[0] in ("Z", "X") or int(fields[1]) != parent:
            continue
        try:
            with open(f"/proc/{name}/comm") as fh:
                if fh.read().strip() == ENGINE_COMM:
                    found.add(int(name))
        except OSError:
            continue
    return found


def is_alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


class EngineGuard:
    """Kills the engine processes it tracks if this Python process dies first."""

    def __init__(self) -> None:
        self.pids: set[int] = set()
        #: Put in the engine's environment as :data:`TOKEN_VAR` before it starts (:meth:`environment`).
        self.token = secrets.token_hex(8)
        self._proc: subprocess.Popen[bytes] | None = None
        try:
            self._proc = subprocess.Popen(
                ["/bin/sh", "-c", _WATCHDOG, "golem-engine-guard", self.token],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C to our group must not kill it before it acts
                close_fds=True,
            )
        except OSError as exc:  # no /bin/sh: cleanup on close still works, only the SIGKILL case is lost
            log.warning("engine_guard_unavailable", error=str(exc))

    @contextlib.contextmanager
    def environment(self) -> Iterator[None]:
        """Within the block, processes started by this one (the engine) inherit :data:`TOKEN_VAR`."""
        before = os.environ.get(TOKEN_VAR)
        os.environ[TOKEN_VAR] = self.token
        try:
            yield
        finally:
            if before is None:
                os.environ.pop(TOKEN_VAR, None)
            else:
                os.environ[TOKEN_VAR] = before

    def track(self, pids: set[int]) -> None:
        """Add engine pids to kill if we die."""
        new = pids - self.pids
        if not new:
            return
        self.pids |= new
        self._send("".join(f"{p}\n" for p in sorted(new)))

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to every tracked engine pid still alive."""
        for pid in self.pids:
            if is_alive(pid):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass

    def wait_gone(self, timeout: float = 5.0) -> bool:
        """Wait until no tracked pid is alive (reaping our zombies); ``True`` if all are gone."""
        deadline = time.monotonic() + timeout
        while True:
            for pid in self.pids:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            if not any(is_alive(p) for p in self.pids):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)

    def release(self, *, forget: bool = True) -> None:
        """Stop the watchdog; with ``forget`` it is told the pids are already handled."""
        if self._proc is None:
            return
        if forget:
            self._send("clear\n")
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        self._proc = None

    def _send(self, text: str) -> None:
        if self._proc is None or self._proc.stdin is None:
            return
        try:
            self._proc.stdin.write(text.encode())
            self._proc.stdin.flush()
        except (OSError, ValueError):
            log.warning("engine_guard_lost")
