"""alloy's benchmarks: overhead against the raw SDKs and against peer libraries, side by side.

Run ``python -m benchmarks`` (``make bench``). Every figure is a ratio of two medians measured in
the same run, because this machine is shared and absolute times drift; the medians are printed
next to each ratio. Tests never assert times: targets live in the report.
"""
