"""Private implementation of ``compat-check``; the public surface is ``compat.check``.

Pipeline: sources (read, decode, notebooks) -> names (AST resolution) or tokens (fallback
scan) -> sites -> rules (one per file, each yields frozen Findings) -> engine (file
reports) -> formats (text/json/sarif) and fix (libcst import rewriting). Nothing here
imports TensorFlow.
"""
