"""The scheduling engines and what they share: the dense-id input compiled from the object model
(inputs, workloads, tas), the engine contract with its argument checks, the native engine's
facade (native, kernels) and the pure-Python reference engine (reference/), the specification as
code.
"""
