//! Serde types of every MCP message the server reads or writes, for both revisions.
//!
//! Conventions: field names are camelCase on the wire, `_meta` is [`Meta`], and every optional
//! field is omitted when `None` (never written as `null`). Fields that exist in one revision only
//! say so; results carry `resultType` on 2026-07-28 and none on 2025-11-25.

pub mod capabilities;
pub mod content;
pub mod envelope;
pub mod input;
pub mod meta;
pub mod method;
pub mod notifications;
pub mod prompt;
pub mod requests;
pub mod resource;
pub mod results;
pub mod sampling;
pub mod tool;

pub use capabilities::{
    ClientCapabilities, PromptsCapability, ResourcesCapability, ServerCapabilities, ToolsCapability,
};
pub use content::{
    AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, ImageContent, ResourceContents,
    ResourceLink, TextContent, TextResourceContents,
};
pub use envelope::{ErrorResponse, ResultResponse};
pub use input::{
    ElicitAction, ElicitFormMode, ElicitFormParams, ElicitRequestParams, ElicitResult, ElicitUrlMode,
    ElicitUrlParams, InputRequest, InputRequests, InputResponse, InputResponses, ListRootsParams,
    ListRootsResult, Root,
};
pub use meta::{Annotations, Icon, IconTheme, Implementation, JsonObject, Meta, Role};
pub use notifications::{
    CancelledNotificationParams, LoggingLevel, LoggingMessageNotificationParams, NotificationParams,
    ProgressNotificationParams, ResourceUpdatedNotificationParams, SubscriptionFilter,
    SubscriptionsAcknowledgedParams,
};
pub use prompt::{Prompt, PromptArgument, PromptMessage};
pub use requests::{
    CallToolParams, CompleteArgument, CompleteContext, CompleteParams, CompleteReference, DiscoverParams,
    GetPromptParams, InitializeParams, JsonRpcNotification, JsonRpcRequest, PaginatedParams, PromptReference,
    ReadResourceParams, ResourceTemplateReference, SetLevelParams, SubscribeParams,
    SubscriptionsListenParams,
};
pub use resource::{Resource, ResourceTemplate};
pub use results::{
    CacheScope, CallToolResult, CompleteResult, Completion, DiscoverResult, EmptyResult, GetPromptResult,
    InitializeResult, InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, ReadResourceResult, ResultType, SubscriptionsListenResult,
};
pub use sampling::{
    CreateMessageRequestParams, CreateMessageResult, IncludeContext, ModelHint, ModelPreferences,
    SamplingContent, SamplingContentBlock, SamplingMessage, ToolChoice, ToolChoiceMode, ToolResultContent,
    ToolUseContent,
};
pub use tool::{Tool, ToolAnnotations};
