//! A valid component that exports no `bardo:plugin/catalog`: the host must refuse to load it.

/// Exported as a plain core function; the component exports no interface at all.
#[unsafe(no_mangle)]
pub extern "C" fn not_a_plugin() -> u32 {
    42
}
