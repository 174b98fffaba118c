//! Which `Host` the preview server answers to.
//!
//! A page on any site can make a browser send requests to
//! `http://127.0.0.1:1111` with a name of its own that it points at this
//! machine (DNS rebinding); the browser then lets that page read the
//! answers, error pages and their findings included. The server answers
//! only requests whose `Host` is the address it listens on, `localhost`
//! when that address is a loopback one, or a name given with
//! `--allow-host`. It sends no CORS headers, so no other origin may read
//! it either.

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The authorities (`host:port`, lower case) requests may name.
#[derive(Debug, Clone)]
pub struct AllowedHosts {
    names: HashSet<String>,
}

impl AllowedHosts {
    /// For a server listening on `bound`. `interfaces` are the machine's
    /// addresses, which a server listening on every address (`0.0.0.0`,
    /// `::`) is reached by; `extra` are names given with `--allow-host`.
    /// Each name is allowed with the server's port or without one; a name
    /// given with a port of its own (`docs.internal:8443`, behind a
    /// proxy) is allowed as it is.
    pub fn new(bound: SocketAddr, interfaces: &[IpAddr], extra: &[String]) -> AllowedHosts {
        let port = bound.port();
        let mut names = HashSet::new();
        // A name without a port is the name of this server as well: a
        // page elsewhere cannot make a browser send one of these names,
        // with a port or without, which is what matters here.
        let mut add = |host: String| {
            names.insert(format!("{host}:{port}"));
            names.insert(host);
        };
        let ip = bound.ip();
        let mut addresses = vec![ip];
        if ip.is_unspecified() {
            addresses.extend(interfaces.iter().copied());
            addresses.push(IpAddr::from([127, 0, 0, 1]));
            if ip.is_ipv6() {
                addresses.push(IpAddr::from(std::net::Ipv6Addr::LOCALHOST));
            }
        }
        for a in &addresses {
            add(authority_host(*a));
        }
        if addresses.iter().any(|a| a.is_loopback()) {
            add("localhost".to_string());
        }
        for name in extra {
            let name = name.trim().to_ascii_lowercase();
            if name.is_empty() {
                continue;
            }
            if !has_port(&name) {
                names.insert(format!("{name}:{port}"));
            }
            names.insert(name);
        }
        AllowedHosts { names }
    }

    /// Whether a request naming `authority` (a `Host` value) is answered.
    pub fn allows(&self, authority: &str) -> bool {
        self.names.contains(&authority.to_ascii_lowercase())
    }
}

/// `ip` as the host part of an authority: IPv6 in brackets.
fn authority_host(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// Whether a name given with `--allow-host` carries a port
/// (`docs.internal:8443`, `[::1]:8443`).
fn has_port(name: &str) -> bool {
    match name.rsplit_once(':') {
        Some((host, port)) => {
            port.chars().all(|c| c.is_ascii_digit())
                && !port.is_empty()
                && (!host.contains(':') || host.ends_with(']'))
        }
        None => false,
    }
}

/// Why a request's target host is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum HostProblem {
    /// No `Host` header (HTTP/1.1 requires one) and no absolute URI.
    Missing,
    /// Two `Host` headers or more, or one that is not text.
    Ambiguous,
    /// A host this server does not answer to.
    Unknown,
}

/// The authority a request targets: the absolute URI's, when it has one
/// (RFC 9112, 3.2.2), otherwise its one `Host` header.
pub fn check(allowed: &AllowedHosts, request: &Request) -> Result<(), HostProblem> {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let first = hosts.next();
    if hosts.next().is_some() {
        return Err(HostProblem::Ambiguous);
    }
    let authority = match request.uri().authority() {
        Some(a) => a.as_str().to_string(),
        None => first
            .ok_or(HostProblem::Missing)?
            .to_str()
            .map_err(|_| HostProblem::Ambiguous)?
            .to_string(),
    };
    if allowed.allows(&authority) {
        Ok(())
    } else {
        Err(HostProblem::Unknown)
    }
}

