"""Plotly figure builders: pure functions from tensors (or arrays) and tokens to figures."""
