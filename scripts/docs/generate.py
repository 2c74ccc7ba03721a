"""Write the documentation that is generated, never typed: reference pages and every figure table.

    python scripts/docs/generate.py            # write what changed
    python scripts/docs/generate.py --check    # exit 1 naming every stale file, write nothing

Whole pages (each starts with a comment naming this command):

- ``docs/reference/settings.md`` — the pydantic models of ``golem.settings`` and every settings
  section a workspace plugin registers;
- ``docs/reference/cli.md`` — the ``golem`` typer app, walked command by command;
- ``docs/reference/hooks.md`` — the hook specifications of ``golem.hookspecs``;
- ``docs/benchmarks.md`` — every benchmark's table from ``bench/results/*.json``.

Tables inside hand-written pages sit between marker comments and are replaced here::

    <!-- generated: NAME (python scripts/docs/generate.py) -->
    ...
    <!-- end generated: NAME -->

``NAME`` is a key of :data:`TABLES`. The tables that ``bench/bench_*.py --table`` prints are taken from
those scripts' own ``table()`` functions. Only the plugins of this workspace are loaded (a third-party
plugin installed in the environment does not change the pages).
"""

from __future__ import annotations

import argparse
import enum
import functools
import importlib
import inspect
import json
import re
import sys
import tomllib
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
COMMAND = "python scripts/docs/generate.py"

# --- markdown helpers ---------------------------------------------------------


def header(source: str) -> str:
    """The first line of a generated page: what it was generated from and by which command."""
    return f"<!-- Generated from {source} by `{COMMAND}`; edit the source, not this page. -->\n"


def cell(text: Any) -> str:
    """Text safe inside a markdown table cell: one line, pipes escaped, ``<`` not an HTML tag."""
    out = str(text).replace("\n", " ").strip()
    return escape(out, stars=False).replace("|", "\\|")


def escape(text: str, stars: bool = True) -> str:
    """Prose from docstrings and help texts: ``<run>`` is not an HTML tag, ``*`` not emphasis; `code` kept."""
    parts = re.split(r"(`[^`]*`)", text.replace("\b\n", ""))
    out = []
    for p in parts:
        if not p.startswith("`"):
            p = p.replace("<", "&lt;")
            p = p.replace("*", "\\*") if stars else p
        out.append(p)
    return "".join(out)


def mean_of(value: Any) -> float:
    return value["mean"] if isinstance(value, dict) else value


def table(head: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def rst_to_md(text: str) -> str:
    """Docstring markup as markdown: ``x`` and :role:`x` become `x`; a ``::`` block becomes a code fence."""
    text = re.sub(r":(?:class|func|data|meth|mod|attr):`~?([^`]+)`", r"``\1``", text)
    text = re.sub(r"``([^`]+)``", r"`\1`", text)
    out: list[str] = []
    prose: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line.endswith("::"):
            prose.append(line)
            i += 1
            continue
        prose.append(line[:-3] + ":" if line.endswith(" ::") else line[:-1])
        out.append(escape("\n".join(prose)))
        prose = []
        i += 1
        block: list[str] = []
        while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
            block.append(lines[i][4:])
            i += 1
        while block and not block[0].strip():
            block.pop(0)
        while block and not block[-1].strip():
            block.pop()
        out.append("\n```python\n" + "\n".join(block) + "\n```\n")
    out.append(escape("\n".join(prose)))
    return "\n".join(out).strip()


def num(value: float, digits: int = 2) -> str:
    return f"{value:,.{digits}f}"


def stat(s: dict[str, float] | list[float] | None, digits: int = 2) -> str:
    """``mean ± std`` of a ``{"mean", "std"}`` mapping or a ``[mean, std]`` pair."""
    if s is None:
        return "—"
    mean, std = (s["mean"], s.get("std")) if isinstance(s, dict) else (s[0], s[1])
    return num(mean, digits) if std is None else f"{num(mean, digits)} ± {num(std, digits)}"


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f} %"


def day(value: str | None) -> str:
    return (value or "—")[:10]


# --- the workspace's plugins ---------------------------------------------------


def workspace_distributions() -> list[str]:
    """Names of the distributions this repository holds (their ``pyproject.toml`` files)."""
    names = []
    for path in sorted([*REPO.glob("golem-*/pyproject.toml"), *REPO.glob("golem-sensors/*/pyproject.toml")]):
        names.append(tomllib.loads(path.read_text())["project"]["name"])
    return names


@functools.cache
def load_host() -> Any:
    from golem.plugins import load_plugins

    host = load_plugins(only=workspace_distributions())
    refuse_broken(host)
    return host


def refuse_broken(host: Any) -> None:
    """The pages describe every workspace plugin: a broken one would silently drop its part."""
    if host.broken:
        raise SystemExit(
            "broken plugins, fix them before generating the docs: "
            + "; ".join(f"{p.name} ({p.distribution}): {p.error}" for p in host.broken)
        )


# --- settings reference --------------------------------------------------------


