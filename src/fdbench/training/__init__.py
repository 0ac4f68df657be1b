"""Training methods, inference and model selection (PyTorch + Lightning)."""
