//! The object store client for a target, built with the `object_store`
//! crate: S3 (and S3-compatible servers) from the AWS settings, Google
//! Cloud Storage and Azure Blob Storage from their own variables. Requests
//! time out, and failed ones are retried a few times with backoff.

use super::aws;
use super::target::{Scheme, Target};
use super::{Environment, Options};
use crate::diagnostics::{rule, Diagnostic};
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};
use std::sync::Arc;
use std::time::Duration;

/// A client for `target`, and a line saying where its credentials come
/// from.
pub fn open(
    target: &Target,
    options: &Options,
) -> Result<(Arc<dyn ObjectStore>, String), Diagnostic> {
    crate::tls::install_provider();
    // No proxy, whatever HTTP_PROXY or HTTPS_PROXY say: the HTTP client
    // would otherwise read them from the process's environment (which only
    // the command line reads) and send plain HTTP to a loopback endpoint
    // through another host. A proxy that every host and address is
    // excluded from turns its lookup of the system's off.
    let client = ClientOptions::new()
        .with_timeout(options.timeout)
        .with_connect_timeout(options.timeout.min(Duration::from_secs(10)))
        .with_proxy_url("http://127.0.0.1:9")
        .with_proxy_excludes("*,0.0.0.0/0,::/0");
    let retry = RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: options.retries,
        retry_timeout: options.timeout * 2,
    };
    let failed = |e: object_store::Error| {
        Diagnostic::new(
            rule::STORE_CONFIG_INVALID,
            format!(
                "cannot set up the client for {target}: {}",
                super::chain(&e)
            ),
        )
    };
    match target.scheme {
        Scheme::S3 => {
            let s = aws::settings(&options.environment, options.profile.as_deref())?;
            let mut b = object_store::aws::AmazonS3Builder::new()
                .with_bucket_name(&target.bucket)
                .with_region(&s.region)
                .with_retry(retry)
                .with_client_options(client.with_allow_http(s.allow_http));
            if let (Some(id), Some(secret)) = (&s.access_key_id, &s.secret_access_key) {
                b = b.with_access_key_id(id).with_secret_access_key(secret);
            }
            if let Some(token) = &s.session_token {
                b = b.with_token(token);
            }
            if let Some(endpoint) = &s.endpoint {
                b = b.with_endpoint(endpoint);
            }
            for (key, value) in &s.ambient {
                if let Ok(key) = key.parse() {
                    b = b.with_config(key, value);
                }
            }
            let store = b.build().map_err(failed)?;
            let from = match &s.endpoint {
                Some(e) => format!("{} at {e}, region {}", s.source, s.region),
                None => format!("{}, region {}", s.source, s.region),
            };
            Ok((Arc::new(store), from))
        }
        Scheme::Gcs => {
            let mut b = object_store::gcp::GoogleCloudStorageBuilder::new()
                .with_bucket_name(&target.bucket)
                .with_retry(retry)
                .with_client_options(client);
            for (key, value) in passed(&options.environment, "GOOGLE_") {
                if let Ok(key) = key.parse() {
                    b = b.with_config(key, value);
                }
            }
            let store = b.build().map_err(failed)?;
            Ok((Arc::new(store), "the GOOGLE_* variables".into()))
        }
        Scheme::Azure => {
            let mut b = object_store::azure::MicrosoftAzureBuilder::new()
                .with_container_name(&target.bucket)
                .with_retry(retry)
                .with_client_options(client);
            for (key, value) in passed(&options.environment, "AZURE_") {
                if let Ok(key) = key.parse() {
                    b = b.with_config(key, value);
                }
            }
            let store = b.build().map_err(failed)?;
            Ok((Arc::new(store), "the AZURE_* variables".into()))
        }
    }
}

/// The variables with `prefix`, as the client's configuration keys
/// (lowercase), leaving out the client settings that would lower its
/// guard (plain HTTP, invalid certificates, proxies): those are not for
/// the environment to decide.
fn passed<'a>(env: &'a Environment, prefix: &str) -> Vec<(String, &'a str)> {
    env.vars
        .iter()
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str()))
        .filter(|(k, _)| {
            !["allow_http", "allow_invalid", "proxy", "use_emulator"]
                .iter()
                .any(|w| k.contains(w))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_https_client_opens() {
        // reqwest has no crypto provider of its own: without the one
        // `open` installs, building its client panics.
        let mut options = Options::new("s3://bucket/docs", "site");
        options.environment.vars = [
            ("AWS_REGION", "eu-west-1"),
            ("AWS_ACCESS_KEY_ID", "id"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let target = Target::parse(&options.target).expect("a target");
        let opened = open(&target, &options);
        assert!(opened.is_ok(), "{:?}", opened.err());
    }

    #[test]
    fn client_settings_from_the_environment_cannot_lower_the_guard() {
        let env = Environment {
            vars: [
                ("GOOGLE_SERVICE_ACCOUNT", "/k.json"),
                ("GOOGLE_ALLOW_HTTP", "true"),
                ("AZURE_STORAGE_ACCOUNT_NAME", "a"),
                ("AZURE_PROXY_URL", "http://evil"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            home: None,
        };
        assert_eq!(
            passed(&env, "GOOGLE_"),
            [("google_service_account".to_string(), "/k.json")]
        );
        assert_eq!(
            passed(&env, "AZURE_"),
            [("azure_storage_account_name".to_string(), "a")]
        );
    }
}
