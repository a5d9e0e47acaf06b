"""Task entry points: each takes an options dataclass; the scripts call these."""
