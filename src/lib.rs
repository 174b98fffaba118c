//! basepress publishes a documentation site together with the versioned
//! Kustomize bases that the docs tell people to download, and refuses to
//! publish anything it cannot show to be true.
//!
//! The data flows one way, a module per stage, each importing only the
//! ones before it:
//!
//! 1. [`model`]: the plain data every stage passes on (the site, its pages
//!    and bases, the image data, the lock, analysed documents, the output
//!    layout), on top of the libraries [`diagnostics`], [`input`] (the one
//!    reader of input files), [`yaml`], [`kustomize`], [`report`] (findings
//!    as text, JSON, GitHub, SARIF, JUnit) and [`signing`] (SSH signatures
//!    of the bases).
//! 2. [`load`] reads a project from disk into a [`model::Site`].
//! 3. [`analyze`] reads every page's Markdown into a document, claims every
//!    published path and resolves links.
//! 4. [`check`] runs the registry of checks and reports findings.
//! 5. [`render`] turns the checked project into the site's files.
//! 6. [`write`] puts them on disk, all or nothing.
//!
//! [`engine`] drives the stages for every command (`check`, `build`,
//! `release`) and holds them in memory for [`serve`], the preview server;
//! [`verify`] checks a published site as an installer would, and
//! [`deploy`] puts a built site into object storage.
//! [`scaffold`] writes a new project (`init`) or the next release's
//! starting point (`new-release`).
//! The command line (`src/main.rs`) sits on top.

pub mod diagnostics;
pub mod input;
pub mod kustomize;
pub mod report;
pub mod secrets;
pub mod signing;
pub mod tls;
pub mod yaml;

#[cfg(test)]
mod testing;

pub mod model;

pub mod oci;

pub mod load;

pub mod analyze;

pub mod check;

pub mod render;

pub mod write;

pub mod engine;
pub mod scaffold;
pub mod serve;
pub mod verify;

pub mod deploy;
