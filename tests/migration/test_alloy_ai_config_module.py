"""alloy-ai's ``alloy.config`` module: each name warns, names alloy's replacement, and works
(issue 21, item 4)."""

from __future__ import annotations

import pytest

from alloy import ConfigurationError, ask
from alloy.testing import FunctionModel


def test_alloy_config_module_names_warn_and_work(model: FunctionModel) -> None:
    with pytest.deprecated_call(match=r"alloy\.config\.Config .*use_config\(temperature"):
        from alloy.config import Config
    with pytest.deprecated_call(match=r"alloy\.config\.use_config .* keyword options"):
        from alloy.config import use_config as legacy_use_config
    with pytest.deprecated_call(match=r"alloy\.config\.get_config .* alloy\.Config"):
        from alloy.config import get_config
    with pytest.deprecated_call(match=r"import it from alloy"):
        from alloy.config import configure as legacy_configure
    with pytest.deprecated_call(match=r"alloy\.Config\(\)\.parallel_tools_max"):
        from alloy.config import DEFAULT_PARALLEL_TOOLS_MAX
    assert DEFAULT_PARALLEL_TOOLS_MAX == 8

    legacy_configure(max_tokens=300)
    with legacy_use_config(Config(temperature=0.1, default_system="S", retry=2, extra={"k": 1})):
        resolved = get_config()
        ask("x")
    assert (resolved.temperature, resolved.system, resolved.retries) == (0.1, "S", 1)
    assert resolved.extra_json == {"k": 1}
    request = model.requests[0]
    assert (request.settings.temperature, request.settings.max_tokens) == (0.1, 300)
    assert (request.system, request.settings.extra) == ("S", {"k": 1})
    with (
        pytest.raises(ConfigurationError, match="retry_on"),
        legacy_use_config(Config(retry_on=ValueError)),
    ):
        pass


def test_alloy_config_has_only_alloy_ais_names() -> None:
    import alloy.config

    with pytest.raises(AttributeError, match="no attribute 'Settings'"):
        alloy.config.Settings
    assert dir(alloy.config) == [
        "Config",
        "DEFAULT_PARALLEL_TOOLS_MAX",
        "configure",
        "get_config",
        "log",
        "use_config",
    ]
