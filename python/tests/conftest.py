"""Shared fixtures: the repository's scenes, seeded ray sets, and the ``lanecast`` command line,
which runs the same queries through the Rust batch API and the file formats: the reference the
Python answers are compared with."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import lanecast

ROOT = Path(__file__).resolve().parents[2]
SCENES = ROOT / "scenes"


def cli_path() -> Path:
    """The ``lanecast`` binary: ``$LANECAST_BIN``, or the release build of this repository."""
    env = os.environ.get("LANECAST_BIN")
    p = Path(env) if env else ROOT / "target" / "release" / "lanecast"
    if not p.exists():
        raise RuntimeError(f"the lanecast CLI is not built at {p}: run `cargo build --release` (.ci/test does)")
    return p


@pytest.fixture(scope="session")
def cli():
    """Runs ``lanecast ARGS...`` and fails the test with its stderr if it does not exit 0."""
    exe = cli_path()

    def run(*args: str) -> None:
        r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"lanecast {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")

    return run


@pytest.fixture(scope="session")
def bunny() -> lanecast.Scene:
    return lanecast.Scene.from_file(SCENES / "bunny.toml").build()


@pytest.fixture(scope="session")
def default_scene() -> lanecast.Scene:
    return lanecast.Scene.from_file(SCENES / "default.toml").build()


def rays_at(scene: lanecast.Scene, n: int, seed: int, width: int = 6) -> np.ndarray:
    """``n`` rays from a box 1.5x the scene's, aimed at random points of its box: a mix of hits
    and misses. With ``width == 8``, random intervals ``[tmin, tmax]`` are appended."""
    rng = np.random.default_rng(seed)
    lo, hi = scene.bounds()
    c, e = (lo + hi) / 2, (hi - lo) / 2
    o = rng.uniform(c - 1.5 * e, c + 1.5 * e, (n, 3))
    d = rng.uniform(lo, hi, (n, 3)) - o
    cols = [o, d]
    if width == 8:
        t0 = rng.uniform(0.0, 0.5, (n, 1))
        cols += [t0, t0 + rng.uniform(0.0, 1.0, (n, 1))]
    return np.ascontiguousarray(np.concatenate(cols, axis=1), dtype=np.float32)


def points_near(scene: lanecast.Scene, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo, hi = scene.bounds()
    c, e = (lo + hi) / 2, (hi - lo) / 2
    return rng.uniform(c - 1.2 * e, c + 1.2 * e, (n, 3)).astype(np.float32)
