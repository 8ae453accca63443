# Python and the command line agree: the same input gives the same report JSON and the same plan,
# and a bad input raises with the exact message the command prints on exit 2.
import json

import pytest

import headroom
from conftest import config_path, run_cli

LAGUNA = config_path("laguna-xs2.json")


def test_check_reports_are_identical(tmp_path):
    out = tmp_path / "r.json"
    rc, _, _ = run_cli("check", LAGUNA, "--tp", "1,8", "--policy", "model-wide", "--json", out)
    assert rc == 1
    assert json.loads(out.read_text()) == headroom.check(LAGUNA, tp=[1, 8], policy="model-wide")


def test_plans_and_verify_reports_are_identical(tmp_path):
    plan_file, report_file = tmp_path / "p.json", tmp_path / "v.json"
    rc, _, _ = run_cli("plan", LAGUNA, "--tp", "2", "--policy", "model-wide", "--json", plan_file)
    assert rc == 0
    plan = json.loads(plan_file.read_text())
    assert plan == headroom.plan(LAGUNA, tp=2, policy="model-wide")
    rc, _, _ = run_cli("verify", plan_file, "--json", report_file)
    assert rc == 1
    assert json.loads(report_file.read_text()) == headroom.verify(str(plan_file)) == headroom.verify(plan, name=str(plan_file))


@pytest.mark.parametrize("edit", ["bytes", "layer", "negative"])
def test_exceptions_carry_the_cli_message(tmp_path, edit):
    plan = headroom.plan(LAGUNA)
    g = plan["ranks"][0]["groups"][0]
    if edit == "bytes":
        g["buffers"][0]["bytes"] += 1
    elif edit == "layer":
        g["layers"].append("model.layers.40.self_attn.attn")
    else:
        g["buffers"][1]["shape"][0] = -1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(plan))
    report = tmp_path / "report.json"
    rc, out, err = run_cli("verify", path, "--json", report)
    assert rc == 2 and out == "" and err.count("\n") == 1 and not report.exists()
    with pytest.raises(headroom.InputError) as e:
        headroom.verify(str(path))
    assert err == f"headroom: {e.value}\n"
