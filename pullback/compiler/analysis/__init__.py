"""Analyses the reverse pass consults: kinds of values, aliasing, shifts a computation cancels."""
