//! Reading textual LLVM IR (`.ll`): the functions it defines and the calls each one makes.
//!
//! Only what the facts need is read: a line starting `define ` opens a function `@sym(`, a line `}`
//! closes it, and inside it every `call`, `tail call`, `musttail call`, `notail call`, `invoke` or
//! `callbr` instruction is a call. The callee is the first `@global` or `%register` operand followed
//! directly by `(`: a global is a direct call, a register an indirect one (fn pointer, `dyn` vtable
//! slot, boxed closure or future). Inline assembly is neither. Intrinsics are left to the caller.

/// One function defined in the IR, with its calls in IR order.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Function {
    /// The symbol after `@`, unquoted and unescaped.
    pub symbol: String,
    /// The call instructions of the body, in IR order.
    pub calls: Vec<Call>,
}

/// One call instruction.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Call {
    /// A call to `@symbol`.
    Direct(String),
    /// A call through a `%register`.
    Indirect,
}

/// The functions `text` defines, in the order it defines them.
pub(crate) fn functions(text: &str) -> Vec<Function> {
    let mut out = Vec::new();
    let mut current: Option<Function> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("define ") {
            if let Some(done) = current.take() {
                out.push(done);
            }
            current = rest
                .find('@')
                .and_then(|at| name(&rest[at + 1..]))
                .map(|(symbol, _)| Function { symbol, calls: Vec::new() });
            continue;
        }
        if line == "}" {
            if let Some(done) = current.take() {
                out.push(done);
            }
            continue;
        }
        if let Some(function) = current.as_mut()
            && let Some(call) = call(line)
        {
            function.calls.push(call);
        }
    }
    out.extend(current);
    out
}

/// The call a body line makes, if it is a call instruction.
fn call(line: &str) -> Option<Call> {
    let mut text = line.trim_start();
    if text.starts_with(';') {
        return None;
    }
    // `%result = call …`
    if text.starts_with('%')
        && let Some(eq) = text.find(" = ")
    {
        text = &text[eq + 3..];
    }
    let mut words = text.splitn(2, ' ');
    let mut word = words.next()?;
    let mut rest = words.next()?;
    if matches!(word, "tail" | "musttail" | "notail") {
        let mut words = rest.splitn(2, ' ');
        word = words.next()?;
        rest = words.next()?;
    }
    if !matches!(word, "call" | "invoke" | "callbr") {
        return None;
    }
    let (at, callee, _) = callee(rest)?;
    if rest[..at].split(' ').any(|w| w == "asm") {
        return None;
    }
    Some(match callee {
        Callee::Global(symbol) => Call::Direct(symbol),
        Callee::Register => Call::Indirect,
    })
}

/// What a call instruction calls.
enum Callee {
    /// `@symbol(`
    Global(String),
    /// `%register(`
    Register,
}

/// The first `@name(` or `%name(` in `text`: its position, what it is, and where its `(` is.
fn callee(text: &str) -> Option<(usize, Callee, usize)> {
    let mut from = 0;
    while let Some(offset) = text[from..].find(['@', '%']) {
        let at = from + offset;
        let sigil = text.as_bytes()[at];
        if let Some((symbol, len)) = name(&text[at + 1..]) {
            let after = at + 1 + len;
            if text[after..].starts_with('(') {
                let callee = if sigil == b'@' { Callee::Global(symbol) } else { Callee::Register };
                return Some((at, callee, after));
            }
            from = after;
        } else {
            from = at + 1;
        }
    }
    None
}

/// An LLVM identifier at the start of `text` (after its sigil): the unescaped name and the length it
/// took in `text`. Quoted names (`"…"`) are unescaped (`\22` → `"`, `\5C` → `\`).
fn name(text: &str) -> Option<(String, usize)> {
    if let Some(quoted) = text.strip_prefix('"') {
        let end = quoted.find('"')?;
        return Some((unescape(&quoted[..end]), end + 2));
    }
    let len = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '$' | '.' | '_' | '-')))
        .unwrap_or(text.len());
    (len > 0).then(|| (text[..len].to_owned(), len))
}

