"""The ``kueue-fast`` command line: the entry point (cli) and one module per command, each parsing
its arguments and printing what the library computes.
"""