/// Middleware: answers `400` for a missing or doubled `Host`, `421` for a
/// host the server does not answer to, before anything else runs.
pub async fn guard(
    State(allowed): State<Arc<AllowedHosts>>,
    request: Request,
    next: Next,
) -> Response {
    let (status, text) = match check(&allowed, &request) {
        Ok(()) => return next.run(request).await,
        Err(HostProblem::Missing) => (
            StatusCode::BAD_REQUEST,
            "a request needs a Host header\n",
        ),
        Err(HostProblem::Ambiguous) => (
            StatusCode::BAD_REQUEST,
            "a request needs exactly one Host header\n",
        ),
        // Nothing about the site, and not the host's name: the page that
        // sent this may read the answer.
        Err(HostProblem::Unknown) => (
            StatusCode::MISDIRECTED_REQUEST,
            "basepress serve answers only to the address it listens on and to the names given with --allow-host\n",
        ),
    };
    let mut response = (status, text).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;

    fn request(uri: &str, hosts: &[&str]) -> Request {
        let mut b = axum::http::Request::builder().uri(uri);
        for h in hosts {
            b = b.header(header::HOST, *h);
        }
        b.body(Body::empty()).unwrap()
    }

    #[test]
    fn loopback_answers_to_its_address_and_localhost() {
        let a = AllowedHosts::new("127.0.0.1:1111".parse().unwrap(), &[], &[]);
        for ok in [
            "127.0.0.1:1111",
            "localhost:1111",
            "LOCALHOST:1111",
            "localhost",
            "127.0.0.1",
        ] {
            assert!(a.allows(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:1111",
            "127.0.0.1:1112",
            "localhost:1112",
            "localhost.:1111",
            "127.0.0.2:1111",
            "",
        ] {
            assert!(!a.allows(bad), "{bad}");
        }
    }

    #[test]
    fn ipv6_and_every_interface() {
        let ifs: Vec<IpAddr> = vec!["192.168.1.7".parse().unwrap(), "fd00::7".parse().unwrap()];
        let a = AllowedHosts::new("[::]:8080".parse().unwrap(), &ifs, &[]);
        for ok in [
            "[::1]:8080",
            "127.0.0.1:8080",
            "localhost:8080",
            "192.168.1.7:8080",
            "[fd00::7]:8080",
        ] {
            assert!(a.allows(ok), "{ok}");
        }
        // The address as bound, as `curl http://[::]:8080/` sends it.
        assert!(a.allows("[::]:8080"));
        assert!(!a.allows("10.0.0.1:8080"));
        // A specific address beyond loopback: that address only.
        let a = AllowedHosts::new("192.168.1.7:8080".parse().unwrap(), &ifs, &[]);
        assert!(a.allows("192.168.1.7:8080"));
        assert!(!a.allows("localhost:8080"));
        assert!(!a.allows("127.0.0.1:8080"));
    }

    #[test]
    fn names_given_with_allow_host() {
        let extra = vec![
            "Docs.Internal".to_string(),
            "proxy.internal:8443".to_string(),
        ];
        let a = AllowedHosts::new("127.0.0.1:1111".parse().unwrap(), &[], &extra);
        for ok in ["docs.internal", "docs.internal:1111", "proxy.internal:8443"] {
            assert!(a.allows(ok), "{ok}");
        }
        assert!(!a.allows("proxy.internal:1111"));
        assert!(!a.allows("docs.internal:9999"));
        assert!(has_port("[::1]:8443") && !has_port("::1") && !has_port("docs"));
    }

    #[test]
    fn missing_doubled_and_absolute() {
        let a = AllowedHosts::new("127.0.0.1:1111".parse().unwrap(), &[], &[]);
        assert_eq!(check(&a, &request("/", &["localhost:1111"])), Ok(()));
        assert_eq!(check(&a, &request("/", &[])), Err(HostProblem::Missing));
        assert_eq!(
            check(&a, &request("/", &["localhost:1111", "localhost:1111"])),
            Err(HostProblem::Ambiguous)
        );
        assert_eq!(
            check(&a, &request("/", &["evil.example"])),
            Err(HostProblem::Unknown)
        );
        // The absolute URI's authority is the one that counts.
        assert_eq!(
            check(&a, &request("http://evil.example/", &["localhost:1111"])),
            Err(HostProblem::Unknown)
        );
        assert_eq!(
            check(&a, &request("http://localhost:1111/", &["evil.example"])),
            Ok(())
        );
    }
}
