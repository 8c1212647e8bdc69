"""Type stubs for the Cython module ``kueue_fast.loader._yaml_risk`` (loader/_yaml_risk.pyx)."""

def yaml_1_1_risk(text: str) -> int: ...

INTERFACE: int
