"""``golem run intervene``: human DAgger — the model plays in a window, you take over with a hotkey."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from golem.learning.archives import resolve_model
from golem.learning.checkpoints import read_metadata
from golem.runtime.agent import settings_for_model, trained_scenario
from golem.runtime.session import check_display
from golem.workflows.intervention import IntervenePlan, intervene
from golem_cli.options import (
    JsonOpt,
    MaxStepsOpt,
    ModelScenarioOpt,
    PluginOpt,
    SetOpt,
    StoreOpt,
    checkpoint_option,
    episodes_option,
    game_flags,
)
from golem_cli.state import state


def intervene_command(
    ctx: typer.Context,
    episodes: Annotated[int, episodes_option("Episodes to play.")] = 1,
    scenario: ModelScenarioOpt = None,
    model: Annotated[Optional[Path], checkpoint_option("to correct")] = None,
    max_steps: MaxStepsOpt = None,
    store: StoreOpt = None,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Watch the model play; hold the hotkey (intervene.hotkey, LEFT SHIFT) to take over, release to hand back.

    While you drive, the keys of intervene.bindings press the buttons (WASD / arrows, Ctrl or Space to fire, E to use, \
Q / 2 / 3 for weapons). Each take-over is stored as one recovery episode: with intervene.retroactive = first-action, \
the L autonomous tics before it come first, labelled with your first corrective buttons. Train on them with \
`golem run train --include-recovery`.
    """
    st = state(ctx)
    resolved = st.resolve(plugin=plugin, set_=set_, flags=game_flags(scenario))
    check_display()  # before anything loads: one line without a window to show
    path = resolve_model(resolved.settings, model)
    metadata = read_metadata(path)
    settings = settings_for_model(resolved, metadata, st.host.registry)
    chosen = (
        settings.game.scenario
        if "game.scenario" in resolved.sources
        else trained_scenario(metadata, path) or settings.game.scenario
    )
    hotkey = settings.intervene.hotkey
    if not as_json:
        st.err.print(f"the model plays {chosen}; hold [{hotkey}] to take over, release to hand back", highlight=False)

    def on_intervention(eid: int, steps: int) -> None:
        if not as_json:
            st.err.print(f"take-over stored as recovery episode {eid} ({steps} steps)", highlight=False)

    ids = intervene(
        settings,
        st.host.registry,
        IntervenePlan(
            model=path,
            episodes=episodes,
            scenario=chosen,
            max_steps=max_steps,
            store=store,
        ),
        on_intervention=on_intervention,
    )
    if as_json:
        typer.echo(json.dumps({"model": str(path), "scenario": chosen, "episodes": ids}))
    else:
        st.out.print(f"{len(ids)} recovery episode(s) stored: {ids}", highlight=False)
