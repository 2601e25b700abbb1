//! The `echo` test plugin (see ../../echo/echo.rs).
include!("../../echo/echo.rs");

bardo_sdk::plugin! { name: "echo", read: [Version] }
