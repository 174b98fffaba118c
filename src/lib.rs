//! basepress publishes a documentation site together with the versioned
//! Kustomize bases that the docs tell people to download, and refuses to
//! publish anything it cannot show to be true.
//!
//! The data flows through one module per stage: [`load`] reads the project
//! into a [`site::Site`], [`check`] reports findings, [`render`] turns the
//! site into files and [`write`] swaps them into place atomically.
//! [`pipeline`] wires the stages together; [`serve`] serves the rendered
//! site for preview and rebuilds it when the inputs change.

pub mod check;
pub mod config;
pub mod diagnostics;
pub mod images;
pub mod kustomize;
pub mod load;
pub mod lock;
pub mod oci;
pub mod pipeline;
pub mod render;
pub mod serve;
pub mod site;
pub mod write;
pub mod yaml;
