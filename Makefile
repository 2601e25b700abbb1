# The two commands a fresh machine needs: `make demo` and `make test`.
CARGO ?= cargo
GUESTS := -p program-hostile -p program-bench -p program-fs-import -p program-socket-import \
          -p program-no-catalog -p program-overreach -p program-chain-reader -p program-evil-writer -p program-kind-thief -p program-attack -p program-prompt-kind \
          -p program-echo-v1 -p program-echo-v2 -p program-echo-v3 \
          -p program-echo-v2-1 -p program-echo-v4
PLUGINS := hello uniswap aave streaming wallet testnet intelligence safety vault bootstrap identity morpho pendle memory bridge

.PHONY: setup plugins demo test lint bench bench-peers fuzz

setup:
	@scripts/setup.sh

BARDO := ./target/debug/bardo

# Build the repo's plugins as components into .bardo/plugins (what bardo.toml loads), and
# compile them into bardo's cache: the first `bardo` start then loads each in a millisecond.
# Only what the build needs is installed (`scripts/setup.sh build`); the tests' parts wait for `make test`.
plugins:
	@echo "make plugins [1/3]: the wasm32-wasip2 Rust target (once)"
	@scripts/setup.sh build
	@echo "make plugins [2/3]: the 15 plugins as WebAssembly components (the first time ~2 min on 2 cores)"
	$(CARGO) build --locked --target wasm32-wasip2 --profile plugin $(foreach p,$(PLUGINS),-p bardo-plugin-$(p))
	@mkdir -p .bardo/plugins
	@for p in $(PLUGINS); do cp target/wasm32-wasip2/plugin/bardo_plugin_$$p.wasm .bardo/plugins/$$p.wasm; done
	@echo "make plugins [3/3]: bardo itself (the first time ~22 min: wasmtime, revm, alloy, candle), then the plugins compiled into its cache"
	$(CARGO) build --locked -p bardo-cli
	$(BARDO) plugin precompile

