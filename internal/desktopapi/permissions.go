package desktopapi

// Permission states, as the wire protocol names them.
const (
	Granted       = "granted"
	Denied        = "denied"
	PermUnknown   = "unknown"
	NotApplicable = "not_applicable"
)

// PermissionsArgs is computer_permissions' request.
type PermissionsArgs struct {
	Desktop     string   `json:"desktop,omitempty"`
	Permissions []string `json:"permissions,omitempty" jsonschema:"screen_recording, accessibility, input_monitoring; all three when omitted"`
}

// PermissionsResult is computer_permissions' response.
type PermissionsResult struct {
	Permissions map[string]string `json:"permissions" jsonschema:"granted, denied, unknown or not_applicable per permission"`
}
