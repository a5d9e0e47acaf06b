"""Whether this CPU runs `mixed_bfloat16` faster than float32.

On x86 it does with AMX (Intel Sapphire Rapids and later), where oneDNN's
bfloat16 matrix products run at several times the float32 rate. Without AMX
it is slower: with AVX512_BF16 alone (bf16 dot products, no tiles) BERT-Base
trained at about half its float32 speed, and with neither TensorFlow emulates
bfloat16 at a third to a quarter (docs/performance.md, "bfloat16 on the CPU").
"""

import os

# ONEDNN_MAX_CPU_ISA values that hide AMX from oneDNN.
HIDING_ISAS = frozenset(
    {
        "SSE41",
        "AVX",
        "AVX2",
        "AVX2_VNNI",
        "AVX2_VNNI_2",
        "AVX512_CORE",
        "AVX512_CORE_VNNI",
        "AVX512_CORE_BF16",
        "AVX512_CORE_FP16",
    }
)


def fast_bfloat16(cpuinfo="/proc/cpuinfo", environ=None):
    """True or False on an x86 CPU whose flags can be read (AMX's `amx_bf16`,
    not hidden by `ONEDNN_MAX_CPU_ISA`); None elsewhere (Arm, not Linux)."""
    environ = os.environ if environ is None else environ
    try:
        with open(cpuinfo) as f:
            for line in f:
                name, _, values = line.partition(":")
                if name.strip() == "flags":
                    if environ.get("ONEDNN_MAX_CPU_ISA", "").upper() in HIDING_ISAS:
                        return False
                    return "amx_bf16" in values.split()
    except OSError:
        pass
    return None
