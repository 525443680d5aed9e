// Package mcpserve serves hostlink's operation registry over the Model
// Context Protocol, on stdio and on Streamable HTTP, with the official Go
// SDK. It is a thin adapter: each registry operation becomes one tool with
// the operation's schemas and annotations, and every call goes through
// ops.Registry.Call, where validation, policy and audit happen.
package mcpserve
