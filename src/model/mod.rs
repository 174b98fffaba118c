//! The plain data every stage passes on: the project as loaded ([`site`],
//! with its [`config`], [`images`] data, [`lock`] and [`i18n`] strings),
//! what the analysis of a page gives ([`document`]), where each thing
//! is published ([`layout`]) and what type each file is ([`media`]).
//! Nothing here reads files or knows a stage.

pub mod cache;
pub mod config;
pub mod document;
pub mod i18n;
pub mod images;
pub mod layout;
pub mod lock;
pub mod media;
pub mod packed;
pub mod site;
pub mod variables;

pub use site::{Asset, Base, BaseFile, Deployed, Page, Site};
