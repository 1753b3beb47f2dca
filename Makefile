# The README's two commands: `make run` and `make test`. Both set up what they need first.
PYTHON ?= python3
VENV := .venv
SERVER_VENV := .venv-server
DEMO_MODEL := data/demo-model/model.safetensors

.PHONY: setup run lint test test-unit chromium system-tools clean

setup: $(VENV)/.installed $(SERVER_VENV)/.installed $(DEMO_MODEL)

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $@

$(SERVER_VENV)/.installed: server/install.sh
	PYTHON=$(PYTHON) bash server/install.sh $(SERVER_VENV)
	touch $@

$(DEMO_MODEL): data/make_demo_model.py data/corpus/*.txt | $(SERVER_VENV)/.installed
	$(SERVER_VENV)/bin/python data/make_demo_model.py data/demo-model

# Browser tests drive Debian's Chromium; Playwright never downloads a browser here.
chromium:
	@command -v chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium)

# OCR of scanned pages reads Chinese and English through Debian's Tesseract; the monitoring test
# scrapes the demo stack with Debian's Prometheus; the browser tests' screenshots of Chinese pages
# need a Chinese font (without one every character is a box). Installed the way Chromium is.
TESSERACT_PACKAGES := tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim tesseract-ocr-chi-tra
FONT_PACKAGES := fonts-wqy-microhei
# Real manuals the document-set tests read (tests/integration/test_summarize_set.py,
# tests/app/test_real_manuals_set.py).
MANUAL_PACKAGES := psmisc util-linux libjson-c5 libtasn1-doc shared-mime-info
system-tools: chromium
	@dpkg -s $(TESSERACT_PACKAGES) $(FONT_PACKAGES) $(MANUAL_PACKAGES) prometheus >/dev/null 2>&1 || \
	  (apt-get update -q && apt-get install -y -q $(TESSERACT_PACKAGES) $(FONT_PACKAGES) $(MANUAL_PACKAGES) prometheus)

run: setup
	@command -v tesseract >/dev/null || echo 'glm1m: tesseract is not installed, so scanned pages cannot be read (make system-tools installs it)'
	$(VENV)/bin/glm1m up

# ruff and mypy (configured in pyproject.toml) on the code, not on tests/ or bench/. mypy finds
# modules by folder and cannot follow setuptools' mapping of server/ and chainlit_app/ to
# glm1m.server and glm1m.chainlit_app (the editable install does it with an import hook), so it
# checks a view of the package as installed: build/typecheck/glm1m, the checkout's files linked.
TYPECHECK := build/typecheck
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check glm1m server chainlit_app
	rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)/glm1m
	ln -s $(CURDIR)/glm1m/* $(TYPECHECK)/glm1m/
	ln -s $(CURDIR)/server $(TYPECHECK)/glm1m/server
	ln -s $(CURDIR)/chainlit_app $(TYPECHECK)/glm1m/chainlit_app
	cd $(TYPECHECK) && $(CURDIR)/$(VENV)/bin/mypy --config-file $(CURDIR)/pyproject.toml \
	  --cache-dir $(CURDIR)/.mypy_cache

# lint runs first: a finding fails `make test` before the servers start.
test: lint setup system-tools
	$(VENV)/bin/pytest -p no:cacheprovider

test-unit: $(VENV)/.installed
	$(VENV)/bin/pytest -p no:cacheprovider tests/unit

clean:
	rm -rf $(VENV) $(SERVER_VENV) data/demo-model var .files
