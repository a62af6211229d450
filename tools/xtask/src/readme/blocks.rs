//! The blocks the README and the manual mark for the checks: the HTML comment before a fenced block,
//! the block's body, and its lines as compared. Both the exchanges (`mod.rs`) and the README's host
//! (`host.rs`) read their blocks here.

/// The HTML comment that marks `part` (`input`, `output`, `server`) of the exchange named `marker`.
pub fn mark(marker: &str, part: &str) -> String {
    format!("<!-- {marker}:{part} -->")
}

/// The body of the first fenced block after `mark`.
pub fn block_after<'a>(text: &'a str, mark: &str) -> Result<&'a str, String> {
    let start = text.find(mark).ok_or_else(|| format!("no {mark}"))?;
    let rest = &text[start + mark.len()..];
    let open = rest.find("```").ok_or("no fenced block after the marker")?;
    let rest = &rest[open..];
    let body_start = rest.find('\n').ok_or("unterminated fence")? + 1;
    let body = &rest[body_start..];
    let close = body.find("\n```").ok_or("unterminated fence")?;
    Ok(&body[..close + 1])
}

/// The non-empty lines of `text`, trailing blanks trimmed.
pub fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::trim_end).filter(|l| !l.is_empty()).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Doc\n\n<!-- ex:input -->\n```sh\necho hi\necho there\n```\n\ntext\n\n\
                       <!-- ex:output -->\n```json\n{\"id\":1}\n```\n";

    #[test]
    fn the_block_after_a_marker_is_its_fence_body_with_the_last_newline() {
        assert_eq!(block_after(DOC, &mark("ex", "input")).unwrap(), "echo hi\necho there\n");
        assert_eq!(block_after(DOC, &mark("ex", "output")).unwrap(), "{\"id\":1}\n");
    }

    #[test]
    fn a_missing_marker_or_an_unterminated_fence_is_an_error() {
        assert_eq!(block_after(DOC, "<!-- nope:input -->").unwrap_err(), "no <!-- nope:input -->");
        assert!(block_after("<!-- ex:input -->\n```sh\necho hi\n", "<!-- ex:input -->").is_err());
        assert!(block_after("<!-- ex:input -->\nno fence", "<!-- ex:input -->").is_err());
    }

    #[test]
    fn lines_drop_blank_lines_and_trailing_spaces() {
        assert_eq!(lines("401 x  \n\n{}\n"), ["401 x", "{}"]);
    }
}
