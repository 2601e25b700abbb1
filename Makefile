# The two commands a fresh machine needs: `make demo` and `make test`.
CARGO ?= cargo
GUESTS := -p program-hostile -p program-bench -p program-fs-import -p program-socket-import \
          -p program-no-catalog -p program-overreach -p program-chain-reader -p program-evil-writer
PLUGINS := hello uniswap

.PHONY: setup plugins demo test lint bench

setup:
	@scripts/setup.sh

# Build the repo's plugins as components into .bardo/plugins (what bardo.toml loads).
plugins: setup
	$(CARGO) build --locked --target wasm32-wasip2 --profile plugin $(foreach p,$(PLUGINS),-p bardo-plugin-$(p))
	@mkdir -p .bardo/plugins
	@for p in $(PLUGINS); do cp target/wasm32-wasip2/plugin/bardo_plugin_$$p.wasm .bardo/plugins/$$p.wasm; done

BARDO := ./target/debug/bardo

# The main job: build the plugins, start the local chain, list a profile's tools, read pools,
# quotes and prices on the chain, plan a swap (anvil's public dev key as the wallet), audit the
# Uniswap plugin, stop the chain.
DEV_KEY := 0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80
demo: plugins
	$(CARGO) build --locked -p bardo-host
	@# The plugins were just built from this checkout: pin exactly these in bardo.lock.
	$(BARDO) lock
	$(BARDO) devnet up --detach
	@status=0; \
	  $(BARDO) tools --profile data && \
	  $(BARDO) call hello_greet --params '{"name":"golem","chain_id":31337}' && \
	  $(BARDO) call uniswap_get_pool_info --params '{"chain_id":31337,"token_a":"WETH","token_b":"USDC"}' && \
	  $(BARDO) call uniswap_get_quote --params '{"chain_id":31337,"token_in":"WETH","token_out":"USDC","amount":"1.5"}' && \
	  $(BARDO) call data_get_token_price --params '{"chain_id":31337,"token":"WETH"}' && \
	  BARDO_PRIVATE_KEY=$(DEV_KEY) $(BARDO) plan uniswap_execute_swap --profile trader \
	    --params '{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"1000","slippage_bps":50}' && \
	  $(BARDO) audit .bardo/plugins/uniswap.wasm || status=$$?; \
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
