//! The TLS of the HTTP clients that oci-client and object_store build
//! (reqwest over rustls).
//!
//! They are compiled without a crypto provider of their own, so that the
//! binary carries one, ring, which ureq (`basepress verify`) already uses;
//! reqwest then takes rustls's process-wide default provider, which must be
//! installed before its first client is built, or it panics.

/// Makes ring rustls's default provider, unless one is installed already.
/// Call it before building an OCI or object store client; calling it again
/// does nothing.
pub fn install_provider() {
    // Err only when a provider is installed already, which is what we want.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_provider_is_installed_and_installing_again_keeps_it() {
        super::install_provider();
        let first = rustls::crypto::CryptoProvider::get_default().cloned();
        assert!(first.is_some());
        super::install_provider();
        let again = rustls::crypto::CryptoProvider::get_default().cloned();
        assert!(std::sync::Arc::ptr_eq(&first.unwrap(), &again.unwrap()));
    }
}
