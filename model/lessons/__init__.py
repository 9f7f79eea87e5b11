"""The teaching material: the hand-worked example, the multi-head reshape, workshop questions."""
