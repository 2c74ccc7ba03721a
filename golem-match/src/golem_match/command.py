"""``golem run match``: agents against agents, bots and people over the engine's own netcode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from golem.atomic import atomic_write
from golem.errors import GolemError
from golem.profiles import PROFILES
from golem.runtime.agent import check_compatible
from golem.runtime.netgame import DEFAULT_PORT, check_deathmatch_starts, host_port, parse_address
from golem.runtime.session import check_display
from golem.scenarios import resolve_scenario
from golem.settings import ResolvedSettings
from golem.workflows.recording import build_sensors
from golem_cli.options import JsonOpt, PluginOpt, SetOpt, StoreOpt, TagOpt, game_flags, seed_option, store_path
from golem_cli.player import resolve_player
from golem_cli.progress import task_bar
from golem_cli.state import AppState, state
from golem_match.match import MatchPlan, MatchReport, PlayerSpec, play_match

#: A hosted match's length when --tics is not given: one minute of game.
DEFAULT_TICS = 2100
#: Longest player name the engine shows in full.
NAME_LIMIT = 15


def _players(st: AppState, resolved: ResolvedSettings, agents: list[str], human: bool) -> list[PlayerSpec]:
    """One :class:`PlayerSpec` per ``--agents`` entry (and the person), each checked before any engine starts.

    Entries: a checkpoint path (``.safetensors``), ``random``, or ``expert:NAME`` (a registered expert).
    """
    registry = st.host.registry
    base = resolved.settings.model_dump_json()
    out: list[tuple[str, PlayerSpec]] = []
    if human:
        out.append(("human", PlayerSpec("human", "human", None, base)))
    for entry in agents:
        if entry == "random":
            out.append(("random", PlayerSpec("random", "random", None, base)))
        elif entry.startswith("expert:"):
            name = entry.split(":", 1)[1]
            registry.get("experts", name)  # unknown expert: one line listing the known ones
            out.append((name, PlayerSpec(name, "expert", name, base)))
        else:
            path = Path(entry)
            if not path.is_file():
                raise GolemError(f"--agents: {entry!r} is not a checkpoint file, 'random' or 'expert:NAME'")
            found, _, _, threshold, settings = resolve_player(resolved, path, registry)
            from golem.runtime.agent import load_agent

            agent = load_agent(found, registry, threshold)  # a corrupt checkpoint fails here, not in a player
            check_compatible(
                agent.spec, settings.brain.profile, PROFILES[settings.brain.profile], build_sensors(settings, registry)
            )
            out.append((path.stem, PlayerSpec(path.stem, "model", str(found), settings.model_dump_json(), threshold)))
    names: list[str] = []
    players: list[PlayerSpec] = []
    for stem, spec in out:
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)[:NAME_LIMIT] or "player"
        candidate, k = name, 2
        while candidate in names:
            candidate, k = f"{name[: NAME_LIMIT - 3]}-{k}", k + 1
        names.append(candidate)
        players.append(PlayerSpec(candidate, spec.kind, spec.ref, spec.settings_json, spec.threshold))
    return players


def report_table(report: MatchReport) -> Table:
    """Frags, deaths and decision time per player, the bots' frags, and the lockstep check."""
    table = Table(
        title=f"{report.rules} on {report.scenario}: {report.game_tics} tics "
        f"({report.game_tics / 35:.0f} s of game) in {report.seconds:.1f} s",
        show_edge=False,
    )
    for col in ("player", "kind", "slot", "frags", "deaths", "decisions", "decide p50 (ms)", "decide p99 (ms)"):
        table.add_column(col, justify="left" if col in ("player", "kind") else "right")
    for p in sorted(report.players, key=lambda p: -p.frags):
        table.add_row(
            p.name,
            p.kind,
            str(p.slot),
            str(p.frags),
            str(p.deaths),
            str(p.decisions),
            f"{p.decision_p50_ms:.2f}",
            f"{p.decision_p99_ms:.2f}",
        )
    for bot in report.bots:
        table.add_row(f"bot {bot['slot']}", "bot", str(bot["slot"]), str(bot["frags"]), "", "", "", "")
    lock = report.lockstep
    if lock["players"] > 1 and lock["advances"]:
        steps = ", ".join(str(s) for s in lock["steps"]) or "–"
        state_ = "in lockstep" if lock["max_tic_spread"] == 0 and lock["steps"] in ([1], []) else "NOT in lockstep"
        table.caption = (
            f"{lock['players']} local players {state_}: largest tic difference at one step "
            f"{lock['max_tic_spread']}, tics per step {{{steps}}}; "
            f"{report.tics_per_second:.0f} tics/s"
        )
    else:
        table.caption = f"{report.tics_per_second:.0f} tics/s"
    return table


