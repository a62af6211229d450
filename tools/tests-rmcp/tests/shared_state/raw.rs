//! Below rmcp: a raw `2026-07-28` request, whose HTTP status, `retry-after` and exact bytes a test
//! checks, and a raw RESP client that reads what the instances stored in Redis.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// The longest a raw request or a Redis command may take.
const DEADLINE: Duration = Duration::from_secs(15);

/// One raw answer.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The `retry-after` header, if any.
    pub retry_after: Option<String>,
    /// The body (for an SSE answer, nothing: the stream is dropped unread).
    pub body: String,
    /// From sending the request to its status line.
    pub took: Duration,
}

/// Posts `method` with `params` to `url` as a `2026-07-28` request declaring the tasks extension and
/// form elicitation, with `token` as its bearer token and the `Mcp-Name` its method wants (the tool's
/// name, the task's id).
pub async fn post(url: &str, token: &str, method: &str, params: Value) -> Answer {
    let name = match method {
        "tools/call" => params["name"].as_str().map(str::to_owned),
        "tasks/get" | "tasks/update" | "tasks/cancel" => params["taskId"].as_str().map(str::to_owned),
        _ => None,
    };
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let http = reqwest::Client::builder().no_proxy().timeout(DEADLINE).build().expect("reqwest client");
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("authorization", format!("Bearer {token}"))
        .body(body.to_string());
    if let Some(name) = &name {
        request = request.header("mcp-name", name);
    }
    let started = Instant::now();
    let response = request.send().await.unwrap_or_else(|error| panic!("POST {method}: {error}"));
    let took = started.elapsed();
    let status = response.status().as_u16();
    let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let retry_after = header("retry-after");
    let is_stream = header("content-type").is_some_and(|ct| ct.starts_with("text/event-stream"));
    let body = if is_stream { String::new() } else { response.text().await.unwrap_or_default() };
    Answer { status, retry_after, body, took }
}

/// One RESP reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `+…` or `-…` (an error is kept as text: the reads here only collect bytes).
    Line(String),
    /// `:…`.
    Int(i64),
    /// `$…` (`None`: the null bulk string).
    Bulk(Option<Vec<u8>>),
    /// `*…` (`None`: the null array).
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// Every byte string in the reply, flattened.
    fn bytes(&self, out: &mut Vec<Vec<u8>>) {
        match self {
            Reply::Line(line) => out.push(line.clone().into_bytes()),
            Reply::Int(n) => out.push(n.to_string().into_bytes()),
            Reply::Bulk(Some(bytes)) => out.push(bytes.clone()),
            Reply::Array(Some(items)) => items.iter().for_each(|item| item.bytes(out)),
            Reply::Bulk(None) | Reply::Array(None) => {}
        }
    }
}

/// A RESP2 connection to a Redis on 127.0.0.1.
pub struct Resp(BufReader<TcpStream>);

impl Resp {
    /// Connects to `port` and authenticates with `password`.
    pub async fn connect(port: u16, password: &str) -> Self {
        let stream = tokio::time::timeout(DEADLINE, TcpStream::connect(("127.0.0.1", port)))
            .await
            .expect("connect to redis within the deadline")
            .expect("connect to redis");
        let mut resp = Self(BufReader::new(stream));
        assert_eq!(resp.command(&["AUTH", password]).await, Reply::Line("OK".to_owned()));
        resp
    }

