//! Integration tests: the built `basepress` binary run on temporary
//! projects. One test binary, several modules, to keep link time down.

mod support;

mod bad_input;
mod build;
mod docs;
mod download;
mod fuzz;
mod incremental;
mod kustomize;
mod rules;
mod safety;
mod serve;
mod site;
