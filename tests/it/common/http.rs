//! A small HTTP/1.1 client over a raw TCP connection, for the tests that call the
//! service's HTTP side (PDN routes, grpc-web, CORS) as a relay tool or a browser would:
//! one request per connection (`connection: close`), chunked bodies decoded.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response: status, headers (names in lower case) and the decoded body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The first header of that name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("a UTF-8 body")
    }
}

/// Sends `method path` with `headers` and `body`, reads the whole response (within 10 s).
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut conn = open(addr, method, path, headers, body).await;
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut raw))
        .await
        .expect("the whole response within 10 s")
        .expect("read");
    parse(&raw).expect("a complete response")
}

/// `GET path` with `headers`.
pub async fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Reply {
    request(addr, "GET", path, headers, b"").await
}

/// Opens a connection and sends the request; the caller reads the response as it comes
/// (a long-lived stream) and parses what it has with [`parse`].
pub async fn open(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> TcpStream {
    let mut conn = TcpStream::connect(addr).await.expect("connect");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes()).await.expect("write");
    conn.write_all(body).await.expect("write");
    conn
}

/// Parses a response read so far: `None` while its head is incomplete. The body is what
/// has arrived of it, chunks decoded (an incomplete last chunk as far as it goes).
pub fn parse(raw: &[u8]) -> Option<Reply> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).expect("an ASCII head");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()?
        .split(' ')
        .nth(1)?
        .parse()
        .expect("a status code");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &raw[end + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Some(Reply {
        status,
        headers,
        body,
    })
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = raw.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&raw[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok());
        let Some(size) = size else { break };
        raw = &raw[eol + 2..];
        if size == 0 {
            break;
        }
        let n = size.min(raw.len());
        out.extend_from_slice(&raw[..n]);
        if n < size {
            break;
        }
        raw = raw.get(size + 2..).unwrap_or(&[]);
    }
    out
}

/// Whether a chunked response has ended (its last, empty chunk arrived).
pub fn ended(raw: &[u8]) -> bool {
    raw.ends_with(b"\r\n0\r\n\r\n")
}
