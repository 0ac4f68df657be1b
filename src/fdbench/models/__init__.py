"""Network architectures and the confidence heads some methods add (PyTorch)."""
