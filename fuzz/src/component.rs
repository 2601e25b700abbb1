//! Component loading (`Host::load_bytes`: compile, surface check, manifest) on what a registry
//! or a plugin directory could hold: arbitrary bytes behind a component's header,
//! `wasm-smith`-generated core modules wrapped in a component that instantiates them (their
//! start functions run at load: loops, traps, memory growth), and `wasm-smith`'s components.
//! Oracles: each is refused with a typed error or loaded — never a panic, and never a hang
//! (libFuzzer's `-timeout`; the host's fuel and epoch limits apply to the start function as to
//! any call).

use bardo_runtime::plugin::WasiPolicy;
use bardo_runtime::{Engine, Host, Limits, Services};
use std::sync::{Arc, Mutex, OnceLock};

fn host() -> &'static Mutex<Host> {
    static HOST: OnceLock<Mutex<Host>> = OnceLock::new();
    static RUNTIME: OnceLock<bardo_core::Runtime> = OnceLock::new();
    HOST.get_or_init(|| {
        let runtime = RUNTIME.get_or_init(|| bardo_core::Runtime::new().expect("runtime"));
        let engine = Engine::new(None).expect("engine");
        let profile = bardo_core::profile::Profile::parse("dev").expect("profile");
        let host = Host::new(
            engine,
            Arc::new(Services::empty(runtime)),
            profile,
            Limits::default(),
            WasiPolicy::default(),
        )
        .expect("host");
        Mutex::new(host)
    })
}

/// A component that instantiates `module` (a core module without imports) and exports nothing.
fn wrap(module: &[u8]) -> Vec<u8> {
    let mut component = wasm_encoder::Component::new();
    component.section(&wasm_encoder::RawSection {
        id: wasm_encoder::ComponentSectionId::CoreModule as u8,
        data: module,
    });
    let mut instances = wasm_encoder::InstanceSection::new();
    instances.instantiate(0, Vec::<(&str, wasm_encoder::ModuleArg)>::new());
    component.section(&instances);
    component.finish()
}

/// One input; panics when an oracle fails.
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else { return };
    let mut u = arbitrary::Unstructured::new(rest);
    let bytes = match mode % 3 {
        0 => {
            // The component header, then anything.
            let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
            bytes.extend_from_slice(rest);
            bytes
        }
        1 => {
            let config = wasm_smith::Config {
                max_imports: 0,
                max_funcs: 20,
                max_memory32_bytes: 1 << 26,
                ..Default::default()
            };
            let Ok(module) = wasm_smith::Module::new(config, &mut u) else { return };
            wrap(&module.to_bytes())
        }
        _ => {
            // A whole component: its imports, which the host does not provide, are refused.
            let Ok(component) = wasm_smith::Component::new(wasm_smith::Config::default(), &mut u) else {
                return;
            };
            component.to_bytes()
        }
    };
    let mut host = host().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // Refused with a typed error, or (with a manifest, which fuzzed bytes hardly have) loaded.
    let _ = host.load_bytes("fuzzed", &bytes);
}
