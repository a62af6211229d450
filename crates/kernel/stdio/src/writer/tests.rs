use super::*;
use mcp_kernel_wire::ErrorObject;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime")
}

fn line(text: &str) -> Line {
    Line(format!("{text}\n").into_bytes())
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
    let long = Line(vec![b'x'; GATHER + 1]);
    let (held, long) = gathered.then(long).expect_err("a long line goes on its own");
    assert_eq!(held.into_bytes(), b"held\n");
    assert_eq!(long.into_bytes().len(), GATHER + 1);
}
