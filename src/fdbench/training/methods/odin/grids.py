"""The grids of temperatures and perturbation magnitudes ODIN selects from (Kim et al.)."""

#: Temperatures searched by Kim et al. (``methods/odin.py``), the range of Liang et al.
ODIN_TEMPERATURES = (1.0, 10.0, 100.0, 1000.0)
#: Perturbation magnitudes searched by Kim et al. (``methods/odin.py``; Lee et al. 2018's grid).
ODIN_EPSILONS = (0.0, 0.0005, 0.001, 0.0014, 0.002, 0.0024, 0.005, 0.01, 0.05, 0.1, 0.2)
