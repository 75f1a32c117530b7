"""The runtime: the helpers generated code calls while it runs.

The cotangent algebra, linear maps between containers, loops and calls as
functions, and calls resolved at run time. Nothing here imports the compiler
except `dispatch`, which transforms a callee met at run time.
"""
