"""Runs of a trained model and what is read from them: typed results, ablation, rollout, head profiles."""
