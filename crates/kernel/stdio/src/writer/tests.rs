use super::*;
use mcp_kernel_wire::ErrorObject;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime")
}

fn line(text: &str) -> Line {
    Line::whole(format!("{text}\n").into_bytes())
}

/// Offers `line` from a context whose wake-ups nobody waits for (the read loop's, in a test).
fn offer<W: AsyncWrite + Unpin + Send>(output: &Output<W>, line: Line, queue_empty: bool) -> Offer {
    output.offer(line, queue_empty, &mut Context::from_waker(Waker::noop()))
}

#[test]
fn writes_each_response_as_one_line_and_flushes() {
    let written = runtime().block_on(async {
        let (tx, rx) = mpsc::channel(4);
        let output = Arc::new(Output::new(Vec::new()));
        tx.send(Line::encode(&Response::result(json!(1), json!({})))).await.unwrap();
        tx.send(Line::encode(&Response::error(Value::Null, ErrorObject::parse_error()))).await.unwrap();
        drop(tx);
        write_lines(Arc::clone(&output), rx).await.expect("a vec accepts everything");
        std::mem::take(&mut output.lock().output)
    });
    let text = String::from_utf8(written).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    assert!(text.ends_with('\n'));
}

#[test]
fn an_answer_offered_with_nothing_queued_is_written_at_once() {
    let output = Output::new(Vec::new());
    assert!(matches!(offer(&output, line("first"), true), Offer::Taken));
    assert_eq!(output.lock().output, b"first\n");
    assert!(output.lock().held.is_empty());
}

#[test]
fn an_answer_offered_behind_a_queued_line_is_queued_too() {
    let output = Output::new(Vec::new());
    assert!(matches!(offer(&output, line("late"), false), Offer::Queue(_)));
    assert!(output.lock().output.is_empty(), "nothing may overtake a queued line");
}

#[test]
fn an_answer_offered_while_the_writer_holds_lines_waits_behind_them() {
    let output = Output::new(Vec::new());
    output.lock().hold(b"held\n".to_vec());
    assert!(matches!(offer(&output, line("late"), true), Offer::Queue(_)));
    assert!(output.lock().output.is_empty());
}

#[test]
fn a_line_the_output_took_in_part_is_finished_before_anything_queued_after_it() {
    let read = runtime().block_on(async {
        // Room for 8 bytes at a time: the offered line is torn unless the rest is held and written first.
        let (writing, mut reading) = tokio::io::duplex(8);
        let output = Arc::new(Output::new(writing));
        let (tx, rx) = mpsc::channel(4);
        let first = "a line longer than the pipe's room";
        assert!(matches!(offer(&output, line(first), true), Offer::Taken));
        tx.send(line("second")).await.unwrap();
        drop(tx);
        let writer = tokio::spawn(write_lines(Arc::clone(&output), rx));
        drop(output);
        let mut read = String::new();
        reading.read_to_string(&mut read).await.expect("read to the end");
        writer.await.expect("joined").expect("written");
        read
    });
    assert_eq!(read, "a line longer than the pipe's room\nsecond\n");
}

/// An output that refuses every write.
struct Broken;

