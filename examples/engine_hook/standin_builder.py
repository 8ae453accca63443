# A stand-in for vLLM's Triton attention metadata builder (vllm/v1/attention/backends/triton_attn.py,
# TritonAttentionMetadataBuilder.__init__), written for this example because no engine can be
# installed here. It allocates what the real builder allocates, with the same attribute names, as
# shape-and-dtype records instead of torch tensors. `fixed=False` is the historical wrong sizing:
# the query heads from the model-wide count (num_attention_heads // tp) instead of the builder's
# own layers.
from dataclasses import dataclass

MIN_LAUNCH_GRID_SIZE_2D = 128  # vLLM: seq_threshold_3D = MIN_LAUNCH_GRID_SIZE_2D // num_heads_kv
NUM_PAR_SOFTMAX_SEGMENTS = 16


@dataclass
class FakeTensor:
    shape: tuple
    dtype: str = "torch.float32"

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def element_size(self):
        return {"torch.float32": 4, "torch.bfloat16": 2, "torch.float16": 2}[self.dtype]


def next_power_of_2(n):
    return 1 << (n - 1).bit_length()


class TritonBuilderStandIn:
    def __init__(self, hf_config, layer_names, tp, fixed=True):
        heads = hf_config["num_attention_heads_per_layer"]
        layer_heads = {f"model.layers.{i}.self_attn.attn": h // tp for i, h in enumerate(heads)}
        self.layer_names = list(layer_names)
        if fixed:  # get_num_attention_heads_from_layers: the builder's own layers
            self.num_heads_q = layer_heads[self.layer_names[0]]
        else:  # model_config.get_num_attention_heads(parallel_config): model-wide
            self.num_heads_q = hf_config["num_attention_heads"] // tp
        self.num_heads_kv = max(1, hf_config["num_key_value_heads"] // tp)
        self.headdim = hf_config["head_dim"]
        self.seq_threshold_3D = MIN_LAUNCH_GRID_SIZE_2D // self.num_heads_kv
        self.num_par_softmax_segments = NUM_PAR_SOFTMAX_SEGMENTS
        headdim_padded = next_power_of_2(self.headdim)
        rows = (self.seq_threshold_3D, self.num_heads_q, self.num_par_softmax_segments)
        self.softmax_segm_output = FakeTensor(rows + (headdim_padded,))
        self.softmax_segm_max = FakeTensor(rows)
        self.softmax_segm_expsum = FakeTensor(rows)


def laguna_like_groups(hf_config):
    """The attention groups vLLM forms for a Laguna-style model: one per (layer kind, heads) bucket,
    each KV-cache group of sliding layers split evenly (here: full layers, then 3 sliding groups)."""
    kinds = hf_config["layer_types"]
    full = [i for i, k in enumerate(kinds) if k == "full_attention"]
    sliding = [i for i, k in enumerate(kinds) if k == "sliding_attention"]
    groups = [full] + [sliding[j::3] for j in range(3)]
    return [[f"model.layers.{i}.self_attn.attn" for i in g] for g in groups]