def type_name(annotation: Any, metadata: list[Any] | None = None) -> str:
    """A user's name for a settings field's type, with its bounds (``integer, 1 to 4096``)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        inner = [m for extra in args[1:] for m in getattr(extra, "metadata", [extra])]
        return type_name(args[0], inner)
    if origin in (typing.Union, types.UnionType):
        arms = [a for a in args if a is not type(None)]
        text = " or ".join(type_name(a, metadata) for a in arms)
        return text + (" or unset" if len(arms) < len(args) else "")
    if origin is typing.Literal:
        if len(args) == 1:
            return f"`{json.dumps(args[0])}`"
        return "one of " + ", ".join(f"`{json.dumps(a)}`" for a in args)
    if origin in (list, tuple, set):
        return "list of " + (type_name(args[0]) if args else "values")
    if origin is dict:
        return f"table of {type_name(args[0])} → {type_name(args[1])}" if args else "table"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(f"`{json.dumps(m.value)}`" for m in annotation)
    base = {int: "integer", float: "number", str: "text", bool: "boolean", Path: "path"}.get(annotation)
    if base is None:
        base = getattr(annotation, "__name__", str(annotation))
    bounds = []
    for m in metadata or []:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            if getattr(m, attr, None) is not None:
                bound = getattr(m, attr)
                bounds.append(f"{sign} {bound:,}" if isinstance(bound, int) else f"{sign} {bound}")
    return f"{base} ({', '.join(bounds)})" if bounds else base


def toml_value(value: Any) -> str:
    """A default as it would be written in ``golem.toml``."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (str, Path)):
        return json.dumps(str(value))
    if isinstance(value, enum.Enum):
        return toml_value(value.value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if hasattr(value, "model_dump"):
        return toml_value(value.model_dump())
    return str(value)


def model_rows(model: type, prefix: str) -> Iterator[list[str]]:
    """One row per field of a pydantic model (nested models flattened under their dotted key)."""
    from pydantic import BaseModel
    from pydantic_core import PydanticUndefined

    for name, field in model.model_fields.items():
        key = f"{prefix}.{name}"
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from model_rows(annotation, key)
            continue
        default = field.get_default(call_default_factory=True)
        shown = "required" if default is PydanticUndefined else f"`{toml_value(default)}`"
        env = "GOLEM_" + key.upper().replace(".", "__")
        yield [f"`{key}`", type_name(annotation, field.metadata), shown, f"`{env}`", escape(field.description or "")]


def settings_page(host: Any) -> str:
    from golem.registry import SINGULAR
    from golem.settings import GolemSettings

    out = [
        header("the pydantic models of `golem.settings` and the settings sections the workspace's plugins register"),
        "# Settings reference\n",
        "Every setting, its type, default, environment variable and meaning. Values resolve, lowest first: "
        "the defaults below < `golem.toml` (or `--config PATH`) < `GOLEM_*` environment variables < "
        "command-line flags (`--set key=value`, `--plugin`, each command's options); "
        "`golem config show` prints every value with its source. See [Settings](../settings.md) for the "
        "guide.\n",
    ]
    head = ["key", "type", "default", "environment variable", "description"]
    for name, field in GolemSettings.model_fields.items():
        group = field.annotation
        out.append(f"## `{name}`\n")
        if group.__doc__:
            out.append(rst_to_md(inspect.cleandoc(group.__doc__)) + "\n")
        rows = list(model_rows(group, name))
        out.append((table(head, rows) if rows else "Only the sections of components (below).") + "\n")
    out.append("## Sections of components\n")
    out.append(
        "A component (loss, sensor, expert, environment, …) may declare its own settings model; the core "
        "validates that section under the component's key. The sections of the plugins shipped in "
        "this repository:\n"
    )
    for comp in sorted((c for c in host.registry if c.settings is not None), key=lambda c: c.settings.key):
        model = comp.settings
        out.append(f"### `{model.key}`\n")
        owner = f"{SINGULAR[comp.category]} `{comp.name}` of plugin `{comp.owner.plugin}` ({comp.owner.distribution})"
        doc = rst_to_md(inspect.cleandoc(model.__doc__)) + " " if model.__doc__ else ""
        out.append(f"{doc}Declared by the {owner}.\n")
        out.append(table(head, list(model_rows(model, model.key))) + "\n")
    return "\n".join(out)


# --- CLI reference -------------------------------------------------------------

SKIPPED_OPTIONS = {"install_completion", "show_completion"}


def param_type(p: Any) -> str:
    if getattr(p, "is_flag", False):
        return "flag"
    if p.metavar:
        return p.metavar
    annotation = getattr(getattr(p, "type_descriptor", None), "annotation", None)
    if typing.get_origin(annotation) in (list, tuple):
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    return {int: "INTEGER", float: "FLOAT", str: "TEXT", Path: "PATH", bool: "BOOLEAN"}.get(annotation, "VALUE")


def param_row(p: Any) -> list[str]:
    names = ", ".join(f"`{o}`" for o in p.opts)
    if p.secondary_opts:
        names += " / " + ", ".join(f"`{o}`" for o in p.secondary_opts)
    kind = param_type(p)
    if p.multiple or (p.param_type_name == "argument" and p.nargs == -1):
        kind += ", repeatable"
    if p.required:
        default = "required"
    elif p.default is None or (getattr(p, "is_flag", False) and p.default is False):
        default = ""
    else:
        shown = str(p.default) if isinstance(p.default, (str, Path)) else toml_value(p.default)
        default = f"`{shown}`" if not isinstance(p.default, (list, tuple)) or p.default else ""
    return [names, kind, default, escape(getattr(p, "help", None) or "")]


def command_usage(path: list[str], cmd: Any) -> str:
    pieces = [" ".join(path), "[OPTIONS]"]
    for p in cmd.params:
        if p.param_type_name == "argument":
            name = (p.metavar or p.name).upper()
            name += "..." if p.nargs == -1 else ""
            pieces.append(name if p.required else f"[{name}]")
    if hasattr(cmd, "commands"):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def walk(cmd: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        if not sub.hidden:
            yield from walk(sub, [*path, name])


def cli_page(host: Any) -> str:
    import typer

    from golem_cli.app import build_app

    root = typer.main.get_command(build_app(host))
    refuse_broken(host)  # a plugin's register_commands may fail only now
    out = [
        header("the `golem` typer app (`golem_cli.app.build_app`) and the commands the workspace's plugins add"),
        "# Command-line reference\n",
        "Every `golem` command with its arguments and options, as `--help` gives them. The root options "
        "`--config`, `--plugin`, `--set`, `--log-level` and `--log-json` may also follow a subcommand "
        "(`golem run train --log-level info`). Commands that print tables take `--json`.\n",
    ]
    for path, cmd in walk(root, ["golem"]):
        level = "#" * min(len(path) + 1, 4)
        out.append(f"{level} `{' '.join(path)}`\n")
        if cmd.help:
            out.append(escape(inspect.cleandoc(cmd.help).replace("\b\n", "")) + "\n")
        out.append(f"```text\n{command_usage(path, cmd)}\n```\n")
        args = [p for p in cmd.params if p.param_type_name == "argument"]
        opts = [
            p
            for p in cmd.params
            if p.param_type_name != "argument" and p.name not in SKIPPED_OPTIONS and not getattr(p, "hidden", False)
        ]
        if args:
            out.append(
                table(
                    ["argument", "type", "default", "description"],
                    [[f"`{(p.metavar or p.name).upper()}`", *param_row(p)[1:]] for p in args],
                )
                + "\n"
            )
        if opts:
            out.append(table(["option", "type", "default", "description"], [param_row(p) for p in opts]) + "\n")
        subs = [(n, c) for n, c in getattr(cmd, "commands", {}).items() if not c.hidden]
        if subs:
            out.append(
                table(
                    ["command", "what it does"],
                    [[f"`{' '.join([*path, n])}`", escape((c.help or "").strip().split("\n")[0])] for n, c in subs],
                )
                + "\n"
            )
    return "\n".join(out)


# --- hook reference --------------------------------------------------------------


def hooks_page() -> str:
    import golem.hookspecs as specs

    source = inspect.getsource(specs)
    banners = []  # (line number, title) of each "# --- Title ---" banner
    for i, line in enumerate(source.splitlines(), start=1):
        m = re.match(r"# --- (.+?) -+$", line)
        if m:
            banners.append((i, m.group(1)))
    hooks = sorted(
        (fn for _, fn in inspect.getmembers(specs, inspect.isfunction) if hasattr(fn, "golem_spec")),
        key=lambda fn: fn.__code__.co_firstlineno,
    )
    out = [
        header("the hook specifications in `golem-core/src/golem/hookspecs.py`"),
        "# Hook reference\n",
        rst_to_md(inspect.getdoc(specs)) + "\n",
        "[Plugins](../plugins.md) explains each hook with examples and the contract helpers of `golem.testing`.\n",
    ]
    section = None
    for fn in hooks:
        line = fn.__code__.co_firstlineno
        title = next((t for at, t in reversed(banners) if at < line), None)
        if title != section:
            out.append(f"## {title}\n")
            section = title
        params = ", ".join(inspect.signature(fn).parameters)
        out.append(f"### `{fn.__name__}({params})`\n")
        sig = str(inspect.signature(fn)).replace("'", "")
        out.append(f"```python\n@golem.hookimpl\ndef {fn.__name__}{sig}: ...\n```\n")
        out.append(rst_to_md(inspect.getdoc(fn) or "") + "\n")
    return "\n".join(out)


# --- benchmark tables --------------------------------------------------------------


class Results:
    """``bench/results/*.json`` under a root, read on demand."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "bench" / "results"
        self._cache: dict[str, Any] = {}

    def __call__(self, name: str) -> Any:
        if name not in self._cache:
            self._cache[name] = json.loads((self.dir / f"{name}.json").read_text())
        return self._cache[name]

    def names(self) -> list[str]:
        return sorted(p.stem for p in self.dir.glob("*.json"))


def bench_module(module: str) -> Any:
    """``bench/bench_<module>.py``, imported."""
    bench = str(REPO / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)  # the benchmarks import their helpers as top-level modules
    return importlib.import_module(f"bench_{module}")


def bench_table(module: str) -> Callable[[Results], str]:
    """The ``table()`` of ``bench/bench_<module>.py`` (what ``--table`` prints) on its stored results."""

    def render(results: Results) -> str:
        return bench_module(module).table(results(module))

    return render


PLAIN_MODELS = ("cfc", "lstm")


def scoreboard_headline(results: Results) -> str:
    """One row per scenario: the share of the way from random to expert of the plain `cfc` and `lstm` rows."""
    zoo = results("zoo")
    rows = []
    for scenario in sorted({r["scenario"] for r in zoo.values()}):
        cells = []
        for model in PLAIN_MODELS:
            r = zoo.get(f"{scenario}/{model}")
            cells.append("—" if r is None else f"**{pct(r['normalised'])}** ({num(mean_of(r['measure']['model']))})")
        first = zoo.get(f"{scenario}/cfc") or zoo.get(f"{scenario}/lstm")
        m = first["measure"]
        rows.append(
            [
                f"`{scenario}`",
                m["label"],
                *cells,
                num(mean_of(m["random"])),
                num(mean_of(m["expert"])),
                first["reference"] or "—",
            ]
        )
    return table(["scenario", "measure", "`cfc`", "`lstm`", "random", "expert", "published"], rows)


def demo(results: Results) -> str:
    d = results("demo")
    policies = d["summary"]["policies"]
    labels = {"model": "trained `cfc` agent", "random": "random policy", "expert": "scripted expert"}
    rows = [[labels.get(k, k), p["episodes"], stat(p["return"]), num(p["kills"]["mean"])] for k, p in policies.items()]
    timings = ", ".join(f"{k} {v} s" for k, v in d["timings_s"].items())
    return (
        table(["policy", "episodes", f"return on `{d['summary']['scenario']}`", "kills"], rows)
        + f"\n\nShare of the way from random to expert: **{pct(d['share']['normalised'])}** "
        f"(target {pct(d['target_share'])}). Timings: {timings}; {d['total_s']} s in all."
    )


def experts(results: Results) -> str:
    def rows_of(d: dict[str, Any]) -> list[list[Any]]:
        rows = []
        for scenario, r in d["scenarios"].items():
            e, x = r["expert"]["summary"], r["random"]["summary"]
            rows.append(
                [
                    f"`{scenario}`",
                    e["episodes"],
                    f"{num(e['return_mean'])} ± {num(e['return_std'])}",
                    f"{num(x['return_mean'])} ± {num(x['return_std'])}",
                    f"{num(e['kills_mean'], 1)} / {num(x['kills_mean'], 1)}",
                    f"{num(e['tics_mean'], 0)} / {num(x['tics_mean'], 0)}",
                    f"{e['full_survival']} / {x['full_survival']}",
                ]
            )
        return rows

    d = results("experts")
    head = [
        "scenario",
        "episodes",
        "expert return",
        "random return",
        "kills (expert / random)",
        "tics (expert / random)",
        f"to the {d['max_tics']:,}-tic cap (expert / random)",
    ]
    return table(head, rows_of(d))


def experts_variants(results: Results) -> str:
    rows = []
    for name in results.names():
        if not name.startswith("experts_"):
            continue
        d = results(name)
        sets = ", ".join(f"`{k}={toml_value(v).strip(chr(34))}`" for k, v in d.get("settings", {}).items())
        for scenario, r in d["scenarios"].items():
            e, x = r["expert"]["summary"], r["random"]["summary"]
            rows.append(
                [
                    f"`{scenario}`",
                    sets,
                    e["episodes"],
                    f"{num(e['tics_mean'], 0)}",
                    f"{e['full_survival']} of {e['episodes']}",
                    f"{num(x['tics_mean'], 0)}",
                ]
            )
    return table(["scenario", "expert settings", "episodes", "expert tics", "to the cap", "random tics"], rows)


def tune_confirmation(results: Results) -> str:
    d = results("tune_confirmation")
    rows = [
        [
            name,
            f"{r['seeds'][0]:,}–{r['seeds'][1]:,}",
            num(r["start_mean"]),
            num(r["tuned_mean"]),
            f"{'+' if r['gain'] >= 0 else ''}{num(r['gain'])} ± {num(r['se'])}",
            "yes" if r["confirmed_at_1_se"] else "no",
        ]
        for name, r in d["rows"].items()
    ]
    return table(
        [
            "search",
            "confirmation seeds",
            "start thresholds: mean",
            "tuned thresholds: mean",
            "paired gain",
            "kept at one standard error",
        ],
        rows,
    )


def tune_engines(results: Results) -> str:
    d = results("tune_engines")
    rows = [
        [
            r["workers"],
            r["candidates"],
            r["episodes"],
            num(r["fresh_s"], 1),
            num(r["kept_s"], 1),
            f"**{r['speedup']:.2f}×**",
            "yes" if r["same_episodes"] else "no",
        ]
        for r in d["rows"]
    ]
    return table(
        [
            "workers",
            "candidates",
            "episodes each",
            "engines per candidate (s)",
            "engines kept (s)",
            "speed-up",
            "same episodes",
        ],
        rows,
    )


def dream_speed(results: Results) -> str:
    rows = []
    for name in ("dream", "dream_threads2"):
        if name not in results.names():
            continue
        d = results(name)
        f = d["frames_per_s"]
        rows.append(
            [
                day(d.get("created")),
                d["threads"],
                d["batch"],
                num(f["dream"], 0),
                num(f["dream_gym"], 0),
                num(f["engine"], 0),
                num(f["engine_vm"], 0),
                f"**{d['speedup_vs_engine']:.1f}×**",
            ]
        )
    return table(
        [
            "measured",
            "torch threads",
            "dreams",
            "dream frames/s (tensor path)",
            "dream frames/s (Gymnasium)",
            "engine frames/s",
            "engine + V + M frames/s",
            "dream / engine",
        ],
        rows,
    )


DREAM_POLICIES = (
    ("noop", "still"),
    ("left", "left"),
    ("right", "right"),
    ("random", "random"),
    ("controller", "controller"),
)


def dream_calibration(results: Results) -> str:
    d = results("dream_calibration")
    rows = []
    for key, r in d.items():
        cells = []
        for name, _ in DREAM_POLICIES:
            p = r["policies"].get(name)
            if p is None:
                cells.append("—")
            elif not p.get("real"):
                cells.append(f"{num(p['dream'][0], 0)} in the dream")
            else:
                cells.append(f"{num(p['dream'][0], 0)} vs {num(p['real'][0], 0)} ({p['ratio']:.1f}×)")
        h = r["death_head"]
        rows.append([f"`{key}`", *cells, f"{pct(h['fires_on_death_step'])}, {100 * h['false_positive_rate']:.2f} %"])
    return table(["run", *[label for _, label in DREAM_POLICIES], "death head: dying steps, false alarms"], rows)


def dream_controllers(results: Results, latest_only: bool = False) -> str:
    d = results("dream_remedies")
    latest = max(day(r.get("measured")) for r in d.values())
    rows = []
    for key, r in d.items():
        if latest_only and day(r.get("measured")) != latest:
            continue
        e = r["evaluation"]
        rows.append(
            [
                f"`{key}`",
                day(r.get("measured")),
                r["training_seed"],
                r["rnn_members"],
                r["generations"],
                num(r["dream_of_mean_last_generation"], 0),
                f"**{stat(e['controller'], 1)}**",
                pct(e["controller"]["solved_share"]),
                stat(e["random"], 1),
            ]
        )
    return table(
        [
            "run",
            "measured",
            "training seed",
            "MDN-RNNs",
            "generations",
            "dream of the CMA-ES mean",
            f"real tics ({next(iter(d.values()))['episodes']} episodes)",
            "≥ 750",
            "random",
        ],
        rows,
    )


def latency(results: Results) -> str:
    d = results("latency")
    rows = [
        [
            r["config"],
            r["threads"],
            num(r["sense_p99_ms"]),
            num(r["decide_p99_ms"]),
            f"**{num(r['total_p99_ms'])}**",
            "yes" if r["meets_target"] else "no",
        ]
        for r in d["results"]
    ]
    return (
        table(["sensors", "threads", "sense p99 (ms)", "decide p99 (ms)", "total p99 (ms)", "under target"], rows)
        + f"\n\nTarget: p99 under {d['target_p99_ms']} ms; a tic lasts {d['tic_ms']} ms "
        f"(`{d['scenario']}`, {d['tics']} tics × {d['rounds']} rounds)."
    )


def threads(results: Results) -> str:
    d = results("threads")
    rows = [
        [
            name,
            r["alone"]["threads"],
            num(r["alone"]["frames_per_s"], 0),
            " / ".join(num(p["frames_per_s"], 0) for p in r["pair"]),
            num(r["pair_wall_s"], 1),
        ]
        for name, r in d["runs"].items()
    ]
    return table(["OpenMP threads", "threads", "alone, frames/s", "two at once, frames/s each", "pair wall (s)"], rows)


def precision(results: Results) -> str:
    d = results("precision")
    f = d["frames_per_s"]
    base = next(iter(f.values()))
    rows = [[name, num(v, 0), f"{v / base:.2f}×"] for name, v in f.items()]
    return table(["training step", "frames/s (best round)", "vs the first row"], rows)


def speed(results: Results) -> str:
    """One row per speed target: what is compared, the measured ratio and the target."""
    rows: list[list[Any]] = []
    r = results("record")
    loops = r["loops"]["summary"]
    rows.append(
        [
            "`bench_record.py`",
            f"the rollout loop with a recorder on all four sensors vs the raw engine (`{r['scenario']}`, medians)",
            f"{num(loops['record']['median'], 0)} vs "
            f"{num(loops['raw']['median'], 0)} frames/s = **{r['loops']['ratio_to_raw']['record']:.2f}**",
            f"≥ {r['target']['record_over_raw']}",
        ]
    )
    rec = r["record"]["summary"]
    one_worker = rec["workers=1"]["median"]
    rows.append(
        [
            "",
            "the whole recording into LMDB, 1 worker vs the raw engine; 2 workers vs 1",
            f"{num(one_worker, 0)} frames/s = {one_worker / loops['raw']['median']:.2f} "
            f"of raw; 2 workers **{r['record']['ratio_to_one_worker']['workers=2']:.2f}×**",
            "≥ 0.95 of raw; 2 workers ≥ 1.6×",
        ]
    )
    s = results("store")
    t = s["throughput"]
    rows.append(
        [
            "`bench_store.py`",
            f"LMDB reads of a whole batch (B={t['B']}, L={t['L']}, all modalities) vs the "
            "same windows from numpy in memory",
            f"**{t['aligned']['batched_ratio']:.2f}** aligned, {t['unaligned']['batched_ratio']:.2f} unaligned",
            "≥ 0.95",
        ]
    )
    rows.append(
        [
            "",
            "reader's private memory while iterating stores of growing size",
            " / ".join(f"{num(m['peak_anon_MiB'], 1)}" for m in s["memory"])
            + " MiB for "
            + " / ".join(f"{num(m['store_MiB'], 0)}" for m in s["memory"])
            + " MiB stores",
            "flat",
        ]
    )
    tr = results("train")
    rows.append(
        [
            "`bench_train.py`",
            f"full training step vs the cortices' forward + backward alone "
            f"(B={tr['batch_size']}, L={tr['sequence_length']})",
            " , ".join(f"`{m}` **{v['full_over_cortices']:.2f}**" for m, v in tr["models"].items()).replace(" ,", ","),
            f"≥ {tr['target_full_over_cortices']}",
        ]
    )
    ci = tr["cfc_implementations"]
    rows.append(
        [
            "",
            "the CfC core alone: Golem's fast core vs `ncps`' CfC and vs `nn.LSTM`",
            f"**{ci['fast_over_ncps']:.2f}×** `ncps`; {ci['fast_over_lstm']:.2f} of `nn.LSTM`",
            f"≥ {ci['targets']['fast_over_ncps']:g}× `ncps`; ≥ {ci['targets']['fast_over_lstm']:.2f} of LSTM",
        ]
    )
    a = results("allocator")
    rows.append(
        [
            "`bench_allocator.py`",
            "training step with glibc's allocator as shipped vs Golem's tuning",
            f"`cfc` **{a['tuned_over_glibc']['cfc_full_step_fps']:.2f}×**, `lstm` "
            f"**{a['tuned_over_glibc']['lstm_full_step_fps']:.2f}×**; sys CPU {a['medians']['glibc']['sys_s']} → "
            f"{a['medians']['tuned']['sys_s']} s",
            "faster",
        ]
    )
    p = results("precision")
    f = list(p["frames_per_s"].values())
    rows.append(
        [
            "`bench_precision.py`",
            "one training step: float32 NCHW vs channels-last vs bfloat16 cortices",
            f"{f[1] / f[0]:.2f}× and **{f[2] / f[0]:.2f}×**",
            "measured",
        ]
    )
    dd = results("ddp")
    rows.append(
        [
            "`bench_ddp.py`",
            "`golem run train --nproc 2` vs `--nproc 1`, same global batch",
            f"**{dd['two_over_one_frames_per_s']:.2f}×** training frames/s, wall {dd['two_over_one_wall']:.2f}× "
            f"on {dd['cpu_count']} cores",
            "measured",
        ]
    )
    th = results("threads")["runs"]
    rows.append(
        [
            "`bench_threads.py`",
            "two trainings at once with OpenMP threads spinning vs sleeping",
            f"pair wall {num(th['spinning']['pair_wall_s'], 0)} vs {num(th['passive']['pair_wall_s'], 0)} s = "
            f"**{th['spinning']['pair_wall_s'] / th['passive']['pair_wall_s']:.2f}×**",
            "measured",
        ]
    )
    la = results("latency")
    one = [x for x in la["results"] if x["threads"] == 1]
    rows.append(
        [
            "`bench_latency.py`",
            "per-tic decision time p99 (sensors → action), 1 thread",
            " / ".join(num(x["total_p99_ms"]) for x in one) + " ms (" + " / ".join(x["config"] for x in one) + ")",
            f"p99 < {la['target_p99_ms']:g} ms",
        ]
    )
    de = results("demo")
    rows.append(
        [
            "`bench_demo.py`",
            "trained agent vs expert on `basic`",
            f"**{pct(de['share']['normalised'])}** of the way from random to expert",
            f"≥ {pct(de['target_share'])}",
        ]
    )
    dr = results("dream")
    rows.append(
        [
            "`bench_dream.py`",
            f"{dr['batch']} dreams vs one real engine, frames/s",
            f"**{dr['speedup_vs_engine']:.1f}×** ({dr['threads']} torch threads)",
            "≥ 20×",
        ]
    )
    te = results("tune_engines")["rows"]
    rows.append(
        [
            "`bench_tune.py`",
            "a threshold search on engines started once vs once per candidate",
            ", ".join(f"{x['workers']} worker{'s' if x['workers'] > 1 else ''} **{x['speedup']:.2f}×**" for x in te),
            "measured",
        ]
    )
    ma = results("match")["runs"]
    base = ma["single"]["tics_per_second"]
    rows.append(
        [
            "`bench_match.py`",
            "game tics/s of 2- and 4-agent matches vs one agent alone",
            f"2 agents **{ma['agents2']['tics_per_second'] / base:.2f}×**, 4 agents "
            f"**{ma['agents4']['tics_per_second'] / base:.2f}×** ({num(base, 0)} tics/s alone)",
            "measured",
        ]
    )
    return table(["benchmark", "what is compared", "measured", "target"], rows)


def scenario_specs(results: Results) -> str:
    """The shipped scenarios' specs (``golem.scenarios.SCENARIO_SPECS``): how each is recorded and trained."""
    from golem.scenarios import SCENARIO_SPECS, ScenarioSpec

    def budget(spec: ScenarioSpec) -> str:
        if spec.updates:
            return f"{spec.updates:,} updates"
        least = f"{spec.min_updates:,}" if spec.min_updates else "`training.min_updates`"
        return f"`training.epochs`, at least {least} updates"

    rows = [
        [
            f"`{name}`" if name else "any other",
            spec.frame_skip,
            f"{spec.max_steps:,} tics" if spec.max_steps else "its own",
            "yes" if spec.mirror else "no",
            f"{spec.episodes:,}",
            budget(spec),
            f"{spec.tune_episodes} episodes a candidate" if spec.tune_episodes else "no",
            "variants: " + ", ".join(spec.vary) if spec.vary else "the shipped map",
        ]
        for name, spec in [*SCENARIO_SPECS.items(), ("", ScenarioSpec())]
    ]
    return table(
        [
            "scenario",
            "frame skip",
            "step limit",
            "mirrored twins",
            "expert episodes",
            "training",
            "thresholds tuned by play",
            "expert episodes recorded on",
        ],
        rows,
    )


def plugin_commands(host: Any) -> dict[str, list[str]]:
    """``{plugin: ["golem procgen …", "golem run match"]}``: what each plugin's ``register_commands`` adds."""
    import typer

    out: dict[str, list[str]] = {}
    for impl in host.pm.hook.register_commands.get_hookimpls():
        app, run = typer.Typer(), typer.Typer()
        app.add_typer(run, name="run")
        impl.function(app=app)
        added = [f"`golem {g.name} …`" for g in app.registered_groups if g.name != "run"]
        added += [f"`golem {c.name or c.callback.__name__}`" for c in app.registered_commands]
        added += [f"`golem run {c.name or c.callback.__name__}`" for c in run.registered_commands]
        out[impl.plugin_name] = added
    return out


def plugins(results: Results) -> str:
    """Every plugin of the workspace: its distribution, module and what it registers (``golem plugins list``)."""
    host = load_host()
    commands = plugin_commands(host)
    rows = []
    for info in sorted(host.plugins, key=lambda p: (p.distribution, p.name)):
        registered = host.registry.by_owner(info.name)
        parts = [
            f"{category.replace('_', ' ')}: " + ", ".join(f"`{n}`" for n in names)
            for category, names in registered.items()
        ]
        if commands.get(info.name):
            parts.append("commands: " + ", ".join(commands[info.name]))
        rows.append([f"`{info.distribution}`", f"`{info.name}`", f"`{info.module}`", "; ".join(parts) or "—"])
    return table(["distribution", "plugin (entry point)", "module", "registers"], rows)


#: Every table a page may hold between ``<!-- generated: NAME -->`` markers.
TABLES: dict[str, Callable[[Results], str]] = {
    "scoreboard-headline": scoreboard_headline,
    "scenario-specs": scenario_specs,
    "plugins": plugins,
    "scoreboard": bench_table("zoo"),
    "demo": demo,
    "experts": experts,
    "experts-variants": experts_variants,
    "explorer": bench_table("explorer"),
    "explorer-oblige": bench_table("explorer_oblige"),
    "procgen-record": bench_table("procgen_record"),
    "generalise": bench_table("generalise"),
    "procgen": bench_table("procgen"),
    "match": bench_table("match"),
    "timespans": bench_table("timespans"),
    "dagger": bench_table("dagger"),
    "tune-confirmation": tune_confirmation,
    "tune-engines": tune_engines,
    "dream-speed": dream_speed,
    "dream-calibration": dream_calibration,
    "dream-rounds": bench_table("dream_rounds"),
    "dream-threads": bench_table("dream_threads"),
    "dream-controllers": dream_controllers,
    "dream-controllers-latest": lambda results: dream_controllers(results, latest_only=True),
    "latency": latency,
    "threads": threads,
    "precision": precision,
    "augment": bench_table("augment"),
    "rl-throughput": bench_table("rl_throughput"),
    "finetune": bench_table("finetune"),
    "finetune-headline": lambda results: bench_module("finetune").headline(results("finetune")),
    "finetune-maps": lambda results: bench_module("finetune").maps_table(results("finetune")),
    "bots": bench_table("bots"),
    "speed": speed,
}

#: The sections of the benchmarks page: (heading, script, sentence, table).
BENCHMARK_SECTIONS = [
    (
        "Speed targets",
        None,
        "Each target is a ratio of two things run side by side, interleaved, in one run, "
        "on the machine named in the result file.",
        "speed",
    ),
    (
        "The scoreboard",
        "bench_zoo.py",
        "Record the scenario's expert (the episodes and frame skip of its "
        "[spec](recording.md#scenario-specs)), `golem run train` with no flags (`+tuned`: then `golem run tune`; "
        "`+audio`: with the audio sensor), `golem run evaluate` against the random policy and the expert on unseen "
        'seeds from 10,000. "normalised" is (model − random) / (expert − random).',
        "scoreboard",
    ),
    ("The demo", "bench_demo.py", "`golem demo` end to end, then 100 unseen episodes per policy.", "demo"),
    (
        "Scripted experts",
        "bench_experts.py",
        "Each scripted expert against a random policy (each button pressed with "
        "probability ½) on the same seeds, one decision per tic.",
        "experts",
    ),
    (
        "Expert variants",
        "bench_experts.py --set …",
        "An expert with other settings, at the frame skip and seeds its result file names.",
        "experts-variants",
    ),
    (
        "The explorer on generated maps",
        "bench_explorer.py",
        "The `explorer` expert on unseen generated maps per curriculum phase.",
        "explorer",
    ),
    (
        "The explorer on Oblige's maps",
        "bench_explorer_oblige.py",
        "The `explorer` expert on unseen Oblige 7.70 maps, with navigation read from each WAD.",
        "explorer-oblige",
    ),
    (
        "Recording on generated maps",
        "bench_procgen_record.py",
        "`golem run record --procgen-phase 1 --maps 500 --workers 2`: maps built by the workers as they go, "
        "then read from the cache, against scenario recording's frames/s.",
        "procgen-record",
    ),
    (
        "Generalisation to other looks",
        "bench_generalise.py",
        "Models of each recipe on the shipped map and on held-out variants of it; retained = normalised score "
        "on a variant ÷ on the shipped map.",
        "generalise",
    ),
    (
        "Generalisation over generated maps",
        "bench_procgen.py",
        "Models trained on fixed scenarios, on phase-3 maps "
        "and by the curriculum, with the same updates and about as many frames, on unseen maps of each phase.",
        "procgen",
    ),
    (
        "Multiplayer",
        "bench_match.py",
        "Game tics per second of matches on `cig`, every player an untrained CfC "
        "agent (the per-tic work of a trained one) in its own process.",
        "match",
    ),
    (
        "Time spans",
        "bench_timespans.py",
        "A model trained at frame skip 1 played at skips 1, 2 and 4 with the "
        "engine's tics as the CfC's time spans (true) and with one tic per step (unit).",
        "timespans",
    ),
    (
        "DAgger against behavioural cloning",
        "bench_dagger.py",
        "Both arms start from the same base model and get "
        "the same extra expert-labelled episodes and optimiser steps; both play unseen seeds.",
        "dagger",
    ),
    (
        "Threshold tuning: confirmation",
        "tune_confirmation.json",
        "Start and tuned thresholds of two searches replayed on seeds neither search saw.",
        "tune-confirmation",
    ),
    (
        "Threshold tuning: engines started once",
        "bench_tune.py",
        "The same candidates and episodes played on "
        "engines started once for the search and on engines started per candidate.",
        "tune-engines",
    ),
    (
        "Decision latency",
        "bench_latency.py",
        "Per-tic time from the engine's state to the action, by sensor set.",
        "latency",
    ),
    (
        "Threads of processes side by side",
        "bench_threads.py",
        "`golem run train` alone and two at once, with "
        "OpenMP threads spinning, sleeping (what `golem` sets) and one thread each.",
        "threads",
    ),
    ("Training precision", "bench_precision.py", "One training step of the `cfc` model, one thread.", "precision"),
    (
        "Augmentation",
        "bench_augment.py",
        "One training step with each augmentation of `golem-augment` (default settings) against none, interleaved, "
        "and each augmentation alone on one batch; the kornia rows are the reference the hand-written ones replace.",
        "augment",
    ),
    (
        "Fine-tuning: rollout speed",
        "bench_rl_throughput.py",
        "Frames/s of `golem rl finetune`'s rollouts (the policy stepped in each engine's worker) and of the policy "
        "batched in the learner, against the same engines stepped with random buttons, interleaved.",
        "rl-throughput",
    ),
    (
        "Fine-tuning: BC, BC + RL, RL from scratch",
        "bench_finetune.py",
        "A cloned model, the same fine-tuned with PPO, and PPO from an untrained network for the same "
        "environment frames, on unseen seeds.",
        "finetune",
    ),
    (
        "Agents against the engine's bots",
        "bench_bots.py",
        "One player against two built-in bots on `cig`, one match per seed; a suicide counts −1 frag.",
        "bots",
    ),
    (
        "Dream speed",
        "bench_dream.py",
        "Batched dreams of the world model against one real `take_cover` engine.",
        "dream-speed",
    ),
    (
        "Dream calibration",
        "bench_dream_calibration.py",
        "Survival in tics of fixed policies in a trained run's "
        "dream against the real engine, and the death head teacher-forced on the collected episodes.",
        "dream-calibration",
    ),
    (
        "World model: iterative rounds",
        "bench_dream_rounds.py",
        "`golem dream iterate` per training seed: what each round's controller survives in the real engine "
        "(its check) and in its own dream, the dream's calibration, and the kept controller on 100 unseen episodes.",
        "dream-rounds",
    ),
    (
        "World model: threads per stage",
        "bench_dream_threads.py",
        "The world-model stages' inner loops (a CMA-ES generation, a VAE step, an MDN-RNN step) with the `cpu` "
        "preset's sizes at 1 and 2 torch threads, interleaved.",
        "dream-threads",
    ),
    (
        "Dream-trained controllers",
        "dream_remedies.json",
        "Controllers evolved by CMA-ES in the dream, played "
        "in the real engine against a random policy; 750 tics counts as solved.",
        "dream-controllers",
    ),
]


def benchmarks_page(results: Results) -> str:
    out = [
        header("`bench/results/*.json`"),
        "# Benchmarks\n",
        "Benchmarks live in `bench/`: `make bench` runs them all, `python bench/NAME.py` one; each writes "
        "`bench/results/<name>.json`, and every table on this page and in the guide is generated from those "
        "files. What the figures led to, and what was tried on the way, is in the "
        "[research notes](research/index.md).\n",
    ]
    for title, script, sentence, name in BENCHMARK_SECTIONS:
        out.append(f"## {title}\n")
        if script is None:
            where = ""
        elif script.endswith(".json"):
            where = f" From `bench/results/{script}`."
        else:
            where = f" Measured by `bench/{script}`."
        out.append(f"{sentence}{where}\n")
        out.append(TABLES[name](results) + "\n")
    return "\n".join(out)


# --- pages and markers -----------------------------------------------------------------

MARKER = re.compile(
    r"(?P<begin><!-- generated: (?P<name>[\w-]+)[^>]*-->\n)(?P<body>.*?)(?P<end><!-- end generated: (?P=name) -->)",
    re.DOTALL,
)


def fill_markers(text: str, results: Results, where: Path) -> str:
    def replace(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in TABLES:
            raise SystemExit(f"{where}: unknown generated table {name!r}; known: {', '.join(TABLES)}")
        return f"{m.group('begin')}\n{TABLES[name](results)}\n\n{m.group('end')}"

    return MARKER.sub(replace, text)


def marker_files(root: Path) -> list[Path]:
    files = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return [f for f in files if f.exists() and "<!-- generated:" in f.read_text()]


def outputs(root: Path) -> dict[Path, str]:
    """Every generated file under ``root`` and the text it should have."""
    results = Results(root)
    host = load_host()
    out = {
        root / "docs" / "reference" / "settings.md": settings_page(host),
        root / "docs" / "reference" / "cli.md": cli_page(host),
        root / "docs" / "reference" / "hooks.md": hooks_page(),
        root / "docs" / "benchmarks.md": benchmarks_page(results),
    }
    for path in marker_files(root):
        if path not in out:
            out[path] = fill_markers(path.read_text(), results, path.relative_to(root))
    return {path: text.rstrip("\n") + "\n" for path, text in out.items()}


def stale(root: Path) -> list[Path]:
    """The generated files under ``root`` whose committed text differs from what would be written."""
    return [p for p, text in outputs(root).items() if not p.exists() or p.read_text() != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming every stale file")
    parser.add_argument("--root", type=Path, default=REPO, help="repository root to read and write (default: this one)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.check:
        bad = stale(root)
        for path in bad:
            print(f"stale: {path.relative_to(root)} (run `{COMMAND}`)", file=sys.stderr)
        return 1 if bad else 0
    for path, text in outputs(root).items():
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
