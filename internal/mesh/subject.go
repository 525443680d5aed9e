package mesh

import (
	"strings"

	"github.com/nats-io/nkeys"
)

// Subjects. An executor is addressed by its machine key (the public
// NKey of its NATS user), not by a name: the key is unique without
// coordination, it is what the machine's credentials are issued to, so
// that the bus's permissions and the subject say the same thing, and no
// two machines can claim one subject by choosing the same name. Names
// and labels are metadata for people and selectors.
const (
	// Version is the subject tree's version: a change of the request or
	// reply form gets a new one, and both can be served side by side.
	Version = "v1"
	// Prefix is the root of every executor's operation subjects.
	Prefix = "hl." + Version
	// ServiceName is the micro service every executor registers.
	ServiceName = "hostlink"
	// AuditPrefix is the root of the audit export subjects.
	AuditPrefix = "hl.audit"
	// ApprovalsBucket is the key-value bucket approval notices go to.
	ApprovalsBucket = "hl_approvals"
	// AuditStream is the stream the audit exporters publish to.
	AuditStream = "HL_AUDIT"
)

// Subject is the subject of op on machine.
func Subject(machine, op string) string { return Prefix + "." + machine + "." + op }

// MachineSubjects is the wildcard of every operation subject of machine.
func MachineSubjects(machine string) string { return Prefix + "." + machine + ".*" }

// AuditSubject is the subject machine's audit records are exported on.
func AuditSubject(machine string) string { return AuditPrefix + "." + machine }

// ApprovalKeys is the key-value subject wildcard of machine's approval
// notices.
func ApprovalKeys(machine string) string { return "$KV." + ApprovalsBucket + "." + machine + ".>" }

// InboxPrefix is the inbox prefix of a connection with the public key
// key: replies to its requests come below it, and its credentials let it
// subscribe there and nowhere else for replies.
func InboxPrefix(key string) string { return "_INBOX." + key }

// OpOf returns the operation a request subject of machine names, or
// false when the subject is not one.
func OpOf(machine, subject string) (string, bool) {
	op, ok := strings.CutPrefix(subject, Prefix+"."+machine+".")
	return op, ok && op != "" && !strings.ContainsAny(op, ".*>")
}

// ValidMachine reports whether key is a machine key (an NKey user key).
func ValidMachine(key string) bool { return nkeys.IsValidPublicUserKey(key) }
