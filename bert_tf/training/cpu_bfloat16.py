"""Whether this CPU was measured to run `mixed_bfloat16` slower than float32.

bfloat16 pays where the CPU multiplies bfloat16 in hardware: with AMX (Intel
Sapphire Rapids and later) BERT-Base trained 1.9x faster than in float32, and
with AVX512_BF16 alone on an AMD Zen 4 1.3-1.5x. It was measured
slower where oneDNN may use neither (TensorFlow then emulates bfloat16: a
third of the float32 speed), and on a Sapphire Rapids whose AMX
`ONEDNN_MAX_CPU_ISA` hid (0.55x). docs/performance.md, "bfloat16 on the CPU".
"""

import os

# ONEDNN_MAX_CPU_ISA values that leave oneDNN no bfloat16 dot product.
NO_BFLOAT16_ISAS = frozenset(
    {"SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI"}
)
# ... and those that leave AVX512_BF16 but hide AMX.
AMX_HIDING_ISAS = frozenset({"AVX512_CORE_BF16", "AVX512_CORE_FP16"})


def x86_flags(cpuinfo="/proc/cpuinfo"):
    """The set of `flags` in `cpuinfo`; None where there is none (Arm, not Linux)."""
    try:
        with open(cpuinfo) as f:
            for line in f:
                name, _, values = line.partition(":")
                if name.strip() == "flags":
                    return set(values.split())
    except OSError:
        pass
    return None


def slower_bfloat16(cpuinfo="/proc/cpuinfo", environ=None):
    """Why `mixed_bfloat16` runs slower than float32 on this x86 CPU (as
    measured on such a CPU), or None: faster, or not measured (Arm, flags
    unreadable)."""
    environ = os.environ if environ is None else environ
    isa = environ.get("ONEDNN_MAX_CPU_ISA", "").upper()
    flags = x86_flags(cpuinfo)
    if flags is None:
        return None
    if isa in NO_BFLOAT16_ISAS or not flags & {"amx_bf16", "avx512_bf16"}:
        return "without bfloat16 instructions (AVX512_BF16 or AMX)"
    if "amx_bf16" in flags and isa in AMX_HIDING_ISAS:
        return f"whose AMX ONEDNN_MAX_CPU_ISA={isa} hides"
    return None
