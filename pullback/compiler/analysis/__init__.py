"""What is known of a function before it runs: the abstract interpreter (`interpret`)
and the analyses it drives: kinds of values, callees, aliasing and updates in place,
shifts a computation cancels."""
