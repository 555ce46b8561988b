"""Table models: they turn core results into rows and cells, and nothing else."""