/// Decodes LLVM's `\XX` escapes in a quoted name (two hex digits; anything else stays as it is). The
/// scan is over bytes, so a name with raw UTF-8 or escaped UTF-8 (`caf\C3\A9`) decodes whole.
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && let Some(&[high, low]) = bytes.get(i + 1..i + 3)
            && let (Some(high), Some(low)) = (hex_digit(high), hex_digit(low))
        {
            out.push(high << 4 | low);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of an ASCII hex digit (`u8::from_str_radix` would also take a sign).
fn hex_digit(byte: u8) -> Option<u8> {
    char::from(byte).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    use super::{Call, Callee, Function, call, callee, functions, name, unescape};

    #[test]
    fn reads_direct_indirect_and_quoted_calls() {
        let ir = r#"; comment call @nothing()
@vtable = private constant <{ ptr }> <{ ptr @_RNvCs1_1a1f }>
define internal { i32, i1 } @_RNvCs1_1a3run(ptr %f) unnamed_addr #0 personality ptr @rust_eh_personality {
start:
; call a::f
  %_0 = call noundef range(i8 0, 2) i32 @_RNvCs1_1a1f(i32 %n) #4
  tail call void %f(ptr @global)
  %r = call %"core::fmt::Arguments<'_>" @"quoted\22sym"(ptr %x)
  %1 = invoke i32 %"reg.1"(i32 0)
          to label %bb1 unwind label %cleanup
  call void @llvm.memcpy.p0.p0.i64(ptr %a, ptr %b, i64 8, i1 false)
  call void asm sideeffect "nop", "~{memory}"()
  store ptr @_RNvCs1_1a1f, ptr %slot
}

define void @second() {
  musttail call void (ptr, ...) @printf(ptr %fmt)
  ret void
}
"#;
        assert_eq!(
            functions(ir),
            vec![
                Function {
                    symbol: "_RNvCs1_1a3run".to_owned(),
                    calls: vec![
                        Call::Direct("_RNvCs1_1a1f".to_owned()),
                        Call::Indirect,
                        Call::Direct("quoted\"sym".to_owned()),
                        Call::Indirect,
                        Call::Direct("llvm.memcpy.p0.p0.i64".to_owned()),
                    ],
                },
                Function { symbol: "second".to_owned(), calls: vec![Call::Direct("printf".to_owned())] },
            ]
        );
    }

    // Non-ASCII text (comments, quoted names, demangled names in comments): every scan must step over
    // whole characters.

    /// Real IR from `rustc -C symbol-mangling-version=v0` on `mod café { struct 日本; … }`: the comments
    /// carry the demangled, non-ASCII names.
    const NON_ASCII_IR: &str = "; <fx::caf\u{e9}::\u{65e5}\u{672c}>::run
define i32 @_RNvMNtCsfeZnyFoSiLL_2fxu7caf_dmaNtB2_u6wgv71a3run(ptr align 1 %self) unnamed_addr #0 {
start:
  ret i32 1
}

; fx::caf\u{e9}::run
define i32 @_RNvNtCsfeZnyFoSiLL_2fxu7caf_dma3run(ptr align 1 %f.0, ptr align 8 %f.1) unnamed_addr #0 {
start:
; call <fx::caf\u{e9}::\u{65e5}\u{672c}>::run
  %_2 = call i32 @_RNvMNtCsfeZnyFoSiLL_2fxu7caf_dmaNtB2_u6wgv71a3run(ptr align 1 inttoptr (i64 1 to ptr)) #2
  %_4 = call i32 %1(ptr align 1 %f.0, i32 2) #3
  %_5 = call i32 @\"\u{65e5}\u{672c}\"(ptr %\"caf\u{e9}\") ; caf\u{e9}
  %_6 = call i32 %\"\u{65e5}\"(i32 0)
  call void @\"caf\\C3\\A9\"()
  ret i32 %_4
}

define void @\"\u{65e5}\u{672c}\"() {
  call void @\"x\u{e9}\"(ptr @\"\u{e9}\")
  ret void
}
";

    #[test]
    fn reads_non_ascii_ir() {
        assert_eq!(
            functions(NON_ASCII_IR),
            vec![
                Function {
                    symbol: "_RNvMNtCsfeZnyFoSiLL_2fxu7caf_dmaNtB2_u6wgv71a3run".to_owned(),
                    calls: vec![]
                },
                Function {
                    symbol: "_RNvNtCsfeZnyFoSiLL_2fxu7caf_dma3run".to_owned(),
                    calls: vec![
                        Call::Direct("_RNvMNtCsfeZnyFoSiLL_2fxu7caf_dmaNtB2_u6wgv71a3run".to_owned()),
                        Call::Indirect,
                        Call::Direct("\u{65e5}\u{672c}".to_owned()),
                        Call::Indirect,
                        Call::Direct("caf\u{e9}".to_owned()),
                    ],
                },
                Function {
                    symbol: "\u{65e5}\u{672c}".to_owned(),
                    calls: vec![Call::Direct("x\u{e9}".to_owned())],
                },
            ]
        );
    }

    #[test]
    fn call_callee_name_and_unescape_take_non_ascii() {
        assert_eq!(call("; call caf\u{e9} @f()"), None);
        assert_eq!(call("  %\u{e9} = call i32 @f()"), Some(Call::Direct("f".to_owned())));
        assert_eq!(call("  call void %\"\u{65e5}\"()"), Some(Call::Indirect));
        assert_eq!(call("  \u{65e5}\u{672c} call @f()"), None);
        assert_eq!(call("  call void asm \"\u{e9}\", \"\"()"), None);
        let Some((at, Callee::Global(symbol), paren)) = callee("\u{e9} i32 @\"\u{65e5}\"(ptr %\u{e9})")
        else {
            panic!("a global callee")
        };
        assert_eq!((at, symbol.as_str(), paren), (7, "\u{65e5}", 13));
        assert!(callee("void %\u{e9}(i32 0)").is_none(), "an unquoted name is ASCII");
        assert!(callee("ptr @\u{e9}, @\u{65e5}").is_none());
        assert_eq!(name("\"caf\u{e9}\"("), Some(("caf\u{e9}".to_owned(), 7)));
        assert_eq!(name("f\u{e9}("), Some(("f".to_owned(), 1)));
        assert_eq!(name("\u{e9}"), None);
        assert_eq!(unescape("caf\\C3\\A9"), "caf\u{e9}");
        assert_eq!(unescape("\u{65e5}\\22\u{672c}\\5C"), "\u{65e5}\"\u{672c}\\");
        assert_eq!(
            unescape("\\\u{e9}\u{e9}"),
            "\\\u{e9}\u{e9}",
            "a backslash before a non-hex character stays"
        );
        assert_eq!(unescape("\\+1\\-1"), "\\+1\\-1", "a sign is not a hex digit");
        assert_eq!(unescape("\\4"), "\\4");
    }
}
