"""Past one process: commands that pickle (ProcessPoolExecutor, cloudpickle), budgets shared by
workers, and commands inside Ray Data on a real local Ray cluster."""
