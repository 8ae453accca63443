# The engine-side example: a test dumps its metadata builders' tensors into the plan schema and
# calls headroom.verify. Here the builder is a stand-in (standin_builder.py); see README.md for a
# real vLLM checkout.
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from headroom_hook import assert_buffers_fit, plan_of, triton_group  # noqa: E402
from standin_builder import TritonBuilderStandIn, laguna_like_groups  # noqa: E402

CONFIG = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "laguna-xs2.json")


def engine_plan(tp, fixed):
    hf_config = json.load(open(CONFIG))
    builders = [TritonBuilderStandIn(hf_config, names, tp, fixed) for names in laguna_like_groups(hf_config)]
    groups = [triton_group(i, i, b) for i, b in enumerate(builders)]
    return plan_of(hf_config, tp, groups, source="stand-in Triton builder")


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_fixed_builder_fits_every_step(tp):
    assert_buffers_fit(engine_plan(tp, fixed=True))


def test_wrong_builder_fails_naming_buffer_group_and_batch():
    with pytest.raises(AssertionError) as e:
        assert_buffers_fit(engine_plan(1, fixed=False))
    message = str(e.value)
    # 48 heads planned, 64 written: 13 * 64 > 16 * 48 rows first at 13 requests (docs/engines.md).
    assert "buffer_capacity: softmax_segm_output of triton group 1 (tp 1), first failing decode batch 13" in message
    print(message)
