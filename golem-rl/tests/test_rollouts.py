"""Rollouts without an engine: the worker's policy messages, and the learner's batched actor keeping segments
(episode ends, the bootstrap, the carried state) that an update re-runs to the logits the actor acted on."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from golem.runtime.rollout import Tic
from golem_rl.batch import stack_segments
from golem_rl.rollouts import ROLLOUT_START_SEED, Actor, RemotePolicy, Step, WorkerPlan, _Stop
from golem_rl.shapers import Kills, Shaping
from golem_rl.value import policy_and_value


class FakeConn:
    """The worker's end of the pipe: records what it sends, answers with scripted buttons."""

    def __init__(self, answers):
        self.sent, self.answers = [], list(answers)

    def send(self, message):
        self.sent.append(message)

    def recv(self):
        return self.answers.pop(0)


class FakeGame:
    kills = 0

    def get_game_variable(self, variable) -> float:
        return float(self.kills)


def test_the_remote_policy_sends_each_state_with_the_previous_outcome(camera, make_state):
    conn = FakeConn([[1, 0, 0]] * 4 + [None])
    game = FakeGame()
    policy = RemotePolicy(conn, [("cam", camera)], Shaping({"kills": (2.0, Kills())}), worker=3, hold=4)
    for episode, decisions in enumerate((2, 3)):
        policy.begin(SimpleNamespace(game=game), episode)
        policy.reset(game)
        for t in range(decisions):
            state = make_state(tic=1 + 4 * t, seed=t)
            if episode == 1 and t == 2:
                with pytest.raises(_Stop):  # the learner says stop: run_episode unwinds
                    policy.act(game, state)
                break
            assert policy.act(game, state) == [1, 0, 0]
            game.kills += 1
            policy.after_tic(Tic(t=t, state=state, executed=[1, 0, 0], label=[1, 0, 0], reward=-1.0))
        else:
            policy.end(SimpleNamespace(as_dict=lambda: {"episode_return": -2.0}))
    steps = [payload for kind, payload in conn.sent]
    assert [s.first for s in steps] == [True, False, True, False, False]
    assert [s.elapsed for s in steps] == [1.0, 4.0, 1.0, 4.0, 4.0]
    assert [s.reward for s in steps] == [0.0, 1.0, 1.0, 1.0, 1.0]  # −1 plus 2 × one kill, a decision late
    assert [s.done for s in steps] == [False, False, True, False, False]
    assert steps[2].episodes == [{"episode_return": -2.0}] and steps[2].frames == 4 and steps[0].frames == 0
    assert {s.worker for s in steps} == {3}
    np.testing.assert_array_equal(steps[0].observation["cam"], make_state(tic=1, seed=0).pixels)


class FakeEngines:
    """Rows of scripted episodes (``lengths[b]``: decisions per episode of row ``b``), as workers would send them."""

    def __init__(self, lengths, make_state, hold=4):
        self.lengths, self.make_state, self.hold = lengths, make_state, hold
        self.t = [0] * len(lengths)
        self.count = [0] * len(lengths)
        self.sent = []

    def first(self):
        return [self._step(b, reward=0.0, done=False, frames=0) for b in range(len(self.lengths))]

    def _step(self, b, reward, done, frames, episodes=()):
        seed = 1000 * b + self.count[b]
        return Step(
            worker=b,
            observation={"cam": self.make_state(tic=0, seed=seed).pixels},
            first=self.t[b] == 0,
            elapsed=1.0 if self.t[b] == 0 else float(self.hold),
            reward=reward,
            done=done,
            frames=frames,
            episodes=list(episodes),
        )

    def exchange(self, buttons):
        self.sent.append(buttons)
        out = []
        for b in range(len(self.lengths)):
            self.count[b] += 1
            self.t[b] += 1
            done = self.t[b] == self.lengths[b]
            if done:
                self.t[b] = 0
            out.append(self._step(b, -1.0, done, self.hold, [{"episode_return": -self.lengths[b]}] if done else []))
        return out


def test_the_actor_keeps_segments_with_their_episode_ends_and_bootstrap(model, camera, make_state):
    engines = FakeEngines([3, 5], make_state)
    actor = Actor(2, ["cam"], np.random.default_rng(0))
    actor.pending = engines.first()
    first = actor.collect(model, [camera], 4, engines.exchange)
    second = actor.collect(model, [camera], 4, engines.exchange)
    a, b = first
    assert a.observations["cam"].shape == (5, 3, 8, 8) and a.actions.shape == (4, 3)
    assert a.starts.tolist() == [True, False, False, True, False] and a.dones.tolist() == [False, False, True, False]
    assert a.timespans.tolist() == [1.0, 4.0, 4.0, 1.0, 4.0] and a.frames == 16
    assert b.dones.tolist() == [False] * 4 and [e["episode_return"] for e in a.episodes] == [-3]
    assert not a.hx.any() and not b.hx.any()  # the first segments start from zeros
    np.testing.assert_array_equal(a.observations["cam"][-1], second[0].observations["cam"][0])
    assert second[1].dones.tolist() == [True, False, False, False]
    assert len(engines.sent) == 8 and all(len(row) == 3 for row in engines.sent[0])


def test_an_update_re_runs_a_segment_to_the_logits_the_actor_acted_on(model, camera, make_state):
    engines = FakeEngines([3, 7], make_state)
    actor = Actor(2, ["cam"], np.random.default_rng(0))
    actor.pending = engines.first()
    acted: list[torch.Tensor] = []
    step = model.step

    def recording_step(inputs, hx, spans=None):
        logits, hx = step(inputs, hx, spans)
        acted.append(logits.clone())
        return logits, hx

    model.step = recording_step
    actor.collect(model, [camera], 4, engines.exchange)
    segments = actor.collect(model, [camera], 4, engines.exchange)  # starts mid-episode: a carried state
    del model.step
    batch = stack_segments(segments, model.spec)
    logits, _, _ = policy_and_value(model, None, **batch.decisions(torch.arange(2)))
    torch.testing.assert_close(logits.detach(), torch.stack(acted[4:], dim=1), rtol=1e-5, atol=1e-5)
    assert batch.hx[1].abs().sum() > 0


def test_worker_seeds_interleave_and_stay_away_from_evaluation():
    plan = WorkerPlan("{}", "m", "basic", None, {}, seed=0, first_worker=2, stride=4)
    assert [plan.episode_seed(1, k) for k in range(3)] == [ROLLOUT_START_SEED + 3 + 4 * k for k in range(3)]
    assert plan.episode_seed(0, 0) > 30_000
