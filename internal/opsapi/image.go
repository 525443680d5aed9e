package opsapi

// Image is binary content that travels beside an operation's JSON result
// (MCP image content, binary chunks on the platform link), never inside
// its JSON text. Its bytes belong to the request: nothing keeps them once
// the transport has sent them.
type Image struct {
	MIMEType string // image/png or image/jpeg
	Data     []byte
}