def match_command(
    ctx: typer.Context,
    agents: Annotated[
        Optional[str],
        typer.Option(
            "--agents",
            "-a",
            help=(
                "Players started here, comma-separated, each with its own engine: checkpoint paths, 'random', "
                "'expert:NAME'. The first one hosts unless --join."
            ),
            metavar="A,B,…",
        ),
    ] = None,
    host: Annotated[
        Optional[int],
        typer.Option(
            "--host",
            min=1,
            max=16,
            help=(
                "Players in the whole match, those started here included (default: as many as --agents); "
                "the rest join with --join."
            ),
            metavar="N",
        ),
    ] = None,
    join: Annotated[
        Optional[str],
        typer.Option("--join", help="Join the match hosted at ADDR[:PORT] instead of hosting.", metavar="ADDR[:PORT]"),
    ] = None,
    human: Annotated[
        bool, typer.Option("--human", help="Play yourself, in a window (with --join); the host should run --realtime.")
    ] = False,
    bots: Annotated[
        int,
        typer.Option(
            "--bots", min=0, max=15, help="The engine's built-in bots the host adds (cig-style deathmatch maps)."
        ),
    ] = 0,
    scenario: Annotated[
        str, typer.Option("--scenario", "-s", help="Scenario name, .cfg or .wad of a multiplayer map.")
    ] = "cig",
    doom_map: Annotated[
        Optional[str], typer.Option("--map", help="Map lump inside the scenario's WAD (e.g. map01).")
    ] = None,
    coop: Annotated[bool, typer.Option("--coop", help="Cooperative rules instead of deathmatch.")] = False,
    tics: Annotated[
        Optional[int],
        typer.Option(
            "--tics",
            min=1,
            help=(
                "Match length in tics, 35 per second of game (host default 2100; a joining command follows the host's)."
            ),
        ),
    ] = None,
    frags: Annotated[
        Optional[int], typer.Option("--frags", min=1, help="End the match when a player reaches this many frags.")
    ] = None,
    port: Annotated[
        Optional[int],
        typer.Option(
            "--port",
            min=1,
            max=65535,
            help=(
                "UDP port the host listens on, on every interface (default: a random free port when every player "
                f"starts here, else {DEFAULT_PORT})."
            ),
        ),
    ] = None,
    realtime: Annotated[
        bool, typer.Option("--realtime", help="Run at 35 tics/s of wall time, so that people who join can play.")
    ] = False,
    seed: Annotated[Optional[int], seed_option("Engine seed (default: game.seed).")] = None,
    wait: Annotated[
        float, typer.Option("--wait", min=1.0, help="Seconds for every engine to start and every player to join.")
    ] = 60.0,
    stall: Annotated[
        float,
        typer.Option(
            "--stall-timeout", min=1.0, help="Seconds without any player advancing before the match is called off."
        ),
    ] = 10.0,
    record: Annotated[
        bool, typer.Option("--record", help="Store each local player's episode (source agent, expert or human).")
    ] = False,
    store: StoreOpt = None,
    tag: TagOpt = None,
    video: Annotated[
        Optional[Path], typer.Option("--video", help="Write one player's view to a .gif or .mp4.", metavar="PATH")
    ] = None,
    video_player: Annotated[
        int, typer.Option("--video-player", min=1, help="Whose view --video shows: the N-th local player.")
    ] = 1,
    tic_log: Annotated[
        Optional[Path],
        typer.Option(
            "--tic-log",
            help="Write every local player's engine tic, time and decision time per decision to a JSON file.",
            metavar="PATH",
        ),
    ] = None,
    engine_log: Annotated[
        Optional[Path],
        typer.Option(
            "--engine-log", help="Append the engines' own output (netcode messages) to this file.", metavar="PATH"
        ),
    ] = None,
    json_: JsonOpt = False,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
) -> None:
    """Play a multiplayer match in lockstep and report frags, deaths and decision times per player.

    Examples: two checkpoints head to head, `--agents a.safetensors,b.safetensors`;
    an agent against four bots, `--agents a.safetensors --bots 4`; host for a
    person, `--agents a.safetensors --host 2 --realtime`, and the person joins
    with `--join 127.0.0.1 --human`.
    """
    st = state(ctx)
    resolved = st.resolve(plugin=plugin, set_=set_, flags=game_flags(seed=seed))
    entries = [a.strip() for a in (agents or "").split(",") if a.strip()]
    if human and join is None:
        raise GolemError("--human joins a hosted match: give --join ADDR[:PORT] (host it with --host N --realtime)")
    if not entries and not human:
        raise GolemError("no player: give --agents (checkpoints, random, expert:NAME) or --join ADDR --human")
    if join is not None and (host is not None or bots):
        raise GolemError("--host and --bots are the host's: a joining command gives neither")
    if video is not None and video_player > len(entries) + int(human):
        raise GolemError(f"--video-player {video_player}: only {len(entries) + int(human)} player(s) start here")
    address = parse_address(join) if join is not None else None
    resolved_map = resolve_scenario(scenario, doom_map)  # an unknown scenario fails before any engine starts
    if address is None and not coop:  # the host's engine would die starting the deathmatch
        check_deathmatch_starts(resolved_map, "or cooperative rules (--coop)")
    if human:
        check_display()
    if video is not None:
        from golem.runtime.video import VideoWriter

        VideoWriter(video)  # a bad suffix or folder fails now
    players = _players(st, resolved, entries, human)
    settings = resolved.settings
    slots = host if host is not None else len(players)
    if address is None:  # all local: a random free port; hosting for others: 5029 unless --port
        port = host_port(port, all_local=slots == len(players))
    plan = MatchPlan(
        players=players,
        slots=slots,
        bots=bots,
        scenario=scenario,
        doom_map=doom_map,
        rules="coop" if coop else "deathmatch",
        tics=tics if tics is not None else (0 if address is not None else DEFAULT_TICS),
        frag_limit=frags,
        port=address.port if address is not None else port,
        join=address,
        seed=settings.game.seed,
        realtime=realtime or human,
        start_timeout=wait,
        stall_timeout=stall,
        record=record,
        video=video,
        video_player=video_player - 1,
        tags=list(tag or []),
        engine_log=engine_log.resolve() if engine_log else None,
    )
    progress = task_bar(st.err, "[bold]match[/bold] {task.fields[players]}", "tics")
    where = f"joining {address}" if address is not None else f"hosting {plan.slots} on port {plan.port}"
    with progress:
        task = progress.add_task(
            "match", total=plan.tics or None, players=f"{', '.join(p.name for p in players)} ({where})"
        )
        report, episodes = play_match(
            plan,
            on_progress=lambda done, total: progress.update(task, completed=done),
            on_started=lambda: progress.update(task, players=f"{', '.join(p.name for p in players)} playing"),
        )
        progress.update(task, completed=report.game_tics)
    if record:
        _store_episodes(st, settings, report, episodes, store)
    if tic_log is not None:
        with atomic_write(tic_log) as fh:
            fh.write(json.dumps(report.tic_log).encode())
    if json_:
        st.out.print_json(json.dumps(report.as_dict()))
        return
    st.out.print(report_table(report))
    if video is not None:
        st.out.print(f"video of {players[video_player - 1].name}'s view → {video}", highlight=False, soft_wrap=True)


def _store_episodes(st: AppState, settings: Any, report: MatchReport, episodes: list[Any], store: Path | None) -> None:
    from golem.data.arrays import array_rules
    from golem.data.store import TrajectoryStore

    path = store_path(settings, store)
    rules = array_rules(st.host.registry)
    with TrajectoryStore.open_or_create(path) as opened:
        for player, episode in zip(report.players, episodes):
            if episode is None:
                continue
            meta, arrays = episode
            player.episode_id = opened.write_episode(meta, arrays, rules)
    ids = [p.episode_id for p in report.players if p.episode_id is not None]
    st.err.print(f"recorded {len(ids)} episode(s) → {path} (ids {', '.join(map(str, ids))})", highlight=False)
