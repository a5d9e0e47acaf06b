"""Whether this CPU runs bfloat16 matrix products natively.

oneDNN's bfloat16 kernels use AVX512_BF16 or AMX on x86 (BF16 on Arm);
without them TensorFlow converts every bfloat16 value to float32 and back,
and `mixed_bfloat16` trains and predicts slower than float32
(docs/performance.md, "bfloat16 on the CPU").
"""

import os

# ONEDNN_MAX_CPU_ISA values that hide the bfloat16 instructions from oneDNN.
HIDING_ISAS = frozenset(
    {"SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI"}
)
BFLOAT16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})


def native_bfloat16(cpuinfo="/proc/cpuinfo", environ=None):
    """True or False from the CPU's flags (and `ONEDNN_MAX_CPU_ISA`); None
    where the flags cannot be read (not Linux)."""
    environ = os.environ if environ is None else environ
    if environ.get("ONEDNN_MAX_CPU_ISA", "").upper() in HIDING_ISAS:
        return False
    try:
        with open(cpuinfo) as f:
            for line in f:
                name, _, values = line.partition(":")
                if name.strip() in ("flags", "Features"):
                    return not BFLOAT16_FLAGS.isdisjoint(values.split())
    except OSError:
        pass
    return None
