//! The `echo` test plugin with a breaking params change (see ../../echo/echo_next.rs).
include!("../../echo/echo_next.rs");

bardo_sdk::plugin! { name: "echo", read: [Version] }
