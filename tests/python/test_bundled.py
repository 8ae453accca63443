# Every bundled config through the command line: `plan` prints every group's parameters and
# buffers for Triton and FlashInfer at TP 1, 2, 4 and 8, and its JSON fed unchanged to `verify`
# is clean (exit 0).
import glob
import json
import os

import pytest

from conftest import SOURCE_DIR, run_cli

CONFIGS = sorted(glob.glob(os.path.join(SOURCE_DIR, "configs", "*.json")))


@pytest.mark.parametrize("config", CONFIGS, ids=os.path.basename)
def test_plan_prints_every_group_and_verifies_clean(tmp_path, config):
    out = tmp_path / "plan.json"
    rc, text, err = run_cli("plan", config, "--tp", "1,2,4,8", "--json", out)
    assert rc == 0, err
    plan = json.loads(out.read_text())
    for rank in plan["ranks"]:
        backends = {g["backend"] for g in rank["groups"]}
        assert backends == {"triton", "flashinfer"}, f"tp {rank['tp']}"
    groups = [g for r in plan["ranks"] for g in r["groups"]]
    assert text.count("    parameters: ") == len(groups)
    for g in groups:
        for b in g["buffers"]:
            assert f"{b['name']}" in text and f"{b['bytes']} B" in text
    rc, text, err = run_cli("verify", out)
    assert rc == 0 and "verdict: OK" in text, text[-2000:]
