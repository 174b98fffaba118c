//! Integration tests: the built `basepress` binary run on temporary
//! projects. One test binary, several modules, to keep link time down.

mod support;

mod architecture;
mod bad_input;
mod build;
mod deploy;
mod docs;
mod download;
mod fuzz;
mod hostile;
mod image_checks;
mod incremental;
mod kustomize;
mod network;
mod oci;
mod races;
mod reports;
mod rules;
mod safety;
mod scaffold;
mod serve;
mod signing;
mod site;
mod versions;
mod writers;
