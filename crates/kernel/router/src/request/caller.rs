//! Reaching the caller in one call: [`RequestContext::caller`] and its error, [`NoCaller`].
//!
//! A tool, a resource reader and a prompt renderer return different errors, so one `?` serves all
//! three: `NoCaller` converts into each. What it says never depends on the request (no type name, no
//! value), and a reader's or renderer's `NoCaller` is answered exactly as a uri or prompt that is not
//! listed, so a request without a caller learns nothing about what the item holds.
//!
//! [`RequestContext::caller`]: crate::RequestContext::caller

use crate::contract::ToolError;
use crate::request::reader_error::ReaderError;

/// The one text every `NoCaller` carries: it names no type and echoes nothing of the request.
pub(crate) const NO_CALLER: &str = "the request carries no caller";

/// The request carries no caller of the type asked for ([`crate::RequestContext::caller`]).
///
/// Converts into a [`ToolError`] (a tool result with `isError: true` and a fixed text) and into a
/// [`ReaderError`] that `resources/read` answers exactly as a uri that is not listed and
/// `prompts/get` exactly as an unknown prompt (a completer's is a refusal with the fixed text).
///
/// ```
/// use mcp_kernel_router::{ToolCall, ToolError, ToolOutput};
///
/// #[derive(Clone)]
/// struct User(String);
///
/// async fn whoami(call: ToolCall) -> Result<ToolOutput, ToolError> {
///     let user = call.context.caller::<User>()?;
///     Ok(ToolOutput::text(user.0.clone()))
/// }
/// # let _ = whoami;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the request carries no caller")]
pub struct NoCaller;

impl From<NoCaller> for ToolError {
    fn from(_: NoCaller) -> Self {
        ToolError::new(NO_CALLER)
    }
}

impl From<NoCaller> for ReaderError {
    fn from(_: NoCaller) -> Self {
        ReaderError::unlisted(NO_CALLER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_caller_says_the_same_fixed_text_everywhere() {
        assert_eq!(NoCaller.to_string(), NO_CALLER);
        assert_eq!(ToolError::from(NoCaller).reason(), NO_CALLER);
        let reader = ReaderError::from(NoCaller);
        assert_eq!(reader.reason(), NO_CALLER);
        assert!(reader.answers_as_unlisted());
        assert!(!ReaderError::new(NO_CALLER).answers_as_unlisted(), "only a NoCaller is answered unlisted");
    }
}
