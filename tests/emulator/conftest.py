"""The emulator fixtures, also when the plugin is not installed through its entry point."""

from alloy.testing.pytest_plugin import alloy_emulator, alloy_emulator_env, alloy_emulator_session

__all__ = ["alloy_emulator", "alloy_emulator_env", "alloy_emulator_session"]
