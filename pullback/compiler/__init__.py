"""The compiler: from a Python function to its forward and pullback, as generated Python."""
