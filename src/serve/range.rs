//! Byte ranges (RFC 9110, 14): `Range: bytes=…` on a file answers `206
//! Partial Content` with the part asked for, as static hosts do, so that
//! `curl -C -` resumes and media players seek. One range per request; a
//! request for several gets the whole file (which RFC 9110 allows).

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

/// A satisfiable range: first and last byte, inclusive.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct ByteRange {
    pub first: u64,
    pub last: u64,
}

/// What a `Range` header asks of a file of `len` bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Asked {
    /// The whole file: no range, one that is not `bytes=`, several ranges,
    /// or a header that does not parse (RFC 9110 says to ignore those).
    Whole,
    Part(ByteRange),
    /// A range past the end: `416 Range Not Satisfiable`.
    Unsatisfiable,
}

/// Parses `bytes=first-last`, `bytes=first-` and `bytes=-suffix`.
pub fn parse(value: &str, len: u64) -> Asked {
    let Some(spec) = value.trim().strip_prefix("bytes=") else {
        return Asked::Whole;
    };
    if spec.contains(',') {
        return Asked::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Asked::Whole;
    };
    let number = |s: &str| -> Option<u64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            s.parse().ok()
        }
    };
    match (first.trim(), last.trim()) {
        ("", suffix) => match number(suffix) {
            Some(0) => Asked::Unsatisfiable,
            Some(_) if len == 0 => Asked::Unsatisfiable,
            Some(n) => Asked::Part(ByteRange {
                first: len.saturating_sub(n),
                last: len - 1,
            }),
            None => Asked::Whole,
        },
        (first, "") => match number(first) {
            Some(f) if f < len => Asked::Part(ByteRange {
                first: f,
                last: len - 1,
            }),
            Some(_) => Asked::Unsatisfiable,
            None => Asked::Whole,
        },
        (first, last) => match (number(first), number(last)) {
            (Some(f), Some(l)) if f > l => Asked::Whole,
            (Some(f), Some(_)) if f >= len => Asked::Unsatisfiable,
            (Some(f), Some(l)) => Asked::Part(ByteRange {
                first: f,
                last: l.min(len - 1),
            }),
            _ => Asked::Whole,
        },
    }
}

/// Whether `If-Range` lets the range apply: it must be the file's strong
/// ETag (a date is never one this server sent, so the whole file goes).
fn if_range_holds(request: &HeaderMap, response: &HeaderMap) -> bool {
    let Some(wanted) = request.get(header::IF_RANGE) else {
        return true;
    };
    match (
        wanted.to_str(),
        response.get(header::ETAG).map(|e| e.to_str()),
    ) {
        (Ok(w), Some(Ok(etag))) => !w.starts_with("W/") && w.trim() == etag,
        _ => false,
    }
}

/// Middleware: on a `200` file answer, says `Accept-Ranges: bytes` and,
/// for a `GET` with a `Range`, answers the part (`206`) or `416`.
pub async fn ranges(request: Request, next: Next) -> Response {
    let get = request.method() == Method::GET;
    let asked = request.headers().get(header::RANGE).cloned();
    let request_headers = request.headers().clone();
    let response = next.run(request).await;
    if response.status() != StatusCode::OK || is_stream(response.headers()) {
        return response;
    }
    let Some(len) = content_length(response.headers()) else {
        return response;
    };
    let (mut parts, body) = response.into_parts();
    parts
        .headers
        .insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    let asked = match asked.as_ref().and_then(|v| v.to_str().ok()) {
        Some(v) if get && if_range_holds(&request_headers, &parts.headers) => parse(v, len),
        _ => Asked::Whole,
    };
    match asked {
        Asked::Whole => Response::from_parts(parts, body),
        Asked::Unsatisfiable => {
            parts.status = StatusCode::RANGE_NOT_SATISFIABLE;
            set(
                &mut parts.headers,
                header::CONTENT_RANGE,
                format!("bytes */{len}"),
            );
            set(&mut parts.headers, header::CONTENT_LENGTH, "0".to_string());
            parts.headers.remove(header::CONTENT_TYPE);
            Response::from_parts(parts, Body::empty())
        }
        Asked::Part(r) => {
            // Files are served from memory: the whole body is at hand.
            let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
                let mut broken = Response::new(Body::empty());
                *broken.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                return broken;
            };
            if bytes.len() as u64 != len {
                // The length header was not the body's: send the body as is.
                return Response::from_parts(parts, Body::from(bytes));
            }
            let part: Bytes = bytes.slice(r.first as usize..=r.last as usize);
            parts.status = StatusCode::PARTIAL_CONTENT;
            set(
                &mut parts.headers,
                header::CONTENT_RANGE,
                format!("bytes {}-{}/{len}", r.first, r.last),
            );
            set(
                &mut parts.headers,
                header::CONTENT_LENGTH,
                part.len().to_string(),
            );
            Response::from_parts(parts, Body::from(part))
        }
    }
}

fn set(headers: &mut HeaderMap, name: header::HeaderName, value: String) {
    if let Ok(v) = HeaderValue::from_str(&value) {
        headers.insert(name, v);
    }
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

fn is_stream(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(first: u64, last: u64) -> Asked {
        Asked::Part(ByteRange { first, last })
    }

    #[test]
    fn ranges_parse_as_rfc_9110_says() {
        assert_eq!(parse("bytes=0-9", 100), part(0, 9));
        assert_eq!(parse("bytes=90-", 100), part(90, 99));
        assert_eq!(parse("bytes=-10", 100), part(90, 99));
        assert_eq!(parse("bytes=-1000", 100), part(0, 99));
        assert_eq!(parse("bytes=50-1000", 100), part(50, 99));
        assert_eq!(parse("bytes=99-99", 100), part(99, 99));
        assert_eq!(parse("bytes=100-", 100), Asked::Unsatisfiable);
        assert_eq!(parse("bytes=100-200", 100), Asked::Unsatisfiable);
        assert_eq!(parse("bytes=-0", 100), Asked::Unsatisfiable);
        assert_eq!(parse("bytes=0-", 0), Asked::Unsatisfiable);
        assert_eq!(parse("bytes=-5", 0), Asked::Unsatisfiable);
        for whole in [
            "bytes=0-1,5-6",
            "items=0-1",
            "bytes=9-1",
            "bytes=a-b",
            "bytes=",
            "bytes=-",
            "bytes=+1-2",
            "bytes=18446744073709551616-",
        ] {
            assert_eq!(parse(whole, 100), Asked::Whole, "{whole}");
        }
    }
}
