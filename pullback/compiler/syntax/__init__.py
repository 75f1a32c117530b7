"""Syntax helpers every stage uses: gast nodes, readable names, Python's scoping."""
