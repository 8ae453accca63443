# Shared helpers of the python.* tests: the module under test, the command line beside it, the
# source tree's configs, and a base seed for the randomised tests (printed; HEADROOM_SEED replays).
import os
import random
import subprocess

import pytest

import headroom

SOURCE_DIR = os.environ.get("HEADROOM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def config_path(name):
    return os.path.join(SOURCE_DIR, "configs", name)


def run_cli(*args):
    """The headroom command (HEADROOM_BIN): (exit code, stdout, stderr)."""
    p = subprocess.run([os.environ["HEADROOM_BIN"], *map(str, args)], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def group(plan, tp, backend, index):
    rank = next(r for r in plan["ranks"] if r["tp"] == tp)
    return next(g for g in rank["groups"] if g["backend"] == backend and g["group"] == index)


def buffer(group_entry, name):
    return next(b for b in group_entry["buffers"] if b["name"] == name)


def threshold(report, backend, tp, index):
    return next(t["min_failing_decode_batch"] for t in report["thresholds"]
                if t["backend"] == backend and t["tp"] == tp and t["group"] == index and "variable" not in t)


@pytest.fixture(scope="session")
def base_seed():
    seed = int(os.environ.get("HEADROOM_SEED", random.randrange(1 << 32)))
    print(f"base seed {seed} (HEADROOM_SEED={seed} replays)")
    return seed