impl AsyncWrite for Broken {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, _: &[u8]) -> Poll<io::Result<usize>> {
        Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[test]
fn an_output_error_the_read_loop_met_ends_the_writer_with_it() {
    let ended = runtime().block_on(async {
        let output = Arc::new(Output::new(Broken));
        let (tx, rx) = mpsc::channel::<Line>(4);
        let writer = tokio::spawn(write_lines(Arc::clone(&output), rx));
        tokio::task::yield_now().await;
        assert!(matches!(offer(&output, line("lost"), true), Offer::Failed));
        let ended = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
        drop(tx);
        ended.expect("the writer was woken").expect("joined")
    });
    assert_eq!(ended.expect_err("the read loop's error").kind(), io::ErrorKind::BrokenPipe);
}

#[test]
fn an_output_that_failed_is_never_written_again() {
    let output = Arc::new(Output::new(Broken));
    let runtime = runtime();
    let ended = runtime.block_on(async {
        let (tx, rx) = mpsc::channel::<Line>(4);
        tx.send(line("refused")).await.unwrap();
        let ended = write_lines(Arc::clone(&output), rx).await;
        drop(tx);
        ended
    });
    assert!(ended.is_err(), "the writer met the error");
    assert!(matches!(offer(&output, line("later"), true), Offer::Failed), "the loop is told, not let write");
}

#[test]
fn held_answers_leave_together_in_order_and_a_long_line_is_never_copied_behind_them() {
    let mut gathered = Gathered::default();
    assert!(gathered.take().is_none(), "nothing held");
    for n in 0..BATCH {
        assert!(gathered.keep(line(&format!("a{n}"))).is_ok(), "room for {BATCH} answers");
    }
    let refused = gathered.keep(line("over")).expect_err("the batch is full");
    let joined = gathered.then(refused).expect("a short line joins the batch");
    let text = String::from_utf8(joined.into_bytes()).expect("UTF-8");
    let expected: String = (0..BATCH).map(|n| format!("a{n}\n")).chain(["over\n".to_owned()]).collect();
    assert_eq!(text, expected, "every line whole, in order");
    assert!(gathered.take().is_none(), "nothing held after a write");

    gathered.keep(line("held")).expect("room");
    let long = Line::whole(vec![b'x'; GATHER + 1]);
    let (held, long) = gathered.then(long).expect_err("a long line goes on its own");
    assert_eq!(held.into_bytes(), b"held\n");
    assert_eq!(long.into_bytes().len(), GATHER + 1);
}

/// An answer of `echo` whose result was encoded with room behind it (as `ToolResult::encode`'s guess
/// leaves), `text_bytes` of text.
fn large_answer(text_bytes: usize, room: usize) -> (Response, *const u8) {
    let result =
        json!({"content": [{"type": "text", "text": "é\"".repeat(text_bytes / 3)}], "isError": false});
    let exact = serde_json::to_vec(&result).unwrap().len();
    let encoded = mcp_kernel_wire::Encoded::to_json(&result, exact + room).unwrap();
    let at = encoded.get().as_ptr();
    (Response::encoded(json!("call-7"), encoded), at)
}

#[test]
fn a_large_answer_is_written_from_its_result_buffer_and_is_the_same_line() {
    let (response, at) = large_answer(COPY_BELOW * 2, 16);
    let expected = [response.to_bytes(), b"\n".to_vec()].concat();
    let line = Line::answer(response);
    assert!(!line.first.starts_with(b"{\"content\""), "the envelope's head comes first");
    assert_eq!(line.rest.as_ptr(), at, "the result is not copied");
    assert!(line.rest.ends_with(b"}\n"), "the envelope's end and the newline go behind it");
    assert_eq!(line.into_bytes(), expected);
}

#[test]
fn a_large_answer_with_no_room_behind_its_result_is_one_buffer() {
    let (response, _) = large_answer(COPY_BELOW * 2, 0);
    let expected = [response.to_bytes(), b"\n".to_vec()].concat();
    let line = Line::answer(response);
    assert!(line.rest.is_empty());
    assert_eq!(line.into_bytes(), expected);
    let small = Response::result(json!(1), json!({"a": 1}));
    let expected = [small.to_bytes(), b"\n".to_vec()].concat();
    let line = Line::answer(small);
    assert!(line.rest.is_empty(), "a small answer is one buffer");
    assert_eq!(line.into_bytes(), expected);
}

/// An output that takes at most `room` bytes a write, vectored (or, unless `vectored`, one buffer a
/// write, as tokio's blocking stdout), and counts its writes and where each buffer it took began.
struct Counted {
    written: Vec<u8>,
    writes: usize,
    room: usize,
    vectored: bool,
    starts: Vec<usize>,
}

impl Counted {
    fn new(room: usize, vectored: bool) -> Self {
        Self { written: Vec::new(), writes: 0, room, vectored, starts: Vec::new() }
    }
}

impl AsyncWrite for Counted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.as_mut().poll_write_vectored(cx, &[IoSlice::new(buf)])
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.writes += 1;
        let mut taken = 0;
        let bufs = if self.vectored { bufs } else { &bufs[..bufs.len().min(1)] };
        for buf in bufs {
            let n = buf.len().min(self.room - taken);
            self.starts.push(buf.as_ptr() as usize);
            self.written.extend_from_slice(&buf[..n]);
            taken += n;
        }
        Poll::Ready(Ok(taken))
    }
    fn is_write_vectored(&self) -> bool {
        self.vectored
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[test]
fn a_large_answer_offered_with_nothing_queued_is_one_write() {
    let (response, _) = large_answer(COPY_BELOW * 2, 16);
    let expected = [response.to_bytes(), b"\n".to_vec()].concat();
    let output = Output::new(Counted::new(usize::MAX, true));
    assert!(matches!(offer(&output, Line::answer(response), true), Offer::Taken));
    let state = output.lock();
    assert_eq!(state.output.writes, 1, "the head and the result in one vectored write");
    assert_eq!(state.output.written, expected);
}

#[test]
fn a_large_answer_taken_in_part_is_finished_before_anything_queued_after_it() {
    let (response, _) = large_answer(COPY_BELOW * 2, 16);
    let first = [response.to_bytes(), b"\n".to_vec()].concat();
    let (second, _) = large_answer(COPY_BELOW * 3, 16);
    let second_bytes = [second.to_bytes(), b"\n".to_vec()].concat();
    let written = runtime().block_on(async {
        // 7 bytes a write: the offered line is cut inside its head, then inside its result, and the
        // queued one after it the same way.
        let output = Arc::new(Output::new(Counted::new(7, true)));
        assert!(matches!(offer(&output, Line::answer(response), true), Offer::Taken));
        let (tx, rx) = mpsc::channel(4);
        tx.send(Line::answer(second)).await.unwrap();
        tx.send(line("third")).await.unwrap();
        drop(tx);
        write_lines(Arc::clone(&output), rx).await.expect("written");
        std::mem::take(&mut output.lock().output.written)
    });
    assert_eq!(written, [first, second_bytes, b"third\n".to_vec()].concat(), "every line whole, in order");
}

#[test]
fn the_writer_task_writes_a_queued_large_answer_from_its_buffer_in_one_write() {
    let (response, at) = large_answer(COPY_BELOW * 2, 16);
    let expected = [b"first\n".to_vec(), response.to_bytes(), b"\n".to_vec()].concat();
    let output = runtime().block_on(async {
        let output = Arc::new(Output::new(Counted::new(usize::MAX, true)));
        let (tx, rx) = mpsc::channel(4);
        tx.send(line("first")).await.unwrap();
        tx.send(Line::answer(response)).await.unwrap();
        drop(tx);
        write_lines(Arc::clone(&output), rx).await.expect("written");
        let mut state = output.lock();
        std::mem::replace(&mut state.output, Counted::new(0, true))
    });
    assert_eq!(output.written, expected);
    assert_eq!(output.writes, 1, "the short line, the head and the result in one vectored write");
    assert!(output.starts.contains(&(at as usize)), "the result went out from its own buffer, uncopied");
}

#[test]
fn a_short_line_queued_behind_a_large_answer_does_not_grow_its_result_buffer() {
    let (response, at) = large_answer(COPY_BELOW * 2, 16);
    let expected = [response.to_bytes(), b"\n".to_vec(), b"after\n".to_vec()].concat();
    let output = runtime().block_on(async {
        let output = Arc::new(Output::new(Counted::new(usize::MAX, true)));
        let (tx, rx) = mpsc::channel(4);
        tx.send(Line::answer(response)).await.unwrap();
        tx.send(line("after")).await.unwrap();
        drop(tx);
        write_lines(Arc::clone(&output), rx).await.expect("written");
        let mut state = output.lock();
        std::mem::replace(&mut state.output, Counted::new(0, true))
    });
    assert_eq!(output.written, expected);
    assert_eq!(output.writes, 1, "the head, the result and the short line in one vectored write");
    assert_eq!(output.starts.len(), 3, "three buffers: the short line was not appended to the result's");
    assert!(output.starts.contains(&(at as usize)), "the result went out from its own buffer");
}

#[test]
fn an_output_of_one_buffer_a_write_gets_a_large_answer_joined() {
    let (response, _) = large_answer(COPY_BELOW * 2, 16);
    let expected = [response.to_bytes(), b"\n".to_vec()].concat();
    let (queued, _) = large_answer(COPY_BELOW * 2, 16);
    let queued_bytes = [queued.to_bytes(), b"\n".to_vec()].concat();
    let output = runtime().block_on(async {
        let output = Arc::new(Output::new(Counted::new(usize::MAX, false)));
        assert!(matches!(offer(&output, Line::answer(response), true), Offer::Taken));
        assert_eq!(output.lock().output.writes, 1, "offered: one write of the whole line");
        let (tx, rx) = mpsc::channel(4);
        tx.send(Line::answer(queued)).await.unwrap();
        drop(tx);
        write_lines(Arc::clone(&output), rx).await.expect("written");
        let mut state = output.lock();
        std::mem::replace(&mut state.output, Counted::new(0, false))
    });
    assert_eq!(output.writes, 2, "queued: one write of the whole line too");
    assert_eq!(output.written, [expected, queued_bytes].concat());
}
