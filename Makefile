# The two commands a fresh machine needs: `make demo` and `make test`.
CARGO ?= cargo
GUESTS := -p program-hostile -p program-bench -p program-fs-import -p program-socket-import \
          -p program-no-catalog -p program-overreach -p program-chain-reader
PLUGINS := hello

.PHONY: setup plugins demo test lint bench

setup:
	@scripts/setup.sh

# Build the repo's plugins as components into .bardo/plugins (what bardo.toml loads).
plugins: setup
	$(CARGO) build --locked --target wasm32-wasip2 --profile plugin $(foreach p,$(PLUGINS),-p bardo-plugin-$(p))
	@mkdir -p .bardo/plugins
	@for p in $(PLUGINS); do cp target/wasm32-wasip2/plugin/bardo_plugin_$$p.wasm .bardo/plugins/$$p.wasm; done

BARDO := ./target/debug/bardo

# The main job: build the plugins, start the local chain, list a profile's tools, run read
# calls (one reads the chain), audit a plugin, stop the chain.
demo: plugins
	$(CARGO) build --locked -p bardo-host
	$(BARDO) devnet up --detach
	@status=0; \
	  $(BARDO) tools --profile data && \
	  $(BARDO) call hello_greet --params '{"name":"golem"}' && \
	  $(BARDO) call hello_greet --params '{"name":"golem","chain_id":31337}' && \
	  $(BARDO) audit .bardo/plugins/hello.wasm || status=$$?; \
	  $(BARDO) devnet down; exit $$status

lint: setup
	$(CARGO) fmt --all --check
	$(CARGO) clippy --locked --all-targets -- -D warnings
	$(CARGO) clippy --locked --target wasm32-wasip2 $(foreach p,$(PLUGINS),-p bardo-plugin-$(p)) $(GUESTS) -- -D warnings

# The whole test suite (what CI runs).
test: lint
	$(CARGO) test --locked

bench: setup
	$(CARGO) bench --locked -p bardo-host --bench call
