//! Generated bindings. `reader` holds the catalog and read exports every plugin has; `write_part`
//! and `stream_part` add the write or stream export, and a writer plugin invokes both export
//! macros (`wit-component` unions the worlds). All share the types of `imports`, so a
//! `bardo_sdk::Error` is one type whatever the world. Imports a plugin never calls are dropped
//! by `wit-component`: a reader plugin does not import `signer`.

/// Every host interface and the plugin types, as imports.
pub mod imports {
    wit_bindgen::generate!({
        inline: "
            package bardo:sdk;
            world imports {
                import bardo:host/chain@0.1.0;
                import bardo:host/events@0.1.0;
                import bardo:host/config@0.1.0;
                import bardo:host/simulate@0.1.0;
                import bardo:host/signer@0.1.0;
                import bardo:plugin/types@0.1.0;
            }
        ",
        path: ["../wit/host", "../wit/plugin"],
        world: "bardo:sdk/imports",
        generate_all,
    });
}

/// The `reader` world: catalog + read, the exports of every plugin.
pub mod reader {
    wit_bindgen::generate!({
        path: ["../wit/host", "../wit/plugin"],
        world: "bardo:plugin/reader@0.1.0",
        with: {
            "bardo:host/types@0.1.0": crate::bindings::imports::bardo::host::types,
            "bardo:host/chain@0.1.0": crate::bindings::imports::bardo::host::chain,
            "bardo:host/events@0.1.0": crate::bindings::imports::bardo::host::events,
            "bardo:host/config@0.1.0": crate::bindings::imports::bardo::host::config,
            "bardo:plugin/types@0.1.0": crate::bindings::imports::bardo::plugin::types,
        },
        pub_export_macro: true,
        export_macro_name: "__export_reader",
    });
}

/// The write export that turns a reader into a `writer`.
pub mod write_part {
    wit_bindgen::generate!({
        inline: "
            package bardo:sdk-write;
            world write-part {
                import bardo:host/simulate@0.1.0;
                import bardo:host/signer@0.1.0;
                export bardo:plugin/write@0.1.0;
            }
        ",
        path: ["../wit/host", "../wit/plugin"],
        world: "bardo:sdk-write/write-part",
        with: {
            "bardo:host/types@0.1.0": crate::bindings::imports::bardo::host::types,
            "bardo:host/simulate@0.1.0": crate::bindings::imports::bardo::host::simulate,
            "bardo:host/signer@0.1.0": crate::bindings::imports::bardo::host::signer,
            "bardo:plugin/types@0.1.0": crate::bindings::imports::bardo::plugin::types,
        },
        pub_export_macro: true,
        export_macro_name: "__export_write_part",
    });
}

/// The stream export that turns a reader into a `streamer`.
pub mod stream_part {
    wit_bindgen::generate!({
        inline: "
            package bardo:sdk-stream;
            world stream-part {
                export bardo:plugin/%stream@0.1.0;
            }
        ",
        path: ["../wit/host", "../wit/plugin"],
        world: "bardo:sdk-stream/stream-part",
        with: {
            "bardo:host/types@0.1.0": crate::bindings::imports::bardo::host::types,
            "bardo:plugin/types@0.1.0": crate::bindings::imports::bardo::plugin::types,
        },
        pub_export_macro: true,
        export_macro_name: "__export_stream_part",
    });
}
