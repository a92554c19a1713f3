"""The benchmark stays runnable (tiny sizes; the figures themselves are in docs)."""

from __future__ import annotations

import re

import pytest

from bench.bench_fakellm import main


def test_bench_runs_and_prints_medians(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--rounds", "5", "--chars", "2000"])
    out = capsys.readouterr().out
    ttfc = re.search(r"time to first chunk: median ([\d.]+) ms", out)
    rate = re.search(r"throughput: median ([\d,]+) chunks/s", out)
    assert ttfc is not None and float(ttfc.group(1)) > 0
    assert rate is not None and int(rate.group(1).replace(",", "")) > 0
