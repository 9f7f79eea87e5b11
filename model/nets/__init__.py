"""The networks: one attention module, the blocks, and the three models built from them."""
