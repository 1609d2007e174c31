//! The Rust bindings of the WIT world `graphiti-plugin` (`wit/`), generated; the glue modules beside
//! this one use them.

wit_bindgen::generate!({
    world: "graphiti-plugin",
    path: "../wit",
    pub_export_macro: true,
});
