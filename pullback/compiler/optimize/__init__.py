"""Stage 4: simplifications of the generated code, run by `simplify.optimize`."""
