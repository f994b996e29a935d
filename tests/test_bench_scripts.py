"""The benchmark scripts keep working: bench/gpu_check.py runs its steps on the CPU."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_gpu_check_runs_on_cpu():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_check.py"), "--cpu"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS" in out.stdout and "W2 torch" in out.stdout


def test_gpu_check_without_gpu_exits_cleanly():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_check.py")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert ("no CUDA GPU" in out.stdout) or ("PASS" in out.stdout)


def test_panel_latency_runs_in_process():
    """bench/panel_latency.py's in-process part (the browser part is the browser test's
    harness, exercised by tests/kernel_ext/test_browser.py)."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "panel_latency.py"), "--quick",
                          "--no-browser"], capture_output=True, text=True, timeout=600,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "the magic, in all" in out.stdout and "panel widgets" in out.stdout, out.stdout
    assert "not measured (--no-browser)" in out.stdout, out.stdout


def test_real_models_bench_checks_and_times():
    """bench/real_models.py (issue 17's row): the gradient through an opaque nn.Sequential is
    checked against loss.backward() before anything is timed."""
    pytest.importorskip("torch")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "real_models.py"), "--quick"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "dx = logits_vjp(dlogits)" in out.stdout and "loss.backward()" in out.stdout
