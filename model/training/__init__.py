"""Tokenisers, datasets, checkpoints, the training loop, per-task recipes, evaluation and training history."""