    /// Sends one command and reads its reply (bounded).
    pub async fn command(&mut self, args: &[&str]) -> Reply {
        let mut request = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            request.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            request.extend_from_slice(arg.as_bytes());
            request.extend_from_slice(b"\r\n");
        }
        let exchange = async {
            self.0.get_mut().write_all(&request).await?;
            read_reply(&mut self.0).await
        };
        match tokio::time::timeout(DEADLINE, exchange).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(error)) => panic!("redis {:?}: {error}", args.first()),
            Err(_) => panic!("redis {:?} timed out", args.first()),
        }
    }

    /// Every key under `prefix` and every byte stored under them, read by type (`GET`, `HGETALL`,
    /// `LRANGE`, `SMEMBERS`, `ZRANGE`, `XRANGE`): `(keys, the values' bytes)`.
    pub async fn dump(&mut self, prefix: &str) -> (Vec<String>, Vec<Vec<u8>>) {
        let pattern = format!("{prefix}*");
        let (mut keys, mut cursor) = (Vec::new(), "0".to_owned());
        for _ in 0..1000 {
            let reply = self.command(&["SCAN", &cursor, "MATCH", &pattern, "COUNT", "1000"]).await;
            let Reply::Array(Some(parts)) = reply else { panic!("SCAN answered {reply:?}") };
            let [Reply::Bulk(Some(next)), Reply::Array(Some(found))] = parts.as_slice() else {
                panic!("SCAN answered {parts:?}")
            };
            for key in found {
                let mut bytes = Vec::new();
                key.bytes(&mut bytes);
                keys.extend(bytes.into_iter().map(|k| String::from_utf8_lossy(&k).into_owned()));
            }
            cursor = String::from_utf8_lossy(next).into_owned();
            if cursor == "0" {
                break;
            }
        }
        let mut values = Vec::new();
        for key in &keys {
            let kind = match self.command(&["TYPE", key]).await {
                Reply::Line(kind) => kind,
                other => panic!("TYPE answered {other:?}"),
            };
            let reply = match kind.as_str() {
                "string" => self.command(&["GET", key]).await,
                "hash" => self.command(&["HGETALL", key]).await,
                "list" => self.command(&["LRANGE", key, "0", "-1"]).await,
                "set" => self.command(&["SMEMBERS", key]).await,
                "zset" => self.command(&["ZRANGE", key, "0", "-1", "WITHSCORES"]).await,
                "stream" => self.command(&["XRANGE", key, "-", "+"]).await,
                // Gone since the scan (expired).
                _ => continue,
            };
            reply.bytes(&mut values);
        }
        (keys, values)
    }
}

/// Reads one RESP2 reply.
fn read_reply(
    reader: &mut BufReader<TcpStream>,
) -> std::pin::Pin<Box<dyn Future<Output = std::io::Result<Reply>> + Send + '_>> {
    Box::pin(async move {
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 {
            return Err(std::io::Error::other("redis closed the connection"));
        }
        let line = line.trim_end_matches("\r\n");
        let (kind, rest) = line.split_at(line.len().min(1));
        let number = || rest.parse::<i64>().map_err(|_| std::io::Error::other(format!("bad RESP: {line}")));
        match kind {
            "+" | "-" => Ok(Reply::Line(rest.to_owned())),
            ":" => Ok(Reply::Int(number()?)),
            "$" => match usize::try_from(number()?) {
                Err(_) => Ok(Reply::Bulk(None)),
                Ok(length) if length > 64 << 20 => Err(std::io::Error::other("a bulk string over 64 MiB")),
                Ok(length) => {
                    let mut bytes = vec![0; length + 2];
                    reader.read_exact(&mut bytes).await?;
                    bytes.truncate(length);
                    Ok(Reply::Bulk(Some(bytes)))
                }
            },
            "*" => match usize::try_from(number()?) {
                Err(_) => Ok(Reply::Array(None)),
                Ok(count) => {
                    let mut items = Vec::with_capacity(count.min(1024));
                    for _ in 0..count {
                        items.push(read_reply(reader).await?);
                    }
                    Ok(Reply::Array(Some(items)))
                }
            },
            _ => Err(std::io::Error::other(format!("bad RESP: {line}"))),
        }
    })
}

/// Whether `needle` occurs in any of `haystacks`.
pub fn occurs(needle: &str, haystacks: &[Vec<u8>]) -> bool {
    haystacks.iter().any(|bytes| bytes.windows(needle.len()).any(|window| window == needle.as_bytes()))
}
