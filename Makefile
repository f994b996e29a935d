# Two commands matter: `make demo` and `make test`. Both create .venv/ on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.gradlab-installed
export PYTHONUNBUFFERED := 1

.PHONY: setup sysdeps test demo lab bench fuzz typecheck clean

setup: $(STAMP)

# The venv is rebuilt when the dependency list changes. Without an NVIDIA GPU we install CPU builds
# of the frameworks (a CUDA torch alone is several GB).
$(STAMP): pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
	  echo "[setup] NVIDIA GPU found: installing CUDA builds"; \
	  $(BIN)/pip install -q torch tensorflow "jax[cuda12]"; \
	else \
	  echo "[setup] no NVIDIA GPU: installing CPU builds of torch, tensorflow and jax"; \
	  $(BIN)/pip install -q torch==2.13.0 tensorflow-cpu "jax[cpu]"; \
	fi
	$(BIN)/pip install -q -e ".[dev,lab]"
	@touch $(STAMP)

# System programs the tests use: Graphviz's dot (graph pictures) and Chromium (the browser test).
sysdeps:
	@missing=""; \
	command -v dot >/dev/null 2>&1 || missing="$$missing graphviz"; \
	test -x /usr/bin/chromium || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "[setup] apt-get install$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "[setup] missing system packages:$$missing (install them to run every test)"; \
	  fi; \
	fi

test: setup sysdeps
	GRADLAB_REQUIRE_ALL_BACKENDS=1 $(BIN)/python -m pytest -q

demo: setup
	$(BIN)/python -m gradlab.demo

lab: setup
	$(BIN)/jupyter lab notebooks/

bench: setup
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/gradients.py
	$(BIN)/python bench/checkpointing.py
	$(BIN)/python bench/panel_latency.py

fuzz: setup
	GRADLAB_REQUIRE_ALL_BACKENDS=1 $(BIN)/python -m pytest -q tests/hardening --fuzz

typecheck: setup
	$(BIN)/python -m mypy gradlab

clean:
	rm -rf $(VENV)
