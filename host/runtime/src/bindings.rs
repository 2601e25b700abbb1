//! Host-side bindings for `bardo:host@0.1.0` / `bardo:plugin@0.2.0`.
//!
//! One synthesized world imports every host interface and exports every plugin interface; a
//! component uses only a subset, so the host looks exports up per interface (`*Indices`) and the
//! linker defines every import while `plugin::surface` decides which a component may use.
//! A plugin built against an older `bardo:plugin` is refused at load with the version it needs
//! (`plugin::surface`); pre-1.0, minor versions break.

wasmtime::component::bindgen!({
    inline: "
        package bardo:host-bindings;
        world all {
            include bardo:plugin/writer@0.2.0;
            include bardo:plugin/streamer@0.2.0;
            import bardo:host/uniswap-sdk@0.1.0;
            import bardo:host/testnet@0.1.0;
            import bardo:host/memory@0.1.0;
        }
    ",
    path: ["../../wit/host", "../../wit/plugin"],
    world: "bardo:host-bindings/all",
});

pub(crate) use bardo::host::types::{Error as WitError, ErrorCode as WitErrorCode};