# The main job, a scripted agent session on the devnet: list the tools, read a pool, a quote,
# Uniswap's own SDK route (the sidecar: split, multi-hop) and a price, the wallet's balances, a
# token's safety check and a venue comparison, preview a swap (plan -> safety hooks -> simulation -> permit), commit it (signed
# with anvil's public dev key, broadcast, verified from the receipt), swap on the second chain (8453),
# bridge USDC there through Across (filled by the devnet's relayer) and value the wallet across
# both, supply to Aave the same
# way, read a Morpho Blue market and an ERC-4626 vault, show and verify the audit trail, audit the Uniswap plugin's surface, stop the chain.
DEV_KEY := 0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80
SWAP := {"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"1000","slippage_bps":50}
SWAP_8453 := {"chain_id":8453,"token_in":"USDC","token_out":"WETH","amount":"500","slippage_bps":50}
BRIDGE := {"chain_id":31337,"destination_chain_id":8453,"token":"USDC","amount":"1000"}
SUPPLY := {"chain_id":31337,"asset":"USDC","amount":"5000"}
demo: plugins
	@echo "make demo: anvil, the contract artifacts, the sidecar's Uniswap SDKs and the embedding model (once: ~1 min, 0.9 GB)"
	@scripts/setup.sh demo
	@# The plugins were just built from this checkout: pin exactly these in bardo.lock.
	$(BARDO) lock
	$(BARDO) devnet up --detach
	@status=0; export BARDO_PRIVATE_KEY=$(DEV_KEY); \
	  $(BARDO) tools --profile trader && \
	  $(BARDO) call uniswap_get_pool_info --params '{"chain_id":31337,"token_a":"WETH","token_b":"USDC"}' && \
	  $(BARDO) call uniswap_get_quote --params '{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"1000"}' && \
	  $(BARDO) call uniswap_get_route --profile trader --params '{"chain_id":31337,"token_in":"USDC","token_out":"DAI","amount":"250000"}' && \
	  $(BARDO) call data_get_token_price --params '{"chain_id":31337,"token":"WETH"}' && \
	  $(BARDO) call wallet_get_balances --profile active --params '{"chain_id":31337}' && \
	  $(BARDO) call safety_check_token --profile trader --params '{"chain_id":31337,"token":"USDC"}' && \
	  $(BARDO) call intel_compare_venues --profile intelligence --params '{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"25000"}' && \
	  $(BARDO) preview swap --profile trader --params '$(SWAP)' | tee .bardo/permit.json && \
	  permit=$$(sed -n 's/.*"permit_id": "\(permit-[0-9a-f]*\)".*/\1/p' .bardo/permit.json) && \
	  $(BARDO) commit $$permit --profile trader && \
	  { ! $(BARDO) commit $$permit --profile trader; } && \
	  $(BARDO) preview swap --profile trader --params '$(SWAP_8453)' | tee .bardo/permit.json && \
	  permit=$$(sed -n 's/.*"permit_id": "\(permit-[0-9a-f]*\)".*/\1/p' .bardo/permit.json) && \
	  $(BARDO) commit $$permit --profile trader && \
	  $(BARDO) preview bridge --profile trader --params '$(BRIDGE)' | tee .bardo/permit.json && \
	  permit=$$(sed -n 's/.*"permit_id": "\(permit-[0-9a-f]*\)".*/\1/p' .bardo/permit.json) && \
	  $(BARDO) commit $$permit --profile trader && \
	  $(BARDO) call wallet_get_portfolio --profile active --params '{}' && \
	  $(BARDO) call aave_get_reserve_data --profile active --params '{"chain_id":31337,"asset":"USDC"}' && \
	  $(BARDO) preview supply --profile active --params '$(SUPPLY)' | tee .bardo/permit.json && \
	  permit=$$(sed -n 's/.*"permit_id": "\(permit-[0-9a-f]*\)".*/\1/p' .bardo/permit.json) && \
	  $(BARDO) commit $$permit --profile active && \
	  $(BARDO) call aave_get_user_account_data --profile active --params '{"chain_id":31337}' && \
	  $(BARDO) call morpho_get_market --profile active --params '{"chain_id":31337,"market":"WETH/USDC"}' && \
	  $(BARDO) call pendle_get_market --profile active --params '{"chain_id":31337,"market":"PT-bvUSDC"}' && \
	  $(BARDO) call pendle_quote --profile active --params '{"chain_id":31337,"market":"PT-bvUSDC","action":"buy_pt","amount":"1000"}' && \
	  $(BARDO) call memory_search_episodes --profile learning --params '{"query":"which trades and deposits went through","limit":3}' && \
	  $(BARDO) call vault_get_info --profile vault --params '{"chain_id":31337,"vault":"bvUSDC"}' && \
	  $(BARDO) audit-log show && $(BARDO) audit-log verify && \
	  $(BARDO) audit .bardo/plugins/uniswap.wasm || status=$$?; \
	  $(BARDO) devnet down; exit $$status

lint:
	@scripts/setup.sh build
	$(CARGO) fmt --all --check
	$(CARGO) clippy --locked --all-targets -- -D warnings
	$(CARGO) clippy --locked --target wasm32-wasip2 $(foreach p,$(PLUGINS),-p bardo-plugin-$(p)) $(GUESTS) -- -D warnings
	$(CARGO) clippy --locked -p bardo-fuzz --features libfuzzer --bins -- -D warnings

# The whole test suite (what CI runs): scripts/test.sh says how — the build linted as it is
# built while the test packages install, the test binaries two at a time, the short fuzzing pass.
test:
	@scripts/test.sh

# Coverage-guided fuzzing under libFuzzer (fuzz/, scripts/fuzz.sh): every target FUZZ_SECONDS,
# FUZZ_JOBS at a time. A longer campaign: `make fuzz FUZZ_SECONDS=3600 FUZZ_JOBS=2`.
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
fuzz: setup
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) scripts/fuzz.sh

bench: setup
	$(CARGO) bench --locked -p bardo-runtime --bench call --bench simulate --bench fabric --bench stream --bench pull --bench route
	$(CARGO) bench --locked -p bardo-safety --bench preview
	$(CARGO) bench --locked -p bardo-agent --bench speculation
	$(CARGO) bench --locked -p bardo-memory --bench memory
	$(CARGO) bench --locked -p bardo-cli --bench mcp --bench a2a
	$(CARGO) bench --locked -p bardo-sidecar --bench sidecar
	$(CARGO) bench --locked -p bardo-tui --bench dashboard

# The same guest work in Bardo's isolated call, raw wasmtime and Extism, in one run, with a table
# of medians and ratios at the end (benches/peers; not a default member, so CI never builds it).
bench-peers: setup
	$(CARGO) bench --locked -p bardo-peers --bench peers
